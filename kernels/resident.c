/* The resident-buffer cache: offered host buffers, their device copies, LRU eviction, budget. */
#include "resident.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device_private.h"
#include "fm_config.h"

typedef struct {
    const char *host; /* start of the offered buffer */
    size_t bytes;
    void *device;  /* copy on the device, or NULL */
    int users;     /* acquires not yet released: never evicted while > 0 */
    int uploading; /* its copy is being filled outside the lock: wait on cache.filled */
    int forgotten; /* forget came while in use: drop at the last release */
    unsigned long long last_use;
    unsigned long long id; /* unique: finds the entry again after the array moved */
} entry;

/* Part of the device table: the one cache of this process, guarded by its lock. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t filled; /* an upload finished (or failed) */
    entry *entries;
    int n, cap;
    const fm_resident_ops *ops;
    int ops_set;
    size_t budget, used;
    unsigned long long clock;
    fm_resident_stats stats;
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER, .filled = PTHREAD_COND_INITIALIZER};

static const fm_resident_ops *ops_locked(void)
{
    if (!cache.ops_set) {
#if FM_HAVE_CUDA
        cache.ops = fm_resident_cuda_ops();
#else
        cache.ops = NULL;
#endif
        cache.ops_set = 1;
    }
    return cache.ops;
}

static size_t budget_locked(void)
{
    const fm_resident_ops *ops = ops_locked();
    if (cache.budget == 0 && ops && ops->default_budget)
        cache.budget = ops->default_budget(ops->user);
    return cache.budget;
}

static entry *find_containing(const void *host, size_t bytes)
{
    const char *p = host;
    for (int i = 0; i < cache.n; i++) {
        entry *e = &cache.entries[i];
        if (!e->forgotten && p >= e->host && (size_t)(p - e->host) <= e->bytes &&
            bytes <= e->bytes - (size_t)(p - e->host))
            return e;
    }
    return NULL;
}

static void drop_copy(entry *e)
{
    if (e->device) {
        cache.ops->release(e->device, cache.ops->user);
        cache.used -= e->bytes;
        e->device = NULL;
    }
}

static void remove_at(int i)
{
    drop_copy(&cache.entries[i]);
    cache.entries[i] = cache.entries[--cache.n];
}

/* Evicts unused copies, least recently used first, until `need` more bytes fit the budget. */
static int make_room(size_t need)
{
    while (cache.used + need > cache.budget) {
        entry *oldest = NULL;
        for (int i = 0; i < cache.n; i++) {
            entry *e = &cache.entries[i];
            if (e->device && e->users == 0 && (!oldest || e->last_use < oldest->last_use))
                oldest = e;
        }
        if (!oldest)
            return 0;
        drop_copy(oldest);
        cache.stats.evictions++;
    }
    return 1;
}

/* Entries move when the array grows or shrinks: callers that dropped the lock find theirs again
 * by id. */
static entry *find_id(unsigned long long id)
{
    for (int i = 0; i < cache.n; i++)
        if (cache.entries[i].id == id)
            return &cache.entries[i];
    return NULL;
}

/* The live entry offered as exactly [host, host + bytes). */
static entry *find_exact(const char *host, size_t bytes)
{
    for (int i = 0; i < cache.n; i++)
        if (cache.entries[i].host == host && cache.entries[i].bytes == bytes &&
            !cache.entries[i].forgotten)
            return &cache.entries[i];
    return NULL;
}

/* Waits until no upload reads from host any more (the caller is about to free it). */
static void wait_uploads_locked(const void *host)
{
    for (;;) {
        int busy = 0;
        for (int i = 0; i < cache.n; i++)
            busy |= cache.entries[i].uploading && (!host || cache.entries[i].host == host);
        if (!busy)
            return;
        pthread_cond_wait(&cache.filled, &cache.lock);
    }
}

void fm_resident_offer(const void *host, size_t bytes)
{
    if (!host || bytes == 0)
        return;
    pthread_mutex_lock(&cache.lock);
    int known = 0;
    for (int i = 0; i < cache.n && !known; i++)
        known = cache.entries[i].host == host && cache.entries[i].bytes == bytes &&
                !cache.entries[i].forgotten;
    if (!known) {
        if (cache.n == cache.cap) {
            int cap = cache.cap ? 2 * cache.cap : 16;
            entry *grown = realloc(cache.entries, (size_t)cap * sizeof *grown);
            if (!grown) {
                pthread_mutex_unlock(&cache.lock);
                return; /* not offered: runs stream, as without the cache */
            }
            cache.entries = grown;
            cache.cap = cap;
        }
        cache.entries[cache.n++] = (entry){.host = host, .bytes = bytes, .id = ++cache.clock};
    }
    pthread_mutex_unlock(&cache.lock);
}

void fm_resident_forget(const void *host)
{
    pthread_mutex_lock(&cache.lock);
    wait_uploads_locked(host);
    for (int i = cache.n - 1; i >= 0; i--) {
        entry *e = &cache.entries[i];
        if (e->host != host)
            continue;
        if (e->users > 0)
            e->forgotten = 1;
        else
            remove_at(i);
    }
    pthread_mutex_unlock(&cache.lock);
}

/* Gives e a device copy: room within the budget, then the upload outside the lock (other runs and
 * other datasets go on meanwhile; acquires of this one wait on cache.filled). 1 on success. */
