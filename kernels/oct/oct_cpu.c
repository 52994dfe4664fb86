/* CPU twin of OCT: per B-scan background, then OpenMP over A-lines (window, lambda->k
 * resampling, dispersion, FFT by FFTW where built or the built-in radix-2, magnitude in dB). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../device.h"
#include "oct_impl.h"
#include "oct_math.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#if FM_OCT_HAVE_FFTW
#include <fftw3.h>
#endif

int fm_oct_have_fftw(void)
{
    return FM_OCT_HAVE_FFTW;
}

/* The FFTs of one run: FFTW plans (made once, used from all threads with the new-array execute
 * calls, which are thread-safe) or the built-in FFT's twiddles. */
typedef struct {
    int n, fftw;
    float *tw_n, *tw_4n;
#if FM_OCT_HAVE_FFTW
    fftwf_plan r2c, c2c, zp_c2r;
#endif
} cpu_fft;

/* One thread's buffers; 64-byte aligned so FFTW's new-array execute matches its plans. */
typedef struct {
    float *x, *y; /* n: prepared source A-line, resampled A-line */
    float *spec;  /* 2n: complex spectrum (n/2+1 used by r2c, n by c2c) */
    float *big;   /* 8n: zero-padded spectrum (2n+1 complex) or the x4 complex A-line */
    float *x4;    /* 4n: zero-padded A-line (FFTW c2r output) */
    float *block; /* DEPTH_DOWN_ALINES x n/2: a block's dB lines before they go depth down */
} line_scratch;

/* A-lines per task; depth down, each depth row of a block is one 64-byte line of the image,
 * where one A-line at a time would write a float per row of it. */
#define DEPTH_DOWN_ALINES 16
#define DEPTH_FASTEST_ALINES 4

static float *alloc_floats(size_t count)
{
    size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
    float *p = aligned_alloc(64, bytes);
    if (p)
        memset(p, 0, bytes);
    return p;
}

static void scratch_free(line_scratch *s)
{
    free(s->x);
    free(s->y);
    free(s->spec);
    free(s->big);
    free(s->x4);
    free(s->block);
}

static int scratch_alloc(line_scratch *s, int n)
{
    s->x = alloc_floats(n);
    s->y = alloc_floats(n);
    s->spec = alloc_floats(2 * (size_t)n + 2);
    s->big = alloc_floats(8 * (size_t)n + 2);
    s->x4 = alloc_floats(4 * (size_t)n);
    s->block = alloc_floats((size_t)DEPTH_DOWN_ALINES * (n / 2));
    return s->x && s->y && s->spec && s->big && s->x4 && s->block;
}

static void fft_free(cpu_fft *f)
{
#if FM_OCT_HAVE_FFTW
    /* Planner calls (destroy included) are not thread-safe: one at a time, process-wide. */
#pragma omp critical(fm_oct_fftw_planner)
    {
        if (f->r2c)
            fftwf_destroy_plan(f->r2c);
        if (f->c2c)
            fftwf_destroy_plan(f->c2c);
        if (f->zp_c2r)
            fftwf_destroy_plan(f->zp_c2r);
    }
#endif
    free(f->tw_n);
    free(f->tw_4n);
    memset(f, 0, sizeof *f);
}

static int fft_init(cpu_fft *f, int n, fm_oct_fft_choice choice, line_scratch *sample)
{
    memset(f, 0, sizeof *f);
    f->n = n;
#if FM_OCT_HAVE_FFTW
    if (choice == FM_OCT_FFT_DEFAULT) {
        f->fftw = 1;
        /* Planner calls are not thread-safe: one at a time, process-wide. ESTIMATE plans cost
         * microseconds and leave the sample buffers untouched. */
#pragma omp critical(fm_oct_fftw_planner)
        {
            f->r2c =
                fftwf_plan_dft_r2c_1d(n, sample->y, (fftwf_complex *)sample->spec, FFTW_ESTIMATE);
            f->c2c = fftwf_plan_dft_1d(n, (fftwf_complex *)sample->spec,
                                       (fftwf_complex *)sample->spec, FFTW_FORWARD, FFTW_ESTIMATE);
            f->zp_c2r = fftwf_plan_dft_c2r_1d(4 * n, (fftwf_complex *)sample->big, sample->x4,
                                              FFTW_ESTIMATE);
        }
        return f->r2c && f->c2c && f->zp_c2r;
    }
#else
    (void)choice;
    (void)sample;
#endif
    f->tw_n = alloc_floats(n);
    f->tw_4n = alloc_floats(4 * (size_t)n);
    if (!f->tw_n || !f->tw_4n)
        return 0;
    fm_oct_fft_twiddles(n, f->tw_n);
    fm_oct_fft_twiddles(4 * n, f->tw_4n);
    return 1;
}

