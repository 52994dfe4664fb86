/* PicoQuant .ptu reader: tag header, T3 record decoding and histogramming into x, y, t. */
#include "ptu.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/flim_bytes.h"
#include "app/core/io/io_threads.h"

#define PTU_TAG_LEN 48      /* Ident[32], Idx i32, Typ u32, Value 8 bytes */
#define PTU_PREAMBLE_LEN 16 /* "PQTTTR\0\0" and an 8-byte version string */
#define PTU_PROGRESS_RECORDS (1u << 18)

typedef struct {
    guint32 type;
    guint64 raw; /* the 8-byte value field: integer, double bits, or a length */
} ptu_tag;

typedef struct {
    const char *path;
    const guint8 *bytes;
    gsize len;
    GHashTable *tags; /* "Ident" or "Ident(idx)" -> ptu_tag */
    gsize records_at;
} ptu_file;

static gboolean bad(GError **error, const char *path, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static gboolean bad(GError **error, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, "%s: %s", path, what);
    return FALSE;
}

static gboolean parse_header(ptu_file *f, GError **error)
{
    if (f->len < 8 || memcmp(f->bytes, "PQTTTR\0\0", 8) != 0)
        return bad(error, f->path, "%s",
                   f->len == 0 ? _("empty file, not a PicoQuant .ptu file")
                               : _("not a PicoQuant .ptu file (no PQTTTR magic)"));
    gsize at = PTU_PREAMBLE_LEN;
    for (;;) {
        if (at + PTU_TAG_LEN > f->len)
            return bad(
                error, f->path,
                _("truncated: the tag header ends at byte %" G_GSIZE_FORMAT " before Header_End"),
                f->len);
        const guint8 *t = f->bytes + at;
        g_autofree char *ident = g_strndup((const char *)t, 32);
        gint32 idx = (gint32)fm_le32(t + 32);
        ptu_tag tag = {fm_le32(t + 36), fm_le64(t + 40)};
        at += PTU_TAG_LEN;
        switch (tag.type) {
        case FM_PTU_EMPTY8:
        case FM_PTU_BOOL8:
        case FM_PTU_INT8:
        case FM_PTU_BITSET64:
        case FM_PTU_COLOR8:
        case FM_PTU_FLOAT8:
        case FM_PTU_TDATETIME:
            break;
        case FM_PTU_FLOAT8ARRAY:
        case FM_PTU_ANSISTRING:
        case FM_PTU_WIDESTRING:
        case FM_PTU_BINARYBLOB:
            /* the value is the byte length of the data that follow the tag */
            if (tag.raw > f->len - at)
                return bad(error, f->path,
                           _("truncated: tag %s declares %" G_GUINT64_FORMAT
                             " bytes of data, %" G_GSIZE_FORMAT " remain"),
                           ident, tag.raw, f->len - at);
            at += (gsize)tag.raw;
            break;
        default:
            return bad(error, f->path, _("tag %s has unknown type 0x%08x (corrupted header?)"),
                       ident, tag.type);
        }
        if (strcmp(ident, "Header_End") == 0)
            break;
        char *key = idx == -1 ? g_strdup(ident) : g_strdup_printf("%s(%d)", ident, idx);
        g_hash_table_insert(f->tags, key, g_memdup2(&tag, sizeof tag));
    }
    f->records_at = at;
    return TRUE;
}

static const ptu_tag *find_tag(const ptu_file *f, const char *name)
{
    return g_hash_table_lookup(f->tags, name);
}

static gboolean tag_int(const ptu_file *f, const char *name, gint64 *value)
{
    const ptu_tag *t = find_tag(f, name);
    if (!t || (t->type != FM_PTU_INT8 && t->type != FM_PTU_BOOL8 && t->type != FM_PTU_BITSET64 &&
               t->type != FM_PTU_COLOR8))
        return FALSE;
    *value = (gint64)t->raw;
    return TRUE;
}

static gboolean tag_double(const ptu_file *f, const char *name, double *value)
{
    const ptu_tag *t = find_tag(f, name);
    if (!t || (t->type != FM_PTU_FLOAT8 && t->type != FM_PTU_TDATETIME))
        return FALSE;
    memcpy(value, &t->raw, sizeof *value);
    return isfinite(*value);
}

