/* Speckle stack simulator: fully developed dynamic speckle with known correlation times. */
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/sim/lsi_sim.h"

/* Single-threaded on purpose: a sub-step is too little work (one 256x192 field) for a parallel
 * region, and thousands of OpenMP barriers per stack crawl when the machine is busy (parallel
 * test runs). The inner loops are vectorised instead where OpenMP's simd pragma is available. */
#ifdef _OPENMP
#define FM_SIM_SIMD _Pragma("omp simd")
#else
#define FM_SIM_SIMD
#endif

/* Counter-based random numbers (a splitmix64 finaliser over seed, stream and index): every
 * value depends only on its coordinates, so the stack is the same for a seed whatever the
 * thread count, and rows can be filled in parallel. */
static inline guint64 mix64(guint64 z)
{
    z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static inline guint64 rand_at(guint64 seed, guint64 stream, guint64 index)
{
    return mix64(seed ^ mix64(stream * G_GUINT64_CONSTANT(0x9e3779b97f4a7c15) + index));
}

/* Uniform in (0, 1), never 0 so that log() is finite. */
static inline double unit_open(guint32 bits)
{
    return ((double)bits + 0.5) * (1.0 / 4294967296.0);
}

/* One circular complex Gaussian sample with E|z|^2 = 1 (Box-Muller: one uniform pair gives
 * exactly the real and imaginary parts). */
static inline void complex_normal(guint64 r, float *re, float *im)
{
    /* float math: the field is stored in float anyway, and this is the simulator's hot spot */
    float radius = sqrtf(-logf((float)unit_open((guint32)(r >> 32))));
    float phase = (float)(2.0 * G_PI) * (float)unit_open((guint32)r);
    *re = radius * cosf(phase);
    *im = radius * sinf(phase);
}

void fm_lsi_sim_defaults(fm_lsi_sim_params *p)
{
    /* Exposure 10 ms (the methods' default, so SFI from default parameters is right) against
     * tau 1 ms (vessel) and 20 ms (background): x = 10 and 0.5 give expected K 0.31 and 0.86,
     * so the vessel stands out clearly in K and SFI. */
    *p = (fm_lsi_sim_params){
        .width = 256,
        .height = 192,
        .n_frames = 40,
        .exposure_ms = 10.0,
        .tau_background_ms = 20.0,
        .tau_vessel_ms = 1.0,
        .speckle_size_px = 3.0,
        .mean_counts = 500.0, /* 12-bit: static speckle above 4095 = 8.2 x mean has p < 3e-4 */
        .bits = 12,
        .seed = 1,
        .shot_noise = TRUE,
    };
}

void fm_lsi_sim_vessel_geometry(const fm_lsi_sim_params *p, double *x0, double *y0, double *x1,
                                double *y1, double *half_width_px)
{
    *x0 = 0.0;
    *y0 = 0.25 * p->height;
    *x1 = p->width;
    *y1 = 0.75 * p->height;
    *half_width_px = 0.07 * MIN(p->width, p->height) + 1.0;
}

gboolean fm_lsi_sim_is_vessel(const fm_lsi_sim_params *p, int x, int y)
{
    double x0, y0, x1, y1, hw;
    fm_lsi_sim_vessel_geometry(p, &x0, &y0, &x1, &y1, &hw);
    double dx = x1 - x0, dy = y1 - y0;
    double px = x + 0.5 - x0, py = y + 0.5 - y0;
    double distance = fabs(px * dy - py * dx) / sqrt(dx * dx + dy * dy);
    return distance <= hw;
}

double fm_lsi_sim_expected_contrast(double exposure_ms, double tau_ms)
{
    if (!(tau_ms > 0.0) || !(exposure_ms > 0.0))
        return tau_ms > 0.0 ? 1.0 : 0.0;
    double x = exposure_ms / tau_ms;
    double k2;
    if (x < 1e-3)
        k2 = 1.0 - 2.0 * x / 3.0 + x * x / 3.0; /* series: the closed form cancels badly */
    else
        k2 = (expm1(-2.0 * x) + 2.0 * x) / (2.0 * x * x);
    return sqrt(k2);
}

/* Amplitude smoothing kernel for a speckle of the given size. Field correlation of white noise
 * smoothed by a Gaussian of sd s is exp(-r^2/4s^2), so intensity correlation |g1|^2 is
 * exp(-r^2/2s^2); the speckle size is taken as its FWHM, 2.355 s. Weights are normalised to
 * sum of squares 1 so that the smoothed field keeps E|E|^2 = 1. */
static float *smoothing_kernel(double speckle_px, int *radius_out)
{
    double s = speckle_px / (2.0 * sqrt(2.0 * G_LN2));
    int radius = MAX(1, (int)ceil(3.0 * s));
    float *w = g_new(float, 2 * radius + 1);
    double sum2 = 0.0;
    for (int i = -radius; i <= radius; i++) {
        double v = exp(-0.5 * i * i / (s * s));
        w[i + radius] = (float)v;
        sum2 += v * v;
    }
    for (int i = 0; i <= 2 * radius; i++)
        w[i] = (float)(w[i] / sqrt(sum2));
    *radius_out = radius;
    return w;
}

static gboolean check_params(const fm_lsi_sim_params *p, GError **error)
{
    const char *bad = NULL;
    if (p->width < 8 || p->width > 8192 || p->height < 8 || p->height > 8192)
        bad = _("width and height must be 8..8192 pixels");
    else if (p->n_frames < 1 || p->n_frames > 10000)
        bad = _("frames must be 1..10000");
    else if (!(p->exposure_ms > 0.0))
        bad = _("exposure_ms must be > 0");
    else if (!(p->tau_background_ms > 0.0) || !(p->tau_vessel_ms > 0.0))
        bad = _("correlation times must be > 0 ms");
    else if (!(p->speckle_size_px >= 0.5 && p->speckle_size_px <= 64.0))
        bad = _("speckle_px must be 0.5..64");
    else if (p->bits != 8 && p->bits != 12 && p->bits != 16)
        bad = _("bits must be 8, 12 or 16");
    else if (!(p->mean_counts > 0.0) || p->mean_counts >= ldexp(1.0, p->bits))
        bad = _("mean_counts must be > 0 and below the full scale of bits");
    if (bad) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("speckle simulator: %s"), bad);
        return FALSE;
    }
    return TRUE;
}

