/* Pharmacokinetic fits, CUDA against the CPU twin on fresh random-parameter noisy voxels of every
 * model, with and without a fitted delay, and of the two-compartment models at low noise too (where
 * their linear start is mostly taken). Both run the same per-voxel code (pk_fit.h), but the GPU
 * contracts multiply-adds and has its own exp: rounding differs, so a fit in a flat valley may
 * stop at a slightly different point. Asserted: the cost both minimise, rmse, within 1e-6 relative
 * in >= 99.5 % of voxels; every fitted parameter within 1e-4 of its bound range in >= 97 %. On the
 * H100 (62e4c99) at most 0.14 % of voxels differed in rmse; parameters differed in up to 2.3 % of
 * the 2CXM voxels, nearly all at the same rmse: voxels whose ve or ps the data do not determine
 * (PS -> 0 leaves ve free), where any rounding moves the end point along the valley; <= 0.13 % for
 * the other models. TAP; skips without a device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dce/pk.h"
#include "kernels/device.h"
#include "tap.h"

static unsigned long long rng = 0x9E3779B97F4A7C15ULL;

static double uniform(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static double gauss(void)
{
    return sqrt(-2 * log(1 - uniform())) * cos(2 * M_PI * uniform());
}

static double bolus(double t)
{
    return t < 10 ? 0
                  : 6 * pow((t - 10) / 5, 2) * exp(-(t - 10) / 5 * 2) +
                        0.5 * (1 - exp(-(t - 10) / 90));
}

static void compare(fm_pk_model model, int fit_delay, int nt, double dt, long long nv, double noise)
{
    double *t = malloc(sizeof(double) * nt), *cp = malloc(sizeof(double) * nt),
           *curve = malloc(sizeof(double) * nt);
    for (int i = 0; i < nt; i++) {
        t[i] = i * dt;
        cp[i] = bolus(t[i]);
    }
    fm_pk_params p;
    fm_pk_params_defaults(&p, model);
    p.n_times = nt;
    p.times_s = t;
    p.cp = cp;
    p.fit_delay = fit_delay;
    float *tissue = malloc(sizeof(float) * nt * nv);
    char msg[FM_MSG_LEN] = "";
    for (long long v = 0; v < nv; v++) {
        const double th[FM_PK_N_PARAMS] = {0.02 + 0.5 * uniform(), 0.05 + 0.5 * uniform(),
                                           0.01 + 0.1 * uniform(), 5 + 80 * uniform(),
                                           0.01 + 0.3 * uniform(), -3 + 6 * uniform()};
        fm_pk_model_curve(&p, th, curve, msg, sizeof msg);
        for (int i = 0; i < nt; i++)
            tissue[v * nt + i] = (float)(curve[i] + noise * gauss());
    }
    tissue[5] = NAN;
    double *g[FM_PK_OUT_COUNT], *c[FM_PK_OUT_COUNT];
    fm_pk_outputs og, oc;
    for (int o = 0; o < FM_PK_OUT_COUNT; o++) {
        og.map[o] = g[o] = calloc(nv, sizeof(double));
        oc.map[o] = c[o] = calloc(nv, sizeof(double));
    }
    fm_run_info ig, ic;
    char mg[FM_MSG_LEN] = "", mc[FM_MSG_LEN] = "";
    const fm_status sg =
        fm_pk_fit(&p, tissue, nv, &og, FM_BACKEND_CUDA, NULL, NULL, &ig, mg, sizeof mg);
    const fm_status sc =
        fm_pk_fit(&p, tissue, nv, &oc, FM_BACKEND_CPU, NULL, NULL, &ic, mc, sizeof mc);
    long long rmse_off = 0, param_off = 0, nan_off = 0;
    double worst_rmse = 0, worst_param = 0;
    for (long long v = 0; v < nv; v++) {
        if (isnan(g[FM_PK_OUT_RMSE][v]) != isnan(c[FM_PK_OUT_RMSE][v])) {
            nan_off++;
            continue;
        }
        if (isnan(c[FM_PK_OUT_RMSE][v]))
            continue;
        const double dr =
            fabs(g[FM_PK_OUT_RMSE][v] - c[FM_PK_OUT_RMSE][v]) / fmax(c[FM_PK_OUT_RMSE][v], 1e-300);
        worst_rmse = fmax(worst_rmse, dr);
        rmse_off += dr > 1e-6;
        double dp = 0;
        for (int s = 0; s < FM_PK_N_PARAMS; s++)
            if (fm_pk_model_uses(&p, s)) {
                const int o = s == FM_PK_DELAY ? FM_PK_OUT_DELAY : s;
                dp = fmax(dp, fabs(g[o][v] - c[o][v]) / (p.upper[s] - p.lower[s]));
            }
        worst_param = fmax(worst_param, dp);
        param_off += dp > 1e-4;
    }
    printf("# %s%s, %d frames, noise %g mM: GPU %.1f ms (%s), CPU %.1f ms (%s)\n",
           fm_pk_model_name(model), fit_delay ? " + delay" : "", nt, noise, ig.elapsed_ms,
           ig.device_name, ic.elapsed_ms, ic.device_name);
    if (sg != FM_OK)
        printf("# CUDA: %s\n", mg);
    tap_ok(sg == FM_OK && sc == FM_OK && ig.backend_used == FM_BACKEND_CUDA && nan_off == 0 &&
               rmse_off * 200 <= nv && param_off * 100 <= 3 * nv && ig.invalid_values == 1,
           "%s%s, %d frames, noise %g mM, %lld voxels: rmse differs > 1e-6 in %lld (max %.2e), "
           "a parameter > 1e-4 of its range in %lld (max %.2e), NaN mismatches %lld",
           fm_pk_model_name(model), fit_delay ? " + delay" : "", nt, noise, nv, rmse_off,
           worst_rmse, param_off, worst_param, nan_off);
    for (int o = 0; o < FM_PK_OUT_COUNT; o++) {
        free(g[o]);
        free(c[o]);
    }
    free(tissue);
    free(t);
    free(cp);
    free(curve);
}

static int cancel_now(void *user, double fraction)
{
    (void)user;
    (void)fraction;
    return 1;
}

int main(void)
{
    char why[FM_MSG_LEN] = "";
    if (fm_device_count(why, sizeof why) == 0) {
        printf("1..0 # SKIP no CUDA device (%s)\n", why);
        return 0;
    }
    for (int m = 0; m < FM_PK_N_MODELS; m++)
        for (int d = 0; d <= 1; d++)
            compare((fm_pk_model)m, d, 100, 3.0, 20000, 0.01);
    /* 900 frames: curves too long for shared-memory staging, read from global memory. */
    compare(FM_PK_EXTENDED_TOFTS, 1, 900, 0.5, 2000, 0.01);
    compare(FM_PK_2CXM, 0, 900, 0.5, 2000, 0.01);
    /* The two-compartment models' linear start (pk_start.h) wins over the grid's in few of the
     * noisy voxels above (3-6 %); at 0.5 s frames and noise 0.001 mM (OSIPI's level) in 45-85 %
     * of them (CPU twin, 500 voxels each): both starts compared. */
    for (int m = FM_PK_2CXM; m <= FM_PK_2CUM; m++)
        for (int d = 0; d <= 1; d++)
            compare((fm_pk_model)m, d, 600, 0.5, 2000, 0.001);

    double t[32], cp[32], ktrans[4096];
    for (int i = 0; i < 32; i++) {
        t[i] = 2.0 * i;
        cp[i] = bolus(t[i]);
    }
    fm_pk_params p;
    fm_pk_params_defaults(&p, FM_PK_TOFTS);
    p.n_times = 32;
    p.times_s = t;
    p.cp = cp;
    float *tissue = calloc(4096 * 32, sizeof(float));
    fm_pk_outputs out = {{0}};
    out.map[FM_PK_OUT_KTRANS] = ktrans;
    fm_run_info info;
    const fm_status st = fm_pk_fit(&p, tissue, 4096, &out, FM_BACKEND_CUDA, cancel_now, NULL, &info,
                                   why, sizeof why);
    tap_ok(st == FM_ERR_CANCELLED, "CUDA: a tick returning 1 cancels (%s)", fm_status_name(st));
    free(tissue);
    return tap_done();
}
