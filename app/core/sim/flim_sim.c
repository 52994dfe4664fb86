/* TCSPC FLIM simulator: photon by photon, so the counts are exactly Poisson with known truth. */
#include "app/core/sim/flim_sim.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"

/* Pixels are independent (one random stream each), so rows are drawn in parallel. */
#ifdef _OPENMP
#define FM_SIM_OMP(directive) _Pragma(directive)
#else
#define FM_SIM_OMP(directive)
#endif

const double fm_flim_sim_bar_tau_ns[FM_FLIM_SIM_N_BARS] = {2.0, 2.5, 3.0, 4.0};

void fm_flim_sim_defaults(fm_flim_sim_params *p)
{
    /* Wu et al. 2016, section 3: 512 x 512 bars of 2, 2.5, 3 and 4 ns, 256 bins of 100 ps,
     * fewer than 2000 photons per pixel. */
    *p = (fm_flim_sim_params){
        .pattern = FM_FLIM_SIM_BARS,
        .width = 512,
        .height = 512,
        .n_bins = 256,
        .bin_width_ps = 100.0,
        .photons = 1500.0,
        .irf_sigma_ns = 0.0,
        .irf_offset_ns = 1.0,
        .background = 0.0,
        .tau_d_ns = 2.5,
        .tau_f_ns = 0.8,
        .fraction_left = 0.8,
        .fraction_right = 0.2,
        .seed = 1,
    };
}

const char *fm_flim_sim_pattern_name(fm_flim_sim_pattern pattern)
{
    return pattern == FM_FLIM_SIM_BIEXP ? "biexp" : "bars";
}

gboolean fm_flim_sim_pattern_parse(const char *text, fm_flim_sim_pattern *out)
{
    if (g_strcmp0(text, "bars") == 0)
        *out = FM_FLIM_SIM_BARS;
    else if (g_strcmp0(text, "biexp") == 0)
        *out = FM_FLIM_SIM_BIEXP;
    else
        return FALSE;
    return TRUE;
}

int fm_flim_sim_bar_of(const fm_flim_sim_params *p, int x)
{
    return CLAMP(x * FM_FLIM_SIM_N_BARS / MAX(p->width, 1), 0, FM_FLIM_SIM_N_BARS - 1);
}

fm_flim_sim_truth fm_flim_sim_truth_at(const fm_flim_sim_params *p, int x)
{
    fm_flim_sim_truth t;
    if (p->pattern == FM_FLIM_SIM_BARS) {
        t.tau_ns = t.tau_slow_ns = fm_flim_sim_bar_tau_ns[fm_flim_sim_bar_of(p, x)];
        t.tau_fast_ns = NAN;
        t.fraction_d = 1.0;
        return t;
    }
    double u = p->width > 1 ? (double)x / (p->width - 1) : 0.0;
    t.fraction_d = p->fraction_left + (p->fraction_right - p->fraction_left) * u;
    t.tau_fast_ns = p->tau_f_ns;
    t.tau_slow_ns = p->tau_d_ns;
    t.tau_ns = t.fraction_d * p->tau_d_ns + (1.0 - t.fraction_d) * p->tau_f_ns;
    return t;
}

float *fm_flim_sim_irf(const fm_flim_sim_params *p)
{
    if (!(p->irf_sigma_ns > 0.0))
        return NULL;
    const double bw = p->bin_width_ps * 1e-3, s = p->irf_sigma_ns * G_SQRT2;
    float *irf = g_new(float, p->n_bins);
    double sum = 0.0;
    for (int b = 0; b < p->n_bins; b++) {
        /* the Gaussian's probability mass in [b bw, (b+1) bw): what a photon histogram holds */
        double v = 0.5 * (erf(((b + 1) * bw - p->irf_offset_ns) / s) -
                          erf((b * bw - p->irf_offset_ns) / s));
        irf[b] = (float)v;
        sum += v;
    }
    for (int b = 0; b < p->n_bins; b++)
        irf[b] = (float)(irf[b] / sum);
    return irf;
}

/* splitmix64: one independent stream per pixel, seeded from (seed, pixel), so a pixel's
 * photons do not depend on the thread that draws them. */
typedef struct {
    guint64 state;
} rng;

