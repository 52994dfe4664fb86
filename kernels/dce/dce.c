/* DCE entry points: defaults, validation, backend choice, CUDA-to-CPU fallback and the run
 * report. */
#include "dce.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../device.h"
#include "../device_private.h"
#include "dce_impl.h"
#include "fit_args.h"
#include "fm_config.h"

static const char *const param_names[FM_DCE_N_PARAMS] = {"ka", "kp", "kl", "tau_a", "tau_p"};

void fm_dce_params_defaults(fm_dce_params *p)
{
    /* The paper's starting point and stopping rule; bounds wide enough for any physiological
     * liver (rates well above hepatic arterial and portal flows, delays of a few seconds). */
    static const double initial[FM_DCE_N_PARAMS] = {10, 80, 200, 2, 3};
    static const double upper[FM_DCE_N_PARAMS] = {1000, 1000, 1000, 10, 10};
    memset(p, 0, sizeof *p);
    for (int i = 0; i < FM_DCE_N_PARAMS; i++) {
        p->initial[i] = initial[i];
        p->lower[i] = 0;
        p->upper[i] = upper[i];
    }
    p->model_dt_s = 0;
    /* The paper stops at 600 iterations or an absolute cost spread of 1e-8. Relative to the data
     * (dce_math.h) 1e-11 with up to four restarts recovers noise-free truth within 0.5 % / 0.05 s
     * on the 48-frame phantom, lesions included, where 1e-8 or 600 iterations do not, and brings
     * the CNR-100 ka bias from -12 % to -1.8 % (tests/accuracy/test-dce-accuracy.c); 2000
     * iterations cap all runs together. */
    p->max_iterations = 2000;
    p->tolerance = 1e-11;
    p->tolerance_mode = FM_DCE_TOL_RELATIVE;
    p->restarts = 4;
    /* From the paper's fixed start Nelder-Mead needs a third more iterations and leaves ka 1.8 %
     * low at CNR 100; the grid start (dce_start.h) gives -0.1 %. */
    p->start = FM_DCE_START_GRID;
    p->n_devices = 0;
}

static fm_status check_curve(const double *v, int n, const char *name, char *msg, size_t msg_len)
{
    if (!v)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "%s is missing", name);
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "%s[%d] is not finite (%g)", name, i,
                           v[i]);
    return FM_OK;
}

