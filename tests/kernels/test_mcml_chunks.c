/* MCML in chunks on the CPU twin: chunk spans cover a run without gaps, the merged tallies carry
 * past 64 bits exactly, a run's chunks in any order and any grouping sum to the unchunked run bit
 * for bit, a chunk alone equals the same chunk inside a longer call, and a cancel hands out no
 * partial chunk (TAP). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/mcml/mcml_chunks.h"
#include "tap.h"

static fm_mcml_params sample_params(long long photons, unsigned long long seed)
{
    fm_mcml_params p = {.n_photons = photons,
                        .dz_cm = 0.01,
                        .dr_cm = 0.01,
                        .nz = 40,
                        .nr = 50,
                        .na = 5,
                        .n_layers = 3,
                        .n_above = 1.0,
                        .n_below = 1.0,
                        .record_absorption = 1,
                        .seed = seed,
                        .shared_cache = 1};
    p.layers[0] = (fm_mcml_layer){1.37, 1.0, 100.0, 0.9, 0.1};
    p.layers[1] = (fm_mcml_layer){1.37, 1.0, 10.0, 0.0, 0.1};
    p.layers[2] = (fm_mcml_layer){1.37, 2.0, 10.0, 0.7, 0.2};
    return p;
}

static void check_spans(long long n, long long n_chunks)
{
    long long next = 0, lo = n, hi = 0;
    int ok = 1;
    for (long long c = 0; c < n_chunks; c++) {
        long long first, count;
        fm_mcml_chunk_span(n, n_chunks, c, &first, &count);
        ok &= first == next && count >= 0;
        next = first + count;
        lo = count < lo ? count : lo;
        hi = count > hi ? count : hi;
    }
    tap_ok(ok && next == n && hi - lo <= 1,
           "%lld photons in %lld chunks: contiguous, cover [0, n), sizes %lld..%lld", n, n_chunks,
           lo, hi);
}

/* The merge's sum keeps carries in the high words; roulette's net stays signed. */
static void check_carry(void)
{
    fm_mcml_params p = sample_params(10, 1);
    char msg[FM_MSG_LEN] = "";
    fm_mcml_raw sum, c;
    fm_mcml_raw_alloc(&sum, &p, 1, msg, sizeof msg);
    fm_mcml_raw_alloc(&c, &p, 0, msg, sizeof msg);
    c.a_rz[7] = (1ull << 63) + 3;
    c.rd_ra[2] = ~0ull;
    c.batch[4][FM_MCML_B_RD] = (1ull << 63) + 1;
    c.batch[4][FM_MCML_B_ROUL] = (unsigned long long)-5ll;
    c.photons_done = 5;
    fm_mcml_raw_add(&sum, &c, &p);
    c.batch[4][FM_MCML_B_ROUL] = (unsigned long long)-7ll;
    fm_mcml_raw_add(&sum, &c, &p);
    tap_ok(sum.a_rz[7] == 6 && sum.a_rz_hi[7] == 1 && sum.rd_ra[2] == ~0ull - 1 &&
               sum.rd_ra_hi[2] == 1 && sum.batch[4][FM_MCML_B_RD] == 2 &&
               sum.batch_hi[4][FM_MCML_B_RD] == 1 &&
               (long long)sum.batch[4][FM_MCML_B_ROUL] == -12 &&
               sum.batch_hi[4][FM_MCML_B_ROUL] == 0 && sum.photons_done == 10 &&
               sum.a_rz_hi[6] == 0 && sum.a_rz[6] == 0,
           "2 x (2^63 + 3) = 2^64 + 6 in (hi 1, lo 6); roulette -5 + -7 = %lld",
           (long long)sum.batch[4][FM_MCML_B_ROUL]);
    fm_mcml_raw_free(&sum);
    fm_mcml_raw_free(&c);
}

typedef struct {
    fm_mcml_raw sum;
    const fm_mcml_params *p;
    int calls;
    long long last_chunk;
    fm_mcml_raw keep; /* a copy of chunk keep_chunk's tallies */
    long long keep_chunk;
} collect;

static fm_status add_chunk(void *user, long long chunk, const fm_mcml_raw *raw,
                           const fm_run_info *info, char *msg, size_t msg_len)
{
    collect *c = user;
    fm_mcml_raw_add(&c->sum, raw, c->p);
    c->calls++;
    c->last_chunk = chunk;
    if (chunk == c->keep_chunk)
        fm_mcml_raw_add(&c->keep, raw, c->p);
    return FM_OK;
}

static int same_raw(const fm_mcml_raw *a, const fm_mcml_raw *b, const fm_mcml_params *p)
{
    const size_t n_rz = (size_t)p->nr * p->nz, n_ra = (size_t)p->nr * p->na;
    return memcmp(a->a_rz, b->a_rz, n_rz * 8) == 0 && memcmp(a->rd_ra, b->rd_ra, n_ra * 8) == 0 &&
           memcmp(a->tt_ra, b->tt_ra, n_ra * 8) == 0 &&
           memcmp(a->batch, b->batch, sizeof a->batch) == 0 && a->photons_done == b->photons_done;
}

