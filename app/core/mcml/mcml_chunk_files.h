/* A folder of MCML chunk files: one file per chunk of photons with its raw integer tallies,
 * written under a temporary name and renamed when complete, and their merge in chunk order. */
#pragma once

#include <glib.h>

#include "kernels/mcml/mcml_chunks.h"

G_BEGIN_DECLS

/* What every chunk of one run shares: chunks made for another run are refused. */
typedef struct {
    fm_mcml_params params; /* n_photons: the whole run's */
    char output_name[256]; /* the .mci's output file name, for the .mco's InParm */
    long long n_chunks;
} fm_mcml_chunk_run;

/* Fills run from a resolved .mci run (the fields that decide the tallies; the GPU cache and
 * device count do not). */
void fm_mcml_chunk_run_init(fm_mcml_chunk_run *run, const fm_mcml_params *params,
                            const char *output_name, long long n_chunks);

/* DIR/chunk-000042.mcchunk; g_free it. While written: DIR/.chunk-000042.mcchunk.partial-PID. */
char *fm_mcml_chunk_path(const char *dir, long long chunk);

/* Writes chunk's tallies to its file atomically (rename of the finished, synced partial);
 * source: the .mci file or "preset:NAME" read (may be NULL). */
gboolean fm_mcml_chunk_write(const char *dir, const fm_mcml_chunk_run *run, long long chunk,
                             const fm_mcml_raw *raw, const char *backend, const char *device,
                             const char *source, double elapsed_ms, GError **error);

typedef enum {
    FM_MCML_CHUNK_MISSING, /* no complete file (a killed writer leaves only its partial) */
    FM_MCML_CHUNK_DONE,
    FM_MCML_CHUNK_DAMAGED, /* a complete name with a short or corrupt body: to be redone */
} fm_mcml_chunk_state;

/* The state of chunk's file for run; FALSE (FM_ERROR_BAD_INPUT) when the file belongs to another
 * run. why (may be NULL) gets the reason a file is damaged; g_free it. */
gboolean fm_mcml_chunk_check(const char *dir, const fm_mcml_chunk_run *run, long long chunk,
                             fm_mcml_chunk_state *state, char **why, GError **error);

/* "1,4-5": ascending indices in the form Slurm's --array takes. g_free it. */
char *fm_mcml_index_list(const long long *indices, gsize n);

typedef struct {
    fm_mcml_chunk_run run;
    double elapsed_ms;  /* the chunks' compute times, summed */
    char backend[16];   /* "cpu", "cuda", or "cpu+cuda" when chunks differ */
    char device[64];    /* the first chunk's device */
    char source[256];   /* the first chunk's source: its .mci file or "preset:NAME" */
    GArray *missing;    /* long long: chunks with no complete file (empty when merged) */
    GPtrArray *damaged; /* why each damaged chunk file was left out (counted as missing) */
} fm_mcml_merge_info;

void fm_mcml_merge_info_clear(fm_mcml_merge_info *info);

/* Sums every chunk of the run found in dir, in chunk order, into sum (wide tallies, allocated
 * here; free with fm_mcml_raw_free). FALSE (FM_ERROR_BAD_INPUT) when dir holds no chunk, chunks of
 * different runs, or misses chunks: info->missing lists them and the message names them. */
gboolean fm_mcml_chunks_merge(const char *dir, fm_mcml_raw *sum, fm_mcml_merge_info *info,
                              GError **error);

G_END_DECLS