fm_status fm_dce_check(const fm_dce_params *p, char *msg, size_t msg_len)
{
    fm_status st;
    if (!p)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "parameters are missing");
    if (p->n_times < 8)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "n_times must be >= 8 frames (got %d)",
                       p->n_times);
    if ((st = check_curve(p->times_s, p->n_times, "times_s", msg, msg_len)) != FM_OK ||
        (st = check_curve(p->ca, p->n_times, "ca", msg, msg_len)) != FM_OK ||
        (st = check_curve(p->cp, p->n_times, "cp", msg, msg_len)) != FM_OK)
        return st;
    double min_step = HUGE_VAL;
    for (int i = 1; i < p->n_times; i++) {
        double step = p->times_s[i] - p->times_s[i - 1];
        if (!(step > 0))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "times_s must be strictly increasing: times_s[%d] = %g s follows "
                           "times_s[%d] = %g s",
                           i, p->times_s[i], i - 1, p->times_s[i - 1]);
        min_step = step < min_step ? step : min_step;
    }
    if (!isfinite(p->model_dt_s) || p->model_dt_s < 0)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "model_dt_s must be 0 (smallest frame interval) or > 0 s (got %g)",
                       p->model_dt_s);
    const double dt = p->model_dt_s > 0 ? p->model_dt_s : min_step;
    const double span = p->times_s[p->n_times - 1] - p->times_s[0];
    if (span / dt + 2 > FM_DCE_MAX_GRID)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "model_dt_s %g s makes %.0f grid points over the %g s series; at most %d "
                       "are supported",
                       dt, span / dt + 2, span, FM_DCE_MAX_GRID);
    for (int i = 0; i < FM_DCE_N_PARAMS; i++) {
        const double lo = p->lower[i], hi = p->upper[i], x0 = p->initial[i];
        if (!isfinite(lo) || !isfinite(hi) || !isfinite(x0))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "initial, lower and upper of %s must be finite (got %g, %g, %g)",
                           param_names[i], x0, lo, hi);
        if (lo < 0)
            /* Delays >= 0 keep the model a linear convolution (dce_math.h); rates are >= 0. */
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "lower.%s must be >= 0 (got %g)",
                           param_names[i], lo);
        if (!(lo <= x0 && x0 <= hi))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "initial.%s = %g lies outside its bounds [%g, %g]", param_names[i], x0,
                           lo, hi);
    }
    if (p->max_iterations < 1)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "max_iterations must be >= 1 (got %d)",
                       p->max_iterations);
    if (!isfinite(p->tolerance) || p->tolerance < 0)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "tolerance must be a finite value >= 0 (got %g)", p->tolerance);
    if (p->tolerance_mode != FM_DCE_TOL_RELATIVE && p->tolerance_mode != FM_DCE_TOL_ABSOLUTE)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "tolerance_mode must be relative (0) or absolute (1) (got %d)",
                       (int)p->tolerance_mode);
    if (p->restarts < 0)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "restarts must be >= 0 (got %d)",
                       p->restarts);
    if (p->start != FM_DCE_START_INITIAL && p->start != FM_DCE_START_GRID)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "start must be initial (0) or grid (1) (got %d)", (int)p->start);
    if (p->n_devices < 0)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "n_devices must be >= 0 (got %d)",
                       p->n_devices);
    if (p->cuda_kernel < FM_DCE_CUDA_AUTO || p->cuda_kernel > FM_DCE_CUDA_WARP_DENSE)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "cuda_kernel must be 0 (auto), 1 (block), 2 (warp) or 3 (dense warp) "
                       "(got %d)",
                       p->cuda_kernel);
    return FM_OK;
}

/* Model curve at the frames for theta on the plan's tables; z: 2 n_fft doubles of scratch. */
static void plan_curve(const fm_dce_plan *pl, const double *theta, double *z, double *curve)
{
    fm_dce_eval e;
    fm_dce_eval_setup(pl, theta, &e);
    for (int k = 0; k <= pl->n_fft / 2; k++)
        fm_dce_fill(pl, &e, k, z);
    for (int half = 1; half < pl->n_fft; half *= 2)
        for (int b = 0; b < pl->n_fft / 2; b++)
            fm_dce_butterfly(z, pl->twiddle, pl->n_fft, half, b, 1);
    for (int i = 0; i < pl->n_times; i++)
        curve[i] = fm_dce_frame_value(pl, &e, z, z + 1, 2, i);
}

static double bounded(double v, const fm_dce_params *p, int i)
{
    return fm_dce_record_param(v, p->lower[i], p->upper[i]);
}

/* The start grid's tables (dce_start.h): its kl, tau_a and tau_p values inside the bounds, the
 * basis curves A (ka = 1 ml/100g/min at each kl, tau_a) and P (kp = 1 at each kl, tau_p) at the
 * frames, frame-major, then |A|^2, |P|^2 and A.P of every grid point. Sums in frame order. */
