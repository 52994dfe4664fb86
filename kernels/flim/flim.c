/* FLIM entry points: defaults, validation, backend choice, CUDA-to-CPU fallback, run report. */
#include "flim.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../device.h"
#include "../device_private.h"
#include "fm_config.h"
#include "flim_impl.h"

void fm_flim_params_defaults(fm_flim_params *p, int n_bins, double bin_width_ns)
{
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    p->n_bins = n_bins;
    p->bin_width_ns = bin_width_ns;
    p->fit_start = 0;
    p->fit_end = n_bins;
    p->period_ns = 0.0; /* n_bins * bin_width_ns: the TAC range is the laser period */
    p->harmonic = 1;
    p->cal_phase_rad = 0.0;
    p->cal_modulation = 1.0;
    p->model = 1;
    p->tau_d_ns = 2.5;
    p->irf = NULL;
    p->fit_background = 0;
    p->max_iterations = 100;
    p->tolerance = 1e-6;
    p->tau_init_ns[0] = 1.0; /* mono start; bi: tauF */
    p->tau_init_ns[1] = 3.0; /* bi: tauD */
    p->fraction_init = 0.5;
    p->min_photons = 1.0;
    p->cuda_variant = 0;
}

const char *fm_flim_method_name(fm_flim_method m)
{
    static const char *names[FM_FLIM_METHOD_COUNT] = {"iem",   "cmm", "rld", "phasor", "bcmm1",
                                                      "bcmm2", "lsm", "mle", "ga"};
    if ((int)m < 0 || m >= FM_FLIM_METHOD_COUNT)
        return "unknown";
    return names[m];
}

static int is_iterative(fm_flim_method m)
{
    return m == FM_FLIM_LSM || m == FM_FLIM_MLE || m == FM_FLIM_GA;
}

fm_status fm_flim_check(fm_flim_method method, const fm_flim_params *p, int n_pixels, char *msg,
                        size_t msg_len)
{
    if (!p)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "parameters are missing");
    if ((int)method < 0 || method >= FM_FLIM_METHOD_COUNT)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "unknown FLIM method %d", (int)method);
    if (n_pixels <= 0)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "the image holds no pixels (%d)",
                       n_pixels);
    if (p->n_bins < 8)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "n_bins must be at least 8 time bins (got %d)", p->n_bins);
    if (!(p->bin_width_ns > 0.0) || !isfinite(p->bin_width_ns))
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "bin_width_ns must be a finite value > 0 (got %g)", p->bin_width_ns);
    if (p->fit_start < 0 || p->fit_end > p->n_bins || p->fit_start >= p->fit_end)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "fit range [%d, %d) lies outside the data's %d bins (need 0 <= fit_start "
                       "< fit_end <= n_bins)",
                       p->fit_start, p->fit_end, p->n_bins);
    /* Four bins is the least any estimator needs (BCMM2 solves for four unknowns). */
    if (p->fit_end - p->fit_start < 4)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "fit range [%d, %d) holds %d bins; at least 4 are needed", p->fit_start,
                       p->fit_end, p->fit_end - p->fit_start);
    if (!(p->min_photons >= 0.0) || !isfinite(p->min_photons))
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "min_photons must be a finite value >= 0 (got %g)", p->min_photons);
    if (method == FM_FLIM_PHASOR) {
        if (!(p->period_ns >= 0.0) || !isfinite(p->period_ns))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "period_ns must be >= 0 (0 = n_bins x bin_width_ns; got %g)",
                           p->period_ns);
        if (p->harmonic < 1)
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "harmonic must be >= 1 (got %d)",
                           p->harmonic);
        if (!(p->cal_modulation > 0.0) || !isfinite(p->cal_modulation) ||
            !isfinite(p->cal_phase_rad))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "phasor calibration needs cal_modulation > 0 and a finite "
                           "cal_phase_rad (got %g, %g)",
                           p->cal_modulation, p->cal_phase_rad);
    }
    if (method == FM_FLIM_BCMM1 && (!(p->tau_d_ns > 0.0) || !isfinite(p->tau_d_ns)))
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "bcmm1 needs the known donor lifetime tau_d_ns > 0 (got %g)", p->tau_d_ns);
    if (is_iterative(method)) {
        if (p->model != 1 && p->model != 2)
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "model must be 1 (mono-exponential) or 2 (bi-exponential), got %d",
                           p->model);
        if (p->max_iterations < 1)
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "max_iterations must be >= 1 "
                           "(got %d)",
                           p->max_iterations);
        if (!(p->tolerance > 0.0) || !isfinite(p->tolerance))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "tolerance must be > 0 (got %g)",
                           p->tolerance);
        for (int j = 0; j < p->model; j++)
            if (!(p->tau_init_ns[j] > 0.0) || !isfinite(p->tau_init_ns[j]))
                return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                               "tau_init_ns[%d] must be > 0 (got %g)", j, p->tau_init_ns[j]);
        if (p->model == 2 && !(p->fraction_init > 0.0 && p->fraction_init < 1.0))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "fraction_init must lie in (0, 1) (got %g)", p->fraction_init);
        if (p->cuda_variant < 0 || p->cuda_variant > 2)
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "cuda_variant must be 0, 1 or 2 (got %d)", p->cuda_variant);
    }
    return FM_OK;
}

