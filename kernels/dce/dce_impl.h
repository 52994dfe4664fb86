/* Private to kernels/dce, its tests and the bench: the run's tables and one fit job as the CPU twin
 * and the CUDA path receive it. */
#pragma once

#include "dce.h"
#include "dce_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tables of fm_dce_plan live in one host allocation (doubles, then ints). */
typedef struct {
    fm_dce_plan plan;
    double *doubles;
    size_t n_doubles;
    int *ints;
    size_t n_ints;
} fm_dce_tables;

/* Builds the model grid, the input spectra and the frame map from checked params. */
fm_status fm_dce_tables_build(const fm_dce_params *params, fm_dce_tables *t, char *msg,
                              size_t msg_len);
void fm_dce_tables_free(fm_dce_tables *t);

typedef struct {
    const fm_dce_params *params;
    const fm_dce_plan *plan; /* host tables */
    const fm_dce_tables *tables;
    const float *tissue; /* voxel-major */
    long long n_voxels;
    fm_dce_outputs *out;
    fm_tick_fn tick;
    void *tick_user;
    long long *invalid; /* out: voxels whose curve was not finite (their maps are NaN) */
} fm_dce_job;

/* Scratch of one CPU fit: the FFT buffer, which also holds the start's dot products first, then
 * the residual tree and the curve. */
FM_HD static inline int fm_dce_fft_doubles(const fm_dce_plan *plan)
{
    return 2 * plan->n_fft > FM_DCE_START_BASES ? 2 * plan->n_fft : FM_DCE_START_BASES;
}

static inline size_t fm_dce_work_doubles(const fm_dce_plan *plan)
{
    return (size_t)fm_dce_fft_doubles(plan) + plan->n_pad + plan->n_times;
}

/* One voxel on the CPU: the same sequence of operations as one CUDA block. work holds
 * fm_dce_work_doubles(plan) doubles. rec receives FM_DCE_OUT_COUNT values. */
void fm_dce_fit_voxel(const fm_dce_plan *plan, const fm_dce_params *params, const float *tissue,
                      double *work, double *rec);

/* Cost at theta for the curve tissue[n_times] (tests: the NM path can be replayed). */
double fm_dce_cost(const fm_dce_plan *plan, const double *theta, const double *tissue,
                   double *work);

fm_status fm_dce_cpu_run(const fm_dce_job *job, char *msg, size_t msg_len);
fm_status fm_dce_cuda_run(const fm_dce_job *job, char *msg, size_t msg_len);

/* Writes the record of voxel v into the caller's maps (NULL maps skipped). */
static inline void fm_dce_store(fm_dce_outputs *out, long long v, const double *rec)
{
    for (int o = 0; o < FM_DCE_OUT_COUNT; o++)
        if (out->map[o])
            out->map[o][v] = rec[o];
}

#ifdef __cplusplus
}
#endif