static int start_tables_build(const fm_dce_plan *pl, const fm_dce_params *p, double *basis,
                              double *gram, double *values)
{
    static const double kl[FM_DCE_START_NKL] = {100, 150, 200, 300, 400, 600, 800};
    static const double tau[FM_DCE_START_NTAU] = {0.25, 0.5, 1, 1.5, 2, 3, 4};
    const int nt = pl->n_times, nb = FM_DCE_START_BASES;
    fm_dce_plan open = *pl; /* unit rates must not be clamped by the user's bounds */
    for (int i = 0; i < FM_DCE_N_PARAMS; i++) {
        open.lower[i] = 0;
        open.upper[i] = HUGE_VAL;
    }
    double *z = malloc(sizeof(double) * (2 * (size_t)pl->n_fft + nt)), *curve = z + 2 * pl->n_fft;
    if (!z)
        return 0;
    double *v_kl = values, *v_ta = v_kl + FM_DCE_START_NKL, *v_tp = v_ta + FM_DCE_START_NTAU;
    for (int k = 0; k < FM_DCE_START_NKL; k++)
        v_kl[k] = bounded(kl[k], p, FM_DCE_KL);
    for (int a = 0; a < FM_DCE_START_NTAU; a++) {
        v_ta[a] = bounded(tau[a], p, FM_DCE_TAU_A);
        v_tp[a] = bounded(tau[a], p, FM_DCE_TAU_P);
    }
    for (int b = 0; b < nb; b++) {
        const int rate = b < FM_DCE_START_HALF ? FM_DCE_KA : FM_DCE_KP, r = b % FM_DCE_START_HALF;
        double theta[FM_DCE_N_PARAMS] = {0, 0, v_kl[r / FM_DCE_START_NTAU], 0, 0};
        theta[rate] = 1;
        theta[rate == FM_DCE_KA ? FM_DCE_TAU_A : FM_DCE_TAU_P] =
            (rate == FM_DCE_KA ? v_ta : v_tp)[r % FM_DCE_START_NTAU];
        plan_curve(&open, theta, z, curve);
        gram[b] = 0;
        for (int i = 0; i < nt; i++) {
            basis[(size_t)i * nb + b] = curve[i];
            gram[b] += curve[i] * curve[i];
        }
    }
    for (int g = 0; g < FM_DCE_START_POINTS; g++) {
        int ia, ip;
        fm_dce_start_bases(g, &ia, &ip);
        double s = 0;
        for (int i = 0; i < nt; i++)
            s += basis[(size_t)i * nb + ia] * basis[(size_t)i * nb + ip];
        gram[nb + g] = s;
    }
    free(z);
    return 1;
}