/* Forward FFT of the real A-line in: spec holds bins 0..n/2 (interleaved re, im). */
static void fft_real(const cpu_fft *f, float *in, float *spec)
{
    const int n = f->n;
#if FM_OCT_HAVE_FFTW
    if (f->fftw) {
        fftwf_execute_dft_r2c(f->r2c, in, (fftwf_complex *)spec);
        return;
    }
#endif
    for (int i = 0; i < n; i++) {
        spec[2 * i] = in[i];
        spec[2 * i + 1] = 0.0f;
    }
    fm_oct_fft_radix2(spec, n, -1, f->tw_n);
}

/* In-place forward FFT of n complex values. */
static void fft_complex(const cpu_fft *f, float *spec)
{
#if FM_OCT_HAVE_FFTW
    if (f->fftw) {
        fftwf_execute_dft(f->c2c, (fftwf_complex *)spec, (fftwf_complex *)spec);
        return;
    }
#endif
    fm_oct_fft_radix2(spec, f->n, -1, f->tw_n);
}

/* The paper's baseline: x4 zero-padding of the spectrum of x, so that x4[4 j] = x[j] and the
 * points between are the band-limited interpolation; returns the 4n real samples. */
static const float *zero_pad4(const cpu_fft *f, line_scratch *s)
{
    const int n = f->n;
    const float scale = 1.0f / n;
    fft_real(f, s->x, s->spec);
#if FM_OCT_HAVE_FFTW
    if (f->fftw) {
        /* Half spectrum of the 4n real signal: bins below n/2 copied, the Nyquist bin split
         * between +n/2 and -n/2 (the c2r mirror supplies the second half), the rest zero. */
        memset(s->big, 0, sizeof(float) * (4 * (size_t)n + 2));
        for (int k = 0; k < n / 2; k++) {
            s->big[2 * k] = s->spec[2 * k] * scale;
            s->big[2 * k + 1] = s->spec[2 * k + 1] * scale;
        }
        s->big[n] = s->spec[n] * 0.5f * scale;
        s->big[n + 1] = 0.0f;
        fftwf_execute_dft_c2r(f->zp_c2r, (fftwf_complex *)s->big, s->x4);
        return s->x4;
    }
#endif
    float *q = s->big;
    memset(q, 0, sizeof(float) * 8 * (size_t)n);
    for (int k = 0; k < n / 2; k++) {
        q[2 * k] = s->spec[2 * k] * scale;
        q[2 * k + 1] = s->spec[2 * k + 1] * scale;
        if (k > 0) { /* negative frequencies: the conjugate mirror of the real input */
            q[2 * (4 * n - k)] = s->spec[2 * k] * scale;
            q[2 * (4 * n - k) + 1] = -s->spec[2 * k + 1] * scale;
        }
    }
    q[n] = q[2 * (4 * n - n / 2)] = s->spec[n] * 0.5f * scale;
    fm_oct_fft_radix2(q, 4 * n, +1, f->tw_4n);
    for (int i = 0; i < 4 * n; i++)
        s->x4[i] = q[2 * i];
    return s->x4;
}

