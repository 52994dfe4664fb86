/* DCE input preparation: signal to concentration, input VOI curves, CSV inputs, fit masks. */
#include "app/core/dce/dce_prep.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/frame_times.h"
#include "app/core/roi.h"

static const char *const required_roles[] = {FM_DCE_ROLE_AORTA, FM_DCE_ROLE_PORTAL_VEIN, NULL};

const char *const *fm_dce_required_roles(void)
{
    return required_roles;
}

static const char *const conversion_names[] = {"enhancement", "spgr", "ct", "none"};

const char *fm_dce_conversion_name(fm_dce_conversion_kind kind)
{
    return (kind >= 0 && kind <= FM_DCE_CONV_NONE) ? conversion_names[kind] : "unknown";
}

gboolean fm_dce_conversion_parse(const char *text, fm_dce_conversion_kind *kind)
{
    for (int i = 0; i <= FM_DCE_CONV_NONE; i++)
        if (text && g_ascii_strcasecmp(text, conversion_names[i]) == 0) {
            *kind = (fm_dce_conversion_kind)i;
            return TRUE;
        }
    return FALSE;
}

gboolean fm_dce_conversion_check(const fm_dce_conversion *c, int n_times, GError **error)
{
    if (c->kind == FM_DCE_CONV_NONE)
        return TRUE;
    if (c->baseline_frames < 1 || c->baseline_frames >= n_times) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("baseline_frames must lie in 1..%d (the series has %d frames), not %d"),
                    n_times - 1, n_times, c->baseline_frames);
        return FALSE;
    }
    if (c->kind != FM_DCE_CONV_SPGR)
        return TRUE;
    const char *bad = NULL;
    if (!(c->t10_s > 0) || !isfinite(c->t10_s))
        bad = "t10_s";
    else if (!(c->r1_per_mm_s > 0) || !isfinite(c->r1_per_mm_s))
        bad = "r1_per_mm_s";
    else if (!(c->tr_ms > 0) || !isfinite(c->tr_ms))
        bad = "tr_ms";
    else if (!(c->flip_deg > 0 && c->flip_deg < 180))
        bad = "flip_deg";
    if (bad) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("SPGR conversion needs %s > 0 (flip angle below 180 deg)"), bad);
        return FALSE;
    }
    return TRUE;
}

/* Spoiled gradient echo: S = M0 sin(a) (1 - E) / (1 - cos(a) E), E = exp(-TR R1). Dividing S
 * by S0 cancels M0 sin(a); with y = (S/S0)(1 - E0)/(1 - cos(a) E0) the equation is linear in
 * E: E = (1 - y) / (1 - y cos(a)), so R1 = -ln(E) / TR and C = (R1 - R10) / r1. y >= 1 means a
 * signal at or above full relaxation, which no concentration explains: NaN. */
/* The SPGR constants of one voxel (its T10), worked out once per curve rather than per sample:
 * the conversion of a whole volume is the preparation's main cost. */
typedef struct {
    double tr_s, cos_a, r10, e0, r1;
} spgr_voxel;

static spgr_voxel spgr_voxel_of(double t10_s, const fm_dce_conversion *c)
{
    spgr_voxel v;
    v.tr_s = c->tr_ms * 1e-3;
    v.cos_a = cos(c->flip_deg * G_PI / 180.0);
    v.r10 = 1.0 / t10_s;
    v.e0 = exp(-v.tr_s * v.r10);
    v.r1 = c->r1_per_mm_s;
    return v;
}

static double spgr_concentration(double ratio, const spgr_voxel *v)
{
    const double y = ratio * (1.0 - v->e0) / (1.0 - v->cos_a * v->e0);
    if (!(y < 1.0) || !(y > -1e300))
        return NAN;
    const double e = (1.0 - y) / (1.0 - y * v->cos_a);
    if (!(e > 0.0))
        return NAN;
    return (-log(e) / v->tr_s - v->r10) / v->r1;
}

