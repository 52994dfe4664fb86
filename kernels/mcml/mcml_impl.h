/* Private to kernels/mcml, its tests and bench: one run as the CPU twin and CUDA receive it, and
 * the raw fixed-point tallies they fill. */
#pragma once

#include "mcml.h"
#include "mcml_chunks.h"
#include "mcml_math.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    fm_mcml_params params; /* params.n_photons: the photons of this call */
    /* Photon indices [first_photon, first_photon + params.n_photons): a chunk of a run of
     * run_photons photons (0: the call is the whole run). Photon i draws from Philox(seed, i)
     * whichever call runs it, so a run split into chunks adds up to the run in one piece. */
    long long first_photon, run_photons;
    /* CUDA: where the drops fall (fm_mcml_cuda_pilot), shared by a task's chunks so that each
     * chunk does not pay for its own pilot; NULL: each call runs one when it needs it. */
    const unsigned long long *pilot;
    fm_mcml_medium medium; /* single-precision layer table for the photon code */
    double rsp;
    fm_tick_fn tick;
    void *tick_user;
} fm_mcml_job;

/* Both run photons [first_photon, first_photon + n_photons), call tick between chunks, and return
 * FM_OK, FM_ERR_NO_MEMORY, FM_ERR_CANCELLED (raw holds the photons done, a valid partial result) or
 * FM_ERR_DEVICE. */
fm_status fm_mcml_cpu_run(const fm_mcml_job *job, fm_mcml_raw *raw, char *msg, size_t msg_len);
fm_status fm_mcml_cuda_run(const fm_mcml_job *job, fm_mcml_raw *raw, char *msg, size_t msg_len);
/* The CUDA cache's pilot for job's run (running row sums of drop counts, malloc'ed), or NULL
 * where the run needs none (small runs, R/T only, no cache, a grid that fits the cache). */
unsigned long long *fm_mcml_cuda_pilot(const fm_mcml_job *job);

/* Counts the drops (absorption events, not their weight) of photons [0, n) per A[r][z] voxel
 * (nr * nz, clamped bins, zeroed by the caller), on all CPU threads: a pilot run that shows
 * where the absorption events fall. */
void fm_mcml_count_drops(const fm_mcml_job *job, long long n, unsigned long long *counts);

/* Fills job->medium and job->rsp from job->params (already checked). */
void fm_mcml_job_prepare(fm_mcml_job *job);

/* Adds the photons [lo, hi) to the photon counts of their batches. */
void fm_mcml_count_batches(fm_mcml_raw *raw, long long lo, long long hi);

/* The multiply-with-carry multipliers (mcml_mwc_table.h), the CPU twin's copy. */
extern const uint32_t fm_mcml_mwc_a[];

#ifdef __cplusplus
}
#endif
