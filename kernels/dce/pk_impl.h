/* Private to kernels/dce's pharmacokinetic fits, their tests and the bench: the run's plan and
 * tables as the CPU twin and the CUDA kernel receive them. */
#pragma once

#include "pk.h"
#include "pk_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Start grid of the two-compartment models: exponential rates (1/s) from FM_PK_RATE_MAX down to
 * FM_PK_RATE_MIN, log-spaced; delays from lower to upper in FM_PK_N_DELAYS steps when fitted. */
#define FM_PK_N_RATES 16
#define FM_PK_RATE_MAX 4.0
#define FM_PK_RATE_MIN 1e-4
#define FM_PK_N_DELAYS 21
/* Start-table basis curves of one delay d: the input cp(t - d), its integral, (2CXM and 2CUM) its
 * double integral, then exp(-r t) * cp(t - d) for each grid rate r (2CXM and 2CUM). */
#define FM_PK_BASIS_CP 0
#define FM_PK_BASIS_INT 1
#define FM_PK_BASIS_INT2 2
#define FM_PK_BASIS_RATE0 3
#define FM_PK_MAX_BASIS (FM_PK_BASIS_RATE0 + FM_PK_N_RATES)

/* Everything one voxel's fit reads besides its curve; pointers to host or device tables. */
typedef struct {
    fm_pk_model model;
    int n_times;
    const double *times, *cp;
    int n_fit;               /* fitted parameters, delay last when fitted */
    int slot[FM_PK_MAX_FIT]; /* their FM_PK_* slots */
    double lower[FM_PK_MAX_FIT], upper[FM_PK_MAX_FIT];
    double fixed[FM_PK_N_PARAMS]; /* theta of the slots not fitted (delay 0, unused 0) */
    int max_iterations;
    double tolerance;
    /* Start tables: for each candidate delay, the basis curves (FM_PK_BASIS_*: 2 for the Tofts
     * family and Patlak, FM_PK_MAX_BASIS for 2CXM and 2CUM), then their Gram matrix.
     * basis[(d * n_basis + b) * n_times + i], gram[(d * n_basis + b) * n_basis + c]. */
    int n_delays, n_basis;
    const double *delays, *rates, *basis, *gram;
} fm_pk_plan;

typedef struct {
    fm_pk_plan plan; /* host pointers into doubles */
    double *doubles;
    size_t n_doubles;
} fm_pk_tables;

fm_status fm_pk_tables_build(const fm_pk_params *params, fm_pk_tables *t, char *msg,
                             size_t msg_len);
void fm_pk_tables_free(fm_pk_tables *t);

typedef struct {
    const fm_pk_params *params;
    const fm_pk_tables *tables;
    const float *tissue; /* voxel-major */
    long long n_voxels;
    fm_pk_outputs *out;
    fm_tick_fn tick;
    void *tick_user;
    long long *invalid; /* out: voxels whose curve was not finite */
} fm_pk_job;

fm_status fm_pk_cpu_run(const fm_pk_job *job, char *msg, size_t msg_len);
fm_status fm_pk_cuda_run(const fm_pk_job *job, char *msg, size_t msg_len);
/* The bench's kernel-alone figure: all of job's curves resident on GPU 0, the fit kernels' rounds
 * over them, median of reps CUDA-event timings after a warm-up. */
fm_status fm_pk_cuda_time_kernel(const fm_pk_job *job, int reps, double *median_ms, char *msg,
                                 size_t msg_len);

/* Writes the maps this model has (fm_pk_output_written) from rec (FM_PK_OUT_COUNT values) for
 * voxel v. */
void fm_pk_store(const fm_pk_params *params, fm_pk_outputs *out, long long v, const double *rec);

#ifdef __cplusplus
}
#endif