double fm_dce_convert_curve(const fm_dce_conversion *c, double t10_s, double *curve, int n)
{
    if (c->kind == FM_DCE_CONV_NONE)
        return 0.0;
    int nb = MIN(MAX(c->baseline_frames, 1), n);
    double s0 = 0.0;
    for (int i = 0; i < nb; i++)
        s0 += curve[i];
    s0 /= nb;
    const spgr_voxel spgr = spgr_voxel_of(t10_s, c);
    for (int i = 0; i < n; i++) {
        switch (c->kind) {
        case FM_DCE_CONV_CT:
            curve[i] -= s0;
            break;
        case FM_DCE_CONV_ENHANCEMENT:
            curve[i] = s0 > 0.0 ? curve[i] / s0 - 1.0 : NAN;
            break;
        default:
            curve[i] = s0 > 0.0 ? spgr_concentration(curve[i] / s0, &spgr) : NAN;
            break;
        }
    }
    return s0;
}

gboolean fm_dce_geometry_of(const fm_dataset *ds, fm_dce_geometry *g, GError **error)
{
    if (ds->n_dims != 3 && ds->n_dims != 4) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: DCE needs an x, y, z, t series (or x, y, t for one slice), not %d "
                      "dimensions"),
                    ds->source_path ? ds->source_path : "dataset", ds->n_dims);
        return FALSE;
    }
    g->nx = (int)ds->dims[0].size;
    g->ny = (int)ds->dims[1].size;
    g->nz = ds->n_dims == 4 ? (int)ds->dims[2].size : 1;
    g->nt = (int)ds->dims[ds->n_dims - 1].size;
    return TRUE;
}

double *fm_dce_frame_times(const fm_dataset *ds, const fm_dce_geometry *g, GError **error)
{
    const char *label = ds->source_path ? ds->source_path : "dataset";
    const char *text = fm_dataset_get_meta(ds, FM_META_FRAME_TIMES);
    int n = 0;
    g_autofree double *t = NULL;
    if (text) {
        t = fm_parse_number_list(text, &n);
        if (!t || n != g->nt) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: frame_times_s holds %d numbers for %d frames"), label, n, g->nt);
            return NULL;
        }
    } else {
        double step = ds->dims[ds->n_dims - 1].spacing;
        t = g_new(double, g->nt);
        for (int i = 0; i < g->nt; i++)
            t[i] = i * (step > 0 ? step : 1.0);
    }
    for (int i = 1; i < g->nt; i++)
        if (!(t[i] > t[i - 1])) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: frame times are not increasing: frame %d at %g s follows %g s"),
                        label, i, t[i], t[i - 1]);
            return NULL;
        }
    return g_steal_pointer(&t);
}

guint8 *fm_dce_role_mask(GPtrArray *rois, const char *role, const fm_dce_geometry *g,
                         gsize *n_voxels)
{
    const gsize plane = (gsize)g->nx * g->ny;
    guint8 *mask = NULL;
    gsize n = 0;
    for (guint r = 0; rois && r < rois->len; r++) {
        const fm_roi *roi = g_ptr_array_index(rois, r);
        if (g_strcmp0(roi->role, role) != 0)
            continue;
        if (!mask)
            mask = g_new0(guint8, MAX(plane * g->nz, 1));
        g_autofree guint8 *m2 = fm_roi_rasterise(roi, g->nx, g->ny);
        int z0 = roi->slice < 0 ? 0 : roi->slice, z1 = roi->slice < 0 ? g->nz : roi->slice + 1;
        for (int z = z0; z < MIN(z1, g->nz); z++)
            for (gsize p = 0; p < plane; p++)
                mask[z * plane + p] |= m2[p];
    }
    for (gsize v = 0; mask && v < plane * g->nz; v++)
        n += mask[v];
    if (n_voxels)
        *n_voxels = n;
    return mask;
}

void fm_dce_inputs_clear(fm_dce_inputs *in)
{
    g_clear_pointer(&in->times_s, g_free);
    g_clear_pointer(&in->ca, g_free);
    g_clear_pointer(&in->cp, g_free);
    in->n_times = 0;
}

/* The signal curve of voxel v (x-fastest index within the volume). */
static void voxel_curve(const fm_dataset *ds, const fm_dce_geometry *g, gsize v, double *out)
{
    const gsize volume = (gsize)g->nx * g->ny * g->nz;
    for (int t = 0; t < g->nt; t++)
        out[t] = fm_dataset_value(ds, (gsize)t * volume + v);
}

