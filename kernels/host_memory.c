/* The pinned-map pool: page-locked blocks kept between runs so that re-runs pay no pinning. */
#include "host_memory.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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
    const size_t chunk = (size_t)2 << 20; /* one huge page */
    long n = (long)((bytes + chunk - 1) / chunk);
#pragma omp parallel for schedule(static) if (n > 2)
    for (long i = 0; i < n; i++) {
        size_t off = (size_t)i * chunk, len = off + chunk <= bytes ? chunk : bytes - off;
        memset((char *)ptr + off, 0, len);
    }
}

/* Blocks of 4 MB and more go on 2 MB pages where the kernel allows it (THP "madvise" mode):
 * on the H100 machine the first touch of 331 MB took 10 ms on 16 threads instead of 20-29 ms
 * with 4 KB pages, and pinning it by registration 10 ms instead of 23 (bench/RESULTS.md). */
#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_MIN ((size_t)4 << 20)

#if FM_HAVE_CUDA
static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

/* Length of the mapping behind a pinned block of `bytes`. */
static size_t pinned_length(size_t bytes)
{
    return round_up(bytes, bytes >= HUGE_MIN ? HUGE_PAGE : 4096);
}

/* Page-locked by registering our own mapping, touched first on every thread: cudaHostAlloc
 * pinned at 1.6 GB/s on the H100 machine (64 MB in 39.5 ms), this at 8-16 GB/s. */
static void *pinned_alloc(size_t bytes)
{
    size_t len = pinned_length(bytes), align = len >= HUGE_MIN ? HUGE_PAGE : 4096;
    char *raw = mmap(NULL, len + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    char *p = (char *)round_up((size_t)raw, align);
    if (p > raw)
        munmap(raw, (size_t)(p - raw));
    munmap(p + len, (size_t)(raw + len + align - (p + len)));
    if (align == HUGE_PAGE)
        madvise(p, len, MADV_HUGEPAGE);
    parallel_zero(p, len); /* registration would fault the pages in one by one */
    if (fm_host_register(p, len) != 0) {
        munmap(p, len);
        return NULL;
    }
    return p;
}
#endif

static void free_block(block *b)
{
#if FM_HAVE_CUDA
    if (b->pinned) {
        fm_host_unregister(b->ptr);
        munmap(b->ptr, pinned_length(b->bytes));
        return;
    }
#endif
    free(b->ptr);
}

/* Plain memory; large blocks 2 MB-aligned and advised onto huge pages. */
static void *plain_alloc(size_t bytes, int zero)
{
    void *p = NULL;
    if (bytes < HUGE_MIN)
        return zero ? calloc(1, bytes) : malloc(bytes);
    if (posix_memalign(&p, HUGE_PAGE, bytes) != 0)
        return NULL;
    madvise(p, bytes, MADV_HUGEPAGE);
    if (zero)
        parallel_zero(p, bytes); /* glibc may hand back used heap memory */
    return p;
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
        ptr = pinned_alloc(bytes); /* zeroed already */
        if (ptr)
            return track_live(ptr, bytes) ? ptr : plain_alloc(bytes, zero);
    }
#else
    (void)want_pinned;
#endif
    if (!ptr)
        return plain_alloc(bytes, zero);
    if (zero)
        parallel_zero(ptr, bytes); /* a kept block holds an earlier run's values */
    return pinned && !track_live(ptr, bytes) ? plain_alloc(bytes, zero) : ptr;
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
        ptr = pinned_alloc(bytes);
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
