/* Reference phantoms of the standard pharmacokinetic models (see pk_sim.h). */
#include "app/core/dce/pk_sim.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/dce/dce_aif.h"
#include "app/core/error.h"
#include "app/core/io/frame_times.h"
#include "app/core/roi.h"

void fm_pk_sim_defaults(fm_pk_sim_params *p, fm_pk_model model)
{
    /* OSIPI's anthropomorphic DRO acquisition (T10 blood 1.44 s, tissue 1 s, TR 5 ms, flip 30,
     * Hct 0.45), 2 s frames over 5 minutes. */
    *p = (fm_pk_sim_params){.model = model,
                            .nx = 32,
                            .ny = 32,
                            .nz = 1,
                            .n_times = 150,
                            .frame_interval_s = 2.0,
                            .arrival_s = 20.0,
                            .hematocrit = 0.45,
                            .t10_tissue_s = 1.0,
                            .t10_blood_s = 1.44,
                            .tr_ms = 5.0,
                            .flip_deg = 30.0,
                            .r1_per_mm_s = 4.5,
                            .baseline_signal = 1000.0,
                            .snr = 100.0,
                            .seed = 24};
}

/* Four regions per model, spanning slow to fast exchange (Ktrans, PS in 1/min; Fp in
 * ml/100ml/min; ve, vp fractions). */
void fm_pk_sim_truth(const fm_pk_sim_params *p, int region, double theta[FM_PK_N_PARAMS])
{
    static const double ktrans[4] = {0.05, 0.15, 0.3, 0.6}, ve[4] = {0.15, 0.25, 0.35, 0.45};
    static const double vp[4] = {0.02, 0.05, 0.08, 0.12}, fp[4] = {20, 45, 80, 120};
    static const double ps[4] = {0.05, 0.12, 0.25, 0.4};
    for (int i = 0; i < FM_PK_N_PARAMS; i++)
        theta[i] = NAN;
    int r = CLAMP(region, 0, FM_PK_SIM_N_REGIONS - 1);
    theta[FM_PK_DELAY] = 0.0;
    switch (p->model) {
    case FM_PK_EXTENDED_TOFTS:
        theta[FM_PK_VP] = vp[r];
        /* fall through */
    case FM_PK_TOFTS:
        theta[FM_PK_KTRANS] = ktrans[r];
        theta[FM_PK_VE] = ve[r];
        break;
    case FM_PK_PATLAK:
        theta[FM_PK_PS] = ktrans[r] / 3.0; /* uptake without backflux: smaller rates */
        theta[FM_PK_VP] = vp[r];
        break;
    case FM_PK_2CXM:
        theta[FM_PK_VE] = ve[r];
        /* fall through */
    default:
        theta[FM_PK_FP] = fp[r];
        theta[FM_PK_PS] = ps[r];
        theta[FM_PK_VP] = vp[r];
        break;
    }
}

/* Layout of a slice: the artery a square near the corner, the regions a 2 x 2 grid of squares
 * with one-pixel gaps in the rest. Boxes are [x0, x1) x [y0, y1) in pixels. */
typedef struct {
    int x0, y0, x1, y1;
} box;

static box artery_box(const fm_pk_sim_params *p)
{
    int w = MAX(2, p->nx / 8), h = MAX(2, p->ny / 8);
    return (box){1, 1, 1 + w, 1 + h};
}

static box region_box(const fm_pk_sim_params *p, int r)
{
    int x0 = p->nx / 4, y0 = p->ny / 4;
    int cw = (p->nx - x0 - 1) / 2, ch = (p->ny - y0 - 1) / 2;
    int rx = r % 2, ry = r / 2;
    return (box){x0 + rx * cw, y0 + ry * ch, x0 + rx * cw + cw - 1, y0 + ry * ch + ch - 1};
}

static gboolean in_box(box b, int x, int y)
{
    return x >= b.x0 && x < b.x1 && y >= b.y0 && y < b.y1;
}

int fm_pk_sim_region_at(const fm_pk_sim_params *p, int x, int y)
{
    if (in_box(artery_box(p), x, y))
        return -2;
    for (int r = 0; r < FM_PK_SIM_N_REGIONS; r++)
        if (in_box(region_box(p, r), x, y))
            return r;
    return -1;
}

double fm_pk_sim_plasma(const fm_pk_sim_params *p, double t_s)
{
    return fm_dce_population_blood(FM_DCE_AIF_PARKER, t_s - p->arrival_s) / (1.0 - p->hematocrit);
}