/* Curves of the n neighbouring voxels v0.. into block[j * nt + t], read frame by frame: each
 * frame's run of voxels is contiguous memory, where one voxel's curve is nt samples a whole
 * volume apart (a cache miss each). */
#define CURVE_BLOCK 64
static void voxel_curves_block(const fm_dataset *ds, const fm_dce_geometry *g, gsize v0, int n,
                               double *block)
{
    const gsize volume = (gsize)g->nx * g->ny * g->nz;
    for (int t = 0; t < g->nt; t++) {
        const gsize base = (gsize)t * volume + v0;
        if (ds->type == FM_PIXEL_F32) {
            const float *p = (const float *)ds->data + base;
            for (int j = 0; j < n; j++)
                block[(gsize)j * g->nt + t] = p[j];
        } else {
            for (int j = 0; j < n; j++)
                block[(gsize)j * g->nt + t] = fm_dataset_value(ds, base + (gsize)j);
        }
    }
}

/* Mean signal over a mask, converted; NULL with a message naming the role when it is empty. */
static double *voi_curve(const fm_dataset *ds, GPtrArray *rois, const char *role, const char *what,
                         const fm_dce_geometry *g, const fm_dce_conversion *conv,
                         const float *t10_map, GError **error)
{
    gsize n = 0;
    g_autofree guint8 *mask = fm_dce_role_mask(rois, role, g, &n);
    if (!mask || n == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    mask ? _("the %s ROI (role %s) holds no voxel of the %d x %d x %d volume; "
                             "redraw it")
                         : _("draw the %s ROI (role %s)"),
                    what, role, g->nx, g->ny, g->nz);
        return NULL;
    }
    double *mean = g_new0(double, g->nt);
    g_autofree double *c = g_new(double, g->nt);
    double t10 = 0.0;
    for (gsize v = 0; v < (gsize)g->nx * g->ny * g->nz; v++) {
        if (!mask[v])
            continue;
        voxel_curve(ds, g, v, c);
        for (int t = 0; t < g->nt; t++)
            mean[t] += c[t] / (double)n;
        t10 += (t10_map ? t10_map[v] : conv->t10_s) / (double)n;
    }
    fm_dce_convert_curve(conv, t10, mean, g->nt);
    return mean;
}

gboolean fm_dce_inputs_from_rois(const fm_dataset *ds, GPtrArray *rois,
                                 const fm_dce_conversion *conv, const float *t10_map,
                                 double hematocrit, fm_dce_inputs *out, GError **error)
{
    memset(out, 0, sizeof *out);
    fm_dce_geometry g;
    if (!fm_dce_geometry_of(ds, &g, error) || !fm_dce_conversion_check(conv, g.nt, error))
        return FALSE;
    if (!(hematocrit >= 0.0 && hematocrit < 1.0)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("hematocrit must lie in [0, 1) (0 = no correction), not %g"), hematocrit);
        return FALSE;
    }
    g_autofree double *times = fm_dce_frame_times(ds, &g, error);
    if (!times)
        return FALSE;
    g_autofree double *ca =
        voi_curve(ds, rois, FM_DCE_ROLE_AORTA, _("aorta"), &g, conv, t10_map, error);
    if (!ca)
        return FALSE;
    g_autofree double *cp =
        voi_curve(ds, rois, FM_DCE_ROLE_PORTAL_VEIN, _("portal-vein"), &g, conv, t10_map, error);
    if (!cp)
        return FALSE;
    /* The model's rates refer to plasma flow: blood concentration / (1 - Hct) is the plasma's. */
    for (int t = 0; hematocrit > 0.0 && t < g.nt; t++) {
        ca[t] /= 1.0 - hematocrit;
        cp[t] /= 1.0 - hematocrit;
    }
    for (int t = 0; t < g.nt; t++)
        if (!isfinite(ca[t]) || !isfinite(cp[t])) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("the %s input curve has no concentration at frame %d (baseline signal "
                          "not positive, or beyond the SPGR limit)"),
                        isfinite(ca[t]) ? _("portal-vein") : _("arterial"), t);
            return FALSE;
        }
    out->n_times = g.nt;
    out->times_s = g_steal_pointer(&times);
    out->ca = g_steal_pointer(&ca);
    out->cp = g_steal_pointer(&cp);
    return TRUE;
}

