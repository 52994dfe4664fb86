/* OCT entry points: validation, the k-grid positions, per-calibration tables, backend choice,
 * CUDA-to-CPU fallback and the run report. */
#include "oct.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../device.h"
#include "../device_private.h"
#include "fm_config.h"
#include "oct_impl.h"
#include "oct_math.h"

static int is_power_of_two(int n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

fm_status fm_oct_k_positions(const double *lambda_nm, int n_pixels, double *k_source, char *msg,
                             size_t msg_len)
{
    if (!lambda_nm || !k_source)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "lambda_nm or k_source is NULL");
    if (n_pixels < 2)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "n_pixels must be >= 2 (got %d)",
                       n_pixels);
    const int rising = lambda_nm[1] > lambda_nm[0];
    for (int i = 0; i < n_pixels; i++) {
        if (!(lambda_nm[i] > 0.0) || !isfinite(lambda_nm[i]))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "lambda_nm[%d] must be a finite wavelength > 0 (got %g)", i,
                           lambda_nm[i]);
        if (i > 0 &&
            (rising ? !(lambda_nm[i] > lambda_nm[i - 1]) : !(lambda_nm[i] < lambda_nm[i - 1])))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "lambda_nm is not strictly monotonic at pixel %d (%g after %g)", i,
                           lambda_nm[i], lambda_nm[i - 1]);
    }
    /* k = 2 pi / lambda is monotonic too; walk the pixels once while the uniform k grid from
     * k(first) to k(last) advances, interpolating the pixel index linearly in k. */
    const double k_first = 1.0 / lambda_nm[0], k_last = 1.0 / lambda_nm[n_pixels - 1];
    int i = 0;
    for (int m = 0; m < n_pixels; m++) {
        const double k = k_first + (k_last - k_first) * m / (n_pixels - 1);
        if (m == n_pixels - 1) {
            k_source[m] = n_pixels - 1;
            break;
        }
        while (i < n_pixels - 2 &&
               (k_last > k_first ? 1.0 / lambda_nm[i + 1] < k : 1.0 / lambda_nm[i + 1] > k))
            i++;
        const double k0 = 1.0 / lambda_nm[i], k1 = 1.0 / lambda_nm[i + 1];
        double s = i + (k - k0) / (k1 - k0);
        k_source[m] = s < 0 ? 0 : (s > n_pixels - 1 ? n_pixels - 1 : s);
    }
    return FM_OK;
}

fm_status fm_oct_check(const fm_oct_params *params, char *msg, size_t msg_len)
{
    if (!params)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "parameters are missing");
    const int n = params->n_pixels;
    if (!is_power_of_two(n) || n < 256 || n > 8192)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "n_pixels must be a power of two between 256 and 8192 (got %d)", n);
    if (!params->k_source)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "k_source is missing");
    for (int m = 0; m < n; m++) {
        const double s = params->k_source[m];
        if (!(s >= 0.0 && s <= n - 1))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "k_source[%d] = %g lies outside the pixels 0..%d", m, s, n - 1);
        if (m > 0 && !(s > params->k_source[m - 1]))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "k_source must increase strictly (k_source[%d] = %g after %g): "
                           "wavelengths not monotonic?",
                           m, s, params->k_source[m - 1]);
    }
    if ((unsigned)params->resample > FM_OCT_RESAMPLE_ZEROPAD)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "resample: unknown method %d",
                       (int)params->resample);
    if (params->resample == FM_OCT_RESAMPLE_TDI &&
        (params->taps < 3 || params->taps % 2 == 0 || params->taps > n + 1))
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "taps (TDI cutoff L) must be odd and between 3 and %d (got %d)", n + 1,
                       params->taps);
    if ((unsigned)params->window > FM_OCT_WINDOW_GAUSSIAN)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "window: unknown window %d",
                       (int)params->window);
    if (params->window == FM_OCT_WINDOW_GAUSSIAN &&
        !(params->gaussian_sigma > 0.0 && isfinite(params->gaussian_sigma)))
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "gaussian_sigma must be a finite fraction > 0 (got %g)",
                       params->gaussian_sigma);
    if (!isfinite(params->dispersion_a2) || !isfinite(params->dispersion_a3))
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "dispersion_a2 and dispersion_a3 must be finite (got %g, %g)",
                       params->dispersion_a2, params->dispersion_a3);
    if ((unsigned)params->background > FM_OCT_BACKGROUND_NONE)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "background: unknown mode %d",
                       (int)params->background);
    if (params->background == FM_OCT_BACKGROUND_GIVEN && !params->background_spectrum)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "background_spectrum is missing (background mode 'given')");
    if (!isfinite(params->db_floor) || !isfinite(params->db_ceiling))
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "db_floor and db_ceiling must be finite");
    return FM_OK;
}