fm_status fm_dce_tables_build(const fm_dce_params *p, fm_dce_tables *t, char *msg, size_t msg_len)
{
    memset(t, 0, sizeof *t);
    fm_dce_plan *pl = &t->plan;
    const int nt = p->n_times;
    const double t0 = p->times_s[0], span = p->times_s[nt - 1] - t0;
    double dt = p->model_dt_s;
    if (!(dt > 0)) {
        dt = HUGE_VAL;
        for (int i = 1; i < nt; i++)
            dt = fmin(dt, p->times_s[i] - p->times_s[i - 1]);
    }
    /* The grid covers the last frame; a frame within 1e-9 steps of a grid point sits on it. */
    int m = (int)floor(span / dt + 1e-9) + 1;
    if (t0 + (m - 1) * dt < p->times_s[nt - 1] - 1e-9 * dt)
        m++;
    int n = 1, log2n = 0, pad = 1;
    while (n < 2 * m) {
        n *= 2;
        log2n++;
    }
    while (pad < nt)
        pad *= 2;
    pl->n_times = nt;
    pl->n_grid = m;
    pl->n_fft = n;
    pl->log2_fft = log2n;
    pl->n_pad = pad;
    pl->dt_s = dt;
    for (int i = 0; i < FM_DCE_N_PARAMS; i++) {
        pl->lower[i] = p->lower[i];
        pl->upper[i] = p->upper[i];
    }

    const size_t n_model = (size_t)2 * n + 2 * n + 2 * (size_t)m + nt;
    const int grid = p->start == FM_DCE_START_GRID;
    t->n_doubles =
        n_model + (grid ? (size_t)nt * FM_DCE_START_BASES + FM_DCE_START_BASES +
                              FM_DCE_START_POINTS + FM_DCE_START_NKL + 2 * FM_DCE_START_NTAU
                        : 0);
    t->n_ints = (size_t)nt;
    t->doubles = calloc(t->n_doubles, sizeof(double));
    t->ints = calloc(t->n_ints, sizeof(int));
    if (!t->doubles || !t->ints) {
        fm_dce_tables_free(t);
        return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for the model tables");
    }
    double *tw = t->doubles, *spec = tw + 2 * n, *ca = spec + 2 * n, *cp = ca + m, *fw = cp + m;
    int *fj = t->ints;
    for (int k = 0; k < n; k++) {
        const double a = 2.0 * M_PI * k / n;
        tw[2 * k] = cos(a);
        tw[2 * k + 1] = -sin(a);
    }
    /* Inputs resampled onto the grid by linear interpolation (held at the last frame). */
    int seg = 0;
    for (int j = 0; j < m; j++) {
        const double tj = t0 + j * dt;
        while (seg < nt - 2 && p->times_s[seg + 1] < tj)
            seg++;
        const double ta = p->times_s[seg], tb = p->times_s[seg + 1];
        double w = (tj - ta) / (tb - ta);
        w = w < 0 ? 0 : (w > 1 ? 1 : w);
        ca[j] = (1 - w) * p->ca[seg] + w * p->ca[seg + 1];
        cp[j] = (1 - w) * p->cp[seg] + w * p->cp[seg + 1];
    }
    pl->ca0 = ca[0];
    pl->cp0 = cp[0];
    for (int j = 0; j < m; j++) {
        ca[j] -= pl->ca0;
        cp[j] -= pl->cp0;
        spec[2 * j] = ca[j];
        spec[2 * j + 1] = cp[j];
    }
    /* One complex FFT gives both spectra: DFT(a + i b) = A + i B. They do not depend on any
     * fitted parameter, so every voxel and every cost evaluation reuses them. */
    fm_dce_fft_serial(spec, tw, n, log2n, 0);
    for (int i = 0; i < nt; i++) {
        const double pos = (p->times_s[i] - t0) / dt;
        int j = (int)floor(pos + 1e-9);
        double w = pos - j;
        if (fabs(w) < 1e-9 || j >= m - 1)
            w = 0;
        if (j > m - 1)
            j = m - 1;
        fj[i] = j;
        fw[i] = w;
    }
    pl->twiddle = tw;
    pl->spectrum = spec;
    pl->ca_grid = ca;
    pl->cp_grid = cp;
    pl->frame_w = fw;
    pl->frame_j = fj;
    if (grid) {
        double *basis = t->doubles + n_model, *gram = basis + (size_t)nt * FM_DCE_START_BASES;
        double *values = gram + FM_DCE_START_BASES + FM_DCE_START_POINTS;
        if (!start_tables_build(pl, p, basis, gram, values)) {
            fm_dce_tables_free(t);
            return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for the start grid");
        }
        pl->start_basis = basis;
        pl->start_gram = gram;
        pl->start_grid = values;
    }
    return FM_OK;
}

void fm_dce_tables_free(fm_dce_tables *t)
{
    free(t->doubles);
    free(t->ints);
    t->doubles = NULL;
    t->ints = NULL;
}

fm_status fm_dce_model(const fm_dce_params *params, const double theta[FM_DCE_N_PARAMS],
                       double *curve, char *msg, size_t msg_len)
{
    fm_dce_tables t;
    fm_status st = fm_dce_check(params, msg, msg_len);
    if (st != FM_OK)
        return st;
    if (!theta || !curve)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "theta or curve is NULL");
    for (int i = 0; i < FM_DCE_N_PARAMS; i++)
        if (!isfinite(theta[i]))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "theta.%s is not finite",
                           param_names[i]);
    fm_dce_params model = *params;
    model.start = FM_DCE_START_INITIAL; /* one curve needs no start grid */
    if ((st = fm_dce_tables_build(&model, &t, msg, msg_len)) != FM_OK)
        return st;
    const fm_dce_plan *pl = &t.plan;
    double *z = malloc(sizeof(double) * 2 * pl->n_fft);
    if (!z) {
        fm_dce_tables_free(&t);
        return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for the model spectrum");
    }
    plan_curve(pl, theta, z, curve);
    free(z);
    fm_dce_tables_free(&t);
    return FM_OK;
}