/* s->x (prepared) -> s->y (uniform k) with the chosen method. */
static void resample_line(const fm_oct_params *p, const fm_oct_tables *t, const cpu_fft *f,
                          line_scratch *s)
{
    const int n = t->n;
    switch (p->resample) {
    case FM_OCT_RESAMPLE_TDI:
        for (int m = 0; m < n; m++)
            s->y[m] = fm_oct_tdi_point(s->x + t->tdi_start[m], t->tdi_coef_m + (size_t)m * t->taps,
                                       1, t->taps);
        break;
    case FM_OCT_RESAMPLE_LINEAR:
        for (int m = 0; m < n; m++)
            s->y[m] = fm_oct_linear(s->x, t->lin_index[m], t->lin_frac[m]);
        break;
    case FM_OCT_RESAMPLE_CUBIC:
        for (int m = 0; m < n; m++)
            s->y[m] = fm_oct_cubic(s->x, n, t->lin_index[m], t->lin_frac[m]);
        break;
    case FM_OCT_RESAMPLE_ZEROPAD: {
        const float *x4 = zero_pad4(f, s);
        for (int m = 0; m < n; m++)
            s->y[m] = fm_oct_linear(x4, t->zp_index[m], t->zp_frac[m]);
        break;
    }
    }
}

static float sample_at(const void *base, fm_pixel_type type, size_t i)
{
    switch (type) {
    case FM_PIXEL_U8:
        return ((const uint8_t *)base)[i];
    case FM_PIXEL_U16:
        return ((const uint16_t *)base)[i];
    default:
        return ((const float *)base)[i];
    }
}

/* Resampled A-line (in s->y) -> dB for the n/2 depth bins. */
static void transform_line(const fm_oct_tables *t, const cpu_fft *f, line_scratch *s, float *out)
{
    const int n = t->n;
    if (t->disp_cos) {
        for (int m = 0; m < n; m++) {
            s->spec[2 * m] = s->y[m] * t->disp_cos[m];
            s->spec[2 * m + 1] = s->y[m] * t->disp_sin[m];
        }
        fft_complex(f, s->spec);
    } else {
        fft_real(f, s->y, s->spec);
    }
    for (int z = 0; z < n / 2; z++)
        out[z] = fm_oct_db(s->spec[2 * z], s->spec[2 * z + 1]);
}

/* Per-pixel mean over the A-lines of one B-scan: summed in double, in A-line order (the CUDA
 * kernel sums in the same order), then rounded once. */
static void bscan_background(const void *raw, fm_pixel_type type, int n_alines, int n, float *bg)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) {
        double sum = 0.0;
        for (int a = 0; a < n_alines; a++)
            sum += sample_at(raw, type, (size_t)a * n + i);
        bg[i] = (float)(sum / n_alines);
    }
}

/* En-face of one dB line, in the CUDA kernel's order of additions (oct_math.h). */
static float enface_line(const float *line, int first, int last)
{
    double lane[FM_OCT_ENFACE_LANES] = {0};
    for (int z = first; z < last; z++)
        lane[(z - first) % FM_OCT_ENFACE_LANES] += fm_oct_power(line[z]);
    for (int half = FM_OCT_ENFACE_LANES / 2; half > 0; half /= 2)
        for (int l = 0; l < half; l++)
            lane[l] += lane[l + half];
    return fm_oct_enface_db(lane[0], last - first);
}

/* A block of dB lines (depth fastest) into the B-scan image with depth down, and its en-face. */
static void put_depth_down(const fm_oct_layout *layout, const float *block, int a0, int a1,
                           int n_alines, int depth, float *bscan, float *enface)
{
    for (int z = 0; z < depth; z++)
        for (int a = a0; a < a1; a++)
            bscan[(size_t)z * n_alines + a] = block[(size_t)(a - a0) * depth + z];
    for (int a = a0; enface && a < a1; a++)
        enface[a] = enface_line(block + (size_t)(a - a0) * depth, layout->enface_first,
                                layout->enface_last);
}