static inline guint64 mix64(guint64 z)
{
    z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static inline guint64 rng_next(rng *r)
{
    r->state += G_GUINT64_CONSTANT(0x9e3779b97f4a7c15);
    return mix64(r->state);
}

/* Uniform in (0, 1) with 53 random bits, never 0 so that log() is finite. */
static inline double rng_unit(rng *r)
{
    return ((double)(rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Exact Poisson sample: Knuth's product of uniforms, on pieces of mean <= 16 added up
 * (a sum of independent Poisson variables is Poisson), so exp(-mean) never underflows and no
 * normal approximation distorts the small per-bin counts. Cost is O(mean). */
static guint64 poisson(rng *r, double mean)
{
    guint64 total = 0;
    while (mean > 0.0) {
        double piece = MIN(mean, 16.0);
        mean -= piece;
        double limit = exp(-piece), prod = rng_unit(r);
        while (prod > limit) {
            total++;
            prod *= rng_unit(r);
        }
    }
    return total;
}

static gboolean check_params(const fm_flim_sim_params *p, GError **error)
{
    const char *bad = NULL;
    if (p->width < 1 || p->width > 8192 || p->height < 1 || p->height > 8192)
        bad = _("width and height must be 1..8192 pixels");
    else if (p->n_bins < 8 || p->n_bins > 4096)
        bad = _("bins must be 8..4096");
    else if (!(p->bin_width_ps > 0.0 && p->bin_width_ps <= 1e6))
        bad = _("bin_width_ps must be > 0");
    else if (!(p->photons >= 0.0 && p->photons <= 1e6))
        bad = _("photons must be 0..1e6 per pixel");
    else if (!(p->irf_sigma_ns >= 0.0) || !(p->irf_offset_ns >= 0.0))
        bad = _("irf_sigma_ns and irf_offset_ns must be >= 0");
    else if (!(p->background >= 0.0 && p->background <= 1e4))
        bad = _("background must be 0..1e4 counts per bin");
    else if (!(p->tau_d_ns > 0.0) || !(p->tau_f_ns > 0.0))
        bad = _("tau_d_ns and tau_f_ns must be > 0");
    else if (!(p->fraction_left >= 0.0 && p->fraction_left <= 1.0 && p->fraction_right >= 0.0 &&
               p->fraction_right <= 1.0))
        bad = _("the fD range must lie in 0..1");
    if (bad) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("FLIM simulator: %s"), bad);
        return FALSE;
    }
    return TRUE;
}

/* One pixel's histogram: N ~ Poisson(photons) emission events, each with an exponential delay
 * (of tauD with probability fD tauD / (fD tauD + (1 - fD) tauF), the photon share of the slow
 * component, else tauF) plus the Gaussian IRF jitter; photons outside the TAC window are lost
 * as on a real instrument. Background adds Poisson counts uniform in time. */
static void simulate_pixel(const fm_flim_sim_params *p, int x, guint64 pixel, guint32 *hist)
{
    rng r = {mix64(p->seed ^ mix64(pixel * G_GUINT64_CONSTANT(0xd1b54a32d192ed03) + 0x464c))};
    const double bw = p->bin_width_ps * 1e-3;
    fm_flim_sim_truth truth = fm_flim_sim_truth_at(p, x);
    double p_slow = 1.0;
    if (p->pattern == FM_FLIM_SIM_BIEXP) {
        double slow = truth.fraction_d * truth.tau_slow_ns;
        double fast = (1.0 - truth.fraction_d) * truth.tau_fast_ns;
        p_slow = slow / (slow + fast);
    }
    memset(hist, 0, sizeof *hist * p->n_bins);
    guint64 n = poisson(&r, p->photons);
    for (guint64 k = 0; k < n; k++) {
        double tau =
            (p_slow >= 1.0 || rng_unit(&r) < p_slow) ? truth.tau_slow_ns : truth.tau_fast_ns;
        double t = -tau * log(rng_unit(&r));
        if (p->irf_sigma_ns > 0.0) {
            /* Box-Muller: one normal deviate per photon is enough */
            double g = sqrt(-2.0 * log(rng_unit(&r))) * cos(2.0 * G_PI * rng_unit(&r));
            t += p->irf_offset_ns + p->irf_sigma_ns * g;
        }
        if (t < 0.0)
            continue;
        double b = floor(t / bw);
        if (b < p->n_bins)
            hist[(int)b]++;
    }
    if (p->background > 0.0)
        for (int b = 0; b < p->n_bins; b++)
            hist[b] += (guint32)poisson(&r, p->background);
}

fm_dataset *fm_flim_simulate(const fm_flim_sim_params *p, GError **error)
{
    if (!check_params(p, error))
        return NULL;
    gsize sizes[3] = {(gsize)p->width, (gsize)p->height, (gsize)p->n_bins};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    ds->bits_per_sample = 16;
    ds->dims[2].spacing = p->bin_width_ps * 1e-3;
    g_free(ds->dims[2].unit);
    ds->dims[2].unit = g_strdup("ns");
    guint16 *out = ds->data;
    const gsize n_px = (gsize)p->width * p->height;
    const int w = p->width, bins = p->n_bins;

    FM_SIM_OMP("omp parallel")
    {
        guint32 *hist = g_new(guint32, bins);
        FM_SIM_OMP("omp for schedule(dynamic, 4)")
        for (int y = 0; y < p->height; y++)
            for (int x = 0; x < w; x++) {
                gsize i = (gsize)y * w + x;
                simulate_pixel(p, x, i, hist);
                /* x, y, t with x fastest: bin b of all pixels is one page */
                for (int b = 0; b < bins; b++)
                    out[(gsize)b * n_px + i] = (guint16)MIN(hist[b], 65535u);
            }
        g_free(hist);
    }

    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    fm_dataset_set_meta(ds, "simulator", "fluxmap flim_sim");
    fm_dataset_set_meta(ds, "pattern", fm_flim_sim_pattern_name(p->pattern));
    fm_dataset_set_meta(ds, "bin_width_ps", g_ascii_dtostr(buf, sizeof buf, p->bin_width_ps));
    fm_dataset_set_meta(ds, "tac_range_ns",
                        g_ascii_dtostr(buf, sizeof buf, p->n_bins * p->bin_width_ps * 1e-3));
    fm_dataset_set_meta(ds, "photons", g_ascii_dtostr(buf, sizeof buf, p->photons));
    g_autofree char *seed = g_strdup_printf("%" G_GUINT64_FORMAT, p->seed);
    fm_dataset_set_meta(ds, "seed", seed);
    return ds;
}