static fm_status run_set(const fm_mcml_params *p, long long n_chunks, const long long *chunks,
                         long long n, collect *c, long long keep_chunk)
{
    char msg[FM_MSG_LEN] = "";
    fm_mcml_raw_alloc(&c->sum, p, 1, msg, sizeof msg);
    fm_mcml_raw_alloc(&c->keep, p, 1, msg, sizeof msg);
    c->p = p;
    c->calls = 0;
    c->keep_chunk = keep_chunk;
    return fm_mcml_run_chunks(p, n_chunks, chunks, n, FM_BACKEND_CPU, NULL, NULL, add_chunk, c,
                              NULL, msg, sizeof msg);
}

static int stop_at_half(void *user, double fraction)
{
    (void)user;
    return fraction >= 0.5;
}

int main(void)
{
    check_spans(100000000000LL, 7);
    check_spans(100000000000LL, 100);
    check_spans(9000000000000000000LL, 3000000LL); /* 9e18 photons: products past 2^63 */
    check_carry();

    const fm_mcml_params p = sample_params(40000, 3);
    const size_t n_rz = (size_t)p.nr * p.nz, n_ra = (size_t)p.nr * p.na;
    fm_mcml_result one = {0}, merged = {0};
    double *arrays[2][3];
    fm_mcml_result *rs[2] = {&one, &merged};
    for (int k = 0; k < 2; k++) {
        rs[k]->a_rz = arrays[k][0] = calloc(n_rz, sizeof(double));
        rs[k]->rd_ra = arrays[k][1] = calloc(n_ra, sizeof(double));
        rs[k]->tt_ra = arrays[k][2] = calloc(n_ra, sizeof(double));
    }
    char msg[FM_MSG_LEN] = "";
    fm_status s1 = fm_mcml_run(&p, &one, FM_BACKEND_CPU, NULL, NULL, NULL, msg, sizeof msg);

    /* 5 chunks in two "tasks" and out of order: {3, 0} and {4, 1, 2} */
    const long long task_a[] = {3, 0}, task_b[] = {4, 1, 2};
    collect a, b;
    fm_status sa = run_set(&p, 5, task_a, 2, &a, 0);
    fm_status sb = run_set(&p, 5, task_b, 3, &b, 2);
    fm_mcml_raw_add(&a.sum, &b.sum, &p); /* lo words only: b's carries are zero here */
    fm_mcml_normalise(&p, &a.sum, &merged, msg, sizeof msg);
    tap_ok(s1 == FM_OK && sa == FM_OK && sb == FM_OK && a.calls == 2 && b.calls == 3 &&
               merged.photons_done == p.n_photons && merged.rd == one.rd && merged.a == one.a &&
               merged.tt == one.tt && merged.rd_se == one.rd_se &&
               memcmp(merged.a_rz, one.a_rz, n_rz * sizeof(double)) == 0 &&
               memcmp(merged.rd_ra, one.rd_ra, n_ra * sizeof(double)) == 0 &&
               memcmp(merged.tt_ra, one.tt_ra, n_ra * sizeof(double)) == 0,
           "5 chunks in two calls, out of order, merged: Rd %.6f A %.6f, the unchunked run's bits "
           "(Rd %.6f A %.6f)",
           merged.rd, merged.a, one.rd, one.a);

    /* chunk 2 alone equals chunk 2 inside the longer call */
    const long long only2[] = {2};
    collect c;
    fm_status sc = run_set(&p, 5, only2, 1, &c, 2);
    tap_ok(sc == FM_OK && same_raw(&c.keep, &b.keep, &p),
           "chunk 2 run alone: the same tallies as inside a call of 3 chunks");

    /* a cancel halfway through the second of 2 chunks: only the first is handed out */
    const long long two[] = {0, 1};
    collect d;
    fm_mcml_raw_alloc(&d.sum, &p, 1, msg, sizeof msg);
    fm_mcml_raw_alloc(&d.keep, &p, 1, msg, sizeof msg);
    d.p = &p;
    d.calls = 0;
    d.keep_chunk = -1;
    fm_status sd = fm_mcml_run_chunks(&p, 5, two, 2, FM_BACKEND_CPU, stop_at_half, NULL, add_chunk,
                                      &d, NULL, msg, sizeof msg);
    tap_ok(sd == FM_ERR_CANCELLED && d.calls == 1 && d.last_chunk == 0,
           "cancelled in chunk 1 of {0, 1}: chunk 0 handed out, chunk 1 not (%d calls)", d.calls);

    fm_mcml_params big = p;
    big.n_photons = 100000000000LL;
    const long long first[] = {0};
    fm_status se = fm_mcml_run_chunks(&big, 10, first, 1, FM_BACKEND_CPU, NULL, NULL, add_chunk, &d,
                                      NULL, msg, sizeof msg);
    tap_ok(se == FM_ERR_INVALID_ARG && strstr(msg, "at least 24 chunks"),
           "1e11 photons in 10 chunks refused: %s", msg);

    collect *all[] = {&a, &b, &c, &d};
    for (int k = 0; k < 4; k++) {
        fm_mcml_raw_free(&all[k]->sum);
        fm_mcml_raw_free(&all[k]->keep);
    }
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 3; j++)
            free(arrays[k][j]);
    return tap_done();
}