gboolean fm_dce_inputs_load_csv(const char *path, fm_dce_inputs *out, GError **error)
{
    memset(out, 0, sizeof *out);
    g_autofree char *text = NULL;
    GError *local = NULL;
    if (!g_file_get_contents(path, &text, NULL, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot read: %s"), path,
                    local->message);
        g_error_free(local);
        return FALSE;
    }
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_autoptr(GArray) values = g_array_new(FALSE, FALSE, sizeof(double));
    gboolean header_seen = FALSE;
    for (int l = 0; lines[l]; l++) {
        g_strstrip(lines[l]);
        if (lines[l][0] == '\0' || lines[l][0] == '#')
            continue;
        int n = 0;
        g_autofree double *row = fm_parse_number_list(lines[l], &n);
        if (!row && !header_seen && values->len == 0) {
            header_seen = TRUE; /* "t_s,ca,cp" */
            continue;
        }
        if (!row || n != 3) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: line %d: expected three numbers t_s,ca,cp"), path, l + 1);
            return FALSE;
        }
        if (values->len >= 3 && !(row[0] > g_array_index(values, double, values->len - 3))) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: line %d: time %g s does not follow the previous one"), path, l + 1,
                        row[0]);
            return FALSE;
        }
        g_array_append_vals(values, row, 3);
    }
    int nt = (int)(values->len / 3);
    if (nt < 2) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: expected at least two rows of t_s,ca,cp"), path);
        return FALSE;
    }
    out->n_times = nt;
    out->times_s = g_new(double, nt);
    out->ca = g_new(double, nt);
    out->cp = g_new(double, nt);
    for (int i = 0; i < nt; i++) {
        out->times_s[i] = g_array_index(values, double, 3 * i);
        out->ca[i] = g_array_index(values, double, 3 * i + 1);
        out->cp[i] = g_array_index(values, double, 3 * i + 2);
    }
    return TRUE;
}

gboolean fm_dce_inputs_save_csv(const char *path, const fm_dce_inputs *in, GError **error)
{
    g_autoptr(GString) s = g_string_new("t_s,ca,cp\n");
    char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE], c[G_ASCII_DTOSTR_BUF_SIZE];
    for (int i = 0; i < in->n_times; i++) /* %.17g: a save-load round trip is exact */
        g_string_append_printf(s, "%s,%s,%s\n",
                               g_ascii_formatd(a, sizeof a, "%.17g", in->times_s[i]),
                               g_ascii_formatd(b, sizeof b, "%.17g", in->ca[i]),
                               g_ascii_formatd(c, sizeof c, "%.17g", in->cp[i]));
    GError *local = NULL;
    if (!g_file_set_contents(path, s->str, (gssize)s->len, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write: %s"), path, local->message);
        g_error_free(local);
        return FALSE;
    }
    return TRUE;
}

