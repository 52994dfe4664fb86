/* DCE liver phantom: Parker AIF, delayed and dispersed portal input, tissue from the kernels'
 * dual-input model, lesions, Gaussian noise at a chosen CNR. */
#include "app/core/dce/dce_sim.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/frame_times.h"
#include "app/core/roi.h"

#ifdef _OPENMP
#define FM_SIM_OMP(directive) _Pragma(directive)
#else
#define FM_SIM_OMP(directive)
#endif

void fm_dce_sim_defaults(fm_dce_sim_params *p)
{
    static const double liver[FM_DCE_N_PARAMS] = {20, 100, 400, 1, 2};
    memset(p, 0, sizeof *p);
    p->nx = 64;
    p->ny = 64;
    p->nz = 4;
    p->n_times = 48;
    p->frame_interval_s = 2.37;
    p->arrival_s = 8.0;
    p->portal_delay_s = 4.0;
    p->portal_dispersion_s = 8.0;
    memcpy(p->liver, liver, sizeof liver);
    p->baseline_signal = 100.0;
    p->cnr = 0.0;
    p->lesions = TRUE;
    p->seed = 1;
}

/* Lesion truths: an arterialised lesion (high ka, little portal supply, fast washout) and a
 * poorly perfused one; values within the ranges Materne et al. and Wang & Cao report. */
static const double lesion_hyper[FM_DCE_N_PARAMS] = {60, 20, 300, 0.5, 2.5};
static const double lesion_hypo[FM_DCE_N_PARAMS] = {5, 40, 250, 1.5, 3};

void fm_dce_sim_truth(const fm_dce_sim_params *p, fm_dce_sim_label label,
                      double theta[FM_DCE_N_PARAMS])
{
    for (int i = 0; i < FM_DCE_N_PARAMS; i++)
        theta[i] = label == FM_DCE_SIM_LIVER          ? p->liver[i]
                   : label == FM_DCE_SIM_LESION_HYPER ? lesion_hyper[i]
                   : label == FM_DCE_SIM_LESION_HYPO  ? lesion_hypo[i]
                                                      : NAN;
}

/* Region bounding boxes as fractions of the image; ellipses inscribed in them. */
typedef struct {
    double x0, y0, x1, y1;
} box;

static box scaled(const fm_dce_sim_params *p, double cx, double cy, double rx, double ry)
{
    box b = {(cx - rx) * p->nx, (cy - ry) * p->ny, (cx + rx) * p->nx, (cy + ry) * p->ny};
    return b;
}

static box body_box(const fm_dce_sim_params *p)
{
    return scaled(p, 0.5, 0.5, 0.46, 0.40);
}
static box liver_box(const fm_dce_sim_params *p)
{
    return scaled(p, 0.36, 0.49, 0.24, 0.25);
}

/* Vessels keep at least 2 px of radius so their VOIs hold enough voxels on small images. */
static box vessel_box(const fm_dce_sim_params *p, double cx, double cy, double r)
{
    double rx = MAX(r * p->nx, 2.0), ry = MAX(r * p->nx, 2.0);
    box b = {cx * p->nx - rx, cy * p->ny - ry, cx * p->nx + rx, cy * p->ny + ry};
    return b;
}

static box aorta_box(const fm_dce_sim_params *p)
{
    return vessel_box(p, 0.72, 0.45, 0.05);
}
static box portal_box(const fm_dce_sim_params *p)
{
    return vessel_box(p, 0.69, 0.70, 0.04);
}
static box hyper_box(const fm_dce_sim_params *p)
{
    return scaled(p, 0.28, 0.40, 0.06, 0.06);
}
static box hypo_box(const fm_dce_sim_params *p)
{
    return scaled(p, 0.42, 0.60, 0.06, 0.06);
}

/* Pixel (i, j) is inside when its centre is: the same test as fm_roi_rasterise's ellipse, so the
 * ROIs of fm_dce_sim_rois select exactly these voxels. */
static gboolean in_ellipse(box b, int i, int j)
{
    double cx = 0.5 * (b.x0 + b.x1), cy = 0.5 * (b.y0 + b.y1);
    double a = 0.5 * (b.x1 - b.x0), c = 0.5 * (b.y1 - b.y0);
    if (a <= 0.0 || c <= 0.0)
        return FALSE;
    double dx = (i + 0.5 - cx) / a, dy = (j + 0.5 - cy) / c;
    return dx * dx + dy * dy <= 1.0;
}

