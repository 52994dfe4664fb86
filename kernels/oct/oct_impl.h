/* Private to kernels/oct, its tests and bench: one OCT job, the per-calibration tables, the FFT
 * fallback and the bench hooks. */
#pragma once

#include "oct.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which FFT the CPU twin uses (tests compare them; the public API uses DEFAULT). */
typedef enum {
    FM_OCT_FFT_DEFAULT = 0, /* FFTW where the build found it, else the built-in radix-2 */
    FM_OCT_FFT_BUILTIN,     /* always the built-in radix-2 FFT */
} fm_oct_fft_choice;

/* How the B-scans come out: depth fastest (the kernels' order, the default), or as the app shows
 * them (fm_oct_bscans_depth_down), with the en-face image. */
typedef struct {
    int depth_down;
    float *enface_db; /* or NULL */
    int enface_first, enface_last;
} fm_oct_layout;

typedef struct {
    fm_oct_params params;
    const void *spectra;
    fm_pixel_type type;
    int n_alines, n_bscans;
    float *bscan_db;
    fm_oct_layout layout;
    fm_tick_fn tick;
    void *tick_user;
    fm_oct_fft_choice fft; /* CPU twin only */
} fm_oct_job;

/* Built once per calibration on the host and shared by both backends, so that both use the very
 * same positions, fractions and coefficients. */
typedef struct {
    int n;             /* n_pixels */
    int taps;          /* TDI taps actually used: min(L, n) */
    int span_max;      /* TDI: most source samples any 128 consecutive outputs touch */
    int *tdi_start;    /* n: first source sample of output m's window */
    float *tdi_coef_m; /* n x taps, output-major (CPU) */
    float *tdi_coef_t; /* taps x n, tap-major (GPU: coalesced and staged per tile) */
    int *lin_index;    /* n: floor(s(m)) clamped to n-2 */
    float *lin_frac;   /* n: s(m) - lin_index */
    int *zp_index;     /* n: floor(4 s(m)) clamped to 4n-2 (zero-padded x4 grid) */
    float *zp_frac;
    float *window;              /* n: spectral window weight per source pixel */
    float *disp_cos, *disp_sin; /* n: exp(-i phi(m)) when dispersion is on, else NULL */
} fm_oct_tables;

/* The GPU TDI kernel's tile of outputs (tables.span_max is computed for it). */
#define FM_OCT_TILE 128

fm_status fm_oct_tables_build(const fm_oct_params *params, fm_oct_tables *tables, char *msg,
                              size_t msg_len);
void fm_oct_tables_free(fm_oct_tables *tables);

/* 1 when this build's CPU twin links FFTW (fftw3f). */
int fm_oct_have_fftw(void);

/* Built-in FFT: in-place complex radix-2 over n (power of two) interleaved re,im floats;
 * sign -1 forward, +1 inverse (unnormalised). twiddle: n/2 complex exp(-2 pi i k/n) from
 * fm_oct_fft_twiddles. */
void fm_oct_fft_twiddles(int n, float *twiddle);
void fm_oct_fft_radix2(float *z, int n, int sign, const float *twiddle);

fm_status fm_oct_cpu_run(const fm_oct_job *job, const fm_oct_tables *tables, char *msg,
                         size_t msg_len);
/* info (may be NULL) gets the upload and download waits and whether the spectra were resident. */
fm_status fm_oct_cuda_run(const fm_oct_job *job, const fm_oct_tables *tables, fm_run_info *info,
                          char *msg, size_t msg_len);

/* Validates, resolves the backend, builds the tables, runs, falls back (AUTO) and reports. */
fm_status fm_oct_run_job(const fm_oct_job *job, fm_backend backend, fm_run_info *info, char *msg,
                         size_t msg_len);

/* Bench only. Per-step GPU times of one B-scan (medians of reps after warm-up, CUDA events):
 * step_ms[0] upload, [1] background, [2] resampling, [3] FFT, [4] log image, [5] download. */
fm_status fm_oct_cuda_time_steps(const fm_oct_params *params, const void *spectra,
                                 fm_pixel_type type, int n_alines, int reps, double step_ms[6],
                                 char *msg, size_t msg_len);

/* Bench only: a CUDA pipeline kept between calls (allocations and cuFFT plans made once), to time
 * the steady stream apart from its set-up. */
typedef struct fm_oct_cuda_stream fm_oct_cuda_stream;
fm_status fm_oct_cuda_stream_open(const fm_oct_params *params, fm_pixel_type type, int n_alines,
                                  int bscans_hint, fm_oct_cuda_stream **out, char *msg,
                                  size_t msg_len);
fm_status fm_oct_cuda_stream_run(fm_oct_cuda_stream *stream, const void *spectra, int n_bscans,
                                 float *bscan_db, char *msg, size_t msg_len);
void fm_oct_cuda_stream_close(fm_oct_cuda_stream *stream);
/* The same kept pipeline with the B-scans as the app shows them (layout: depth down, en-face),
 * for the live context (oct_live.c), which submits ahead: bscans_hint -S gives S slots (at most
 * 3) of one B-scan each, each on its own stream. enqueue queues one B-scan in slot
 * (upload, compute, download into bscan_db and enface_db, page-locked host memory; enface_db
 * NULL without en-face) and returns at once; wait waits for the slot's last B-scan. */
fm_status fm_oct_cuda_stream_open_shown(const fm_oct_params *params, fm_pixel_type type,
                                        int n_alines, int bscans_hint, const fm_oct_layout *layout,
                                        fm_oct_cuda_stream **out, char *msg, size_t msg_len);
int fm_oct_cuda_stream_slots(const fm_oct_cuda_stream *stream);
fm_status fm_oct_cuda_stream_enqueue(fm_oct_cuda_stream *stream, int slot, const void *spectra,
                                     float *bscan_db, float *enface_db, const fm_oct_layout *layout,
                                     char *msg, size_t msg_len);
fm_status fm_oct_cuda_stream_wait(fm_oct_cuda_stream *stream, int slot, char *msg, size_t msg_len);

#ifdef __cplusplus
}
#endif
