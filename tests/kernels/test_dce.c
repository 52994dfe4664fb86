/* DCE kernel (CPU twin): model against a direct time-domain convolution, recovery of the paper's
 * truth, Nelder-Mead against fminsearch on Rosenbrock, validation and cancellation (TAP). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dce_ref.h"
#include "kernels/dce/dce_impl.h"
#include "kernels/device.h"
#include "tap.h"

static const double truth[FM_DCE_N_PARAMS] = {20, 100, 400, 1, 2}; /* the paper's phantom */

typedef struct {
    double times[512], ca[512], cp[512];
    fm_dce_params p;
} series;

static void make_series(series *s, int n, double dt)
{
    ref_inputs(n, dt, s->times, s->ca, s->cp);
    fm_dce_params_defaults(&s->p);
    s->p.n_times = n;
    s->p.times_s = s->times;
    s->p.ca = s->ca;
    s->p.cp = s->cp;
}

static double max_abs(const double *v, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++)
        m = fmax(m, fabs(v[i]));
    return m;
}

static double max_diff(const double *a, const double *b, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++)
        m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

/* Same discretisation, different algorithm: frames on the model grid and delays of whole grid
 * steps make the trapezoid sum of ref_model at the grid step exactly what the FFT path computes,
 * so only rounding separates them (<= 1e-12 of the peak). */
static void test_model_exact(void)
{
    series s;
    make_series(&s, 64, 1.0);
    const double theta[] = {35, 140, 250, 2, 3};
    double model[64], ref[64];
    char msg[FM_MSG_LEN] = "";
    fm_status st = fm_dce_model(&s.p, theta, model, msg, sizeof msg);
    ref_model(&s.p, theta, 1.0, ref);
    double err = max_diff(model, ref, 64) / max_abs(ref, 64);
    tap_ok(st == FM_OK && err <= 1e-12,
           "model = direct trapezoid sum on the same 1 s grid, delays 2 s and 3 s: max error "
           "%.2e of peak (<= 1e-12) %s",
           err, msg);
}

/* Against the continuous model: non-uniform frames, fractional delays. The model grid (0.05 s)
 * against a 1000-steps-per-second trapezoid; both converge to the same integral, the model's
 * error being O(dt^2) and the double interpolation of inputs near frame kinks; measured 2e-5 of
 * the peak, asserted <= 2e-4. At the default grid (the smallest frame interval, 1 s here) the
 * trapezoid error of the bolus is larger: asserted <= 1 % of the peak (measured 0.2 %). */
static void test_model_continuous(void)
{
    series s;
    make_series(&s, 40, 1.0);
    for (int i = 20; i < 40; i++) /* slower sampling after the first pass, as in clinical DCE */
        s.times[i] = 19 + (i - 19) * 3.5;
    for (int i = 0; i < 40; i++) {
        s.ca[i] = ref_ca(s.times[i]);
        s.cp[i] = ref_cp(s.times[i]);
    }
    const double theta[] = {20, 100, 400, 1.3, 2.7};
    double model[40], ref[40];
    char msg[FM_MSG_LEN] = "";
    ref_model(&s.p, theta, 1000.0, ref);
    s.p.model_dt_s = 0.05;
    fm_status st = fm_dce_model(&s.p, theta, model, msg, sizeof msg);
    double err = max_diff(model, ref, 40) / max_abs(ref, 40);
    tap_ok(st == FM_OK && err <= 2e-4,
           "model on a 0.05 s grid = continuous convolution (non-uniform frames, fractional "
           "delays): max error %.2e of peak (<= 2e-4) %s",
           err, msg);
    s.p.model_dt_s = 0;
    st = fm_dce_model(&s.p, theta, model, msg, sizeof msg);
    err = max_diff(model, ref, 40) / max_abs(ref, 40);
    tap_ok(st == FM_OK && err <= 1e-2,
           "model on the default 1 s grid = continuous convolution: max error %.2e of peak "
           "(<= 1e-2) %s",
           err, msg);
}

/* Noise-free curves from the model are recovered to within 0.5 % and 0.05 s (the issue's
 * accuracy criterion) with the defaults: tolerance relative to the data (1e-11 x mean Cl^2) and
 * four restarts, from the paper's starting point or from the grid start. The paper's truth is a
 * grid point, so the grid start is also checked on a truth between grid points. The paper's
 * absolute 1e-8 leaves ka 1-20 % off for curves in mM (tests/accuracy/test-dce-accuracy.c). */
