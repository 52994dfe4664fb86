/* Monte Carlo light transport in multi-layered tissue (MCML physics: Wang, Jacques, Zheng,
 * Comput. Methods Programs Biomed. 47, 131 (1995)), CPU twin and CUDA after GPU-MCML
 * (Alerstam et al., Biomed. Opt. Express 1(2) 658 (2010)). */
#pragma once

#include "../fm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FM_MCML_MAX_LAYERS 32

typedef struct {
    double n;            /* refractive index */
    double mua_per_cm;   /* absorption coefficient */
    double mus_per_cm;   /* scattering coefficient */
    double g;            /* anisotropy, -1 < g < 1 */
    double thickness_cm; /* > 0 (may be large for semi-infinite) */
} fm_mcml_layer;

typedef struct {
    long long n_photons;
    double dz_cm, dr_cm; /* grid steps */
    int nz, nr, na;      /* grid sizes (na angular bins over 0..pi/2) */
    int n_layers;
    fm_mcml_layer layers[FM_MCML_MAX_LAYERS];
    double n_above, n_below; /* ambient media */
    int record_absorption;   /* 0: reflectance/transmittance-only mode, A[r][z] not scored */
    unsigned long long seed; /* same seed and thread count -> same CPU result */
    int shared_cache;        /* CUDA: cache the high-fluence region of A[r][z] in shared memory */
    int n_devices;           /* CUDA: GPUs to use, 0 = all visible */
} fm_mcml_params;

/* Results normalised as MCML writes them (.mco). Arrays are caller-owned and zeroed by the run:
 * a_layer[n_layers] (-; from A[r][z] as MCML does, each z bin to the layer holding its centre:
 * exact where the layer faces fall on bin edges; zero in the R/T-only mode),
 * a_z[nz] (1/cm), a_rz[nr*nz] (1/cm^3, index ir*nz+iz),
 * rd_r[nr], tt_r[nr] (1/cm^2), rd_a[na], tt_a[na] (1/sr), rd_ra[nr*na], tt_ra[nr*na]
 * (1/(cm^2 sr), index ir*na+ia). Any array may be NULL when not wanted. */
typedef struct {
    double rsp, rd, a, tt;     /* specular, diffuse reflectance, absorbed, transmitted */
    double rd_se, a_se, tt_se; /* standard errors over independent photon batches */
    long long photons_done;    /* < n_photons when cancelled: a valid partial result */
    double *a_layer, *a_z, *a_rz;
    double *rd_r, *rd_a, *rd_ra;
    double *tt_r, *tt_a, *tt_ra;
    /* Added: weight roulette added minus weight it removed, per launched photon (zero in
     * expectation). Rd, A, Tt and the arrays are normalised by the weight that entered the
     * tissue, N (1 - Rsp) + N roulette_net, instead of MCML's N (1 - Rsp), so that
     * Rsp + Rd + A + Tt = 1 to rounding; the two differ by a factor 1 + O(roulette_net). */
    double roulette_net;
} fm_mcml_result;

fm_status fm_mcml_check(const fm_mcml_params *params, char *msg, size_t msg_len);
/* Progress reported as photons_done / n_photons; on cancel the photons done so far are
 * normalised and returned with FM_ERR_CANCELLED (result valid, photons_done says how many). */
fm_status fm_mcml_run(const fm_mcml_params *params, fm_mcml_result *result, fm_backend backend,
                      fm_tick_fn tick, void *tick_user, fm_run_info *info, char *msg,
                      size_t msg_len);

#ifdef __cplusplus
}
#endif
