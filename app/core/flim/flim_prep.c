/* FLIM input preparation: turns an x,y,t dataset, ROIs and IRF files into what the kernels take. */
#include "app/core/flim/flim_prep.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/open.h"
#include "app/core/roi.h"

static const char *dataset_label(const fm_dataset *ds)
{
    if (ds->source_path) {
        const char *slash = strrchr(ds->source_path, G_DIR_SEPARATOR);
        return slash ? slash + 1 : ds->source_path;
    }
    return "dataset";
}

/* Finds "bin_width_ps=<number>" in free text such as a TIFF ImageDescription. */
static gboolean parse_bin_width_text(const char *text, double *ps)
{
    const char *key = "bin_width_ps=";
    for (const char *at = text ? strstr(text, key) : NULL; at; at = strstr(at + 1, key)) {
        /* the key must start a word, so that "xbin_width_ps=" does not count */
        if (at != text && (g_ascii_isalnum(at[-1]) || at[-1] == '_'))
            continue;
        char *end = NULL;
        double v = g_ascii_strtod(at + strlen(key), &end);
        if (end != at + strlen(key) && isfinite(v) && v > 0.0) {
            *ps = v;
            return TRUE;
        }
    }
    return FALSE;
}

gboolean fm_flim_prep_bin_width(const fm_dataset *ds, double override_ps, double *bin_width_ns,
                                GError **error)
{
    if (override_ps > 0.0) {
        *bin_width_ns = override_ps * 1e-3;
        return TRUE;
    }
    if (ds->n_dims >= 3) {
        const fm_dim *t = &ds->dims[2];
        if (t->spacing > 0.0 && g_strcmp0(t->unit, "ns") == 0) {
            *bin_width_ns = t->spacing;
            return TRUE;
        }
        if (t->spacing > 0.0 && g_strcmp0(t->unit, "ps") == 0) {
            *bin_width_ns = t->spacing * 1e-3;
            return TRUE;
        }
    }
    double ps = 0.0;
    const char *meta = fm_dataset_get_meta(ds, "bin_width_ps");
    if (meta) {
        char *end = NULL;
        double v = g_ascii_strtod(meta, &end);
        if (end != meta && isfinite(v) && v > 0.0) {
            *bin_width_ns = v * 1e-3;
            return TRUE;
        }
    }
    if (parse_bin_width_text(fm_dataset_get_meta(ds, "description"), &ps)) {
        *bin_width_ns = ps * 1e-3;
        return TRUE;
    }
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                _("%s: the file does not give the time-bin width; set bin_width_ps"),
                dataset_label(ds));
    return FALSE;
}

gboolean fm_flim_prep_check(const fm_dataset *ds, int binning, GError **error)
{
    const char *label = dataset_label(ds);
    if (ds->n_dims != 3) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: FLIM needs x, y, t data (one page per time bin), not %d dimensions"),
                    label, ds->n_dims);
        return FALSE;
    }
    if (ds->type != FM_PIXEL_U8 && ds->type != FM_PIXEL_U16 && ds->type != FM_PIXEL_F32) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: FLIM needs uint8, uint16 or float32 counts"), label);
        return FALSE;
    }
    int w = fm_dataset_width(ds), h = fm_dataset_height(ds), bins = fm_dataset_frames(ds);
    if (bins < FM_FLIM_MIN_BINS) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: %d time bins; lifetime fits need at least %d"), label, bins,
                    FM_FLIM_MIN_BINS);
        return FALSE;
    }
    if (binning < 1 || binning > FM_FLIM_MAX_BINNING) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("binning: %d is outside 1..%d"), binning,
                    FM_FLIM_MAX_BINNING);
        return FALSE;
    }
    if (binning > w || binning > h) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("binning: %d x %d is larger than the %d x %d image"), binning, binning, w, h);
        return FALSE;
    }
    return TRUE;
}