static int is_direct(fm_flim_method m)
{
    return m == FM_FLIM_IEM || m == FM_FLIM_CMM || m == FM_FLIM_RLD || m == FM_FLIM_PHASOR ||
           m == FM_FLIM_BCMM1 || m == FM_FLIM_BCMM2;
}

/* invalid_values: pixels without a lifetime, i.e. NaN in TAU (or, when TAU is not requested, in
 * the first requested map). Counted here once for every backend and method. */
static long long count_invalid(const fm_flim_outputs *out, int n_pixels)
{
    const float *map = out->map[FM_FLIM_OUT_TAU];
    for (int j = 0; !map && j < FM_FLIM_OUT_COUNT; j++)
        map = out->map[j];
    long long invalid = 0;
#pragma omp parallel for schedule(static) reduction(+ : invalid)
    for (int p = 0; p < n_pixels; p++)
        invalid += isnan(map[p]) ? 1 : 0;
    return invalid;
}

static fm_status run_cpu(const fm_flim_job *job, char *msg, size_t msg_len)
{
    return is_direct(job->method) ? fm_flim_direct_cpu(job, msg, msg_len)
                                  : fm_flim_fit_cpu(job, msg, msg_len);
}

fm_status fm_flim_run(fm_flim_method method, const fm_flim_params *params, const float *counts,
                      int n_pixels, const unsigned char *mask, const int *segment, int n_segments,
                      fm_flim_outputs *out, fm_backend backend, fm_tick_fn tick, void *tick_user,
                      fm_run_info *info, char *msg, size_t msg_len)
{
    return fm_flim_run_typed(method, params, counts, FM_PIXEL_F32, n_pixels, mask, segment,
                             n_segments, out, backend, tick, tick_user, info, msg, msg_len);
}

fm_status fm_flim_run_typed(fm_flim_method method, const fm_flim_params *params,
                            const void *counts, fm_pixel_type counts_type, int n_pixels,
                            const unsigned char *mask, const int *segment, int n_segments,
                            fm_flim_outputs *out, fm_backend backend, fm_tick_fn tick,
                            void *tick_user, fm_run_info *info, char *msg, size_t msg_len)
{
    fm_run_info local;
    const double start = fm_now_ms();
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);

    fm_status status = fm_flim_check(method, params, n_pixels, msg, msg_len);
    if (status != FM_OK)
        return status;
    if (!counts)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "input counts are NULL");
    if (counts_type != FM_PIXEL_F32 && counts_type != FM_PIXEL_U16)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "counts must be float32 or uint16 (got pixel type %d)", (int)counts_type);
    int wanted = 0;
    for (int j = 0; out && j < FM_FLIM_OUT_COUNT; j++)
        wanted += out->map[j] != NULL;
    if (!wanted)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "no output map was requested");
    if (method == FM_FLIM_GA && (!segment || n_segments < 1))
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "global analysis needs a segment map and n_segments >= 1 (got %d)",
                       n_segments);

    const fm_flim_job job = {
        .method = method,
        .params = params,
        .counts = counts_type == FM_PIXEL_F32 ? (const float *)counts : NULL,
        .counts_data = counts,
        .counts_type = counts_type,
        .n_pixels = n_pixels,
        .mask = mask,
        .segment = segment,
        .n_segments = n_segments,
        .out = out,
        .tick = tick,
        .tick_user = tick_user,
    };
    if (!is_direct(method)) {
        /* The fits define no phasor maps: NaN there, as for every map a method does not define
         * (the fit half writes only its own, so a caller's buffer would keep stale values). */
        static const int phasor_maps[] = {FM_FLIM_OUT_PHASOR_G, FM_FLIM_OUT_PHASOR_S,
                                          FM_FLIM_OUT_TAU_PHASE, FM_FLIM_OUT_TAU_MOD};
        for (size_t j = 0; j < sizeof phasor_maps / sizeof phasor_maps[0]; j++)
            for (int q = 0; out->map[phasor_maps[j]] && q < n_pixels; q++)
                out->map[phasor_maps[j]][q] = NAN;
    }
    status = fm_backend_resolve(backend, info, msg, msg_len);
    if (status != FM_OK)
        goto done;
#if FM_HAVE_CUDA
    if (info->backend_used == FM_BACKEND_CUDA) {
        char why[FM_MSG_LEN] = "";
        status = is_direct(method) ? fm_flim_direct_cuda(&job, info, why, sizeof why)
                                   : fm_flim_fit_cuda(&job, info, why, sizeof why);
        /* On a GPU failure under AUTO the CPU run below overwrites any partial output. */
        if (fm_backend_cuda_settled(status, backend, info, why, msg, msg_len))
            goto done;
    }
#endif
    status = run_cpu(&job, msg, msg_len);
done:
    if (status == FM_OK)
        info->invalid_values = count_invalid(out, n_pixels);
    info->elapsed_ms = fm_now_ms() - start;
    return status;
}
