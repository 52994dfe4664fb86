/* Fluorescence lifetime maps from TCSPC decay histograms: noniterative estimators (IEM, CMM, RLD,
 * phasor, BCMM) and iterative fits (LSM, MLE, global analysis), CPU twin and CUDA.
 * After Wu, Nowotny, Chen, Li, "GPU acceleration of time-domain fluorescence lifetime imaging",
 * J. Biomed. Opt. 21(1) 017001 (2016); BCMM after Li, Yu, Chen, Opt. Lett. 40(3) 336 (2015). */
#pragma once

#include "../fm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    FM_FLIM_IEM = 0, /* integral equation method (Simpson), mono-exponential, no IRF */
    FM_FLIM_CMM,     /* centre of mass with finite-window correction, no IRF */
    FM_FLIM_RLD,     /* two-gate rapid lifetime determination, no IRF */
    FM_FLIM_PHASOR,  /* g, s at harmonic n; tau_phase, tau_mod */
    FM_FLIM_BCMM1,   /* bi-exponential centre of mass, tau_D known */
    FM_FLIM_BCMM2,   /* bi-exponential centre of mass, tau_D unknown */
    FM_FLIM_LSM,     /* Levenberg-Marquardt weighted least squares, mono or bi, IRF, background */
    FM_FLIM_MLE,     /* Poisson maximum likelihood, mono or bi, IRF, background */
    FM_FLIM_GA,      /* global analysis: lifetimes shared per segment, amplitudes per pixel */
    FM_FLIM_METHOD_COUNT,
} fm_flim_method;

/* Output maps; the caller passes a buffer of n_pixels floats for each one it wants, NULL else.
 * Bi-exponential model: I(t) = A * (fD * exp(-t/tauD) + (1 - fD) * exp(-t/tauF)) (+ background),
 * tauF < tauD (FRET-quenched and unquenched donor). Mono: I(t) = A * exp(-t/tau) (+ b).
 * Pixels not fitted (mask 0, fewer photons than min_photons, no convergence where stated) are NaN. */
typedef enum {
    FM_FLIM_OUT_TAU = 0,      /* ns: mono lifetime; for bi models the amplitude-weighted mean */
    FM_FLIM_OUT_TAU_FAST,     /* ns: tauF (bi) */
    FM_FLIM_OUT_TAU_SLOW,     /* ns: tauD (bi) */
    FM_FLIM_OUT_FRACTION,     /* 1: fD, amplitude fraction of the tauD component (bi) */
    FM_FLIM_OUT_AMPLITUDE,    /* counts: A (the model at t = 0, per bin) */
    FM_FLIM_OUT_INTENSITY,    /* counts: photons in the fit range */
    FM_FLIM_OUT_TAU_AVG_AMP,  /* ns: sum(a_i tau_i) / sum(a_i) */
    FM_FLIM_OUT_TAU_AVG_INT,  /* ns: sum(a_i tau_i^2) / sum(a_i tau_i) */
    FM_FLIM_OUT_CHI2,         /* 1: reduced chi-square (Neyman weights, max(y,1)) */
    FM_FLIM_OUT_ITERATIONS,   /* 1: iterations used */
    FM_FLIM_OUT_CONVERGED,    /* 1: 1 converged, 0 not */
    FM_FLIM_OUT_BACKGROUND,   /* counts per bin (when fitted) */
    FM_FLIM_OUT_PHASOR_G,     /* 1 */
    FM_FLIM_OUT_PHASOR_S,     /* 1 */
    FM_FLIM_OUT_TAU_PHASE,    /* ns: s / (g * omega) */
    FM_FLIM_OUT_TAU_MOD,      /* ns: sqrt(1/(g^2+s^2) - 1) / omega */
    FM_FLIM_OUT_COUNT,
} fm_flim_output;

typedef struct {
    float *map[FM_FLIM_OUT_COUNT];
} fm_flim_outputs;

typedef struct {
    int n_bins;              /* time bins per pixel, >= 8 */
    double bin_width_ns;     /* > 0 */
    int fit_start, fit_end;  /* bins used: [fit_start, fit_end), 0 <= start < end <= n_bins */
    double period_ns;        /* laser period; 0 = n_bins * bin_width_ns (phasor frequency) */
    int harmonic;            /* phasor harmonic n >= 1 */
    double cal_phase_rad;    /* phasor calibration: phase added (0 = none) */
    double cal_modulation;   /* phasor calibration: modulation factor (1 = none) */
    int model;               /* 1 mono, 2 bi (LSM, MLE, GA) */
    double tau_d_ns;         /* BCMM1: known tauD */
    const float *irf;        /* n_bins values summing to 1 (LSM, MLE, GA convolve), or NULL */
    int fit_background;      /* LSM, MLE: fit a constant background per pixel */
    int max_iterations;      /* iterative methods, e.g. 100 */
    double tolerance;        /* relative change of the cost that stops, e.g. 1e-6 */
    double tau_init_ns[2];   /* start values: mono uses [0]; bi uses tauF = [0], tauD = [1] */
    double fraction_init;    /* bi: start fD */
    double min_photons;      /* pixels with fewer photons in the fit range are NaN */
    int cuda_variant;        /* iterative on CUDA: 0 fastest (default), 1 block per pixel,
                                2 thread per pixel (bench compares them) */
} fm_flim_params;

void fm_flim_params_defaults(fm_flim_params *p, int n_bins, double bin_width_ns);
const char *fm_flim_method_name(fm_flim_method m);  /* "iem", "cmm", ... "ga" */

/* counts: n_bins x n_pixels floats, BIN-MAJOR (counts[b * n_pixels + p]), so that one time bin of
 * neighbouring pixels is contiguous (coalesced reads, the paper's layout).
 * mask: n_pixels bytes (0 = skip) or NULL.
 * GA: segment[p] in [0, n_segments) or -1 (not fitted); lifetimes are shared within a segment.
 * Other methods ignore segment/n_segments. */
fm_status fm_flim_run(fm_flim_method method, const fm_flim_params *params, const float *counts,
                      int n_pixels, const unsigned char *mask, const int *segment, int n_segments,
                      fm_flim_outputs *out, fm_backend backend, fm_tick_fn tick, void *tick_user,
                      fm_run_info *info, char *msg, size_t msg_len);

/* The same with the counts in their recorded type: counts_type FM_PIXEL_U16 (uint16_t, the
 * TCSPC histograms as the hardware writes them: half the bytes to move to the GPU) or
 * FM_PIXEL_F32 (fm_flim_run). Same layout, and the same results for the same values. */
fm_status fm_flim_run_typed(fm_flim_method method, const fm_flim_params *params,
                            const void *counts, fm_pixel_type counts_type, int n_pixels,
                            const unsigned char *mask, const int *segment, int n_segments,
                            fm_flim_outputs *out, fm_backend backend, fm_tick_fn tick,
                            void *tick_user, fm_run_info *info, char *msg, size_t msg_len);

/* Validates params (bins, ranges, model, tau_d) with a message naming the field. */
fm_status fm_flim_check(fm_flim_method method, const fm_flim_params *params, int n_pixels,
                        char *msg, size_t msg_len);

#ifdef __cplusplus
}
#endif