void fm_oct_tables_free(fm_oct_tables *t)
{
    free(t->tdi_start);
    free(t->tdi_coef_m);
    free(t->tdi_coef_t);
    free(t->lin_index);
    free(t->lin_frac);
    free(t->zp_index);
    free(t->zp_frac);
    free(t->window);
    free(t->disp_cos);
    free(t->disp_sin);
    memset(t, 0, sizeof *t);
}

fm_status fm_oct_tables_build(const fm_oct_params *p, fm_oct_tables *t, char *msg, size_t msg_len)
{
    const int n = p->n_pixels;
    const int tdi = p->resample == FM_OCT_RESAMPLE_TDI;
    const int disp = p->dispersion_a2 != 0.0 || p->dispersion_a3 != 0.0;
    memset(t, 0, sizeof *t);
    t->n = n;
    t->taps = tdi ? (p->taps < n ? p->taps : n) : 0;
    t->lin_index = malloc(sizeof(int) * n);
    t->lin_frac = malloc(sizeof(float) * n);
    t->zp_index = malloc(sizeof(int) * n);
    t->zp_frac = malloc(sizeof(float) * n);
    t->window = malloc(sizeof(float) * n);
    if (tdi) {
        t->tdi_start = malloc(sizeof(int) * n);
        t->tdi_coef_m = malloc(sizeof(float) * n * t->taps);
        t->tdi_coef_t = malloc(sizeof(float) * n * t->taps);
    }
    if (disp) {
        t->disp_cos = malloc(sizeof(float) * n);
        t->disp_sin = malloc(sizeof(float) * n);
    }
    if (!t->lin_index || !t->lin_frac || !t->zp_index || !t->zp_frac || !t->window ||
        (tdi && (!t->tdi_start || !t->tdi_coef_m || !t->tdi_coef_t)) ||
        (disp && (!t->disp_cos || !t->disp_sin))) {
        fm_oct_tables_free(t);
        return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for the %d-pixel tables", n);
    }
    for (int m = 0; m < n; m++) {
        const double s = p->k_source[m];
        int i = (int)floor(s);
        i = i > n - 2 ? n - 2 : i;
        t->lin_index[m] = i;
        t->lin_frac[m] = (float)(s - i);
        /* The x4 zero-padded A-line has sample 4j at source pixel j. */
        int i4 = (int)floor(4.0 * s);
        i4 = i4 > 4 * n - 2 ? 4 * n - 2 : i4;
        t->zp_index[m] = i4;
        t->zp_frac[m] = (float)(4.0 * s - i4);
        t->window[m] = (float)fm_oct_window_weight((int)p->window, p->gaussian_sigma, m, n);
        if (disp) {
            /* Multiplying by exp(-i phi) cancels the dispersion phase phi(k). */
            const double phi = fm_oct_dispersion_phase(p->dispersion_a2, p->dispersion_a3, m, n);
            t->disp_cos[m] = (float)cos(phi);
            t->disp_sin[m] = (float)-sin(phi);
        }
        if (tdi) {
            /* Rectangular cutoff window of L taps centred on the nearest sample; at the ends of
             * the A-line it slides inward so every tap reads a real sample. */
            int start = (int)floor(s + 0.5) - (t->taps - 1) / 2;
            start = start < 0 ? 0 : (start > n - t->taps ? n - t->taps : start);
            t->tdi_start[m] = start;
            for (int k = 0; k < t->taps; k++) {
                const float c = (float)fm_oct_tdi_coefficient(s - (start + k), n);
                t->tdi_coef_m[(size_t)m * t->taps + k] = c;
                t->tdi_coef_t[(size_t)k * n + m] = c;
            }
        }
    }
    if (tdi)
        for (int m0 = 0; m0 < n; m0 += FM_OCT_TILE) {
            const int last = m0 + FM_OCT_TILE - 1 < n ? m0 + FM_OCT_TILE - 1 : n - 1;
            const int span = t->tdi_start[last] + t->taps - t->tdi_start[m0];
            t->span_max = span > t->span_max ? span : t->span_max;
        }
    return FM_OK;
}