float *fm_flim_prep_counts(const fm_dataset *ds, int binning, GError **error)
{
    if (!fm_flim_prep_check(ds, binning, error))
        return NULL;
    const int w = fm_dataset_width(ds), h = fm_dataset_height(ds), bins = fm_dataset_frames(ds);
    const gsize n_px = (gsize)w * h;
    float *out = g_try_new(float, n_px *bins);
    g_autofree float *plane = binning > 1 ? g_try_new(float, n_px) : NULL;
    g_autofree float *rows = binning > 1 ? g_try_new(float, n_px) : NULL;
    if (out == NULL || (binning > 1 && (plane == NULL || rows == NULL))) {
        g_free(out);
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: not enough memory for %d bins"),
                    dataset_label(ds), bins);
        return NULL;
    }
    /* dims[0] = x varies fastest and t is outermost, so a t page is already one bin-major row */
    const int lo = -(binning - 1) / 2, hi = binning / 2;
    for (int b = 0; b < bins; b++) {
        float *dst = out + (gsize)b * n_px;
        float *src = binning > 1 ? plane : dst;
        for (gsize i = 0; i < n_px; i++)
            src[i] = (float)fm_dataset_value(ds, (gsize)b * n_px + i);
        if (binning == 1)
            continue;
        /* separable box sum, clipped at the edges: rows, then columns */
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double s = 0.0;
                for (int d = MAX(lo, -x); d <= MIN(hi, w - 1 - x); d++)
                    s += plane[(gsize)y * w + x + d];
                rows[(gsize)y * w + x] = (float)s;
            }
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double s = 0.0;
                for (int d = MAX(lo, -y); d <= MIN(hi, h - 1 - y); d++)
                    s += rows[(gsize)(y + d) * w + x];
                dst[(gsize)y * w + x] = (float)s;
            }
    }
    return out;
}

gboolean fm_flim_prep_fit_range(double start_ns, double end_ns, int n_bins, double bin_width_ns,
                                int *start, int *end, GError **error)
{
    const double span = n_bins * bin_width_ns;
    if (end_ns == 0.0)
        end_ns = span;
    /* half a bin of slack, so that typed values such as 25.6 for 256 x 100 ps pass */
    const double slack = 0.5 * bin_width_ns;
    if (!(start_ns >= 0.0) || !(end_ns <= span + slack) || !(start_ns < end_ns)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("fit range %g–%g ns lies outside the data (0–%g ns)"), start_ns, end_ns,
                    span);
        return FALSE;
    }
    int s = (int)floor(start_ns / bin_width_ns + 0.5), e = (int)floor(end_ns / bin_width_ns + 0.5);
    s = CLAMP(s, 0, n_bins);
    e = CLAMP(e, 0, n_bins);
    if (e - s < FM_FLIM_MIN_BINS) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("fit range %g–%g ns holds %d time bins; at least %d are needed"), start_ns,
                    end_ns, MAX(e - s, 0), FM_FLIM_MIN_BINS);
        return FALSE;
    }
    *start = s;
    *end = e;
    return TRUE;
}

static gboolean is_fit_roi(const fm_roi *roi)
{
    return roi->role == NULL || *roi->role == '\0' || strcmp(roi->role, "fit") == 0;
}

guint8 *fm_flim_prep_mask(GPtrArray *rois, int width, int height)
{
    const gsize n = (gsize)width * height;
    guint8 *mask = g_new0(guint8, n);
    gboolean any = FALSE;
    for (guint r = 0; rois && r < rois->len; r++) {
        const fm_roi *roi = g_ptr_array_index(rois, r);
        if (!is_fit_roi(roi))
            continue;
        any = TRUE;
        g_autofree guint8 *m = fm_roi_rasterise(roi, width, height);
        for (gsize i = 0; i < n; i++)
            mask[i] |= m[i];
    }
    if (!any)
        memset(mask, 1, n);
    return mask;
}

guint8 *fm_flim_prep_role_mask(GPtrArray *rois, const char *role, int width, int height)
{
    const gsize n = (gsize)width * height;
    guint8 *mask = NULL;
    for (guint r = 0; rois && r < rois->len; r++) {
        const fm_roi *roi = g_ptr_array_index(rois, r);
        if (g_strcmp0(roi->role, role) != 0)
            continue;
        if (mask == NULL)
            mask = g_new0(guint8, n);
        g_autofree guint8 *m = fm_roi_rasterise(roi, width, height);
        for (gsize i = 0; i < n; i++)
            mask[i] |= m[i];
    }
    return mask;
}