static void test_recovery(int n, double dt, double tolerance, fm_dce_start_mode start,
                          const double *want)
{
    series s;
    make_series(&s, n, dt);
    s.p.tolerance = tolerance;
    s.p.start = start;
    double curve[512], map[FM_DCE_OUT_COUNT];
    float tissue[512];
    char msg[FM_MSG_LEN] = "";
    fm_dce_model(&s.p, want, curve, msg, sizeof msg);
    for (int i = 0; i < n; i++)
        tissue[i] = (float)curve[i];
    fm_dce_outputs out;
    for (int o = 0; o < FM_DCE_OUT_COUNT; o++)
        out.map[o] = &map[o];
    fm_run_info info;
    fm_status st =
        fm_dce_fit(&s.p, tissue, 1, &out, FM_BACKEND_CPU, NULL, NULL, &info, msg, sizeof msg);
    double rel = 0, dtau = 0;
    for (int i = 0; i < 3; i++)
        rel = fmax(rel, fabs(map[i] - want[i]) / want[i]);
    for (int i = 3; i < 5; i++)
        dtau = fmax(dtau, fabs(map[i] - want[i]));
    printf("# Nt %d dt %.2f: ka %.4f kp %.4f kl %.4f tau_a %.4f tau_p %.4f, %g iterations, "
           "converged %g, R2 %.8f\n",
           n, dt, map[0], map[1], map[2], map[3], map[4], map[FM_DCE_OUT_ITERATIONS],
           map[FM_DCE_OUT_CONVERGED], map[FM_DCE_OUT_R2]);
    tap_ok(st == FM_OK && rel <= 0.005 && dtau <= 0.05 && map[FM_DCE_OUT_CONVERGED] == 1,
           "noise-free Nt %d every %.2f s, want (%g, %g, %g, %g, %g), %s start, tolerance %g: "
           "rates within %.2e (<= 0.5 %%), delays within %.3f s (<= 0.05 s), converged in %g "
           "iterations %s",
           n, dt, want[0], want[1], want[2], want[3], want[4],
           start == FM_DCE_START_GRID ? "grid" : "the paper's", tolerance, rel, dtau,
           map[FM_DCE_OUT_ITERATIONS], msg);
}

/* The grid start (dce_start.h). The paper's want is a grid point and the model is linear in
 * ka, kp, so on its noise-free curve the start must be that point with ka, kp from the 2 x 2
 * least squares to rounding; ka, kp scale with the curve; a zero curve starts at the floor rate;
 * bounds hold; a NaN curve starts nowhere; the paper's mode starts at initial[]. */
static void test_start(void)
{
    series s;
    make_series(&s, 48, 2.37);
    double curve[48], x[4][FM_DCE_N_PARAMS];
    float tissue[4 * 48];
    char msg[FM_MSG_LEN] = "";
    fm_dce_model(&s.p, truth, curve, msg, sizeof msg);
    for (int i = 0; i < 48; i++) {
        tissue[i] = (float)curve[i];
        tissue[48 + i] = (float)(5 * curve[i]);
        tissue[96 + i] = 0;
        tissue[144 + i] = i == 7 ? NAN : (float)curve[i];
    }
    fm_status st = fm_dce_start_points(&s.p, tissue, 4, &x[0][0], msg, sizeof msg);
    /* float curves: ka, kp to ~1e-7 */
    const double rel = fmax(fabs(x[0][0] / 20 - 1), fabs(x[0][1] / 100 - 1));
    const double rel5 = fmax(fabs(x[1][0] / 100 - 1), fabs(x[1][1] / 500 - 1));
    tap_ok(st == FM_OK && rel < 1e-6 && x[0][2] == 400 && x[0][3] == 1 && x[0][4] == 2 &&
               rel5 < 1e-6 && x[1][2] == 400,
           "grid start on the paper's noise-free curve: (%.7g, %.7g, %g, %g, %g), ka, kp within "
           "%.1e; x 5: ka %.7g kp %.7g %s",
           x[0][0], x[0][1], x[0][2], x[0][3], x[0][4], rel, x[1][0], x[1][1], msg);
    tap_ok(x[2][0] == 1 && x[2][1] == 1 && isnan(x[3][0]) && isnan(x[3][4]),
           "zero curve starts at ka = kp = 1 (%g, %g); a NaN curve at NaN (%g)", x[2][0], x[2][1],
           x[3][0]);
    s.p.upper[FM_DCE_KA] = 10;
    s.p.lower[FM_DCE_TAU_P] = 2.5;
    s.p.initial[FM_DCE_TAU_P] = 3;
    fm_dce_start_points(&s.p, tissue, 1, &x[0][0], msg, sizeof msg);
    tap_ok(x[0][0] == 10 && x[0][4] >= 2.5, "bounds ka <= 10, tau_p >= 2.5: start ka %g tau_p %g",
           x[0][0], x[0][4]);
    s.p.start = FM_DCE_START_INITIAL;
    fm_dce_start_points(&s.p, tissue, 1, &x[0][0], msg, sizeof msg);
    tap_ok(memcmp(x[0], s.p.initial, sizeof x[0]) == 0, "the paper's mode starts at initial[]");
    s.p.start = (fm_dce_start_mode)7;
    st = fm_dce_start_points(&s.p, tissue, 1, &x[0][0], msg, sizeof msg);
    tap_ok(st == FM_ERR_INVALID_ARG && strstr(msg, "start"), "start 7: \"%s\"", msg);
}