static gboolean require_int(const ptu_file *f, const char *name, gint64 lo, gint64 hi,
                            gint64 *value, GError **error)
{
    if (!tag_int(f, name, value))
        return bad(error, f->path, _("no integer tag %s: not a T3 image measurement"), name);
    if (*value < lo || *value > hi)
        return bad(
            error, f->path,
            _("tag %s is %" G_GINT64_FORMAT ", expected %" G_GINT64_FORMAT "..%" G_GINT64_FORMAT),
            name, *value, lo, hi);
    return TRUE;
}

/* What the header says about the image and the time axis. */
typedef struct {
    guint32 rec_type;
    gint64 n_records, pix_x, pix_y;
    guint32 line_start_mask, line_stop_mask, frame_mask;
    double resolution_s, sync_period_s;
    int full_bins, group, bins; /* dtime range, dtime bins summed per t bin, t bins */
} ptu_layout;

static gboolean read_layout(const ptu_file *f, int max_bins, ptu_layout *L, GError **error)
{
    gint64 v;
    memset(L, 0, sizeof *L);
    if (!require_int(f, "TTResultFormat_TTTRRecType", 0, G_MAXUINT32, &v, error))
        return FALSE;
    L->rec_type = (guint32)v;
    int dtime_bits;
    switch (L->rec_type) {
    case FM_PTU_PICOHARP_T3:
        dtime_bits = 12;
        break;
    case FM_PTU_HYDRAHARP_T3:
    case FM_PTU_HYDRAHARP2_T3:
    case FM_PTU_TIMEHARP260N_T3:
    case FM_PTU_TIMEHARP260P_T3:
    case FM_PTU_MULTIHARP_T3:
        dtime_bits = 15;
        break;
    default:
        return bad(error, f->path,
                   _("record type 0x%08x is not a T3 format (T2 files have no decay times)"),
                   L->rec_type);
    }
    gint64 bidirect = 0;
    if (tag_int(f, "ImgHdr_BiDirect", &bidirect) && bidirect)
        return bad(error, f->path, "%s", _("bidirectional scans are not supported"));
    gint64 start, stop, frame = 0;
    if (!require_int(f, "ImgHdr_PixX", 1, 65536, &L->pix_x, error) ||
        !require_int(f, "ImgHdr_PixY", 1, 65536, &L->pix_y, error) ||
        !require_int(f, "ImgHdr_LineStart", 1, 15, &start, error) ||
        !require_int(f, "ImgHdr_LineStop", 1, 15, &stop, error))
        return FALSE;
    if (tag_int(f, "ImgHdr_Frame", &frame) && (frame < 1 || frame > 15))
        frame = 0;
    L->line_start_mask = 1u << (start - 1);
    L->line_stop_mask = 1u << (stop - 1);
    L->frame_mask = frame ? 1u << (frame - 1) : 0;
    if (!tag_double(f, "MeasDesc_Resolution", &L->resolution_s) || !(L->resolution_s > 0))
        return bad(error, f->path, "%s", _("MeasDesc_Resolution (the bin width) is missing"));
    double rate = 0;
    if (!tag_double(f, "MeasDesc_GlobalResolution", &L->sync_period_s) || !(L->sync_period_s > 0)) {
        L->sync_period_s = 0;
        if (tag_int(f, "TTResult_SyncRate", &v) && v > 0)
            L->sync_period_s = 1.0 / (double)v;
        else if (tag_double(f, "TTResult_SyncRate", &rate) && rate > 0)
            L->sync_period_s = 1.0 / rate;
    }
    /* The decay spans one sync period; a ratio within 1e-6 of an integer is that integer
     * (the two resolutions are stored as doubles computed from each other). */
    L->full_bins = 1 << dtime_bits;
    if (L->sync_period_s > 0) {
        double ratio = L->sync_period_s / L->resolution_s;
        double n = fabs(ratio - round(ratio)) < 1e-6 * ratio ? round(ratio) : ceil(ratio);
        L->full_bins = (int)CLAMP(n, 1.0, (double)(1 << dtime_bits));
    }
    L->group =
        max_bins > 0 && L->full_bins > max_bins ? (L->full_bins + max_bins - 1) / max_bins : 1;
    L->bins = (L->full_bins + L->group - 1) / L->group;
    if ((guint64)L->pix_x * (guint64)L->pix_y * (guint64)L->bins * 2 > FM_FLIM_MAX_BYTES)
        return bad(error, f->path,
                   _("a %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " image of %d bins needs more "
                     "than 4 GiB; refused"),
                   L->pix_x, L->pix_y, L->bins);
    gsize available = (f->len - f->records_at) / 4;
    if (!tag_int(f, "TTResult_NumberOfRecords", &L->n_records))
        L->n_records = (gint64)available;
    if (L->n_records < 0 || (guint64)L->n_records > available)
        return bad(error, f->path,
                   _("truncated: the header declares %" G_GINT64_FORMAT
                     " records but the file holds %" G_GSIZE_FORMAT),
                   L->n_records, available);
    return TRUE;
}