void fm_flim_prep_tile_shape(int tile_pixels, int *tile_width, int *tile_height)
{
    int n = MAX(tile_pixels, 1);
    int th = 1;
    for (int d = 1; d * d <= n; d++)
        if (n % d == 0)
            th = d;
    int tw = n / th;
    /* no near-square factorisation (a prime, say): a square of about the same area instead */
    if (tw > 4 * th) {
        tw = (int)ceil(sqrt((double)n));
        th = (n + tw - 1) / tw;
    }
    *tile_width = tw;
    *tile_height = th;
}

int *fm_flim_prep_segments(GPtrArray *rois, const guint8 *mask, int width, int height,
                           int tile_pixels, int *n_segments)
{
    const gsize n = (gsize)width * height;
    int *seg = g_new(int, n);
    for (gsize i = 0; i < n; i++)
        seg[i] = -1;
    int n_raw = 0;
    for (guint r = 0; rois && r < rois->len; r++) {
        const fm_roi *roi = g_ptr_array_index(rois, r);
        if (g_strcmp0(roi->role, "segment") != 0)
            continue;
        g_autofree guint8 *m = fm_roi_rasterise(roi, width, height);
        for (gsize i = 0; i < n; i++)
            if (m[i] && seg[i] < 0)
                seg[i] = n_raw;
        n_raw++;
    }
    if (n_raw == 0) {
        int tw, th;
        fm_flim_prep_tile_shape(tile_pixels, &tw, &th);
        int tiles_x = (width + tw - 1) / tw;
        for (int y = 0; y < height; y++)
            for (int x = 0; x < width; x++)
                seg[(gsize)y * width + x] = (y / th) * tiles_x + x / tw;
        n_raw = tiles_x * ((height + th - 1) / th);
    }
    /* keep fitted pixels only, and number the non-empty segments 0.. in order */
    g_autofree int *renumber = g_new(int, MAX(n_raw, 1));
    for (int s = 0; s < n_raw; s++)
        renumber[s] = -1;
    int next = 0;
    for (gsize i = 0; i < n; i++) {
        if (seg[i] < 0 || (mask && !mask[i])) {
            seg[i] = -1;
            continue;
        }
        if (renumber[seg[i]] < 0)
            renumber[seg[i]] = next++;
        seg[i] = renumber[seg[i]];
    }
    *n_segments = next;
    return seg;
}

/* Parses one text line of a decay file: "value" or "t,value" (also ';', tab or blanks); *t is
 * NaN without a time column. */
static gboolean parse_decay_line(const char *line, double *t, double *value)
{
    g_auto(GStrv) fields = g_strsplit_set(line, ",;\t ", -1);
    const char *first = NULL, *last = NULL;
    int n_fields = 0;
    for (int i = 0; fields[i]; i++)
        if (*fields[i]) {
            if (first == NULL)
                first = fields[i];
            last = fields[i];
            n_fields++;
        }
    if (last == NULL || n_fields > 2)
        return FALSE;
    char *end = NULL;
    double v = g_ascii_strtod(last, &end);
    if (end == last || *end != '\0' || !isfinite(v))
        return FALSE;
    *t = NAN;
    if (n_fields == 2) {
        double tv = g_ascii_strtod(first, &end);
        if (end == first || *end != '\0' || !isfinite(tv))
            return FALSE;
        *t = tv;
    }
    *value = v;
    return TRUE;
}