static int fill_locked(entry *e, const fm_resident_ops *ops, double *upload_ms)
{
    if (e->bytes > budget_locked() || !make_room(e->bytes))
        return 0;
    double t0 = fm_now_ms();
    void *device = ops->alloc(e->bytes, ops->user);
    if (!device) /* the device holds other things too: its memory, not our budget, ran out */
        return 0;
    const char *host = e->host;
    size_t bytes = e->bytes;
    unsigned long long id = e->id;
    e->uploading = 1;
    e->users++; /* neither evicted nor freed while it fills */
    cache.used += bytes;
    pthread_mutex_unlock(&cache.lock);
    int ok = ops->upload(device, host, bytes, ops->user) == 0;
    pthread_mutex_lock(&cache.lock);
    e = find_id(id);
    e->uploading = 0;
    e->users--;
    if (ok) {
        e->device = device;
        cache.stats.uploads++;
    } else {
        ops->release(device, ops->user);
        cache.used -= bytes;
    }
    if (e->forgotten && e->users == 0)
        remove_at((int)(e - cache.entries));
    pthread_cond_broadcast(&cache.filled);
    if (upload_ms)
        *upload_ms = fm_now_ms() - t0;
    return ok;
}

const void *fm_resident_acquire(const void *host, size_t bytes, double *upload_ms)
{
    const void *answer = NULL;
    if (upload_ms)
        *upload_ms = 0.0;
    pthread_mutex_lock(&cache.lock);
    const fm_resident_ops *ops = ops_locked();
    entry *e = NULL;
    double t0 = fm_now_ms();
    /* A prefetch in flight: wait for it, and count the wait as this run's upload. */
    while (ops && host && (e = find_containing(host, bytes)) && e->uploading)
        pthread_cond_wait(&cache.filled, &cache.lock);
    double waited = fm_now_ms() - t0;
    if (!e)
        goto done;
    if (!e->device) {
        unsigned long long id = e->id;
        if (!fill_locked(e, ops, upload_ms) || !(e = find_id(id)) || e->forgotten) {
            cache.stats.streamed++;
            goto done;
        }
    } else {
        cache.stats.hits++;
        if (upload_ms && waited > 0.01)
            *upload_ms = waited;
    }
    e->users++;
    e->last_use = ++cache.clock;
    answer = (const char *)e->device + ((const char *)host - e->host);
done:
    pthread_mutex_unlock(&cache.lock);
    return answer;
}

typedef struct {
    const void *host;
    size_t bytes;
} prefetch_job;

static void *prefetch_thread(void *arg)
{
    prefetch_job job = *(prefetch_job *)arg;
    free(arg);
    pthread_mutex_lock(&cache.lock);
    const fm_resident_ops *ops = ops_locked();
    entry *e = ops ? find_exact(job.host, job.bytes) : NULL;
    if (e && !e->forgotten && !e->device && !e->uploading)
        fill_locked(e, ops, NULL);
    pthread_mutex_unlock(&cache.lock);
    return NULL;
}

void fm_resident_prefetch(const void *host, size_t bytes)
{
    if (!host || bytes == 0)
        return;
    fm_resident_offer(host, bytes);
    pthread_mutex_lock(&cache.lock);
    const fm_resident_ops *ops = ops_locked();
    entry *e = find_exact(host, bytes);
    int needed = ops && e && !e->device && !e->uploading; /* a re-run finds it resident */
    pthread_mutex_unlock(&cache.lock);
    if (!needed)
        return;
    prefetch_job *job = malloc(sizeof *job);
    if (!job)
        return;
    *job = (prefetch_job){host, bytes};
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&thread, &attr, prefetch_thread, job) != 0)
        free(job); /* no prefetch: the first acquire uploads, as without it */
    pthread_attr_destroy(&attr);
}

void fm_resident_release(const void *host)
{
    pthread_mutex_lock(&cache.lock);
    const char *p = host;
    for (int i = 0; i < cache.n; i++) {
        entry *e = &cache.entries[i];
        if (e->users > 0 && p >= e->host && (size_t)(p - e->host) < e->bytes) {
            e->users--;
            if (e->users == 0 && e->forgotten)
                remove_at(i);
            break;
        }
    }
    pthread_mutex_unlock(&cache.lock);
}

void fm_resident_set_budget(size_t bytes)
{
    pthread_mutex_lock(&cache.lock);
    cache.budget = bytes;
    if (budget_locked() > 0 || bytes == 0)
        make_room(0);
    pthread_mutex_unlock(&cache.lock);
}

void fm_resident_set_ops(const fm_resident_ops *ops)
{
    pthread_mutex_lock(&cache.lock);
    wait_uploads_locked(NULL);
    ops_locked();
    for (int i = cache.n - 1; i >= 0; i--)
        remove_at(i);
    cache.ops = ops;
    cache.ops_set = ops != NULL;
    cache.budget = 0;
    memset(&cache.stats, 0, sizeof cache.stats);
    pthread_mutex_unlock(&cache.lock);
}

fm_resident_stats fm_resident_get_stats(void)
{
    pthread_mutex_lock(&cache.lock);
    fm_resident_stats s = cache.stats;
    s.offered = cache.n;
    s.resident = 0;
    s.in_use = 0;
    for (int i = 0; i < cache.n; i++) {
        s.resident += cache.entries[i].device != NULL;
        s.in_use += cache.entries[i].users > 0;
    }
    s.resident_bytes = cache.used;
    s.budget_bytes = cache.budget;
    pthread_mutex_unlock(&cache.lock);
    return s;
}