/* Histogramming takes two passes. The first, sequential, follows the sync counter's overflows
 * and the markers through every record and lists the scan lines whose photons land in the
 * image: the records between a LineStart and its LineStop, with the line's row and duration.
 * Once a line's duration is known, each of its photons lands independently, so the second pass
 * splits the image rows between threads; a thread histograms the lines of its rows (of every
 * frame) and no two threads write the same count. Photons outside such lines are dropped. */
typedef struct {
    gint64 first, end;  /* records [first, end): after the LineStart marker, before LineStop */
    guint64 overflow;   /* sync counter base at record `first` */
    guint64 line_start; /* sync time of the LineStart marker */
    guint64 duration;   /* LineStop minus LineStart, > 0 */
    gint64 y;
} ptu_line;

/* Decodes record r: TRUE for a photon (sync time since the counter base, dtime); FALSE for a
 * special record, after adding any counter overflow to *overflow and setting *markers (0 when
 * it carries none). */
static inline gboolean decode_record(guint32 r, gboolean picoharp, gboolean hydraharp_v1,
                                     guint64 *overflow, guint32 *nsync, guint32 *dtime,
                                     guint32 *markers)
{
    *markers = 0;
    if (picoharp) {
        /* nsync 16 bits, dtime 12, channel 4; channel 15 is special: dtime 0 is an overflow
         * of the 16-bit sync counter, otherwise dtime's low 4 bits are markers. */
        *nsync = r & 0xffff;
        *dtime = (r >> 16) & 0xfff;
        if (r >> 28 != 15)
            return TRUE;
        if ((*dtime & 0xf) == 0)
            *overflow += 65536;
        else
            *markers = *dtime & 0xf;
        return FALSE;
    }
    /* nsync 10 bits, dtime 15, channel 6, special 1. Special channel 63 is an overflow of the
     * 10-bit sync counter: once in v1 files, nsync times from v2 on (0 meaning once); special
     * channels 1..15 are marker bits. */
    *nsync = r & 0x3ff;
    *dtime = (r >> 10) & 0x7fff;
    if (!(r >> 31))
        return TRUE;
    guint32 channel = (r >> 25) & 0x3f;
    if (channel == 0x3f)
        *overflow += (hydraharp_v1 || *nsync == 0) ? 1024 : 1024 * (guint64)*nsync;
    else if (channel >= 1 && channel <= 15)
        *markers = channel;
    return FALSE;
}

/* The first pass's state. */
typedef struct {
    const ptu_layout *L;
    GArray *lines; /* of ptu_line */
    gboolean in_line;
    ptu_line current;
    gint64 y, frames;
    guint64 photons;
} line_scan;

