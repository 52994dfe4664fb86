/* MCML in chunks: which photons a chunk holds, its raw tallies and their exact sum, and the run
 * of a task's chunks in one call: on the CPU one after another, on the GPU two in flight. */
#include "mcml_chunks.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../device.h"
#include "../device_private.h"
#include "fm_config.h"
#include "mcml_impl.h"

void fm_mcml_chunk_span(long long n_photons, long long n_chunks, long long chunk, long long *first,
                        long long *count)
{
    /* 128-bit products: n_photons * chunk may pass 2^63 for 1e11 photons in 1e8 chunks */
    const long long lo = (long long)((__int128)n_photons * chunk / n_chunks);
    const long long hi = (long long)((__int128)n_photons * (chunk + 1) / n_chunks);
    *first = lo;
    *count = hi - lo;
}

fm_status fm_mcml_raw_alloc(fm_mcml_raw *raw, const fm_mcml_params *p, int wide, char *msg,
                            size_t msg_len)
{
    memset(raw, 0, sizeof *raw);
    const size_t n_rz = (size_t)p->nr * p->nz, n_ra = (size_t)p->nr * p->na;
    const int parts = wide ? 2 : 1;
    unsigned long long **rz[2] = {&raw->a_rz, &raw->a_rz_hi};
    unsigned long long **rd[2] = {&raw->rd_ra, &raw->rd_ra_hi};
    unsigned long long **tt[2] = {&raw->tt_ra, &raw->tt_ra_hi};
    for (int k = 0; k < parts; k++) {
        if (p->record_absorption && !(*rz[k] = calloc(n_rz, sizeof **rz[k])))
            goto fail;
        if (!(*rd[k] = calloc(n_ra, sizeof **rd[k])) || !(*tt[k] = calloc(n_ra, sizeof **tt[k])))
            goto fail;
    }
    return FM_OK;
fail:
    fm_mcml_raw_free(raw);
    return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "out of memory for the MCML tallies");
}

void fm_mcml_raw_clear(fm_mcml_raw *raw, const fm_mcml_params *p)
{
    const size_t n_rz = (size_t)p->nr * p->nz, n_ra = (size_t)p->nr * p->na;
    unsigned long long *rz[2] = {raw->a_rz, raw->a_rz_hi};
    unsigned long long *ra[4] = {raw->rd_ra, raw->tt_ra, raw->rd_ra_hi, raw->tt_ra_hi};
    for (int k = 0; k < 2; k++)
        if (rz[k])
            memset(rz[k], 0, n_rz * sizeof *rz[k]);
    for (int k = 0; k < 4; k++)
        if (ra[k])
            memset(ra[k], 0, n_ra * sizeof *ra[k]);
    memset(raw->batch, 0, sizeof raw->batch);
    memset(raw->batch_hi, 0, sizeof raw->batch_hi);
    raw->photons_done = 0;
}

void fm_mcml_raw_free(fm_mcml_raw *raw)
{
    free(raw->a_rz);
    free(raw->rd_ra);
    free(raw->tt_ra);
    free(raw->a_rz_hi);
    free(raw->rd_ra_hi);
    free(raw->tt_ra_hi);
    memset(raw, 0, sizeof *raw);
}

/* lo + v with the carry into hi: exact to 128 bits. */
static void add_wide(unsigned long long *lo, unsigned long long *hi, size_t n,
                     const unsigned long long *v)
{
    for (size_t i = 0; i < n; i++) {
        const unsigned long long s = lo[i] + v[i];
        hi[i] += s < lo[i];
        lo[i] = s;
    }
}

void fm_mcml_raw_add(fm_mcml_raw *sum, const fm_mcml_raw *c, const fm_mcml_params *p)
{
    const size_t n_rz = (size_t)p->nr * p->nz, n_ra = (size_t)p->nr * p->na;
    if (sum->a_rz && c->a_rz)
        add_wide(sum->a_rz, sum->a_rz_hi, n_rz, c->a_rz);
    add_wide(sum->rd_ra, sum->rd_ra_hi, n_ra, c->rd_ra);
    add_wide(sum->tt_ra, sum->tt_ra_hi, n_ra, c->tt_ra);
    for (int b = 0; b < FM_MCML_BATCHES; b++) {
        for (int k = 0; k < FM_MCML_B_N; k++) {
            if (k == FM_MCML_B_ROUL) /* signed: two's complement wraps back exactly */
                sum->batch[b][k] += c->batch[b][k];
            else
                add_wide(&sum->batch[b][k], &sum->batch_hi[b][k], 1, &c->batch[b][k]);
        }
    }
    sum->photons_done += c->photons_done;
}

