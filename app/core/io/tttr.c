/* PicoQuant T3 records (.ptu and .pt3 alike) histogrammed into an x, y, t image or one decay. */
#include "tttr.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/flim_bytes.h"
#include "app/core/io/io_threads.h"
#include "app/core/io/ptu.h"

#define PTU_PROGRESS_RECORDS (1u << 18)
#define PTU_MAX_CHANNEL 64 /* HydraHarp-family channel field 0..63, reported as 1..64 */

/* The time axis: dtime bins covering one sync period, summed in groups of `group`. */
typedef struct {
    int full_bins, group, bins;
    guint32 start_mask, stop_mask, frame_mask;
    gboolean picoharp, hydraharp_v1;
} bin_layout;

static gboolean settle_bins(const fm_tttr_layout *L, int max_bins, bin_layout *B, GError **error)
{
    memset(B, 0, sizeof *B);
    int dtime_bits;
    switch (L->rec_type) {
    case FM_PTU_PICOHARP_T3:
        dtime_bits = 12;
        B->picoharp = TRUE;
        break;
    case FM_PTU_HYDRAHARP_T3:
        B->hydraharp_v1 = TRUE;
        dtime_bits = 15;
        break;
    case FM_PTU_HYDRAHARP2_T3:
    case FM_PTU_TIMEHARP260N_T3:
    case FM_PTU_TIMEHARP260P_T3:
    case FM_PTU_GENERIC_T3:
    /* an older edition of PicoQuant's record appendix lists the TimeHarp 260 T3 codes with
     * the v2 sub-ID; the records are the same */
    case FM_PTU_TIMEHARP260N_T3 | 0x01000000:
    case FM_PTU_TIMEHARP260P_T3 | 0x01000000:
        dtime_bits = 15;
        break;
    default:
        fm_error_bad_input(
            error, L->path,
            _("record type 0x%08x is not a T3 format (T2 files have no decay times)"), L->rec_type);
        return FALSE;
    }
    /* The decay spans one sync period; a ratio within 1e-6 of an integer is that integer
     * (the two resolutions are stored as doubles computed from each other). */
    B->full_bins = 1 << dtime_bits;
    if (L->sync_period_s > 0) {
        double ratio = L->sync_period_s / L->resolution_s;
        double n = fabs(ratio - round(ratio)) < 1e-6 * ratio ? round(ratio) : ceil(ratio);
        B->full_bins = (int)CLAMP(n, 1.0, (double)(1 << dtime_bits));
    }
    B->group =
        max_bins > 0 && B->full_bins > max_bins ? (B->full_bins + max_bins - 1) / max_bins : 1;
    B->bins = (B->full_bins + B->group - 1) / B->group;
    if (L->image &&
        (guint64)L->pix_x * (guint64)L->pix_y * (guint64)B->bins * 2 > FM_FLIM_MAX_BYTES) {
        fm_error_bad_input(error, L->path,
                           _("a %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                             " image of %d bins needs more than 4 GiB; refused"),
                           L->pix_x, L->pix_y, B->bins);
        return FALSE;
    }
    B->start_mask = L->line_start ? 1u << (L->line_start - 1) : 0;
    B->stop_mask = L->line_stop ? 1u << (L->line_stop - 1) : 0;
    B->frame_mask = L->frame ? 1u << (L->frame - 1) : 0;
    return TRUE;
}

/* Decodes record r: TRUE for a photon (sync time since the counter base, dtime, 1-based
 * channel); FALSE for a special record, after adding any counter overflow to *overflow and
 * setting *markers (0 when it carries none). */
static inline gboolean decode_record(guint32 r, const bin_layout *B, guint64 *overflow,
                                     guint32 *nsync, guint32 *dtime, guint32 *channel,
                                     guint32 *markers)
{
    *markers = 0;
    if (B->picoharp) {
        /* nsync 16 bits, dtime 12, channel 4; channel 15 is special: dtime 0 is an overflow
         * of the 16-bit sync counter, otherwise dtime's low 4 bits are markers. */
        *nsync = r & 0xffff;
        *dtime = (r >> 16) & 0xfff;
        *channel = r >> 28;
        if (*channel != 15)
            return TRUE;
        if ((*dtime & 0xf) == 0)
            *overflow += 65536;
        else
            *markers = *dtime & 0xf;
        return FALSE;
    }
    /* nsync 10 bits, dtime 15, channel 6, special 1. Special channel 63 is an overflow of the
     * 10-bit sync counter: once in v1 files, nsync times from v2 on (0 meaning once); special
     * channels 1..15 are marker bits. A photon's channel field 0 is detector input 1. */
    *nsync = r & 0x3ff;
    *dtime = (r >> 10) & 0x7fff;
    *channel = ((r >> 25) & 0x3f) + 1;
    if (!(r >> 31))
        return TRUE;
    if (*channel == 64)
        *overflow += (B->hydraharp_v1 || *nsync == 0) ? 1024 : 1024 * (guint64)*nsync;
    else if (*channel >= 2 && *channel <= 16)
        *markers = *channel - 1;
    return FALSE;
}

/* Histogramming takes two passes. The first, sequential, follows the sync counter's overflows
 * and the markers through every record and lists the scan lines: the records between a
 * LineStart and its LineStop, with the line's duration; rows are given once all lines are
 * known. Once a line's duration is known, each of its photons lands independently, so the
 * second pass splits the image rows between threads; a thread histograms the lines of its rows
 * (of every frame) and no two threads write the same count. Photons outside such lines are
 * dropped. A point measurement has no lines: its second pass sums every photon into one decay. */
typedef struct {
    gint64 first, end;  /* records [first, end): after the LineStart marker, before LineStop */
    guint64 overflow;   /* sync counter base at record `first` */
    guint64 line_start; /* sync time of the LineStart marker */
    guint64 duration;   /* LineStop minus LineStart, > 0 */
    gint64 y;
    gboolean reversed;  /* scanned right to left (bidirectional scans) */
    gboolean new_frame; /* a Frame marker came between the previous line and this one */
} ptu_line;

/* The first pass's state. */
typedef struct {
    const bin_layout *B;
    GArray *lines; /* of ptu_line */
    gboolean in_line, frame_pending;
    ptu_line current;
    guint64 line_starts, frame_markers;
    guint64 photons[PTU_MAX_CHANNEL + 1]; /* per channel */
} line_scan;

static void on_markers(line_scan *s, guint32 markers, guint64 overflow, guint64 sync, gint64 at)
{
    const bin_layout *B = s->B;
    /* Stop before frame before start: one record may end a line and begin the next. A line
     * of zero duration leaves its photons dropped. */
    if ((markers & B->stop_mask) && s->in_line) {
        guint64 duration = sync - s->current.line_start;
        if (duration != 0) {
            s->current.end = at;
            s->current.duration = duration;
            s->current.new_frame = s->frame_pending;
            s->frame_pending = FALSE;
            g_array_append_val(s->lines, s->current);
        }
        s->in_line = FALSE;
    }
    if (markers & B->frame_mask) {
        s->in_line = FALSE;
        s->frame_pending = TRUE;
        s->frame_markers++;
    }
    if (markers & B->start_mask) {
        s->in_line = TRUE;
        s->line_starts++;
        s->current = (ptu_line){.first = at + 1, .overflow = overflow, .line_start = sync};
    }
}

static gboolean cancelled(const char *path, GCancellable *cancellable, GError **error)
{
    if (!g_cancellable_is_cancelled(cancellable))
        return FALSE;
    g_set_error(error, FM_ERROR, FM_ERROR_CANCELLED, _("%s: reading cancelled"), path);
    return TRUE;
}

/* Progress of the first pass runs to this fraction, the second's the rest of the way. */
#define PTU_SCAN_SHARE 0.3

/* The first pass. */
static gboolean scan_lines(const fm_tttr_layout *L, line_scan *s,
                           void (*progress)(double fraction, gpointer user), gpointer progress_user,
                           GCancellable *cancellable, GError **error)
{
    guint64 overflow = 0;
    for (gint64 i = 0; i < L->n_records; i++) {
        if (i % PTU_PROGRESS_RECORDS == 0) {
            if (cancelled(L->path, cancellable, error))
                return FALSE;
            if (progress)
                progress(PTU_SCAN_SHARE * (double)i / (double)L->n_records, progress_user);
        }
        guint32 nsync, dtime, channel, markers;
        if (decode_record(fm_le32(L->records + 4 * i), s->B, &overflow, &nsync, &dtime, &channel,
                          &markers))
            s->photons[channel]++;
        else if (markers)
            on_markers(s, markers, overflow, overflow + nsync, i);
    }
    return TRUE;
}

/* Gives each line its row and drops the lines below the image. When Frame markers appear in
 * the records they start frames (whether they come before a frame's first line or after its
 * last); without them a frame is every pix_y lines. Every other row of a bidirectional scan
 * runs right to left. Returns the number of frames that hold a line. */
static gint64 assign_rows(const fm_tttr_layout *L, const line_scan *s, GArray *lines)
{
    gboolean by_markers = s->frame_markers > 0;
    gint64 row = 0, frames = 0;
    guint kept = 0;
    for (guint i = 0; i < lines->len; i++) {
        ptu_line line = g_array_index(lines, ptu_line, i);
        if ((by_markers && line.new_frame) || (!by_markers && row == L->pix_y))
            row = 0;
        if (row >= L->pix_y)
            continue;
        if (row == 0)
            frames++;
        line.y = row++;
        line.reversed = L->bidirectional && (line.y % 2 == 1);
        g_array_index(lines, ptu_line, kept++) = line;
    }
    g_array_set_size(lines, kept);
    return frames;
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
    const fm_tttr_layout *L;
    const bin_layout *B;
    const GArray *lines;
    guint32 channel; /* 0: all */
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
    const fm_tttr_layout *L = job->L;
    const bin_layout *B = job->B;
    gsize plane = (gsize)L->pix_x * (gsize)L->pix_y;
    guint32 group = (guint32)B->group;
    guint64 landed = 0, saturated = 0, done = 0, total = 0, next_report = PTU_PROGRESS_RECORDS;
    for (guint i = 0; i < job->lines->len && part == 0 && job->progress; i++) {
        const ptu_line *line = &g_array_index(job->lines, ptu_line, i);
        if ((gsize)line->y >= y0 && (gsize)line->y < y1)
            total += (guint64)(line->end - line->first);
    }
    /* The counts are fresh zeroed memory: incrementing would first map the shared zero page
     * for the read, then copy it on the write, and unmapping the zero page takes a TLB flush
     * on every processor, per page. Writing the part's rows first skips all of that. */
    for (int bin = 0; bin < B->bins; bin++)
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
            guint32 nsync, dtime, channel, markers;
            if (!decode_record(fm_le32(L->records + 4 * k), B, &overflow, &nsync, &dtime, &channel,
                               &markers) ||
                (job->channel && channel != job->channel))
                continue;
            guint32 bin = dtime;
            if (group != 1) /* a branch: as a conditional expression, it divides every time */
                bin /= group;
            if (bin >= (guint32)B->bins)
                continue;
            guint64 x = column_of(&columns, overflow + nsync - line->line_start);
            if (x >= (guint64)L->pix_x)
                continue;
            if (line->reversed)
                x = (guint64)L->pix_x - 1 - x;
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
static gboolean histogram_lines(histogram_job *job, guint64 *landed, guint64 *saturated,
                                GError **error)
{
    int n_parts = fm_io_threads_for((gsize)job->L->n_records, PTU_MIN_RECORDS_PER_THREAD);
    fm_io_parallel_ranges((gsize)job->L->pix_y, n_parts, histogram_rows, job);
    *landed = *saturated = 0;
    for (int p = 0; p < FM_IO_MAX_THREADS; p++) {
        if (job->cancelled[p])
            return !cancelled(job->L->path, job->cancellable, error);
        *landed += job->landed[p];
        *saturated += job->saturated[p];
    }
    return TRUE;
}

/* A point measurement's second pass: every photon of the channel in one decay. The decay is
 * float32 (exact to 2^24 counts a bin): an IRF's peak bin often holds more than 65535. */
static gboolean histogram_point(histogram_job *job, float *decay, guint64 *landed,
                                void (*progress)(double fraction, gpointer user),
                                gpointer progress_user, GError **error)
{
    const fm_tttr_layout *L = job->L;
    g_autofree guint64 *sums = g_new0(guint64, job->B->bins);
    guint64 overflow = 0;
    *landed = 0;
    for (gint64 i = 0; i < L->n_records; i++) {
        if (i % PTU_PROGRESS_RECORDS == 0) {
            if (cancelled(L->path, job->cancellable, error))
                return FALSE;
            if (progress)
                progress(PTU_SCAN_SHARE + (1.0 - PTU_SCAN_SHARE) * (double)i / (double)L->n_records,
                         progress_user);
        }
        guint32 nsync, dtime, channel, markers;
        if (!decode_record(fm_le32(L->records + 4 * i), job->B, &overflow, &nsync, &dtime, &channel,
                           &markers) ||
            (job->channel && channel != job->channel))
            continue;
        guint32 bin = dtime / (guint32)job->B->group;
        if (bin < (guint32)job->B->bins) {
            sums[bin]++;
            (*landed)++;
        }
    }
    for (int b = 0; b < job->B->bins; b++)
        decay[b] = (float)sums[b];
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

/* "1,2": the channels that hold photons. */
static char *channels_present(const line_scan *s)
{
    GString *text = g_string_new(NULL);
    for (int c = 0; c <= PTU_MAX_CHANNEL; c++)
        if (s->photons[c])
            g_string_append_printf(text, "%s%d", text->len ? "," : "", c);
    return g_string_free(text, FALSE);
}

fm_dataset *fm_tttr_histogram(const fm_tttr_layout *L, int channel, int max_bins,
                              void (*progress)(double fraction, gpointer user),
                              gpointer progress_user, GCancellable *cancellable, GError **error)
{
    bin_layout B;
    if (!settle_bins(L, max_bins, &B, error))
        return NULL;
    if (channel < 0 || channel > PTU_MAX_CHANNEL) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: channel %d: detector channels are 1..%d, or 0 for all"), L->path,
                    channel, PTU_MAX_CHANNEL);
        return NULL;
    }
    g_autoptr(GArray) lines = g_array_new(FALSE, FALSE, sizeof(ptu_line));
    line_scan scan = {.B = &B, .lines = lines};
    if (!scan_lines(L, &scan, progress, progress_user, cancellable, error))
        return NULL;
    g_autofree char *present = channels_present(&scan);
    if (channel > 0 && scan.photons[channel] == 0) {
        fm_error_bad_input(error, L->path,
                           _("detector channel %d holds no photons (channels with photons: %s)"),
                           channel, *present ? present : _("none"));
        return NULL;
    }
    /* A point measurement: the header declares no image, or the records hold no LineStart. */
    gboolean image = L->image && scan.line_starts > 0;
    gint64 frames = 0;
    if (image) {
        frames = assign_rows(L, &scan, lines);
        if (lines->len == 0) {
            fm_error_bad_input(error, L->path,
                               _("no complete scan line: %" G_GINT64_FORMAT
                                 " records hold %" G_GUINT64_FORMAT
                                 " LineStart markers but none is followed by a LineStop marker"),
                               L->n_records, scan.line_starts);
            return NULL;
        }
    }
    gsize sizes[3] = {image ? (gsize)L->pix_x : 1, image ? (gsize)L->pix_y : 1, (gsize)B.bins};
    g_autoptr(fm_dataset) ds = fm_dataset_new(image ? FM_PIXEL_U16 : FM_PIXEL_F32, 3, sizes, NULL);
    ds->source_path = g_canonicalize_filename(L->path, NULL);
    histogram_job job = {.L = L,
                         .B = &B,
                         .lines = lines,
                         .channel = (guint32)channel,
                         .counts = ds->data,
                         .cancellable = cancellable,
                         .progress = progress,
                         .progress_user = progress_user};
    fm_io_hash *hash = fm_io_hash_begin(ds);
    guint64 landed = 0, saturated = 0;
    gboolean ok = image ? histogram_lines(&job, &landed, &saturated, error)
                        : histogram_point(&job, ds->data, &landed, progress, progress_user, error);
    if (!fm_io_hash_end(hash, ok ? error : NULL) || !ok)
        return NULL;
    if (progress)
        progress(1.0, progress_user);
    guint64 photons = 0;
    for (int c = 0; c <= PTU_MAX_CHANNEL; c++)
        if (channel == 0 || c == channel)
            photons += scan.photons[c];
    double bin_s = L->resolution_s * B.group;
    ds->dims[0].unit = g_strdup("px");
    ds->dims[1].unit = g_strdup("px");
    ds->dims[2].unit = g_strdup("ns");
    ds->dims[2].spacing = to_ps(bin_s) * 1e-3;
    set_meta_double(ds, "bin_width_ps", to_ps(bin_s));
    set_meta_double(ds, "tac_range_ns", to_ps(L->resolution_s * B.full_bins) * 1e-3);
    if (L->sync_period_s > 0)
        set_meta_double(ds, "rep_rate_mhz", 1e-6 / L->sync_period_s);
    fm_dataset_set_meta(ds, "ptu_measurement", image ? "image" : "point");
    set_meta_count(ds, "ptu_records", (guint64)L->n_records);
    set_meta_count(ds, "ptu_frames", (guint64)MAX(frames, 1));
    if (image && L->bidirectional)
        fm_dataset_set_meta(ds, "ptu_bidirectional", "1");
    fm_dataset_set_meta(ds, "ptu_channels", present);
    if (channel == 0) {
        fm_dataset_set_meta(ds, "ptu_channel", "all");
    } else {
        g_autofree char *text = g_strdup_printf("%d", channel);
        fm_dataset_set_meta(ds, "ptu_channel", text);
    }
    set_meta_count(ds, "ptu_photons", photons);
    set_meta_count(ds, "ptu_photons_dropped", photons - landed);
    if (saturated)
        set_meta_count(ds, "ptu_saturated", saturated);
    return g_steal_pointer(&ds);
}
