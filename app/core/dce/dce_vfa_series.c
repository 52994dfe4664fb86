/* One DICOM series per flip angle assembled into one VFA acquisition (dce_vfa_series.h). */
#include "app/core/dce/dce_vfa_series.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/dicom.h"
#include "app/core/io/frame_times.h"
#include "app/core/io/open.h"

typedef struct {
    fm_dataset *ds;
    double flip_deg, tr_ms; /* from the headers; NAN when they do not say */
} vfa_series;

static void series_clear(gpointer p)
{
    vfa_series *s = p;
    g_clear_pointer(&s->ds, fm_dataset_unref);
}

/* The file a message names: a file of the series where the reader kept one, else its source. */
static const char *file_of(const fm_dataset *ds)
{
    const char *file = fm_dataset_get_meta(ds, "dicom_reference_file");
    return file ? file : ds->source_path ? ds->source_path : "dataset";
}

/* One number from a metadata list whose values are all equal, else NAN. */
static double single_value(const fm_dataset *ds, const char *key)
{
    const char *text = fm_dataset_get_meta(ds, key);
    int n = 0;
    g_autofree double *v = text ? fm_parse_number_list(text, &n) : NULL;
    for (int i = 1; v && i < n; i++)
        if (v[i] != v[0])
            return NAN;
    return v && n > 0 ? v[0] : NAN;
}

/* Every series under paths, in the order found. */
static gboolean read_all(const char *const *paths, int n_paths, GArray *series, GError **error)
{
    for (int p = 0; p < n_paths; p++) {
        if (!g_file_test(paths[p], G_FILE_TEST_IS_DIR)) {
            vfa_series s = {fm_dataset_open(paths[p], NULL, NULL, NULL, error), NAN, NAN};
            if (!s.ds)
                return FALSE;
            g_array_append_val(series, s);
            continue;
        }
        g_auto(GStrv) uids = fm_dicom_list_series(paths[p], error);
        if (!uids)
            return FALSE;
        if (!uids[0]) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: holds no DICOM series"),
                        paths[p]);
            return FALSE;
        }
        for (int u = 0; uids[u]; u++) {
            vfa_series s = {fm_dicom_read(paths[p], uids[u], error), NAN, NAN};
            if (!s.ds)
                return FALSE;
            g_array_append_val(series, s);
        }
    }
    return TRUE;
}

static int by_flip_angle(gconstpointer a, gconstpointer b)
{
    double x = ((const vfa_series *)a)->flip_deg, y = ((const vfa_series *)b)->flip_deg;
    return (x > y) - (x < y);
}

/* s has the geometry of the first series: sizes, voxel sizes and its place (affine). */
static gboolean same_geometry(const fm_dataset *first, const fm_dataset *s, GError **error)
{
    for (int d = 0; d < 3; d++)
        if (s->dims[d].size != first->dims[d].size ||
            fabs(s->dims[d].spacing - first->dims[d].spacing) >
                1e-4 * fabs(first->dims[d].spacing)) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: its images are %d x %d x %d voxels of %g x %g x %g mm, those of %s "
                          "%d x %d x %d of %g x %g x %g mm: the flip-angle series must share one "
                          "geometry"),
                        file_of(s), (int)s->dims[0].size, (int)s->dims[1].size,
                        (int)s->dims[2].size, s->dims[0].spacing, s->dims[1].spacing,
                        s->dims[2].spacing, file_of(first), (int)first->dims[0].size,
                        (int)first->dims[1].size, (int)first->dims[2].size, first->dims[0].spacing,
                        first->dims[1].spacing, first->dims[2].spacing);
            return FALSE;
        }
    const char *a = fm_dataset_get_meta(first, FM_META_AFFINE);
    const char *b = fm_dataset_get_meta(s, FM_META_AFFINE);
    int na = 0, nb = 0;
    g_autofree double *fa = a ? fm_parse_number_list(a, &na) : NULL;
    g_autofree double *fb = b ? fm_parse_number_list(b, &nb) : NULL;
    gboolean same = na == nb;
    for (int i = 0; same && i < na; i++)
        same = fabs(fa[i] - fb[i]) <= 1e-3; /* mm, and direction cosines x voxel size */
    if (!same) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: its slices lie elsewhere than those of %s (position or orientation "
                      "differ): the flip-angle series must cover one volume"),
                    file_of(s), file_of(first));
        return FALSE;
    }
    return TRUE;
}

