/* The pinned-map pool: page-locked blocks kept between runs so that re-runs pay no pinning. */
#include "host_memory.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fm_config.h"

#define MAX_KEPT 64

typedef struct {
    void *ptr;
    size_t bytes;
    int pinned;
} block;

/* Part of the device table: one pool per process, guarded by its lock. */
static struct {
    pthread_mutex_t lock;
    int pinned; /* a device was started: new blocks are page-locked */
    block kept[MAX_KEPT];
    int n_kept;
    size_t kept_bytes, budget;
    long long reuses;
    block live[4096]; /* pinned blocks handed out, to know how to free them */
    int n_live;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .budget = (size_t)2 << 30};

/* Zeroing hundreds of MB on one core costs more than the kernel that fills them. */
static void parallel_zero(void *ptr, size_t bytes)
{
    const size_t chunk = (size_t)1 << 22;
    long n = (long)((bytes + chunk - 1) / chunk);
#pragma omp parallel for schedule(static) if (n > 4)
    for (long i = 0; i < n; i++) {
        size_t off = (size_t)i * chunk, len = off + chunk <= bytes ? chunk : bytes - off;
        memset((char *)ptr + off, 0, len);
    }
}

static void free_block(block *b)
{
#if FM_HAVE_CUDA
    if (b->pinned) {
        fm_host_pinned_free(b->ptr);
        return;
    }
#endif
    free(b->ptr);
}

/* Frees kept blocks, oldest first, until the pool holds at most `limit` bytes. */
static void trim_locked(size_t limit)
{
    while (pool.n_kept > 0 && pool.kept_bytes > limit) {
        block oldest = pool.kept[0];
        memmove(pool.kept, pool.kept + 1, (size_t)(pool.n_kept - 1) * sizeof(block));
        pool.n_kept--;
        pool.kept_bytes -= oldest.bytes;
        free_block(&oldest);
    }
}

/* A kept (pinned) block of exactly this size, taken out of the pool, or NULL. */
static void *take_kept_locked(size_t bytes)
{
    for (int i = pool.n_kept - 1; i >= 0; i--) {
        if (pool.kept[i].bytes == bytes) {
            void *ptr = pool.kept[i].ptr;
            pool.kept_bytes -= bytes;
            memmove(pool.kept + i, pool.kept + i + 1,
                    (size_t)(pool.n_kept - i - 1) * sizeof(block));
            pool.n_kept--;
            pool.reuses++;
            return ptr;
        }
    }
    return NULL;
}

/* Remembers a pinned block handed out, so that fm_host_free knows to keep or unpin it; when the
 * table is full the block is unpinned and 0 returned (the caller takes plain memory). */
static int track_live(void *ptr, size_t bytes)
{
    pthread_mutex_lock(&pool.lock);
    int room = pool.n_live < (int)(sizeof pool.live / sizeof pool.live[0]);
    if (room)
        pool.live[pool.n_live++] = (block){ptr, bytes, 1};
    pthread_mutex_unlock(&pool.lock);
    if (!room) {
        block b = {ptr, bytes, 1};
        free_block(&b);
    }
    return room;
}

static void *host_alloc(size_t bytes, int zero)
{
    if (bytes == 0)
        bytes = 1;
    pthread_mutex_lock(&pool.lock);
    void *ptr = take_kept_locked(bytes); /* a re-run makes maps of the same sizes */
    int pinned = ptr != NULL;
    int want_pinned = pool.pinned;
    pthread_mutex_unlock(&pool.lock);
#if FM_HAVE_CUDA
    if (!ptr && want_pinned) {
        ptr = fm_host_pinned_alloc(bytes);
        pinned = ptr != NULL;
    }
#else
    (void)want_pinned;
#endif
    if (!ptr)
        return calloc(1, bytes); /* fresh pages are zero already */
    if (zero)
        parallel_zero(ptr, bytes);
    if (pinned && !track_live(ptr, bytes))
        return calloc(1, bytes);
    return ptr;
}

void *fm_host_alloc(size_t bytes)
{
    return host_alloc(bytes, 1);
}

void *fm_host_alloc_uninit(size_t bytes)
{
    return host_alloc(bytes, 0);
}

void fm_host_free(void *ptr, size_t bytes)
{
    if (!ptr)
        return;
    if (bytes == 0)
        bytes = 1;
    pthread_mutex_lock(&pool.lock);
    int pinned = 0;
    for (int i = 0; i < pool.n_live; i++) {
        if (pool.live[i].ptr == ptr) {
            pinned = 1;
            bytes = pool.live[i].bytes; /* the size it was made with, whatever the caller says */
            pool.live[i] = pool.live[--pool.n_live];
            break;
        }
    }
    if (pinned && bytes <= pool.budget) {
        if (pool.n_kept == MAX_KEPT)
            trim_locked(pool.kept_bytes - pool.kept[0].bytes);
        pool.kept[pool.n_kept++] = (block){ptr, bytes, 1};
        pool.kept_bytes += bytes;
        trim_locked(pool.budget);
        pthread_mutex_unlock(&pool.lock);
        return;
    }
    pthread_mutex_unlock(&pool.lock);
    block b = {ptr, bytes, pinned};
    free_block(&b);
}

void *fm_host_staging_get(size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
    pthread_mutex_lock(&pool.lock);
    void *ptr = take_kept_locked(bytes);
    pthread_mutex_unlock(&pool.lock);
#if FM_HAVE_CUDA
    if (!ptr)
        ptr = fm_host_pinned_alloc(bytes);
#endif
    return ptr && track_live(ptr, bytes) ? ptr : NULL;
}

void fm_host_staging_put(void *ptr, size_t bytes)
{
    fm_host_free(ptr, bytes); /* pinned: back to the pool */
}

void fm_host_pool_set_budget(size_t bytes)
{
    pthread_mutex_lock(&pool.lock);
    pool.budget = bytes;
    trim_locked(bytes);
    pthread_mutex_unlock(&pool.lock);
}

size_t fm_host_pool_kept_bytes(void)
{
    pthread_mutex_lock(&pool.lock);
    size_t kept = pool.kept_bytes;
    pthread_mutex_unlock(&pool.lock);
    return kept;
}

long long fm_host_pool_reuses(void)
{
    pthread_mutex_lock(&pool.lock);
    long long reuses = pool.reuses;
    pthread_mutex_unlock(&pool.lock);
    return reuses;
}

void fm_host_memory_enable_pinned(void)
{
    pthread_mutex_lock(&pool.lock);
    pool.pinned = 1;
    pthread_mutex_unlock(&pool.lock);
}