/* The model's state derivative (rates per second). State: s[0] plasma (2CXM, 2CUM) or
 * extravascular (Tofts, Patlak) concentration, s[1] extravascular (2CXM, 2CUM). */
static void derivative(const fm_pk_sim_params *p, const double *th, double ca, const double *s,
                       double *ds)
{
    const double per_min = 1.0 / 60.0;
    switch (p->model) {
    case FM_PK_TOFTS:
    case FM_PK_EXTENDED_TOFTS: /* ve dCe/dt = Ktrans (Cp - Ce); s[0] = ve Ce */
        ds[0] = th[FM_PK_KTRANS] * per_min * (ca - s[0] / th[FM_PK_VE]);
        ds[1] = 0.0;
        break;
    case FM_PK_PATLAK: /* dNe/dt = Ktrans Cp */
        ds[0] = th[FM_PK_PS] * per_min * ca;
        ds[1] = 0.0;
        break;
    case FM_PK_2CXM: { /* vp dcp/dt = Fp (Ca - cp) - PS (cp - ce); ve dce/dt = PS (cp - ce) */
        double f = th[FM_PK_FP] / 6000.0, ps = th[FM_PK_PS] * per_min;
        ds[0] = (f * (ca - s[0]) - ps * (s[0] - s[1])) / th[FM_PK_VP];
        ds[1] = ps * (s[0] - s[1]) / th[FM_PK_VE];
        break;
    }
    default: { /* 2CUM: vp dcp/dt = Fp (Ca - cp) - PS cp; dNe/dt = PS cp */
        double f = th[FM_PK_FP] / 6000.0, ps = th[FM_PK_PS] * per_min;
        ds[0] = (f * (ca - s[0]) - ps * s[0]) / th[FM_PK_VP];
        ds[1] = ps * s[0];
        break;
    }
    }
}

static double tissue_of(const fm_pk_sim_params *p, const double *th, const double *s, double ca)
{
    switch (p->model) {
    case FM_PK_TOFTS:
        return s[0];
    case FM_PK_EXTENDED_TOFTS:
    case FM_PK_PATLAK:
        return s[0] + th[FM_PK_VP] * ca;
    case FM_PK_2CXM:
        return th[FM_PK_VP] * s[0] + th[FM_PK_VE] * s[1];
    default:
        return th[FM_PK_VP] * s[0] + s[1];
    }
}

void fm_pk_sim_tissue(const fm_pk_sim_params *p, int region, double *curve)
{
    double th[FM_PK_N_PARAMS];
    fm_pk_sim_truth(p, region, th);
    const double h = 0.01;
    double s[2] = {0.0, 0.0}, now = 0.0;
    for (int i = 0; i < p->n_times; i++) {
        const double t_i = i * p->frame_interval_s;
        while (now < t_i - h / 2) { /* classic RK4 on the analytic input */
            double k1[2], k2[2], k3[2], k4[2], tmp[2];
            double c0 = fm_pk_sim_plasma(p, now), c1 = fm_pk_sim_plasma(p, now + h / 2);
            double c2 = fm_pk_sim_plasma(p, now + h);
            derivative(p, th, c0, s, k1);
            for (int j = 0; j < 2; j++)
                tmp[j] = s[j] + h / 2 * k1[j];
            derivative(p, th, c1, tmp, k2);
            for (int j = 0; j < 2; j++)
                tmp[j] = s[j] + h / 2 * k2[j];
            derivative(p, th, c1, tmp, k3);
            for (int j = 0; j < 2; j++)
                tmp[j] = s[j] + h * k3[j];
            derivative(p, th, c2, tmp, k4);
            for (int j = 0; j < 2; j++)
                s[j] += h / 6 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
            now += h;
        }
        curve[i] = tissue_of(p, th, s, fm_pk_sim_plasma(p, t_i));
    }
}

/* SPGR steady state, M0 chosen so that the precontrast tissue signal is baseline_signal. */
static double spgr(const fm_pk_sim_params *p, double m0, double r1)
{
    double a = p->flip_deg * G_PI / 180.0, e = exp(-p->tr_ms * 1e-3 * r1);
    return m0 * sin(a) * (1.0 - e) / (1.0 - cos(a) * e);
}