/* The series' flip angle and TR, checked against the first series (already checked). */
static gboolean check_series(vfa_series *s, const vfa_series *first, GError **error)
{
    const fm_dataset *ds = s->ds;
    s->flip_deg = single_value(ds, FM_META_FLIP_ANGLES);
    s->tr_ms = single_value(ds, FM_META_REPETITION_TIME);
    if (!(s->flip_deg > 0) || !(s->tr_ms > 0)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: its headers give no single %s, which a series of a variable-flip-angle "
                      "acquisition needs"),
                    file_of(ds), !(s->flip_deg > 0) ? "FlipAngle" : "RepetitionTime");
        return FALSE;
    }
    if (ds->n_dims < 2 || ds->n_dims > 4 || (ds->n_dims == 4 && ds->dims[3].size != 1)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: a series of %d images at each slice among series of one flip angle "
                      "each: give the series of one acquisition"),
                    file_of(ds), ds->n_dims == 4 ? (int)ds->dims[3].size : 1);
        return FALSE;
    }
    if (first && fabs(s->tr_ms - first->tr_ms) > 1e-6 * first->tr_ms) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: TR %g ms, but %s has %g ms: the flip-angle series must share one TR"),
                    file_of(ds), s->tr_ms, file_of(first->ds), first->tr_ms);
        return FALSE;
    }
    return !first || same_geometry(first->ds, ds, error);
}

/* The sorted series as one x, y, z, angle dataset carrying the first one's metadata. */
static fm_dataset *assemble(GArray *series)
{
    const vfa_series *first = &g_array_index(series, vfa_series, 0);
    const fm_dataset *f = first->ds;
    /* A one-image series per angle (one slice) reads as a 2-D image: a volume of one slice. */
    const gsize nz = f->n_dims >= 3 ? f->dims[2].size : 1;
    const gsize volume = f->dims[0].size * f->dims[1].size * nz;
    const int n = (int)series->len;
    gsize sizes[4] = {f->dims[0].size, f->dims[1].size, nz, (gsize)n};
    const char *const names[4] = {"x", "y", "z", "t"};
    fm_dataset *out = fm_dataset_new(FM_PIXEL_F32, 4, sizes, names);
    float *data = out->data;
    g_autofree double *angles = g_new(double, n);
    for (int a = 0; a < n; a++) {
        const vfa_series *s = &g_array_index(series, vfa_series, a);
        angles[a] = s->flip_deg;
        for (gsize v = 0; v < volume; v++)
            data[(gsize)a * volume + v] = (float)fm_dataset_value(s->ds, v);
    }
    for (int d = 0; d < f->n_dims && d < 3; d++) {
        out->dims[d].spacing = f->dims[d].spacing;
        out->dims[d].unit = g_strdup(f->dims[d].unit);
    }
    out->dims[3].unit = g_strdup("frame");
    /* The lowest angle's study, frame of reference and slice references: maps written back as
     * DICOM refer to that series. Its own time and angle entries do not describe the whole. */
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, f->metadata);
    while (g_hash_table_iter_next(&it, &key, &value))
        if (!g_str_has_prefix(key, "frame_times") && strcmp(key, "dicom_time_source") != 0)
            fm_dataset_set_meta(out, key, value);
    g_autofree char *list = fm_format_number_list(angles, n);
    fm_dataset_set_meta(out, FM_META_FLIP_ANGLES, list);
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    fm_dataset_set_meta(out, FM_META_REPETITION_TIME,
                        g_ascii_formatd(buf, sizeof buf, "%.10g", first->tr_ms));
    g_snprintf(buf, sizeof buf, "%d", n);
    fm_dataset_set_meta(out, FM_META_VFA_SERIES, buf);
    out->source_path = g_strdup(f->source_path);
    return out;
}

fm_dataset *fm_dce_vfa_open(const char *const *paths, int n_paths, GError **error)
{
    g_autoptr(GArray) series = g_array_new(FALSE, TRUE, sizeof(vfa_series));
    g_array_set_clear_func(series, series_clear);
    if (!read_all(paths, n_paths, series, error))
        return NULL;
    if (series->len == 1)
        return fm_dataset_ref(g_array_index(series, vfa_series, 0).ds);
    for (guint i = 0; i < series->len; i++)
        if (!check_series(&g_array_index(series, vfa_series, i), NULL, error))
            return NULL;
    g_array_sort(series, by_flip_angle);
    const vfa_series *first = &g_array_index(series, vfa_series, 0);
    for (guint i = 1; i < series->len; i++) {
        vfa_series *s = &g_array_index(series, vfa_series, i);
        if (s->flip_deg == g_array_index(series, vfa_series, i - 1).flip_deg) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s and %s: two series at flip angle %g deg: give one per angle"),
                        file_of(g_array_index(series, vfa_series, i - 1).ds), file_of(s->ds),
                        s->flip_deg);
            return NULL;
        }
        if (!check_series(s, first, error))
            return NULL;
    }
    return assemble(series);
}