fm_status fm_oct_cpu_run(const fm_oct_job *job, const fm_oct_tables *t, char *msg, size_t msg_len)
{
    fm_status status = FM_OK;
    const fm_oct_params *p = &job->params;
    const int n = p->n_pixels, threads = fm_cpu_threads();
    const size_t line_bytes = (size_t)n * fm_pixel_size(job->type);
    const int per = job->layout.depth_down ? DEPTH_DOWN_ALINES : DEPTH_FASTEST_ALINES;
    line_scratch *scratch = calloc((size_t)threads, sizeof *scratch);
    float *bg = alloc_floats(n);
    cpu_fft fft;
    memset(&fft, 0, sizeof fft);
    int ok = scratch && bg;
    for (int i = 0; ok && i < threads; i++)
        ok = scratch_alloc(&scratch[i], n);
    if (!ok || !fft_init(&fft, n, job->fft, &scratch[0])) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len,
                         "no memory for %d A-line buffers or FFT "
                         "plans (%d pixels)",
                         threads, n);
        goto cleanup;
    }
    if (p->background == FM_OCT_BACKGROUND_GIVEN)
        memcpy(bg, p->background_spectrum, sizeof(float) * n);
    for (int b = 0; b < job->n_bscans; b++) {
        const char *raw = (const char *)job->spectra + (size_t)b * job->n_alines * line_bytes;
        float *out = job->bscan_db + (size_t)b * job->n_alines * (n / 2);
        float *enface = job->layout.enface_db ? job->layout.enface_db + (size_t)b * job->n_alines
                                              : NULL;
        if (p->background == FM_OCT_BACKGROUND_BSCAN)
            bscan_background(raw, job->type, job->n_alines, n, bg);
#pragma omp parallel for schedule(dynamic, 1)
        for (int k = 0; k < (job->n_alines + per - 1) / per; k++) {
#ifdef _OPENMP
            line_scratch *s = &scratch[omp_get_thread_num()];
#else
            line_scratch *s = &scratch[0];
#endif
            const int a0 = k * per, a1 = a0 + per < job->n_alines ? a0 + per : job->n_alines;
            for (int a = a0; a < a1; a++) {
                const char *line = raw + (size_t)a * line_bytes;
                for (int i = 0; i < n; i++)
                    s->x[i] = fm_oct_prepare(sample_at(line, job->type, (size_t)i), bg[i],
                                             t->window[i]);
                resample_line(p, t, &fft, s);
                transform_line(t, &fft, s,
                               job->layout.depth_down ? s->block + (size_t)(a - a0) * (n / 2)
                                                      : out + (size_t)a * (n / 2));
            }
            if (job->layout.depth_down)
                put_depth_down(&job->layout, s->block, a0, a1, job->n_alines, n / 2, out, enface);
        }
        if (job->tick && job->tick(job->tick_user, (double)(b + 1) / job->n_bscans)) {
            status = fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled after B-scan %d of %d",
                             b + 1, job->n_bscans);
            goto cleanup;
        }
    }

cleanup:
    fft_free(&fft);
    for (int i = 0; scratch && i < threads; i++)
        scratch_free(&scratch[i]);
    free(scratch);
    free(bg);
    return status;
}

fm_status fm_oct_aline_stages(const fm_oct_params *params, const float *spectrum,
                              const float *background, float *subtracted, float *resampled,
                              char *msg, size_t msg_len)
{
    fm_oct_tables t;
    cpu_fft fft;
    line_scratch s;
    memset(&fft, 0, sizeof fft);
    memset(&s, 0, sizeof s);
    fm_status status = fm_oct_check(params, msg, msg_len);
    if (status != FM_OK)
        return status;
    if (!spectrum)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "spectrum is NULL");
    status = fm_oct_tables_build(params, &t, msg, msg_len);
    if (status != FM_OK)
        return status;
    const int n = params->n_pixels;
    if (!scratch_alloc(&s, n) || !fft_init(&fft, n, FM_OCT_FFT_DEFAULT, &s)) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for one %d-pixel A-line", n);
        goto cleanup;
    }
    for (int i = 0; i < n; i++) {
        const float d = spectrum[i] - (background ? background[i] : 0.0f);
        if (subtracted)
            subtracted[i] = d;
        s.x[i] = fm_oct_prepare(spectrum[i], background ? background[i] : 0.0f, t.window[i]);
    }
    resample_line(params, &t, &fft, &s);
    if (resampled)
        memcpy(resampled, s.y, sizeof(float) * n);

cleanup:
    fft_free(&fft);
    scratch_free(&s);
    fm_oct_tables_free(&t);
    return status;
}