static GArray *read_decay_text(const char *path, const char *what, GArray *times, GError **error)
{
    g_autofree char *text = NULL;
    GError *local = NULL;
    if (!g_file_get_contents(path, &text, NULL, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s file %s: %s"), what, path,
                    local->message);
        g_error_free(local);
        return NULL;
    }
    GArray *values = g_array_new(FALSE, FALSE, sizeof(double));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    gboolean first = TRUE;
    for (int i = 0; lines[i]; i++) {
        char *line = g_strstrip(lines[i]);
        if (*line == '\0' || *line == '#')
            continue;
        double t, v;
        if (!parse_decay_line(line, &t, &v)) {
            if (first && values->len == 0) { /* a header such as "t_ns,counts" */
                first = FALSE;
                continue;
            }
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s file %s: line %d is not a number or \"t,value\": %s"), what, path,
                        i + 1, line);
            g_array_unref(values);
            return NULL;
        }
        first = FALSE;
        g_array_append_val(values, v);
        g_array_append_val(times, t);
    }
    return values;
}

/* A decay recorded as an image file: a TIFF, or an instrument's own file (a B&H .sdt single
 * decay, a PicoQuant point measurement), whatever fm_dataset_open reads. */
static GArray *read_decay_dataset(const char *path, const char *what, double *bin_width_ns,
                                  GError **error)
{
    GError *local = NULL;
    g_autoptr(fm_dataset) ds = fm_dataset_open(path, NULL, NULL, NULL, &local);
    if (ds == NULL) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s file: %s"), what, local->message);
        g_error_free(local);
        return NULL;
    }
    if (ds->n_dims < 2) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s file %s: a decay needs one value per time bin"), what, path);
        return NULL;
    }
    int w = fm_dataset_width(ds), h = fm_dataset_height(ds),
        pages = ds->n_dims >= 3 ? fm_dataset_frames(ds) : 1;
    GArray *values = g_array_new(FALSE, FALSE, sizeof(double));
    if (pages == 1 && (w == 1 || h == 1)) {
        /* one row or column of values: the decay written as a line image */
        for (gsize i = 0; i < (gsize)w * h; i++) {
            double v = fm_dataset_value(ds, i);
            g_array_append_val(values, v);
        }
        return values;
    }
    /* one page per bin: the decay of the whole (usually single-pixel) image */
    for (int b = 0; b < pages; b++) {
        double s = 0.0;
        for (gsize i = 0; i < (gsize)w * h; i++)
            s += fm_dataset_value(ds, (gsize)b * w * h + i);
        g_array_append_val(values, s);
    }
    if (!fm_flim_prep_bin_width(ds, 0.0, bin_width_ns, NULL))
        *bin_width_ns = 0.0;
    return values;
}

static gboolean is_decay_image(const char *path)
{
    static const char *const exts[] = {".tif", ".tiff", ".sdt", ".ptu", ".pt3"};
    g_autofree char *lower = g_ascii_strdown(path, -1);
    for (gsize i = 0; i < G_N_ELEMENTS(exts); i++)
        if (g_str_has_suffix(lower, exts[i]))
            return TRUE;
    return FALSE;
}

/* The bin width and start of a "t,value" file's time column when its steps are even, else 0. */
static void time_axis(const GArray *times, double *bin_width_ns, double *start_ns)
{
    *bin_width_ns = 0.0;
    *start_ns = 0.0;
    const guint n = times->len;
    if (n < 2)
        return;
    const double t0 = g_array_index(times, double, 0), t1 = g_array_index(times, double, n - 1);
    const double step = (t1 - t0) / (n - 1);
    if (!(step > 0.0))
        return;
    for (guint i = 0; i < n; i++) {
        double t = g_array_index(times, double, i);
        /* times are often printed to 6 digits: a thousandth of a step is rounding */
        if (!isfinite(t) || fabs(t - (t0 + i * step)) > 1e-3 * step + 1e-6 * fabs(t))
            return;
    }
    *bin_width_ns = step;
    *start_ns = t0;
}

GArray *fm_flim_prep_read_decay(const char *path, const char *what, double *bin_width_ns,
                                double *start_ns, GError **error)
{
    *bin_width_ns = 0.0;
    *start_ns = 0.0;
    if (is_decay_image(path))
        return read_decay_dataset(path, what, bin_width_ns, error);
    g_autoptr(GArray) times = g_array_new(FALSE, FALSE, sizeof(double));
    GArray *values = read_decay_text(path, what, times, error);
    if (values)
        time_axis(times, bin_width_ns, start_ns);
    return values;
}