/* Progress of chunk k of n_run, as a fraction of all of them. */
typedef struct {
    fm_tick_fn tick;
    void *user;
    long long k, n_run;
} chunk_tick;

static int tick_chunk(void *user, double fraction)
{
    chunk_tick *t = user;
    return t->tick(t->user, ((double)t->k + fraction) / (double)t->n_run);
}

#if FM_HAVE_CUDA
/* A chunk on the GPU from a host thread of its own. Two slots keep two chunks in flight, so
 * that the next chunk's kernel fills the SMs while this one's last photons finish (a persistent
 * kernel's tail) and while the host sets up, copies back and hands out: small chunks cost about
 * what one run of their photons costs. */
typedef struct {
    fm_mcml_job job; /* its own copy: first_photon and n_photons are the chunk's */
    fm_mcml_raw raw;
    fm_status status;
    char msg[FM_MSG_LEN];
    pthread_t thread;
    int busy;
} cuda_slot;

#define CUDA_SLOTS 2

static void *cuda_slot_main(void *arg)
{
    cuda_slot *s = arg;
    s->status = fm_mcml_cuda_run(&s->job, &s->raw, s->msg, sizeof s->msg);
    return NULL;
}

static void slot_start(cuda_slot *s, long long n_chunks, long long chunk)
{
    const fm_mcml_params *p = &s->job.params;
    fm_mcml_chunk_span(s->job.run_photons, n_chunks, chunk, &s->job.first_photon,
                       &s->job.params.n_photons);
    fm_mcml_raw_clear(&s->raw, p);
    s->busy = pthread_create(&s->thread, NULL, cuda_slot_main, s) == 0;
    if (!s->busy)
        s->status = fm_fail(FM_ERR_DEVICE, s->msg, sizeof s->msg,
                            "could not start a host thread for chunk %lld", chunk);
}

static void slot_wait(cuda_slot *s)
{
    if (s->busy)
        pthread_join(s->thread, NULL);
    s->busy = 0;
}

/* Runs chunks[0..n_run) on the GPU, handing each to done in order; *handed counts those handed
 * out. FM_OK with info->fell_back set when the GPU failed under AUTO: the caller runs chunks
 * *handed.. on the CPU. Progress and cancel between chunks (a cancel waits for the chunk in
 * flight beside the current one and drops it). */
static fm_status run_cuda_slots(const fm_mcml_job *job, long long n_chunks, const long long *chunks,
                                long long n_run, fm_backend backend, fm_tick_fn tick,
                                void *tick_user, fm_mcml_chunk_fn done, void *done_user,
                                fm_run_info *info, long long *handed, char *msg, size_t msg_len)
{
    cuda_slot slots[CUDA_SLOTS];
    memset(slots, 0, sizeof slots);
    fm_status status = FM_OK;
    long long k = 0;
    for (int i = 0; i < CUDA_SLOTS && status == FM_OK; i++) {
        slots[i].job = *job;
        slots[i].job.tick = NULL; /* fm_method_tick and the CLI's are not for two threads */
        slots[i].job.tick_user = NULL;
        status = fm_mcml_raw_alloc(&slots[i].raw, &job->params, 0, msg, msg_len);
    }
    for (long long j = 0; status == FM_OK && j < n_run && j < CUDA_SLOTS; j++)
        slot_start(&slots[j], n_chunks, chunks[j]);
    double last = fm_now_ms();
    for (; status == FM_OK && k < n_run; k++) {
        cuda_slot *s = &slots[k % CUDA_SLOTS];
        slot_wait(s);
        if (s->status != FM_OK) {
            for (int i = 0; i < CUDA_SLOTS; i++)
                slot_wait(&slots[i]); /* the chunk after it is dropped */
            if (!fm_backend_cuda_settled(s->status, backend, info, s->msg, msg, msg_len))
                break; /* fell back: FM_OK, the caller goes on from chunk k on the CPU */
            status = s->status;
            break;
        }
        /* the time between hand-outs: the chunks' times add up to the run's */
        const double now = fm_now_ms();
        info->elapsed_ms = now - last;
        last = now;
        status = done(done_user, chunks[k], &s->raw, info, msg, msg_len);
        if (status == FM_OK && tick && tick(tick_user, (double)(k + 1) / (double)n_run) &&
            k + 1 < n_run)
            status = fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled after %lld of %lld chunks",
                             k + 1, n_run);
        if (status == FM_OK && k + CUDA_SLOTS < n_run)
            slot_start(s, n_chunks, chunks[k + CUDA_SLOTS]);
        if (status != FM_OK)
            k++; /* this one was handed out */
    }
    *handed = k;
    for (int i = 0; i < CUDA_SLOTS; i++) {
        slot_wait(&slots[i]);
        fm_mcml_raw_free(&slots[i].raw);
    }
    return status;
}
#endif