static void on_markers(line_scan *s, guint32 markers, guint64 overflow, guint64 sync, gint64 at)
{
    const ptu_layout *L = s->L;
    /* Stop before frame before start: one record may end a line and begin the next. A line
     * that ends empty-handed (zero duration, or below the image) leaves its photons dropped. */
    if ((markers & L->line_stop_mask) && s->in_line) {
        guint64 duration = sync - s->current.line_start;
        if (duration != 0 && s->y < L->pix_y) {
            s->current.end = at;
            s->current.duration = duration;
            s->current.y = s->y++;
            g_array_append_val(s->lines, s->current);
        }
        s->in_line = FALSE;
    }
    if (markers & L->frame_mask) {
        s->in_line = FALSE;
        s->y = 0;
        s->frames++;
    }
    if (markers & L->line_start_mask) {
        s->in_line = TRUE;
        s->current = (ptu_line){.first = at + 1, .overflow = overflow, .line_start = sync};
    }
}

static gboolean cancelled(const ptu_file *f, GCancellable *cancellable, GError **error)
{
    if (!g_cancellable_is_cancelled(cancellable))
        return FALSE;
    g_set_error(error, FM_ERROR, FM_ERROR_CANCELLED, _("%s: reading cancelled"), f->path);
    return TRUE;
}

/* Progress of the first pass runs to this fraction, the second's the rest of the way. */
#define PTU_SCAN_SHARE 0.3

/* The first pass. */
static gboolean scan_lines(const ptu_file *f, line_scan *s,
                           void (*progress)(double fraction, gpointer user), gpointer progress_user,
                           GCancellable *cancellable, GError **error)
{
    const ptu_layout *L = s->L;
    const guint8 *rec = f->bytes + f->records_at;
    gboolean picoharp = L->rec_type == FM_PTU_PICOHARP_T3;
    gboolean v1 = L->rec_type == FM_PTU_HYDRAHARP_T3;
    guint64 overflow = 0;
    for (gint64 i = 0; i < L->n_records; i++) {
        if (i % PTU_PROGRESS_RECORDS == 0) {
            if (cancelled(f, cancellable, error))
                return FALSE;
            if (progress)
                progress(PTU_SCAN_SHARE * (double)i / (double)L->n_records, progress_user);
        }
        guint32 nsync, dtime, markers;
        if (decode_record(fm_le32(rec + 4 * i), picoharp, v1, &overflow, &nsync, &dtime, &markers))
            s->photons++;
        else if (markers)
            on_markers(s, markers, overflow, overflow + nsync, i);
    }
    return TRUE;
}

/* A photon's column is floor(rel · pix_x / duration), rel its syncs since the line start. Photons
 * come in time order, so the column boundaries are walked forward: one division per column of
 * the line instead of a 64-bit division per photon, the histogram's largest cost. Photons out
 * of order, at or past the line's end, or lines too long for the boundary products take the
 * division itself, so every photon gets exactly the column the formula gives. */
typedef struct {
    guint64 x, lo, hi; /* rel in [lo, hi) is column x: lo = ceil(x·D/P), hi = ceil((x+1)·D/P) */
    guint64 duration, pix_x;
    gboolean walk;
} column_walk;

static inline guint64 column_start(const column_walk *w, guint64 x)
{
    return (x * w->duration + w->pix_x - 1) / w->pix_x;
}

static void column_walk_init(column_walk *w, guint64 duration, guint64 pix_x)
{
    *w = (column_walk){.duration = duration, .pix_x = pix_x};
    w->walk = duration <= (G_MAXUINT64 - pix_x) / pix_x; /* pix_x · D + pix_x cannot wrap */
    if (w->walk)
        w->hi = column_start(w, 1);
}

static inline guint64 column_of(column_walk *w, guint64 rel)
{
    if (!w->walk || rel >= w->duration || rel < w->lo)
        return rel * w->pix_x / w->duration;
    while (rel >= w->hi) { /* ends by column pix_x - 1, whose end is the duration */
        w->x++;
        w->lo = w->hi;
        w->hi = column_start(w, w->x + 1);
    }
    return w->x;
}

/* The second pass: one part histograms the lines of rows [y0, y1). */
typedef struct {
    const ptu_file *f;
    const ptu_layout *L;
    const GArray *lines;
    guint16 *counts;
    GCancellable *cancellable;
    void (*progress)(double fraction, gpointer user); /* called by part 0 only: the caller's */
    gpointer progress_user;
    guint64 landed[FM_IO_MAX_THREADS]; /* photons counted or saturated, per part */
    guint64 saturated[FM_IO_MAX_THREADS];
    gboolean cancelled[FM_IO_MAX_THREADS];
} histogram_job;