fm_status fm_dce_start_points(const fm_dce_params *params, const float *tissue, long long n_voxels,
                              double *x0, char *msg, size_t msg_len)
{
    fm_dce_tables t;
    fm_status st = fm_dce_check(params, msg, msg_len);
    if (st != FM_OK)
        return st;
    if (n_voxels < 0 || (n_voxels > 0 && (!tissue || !x0)))
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "tissue or x0 is NULL");
    if ((st = fm_dce_tables_build(params, &t, msg, msg_len)) != FM_OK)
        return st;
    const int nt = params->n_times;
    double *c = malloc(sizeof(double) * ((size_t)nt + FM_DCE_START_BASES)), *dots = c + nt;
    if (!c) {
        fm_dce_tables_free(&t);
        return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for the start points");
    }
    for (long long v = 0; v < n_voxels; v++) {
        double *x = x0 + v * FM_DCE_N_PARAMS;
        for (int i = 0; i < nt; i++)
            c[i] = tissue[v * nt + i];
        const int finite = fm_dce_curve_finite(c, nt);
        for (int i = 0; i < FM_DCE_N_PARAMS; i++)
            x[i] = finite ? params->initial[i] : NAN;
        if (t.plan.start_basis && finite)
            fm_dce_start(&t.plan, c, dots, x);
    }
    free(c);
    fm_dce_tables_free(&t);
    return FM_OK;
}

fm_status fm_dce_fit(const fm_dce_params *params, const float *tissue, long long n_voxels,
                     fm_dce_outputs *out, fm_backend backend, fm_tick_fn tick, void *tick_user,
                     fm_run_info *info, char *msg, size_t msg_len)
{
    fm_run_info local;
    fm_dce_tables tables;
    long long invalid = 0;
    const double start = fm_now_ms();
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);
    fm_status status = fm_dce_check(params, msg, msg_len);
    if (status != FM_OK)
        return status;
    if ((status = fm_dce_fit_args_check(tissue, n_voxels, out, msg, msg_len)) != FM_OK)
        return status;
    status = fm_backend_resolve(backend, info, msg, msg_len);
    if (status != FM_OK)
        return status;
    if ((status = fm_dce_tables_build(params, &tables, msg, msg_len)) != FM_OK)
        return status;
    fm_dce_job job = {.params = params,
                      .plan = &tables.plan,
                      .tables = &tables,
                      .tissue = tissue,
                      .n_voxels = n_voxels,
                      .out = out,
                      .tick = tick,
                      .tick_user = tick_user,
                      .invalid = &invalid};
#if FM_HAVE_CUDA
    if (info->backend_used == FM_BACKEND_CUDA) {
        char why[FM_MSG_LEN] = "";
        status = fm_dce_cuda_run(&job, why, sizeof why);
        if (fm_backend_cuda_settled(status, backend, info, why, msg, msg_len))
            goto done;
        /* The GPU failed at run time under AUTO: redo everything on the CPU. */
        invalid = 0;
    }
#endif
    status = fm_dce_cpu_run(&job, msg, msg_len);
#if FM_HAVE_CUDA
done:
#endif
    /* Voxels whose curve held NaN or inf come back as NaN maps (both backends count them). */
    info->invalid_values = status == FM_OK ? invalid : 0;
    fm_dce_tables_free(&tables);
    info->elapsed_ms = fm_now_ms() - start;
    return status;
}
