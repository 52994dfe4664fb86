/* Spectral-domain OCT: raw spectra to B-scans (background subtraction, spectral window, lambda->k
 * resampling, dispersion compensation, FFT, log magnitude), CPU twin and CUDA.
 * Time-domain interpolation after Li, Shi, Zhang, "Time-domain interpolation on graphics
 * processing unit", J. Innov. Opt. Health Sci. 4(1) 89 (2011). */
#pragma once

#include "../fm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    FM_OCT_RESAMPLE_TDI = 0, /* the paper's windowed time-domain interpolation, L taps */
    FM_OCT_RESAMPLE_LINEAR,
    FM_OCT_RESAMPLE_CUBIC,   /* Catmull-Rom */
    FM_OCT_RESAMPLE_ZEROPAD, /* FFT zero-padding x4 then linear (the paper's baseline) */
} fm_oct_resample;

typedef enum {
    FM_OCT_WINDOW_NONE = 0,
    FM_OCT_WINDOW_HANN,
    FM_OCT_WINDOW_GAUSSIAN,
} fm_oct_window;

typedef enum {
    FM_OCT_BACKGROUND_BSCAN = 0, /* mean spectrum of each B-scan (default) */
    FM_OCT_BACKGROUND_GIVEN,     /* params->background (mean of the file or a reference file) */
    FM_OCT_BACKGROUND_NONE,
} fm_oct_background;

typedef struct {
    int n_pixels;              /* spectrometer pixels per A-line (e.g. 2048), power of two */
    const double *k_source;    /* n_pixels: fractional source-pixel position s(n) of each point of
                                  the uniform k grid (built by fm_oct_k_positions) */
    fm_oct_resample resample;
    int taps;                  /* TDI cutoff L: odd, >= 3 (11, 21, 31 in the paper) */
    fm_oct_window window;
    double gaussian_sigma;     /* Gaussian window width as a fraction of n_pixels */
    double dispersion_a2, dispersion_a3; /* phase a2 (k-k0)^2 + a3 (k-k0)^3, k normalised -1..1 */
    fm_oct_background background;
    const float *background_spectrum; /* n_pixels, for FM_OCT_BACKGROUND_GIVEN */
    double db_floor, db_ceiling;      /* display mapping (outputs stay in dB; used for 8-bit) */
} fm_oct_params;

/* From wavelength per pixel (nm, strictly monotonic) build s(n): for each of n uniform k points
 * between k(first) and k(last), the fractional pixel index where that k lies. */
fm_status fm_oct_k_positions(const double *lambda_nm, int n_pixels, double *k_source, char *msg,
                             size_t msg_len);

fm_status fm_oct_check(const fm_oct_params *params, char *msg, size_t msg_len);

/* spectra: n_bscans x n_alines x n_pixels samples (uint16 or float32), A-line-major.
 * bscan_db: n_bscans x n_alines x (n_pixels/2) floats: depth is the fastest index
 * (out[((b * n_alines) + a) * (n_pixels/2) + z]), magnitude in dB (20 log10 |FFT|). */
fm_status fm_oct_bscans(const fm_oct_params *params, const void *spectra, fm_pixel_type type,
                        int n_alines, int n_bscans, float *bscan_db, fm_backend backend,
                        fm_tick_fn tick, void *tick_user, fm_run_info *info, char *msg,
                        size_t msg_len);

/* The same, as the app shows it: bscan_db with depth down and A-lines across
 * (n_bscans x (n_pixels/2) x n_alines: out[(b * (n_pixels/2) + z) * n_alines + a]), and, when
 * enface_db is not NULL, the en-face image (n_bscans x n_alines): each A-line's mean power over
 * depth bins [enface_first, enface_last), in dB. */
fm_status fm_oct_bscans_depth_down(const fm_oct_params *params, const void *spectra,
                                   fm_pixel_type type, int n_alines, int n_bscans,
                                   float *bscan_db, float *enface_db, int enface_first,
                                   int enface_last, fm_backend backend, fm_tick_fn tick,
                                   void *tick_user, fm_run_info *info, char *msg,
                                   size_t msg_len);

/* One A-line's intermediate spectra (GUI spectrum plot): background-subtracted and resampled. */
fm_status fm_oct_aline_stages(const fm_oct_params *params, const float *spectrum,
                              const float *background, float *subtracted, float *resampled,
                              char *msg, size_t msg_len);

#ifdef __cplusplus
}
#endif
