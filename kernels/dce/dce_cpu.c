/* CPU twin of the DCE fit: each voxel runs the CUDA block's operations in the same order
 * (fill, FFT stages, residuals, pairwise sum, Nelder-Mead step); OpenMP over voxels. */
/* Every Nelder-Mead here is the DCE fit's 5-D one: unrolled bookkeeping (dce_nm.h). */
#define FM_NM_FIXED_N 5
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../device.h"
#include "dce_impl.h"

#ifdef _OPENMP
#include <omp.h>
#endif

_Static_assert(FM_NM_FIXED_N == FM_DCE_N_PARAMS, "the fit's dimension is FM_DCE_N_PARAMS");

/* Cost at the point set up in e; y and r2 are scratch (2 n_fft and n_pad doubles). */
static double cost_at(const fm_dce_plan *p, const fm_dce_eval *e, const double *tissue, double *y,
                      double *r2)
{
    const int n = p->n_fft;
    for (int k = 0; k <= n / 2; k++)
        fm_dce_fill(p, e, k, y);
    for (int half = 1; half < n; half *= 2)
        for (int b = 0; b < n / 2; b++)
            fm_dce_butterfly(y, p->twiddle, n, half, b, 1);
    for (int i = 0; i < p->n_pad; i++)
        r2[i] = fm_dce_residual2(p, e, y, y + 1, 2, tissue, i);
    /* The GPU block's tree: pairs s apart, s halving; the same sums in the same order. */
    for (int s = p->n_pad / 2; s > 0; s /= 2)
        for (int i = 0; i < s; i++)
            r2[i] += r2[i + s];
    return FM_DMUL(r2[0], e->penalty);
}

double fm_dce_cost(const fm_dce_plan *plan, const double *theta, const double *tissue, double *work)
{
    fm_dce_eval e;
    fm_dce_eval_setup(plan, theta, &e);
    return cost_at(plan, &e, tissue, work, work + 2 * plan->n_fft);
}

void fm_dce_fit_voxel(const fm_dce_plan *plan, const fm_dce_params *params, const float *tissue,
                      double *work, double *rec)
{
    double *y = work, *r2 = y + fm_dce_fft_doubles(plan), *c = r2 + plan->n_pad;
    for (int i = 0; i < plan->n_times; i++)
        c[i] = tissue[i];
    if (!fm_dce_curve_finite(c, plan->n_times)) {
        fm_dce_record_invalid(rec);
        return;
    }
    fm_nm_state s;
    const double tol =
        fm_dce_voxel_tolerance(params->tolerance_mode, params->tolerance, c, plan->n_times);
    double x0[FM_DCE_N_PARAMS];
    if (plan->start_basis)
        fm_dce_start(plan, c, y, x0);
    else
        for (int i = 0; i < FM_DCE_N_PARAMS; i++)
            x0[i] = params->initial[i];
    fm_nm_begin(&s, FM_DCE_N_PARAMS, x0, params->max_iterations, 0, tol, -1.0);
    s.restarts = params->restarts;
    int more;
    do {
        fm_dce_eval e;
        fm_dce_eval_setup(plan, s.x, &e);
        more = fm_nm_feed(&s, cost_at(plan, &e, c, y, r2));
    } while (more);
    fm_dce_record(plan, &s, c, rec);
}

fm_status fm_dce_cpu_run(const fm_dce_job *job, char *msg, size_t msg_len)
{
    const fm_dce_plan *p = job->plan;
    const int threads = fm_cpu_threads(), nt = p->n_times;
    const size_t work_len = fm_dce_work_doubles(p);
    double *work = malloc(sizeof(double) * work_len * threads);
    fm_status status = FM_OK;
    long long invalid = 0;
    if (!work)
        return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for %d fit buffers", threads);
    /* Chunks of voxels between ticks: about 1/100 of the run, at least a few per thread. */
    long long chunk = job->n_voxels / 100;
    if (chunk < 4LL * threads)
        chunk = 4LL * threads;
    for (long long v0 = 0; v0 < job->n_voxels; v0 += chunk) {
        const long long v1 = v0 + chunk < job->n_voxels ? v0 + chunk : job->n_voxels;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : invalid)
        for (long long v = v0; v < v1; v++) {
            int t = 0;
#ifdef _OPENMP
            t = omp_get_thread_num();
#endif
            double rec[FM_DCE_OUT_COUNT];
            fm_dce_fit_voxel(p, job->params, job->tissue + v * nt, work + (size_t)t * work_len,
                             rec);
            invalid += isnan(rec[FM_DCE_OUT_KA]) != 0;
            fm_dce_store(job->out, v, rec);
        }
        if (job->tick && job->tick(job->tick_user, (double)v1 / job->n_voxels)) {
            status = fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled after %lld of %lld voxels",
                             v1, job->n_voxels);
            break;
        }
    }
    *job->invalid += invalid;
    free(work);
    return status;
}
