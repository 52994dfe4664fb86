/* Worker threads for the file readers: independent item ranges in parallel, hashing alongside. */
#pragma once

#include <glib.h>
#include <stdlib.h>

#include "app/core/dataset.h"

G_BEGIN_DECLS

/* More threads than this buy nothing: the readers are bound by memory bandwidth by then. */
#define FM_IO_MAX_THREADS 16

/* How many threads a job of n_items should use so that each gets at least min_items_per_thread.
 * FLUXMAP_IO_THREADS=N fixes the count (capped at n_items), which lets the tests split item
 * ranges unevenly whatever the machine, and a benchmark compare one thread with many. */
static inline int fm_io_threads_for(gsize n_items, gsize min_items_per_thread)
{
    if (n_items == 0)
        return 1;
    const char *forced = g_getenv("FLUXMAP_IO_THREADS");
    gsize n = forced && *forced ? (gsize)MAX(atoi(forced), 1)
                                : MIN((gsize)g_get_num_processors(),
                                      n_items / MAX(min_items_per_thread, (gsize)1));
    return (int)CLAMP(MIN(n, n_items), 1, FM_IO_MAX_THREADS);
}

/* Called once per part with the items [begin, end) of that part; parts never share items. */
typedef void (*fm_io_range_fn)(int part, gsize begin, gsize end, gpointer user);

typedef struct {
    fm_io_range_fn fn;
    gpointer user;
    int part;
    gsize begin, end;
} fm_io_range_job;

static inline gpointer fm_io_range_thread(gpointer data)
{
    fm_io_range_job *job = data;
    job->fn(job->part, job->begin, job->end, job->user);
    return NULL;
}

/* Splits n_items into n_parts contiguous ranges whose sizes differ by at most one, runs part 0
 * on the calling thread and the others on new threads, and returns when all are done. A part
 * whose thread cannot be started runs on the calling thread, so the result never depends on
 * how many threads there were. */
static inline void fm_io_parallel_ranges(gsize n_items, int n_parts, fm_io_range_fn fn,
                                         gpointer user)
{
    n_parts = (int)CLAMP((gsize)MAX(n_parts, 1), 1, MAX(n_items, (gsize)1));
    n_parts = MIN(n_parts, FM_IO_MAX_THREADS);
    fm_io_range_job jobs[FM_IO_MAX_THREADS];
    GThread *threads[FM_IO_MAX_THREADS] = {NULL};
    for (int p = 0; p < n_parts; p++)
        jobs[p] = (fm_io_range_job){fn, user, p, n_items * (gsize)p / (gsize)n_parts,
                                    n_items * (gsize)(p + 1) / (gsize)n_parts};
    for (int p = 1; p < n_parts; p++)
        threads[p] = g_thread_try_new("fm-io", fm_io_range_thread, &jobs[p], NULL);
    fm_io_range_thread(&jobs[0]);
    for (int p = 1; p < n_parts; p++) {
        if (threads[p])
            g_thread_join(threads[p]);
        else
            fm_io_range_thread(&jobs[p]);
    }
}

/* The file's SHA-256 (fm_dataset_hash_file) computed on a thread of its own while the reader
 * decodes: hashing a large file takes as long as decoding it, so the two overlap. Until
 * fm_io_hash_end, the reader must leave ds->sha256 and ds->source_path alone. */
typedef struct {
    fm_dataset *ds;
    GThread *thread;
    GError *error;
    gboolean ok;
} fm_io_hash;

static inline gpointer fm_io_hash_thread(gpointer data)
{
    fm_io_hash *h = data;
    h->ok = fm_dataset_hash_file(h->ds, &h->error);
    return NULL;
}

/* ds->source_path must be set. Never fails: without a thread the hash is taken at the end. */
static inline fm_io_hash *fm_io_hash_begin(fm_dataset *ds)
{
    fm_io_hash *h = g_new0(fm_io_hash, 1);
    h->ds = ds;
    if (g_get_num_processors() > 1 || g_getenv("FLUXMAP_IO_THREADS"))
        h->thread = g_thread_try_new("fm-io-hash", fm_io_hash_thread, h, NULL);
    return h;
}

/* Waits for the hash (or takes it now) and frees h; FALSE with the hash's error. */
static inline gboolean fm_io_hash_end(fm_io_hash *h, GError **error)
{
    if (h->thread)
        g_thread_join(h->thread);
    else
        fm_io_hash_thread(h);
    gboolean ok = h->ok;
    if (!ok)
        g_propagate_error(error, h->error);
    g_free(h);
    return ok;
}

G_END_DECLS
