/* TCSPC FLIM simulator: exact Poisson counts per bin from the known decay law and IRF. */
#include "app/core/flim/flim_sim.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"

/* Pixels are independent (one random stream each), so tiles of them are drawn in parallel. */
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
 * counts do not depend on the thread that draws them. */
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

/* Where the photons go: the delay T of a detected photon is exponential (tauD with probability
 * p_slow, the photon share of the slow component, else tauF) plus the Gaussian IRF jitter, and
 * photons outside the TAC window [0, bins x bin width) are lost as on a real instrument. The
 * photon count is Poisson, so splitting it over the bins makes every bin's count an independent
 * Poisson variable of mean photons x P(T in the bin) (plus the background's): drawing those
 * directly gives exactly the law of the photon-by-photon simulation, in one draw per bin instead
 * of one per photon. */

/* Mills ratio Q(z) / phi(z) for z >= 5 by its continued fraction (Abramowitz and Stegun
 * 26.2.14), where erfc(z / sqrt 2) would underflow. */
static double mills_ratio(double z)
{
    double f = z;
    for (int k = 60; k >= 1; k--)
        f = z + k / f;
    return 1.0 / f;
}

/* P(T < t) for T = exponential(tau) + N(offset, sigma^2), the exponentially modified Gaussian:
 * Phi(u) - exp(r^2 / 2 - r u) Phi(u - r) with u = (t - offset) / sigma, r = sigma / tau. Where
 * Phi(u - r) is tiny the exponential can overflow; there the second term equals
 * phi(u) R(r - u), R the Mills ratio (the two exponents cancel exactly). */
static double exgauss_cdf(double t, double tau, double offset, double sigma)
{
    double u = (t - offset) / sigma, r = sigma / tau, v = u - r;
    double tail;
    if (v > -5.0) /* then the exponent r^2 / 2 - r u = -r v - r^2 / 2 < 12.5 */
        tail = exp(0.5 * r * r - r * u) * 0.5 * erfc(-v / G_SQRT2);
    else
        tail = exp(-0.5 * u * u) / sqrt(2.0 * G_PI) * mills_ratio(-v);
    return 0.5 * erfc(-u / G_SQRT2) - tail;
}

/* P(T in bin b) of one lifetime, for every bin. */
static void bin_shares(const fm_flim_sim_params *p, double tau, double weight, double *share)
{
    const double bw = p->bin_width_ps * 1e-3;
    if (!(p->irf_sigma_ns > 0.0)) {
        const double first = -expm1(-bw / tau); /* P(T < bw) */
        for (int b = 0; b < p->n_bins; b++)
            share[b] += weight * exp(-b * bw / tau) * first;
        return;
    }
    double below = exgauss_cdf(0.0, tau, p->irf_offset_ns, p->irf_sigma_ns);
    for (int b = 0; b < p->n_bins; b++) {
        double upto = exgauss_cdf((b + 1) * bw, tau, p->irf_offset_ns, p->irf_sigma_ns);
        share[b] += weight * MAX(upto - below, 0.0);
        below = upto;
    }
}

/* The Poisson law of one bin of one column, with what its sampler precomputes. */
typedef struct {
    double mean;
    double exp_neg_mean;                       /* inversion, mean < 10 */
    double a, b, log_inv_alpha, v_r, log_mean; /* PTRS, mean >= 10 */
} bin_law;

static void column_laws(const fm_flim_sim_params *p, int x, double *share, bin_law *laws)
{
    fm_flim_sim_truth truth = fm_flim_sim_truth_at(p, x);
    double p_slow = 1.0;
    if (p->pattern == FM_FLIM_SIM_BIEXP) {
        double slow = truth.fraction_d * truth.tau_slow_ns;
        double fast = (1.0 - truth.fraction_d) * truth.tau_fast_ns;
        p_slow = slow / (slow + fast);
    }
    memset(share, 0, sizeof *share * p->n_bins);
    bin_shares(p, truth.tau_slow_ns, p_slow, share);
    if (p_slow < 1.0)
        bin_shares(p, truth.tau_fast_ns, 1.0 - p_slow, share);
    for (int bin = 0; bin < p->n_bins; bin++) {
        bin_law *law = &laws[bin];
        memset(law, 0, sizeof *law);
        law->mean = p->photons * share[bin] + p->background;
        if (law->mean < 10.0) {
            law->exp_neg_mean = exp(-law->mean);
        } else { /* Hoermann's constants, as numpy's random_poisson_ptrs */
            law->b = 0.931 + 2.53 * sqrt(law->mean);
            law->a = -0.059 + 0.02483 * law->b;
            law->log_inv_alpha = log(1.1239 + 1.1328 / (law->b - 3.4));
            law->v_r = 0.9277 - 3.6224 / (law->b - 2.0);
            law->log_mean = log(law->mean);
        }
    }
}