fm_status fm_mcml_run_chunks(const fm_mcml_params *params, long long n_chunks,
                             const long long *chunks, long long n_run, fm_backend backend,
                             fm_tick_fn tick, void *tick_user, fm_mcml_chunk_fn done,
                             void *done_user, fm_run_info *info, char *msg, size_t msg_len)
{
    fm_run_info local;
    const double start = fm_now_ms();
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);
    fm_status status = fm_mcml_check(params, msg, msg_len);
    if (status != FM_OK)
        return status;
    if (n_chunks < 1 || n_chunks > params->n_photons)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "chunks must be 1..%lld (one photon at least each), got %lld",
                       params->n_photons, n_chunks);
    if ((params->n_photons + n_chunks - 1) / n_chunks > FM_MCML_CHUNK_MAX)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "%lld photons in %lld chunks: a chunk may hold at most %lld photons "
                       "(its 64-bit tallies), so use at least %lld chunks",
                       params->n_photons, n_chunks, FM_MCML_CHUNK_MAX,
                       (params->n_photons + FM_MCML_CHUNK_MAX - 1) / FM_MCML_CHUNK_MAX);
    for (long long k = 0; k < n_run; k++)
        if (chunks[k] < 0 || chunks[k] >= n_chunks)
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "chunk %lld is not in 0..%lld",
                           chunks[k], n_chunks - 1);

    fm_mcml_job job = {.params = *params, .run_photons = params->n_photons};
    fm_mcml_job_prepare(&job);
    chunk_tick progress = {tick, tick_user, 0, n_run};
    job.tick = tick ? tick_chunk : NULL;
    job.tick_user = &progress;
    fm_mcml_raw raw;
    status = fm_mcml_raw_alloc(&raw, params, 0, msg, msg_len);
    if (status != FM_OK)
        return status;
    status = fm_backend_resolve(backend, info, msg, msg_len);
    unsigned long long *pilot = NULL;
    long long k = 0;
#if FM_HAVE_CUDA
    if (status == FM_OK && info->backend_used == FM_BACKEND_CUDA) {
        job.pilot = pilot = fm_mcml_cuda_pilot(&job); /* params.n_photons: still the whole run's */
        status = run_cuda_slots(&job, n_chunks, chunks, n_run, backend, tick, tick_user, done,
                                done_user, info, &k, msg, msg_len);
        if (status != FM_OK || !info->fell_back)
            k = n_run; /* done, failed or cancelled: nothing left for the CPU */
    }
#endif
    /* The CPU twin (or what is left after a GPU failure under AUTO), one chunk after another. */
    for (; status == FM_OK && k < n_run; k++) {
        progress.k = k;
        fm_mcml_chunk_span(params->n_photons, n_chunks, chunks[k], &job.first_photon,
                           &job.params.n_photons);
        fm_mcml_raw_clear(&raw, params);
        const double chunk_start = fm_now_ms();
        status = fm_mcml_cpu_run(&job, &raw, msg, msg_len);
        if (status != FM_OK)
            break;
        info->elapsed_ms = fm_now_ms() - chunk_start; /* this chunk's, for its file */
        status = done(done_user, chunks[k], &raw, info, msg, msg_len);
    }
    fm_mcml_raw_free(&raw);
    free(pilot);
    info->elapsed_ms = fm_now_ms() - start;
    return status;
}