guint8 *fm_dce_fit_mask(const fm_dataset *ds, GPtrArray *rois, const fm_dce_conversion *conv,
                        const float *t10_map, const double *ca, double threshold, gsize *n_voxels,
                        GError **error)
{
    fm_dce_geometry g;
    if (!fm_dce_geometry_of(ds, &g, error))
        return NULL;
    guint8 *liver = fm_dce_role_mask(rois, FM_DCE_ROLE_LIVER, &g, n_voxels);
    if (liver)
        return liver;
    const gsize volume = (gsize)g.nx * g.ny * g.nz;
    double ca_peak = 0.0;
    for (int t = 0; t < g.nt; t++)
        ca_peak = MAX(ca_peak, ca[t]);
    gboolean by_baseline = conv->kind == FM_DCE_CONV_ENHANCEMENT || conv->kind == FM_DCE_CONV_SPGR;
    g_autofree double *s0 = g_new0(double, volume);
    double s0_max = 0.0;
    int nb = MIN(MAX(conv->baseline_frames, 1), g.nt);
    /* frame by frame: each baseline frame is read as contiguous memory */
    for (int t = 0; t < nb; t++) {
#pragma omp parallel for schedule(static)
        for (gsize v = 0; v < volume; v++)
            s0[v] += fm_dataset_value(ds, (gsize)t * volume + v);
    }
#pragma omp parallel for reduction(max : s0_max) schedule(static)
    for (gsize v = 0; v < volume; v++) {
        s0[v] /= nb;
        s0_max = MAX(s0_max, s0[v]);
    }
    guint8 *mask = g_new0(guint8, MAX(volume, 1));
    gsize n = 0;
    const gsize n_blocks = (volume + CURVE_BLOCK - 1) / CURVE_BLOCK;
    /* every voxel's curve converted: in parallel (a whole volume of 2 million voxels took 15 s
     * on one thread), in blocks of neighbouring voxels read frame by frame */
#pragma omp parallel reduction(+ : n)
    {
        double *block = g_new(double, (gsize)CURVE_BLOCK *g.nt);
#pragma omp for schedule(static)
        for (gsize b = 0; b < n_blocks; b++) {
            const gsize v0 = b * CURVE_BLOCK;
            const int nv = (int)MIN((gsize)CURVE_BLOCK, volume - v0);
            voxel_curves_block(ds, &g, v0, nv, block);
            for (int j = 0; j < nv; j++) {
                const gsize v = v0 + (gsize)j;
                if (by_baseline && !(s0[v] > 0.0 && s0[v] >= threshold * s0_max))
                    continue;
                double *c = block + (gsize)j * g.nt;
                fm_dce_convert_curve(conv, t10_map ? t10_map[v] : conv->t10_s, c, g.nt);
                double peak = -INFINITY;
                gboolean finite = TRUE;
                for (int t = 0; t < g.nt; t++) {
                    finite = finite && isfinite(c[t]);
                    peak = MAX(peak, c[t]);
                }
                if (finite && peak >= threshold * ca_peak) {
                    mask[v] = 1;
                    n++;
                }
            }
        }
        g_free(block);
    }
    *n_voxels = n;
    return mask;
}

float *fm_dce_tissue_curves(const fm_dataset *ds, const guint8 *mask, gsize n_voxels,
                            const fm_dce_conversion *conv, const float *t10_map, gsize **index)
{
    fm_dce_geometry g;
    if (!fm_dce_geometry_of(ds, &g, NULL))
        return NULL;
    const gsize volume = (gsize)g.nx * g.ny * g.nz;
    float *curves = g_new(float, MAX(n_voxels * g.nt, 1));
    gsize *idx = g_new(gsize, MAX(n_voxels, 1));
    gsize k = 0;
    for (gsize v = 0; v < volume && k < n_voxels; v++)
        if (mask[v])
            idx[k++] = v;
    const gsize n = k;
    const gsize n_blocks = (volume + CURVE_BLOCK - 1) / CURVE_BLOCK;
    /* blocks of neighbouring voxels read frame by frame (voxel_curves_block); a block's masked
     * voxels converted and stored from its first rank in idx on */
    g_autofree gsize *first_rank = g_new(gsize, n_blocks + 1);
    first_rank[0] = 0;
    for (gsize b = 0, r = 0; b < n_blocks; b++) {
        const gsize end = MIN((b + 1) * CURVE_BLOCK, volume);
        for (gsize v = b * CURVE_BLOCK; v < end; v++)
            r += mask[v] != 0;
        first_rank[b + 1] = MIN(r, n);
    }
#pragma omp parallel
    {
        double *block = g_new(double, (gsize)CURVE_BLOCK *g.nt);
#pragma omp for schedule(static)
        for (gsize b = 0; b < n_blocks; b++) {
            if (first_rank[b + 1] == first_rank[b])
                continue;
            const gsize v0 = b * CURVE_BLOCK;
            const int nv = (int)MIN((gsize)CURVE_BLOCK, volume - v0);
            voxel_curves_block(ds, &g, v0, nv, block);
            gsize j = first_rank[b];
            for (int i = 0; i < nv && j < first_rank[b + 1]; i++) {
                if (!mask[v0 + (gsize)i])
                    continue;
                double *c = block + (gsize)i * g.nt;
                fm_dce_convert_curve(conv, t10_map ? t10_map[v0 + (gsize)i] : conv->t10_s, c, g.nt);
                for (int t = 0; t < g.nt; t++)
                    curves[j * g.nt + t] = (float)c[t];
                j++;
            }
        }
        g_free(block);
    }
    *index = idx;
    return curves;
}
