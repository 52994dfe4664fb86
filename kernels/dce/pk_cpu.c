/* CPU twin of the pharmacokinetic fits: the per-voxel functions of pk_fit.h, OpenMP over voxels,
 * progress and cancellation between chunks. */
#include <math.h>

#include "../device.h"
#include "pk_fit.h"

fm_status fm_pk_cpu_run(const fm_pk_job *job, char *msg, size_t msg_len)
{
    const fm_pk_plan *p = &job->tables->plan;
    const int threads = fm_cpu_threads(), nt = p->n_times;
    fm_status status = FM_OK;
    long long invalid = 0;
    /* Chunks of voxels between ticks: about 1/100 of the run, at least a few per thread. */
    long long chunk = job->n_voxels / 100;
    if (chunk < 16LL * threads)
        chunk = 16LL * threads;
    for (long long v0 = 0; v0 < job->n_voxels; v0 += chunk) {
        const long long v1 = v0 + chunk < job->n_voxels ? v0 + chunk : job->n_voxels;
#pragma omp parallel for schedule(dynamic, 4) reduction(+ : invalid)
        for (long long v = v0; v < v1; v++) {
            double rec[FM_PK_OUT_COUNT];
            fm_pk_fit_voxel(p, job->tissue + v * nt, 1, rec);
            invalid += isnan(rec[FM_PK_OUT_RMSE]) != 0;
            fm_pk_store(job->params, job->out, v, rec);
        }
        if (job->tick && job->tick(job->tick_user, (double)v1 / job->n_voxels)) {
            status = fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled after %lld of %lld voxels",
                             v1, job->n_voxels);
            break;
        }
    }
    *job->invalid += invalid;
    return status;
}