/* Below this many records per thread a thread costs more than it saves. */
#define PTU_MIN_RECORDS_PER_THREAD (1 << 20)

static void histogram_rows(int part, gsize y0, gsize y1, gpointer data)
{
    histogram_job *job = data;
    const ptu_layout *L = job->L;
    const guint8 *rec = job->f->bytes + job->f->records_at;
    gboolean picoharp = L->rec_type == FM_PTU_PICOHARP_T3;
    gboolean v1 = L->rec_type == FM_PTU_HYDRAHARP_T3;
    gsize plane = (gsize)L->pix_x * (gsize)L->pix_y;
    guint32 group = (guint32)L->group;
    guint64 landed = 0, saturated = 0, done = 0, total = 0, next_report = PTU_PROGRESS_RECORDS;
    for (guint i = 0; i < job->lines->len && part == 0 && job->progress; i++) {
        const ptu_line *line = &g_array_index(job->lines, ptu_line, i);
        if ((gsize)line->y >= y0 && (gsize)line->y < y1)
            total += (guint64)(line->end - line->first);
    }
    /* The counts are fresh zeroed memory: incrementing would first map the shared zero page
     * for the read, then copy it on the write, and unmapping the zero page takes a TLB flush
     * on every processor, per page. Writing the part's rows first skips all of that. */
    for (int bin = 0; bin < L->bins; bin++)
        memset(job->counts + (gsize)bin * plane + y0 * (gsize)L->pix_x, 0,
               (y1 - y0) * (gsize)L->pix_x * sizeof(guint16));
    for (guint i = 0; i < job->lines->len; i++) {
        const ptu_line *line = &g_array_index(job->lines, ptu_line, i);
        if ((gsize)line->y < y0 || (gsize)line->y >= y1)
            continue;
        if (g_cancellable_is_cancelled(job->cancellable)) {
            job->cancelled[part] = TRUE;
            return;
        }
        guint16 *row = job->counts + (gsize)line->y * L->pix_x;
        guint64 overflow = line->overflow;
        column_walk columns;
        column_walk_init(&columns, line->duration, (guint64)L->pix_x);
        for (gint64 k = line->first; k < line->end; k++) {
            guint32 nsync, dtime, markers;
            if (!decode_record(fm_le32(rec + 4 * k), picoharp, v1, &overflow, &nsync, &dtime,
                               &markers))
                continue;
            guint32 bin = dtime;
            if (group != 1) /* a branch: as a conditional expression, it divides every time */
                bin /= group;
            if (bin >= (guint32)L->bins)
                continue;
            guint64 x = column_of(&columns, overflow + nsync - line->line_start);
            if (x >= (guint64)L->pix_x)
                continue;
            guint16 *c = &row[(gsize)bin * plane + x];
            landed++;
            if (*c == G_MAXUINT16)
                saturated++;
            else
                (*c)++;
        }
        done += (guint64)(line->end - line->first);
        if (part == 0 && job->progress && done >= next_report) {
            job->progress(PTU_SCAN_SHARE + (1.0 - PTU_SCAN_SHARE) * (double)done / (double)total,
                          job->progress_user);
            next_report = done + PTU_PROGRESS_RECORDS;
        }
    }
    job->landed[part] = landed;
    job->saturated[part] = saturated;
}

/* The second pass over all parts; *landed counts the photons that reached a pixel. */
static gboolean histogram_lines(const ptu_file *f, const ptu_layout *L, const GArray *lines,
                                guint16 *counts, void (*progress)(double fraction, gpointer user),
                                gpointer progress_user, GCancellable *cancellable, guint64 *landed,
                                guint64 *saturated, GError **error)
{
    histogram_job job = {.f = f,
                         .L = L,
                         .lines = lines,
                         .counts = counts,
                         .cancellable = cancellable,
                         .progress = progress,
                         .progress_user = progress_user};
    int n_parts = fm_io_threads_for((gsize)L->n_records, PTU_MIN_RECORDS_PER_THREAD);
    fm_io_parallel_ranges((gsize)L->pix_y, n_parts, histogram_rows, &job);
    *landed = *saturated = 0;
    for (int p = 0; p < FM_IO_MAX_THREADS; p++) {
        if (job.cancelled[p])
            return !cancelled(f, cancellable, error);
        *landed += job.landed[p];
        *saturated += job.saturated[p];
    }
    if (progress)
        progress(1.0, progress_user);
    return TRUE;
}