fm_dce_sim_label fm_dce_sim_label_at(const fm_dce_sim_params *p, int x, int y, int z)
{
    if (in_ellipse(aorta_box(p), x, y))
        return FM_DCE_SIM_AORTA;
    if (in_ellipse(portal_box(p), x, y))
        return FM_DCE_SIM_PORTAL_VEIN;
    if (in_ellipse(liver_box(p), x, y)) {
        /* lesions on the middle half of the slices (all of them for one or two slices) */
        gboolean middle = p->nz <= 2 || (z >= p->nz / 4 && z < p->nz - p->nz / 4);
        if (p->lesions && middle && in_ellipse(hyper_box(p), x, y))
            return FM_DCE_SIM_LESION_HYPER;
        if (p->lesions && middle && in_ellipse(hypo_box(p), x, y))
            return FM_DCE_SIM_LESION_HYPO;
        return FM_DCE_SIM_LIVER;
    }
    return in_ellipse(body_box(p), x, y) ? FM_DCE_SIM_BODY : FM_DCE_SIM_AIR;
}

/* Parker et al. 2006, eq. 1 with its Table 1 population values; t in minutes, C in mM. */
static double parker_aif(double t_min)
{
    static const double A[2] = {0.809, 0.330}, T[2] = {0.17046, 0.365}, S[2] = {0.0563, 0.132};
    const double alpha = 1.050, beta = 0.1685, s = 38.078, tau = 0.483;
    double c = 0.0;
    for (int n = 0; n < 2; n++) {
        double d = (t_min - T[n]) / S[n];
        /* past e^-746 exp() is 0, but reached through libm's slow underflow path */
        if (0.5 * d * d < 746.0)
            c += A[n] / (S[n] * sqrt(2.0 * G_PI)) * exp(-0.5 * d * d);
    }
    return c + alpha * exp(-beta * t_min) / (1.0 + exp(-s * (t_min - tau)));
}

/* Parker's curve starts at t = 0 with its own ~10 s transit before the first pass; arrival_s
 * shifts it so the first frames are a flat pre-contrast baseline. */
static double arterial(const fm_dce_sim_params *p, double t_s)
{
    double t = t_s - p->arrival_s;
    return t <= 0.0 ? 0.0 : parker_aif(t / 60.0);
}

/* Ca(t - delay) convolved with exp(-s / d) / d: trapezoid on a 0.02 s grid over 12 d, which
 * holds all but e^-12 of the kernel's area. decay[k] = exp(-k h / d), the same for every t. */
static double portal(const fm_dce_sim_params *p, double t_s, const double *decay, int n)
{
    const double d = p->portal_dispersion_s, h = 0.02;
    if (d <= 0.0)
        return arterial(p, t_s - p->portal_delay_s);
    double sum = 0.0;
    for (int k = 0; k <= n; k++) {
        double s = k * h, w = (k == 0 || k == n) ? 0.5 : 1.0;
        sum += w * arterial(p, t_s - p->portal_delay_s - s) * decay[k] / d;
    }
    return sum * h;
}

void fm_dce_sim_inputs(const fm_dce_sim_params *p, double *times_s, double *ca, double *cp)
{
    const double d = p->portal_dispersion_s, h = 0.02;
    const int n = d > 0.0 ? (int)ceil(12.0 * d / h) : 0;
    g_autofree double *decay = g_new(double, n + 1);
    for (int k = 0; d > 0.0 && k <= n; k++)
        decay[k] = exp(-(k * h) / d);
    /* the portal convolution is thousands of AIF values per frame: frames in parallel */
    FM_SIM_OMP("omp parallel for schedule(static)")
    for (int i = 0; i < p->n_times; i++) {
        times_s[i] = i * p->frame_interval_s;
        ca[i] = arterial(p, times_s[i]);
        cp[i] = portal(p, times_s[i], decay, n);
    }
}

