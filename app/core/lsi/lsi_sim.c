/* Speckle stack simulator: fully developed dynamic speckle with known correlation times. */
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "app/core/error.h"
#include "app/core/float_bits.h"
#include "app/core/lsi/lsi_sim.h"

/* Bands of rows are simulated in parallel, each from the first frame to the last on its own
 * (simulate_band): one parallel region per stack and no barrier inside it, where a row-parallel
 * loop per sub-step would cost thousands of barriers, which crawl when the machine is busy
 * (parallel test runs). The inner loops are vectorised with OpenMP's simd pragma. */
#ifdef _OPENMP
#define FM_SIM_OMP(directive) _Pragma(directive)
#else
#define FM_SIM_OMP(directive)
#endif
#define FM_SIM_SIMD FM_SIM_OMP("omp simd")

#define GOLDEN G_GUINT64_CONSTANT(0x9e3779b97f4a7c15)

/* Counter-based random numbers (splitmix64's finaliser over seed, stream and index): every
 * value depends only on its coordinates, so the stack is the same for a seed whatever the
 * thread count and however the rows are split between threads. */
static inline guint64 mix64(guint64 z)
{
    z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static inline guint64 rand_at(guint64 seed, guint64 stream, guint64 index)
{
    return mix64(seed ^ mix64(stream * GOLDEN + index));
}

/* Uniform in (0, 1), never 0 so that log() is finite. */
static inline double unit_open(guint32 bits)
{
    return ((double)bits + 0.5) * (1.0 / 4294967296.0);
}

/* Sub-step s of the stack draws splitmix64's sequence key_s + i * golden over the padded pixels
 * i: one mix per sample instead of two. Two sub-steps' sequences would only share values if
 * their random keys fell within a few million golden strides of each other (odds ~1e-12). */
static inline guint64 step_key(guint64 seed, guint64 step)
{
    return mix64(seed ^ mix64(step * GOLDEN + G_GUINT64_CONSTANT(0x4c53495f4f55)));
}

/* sqrt(v) for normal v > 0 by Newton's iteration, because sqrtf may set errno and so is a
 * call behind a branch, which keeps GCC from vectorising the loop around it: the bit-trick
 * guess of 1/sqrt(v) (3.5 % off) after two steps is 5e-6 off, and one step on sqrt itself
 * leaves at most 1.5 ulp (checked against sqrt over every v that neg_log_unit returns). */
static inline float sqrt_positive(float v)
{
    float y = fm_bits_float(0x5f375a86u - (fm_float_bits(v) >> 1)), half = 0.5f * v;
    y = y * (1.5f - half * y * y);
    y = y * (1.5f - half * y * y);
    float r = v * y;
    return r + 0.5f * y * (v - r * r);
}

/* -ln(u) for u = (2 bits + 1) / 2^24, bits < 2^23: an exponential deviate of mean 1 from 23
 * random bits (the largest, 16.6, cuts the tail at p = 6e-8). libm's logf and sincosf are calls
 * that GCC cannot vectorise, so this and turn_cos_sin are branch-free polynomials instead:
 * FreeBSD's e_logf.c reduction of u to m 2^e with m in [sqrt(1/2), sqrt(2)) in integers, then
 * Cephes' logf polynomial (relative error ~1e-7, as libm's). */
static inline float neg_log_unit(gint32 bits)
{
    guint32 word = fm_float_bits((float)(2 * bits + 1) * 0x1p-24f) + (0x3f800000u - 0x3f3504f3u);
    float e = (float)((gint32)(word >> 23) - 0x7f);
    float x = fm_bits_float((word & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
    float z = x * x;
    float y = 7.0376836292e-2f;
    y = y * x - 1.1514610310e-1f;
    y = y * x + 1.1676998740e-1f;
    y = y * x - 1.2420140846e-1f;
    y = y * x + 1.4249322787e-1f;
    y = y * x - 1.6668057665e-1f;
    y = y * x + 2.0000714765e-1f;
    y = y * x - 2.4999993993e-1f;
    y = y * x + 3.3333331174e-1f;
    y = y * x * z;
    y += -2.12194440e-4f * e - 0.5f * z; /* ln 2 split in two so that e ln 2 is exact */
    return -(x + y + 0.693359375f * e);
}

/* cos and sin of the angle 2 pi (bits + 0.5) / 2^24, bits < 2^24: a uniform phase. The nearest
 * quarter turn is taken off in integers, exactly, Cephes' sinf/cosf polynomials on
 * [-pi/4, pi/4] give the rest, and the quarter turns swap and negate them bitwise. */
static inline void turn_cos_sin(gint32 bits, float *cos_out, float *sin_out)
{
    gint32 quarter = (bits + (1 << 21)) >> 22; /* 0 .. 4 */
    float a = (float)(2 * (bits - quarter * (1 << 22)) + 1) * (float)(G_PI / 2.0 / 8388608.0);
    float z = a * a;
    float s = ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * a + a;
    float c =
        ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z + 4.166664568298827e-2f) * z * z -
        0.5f * z + 1.0f;
    /* a quarter turn maps (c, s) to (-s, c), half a turn negates both */
    const guint32 swap = 0u - (guint32)(quarter & 1), sign = (guint32)(quarter & 2) << 30;
    const guint32 cb = fm_float_bits(c), sb = fm_float_bits(s);
    *cos_out = fm_bits_float(((cb & ~swap) | ((sb ^ 0x80000000u) & swap)) ^ sign);
    *sin_out = fm_bits_float(((sb & ~swap) | (cb & swap)) ^ sign);
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

/* What every band shares: the stack's geometry, the smoothing kernel and the time step. */
typedef struct {
    const fm_lsi_sim_params *p;
    const float *kernel;
    int radius, taps, pw; /* pw: padded width, so that borders are stationary */
    int steps;
    double rho_vessel, rho_background;
    fm_dataset *ds;
} stack_plan;

/* Output rows [y0, y1) over all frames. The band keeps its own copy of the white-noise field W
 * on the padded rows y0 .. y1 + 2 radius that its smoothing reads, overlapping the neighbour
 * bands' copies: the overlap rows draw the same numbers (they depend on the padded pixel, not
 * on the band) and so evolve identically, and no band waits for another. */
static void simulate_band(const stack_plan *plan, int y0, int y1)
{
    const fm_lsi_sim_params *p = plan->p;
    const int w = p->width, pw = plan->pw, taps = plan->taps, radius = plan->radius;
    const int rows = y1 - y0, pad_rows = rows + 2 * radius;
    const gsize n_img = (gsize)w * p->height;
    g_autofree float *w_re = g_new(float, (gsize)pad_rows *pw);
    g_autofree float *w_im = g_new(float, (gsize)pad_rows *pw);
    g_autofree float *rho = g_new(float, (gsize)pad_rows *pw);
    g_autofree float *innov = g_new(float, (gsize)pad_rows *pw);
    /* row-smoothed field, the last taps padded rows in a ring: a column sum needs no more */
    g_autofree float *ring_re = g_new(float, (gsize)taps *w);
    g_autofree float *ring_im = g_new(float, (gsize)taps *w);
    g_autofree float *col_re = g_new(float, w), *col_im = g_new(float, w);
    g_autofree gint32 *bits_radius = g_new(gint32, pw), *bits_phase = g_new(gint32, pw);
    g_autofree float *noise_re = g_new(float, pw), *noise_im = g_new(float, pw);
    g_autofree double *acc = g_new(double, (gsize)rows *w);

    for (int j = 0; j < pad_rows; j++)
        for (int x = 0; x < pw; x++) {
            int ix = CLAMP(x - radius, 0, w - 1), iy = CLAMP(y0 + j - radius, 0, p->height - 1);
            double r = fm_lsi_sim_is_vessel(p, ix, iy) ? plan->rho_vessel : plan->rho_background;
            rho[(gsize)j * pw + x] = (float)r;
            innov[(gsize)j * pw + x] = (float)sqrt(1.0 - r * r);
        }

    const double full_scale = ldexp(1.0, p->bits) - 1.0;
    for (int f = 0; f < p->n_frames; f++) {
        memset(acc, 0, sizeof *acc * rows * w);
        for (int s = 0; s < plan->steps; s++) {
            const guint64 step = (guint64)f * plan->steps + s;
            const guint64 key = step_key(p->seed, step);
            for (int j = 0; j < pad_rows; j++) {
                /* Ornstein-Uhlenbeck update of W with a circular complex Gaussian innovation
                 * (E|z|^2 = 1): |z|^2 exponential, phase uniform. The 64-bit mixing stays
                 * scalar (x86-64's baseline SSE2 has no 64-bit multiply); the rest vectorises. */
                const guint64 first = (guint64)(y0 + j) * pw;
                for (int x = 0; x < pw; x++) {
                    guint64 h = mix64(key + (first + x) * GOLDEN);
                    bits_radius[x] = (gint32)(h >> 41);
                    bits_phase[x] = (gint32)(h & 0xffffff);
                }
                FM_SIM_SIMD
                for (int x = 0; x < pw; x++) {
                    float c, sn;
                    turn_cos_sin(bits_phase[x], &c, &sn);
                    float amplitude = sqrt_positive(neg_log_unit(bits_radius[x]));
                    noise_re[x] = amplitude * c;
                    noise_im[x] = amplitude * sn;
                }
                float *wr = w_re + (gsize)j * pw, *wi = w_im + (gsize)j * pw;
                const float *rr = rho + (gsize)j * pw, *ri = innov + (gsize)j * pw;
                if (step == 0) { /* W starts from its stationary law */
                    memcpy(wr, noise_re, sizeof(float) * pw);
                    memcpy(wi, noise_im, sizeof(float) * pw);
                } else {
                    FM_SIM_SIMD
                    for (int x = 0; x < pw; x++) {
                        wr[x] = rr[x] * wr[x] + ri[x] * noise_re[x];
                        wi[x] = rr[x] * wi[x] + ri[x] * noise_im[x];
                    }
                }
                /* separable smoothing, rows first (pw -> w); taps outermost so that the inner
                 * loops run over contiguous x */
                float *or_ = ring_re + (gsize)(j % taps) * w, *oi = ring_im + (gsize)(j % taps) * w;
                memset(or_, 0, sizeof(float) * w);
                memset(oi, 0, sizeof(float) * w);
                for (int k = 0; k < taps; k++) {
                    const float wk = plan->kernel[k];
                    FM_SIM_SIMD
                    for (int x = 0; x < w; x++) {
                        or_[x] += wk * wr[x + k];
                        oi[x] += wk * wi[x + k];
                    }
                }
                /* then the column of output row y = j - 2 radius, whose taps rows are all in
                 * the ring now; E|E|^2 = 1 is accumulated over the exposure */
                const int y = j - 2 * radius;
                if (y < 0)
                    continue;
                memset(col_re, 0, sizeof(float) * w);
                memset(col_im, 0, sizeof(float) * w);
                for (int k = 0; k < taps; k++) {
                    const float wk = plan->kernel[k];
                    const float *cr = ring_re + (gsize)((y + k) % taps) * w;
                    const float *ci = ring_im + (gsize)((y + k) % taps) * w;
                    FM_SIM_SIMD
                    for (int x = 0; x < w; x++) {
                        col_re[x] += wk * cr[x];
                        col_im[x] += wk * ci[x];
                    }
                }
                double *a = acc + (gsize)y * w;
                FM_SIM_SIMD
                for (int x = 0; x < w; x++)
                    a[x] += (double)(col_re[x] * col_re[x] + col_im[x] * col_im[x]);
            }
        }
        /* E|E|^2 = 1, so the mean over sub-steps times mean_counts is the expected count. */
        for (int y = 0; y < rows; y++)
            for (int x = 0; x < w; x++) {
                const gsize i = (gsize)(y0 + y) * w + x;
                double counts = acc[(gsize)y * w + x] / plan->steps * p->mean_counts;
                if (p->shot_noise)
                    counts = poisson_at(p->seed, (guint64)f * n_img + i, counts);
                counts = CLAMP(floor(counts + 0.5), 0.0, full_scale);
                if (p->bits == 8)
                    ((guint8 *)plan->ds->data)[(gsize)f * n_img + i] = (guint8)counts;
                else
                    ((guint16 *)plan->ds->data)[(gsize)f * n_img + i] = (guint16)counts;
            }
    }
}

fm_dataset *fm_lsi_simulate(const fm_lsi_sim_params *p, GError **error)
{
    if (!check_params(p, error))
        return NULL;
    stack_plan plan = {.p = p};
    g_autofree float *kernel = smoothing_kernel(p->speckle_size_px, &plan.radius);
    plan.kernel = kernel;
    plan.taps = 2 * plan.radius + 1;
    plan.pw = p->width + 2 * plan.radius;

    /* Enough sub-steps that dt <= tau/4 for the faster region (the discrete sum then differs
     * from the continuous exposure integral by about 1 %), and never fewer than 20. */
    double tau_min = MIN(p->tau_vessel_ms, p->tau_background_ms);
    plan.steps = (int)CLAMP(ceil(4.0 * p->exposure_ms / tau_min), 20, 256);
    double dt = p->exposure_ms / plan.steps;
    /* White-noise field W evolving as an Ornstein-Uhlenbeck process per pixel: the smoothed
     * field E = G * W then has g1(t) = exp(-t/tau), the Lorentzian case of the formula. */
    plan.rho_vessel = exp(-dt / p->tau_vessel_ms);
    plan.rho_background = exp(-dt / p->tau_background_ms);

    gsize sizes[3] = {(gsize)p->width, (gsize)p->height, (gsize)p->n_frames};
    plan.ds = fm_dataset_new(p->bits == 8 ? FM_PIXEL_U8 : FM_PIXEL_U16, 3, sizes, NULL);
    plan.ds->bits_per_sample = p->bits;

    /* A band recomputes its 2 radius overlap rows; bands of at least 4 radius rows (and 16)
     * keep that to a third of its work at most. */
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    const int min_rows = MAX(16, 4 * plan.radius);
    const int n_bands = CLAMP(p->height / min_rows, 1, threads);
    FM_SIM_OMP("omp parallel for schedule(static, 1) num_threads(n_bands)")
    for (int b = 0; b < n_bands; b++)
        simulate_band(&plan, (int)((gint64)p->height * b / n_bands),
                      (int)((gint64)p->height * (b + 1) / n_bands));

    fm_dataset *ds = plan.ds;
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