static void set_meta_double(fm_dataset *ds, const char *key, double v)
{
    char text[G_ASCII_DTOSTR_BUF_SIZE];
    fm_dataset_set_meta(ds, key, g_ascii_dtostr(text, sizeof text, v));
}

static void set_meta_count(fm_dataset *ds, const char *key, guint64 v)
{
    char text[32];
    g_snprintf(text, sizeof text, "%" G_GUINT64_FORMAT, v);
    fm_dataset_set_meta(ds, key, text);
}

/* Bin width from a double in seconds to ps, dropping the last-digit noise of the product. */
static double to_ps(double seconds)
{
    double ps = seconds * 1e12;
    double scale = pow(10.0, 11 - floor(log10(ps)));
    return round(ps * scale) / scale;
}

fm_dataset *fm_ptu_read(const char *path, int max_bins,
                        void (*progress)(double fraction, gpointer user), gpointer progress_user,
                        GCancellable *cancellable, GError **error)
{
    g_autoptr(GError) local = NULL;
    g_autoptr(GMappedFile) map = g_mapped_file_new(path, FALSE, &local);
    if (!map) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot open: %s"), path,
                    local->message);
        return NULL;
    }
    g_autoptr(GHashTable) tags = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    ptu_file f = {path, (const guint8 *)g_mapped_file_get_contents(map),
                  g_mapped_file_get_length(map), tags, 0};
    ptu_layout L;
    if (!parse_header(&f, error) || !read_layout(&f, max_bins, &L, error))
        return NULL;
    gsize sizes[3] = {(gsize)L.pix_x, (gsize)L.pix_y, (gsize)L.bins};
    g_autoptr(fm_dataset) ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    g_autoptr(GArray) lines = g_array_new(FALSE, FALSE, sizeof(ptu_line));
    line_scan scan = {.L = &L, .lines = lines};
    if (!scan_lines(&f, &scan, progress, progress_user, cancellable, error))
        return NULL;
    if (lines->len == 0) {
        if (progress)
            progress(1.0, progress_user);
        bad(error, path,
            _("no complete scan line: %" G_GINT64_FORMAT " records hold no LineStart marker "
              "followed by a LineStop marker"),
            L.n_records);
        return NULL;
    }
    ds->source_path = g_canonicalize_filename(path, NULL);
    fm_io_hash *hash = fm_io_hash_begin(ds);
    guint64 landed = 0, saturated = 0;
    gboolean ok = histogram_lines(&f, &L, lines, ds->data, progress, progress_user, cancellable,
                                  &landed, &saturated, error);
    if (!fm_io_hash_end(hash, ok ? error : NULL) || !ok)
        return NULL;
    double bin_s = L.resolution_s * L.group;
    ds->dims[0].unit = g_strdup("px");
    ds->dims[1].unit = g_strdup("px");
    ds->dims[2].unit = g_strdup("ns");
    ds->dims[2].spacing = to_ps(bin_s) * 1e-3;
    fm_dataset_set_meta(ds, "format", "ptu");
    set_meta_double(ds, "bin_width_ps", to_ps(bin_s));
    set_meta_double(ds, "tac_range_ns", to_ps(L.resolution_s * L.full_bins) * 1e-3);
    if (L.sync_period_s > 0)
        set_meta_double(ds, "rep_rate_mhz", 1e-6 / L.sync_period_s);
    set_meta_count(ds, "ptu_records", (guint64)L.n_records);
    set_meta_count(ds, "ptu_frames", (guint64)MAX(scan.frames, 1));
    set_meta_count(ds, "ptu_photons", scan.photons);
    set_meta_count(ds, "ptu_photons_dropped", scan.photons - landed);
    if (saturated)
        set_meta_count(ds, "ptu_saturated", saturated);
    return g_steal_pointer(&ds);
}
