/* Standard pharmacokinetic models of DCE-MRI/CT, fitted voxel by voxel, CPU twin and CUDA:
 * Tofts and extended Tofts (Tofts et al., JMRI 10 (1999) 223), Patlak (Patlak, Blasberg,
 * Fenstermacher 1983), two-compartment exchange and uptake (Sourbron & Buckley, Phys. Med. Biol.
 * 57 (2012) R1). The convolution of the plasma input with a model's exponentials uses the exact
 * recursive formula for piecewise-linear inputs (Flouri, Lesnic, Sourbron, MRM 76 (2016) 998),
 * linear in the frame count. Bounded fits start from a linear least-squares solution of the
 * model's integral form (Murase, MRM 51 (2004) 858 for the Tofts family and Patlak; Flouri,
 * Lesnic & Sourbron, MRM 76 (2016) 998 for 2CXM and 2CUM, where the best point of a coarse grid
 * competes with it and replaces it when it is not physical). */
#pragma once

#include "../fm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    FM_PK_TOFTS = 0,      /* ktrans, ve */
    FM_PK_EXTENDED_TOFTS, /* ktrans, ve, vp */
    FM_PK_PATLAK,         /* ps (= ktrans: fitted in the KTRANS slot, written to both maps), vp */
    FM_PK_2CXM,           /* fp, ps, ve, vp */
    FM_PK_2CUM,           /* fp, ps, vp */
    FM_PK_N_MODELS,
} fm_pk_model;

/* Parameter slots, every model uses a subset (fm_pk_model_uses). Units: KTRANS and PS in 1/min,
 * FP in ml/100ml/min, VE and VP fractions (0..1), DELAY in s (the input arrives that much later
 * in the tissue than in the input curve: Cp(t - delay)). */
enum { FM_PK_KTRANS = 0, FM_PK_VE, FM_PK_VP, FM_PK_FP, FM_PK_PS, FM_PK_DELAY, FM_PK_N_PARAMS };

typedef struct {
    fm_pk_model model;
    int n_times;           /* frames, >= 4 */
    const double *times_s; /* n_times frame times, strictly increasing, need not be uniform */
    const double *cp;      /* plasma input at the frame times (mM): the caller divides a blood
                              curve by 1 - hematocrit */
    int fit_delay;         /* 1: the arterial delay is a fitted parameter, 0: fixed at 0 */
    double lower[FM_PK_N_PARAMS], upper[FM_PK_N_PARAMS]; /* bounds of the fit */
    int max_iterations;                                  /* per voxel */
    double tolerance; /* relative change of the cost that stops the fit */
    int n_devices;    /* CUDA: GPUs that split the voxels, 0 = all visible */
} fm_pk_params;

/* Output maps, n_voxels doubles each (caller-owned, NULL when not wanted). A parameter the model
 * does not have is left untouched. KEP = ktrans / ve (Tofts family; 2CXM: PS/ve). */
typedef enum {
    FM_PK_OUT_KTRANS = 0,
    FM_PK_OUT_VE,
    FM_PK_OUT_VP,
    FM_PK_OUT_FP,
    FM_PK_OUT_PS,
    FM_PK_OUT_KEP,
    FM_PK_OUT_DELAY,     /* when fitted */
    FM_PK_OUT_RMSE,      /* sqrt(SSres / n_times) */
    FM_PK_OUT_R2,        /* 1 - SSres / SStot */
    FM_PK_OUT_AIC,       /* n ln(SSres / n) + 2 k (k fitted parameters): compare models per voxel */
    FM_PK_OUT_CONVERGED, /* 1 when the tolerance stopped the fit, 0 when max_iterations did */
    FM_PK_OUT_ITERATIONS,
    FM_PK_OUT_COUNT,
} fm_pk_output;

typedef struct {
    double *map[FM_PK_OUT_COUNT];
} fm_pk_outputs;

/* Defaults for model: OSIPI's bounds (ve, vp 0..1; ktrans, ps 0..5 /min; fp 0..200; delay -10..10
 * s), no delay, 300 iterations, tolerance 1e-8. */
void fm_pk_params_defaults(fm_pk_params *p, fm_pk_model model);
fm_status fm_pk_check(const fm_pk_params *params, char *msg, size_t msg_len);
const char *fm_pk_model_name(fm_pk_model model); /* "tofts", "extended_tofts", ... */
/* Whether model has parameter slot (FM_PK_DELAY: when params->fit_delay). */
int fm_pk_model_uses(const fm_pk_params *params, int slot);
int fm_pk_n_fitted(const fm_pk_params *params);
/* Whether fm_pk_fit writes output map `output` (FM_PK_OUT_*) for this model: its parameters,
 * KEP where the model has ve, DELAY when fitted, and the fit measures always. */
int fm_pk_output_written(const fm_pk_params *params, int output);

/* The model's tissue concentration at the frame times for theta (FM_PK_N_PARAMS values). */
fm_status fm_pk_model_curve(const fm_pk_params *params, const double *theta, double *curve,
                            char *msg, size_t msg_len);

/* tissue: n_voxels curves of n_times values, VOXEL-MAJOR (tissue[v * n_times + i]). A curve that
 * is not finite gives NaN in every map. */
fm_status fm_pk_fit(const fm_pk_params *params, const float *tissue, long long n_voxels,
                    fm_pk_outputs *out, fm_backend backend, fm_tick_fn tick, void *tick_user,
                    fm_run_info *info, char *msg, size_t msg_len);

#ifdef __cplusplus
}
#endif