fm_status fm_oct_run_job(const fm_oct_job *job, fm_backend backend, fm_run_info *info, char *msg,
                         size_t msg_len)
{
    fm_run_info local;
    fm_oct_tables tables;
    double start = fm_now_ms();
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);

    fm_status status = fm_oct_check(&job->params, msg, msg_len);
    if (status != FM_OK)
        return status;
    if (!job->spectra || !job->bscan_db)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "spectra or bscan_db is NULL");
    if (job->n_alines <= 0 || job->n_bscans <= 0)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "n_alines and n_bscans must be > 0 (got %d, %d)", job->n_alines,
                       job->n_bscans);
    if (job->type != FM_PIXEL_U8 && job->type != FM_PIXEL_U16 && job->type != FM_PIXEL_F32)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "unsupported pixel type %d",
                       (int)job->type);
    const fm_oct_layout *l = &job->layout;
    if (l->enface_db && (!l->depth_down || l->enface_first < 0 ||
                         l->enface_first >= l->enface_last ||
                         l->enface_last > job->params.n_pixels / 2))
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "en-face depth range %d..%d is empty or outside the %d depth bins",
                       l->enface_first, l->enface_last, job->params.n_pixels / 2);
    status = fm_backend_resolve(backend, info, msg, msg_len);
    if (status != FM_OK)
        return status;
    status = fm_oct_tables_build(&job->params, &tables, msg, msg_len);
    if (status != FM_OK)
        return status;
#if FM_HAVE_CUDA
    if (info->backend_used == FM_BACKEND_CUDA) {
        char why[FM_MSG_LEN] = "";
        status = fm_oct_cuda_run(job, &tables, info, why, sizeof why);
        /* On a GPU failure under AUTO, redo everything on the CPU below. */
        if (fm_backend_cuda_settled(status, backend, info, why, msg, msg_len))
            goto done;
    }
#endif
    status = fm_oct_cpu_run(job, &tables, msg, msg_len);
#if FM_HAVE_CUDA
done:
#endif
    fm_oct_tables_free(&tables);
    info->elapsed_ms = fm_now_ms() - start;
    return status;
}

/* One job from the public entry points' arguments. */
static fm_status run_bscans(const fm_oct_params *params, const void *spectra, fm_pixel_type type,
                            int n_alines, int n_bscans, float *bscan_db, fm_oct_layout layout,
                            fm_backend backend, fm_tick_fn tick, void *tick_user,
                            fm_run_info *info, char *msg, size_t msg_len)
{
    if (!params)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "parameters are missing");
    fm_oct_job job = {.params = *params,
                      .spectra = spectra,
                      .type = type,
                      .n_alines = n_alines,
                      .n_bscans = n_bscans,
                      .bscan_db = bscan_db,
                      .layout = layout,
                      .tick = tick,
                      .tick_user = tick_user,
                      .fft = FM_OCT_FFT_DEFAULT};
    return fm_oct_run_job(&job, backend, info, msg, msg_len);
}

fm_status fm_oct_bscans(const fm_oct_params *params, const void *spectra, fm_pixel_type type,
                        int n_alines, int n_bscans, float *bscan_db, fm_backend backend,
                        fm_tick_fn tick, void *tick_user, fm_run_info *info, char *msg,
                        size_t msg_len)
{
    fm_oct_layout depth_fastest = {0, NULL, 0, 0};
    return run_bscans(params, spectra, type, n_alines, n_bscans, bscan_db, depth_fastest, backend,
                      tick, tick_user, info, msg, msg_len);
}

fm_status fm_oct_bscans_depth_down(const fm_oct_params *params, const void *spectra,
                                   fm_pixel_type type, int n_alines, int n_bscans,
                                   float *bscan_db, float *enface_db, int enface_first,
                                   int enface_last, fm_backend backend, fm_tick_fn tick,
                                   void *tick_user, fm_run_info *info, char *msg, size_t msg_len)
{
    fm_oct_layout shown = {1, enface_db, enface_first, enface_last};
    return run_bscans(params, spectra, type, n_alines, n_bscans, bscan_db, shown, backend, tick,
                      tick_user, info, msg, msg_len);
}