/* fm_dce_sim_tissue for inputs already computed (the phantom needs them for four curves). */
static gboolean tissue_from_inputs(const fm_dce_sim_params *p, const double *times_s,
                                   const double *ca, const double *cp,
                                   const double theta[FM_DCE_N_PARAMS], double *curve,
                                   GError **error)
{
    fm_dce_params kp;
    fm_dce_params_defaults(&kp);
    kp.n_times = p->n_times;
    kp.times_s = times_s;
    kp.ca = ca;
    kp.cp = cp;
    char msg[FM_MSG_LEN] = "";
    if (fm_dce_model(&kp, theta, curve, msg, sizeof msg) != FM_OK) {
        g_set_error(error, FM_ERROR, FM_ERROR_COMPUTE, _("DCE phantom: %s"), msg);
        return FALSE;
    }
    return TRUE;
}

gboolean fm_dce_sim_tissue(const fm_dce_sim_params *p, const double theta[FM_DCE_N_PARAMS],
                           double *curve, GError **error)
{
    g_autofree double *t = g_new(double, p->n_times), *ca = g_new(double, p->n_times);
    g_autofree double *cp = g_new(double, p->n_times);
    fm_dce_sim_inputs(p, t, ca, cp);
    return tissue_from_inputs(p, t, ca, cp, theta, curve, error);
}

/* Noise sd from the liver's noise-free curve. */
static double noise_sd_of(const fm_dce_sim_params *p, const double *liver_curve)
{
    if (!(p->cnr > 0.0))
        return 0.0;
    double peak = 0.0;
    for (int i = 0; i < p->n_times; i++)
        peak = MAX(peak, liver_curve[i]);
    return p->baseline_signal * peak / p->cnr;
}

double fm_dce_sim_noise_sd(const fm_dce_sim_params *p)
{
    if (!(p->cnr > 0.0))
        return 0.0;
    g_autofree double *c = g_new(double, p->n_times);
    if (!fm_dce_sim_tissue(p, p->liver, c, NULL))
        return 0.0;
    return noise_sd_of(p, c);
}

static gboolean check(const fm_dce_sim_params *p, GError **error)
{
    const char *bad = NULL;
    if (p->nx < 8 || p->ny < 8 || p->nx > 4096 || p->ny > 4096)
        bad = _("width and height must lie in 8..4096");
    else if (p->nz < 1 || p->nz > 1024)
        bad = _("slices must lie in 1..1024");
    else if (p->n_times < 8 || p->n_times > 2048)
        bad = _("frames must lie in 8..2048");
    else if (!(p->frame_interval_s > 0.0) || !isfinite(p->frame_interval_s))
        bad = _("frame interval must be > 0 s");
    else if (!(p->arrival_s >= 0.0) || !(p->portal_delay_s >= 0.0) ||
             !(p->portal_dispersion_s >= 0.0))
        bad = _("arrival, portal delay and dispersion must be >= 0 s");
    else if (!(p->baseline_signal > 0.0))
        bad = _("baseline signal must be > 0");
    for (int i = 0; !bad && i < FM_DCE_N_PARAMS; i++)
        if (!(p->liver[i] >= 0.0) || !isfinite(p->liver[i]))
            bad = _("liver truth values must be finite and >= 0");
    if (bad) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("DCE phantom: %s"), bad);
        return FALSE;
    }
    return TRUE;
}

/* Standard normal deviates 2 pair and 2 pair + 1 of the phantom: both halves of Box-Muller
 * on a counter-based 64-bit draw (splitmix64's finaliser over seed and pair), so every voxel and
 * frame has its own stream and the phantom is the same for a seed whatever the thread count. */