/* ln k! by Stirling's series with the argument raised to >= 7 first (numpy's random_loggam). */
static double log_factorial(double k)
{
    static const double a[10] = {8.333333333333333e-02, -2.777777777777778e-03,
                                 7.936507936507937e-04, -5.952380952380952e-04,
                                 8.417508417508418e-04, -1.917526917526918e-03,
                                 6.410256410256410e-03, -2.955065359477124e-02,
                                 1.796443723688307e-01, -1.39243221690590e+00};
    double x = k + 1.0;
    if (x <= 2.0)
        return 0.0;
    int raise = x < 7.0 ? (int)(7.0 - x) : 0;
    double x0 = x + raise, x2 = 1.0 / (x0 * x0), series = a[9];
    for (int i = 8; i >= 0; i--)
        series = series * x2 + a[i];
    double value = series / x0 + 0.5 * log(2.0 * G_PI) + (x0 - 0.5) * log(x0) - x0;
    for (int i = 0; i < raise; i++) {
        x0 -= 1.0;
        value -= log(x0);
    }
    return value;
}

/* 1 / k for the inversion's steps: a division per step would be most of its time. */
enum { N_RECIPROCALS = 64 };

/* An exact Poisson draw: inversion (one uniform, about mean + 1 steps) below 10, Hoermann's
 * transformed rejection PTRS (Insurance Math. Econom. 12 (1993) 39; about 1.1 pairs of
 * uniforms, rarely a log) from 10 up. */
static guint32 poisson_draw(rng *r, const bin_law *law, const double *reciprocal)
{
    if (law->mean < 10.0) {
        double u = rng_unit(r), term = law->exp_neg_mean, cdf = term;
        guint32 k = 0;
        while (u > cdf && term > 0.0) { /* term underflows if rounding keeps cdf below u */
            k++;
            term *= law->mean * (k < N_RECIPROCALS ? reciprocal[k] : 1.0 / k);
            cdf += term;
        }
        return k;
    }
    for (;;) {
        double u = rng_unit(r) - 0.5, v = rng_unit(r), us = 0.5 - fabs(u);
        double k = floor((2.0 * law->a / us + law->b) * u + law->mean + 0.43);
        if (us >= 0.07 && v <= law->v_r)
            return (guint32)k;
        if (k < 0.0 || (us < 0.013 && v > us))
            continue;
        if (log(v) + law->log_inv_alpha - log(law->a / (us * us) + law->b) <=
            -law->mean + k * law->log_mean - log_factorial(k))
            return (guint32)MIN(k, 4294967295.0);
    }
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

    /* Tiles of 32 columns by 256 rows: a tile's bin laws (a few hundred KiB) are computed once
     * and stay in cache, and its pixels write 64-byte runs of every bin's page. */
    enum { TILE_COLUMNS = 32, TILE_ROWS = 256 };
    double reciprocal[N_RECIPROCALS];
    for (int k = 1; k < N_RECIPROCALS; k++)
        reciprocal[k] = 1.0 / k;
    const int tiles_x = (w + TILE_COLUMNS - 1) / TILE_COLUMNS;
    const int tiles_y = (p->height + TILE_ROWS - 1) / TILE_ROWS;
    FM_SIM_OMP("omp parallel for schedule(dynamic, 1)")
    for (int tile = 0; tile < tiles_x * tiles_y; tile++) {
        const int x0 = tile % tiles_x * TILE_COLUMNS, x1 = MIN(w, x0 + TILE_COLUMNS);
        const int y0 = tile / tiles_x * TILE_ROWS, y1 = MIN(p->height, y0 + TILE_ROWS);
        g_autofree bin_law *laws = g_new(bin_law, (gsize)(x1 - x0) * bins);
        g_autofree double *share = g_new(double, bins);
        for (int x = x0; x < x1; x++)
            column_laws(p, x, share, laws + (gsize)(x - x0) * bins);
        for (int y = y0; y < y1; y++)
            for (int x = x0; x < x1; x++) {
                const gsize i = (gsize)y * w + x;
                rng r = {
                    mix64(p->seed ^ mix64(i * G_GUINT64_CONSTANT(0xd1b54a32d192ed03) + 0x464c))};
                const bin_law *law = laws + (gsize)(x - x0) * bins;
                /* x, y, t with x fastest: bin b of all pixels is one page */
                for (int b = 0; b < bins; b++)
                    out[(gsize)b * n_px + i] =
                        (guint16)MIN(poisson_draw(&r, &law[b], reciprocal), 65535u);
            }
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