static gboolean check(const fm_pk_sim_params *p, GError **error)
{
    const char *bad = NULL;
    if (p->nx < 16 || p->ny < 16 || p->nx > 4096 || p->ny > 4096)
        bad = "width and height (16..4096)";
    else if (p->nz < 1 || p->nz > 1024)
        bad = "slices (1..1024)";
    else if (p->n_times < 8 || p->n_times > 10000)
        bad = "frames (8..10000)";
    else if (!(p->frame_interval_s > 0.0 && p->frame_interval_s <= 60.0))
        bad = "frame_interval_s (0..60]";
    else if (!(p->arrival_s >= 0.0 && p->arrival_s < p->n_times * p->frame_interval_s))
        bad = "arrival_s (within the acquisition)";
    else if (!(p->hematocrit >= 0.0 && p->hematocrit < 1.0))
        bad = "hematocrit [0, 1)";
    else if (!(p->t10_tissue_s > 0 && p->t10_blood_s > 0 && p->tr_ms > 0 && p->r1_per_mm_s > 0 &&
               p->flip_deg > 0 && p->flip_deg < 180))
        bad = "T10s, TR, r1 (> 0) and flip angle (0..180)";
    if (bad)
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("simulate dce: %s out of range"), bad);
    return bad == NULL;
}

fm_dataset *fm_pk_simulate(const fm_pk_sim_params *p, GError **error)
{
    if (!check(p, error))
        return NULL;
    const int nt = p->n_times;
    /* Concentration and T10 of each kind of voxel: regions 0..3, background (4), artery (5). */
    enum { BACKGROUND = FM_PK_SIM_N_REGIONS, ARTERY, N_KINDS };
    g_autofree double *conc = g_new0(double, (gsize)N_KINDS *nt);
    for (int r = 0; r < FM_PK_SIM_N_REGIONS; r++)
        fm_pk_sim_tissue(p, r, conc + (gsize)r * nt);
    g_autofree double *times = g_new(double, nt);
    for (int i = 0; i < nt; i++) {
        times[i] = i * p->frame_interval_s;
        conc[(gsize)ARTERY * nt + i] = fm_pk_sim_plasma(p, times[i]) * (1.0 - p->hematocrit);
    }
    const double m0 = p->baseline_signal / spgr(p, 1.0, 1.0 / p->t10_tissue_s);
    const double sd = p->snr > 0.0 ? p->baseline_signal / p->snr : 0.0;

    const gsize sizes[4] = {(gsize)p->nx, (gsize)p->ny, (gsize)p->nz, (gsize)nt};
    static const char *const names[4] = {"x", "y", "z", "t"};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_F32, 4, sizes, names);
    float *data = ds->data;
    const gsize volume = (gsize)p->nx * p->ny * p->nz;
    g_autoptr(GRand) rng = g_rand_new_with_seed((guint32)(p->seed ^ (p->seed >> 32)));
    for (int t = 0; t < nt; t++)
        for (int z = 0; z < p->nz; z++)
            for (int y = 0; y < p->ny; y++)
                for (int x = 0; x < p->nx; x++) {
                    int r = fm_pk_sim_region_at(p, x, y);
                    int kind = r == -2 ? ARTERY : r < 0 ? BACKGROUND : r;
                    double t10 = kind == ARTERY ? p->t10_blood_s : p->t10_tissue_s;
                    double s = spgr(p, m0, 1.0 / t10 + p->r1_per_mm_s * conc[(gsize)kind * nt + t]);
                    if (sd > 0.0) { /* Box-Muller, one draw per value: the seed fixes the series */
                        double u1 = g_rand_double_range(rng, 1e-300, 1.0), u2 = g_rand_double(rng);
                        s += sd * sqrt(-2.0 * log(u1)) * cos(2.0 * G_PI * u2);
                    }
                    data[(gsize)t * volume + ((gsize)z * p->ny + y) * p->nx + x] = (float)s;
                }
    g_free(ds->dims[3].unit);
    ds->dims[3].unit = g_strdup("s");
    fm_dataset_set_frame_times(ds, times, nt);
    fm_dataset_set_meta(ds, "simulator", "fluxmap pk_sim");
    return ds;
}

GPtrArray *fm_pk_sim_rois(const fm_pk_sim_params *p)
{
    GPtrArray *rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    box a = artery_box(p);
    fm_roi *artery = fm_roi_new_rectangle("artery", a.x0, a.y0, a.x1, a.y1);
    artery->role = g_strdup("artery");
    g_ptr_array_add(rois, artery);
    for (int r = 0; r < FM_PK_SIM_N_REGIONS; r++) {
        box b = region_box(p, r);
        g_autofree char *name = g_strdup_printf("region %d", r + 1);
        fm_roi *roi = fm_roi_new_rectangle(name, b.x0, b.y0, b.x1, b.y1);
        roi->role = g_strdup("tissue");
        g_ptr_array_add(rois, roi);
    }
    return rois;
}
