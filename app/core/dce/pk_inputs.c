/* Inputs of the standard pharmacokinetic models (see pk_inputs.h). */
#include "app/core/dce/pk_inputs.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/frame_times.h"
#include "app/core/roi.h"

static const char *const aif_choices[] = {"roi", "csv", "parker", "georgiou", NULL};

gboolean fm_pk_aif_parse(const char *text, fm_pk_aif_kind *kind)
{
    for (int i = 0; aif_choices[i]; i++)
        if (text && g_ascii_strcasecmp(text, aif_choices[i]) == 0) {
            *kind = (fm_pk_aif_kind)i;
            return TRUE;
        }
    return FALSE;
}

void fm_pk_inputs_clear(fm_pk_inputs *in)
{
    g_clear_pointer(&in->times_s, g_free);
    g_clear_pointer(&in->cp, g_free);
    g_clear_pointer(&in->tissue, g_free);
    g_clear_pointer(&in->index, g_free);
    g_clear_pointer(&in->input_note, g_free);
    g_clear_pointer(&in->voxel_note, g_free);
    in->n_times = 0;
    in->n_fit = 0;
}

static const char *label_of(const fm_dataset *ds)
{
    return ds->source_path ? ds->source_path : "dataset";
}

/* Mean signal of the artery (else aorta) VOI, converted with the blood's T10. */
static double *roi_input(const fm_dataset *ds, GPtrArray *rois, const fm_dce_geometry *g,
                         const fm_dce_conversion *conv, const float *t10_map,
                         const fm_pk_input_request *req, char **note, GError **error)
{
    const char *role = FM_PK_ROLE_ARTERY;
    gsize n = 0;
    g_autofree guint8 *mask = fm_dce_role_mask(rois, role, g, &n);
    if (!mask) {
        role = FM_DCE_ROLE_AORTA;
        mask = fm_dce_role_mask(rois, role, g, &n);
    }
    if (!mask) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: no arterial input: draw an ROI with the role artery, or give "
                      "--aif=parker (or georgiou, or csv with --input_csv)"),
                    label_of(ds));
        return NULL;
    }
    if (n == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: the ROI with the role %s holds no voxel of the %d x %d x %d volume; "
                      "redraw it"),
                    label_of(ds), role, g->nx, g->ny, g->nz);
        return NULL;
    }
    const gsize volume = (gsize)g->nx * g->ny * g->nz;
    double *mean = g_new0(double, g->nt);
    double map_t10 = 0.0;
    for (gsize v = 0; v < volume; v++) {
        if (!mask[v])
            continue;
        for (int t = 0; t < g->nt; t++)
            mean[t] += fm_dataset_value(ds, (gsize)t * volume + v) / (double)n;
        map_t10 += (t10_map ? t10_map[v] : conv->t10_s) / (double)n;
    }
    double t10 = req->t10_blood_s > 0.0 ? req->t10_blood_s : map_t10;
    fm_dce_convert_curve(conv, t10, mean, g->nt);
    if (conv->kind == FM_DCE_CONV_SPGR)
        *note = g_strdup_printf(_("%s ROI (%" G_GSIZE_FORMAT " voxels, T10 blood %.4g s%s)"), role,
                                n, t10,
                                req->t10_blood_s > 0.0 ? ""
                                : t10_map              ? _(", from the T10 map")
                                                       : _(", the tissue's"));
    else
        *note = g_strdup_printf(_("%s ROI (%" G_GSIZE_FORMAT " voxels)"), role, n);
    for (int t = 0; t < g->nt; t++)
        if (!isfinite(mean[t])) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: the arterial input has no concentration at frame %d (baseline "
                          "signal not positive, or beyond the SPGR limit: check T10 blood, TR "
                          "and flip angle)"),
                        label_of(ds), t);
            g_free(mean);
            return NULL;
        }
    return mean;
}

/* The CSV's ca column, linearly interpolated onto the frame times it must span. */
static double *csv_input(const char *path, const double *times, int nt, char **note, GError **error)
{
    if (!path || !*path) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("--aif=csv needs the file: give --input_csv=FILE (t_s,ca,cp)"));
        return NULL;
    }
    fm_dce_inputs csv = {0};
    if (!fm_dce_inputs_load_csv(path, &csv, error))
        return NULL;
    double *cp = NULL;
    if (times[0] < csv.times_s[0] - 1e-6 || times[nt - 1] > csv.times_s[csv.n_times - 1] + 1e-6) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: the input runs from %g to %g s, the frames from %g to %g s"), path,
                    csv.times_s[0], csv.times_s[csv.n_times - 1], times[0], times[nt - 1]);
    } else {
        cp = g_new(double, nt);
        int j = 0;
        for (int i = 0; i < nt; i++) {
            while (j + 2 < csv.n_times && csv.times_s[j + 1] < times[i])
                j++;
            double t0 = csv.times_s[j], t1 = csv.times_s[MIN(j + 1, csv.n_times - 1)];
            double w = t1 > t0 ? CLAMP((times[i] - t0) / (t1 - t0), 0.0, 1.0) : 0.0;
            cp[i] = (1.0 - w) * csv.ca[j] + w * csv.ca[MIN(j + 1, csv.n_times - 1)];
        }
        *note = g_strdup_printf(_("%s (%d rows, column ca as plasma)"), path, csv.n_times);
    }
    fm_dce_inputs_clear(&csv);
    return cp;
}

