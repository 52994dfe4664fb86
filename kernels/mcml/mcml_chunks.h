/* MCML runs split into chunks of photons across threads, tasks, GPUs and nodes: the raw integer
 * tallies of a chunk, their exact sum, and their normalisation into MCML's units.
 *
 * Chunk c of N holds the photon indices [floor(c n / N), floor((c + 1) n / N)). Photon i starts
 * its generator from Philox4x32-10 with counter (i, 0) and key seed (fm_mcml_rng_init), a
 * counter-based generator: distinct counters give independent draws, so chunks, which hold
 * disjoint indices, draw from disjoint streams chosen by the chunk's index, and no chunk depends
 * on which process, thread or GPU ran another. Tallies are fixed-point integers (2^31 per unit
 * weight), so sums are exact: a run split into any chunks, merged, equals the run in one piece
 * bit for bit on the same backend. The CPU twin and CUDA are not bit-identical (the GPU's fast
 * reciprocal, square root, logarithm and sine: mcml_math.h), each is deterministic on its own. */
#pragma once

#include "mcml.h"
#include "mcml_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Raw tallies, fixed point (FM_MCML_QSCALE per unit weight). a_rz is NULL in the
 * reflectance/transmittance-only mode. batch[b] holds photons, Rd, Tt and roulette's net
 * (two's complement) of the photons whose index mod FM_MCML_BATCHES is b. One chunk's tallies fit
 * 64 bits (FM_MCML_CHUNK_MAX photons); a merged sum keeps the carries in the *_hi words (2^64
 * units), which are NULL (or zero) for a single run. Roulette's net stays a signed 64-bit sum. */
typedef struct {
    unsigned long long *a_rz;          /* nr * nz, index ir * nz + iz */
    unsigned long long *rd_ra, *tt_ra; /* nr * na, index ir * na + ia */
    unsigned long long batch[FM_MCML_BATCHES][FM_MCML_B_N];
    long long photons_done;
    unsigned long long *a_rz_hi, *rd_ra_hi, *tt_ra_hi;
    unsigned long long batch_hi[FM_MCML_BATCHES][FM_MCML_B_N];
} fm_mcml_raw;

/* A chunk's photons may each add up to 2^31 to one tally (roulette aside): 2^32 photons keep
 * every 64-bit tally of a chunk below 2^63. */
#define FM_MCML_CHUNK_MAX 4294967296LL

/* Photons [*first, *first + *count) of chunk `chunk` of n_chunks in a run of n_photons. */
void fm_mcml_chunk_span(long long n_photons, long long n_chunks, long long chunk, long long *first,
                        long long *count);

/* Tallies for params' grid, zeroed; wide adds the *_hi words (a merge's sum). */
fm_status fm_mcml_raw_alloc(fm_mcml_raw *raw, const fm_mcml_params *params, int wide, char *msg,
                            size_t msg_len);
void fm_mcml_raw_clear(fm_mcml_raw *raw, const fm_mcml_params *params);
void fm_mcml_raw_free(fm_mcml_raw *raw);
/* sum += chunk, exactly (sum allocated wide). */
void fm_mcml_raw_add(fm_mcml_raw *sum, const fm_mcml_raw *chunk, const fm_mcml_params *params);

/* Called after each chunk with its tallies (info->elapsed_ms: the chunk's time); a status other
 * than FM_OK stops the run, which returns it (the callee says why in msg or its own error). */
typedef fm_status (*fm_mcml_chunk_fn)(void *user, long long chunk, const fm_mcml_raw *raw,
                                      const fm_run_info *info, char *msg, size_t msg_len);

/* Runs the chunks chunks[0..n_run) of a run of params->n_photons photons split into n_chunks,
 * each from empty tallies, and hands each to done. Progress spans all n_run chunks. Under
 * FM_BACKEND_AUTO a GPU failure reruns that chunk and the rest on the CPU (info->fell_back). A
 * cancel returns FM_ERR_CANCELLED; the chunk it interrupted is not handed out. */
fm_status fm_mcml_run_chunks(const fm_mcml_params *params, long long n_chunks,
                             const long long *chunks, long long n_run, fm_backend backend,
                             fm_tick_fn tick, void *tick_user, fm_mcml_chunk_fn done,
                             void *done_user, fm_run_info *info, char *msg, size_t msg_len);

/* The result a run of params (n_photons: the whole run) writes, from its raw tallies (a single
 * run's or a merge's): fm_mcml_run's normalisation. */
fm_status fm_mcml_normalise(const fm_mcml_params *params, const fm_mcml_raw *raw,
                            fm_mcml_result *result, char *msg, size_t msg_len);

#ifdef __cplusplus
}
#endif