static double rosenbrock(const double *x)
{
    return 100 * (x[1] - x[0] * x[0]) * (x[1] - x[0] * x[0]) + (1 - x[0]) * (1 - x[0]);
}

/* The state machine on Rosenbrock from (-1.2, 1): MATLAB documents fminsearch reaching (1, 1)
 * after 85 iterations and 159 function evaluations with TolX = TolFun = 1e-4 (fval 8.1777e-10);
 * an exact replica of Lagarias et al.'s algorithm reproduces those counts. */
static void test_rosenbrock(void)
{
    fm_nm_state s;
    const double x0[2] = {-1.2, 1};
    double pts[3][2];
    fm_nm_begin(&s, 2, x0, 400, 400, 1e-4, 1e-4);
    int k = 0, more;
    do {
        if (k < 3) {
            pts[k][0] = s.x[0];
            pts[k][1] = s.x[1];
        }
        k++;
        more = fm_nm_feed(&s, rosenbrock(s.x));
    } while (more);
    tap_ok(pts[0][0] == -1.2 && pts[0][1] == 1 && pts[1][0] == 1.05 * -1.2 && pts[1][1] == 1 &&
               pts[2][0] == -1.2 && pts[2][1] == 1.05 * 1,
           "initial simplex x0, x0 with x1 * 1.05, x0 with x2 * 1.05: (%g,%g) (%g,%g) (%g,%g)",
           pts[0][0], pts[0][1], pts[1][0], pts[1][1], pts[2][0], pts[2][1]);
    tap_ok(s.iterations == 85 && s.evaluations == 159 && s.converged,
           "Rosenbrock from (-1.2, 1), TolX = TolFun = 1e-4: %d iterations, %d evaluations "
           "(fminsearch: 85, 159)",
           s.iterations, s.evaluations);
    tap_ok(fabs(s.v[0][0] - 1) < 1e-4 && fabs(s.v[0][1] - 1) < 1e-4 && fabs(s.fv[0]) < 1e-8,
           "minimum (%.6f, %.6f), f = %.4e (fminsearch: 1.0000, 1.0000, 8.1777e-10)", s.v[0][0],
           s.v[0][1], s.fv[0]);

    /* A zero component moves by 0.00025 instead of 5 %. */
    const double z0[2] = {0, 2};
    fm_nm_begin(&s, 2, z0, 10, 0, 1e-8, -1);
    fm_nm_feed(&s, rosenbrock(s.x));
    tap_ok(s.x[0] == 0.00025 && s.x[1] == 2, "zero component: second vertex (%g, %g)", s.x[0],
           s.x[1]);
    /* The paper's rule stops on max - min of the costs alone; the iteration cap counts the
     * initial simplex as iteration 1 as fminsearch does. */
    fm_nm_begin(&s, 2, x0, 10, 0, 0.0, -1);
    while (fm_nm_feed(&s, rosenbrock(s.x)))
        ;
    tap_ok(s.iterations == 10 && !s.converged,
           "iteration cap: stopped after %d of 10, converged %d", s.iterations, s.converged);
}

/* Restarts: with restarts = 0 the machine is fminsearch (test_rosenbrock); with restarts it
 * continues from the best vertex, counts all iterations, never ends with a higher cost, and
 * stops restarting once a run improves by no more than the tolerance. */