/* Voxels to fit and their curves; ref_cp (the input's peak) sets the enhancement threshold. */
static gboolean fit_voxels(const fm_dataset *ds, GPtrArray *rois, const fm_dce_geometry *g,
                           const fm_dce_conversion *conv, const float *t10_map,
                           const double *ref_cp, double threshold, fm_pk_inputs *out,
                           GError **error)
{
    gsize n = 0;
    g_autofree guint8 *mask = fm_dce_role_mask(rois, FM_PK_ROLE_TISSUE, g, &n);
    if (mask) {
        out->voxel_note = g_strdup_printf(_("%" G_GSIZE_FORMAT " voxels of the tissue ROI"), n);
    } else {
        /* No ROI list: fm_dce_fit_mask's threshold path (baseline and peak, stated there). */
        mask = fm_dce_fit_mask(ds, NULL, conv, t10_map, ref_cp, threshold, &n, error);
        if (!mask)
            return FALSE;
        /* The artery enhances most of all, yet it is the input, not tissue: its voxels are left
         * out (fitting them as tissue gives vp near 1 and Ktrans of nothing). */
        gsize left_out = 0;
        for (int r = 0; r < 2; r++) {
            g_autofree guint8 *artery =
                fm_dce_role_mask(rois, r == 0 ? FM_PK_ROLE_ARTERY : FM_DCE_ROLE_AORTA, g, NULL);
            for (gsize v = 0; artery && v < (gsize)g->nx * g->ny * g->nz; v++)
                if (artery[v] && mask[v]) {
                    mask[v] = 0;
                    left_out++;
                }
        }
        n -= left_out;
        out->voxel_note =
            left_out ? g_strdup_printf(_("%" G_GSIZE_FORMAT " voxels whose peak reaches %g of the "
                                         "input's (no tissue ROI; %" G_GSIZE_FORMAT
                                         " voxels of the arterial ROI left out)"),
                                       n, threshold, left_out)
                     : g_strdup_printf(_("%" G_GSIZE_FORMAT " voxels whose peak reaches %g of the "
                                         "input's (no tissue ROI)"),
                                       n, threshold);
    }
    if (n == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: no voxel to fit: the tissue ROI holds none, or none reaches the fit "
                      "threshold"),
                    label_of(ds));
        return FALSE;
    }
    out->n_fit = n;
    out->tissue = fm_dce_tissue_curves(ds, mask, n, conv, t10_map, &out->index);
    return TRUE;
}

/* Mean of the fitted curves, frames with a non-finite value in a curve skipped for that curve. */
static double *mean_tissue(const fm_pk_inputs *in)
{
    double *mean = g_new0(double, in->n_times);
    g_autofree double *count = g_new0(double, in->n_times);
    for (gsize k = 0; k < in->n_fit; k++)
        for (int t = 0; t < in->n_times; t++) {
            float v = in->tissue[k * in->n_times + t];
            if (isfinite(v)) {
                mean[t] += v;
                count[t] += 1.0;
            }
        }
    for (int t = 0; t < in->n_times; t++)
        mean[t] = count[t] > 0 ? mean[t] / count[t] : NAN;
    return mean;
}

