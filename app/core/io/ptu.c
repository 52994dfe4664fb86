/* PicoQuant .ptu reader: tag header, T3 record decoding and histogramming into x, y, t. */
#include "ptu.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/flim_bytes.h"

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

/* Histogramming state: the photons of the current line wait until its stop marker tells the
 * line duration, which converts their sync times into pixel columns. */
typedef struct {
    const ptu_layout *L;
    guint16 *counts;
    GArray *line; /* of line_photon */
    gboolean in_line;
    guint64 line_start;
    gint64 y, frames, lines;
    guint64 photons, dropped, saturated;
} histogram;

typedef struct {
    guint64 sync;
    guint32 bin;
} line_photon;

static void end_line(histogram *h, guint64 sync)
{
    const ptu_layout *L = h->L;
    guint64 duration = sync - h->line_start;
    if (!h->in_line || duration == 0 || h->y >= L->pix_y) {
        h->dropped += h->line->len;
    } else {
        gsize plane = (gsize)L->pix_x * (gsize)L->pix_y;
        for (guint i = 0; i < h->line->len; i++) {
            const line_photon *p = &g_array_index(h->line, line_photon, i);
            guint64 x = (p->sync - h->line_start) * (guint64)L->pix_x / duration;
            if (x >= (guint64)L->pix_x) {
                h->dropped++;
                continue;
            }
            guint16 *c = &h->counts[(gsize)p->bin * plane + (gsize)h->y * L->pix_x + x];
            if (*c == G_MAXUINT16)
                h->saturated++;
            else
                (*c)++;
        }
        h->y++;
        h->lines++;
    }
    g_array_set_size(h->line, 0);
    h->in_line = FALSE;
}

static void on_markers(histogram *h, guint32 markers, guint64 sync)
{
    /* Stop before frame before start: one record may end a line and begin the next. */
    if ((markers & h->L->line_stop_mask) && h->in_line)
        end_line(h, sync);
    if (markers & h->L->frame_mask) {
        h->dropped += h->line->len;
        g_array_set_size(h->line, 0);
        h->in_line = FALSE;
        h->y = 0;
        h->frames++;
    }
    if (markers & h->L->line_start_mask) {
        h->dropped += h->line->len;
        g_array_set_size(h->line, 0);
        h->in_line = TRUE;
        h->line_start = sync;
    }
}

static void on_photon(histogram *h, guint64 sync, guint32 dtime)
{
    h->photons++;
    guint32 bin = dtime / (guint32)h->L->group;
    if (!h->in_line || bin >= (guint32)h->L->bins) {
        h->dropped++;
        return;
    }
    line_photon p = {sync, bin};
    g_array_append_val(h->line, p);
}

/* Decodes every record (PicoQuant's T3 layouts) and feeds the histogram. */
static gboolean decode(const ptu_file *f, histogram *h,
                       void (*progress)(double fraction, gpointer user), gpointer progress_user,
                       GCancellable *cancellable, GError **error)
{
    const ptu_layout *L = h->L;
    const guint8 *rec = f->bytes + f->records_at;
    gboolean picoharp = L->rec_type == FM_PTU_PICOHARP_T3;
    guint64 overflow = 0;
    for (gint64 i = 0; i < L->n_records; i++) {
        if (i % PTU_PROGRESS_RECORDS == 0) {
            if (g_cancellable_is_cancelled(cancellable)) {
                g_set_error(error, FM_ERROR, FM_ERROR_CANCELLED, _("%s: reading cancelled"),
                            f->path);
                return FALSE;
            }
            if (progress)
                progress((double)i / (double)L->n_records, progress_user);
        }
        guint32 r = fm_le32(rec + 4 * i);
        if (picoharp) {
            /* nsync 16 bits, dtime 12, channel 4; channel 15 is special: dtime 0 is an
             * overflow of the 16-bit sync counter, otherwise dtime's low 4 bits are markers. */
            guint32 nsync = r & 0xffff, dtime = (r >> 16) & 0xfff, channel = r >> 28;
            if (channel == 15) {
                if ((dtime & 0xf) == 0)
                    overflow += 65536;
                else
                    on_markers(h, dtime & 0xf, overflow + nsync);
            } else {
                on_photon(h, overflow + nsync, dtime);
            }
        } else {
            /* nsync 10 bits, dtime 15, channel 6, special 1. Special channel 63 is an overflow
             * of the 10-bit sync counter: once in v1 files, nsync times from v2 on (0 meaning
             * once); special channels 1..15 are marker bits. */
            guint32 nsync = r & 0x3ff, dtime = (r >> 10) & 0x7fff, channel = (r >> 25) & 0x3f;
            if (r >> 31) {
                if (channel == 0x3f)
                    overflow += (L->rec_type == FM_PTU_HYDRAHARP_T3 || nsync == 0)
                                    ? 1024
                                    : 1024 * (guint64)nsync;
                else if (channel >= 1 && channel <= 15)
                    on_markers(h, channel, overflow + nsync);
            } else {
                on_photon(h, overflow + nsync, dtime);
            }
        }
    }
    h->dropped += h->line->len; /* a line without a stop marker at the end of the file */
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
    g_autoptr(GArray) line = g_array_new(FALSE, FALSE, sizeof(line_photon));
    histogram h = {.L = &L, .counts = ds->data, .line = line};
    if (!decode(&f, &h, progress, progress_user, cancellable, error))
        return NULL;
    if (h.lines == 0) {
        bad(error, path,
            _("no complete scan line: %" G_GINT64_FORMAT " records hold no LineStart marker "
              "followed by a LineStop marker"),
            L.n_records);
        return NULL;
    }
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
    set_meta_count(ds, "ptu_frames", (guint64)MAX(h.frames, 1));
    set_meta_count(ds, "ptu_photons", h.photons);
    set_meta_count(ds, "ptu_photons_dropped", h.dropped);
    if (h.saturated)
        set_meta_count(ds, "ptu_saturated", h.saturated);
    ds->source_path = g_canonicalize_filename(path, NULL);
    if (!fm_dataset_hash_file(ds, error))
        return NULL;
    return g_steal_pointer(&ds);
}