static void test_restarts(void)
{
    const double x0[2] = {-1.2, 1};
    fm_nm_state a, b;
    fm_nm_begin(&a, 2, x0, 1000, 0, 1e-6, -1);
    while (fm_nm_feed(&a, rosenbrock(a.x)))
        ;
    fm_nm_begin(&b, 2, x0, 1000, 0, 1e-6, -1);
    b.restarts = 3;
    int first_done = -1, k = 0;
    while (fm_nm_feed(&b, rosenbrock(b.x))) {
        k++;
        if (first_done < 0 && b.started == 2)
            first_done = b.iterations;
    }
    tap_ok(a.started == 1 && first_done == a.iterations && b.iterations > a.iterations &&
               b.fv[0] <= a.fv[0] && b.started >= 2 && b.started <= 4 && b.converged,
           "restarts: single run %d iterations f %.3g; with up to 3 restarts %d runs, %d "
           "iterations in all, f %.3g (never higher)",
           a.iterations, a.fv[0], b.started, b.iterations, b.fv[0]);

    /* converged means "stopped on the tolerance": the first run met it, but a cap that falls
     * inside the restart stops the fit there, so the flag is 0 (it used to stay 1). */
    fm_nm_state c;
    fm_nm_begin(&c, 2, x0, a.iterations + 3, 0, 1e-6, -1);
    c.restarts = 3;
    while (fm_nm_feed(&c, rosenbrock(c.x)))
        ;
    tap_ok(c.started == 2 && c.iterations == a.iterations + 3 && !c.converged && c.fv[0] <= a.fv[0],
           "cap inside a restart: %d runs, %d iterations, converged %d (the cap, not the "
           "tolerance, stopped it), f %.3g <= %.3g",
           c.started, c.iterations, c.converged, c.fv[0], a.fv[0]);
}

/* Relative tolerance makes the fit unit-free: scaling the tissue curve by 1024 (a power of two,
 * so every float, cost and tolerance scales exactly) must give bit-identical parameters and
 * iteration counts, and ka unchanged (it is the inputs, not the tissue, that carry the units). */
static void test_relative_tolerance(void)
{
    series s;
    make_series(&s, 48, 2.37);
    double curve[48], m1[FM_DCE_OUT_COUNT], m2[FM_DCE_OUT_COUNT];
    float t1[48], t2[48];
    char msg[FM_MSG_LEN] = "";
    fm_dce_model(&s.p, truth, curve, msg, sizeof msg);
    for (int i = 0; i < 48; i++) {
        t1[i] = (float)curve[i];
        t2[i] = (float)(curve[i] * 1024.0);
    }
    /* Scaled tissue with the same inputs means 1024 x the rates; keep the start the same
     * relative to the truth by scaling the scaled fit's start, bounds too. */
    fm_dce_params p2 = s.p;
    for (int i = 0; i < 2; i++) { /* ka, kp; kl is a rate of washout, unit-free */
        p2.initial[i] *= 1024.0;
        p2.upper[i] *= 1024.0;
    }
    fm_dce_outputs o1, o2;
    for (int o = 0; o < FM_DCE_OUT_COUNT; o++) {
        o1.map[o] = &m1[o];
        o2.map[o] = &m2[o];
    }
    fm_status st1 = fm_dce_fit(&s.p, t1, 1, &o1, FM_BACKEND_CPU, NULL, NULL, NULL, msg, sizeof msg);
    fm_status st2 = fm_dce_fit(&p2, t2, 1, &o2, FM_BACKEND_CPU, NULL, NULL, NULL, msg, sizeof msg);
    int same = st1 == FM_OK && st2 == FM_OK;
    for (int i = 0; i < 2; i++)
        same &= m2[i] == m1[i] * 1024.0;
    same &= m2[2] == m1[2] && m2[3] == m1[3] && m2[4] == m1[4] &&
            m2[FM_DCE_OUT_ITERATIONS] == m1[FM_DCE_OUT_ITERATIONS];
    tap_ok(same,
           "relative tolerance, tissue x 1024: ka, kp x 1024 exactly, kl, delays and %g iterations "
           "identical (ka %.6g vs %.6g / 1024)",
           m1[FM_DCE_OUT_ITERATIONS], m1[0], m2[0]);
}