gboolean fm_pk_inputs_prepare(const fm_dataset *ds, GPtrArray *rois, const fm_dce_conversion *conv,
                              const float *t10_map, const fm_pk_input_request *req,
                              fm_pk_inputs *out, GError **error)
{
    memset(out, 0, sizeof *out);
    fm_dce_geometry g;
    if (!fm_dce_geometry_of(ds, &g, error) || !fm_dce_conversion_check(conv, g.nt, error))
        return FALSE;
    if (!(req->hematocrit >= 0.0 && req->hematocrit < 1.0)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("hematocrit must lie in [0, 1) (0 = no correction), not %g"),
                    req->hematocrit);
        return FALSE;
    }
    out->n_times = g.nt;
    out->times_s = fm_dce_frame_times(ds, &g, error);
    if (!out->times_s)
        return FALSE;
    const double plasma = 1.0 / (1.0 - req->hematocrit);
    fm_dce_population pop =
        req->kind == FM_PK_AIF_GEORGIOU ? FM_DCE_AIF_GEORGIOU : FM_DCE_AIF_PARKER;
    gboolean population = req->kind == FM_PK_AIF_PARKER || req->kind == FM_PK_AIF_GEORGIOU;
    g_autofree char *note = NULL;
    if (req->kind == FM_PK_AIF_ROI) {
        out->cp = roi_input(ds, rois, &g, conv, t10_map, req, &note, error);
        for (int t = 0; out->cp && t < g.nt; t++)
            out->cp[t] *= plasma;
    } else if (req->kind == FM_PK_AIF_CSV) {
        out->cp = csv_input(req->csv_path, out->times_s, g.nt, &note, error);
    } else {
        /* Placed at arrival 0 first: its peak sets the threshold, whatever the arrival. */
        out->cp = g_new(double, g.nt);
        fm_dce_population_curve(pop, out->times_s, g.nt, out->times_s[0], out->cp);
        for (int t = 0; t < g.nt; t++)
            out->cp[t] *= plasma;
    }
    if (!out->cp ||
        !fit_voxels(ds, rois, &g, conv, t10_map, out->cp, req->fit_threshold, out, error)) {
        fm_pk_inputs_clear(out);
        return FALSE;
    }
    if (population) {
        /* The onset of the mean fitted curve, less the population curve's own onset (by the
         * same detector on a tissue-like curve of it), is where its bolus arrives. */
        g_autofree double *mean = mean_tissue(out);
        double arrival =
            fm_dce_bolus_arrival(out->times_s, mean, g.nt) - fm_dce_population_onset_s(pop);
        fm_dce_population_curve(pop, out->times_s, g.nt, arrival, out->cp);
        for (int t = 0; t < g.nt; t++)
            out->cp[t] *= plasma;
        note = g_strdup_printf(_("%s population curve, its bolus arriving at %.3g s (the onset "
                                 "of the mean curve of the fitted voxels)"),
                               pop == FM_DCE_AIF_GEORGIOU ? "Georgiou" : "Parker", arrival);
    }
    if (req->kind != FM_PK_AIF_CSV && req->hematocrit > 0.0)
        out->input_note =
            g_strdup_printf(_("%s, plasma = blood / (1 - %g)"), note, req->hematocrit);
    else
        out->input_note = g_steal_pointer(&note);
    return TRUE;
}

gboolean fm_pk_conversion_headers(const fm_dataset *ds, fm_dce_conversion *c, gboolean *tr_header,
                                  gboolean *flip_header, GError **error)
{
    *tr_header = *flip_header = FALSE;
    const char *tr = fm_dataset_get_meta(ds, FM_META_REPETITION_TIME);
    if (!(c->tr_ms > 0) && tr) {
        c->tr_ms = g_ascii_strtod(tr, NULL);
        *tr_header = TRUE;
    }
    const char *flips = fm_dataset_get_meta(ds, FM_META_FLIP_ANGLES);
    if (!(c->flip_deg > 0) && flips) {
        int n = 0;
        g_autofree double *a = fm_parse_number_list(flips, &n);
        for (int i = 1; a && i < n; i++)
            if (fabs(a[i] - a[0]) > 1e-6) {
                g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                            _("%s: the headers give flip angles from %g to %g deg: give "
                              "--flip_deg"),
                            ds->source_path ? ds->source_path : "dataset", a[0], a[i]);
                return FALSE;
            }
        c->flip_deg = a && n > 0 ? a[0] : 0.0;
        *flip_header = TRUE;
    }
    return TRUE;
}

gboolean fm_pk_inputs_check_units(const fm_dataset *ds, const fm_dce_conversion *conv,
                                  fm_pk_aif_kind kind, GError **error)
{
    if (kind != FM_PK_AIF_PARKER && kind != FM_PK_AIF_GEORGIOU)
        return TRUE;
    if (conv->kind != FM_DCE_CONV_ENHANCEMENT && conv->kind != FM_DCE_CONV_CT)
        return TRUE;
    /* Refused, not warned: relative enhancement (HU) is not proportional to mM through any
     * factor the run knows (SPGR saturates; it depends on T10, TR and flip angle), so every
     * amplitude parameter would be wrong by an unknown factor and still look plausible. */
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                _("%s: the %s population input is a concentration in mM, the tissue curves "
                  "would be %s: Ktrans, ve, vp and Fp would be off by an unknown factor. Give "
                  "--conversion=spgr (with T10, TR and flip angle) or none (data in mM), or an "
                  "arterial input in the same units (--aif=roi with an artery ROI)"),
                label_of(ds), kind == FM_PK_AIF_GEORGIOU ? "Georgiou" : "Parker",
                conv->kind == FM_DCE_CONV_CT ? _("HU above the baseline (--conversion=ct)")
                                             : _("relative enhancement S/S0 - 1 "
                                                 "(--conversion=enhancement)"));
    return FALSE;
}