/* Poisson sample of mean lambda from counter-based uniforms: Knuth's product method for small
 * means, the normal approximation (error well below the quantisation step) above 30. */
static double poisson_at(guint64 seed, guint64 index, double lambda)
{
    guint64 r = rand_at(seed, 0x5407, index);
    if (lambda > 30.0) {
        double g = sqrt(-2.0 * log(unit_open((guint32)(r >> 32)))) *
                   cos(2.0 * G_PI * unit_open((guint32)r));
        return MAX(0.0, floor(lambda + sqrt(lambda) * g + 0.5));
    }
    double limit = exp(-lambda), prod = 1.0;
    int k = 0;
    for (guint64 j = 0;; j++) {
        guint64 u = j ? rand_at(seed, 0x5408 + j, index) : r;
        prod *= unit_open((guint32)(u >> 32));
        if (prod <= limit || k > 1000)
            break;
        k++;
    }
    return k;
}

fm_dataset *fm_lsi_simulate(const fm_lsi_sim_params *p, GError **error)
{
    if (!check_params(p, error))
        return NULL;
    const int w = p->width, h = p->height;
    int radius;
    g_autofree float *kernel = smoothing_kernel(p->speckle_size_px, &radius);
    const int pw = w + 2 * radius, ph = h + 2 * radius; /* padded so borders are stationary */
    const gsize n_pad = (gsize)pw * ph, n_img = (gsize)w * h;

    /* Enough sub-steps that dt <= tau/4 for the faster region (the discrete sum then differs
     * from the continuous exposure integral by about 1 %), and never fewer than 20. */
    double tau_min = MIN(p->tau_vessel_ms, p->tau_background_ms);
    int steps = (int)CLAMP(ceil(4.0 * p->exposure_ms / tau_min), 20, 256);
    double dt = p->exposure_ms / steps;

    /* White-noise field W evolving as an Ornstein-Uhlenbeck process per pixel: the smoothed
     * field E = G * W then has g1(t) = exp(-t/tau), the Lorentzian case of the formula. */
    g_autofree float *w_re = g_new(float, n_pad), *w_im = g_new(float, n_pad);
    g_autofree float *rho = g_new(float, n_pad), *innov = g_new(float, n_pad);
    g_autofree float *t_re = g_new(float, (gsize)w *ph), *t_im = g_new(float, (gsize)w *ph);
    g_autofree double *acc = g_new(double, n_img);
    double rho_v = exp(-dt / p->tau_vessel_ms), rho_b = exp(-dt / p->tau_background_ms);
    for (int y = 0; y < ph; y++)
        for (int x = 0; x < pw; x++) {
            int ix = CLAMP(x - radius, 0, w - 1), iy = CLAMP(y - radius, 0, h - 1);
            double r = fm_lsi_sim_is_vessel(p, ix, iy) ? rho_v : rho_b;
            rho[(gsize)y * pw + x] = (float)r;
            innov[(gsize)y * pw + x] = (float)sqrt(1.0 - r * r);
        }

    gsize sizes[3] = {(gsize)w, (gsize)h, (gsize)p->n_frames};
    fm_dataset *ds = fm_dataset_new(p->bits == 8 ? FM_PIXEL_U8 : FM_PIXEL_U16, 3, sizes, NULL);
    ds->bits_per_sample = p->bits;
    const double full_scale = ldexp(1.0, p->bits) - 1.0;
    const int taps = 2 * radius + 1;

    for (int f = 0; f < p->n_frames; f++) {
        memset(acc, 0, n_img * sizeof *acc);
        for (int s = 0; s < steps; s++) {
            guint64 step = (guint64)f * steps + s;
            for (int y = 0; y < ph; y++)
                for (int x = 0; x < pw; x++) {
                    gsize i = (gsize)y * pw + x;
                    float nr, ni;
                    complex_normal(rand_at(p->seed, step, i), &nr, &ni);
                    if (step == 0) {
                        w_re[i] = nr;
                        w_im[i] = ni;
                    } else {
                        w_re[i] = rho[i] * w_re[i] + innov[i] * nr;
                        w_im[i] = rho[i] * w_im[i] + innov[i] * ni;
                    }
                }
            /* separable smoothing: rows (pw -> w), then columns (ph -> h); taps outermost so
             * the inner loops run over contiguous x and vectorise */
            for (int y = 0; y < ph; y++) {
                float *or_ = t_re + (gsize)y * w, *oi = t_im + (gsize)y * w;
                const float *rr = w_re + (gsize)y * pw, *ri = w_im + (gsize)y * pw;
                memset(or_, 0, sizeof(float) * w);
                memset(oi, 0, sizeof(float) * w);
                for (int k = 0; k < taps; k++) {
                    const float wk = kernel[k];
                    FM_SIM_SIMD
                    for (int x = 0; x < w; x++) {
                        or_[x] += wk * rr[x + k];
                        oi[x] += wk * ri[x + k];
                    }
                }
            }
            for (int y = 0; y < h; y++) {
                float sr[w], si[w]; /* w <= 8192: at most 64 KiB of stack */
                memset(sr, 0, sizeof sr);
                memset(si, 0, sizeof si);
                for (int k = 0; k < taps; k++) {
                    const float wk = kernel[k];
                    const float *cr = t_re + (gsize)(y + k) * w, *ci = t_im + (gsize)(y + k) * w;
                    FM_SIM_SIMD
                    for (int x = 0; x < w; x++) {
                        sr[x] += wk * cr[x];
                        si[x] += wk * ci[x];
                    }
                }
                double *a = acc + (gsize)y * w;
                for (int x = 0; x < w; x++)
                    a[x] += (double)(sr[x] * sr[x] + si[x] * si[x]);
            }
        }
        /* E|E|^2 = 1, so the mean over sub-steps times mean_counts is the expected count. */
        for (gsize i = 0; i < n_img; i++) {
            double counts = acc[i] / steps * p->mean_counts;
            if (p->shot_noise)
                counts = poisson_at(p->seed, (guint64)f * n_img + i, counts);
            counts = CLAMP(floor(counts + 0.5), 0.0, full_scale);
            if (p->bits == 8)
                ((guint8 *)ds->data)[(gsize)f * n_img + i] = (guint8)counts;
            else
                ((guint16 *)ds->data)[(gsize)f * n_img + i] = (guint16)counts;
        }
    }

    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    fm_dataset_set_meta(ds, "simulator", "fluxmap lsi_sim");
    fm_dataset_set_meta(ds, "exposure_ms", g_ascii_dtostr(buf, sizeof buf, p->exposure_ms));
    fm_dataset_set_meta(ds, "tau_background_ms",
                        g_ascii_dtostr(buf, sizeof buf, p->tau_background_ms));
    fm_dataset_set_meta(ds, "tau_vessel_ms", g_ascii_dtostr(buf, sizeof buf, p->tau_vessel_ms));
    fm_dataset_set_meta(ds, "speckle_px", g_ascii_dtostr(buf, sizeof buf, p->speckle_size_px));
    g_autofree char *seed = g_strdup_printf("%" G_GUINT64_FORMAT, p->seed);
    fm_dataset_set_meta(ds, "seed", seed);
    return ds;
}
