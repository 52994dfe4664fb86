/* CPU twin of MCML: OpenMP threads, each with its own fixed-point tallies, over photon chunks
 * (progress and cancel between chunks); photon i always draws from its own stream (seeded by
 * Philox from i), whichever thread runs it. */
#include <stdlib.h>
#include <string.h>

#include "../device.h"
#include "mcml_impl.h"
#include "mcml_mwc_table.h"

#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct {
    unsigned long long *a_rz, *rd_ra, *tt_ra; /* rd_ra, tt_ra may be NULL (a pilot run) */
    unsigned long long batch[FM_MCML_BATCHES][FM_MCML_B_N];
    int count_drops; /* a_rz counts drops (events, atomically) instead of adding their weight */
} thread_tally;

static void run_photon(const fm_mcml_job *job, unsigned long long index, thread_tally *t)
{
    const fm_mcml_medium *m = &job->medium;
    const int nz = m->nz, na = m->na;
    unsigned long long *b = t->batch[index % FM_MCML_BATCHES];
    fm_mcml_photon p;
    fm_mcml_launch(&p, m, job->params.seed, index, fm_mcml_mwc_a[index % FM_MCML_MWC_COUNT]);
    while (p.w != 0) {
        if (fm_mcml_fly(&p)) {
            fm_mcml_escape out;
            if (fm_mcml_cross(&p, m, &out) && t->rd_ra) {
                int ir, ia;
                fm_mcml_ra_bin(&p, &m->grid, out.cos_exit, &ir, &ia);
                unsigned long long *ra = out.escape == 1 ? t->rd_ra : t->tt_ra;
                ra[(size_t)ir * na + ia] += out.w;
                b[out.escape == 1 ? FM_MCML_B_RD : FM_MCML_B_TT] += out.w;
            }
            continue;
        }
        const uint32_t drop = fm_mcml_absorb(&p);
        if (t->a_rz) {
            int ir, iz;
            fm_mcml_rz_bin(&p, &m->grid, &ir, &iz);
            if (t->count_drops)
                __atomic_fetch_add(&t->a_rz[(size_t)ir * nz + iz], 1, __ATOMIC_RELAXED);
            else
                t->a_rz[(size_t)ir * nz + iz] += drop;
        }
        fm_mcml_spin(&p, &p.L);
        if (fm_mcml_faint(&p))
            b[FM_MCML_B_ROUL] += (unsigned long long)(long long)fm_mcml_roulette(&p);
    }
}

void fm_mcml_count_drops(const fm_mcml_job *job, long long n, unsigned long long *counts)
{
#pragma omp parallel num_threads(fm_cpu_threads())
    {
        thread_tally t = {.a_rz = counts, .count_drops = 1}; /* counts shared: atomic adds */
#pragma omp for schedule(dynamic, 1)
        for (long long i = 0; i < n; i++)
            run_photon(job, (unsigned long long)i, &t);
    }
}

fm_status fm_mcml_cpu_run(const fm_mcml_job *job, fm_mcml_raw *raw, char *msg, size_t msg_len)
{
    const fm_mcml_params *prm = &job->params;
    const int n_threads = fm_cpu_threads();
    const size_t n_rz = (size_t)prm->nr * prm->nz, n_ra = (size_t)prm->nr * prm->na;
    const long long n = prm->n_photons, first = job->first_photon;
    fm_status status = FM_OK;
    thread_tally *tt = calloc((size_t)n_threads, sizeof *tt);
    if (!tt)
        return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "out of memory for thread tallies");
    for (int t = 0; t < n_threads; t++) {
        tt[t].rd_ra = calloc(n_ra, sizeof(unsigned long long));
        tt[t].tt_ra = calloc(n_ra, sizeof(unsigned long long));
        if (raw->a_rz)
            tt[t].a_rz = calloc(n_rz, sizeof(unsigned long long));
        if (!tt[t].rd_ra || !tt[t].tt_ra || (raw->a_rz && !tt[t].a_rz)) {
            status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "out of memory for thread tallies");
            goto cleanup;
        }
    }

    /* Chunks of about 1/64 of the run keep progress smooth and cancel prompt; the tallies are
     * integers, so dynamic scheduling cannot change the result. */
    long long chunk = n / 64 > 256 ? n / 64 : 256, done = 0;
    while (done < n) {
        const long long end = n - done > chunk ? done + chunk : n;
#pragma omp parallel num_threads(n_threads)
        {
#ifdef _OPENMP
            thread_tally *mine = &tt[omp_get_thread_num()];
#else
            thread_tally *mine = &tt[0];
#endif
#pragma omp for schedule(dynamic, 16)
            for (long long i = done; i < end; i++)
                run_photon(job, (unsigned long long)(first + i), mine);
        }
        done = end;
        if (job->tick && job->tick(job->tick_user, (double)done / (double)n) && done < n) {
            status = FM_ERR_CANCELLED;
            break;
        }
    }

    for (int t = 0; t < n_threads; t++) {
        if (raw->a_rz)
            for (size_t i = 0; i < n_rz; i++)
                raw->a_rz[i] += tt[t].a_rz[i];
        for (size_t i = 0; i < n_ra; i++) {
            raw->rd_ra[i] += tt[t].rd_ra[i];
            raw->tt_ra[i] += tt[t].tt_ra[i];
        }
        for (int b = 0; b < FM_MCML_BATCHES; b++)
            for (int k = 0; k < FM_MCML_B_N; k++)
                raw->batch[b][k] += tt[t].batch[b][k];
    }
    raw->photons_done += done;
    fm_mcml_count_batches(raw, first, first + done);
    if (status == FM_ERR_CANCELLED)
        fm_fail(status, msg, msg_len, "cancelled after %lld of %lld photons", done, n);
cleanup:
    for (int t = 0; t < n_threads; t++) {
        free(tt[t].a_rz);
        free(tt[t].rd_ra);
        free(tt[t].tt_ra);
    }
    free(tt);
    return status;
}
