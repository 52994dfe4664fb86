/* T1 mapping from variable-flip-angle spoiled gradient-echo (SPGR) images, voxel by voxel:
 * S(a) = M0 sin(a) (1 - E) / (1 - cos(a) E), E = exp(-TR / T1) (Ernst). The linear fit is the
 * DESPOT1 linearisation S/sin(a) = E S/tan(a) + M0 (1 - E) (Gupta, J. Magn. Reson. 25 (1977)
 * 231; Deoni, Rutt & Peters, MRM 49 (2003) 515, eq. 2); the nonlinear fit minimises the sum of
 * squared signal residuals over (M0, T1). A B1 map scales every nominal flip angle per voxel
 * (actual = b1 x nominal). CPU only, with OpenMP: a voxel costs a few hundred flops over a
 * handful of angles, so the maps are bound by reading the images, not by compute, and there
 * is no CUDA path. */
#pragma once

#include "../fm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    FM_T1_VFA_LINEAR = 0, /* DESPOT1 / Gupta linear regression */
    FM_T1_VFA_NONLINEAR,  /* least squares of the signal equation, exact optimum */
} fm_t1_vfa_fit_kind;

typedef struct {
    int n_angles;           /* >= 2 */
    const double *flip_deg; /* n_angles nominal flip angles, each in (0, 180) */
    double tr_s;            /* repetition time, > 0 */
    fm_t1_vfa_fit_kind kind;
} fm_t1_vfa_params;

/* Maps, n_voxels doubles each (caller-owned; rmse may be NULL). A voxel without a T1 (a linear
 * slope outside (0, 1) or a negative intercept, non-finite signals or B1, M0 <= 0) gets NaN in
 * every map and counts in info->invalid_values. */
typedef struct {
    double *t1_s, *m0, *rmse;
} fm_t1_vfa_outputs;

/* signals: voxel-major, voxel v's n_angles signals at [v n_angles, (v + 1) n_angles), in the
 * order of flip_deg. b1: n_voxels factors actual/nominal, or NULL for 1. */
fm_status fm_t1_vfa_fit(const fm_t1_vfa_params *params, const float *signals, const float *b1,
                        long long n_voxels, fm_t1_vfa_outputs *out, fm_tick_fn tick,
                        void *tick_user, fm_run_info *info, char *msg, size_t msg_len);

/* One voxel (the same math, for tests and callers with a few curves): signals and flip angles
 * in radians already scaled by B1. Returns 1 and sets *t1_s, *m0 (and *rmse when not NULL) or
 * returns 0 where the fit has no T1. */
int fm_t1_vfa_voxel(fm_t1_vfa_fit_kind kind, int n_angles, const double *signals,
                    const double *flip_rad, double tr_s, double *t1_s, double *m0, double *rmse);

#ifdef __cplusplus
}
#endif