static void test_bad_params(void)
{
    series s;
    char msg[FM_MSG_LEN] = "";
    float tissue[64] = {0};
    double map[FM_DCE_OUT_COUNT];
    fm_dce_outputs out = {{0}};
    out.map[0] = map;
    make_series(&s, 32, 2.0);
    s.times[10] = s.times[9];
    fm_status st =
        fm_dce_fit(&s.p, tissue, 1, &out, FM_BACKEND_CPU, NULL, NULL, NULL, msg, sizeof msg);
    tap_ok(st == FM_ERR_INVALID_ARG && strstr(msg, "times_s[10]"),
           "repeated frame time: invalid argument, \"%s\"", msg);
    make_series(&s, 32, 2.0);
    s.cp[5] = NAN;
    st = fm_dce_fit(&s.p, tissue, 1, &out, FM_BACKEND_CPU, NULL, NULL, NULL, msg, sizeof msg);
    tap_ok(st == FM_ERR_INVALID_ARG && strstr(msg, "cp[5]"), "NaN input: invalid argument, \"%s\"",
           msg);
    make_series(&s, 7, 2.0);
    st = fm_dce_check(&s.p, msg, sizeof msg);
    tap_ok(st == FM_ERR_INVALID_ARG && strstr(msg, "n_times"), "7 frames: \"%s\"", msg);
    make_series(&s, 32, 2.0);
    s.p.initial[FM_DCE_KL] = 2000;
    st = fm_dce_check(&s.p, msg, sizeof msg);
    tap_ok(st == FM_ERR_INVALID_ARG && strstr(msg, "initial.kl"), "initial outside bounds: \"%s\"",
           msg);
    make_series(&s, 32, 2.0);
    s.p.lower[FM_DCE_TAU_A] = -1;
    st = fm_dce_check(&s.p, msg, sizeof msg);
    tap_ok(st == FM_ERR_INVALID_ARG && strstr(msg, "lower.tau_a"), "negative delay bound: \"%s\"",
           msg);
}

static int cancel_at_first(void *user, double fraction)
{
    (*(int *)user)++;
    return 1;
}

/* Cancellation, non-finite voxels and AUTO's reported fallback. */
static void test_run_behaviour(void)
{
    series s;
    make_series(&s, 24, 2.0);
    const int nv = 40;
    float *tissue = calloc((size_t)nv * 24, sizeof(float));
    double *ka = calloc(nv, sizeof(double)), *it = calloc(nv, sizeof(double));
    double curve[24];
    char msg[FM_MSG_LEN] = "";
    fm_dce_model(&s.p, truth, curve, msg, sizeof msg);
    for (int v = 0; v < nv; v++)
        for (int i = 0; i < 24; i++)
            tissue[v * 24 + i] = (float)curve[i];
    fm_dce_outputs out = {{0}};
    out.map[FM_DCE_OUT_KA] = ka;
    out.map[FM_DCE_OUT_ITERATIONS] = it;
    int calls = 0;
    fm_status st = fm_dce_fit(&s.p, tissue, nv, &out, FM_BACKEND_CPU, cancel_at_first, &calls, NULL,
                              msg, sizeof msg);
    tap_ok(st == FM_ERR_CANCELLED && calls == 1, "tick returning 1 cancels: %s after %d tick(s)",
           fm_status_name(st), calls);

    tissue[3 * 24 + 7] = NAN;
    fm_run_info info;
    st = fm_dce_fit(&s.p, tissue, nv, &out, FM_BACKEND_AUTO, NULL, NULL, &info, msg, sizeof msg);
    tap_ok(st == FM_OK && isnan(ka[3]) && it[3] == 0 && !isnan(ka[4]) && info.invalid_values == 1,
           "a NaN sample: that voxel's maps are NaN, the others fitted, invalid_values %lld",
           info.invalid_values);
    char why[FM_MSG_LEN];
    if (fm_device_count(why, sizeof why) == 0)
        tap_ok(info.backend_used == FM_BACKEND_CPU && info.fell_back && info.fallback_reason[0],
               "AUTO without a device runs the CPU twin and says why: \"%s\"",
               info.fallback_reason);
    free(tissue);
    free(ka);
    free(it);
}

int main(void)
{
    test_model_exact();
    test_model_continuous();
    static const double between[FM_DCE_N_PARAMS] = {35, 70, 250, 0.7, 2.6}; /* off the grid */
    test_recovery(48, 2.37, 1e-11, FM_DCE_START_INITIAL, truth); /* the paper's protocol */
    test_recovery(64, 2.0, 1e-11, FM_DCE_START_INITIAL, truth);
    test_recovery(128, 1.0, 1e-11, FM_DCE_START_INITIAL, truth);
    test_recovery(448, 0.25, 1e-11, FM_DCE_START_INITIAL, truth);
    test_recovery(48, 2.37, 1e-11, FM_DCE_START_GRID, truth);
    test_recovery(48, 2.37, 1e-11, FM_DCE_START_GRID, between);
    test_recovery(128, 1.0, 1e-11, FM_DCE_START_GRID, between);
    test_start();
    test_rosenbrock();
    test_restarts();
    test_relative_tolerance();
    test_bad_params();
    test_run_behaviour();
    return tap_done();
}
