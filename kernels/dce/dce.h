/* Voxelwise liver perfusion: dual-input single-compartment model fitted by Nelder-Mead, CPU twin
 * and CUDA. After H. Wang, Y. Cao, "GPU-accelerated voxelwise hepatic perfusion quantification",
 * Phys. Med. Biol. 57 (2012) 5601. */
#pragma once

#include "../fm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parameter order everywhere: ka, kp, kl in ml/100g/min; tau_a, tau_p in s. Rates convert to 1/s
 * by dividing by 6000 (1 ml/100g/min with tissue density 1 g/ml). */
enum { FM_DCE_KA = 0, FM_DCE_KP, FM_DCE_KL, FM_DCE_TAU_A, FM_DCE_TAU_P, FM_DCE_N_PARAMS };

/* How the stopping tolerance is read (see fm_dce_voxel_tolerance in dce_math.h). */
typedef enum {
    FM_DCE_TOL_RELATIVE = 0, /* tolerance x the voxel's sum(Cl^2) / n_times: unit-free */
    FM_DCE_TOL_ABSOLUTE = 1, /* the paper's rule as written, in concentration^2 */
} fm_dce_tolerance_mode;

/* Where each voxel's Nelder-Mead starts (see dce_start.h). */
typedef enum {
    FM_DCE_START_INITIAL = 0, /* every voxel from initial[] (the paper) */
    FM_DCE_START_GRID = 1,    /* the voxel's best point of a coarse kl x tau_a x tau_p grid, with
                                 ka, kp by nonnegative least squares there (default) */
} fm_dce_start_mode;

typedef struct {
    int n_times;              /* frames, >= 8 */
    const double *times_s;    /* n_times frame times, strictly increasing, need not be uniform */
    const double *ca;         /* arterial input Ca(t) at the frame times (concentration) */
    const double *cp;         /* portal venous input Cp(t) at the frame times */
    double model_dt_s;        /* uniform grid step of the model convolution; 0 = the smallest
                                 frame interval */
    double initial[FM_DCE_N_PARAMS]; /* start INITIAL; the paper: 10, 80, 200, 2, 3 */
    double lower[FM_DCE_N_PARAMS];   /* bounds applied by clamping inside the cost (a point
                                        outside costs its clamped cost times 1 + its relative
                                        distance outside, see dce_math.h); all lower >= 0 */
    double upper[FM_DCE_N_PARAMS];
    int max_iterations;       /* the paper: 600; caps all runs (restarts included) together */
    double tolerance;         /* stop when max - min of the simplex costs < tolerance (1e-8) */
    fm_dce_tolerance_mode tolerance_mode; /* default RELATIVE (the paper's 1e-8 is absolute) */
    int restarts;             /* Nelder-Mead restarts from the best vertex after a converged run,
                                 while the cost still drops by more than the tolerance and 1e-6
                                 of itself (dce_nm.h); 0 = the paper's single run (default 4) */
    fm_dce_start_mode start;  /* default GRID; INITIAL is the paper's fixed start */
    int n_devices;            /* CUDA: GPUs that split the voxels, 0 = all visible */
    int cuda_kernel;          /* CUDA layout, FM_DCE_CUDA_*: the same bits with any of them */
} fm_dce_params;

/* CUDA layouts of the fit. BLOCK: one block per voxel, the paper's layout. WARP: one warp per
 * voxel, several voxels per block, warp-synchronous (no block barriers in the fit loop); used by
 * AUTO up to FM_DCE_WARP_MAX_FFT, beyond which its per-warp FFT buffer would starve occupancy.
 * WARP_DENSE: WARP compiled for more warps per SM (fewer registers: 80); the bench
 * compares it. */
enum {
    FM_DCE_CUDA_AUTO = 0,
    FM_DCE_CUDA_BLOCK = 1,
    FM_DCE_CUDA_WARP = 2,
    FM_DCE_CUDA_WARP_DENSE = 3,
};
#define FM_DCE_WARP_MAX_FFT 512

/* Output maps, n_voxels doubles each (caller-owned, NULL when not wanted). */
typedef enum {
    FM_DCE_OUT_KA = 0, FM_DCE_OUT_KP, FM_DCE_OUT_KL, FM_DCE_OUT_TAU_A, FM_DCE_OUT_TAU_P,
    FM_DCE_OUT_RMSE,       /* sqrt(cost / n_times) */
    FM_DCE_OUT_R2,         /* 1 - SSres / SStot */
    FM_DCE_OUT_ITERATIONS, /* all runs together */
    FM_DCE_OUT_CONVERGED,  /* 1 when the fit stopped because max - min cost < tolerance (in
                              its last run, restarts included), 0 when max_iterations stopped it */
    FM_DCE_OUT_COUNT,
} fm_dce_output;

typedef struct {
    double *map[FM_DCE_OUT_COUNT];
} fm_dce_outputs;

void fm_dce_params_defaults(fm_dce_params *p);
fm_status fm_dce_check(const fm_dce_params *params, char *msg, size_t msg_len);

/* Model curve Cl(t) at the frame times for one parameter vector (tests, GUI overlays):
 * Cl = (ka Ca(t - tau_a) + kp Cp(t - tau_p)) convolved with exp(-kl t), delays by linear
 * interpolation of the inputs, convolution in the Fourier domain zero-padded against wrap. */
fm_status fm_dce_model(const fm_dce_params *params, const double theta[FM_DCE_N_PARAMS],
                       double *curve, char *msg, size_t msg_len);

/* The point each voxel's fit starts from (params->start), 5 values per voxel into x0: tests, and
 * to show where a fit began. A curve that is not finite starts nowhere (NaN). */
fm_status fm_dce_start_points(const fm_dce_params *params, const float *tissue, long long n_voxels,
                              double *x0, char *msg, size_t msg_len);

/* tissue: n_voxels curves of n_times values, VOXEL-MAJOR (tissue[v * n_times + i]). */
fm_status fm_dce_fit(const fm_dce_params *params, const float *tissue, long long n_voxels,
                     fm_dce_outputs *out, fm_backend backend, fm_tick_fn tick, void *tick_user,
                     fm_run_info *info, char *msg, size_t msg_len);

#ifdef __cplusplus
}
#endif