static inline guint64 mix64(guint64 z)
{
    z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static void gaussian_pair(guint64 seed, guint64 pair, double normal[2])
{
    guint64 r = mix64(seed ^ mix64(pair * G_GUINT64_CONSTANT(0x9e3779b97f4a7c15) + 0x444345));
    double u1 = ((double)(r >> 32) + 0.5) * (1.0 / 4294967296.0); /* never 0: log is finite */
    double u2 = ((double)(guint32)r + 0.5) * (1.0 / 4294967296.0);
    double radius = sqrt(-2.0 * log(u1));
    normal[0] = radius * cos(2.0 * G_PI * u2);
    normal[1] = radius * sin(2.0 * G_PI * u2);
}

fm_dataset *fm_dce_simulate(const fm_dce_sim_params *p, GError **error)
{
    if (!check(p, error))
        return NULL;
    const int nt = p->n_times;
    g_autofree double *times = g_new(double, nt), *ca = g_new(double, nt);
    g_autofree double *cp = g_new(double, nt);
    fm_dce_sim_inputs(p, times, ca, cp);
    /* One curve per label that enhances. */
    double *curves[FM_DCE_SIM_N_LABELS] = {0};
    g_autofree double *store = g_new0(double, (gsize)FM_DCE_SIM_N_LABELS *nt);
    for (int l = 0; l < FM_DCE_SIM_N_LABELS; l++)
        curves[l] = store + (gsize)l * nt;
    memcpy(curves[FM_DCE_SIM_AORTA], ca, sizeof(double) * nt);
    memcpy(curves[FM_DCE_SIM_PORTAL_VEIN], cp, sizeof(double) * nt);
    static const fm_dce_sim_label tissues[] = {FM_DCE_SIM_LIVER, FM_DCE_SIM_LESION_HYPER,
                                               FM_DCE_SIM_LESION_HYPO};
    for (gsize k = 0; k < G_N_ELEMENTS(tissues); k++) {
        double theta[FM_DCE_N_PARAMS];
        fm_dce_sim_truth(p, tissues[k], theta);
        if (!tissue_from_inputs(p, times, ca, cp, theta, curves[tissues[k]], error))
            return NULL;
    }
    const double sd = noise_sd_of(p, curves[FM_DCE_SIM_LIVER]);

    const gsize sizes[4] = {(gsize)p->nx, (gsize)p->ny, (gsize)p->nz, (gsize)nt};
    static const char *const names[4] = {"x", "y", "z", "t"};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_F32, 4, sizes, names);
    float *data = ds->data;
    const gsize volume = (gsize)p->nx * p->ny * p->nz;
    g_autofree guint8 *labels = g_new(guint8, volume);
    /* Voxels are independent: labels per slice row, signal per frame and slice, in parallel. */
    FM_SIM_OMP("omp parallel for collapse(2) schedule(static)")
    for (int z = 0; z < p->nz; z++)
        for (int y = 0; y < p->ny; y++)
            for (int x = 0; x < p->nx; x++)
                labels[((gsize)z * p->ny + y) * p->nx + x] = fm_dce_sim_label_at(p, x, y, z);
    const gsize slice = (gsize)p->nx * p->ny;
    FM_SIM_OMP("omp parallel for collapse(2) schedule(static)")
    for (int t = 0; t < nt; t++)
        for (int z = 0; z < p->nz; z++) {
            double normal[2];
            guint64 pair = G_MAXUINT64; /* the pair in normal[] */
            for (gsize v = z * slice; v < (z + 1) * slice; v++) {
                const gsize i = (gsize)t * volume + v;
                int l = labels[v];
                double s = l == FM_DCE_SIM_AIR ? 0.0 : p->baseline_signal * (1.0 + curves[l][t]);
                if (sd > 0.0) {
                    if (i / 2 != pair)
                        gaussian_pair(p->seed, pair = i / 2, normal);
                    s += sd * normal[i % 2];
                }
                data[i] = (float)s;
            }
        }
    g_free(ds->dims[3].unit);
    ds->dims[3].unit = g_strdup("s");
    fm_dataset_set_frame_times(ds, times, nt);
    fm_dataset_set_meta(ds, "simulator", "fluxmap dce_sim");
    return ds;
}

static fm_roi *ellipse_roi(const char *name, const char *role, box b)
{
    fm_roi *roi = fm_roi_new_ellipse(name, b.x0, b.y0, b.x1, b.y1);
    roi->role = g_strdup(role);
    return roi;
}

GPtrArray *fm_dce_sim_rois(const fm_dce_sim_params *p)
{
    GPtrArray *rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    g_ptr_array_add(rois, ellipse_roi("aorta", "aorta", aorta_box(p)));
    g_ptr_array_add(rois, ellipse_roi("portal vein", "portal_vein", portal_box(p)));
    g_ptr_array_add(rois, ellipse_roi("liver", "liver", liver_box(p)));
    return rois;
}