gboolean fm_flim_prep_check_decay(const GArray *values, const char *path, const char *what,
                                  GError **error)
{
    double sum = 0.0;
    for (guint b = 0; b < values->len; b++) {
        double v = g_array_index(values, double, b);
        if (!isfinite(v) || v < 0.0) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s file %s: value %u is %g; expected a count >= 0"), what, path, b + 1,
                        v);
            return FALSE;
        }
        sum += v;
    }
    if (!(sum > 0.0)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s file %s: all values are zero"), what,
                    path);
        return FALSE;
    }
    return TRUE;
}

float *fm_flim_prep_load_decay(const char *path, int n_bins, const char *what, GError **error)
{
    double file_bin_ns, file_start_ns;
    g_autoptr(GArray) values =
        fm_flim_prep_read_decay(path, what, &file_bin_ns, &file_start_ns, error);
    if (values == NULL)
        return NULL;
    if ((int)values->len != n_bins) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s file %s: %u values, the data has %d time bins"), what, path, values->len,
                    n_bins);
        return NULL;
    }
    if (!fm_flim_prep_check_decay(values, path, what, error))
        return NULL;
    double sum = 0.0;
    for (int b = 0; b < n_bins; b++)
        sum += g_array_index(values, double, b);
    float *decay = g_new(float, n_bins);
    for (int b = 0; b < n_bins; b++)
        decay[b] = (float)(g_array_index(values, double, b) / sum);
    return decay;
}

/* Pixels per block of the photon sums: each block's bins are read in order, so every pixel sums
 * its bins in the same order as a single loop would (same bits on any thread count), while the
 * blocks run on all cores. */
#define PHOTON_BLOCK 4096

double *fm_flim_prep_photons(const float *counts, int n_pixels, int start, int end)
{
    double *sum = g_new0(double, MAX(n_pixels, 1));
#pragma omp parallel for schedule(static)
    for (int p0 = 0; p0 < n_pixels; p0 += PHOTON_BLOCK) {
        const int p1 = MIN(n_pixels, p0 + PHOTON_BLOCK);
        for (int b = start; b < end; b++) {
            const float *row = counts + (gsize)b * n_pixels;
            for (int p = p0; p < p1; p++)
                sum[p] += row[p];
        }
    }
    return sum;
}

gboolean fm_flim_prep_counts_typed(const fm_dataset *ds, int binning, fm_flim_counts *counts,
                                   GError **error)
{
    memset(counts, 0, sizeof *counts);
    if (!fm_flim_prep_check(ds, binning, error))
        return FALSE;
    /* x fastest, t outermost: the samples already are the kernels' bin-major layout */
    if (ds->type == FM_PIXEL_U16 && binning == 1) {
        counts->data = ds->data;
        counts->type = FM_PIXEL_U16;
        return TRUE;
    }
    counts->owned = fm_flim_prep_counts(ds, binning, error);
    counts->data = counts->owned;
    counts->type = FM_PIXEL_F32;
    return counts->owned != NULL;
}

void fm_flim_counts_clear(fm_flim_counts *counts)
{
    g_clear_pointer(&counts->owned, g_free);
    counts->data = NULL;
}

double *fm_flim_prep_photons_typed(const fm_flim_counts *counts, int n_pixels, int start, int end)
{
    if (counts->type == FM_PIXEL_F32)
        return fm_flim_prep_photons(counts->data, n_pixels, start, end);
    double *sum = g_new0(double, MAX(n_pixels, 1));
#pragma omp parallel for schedule(static)
    for (int p0 = 0; p0 < n_pixels; p0 += PHOTON_BLOCK) {
        const int p1 = MIN(n_pixels, p0 + PHOTON_BLOCK);
        for (int b = start; b < end; b++) {
            const guint16 *row = (const guint16 *)counts->data + (gsize)b * n_pixels;
            for (int p = p0; p < p1; p++)
                sum[p] += row[p];
        }
    }
    return sum;
}
