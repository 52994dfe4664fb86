/* The resident-buffer cache against its contract, with host memory standing in for the device
 * (CI has no GPU), and the map-memory pool; with a device, the LSI CUDA paths read a resident
 * stack and give the same maps as from the host. TAP. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/device.h"
#include "kernels/host_memory.h"
#include "kernels/lsi/lsi.h"
#include "kernels/resident.h"
#include "lsi_ref.h"
#include "tap.h"

/* Stand-in device: host blocks, counted so that leaks and frees show. */
static int live_blocks, fail_alloc;

static void *host_alloc(size_t bytes, void *user)
{
    (void)user;
    if (fail_alloc)
        return NULL;
    live_blocks++;
    return malloc(bytes);
}

static void host_release(void *device, void *user)
{
    (void)user;
    live_blocks--;
    free(device);
}

static int slow_upload_us; /* a stand-in for a long PCIe copy */

static int host_upload(void *device, const void *host, size_t bytes, void *user)
{
    (void)user;
    if (slow_upload_us)
        usleep((useconds_t)slow_upload_us);
    memcpy(device, host, bytes);
    return 0;
}

static size_t host_budget(void *user)
{
    (void)user;
    return 1 << 20;
}

static const fm_resident_ops host_ops = {host_alloc, host_release, host_upload, host_budget, NULL};

static void fill(char *p, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (char)(seed + 7 * i);
}

/* One run's use of a buffer: acquire, then release by the host address. */
static int touch(const void *host, size_t bytes)
{
    const void *d = fm_resident_acquire(host, bytes, NULL);
    if (d)
        fm_resident_release(host);
    return d != NULL;
}

static void test_contract(void)
{
    enum { N = 1000 };
    static char a[N], b[N], c[N];
    fill(a, N, 1);
    fill(b, N, 2);
    fill(c, N, 3);
    fm_resident_set_ops(&host_ops);
    double up = -1;

    tap_ok(fm_resident_acquire(a, N, &up) == NULL && up == 0.0,
           "a buffer never offered is not resident (the caller streams)");
    fm_resident_offer(a, N);
    fm_resident_offer(a, N);
    const char *d = fm_resident_acquire(a + 100, 200, &up);
    fm_resident_stats s = fm_resident_get_stats();
    tap_ok(d && memcmp(d, a + 100, 200) == 0 && s.offered == 1 && s.uploads == 1,
           "a range inside an offered buffer uploads the whole buffer once and maps the offset");
    fm_resident_release(a + 100);
    d = fm_resident_acquire(a, N, &up);
    s = fm_resident_get_stats();
    tap_ok(d && up == 0.0 && s.hits == 1 && s.uploads == 1,
           "the next acquire (a re-run, a changed parameter) is a hit with no upload");
    fm_resident_release(a);
    tap_ok(fm_resident_acquire(a + 900, 200, NULL) == NULL,
           "a range running past the offered buffer is not served");

    /* LRU within the budget: room for two of the three. */
    fm_resident_set_budget(2 * N + N / 2);
    fm_resident_offer(b, N);
    fm_resident_offer(c, N);
    touch(b, N); /* a, b resident; a older */
    touch(a, N); /* touch a: b is the oldest now */
    touch(c, N); /* evicts b */
    s = fm_resident_get_stats();
    tap_ok(s.resident == 2 && s.evictions == 1 && s.resident_bytes == 2 * N,
           "a third buffer evicts one: %d resident, %lld eviction(s), %zu bytes", s.resident,
           s.evictions, s.resident_bytes);
    long long uploads = s.uploads;
    touch(a, N);
    s = fm_resident_get_stats();
    tap_ok(s.uploads == uploads, "the least recently used (b), not the re-used (a), was evicted");
    touch(b, N);
    s = fm_resident_get_stats();
    tap_ok(s.uploads == uploads + 1 && s.evictions == 2, "b comes back with an upload");

    /* A copy in use is never evicted: the next buffer streams instead. */
    const void *held = fm_resident_acquire(a, N, NULL);
    const void *held2 = fm_resident_acquire(b, N, NULL);
    s = fm_resident_get_stats();
    long long streamed = s.streamed;
    tap_ok(fm_resident_get_stats().in_use == 2, "two copies are in use");
    tap_ok(held && held2 && fm_resident_acquire(c, N, NULL) == NULL &&
               fm_resident_get_stats().streamed == streamed + 1,
           "with every copy in use, a new buffer streams rather than evicting one");
    fm_resident_release(a);
    fm_resident_release(b);

    /* Larger than the budget: streaming fallback. */
    static char big[4 * N];
    fm_resident_offer(big, sizeof big);
    tap_ok(fm_resident_acquire(big, sizeof big, NULL) == NULL,
           "a buffer larger than the budget streams");

    /* Closed while in use: freed at the last release. */
    held = fm_resident_acquire(a, N, NULL);
    fm_resident_forget(a);
    s = fm_resident_get_stats();
    tap_ok(held && memcmp(held, a, N) == 0 && s.resident >= 1,
           "a buffer forgotten while a run uses it stays valid for that run");
    int blocks = live_blocks;
    fm_resident_release(a);
    tap_ok(live_blocks == blocks - 1 && fm_resident_acquire(a, N, NULL) == NULL,
           "and goes at its release; it is no longer offered");

    /* Changed contents: forget and offer again, the next acquire uploads the new data. */
    fill(a, N, 9);
    fm_resident_offer(a, N);
    d = fm_resident_acquire(a, N, &up);
    tap_ok(d && memcmp(d, a, N) == 0, "after a change the next run sees the new contents");
    fm_resident_release(a);

    /* The device runs out of memory: stream. */
    fm_resident_forget(a);
    fm_resident_offer(a, N);
    fail_alloc = 1;
    tap_ok(fm_resident_acquire(a, N, NULL) == NULL, "an allocation failure streams");
    fail_alloc = 0;

    /* Shrinking the budget evicts unused copies at once. */
    touch(a, N);
    fm_resident_set_budget(N / 2);
    s = fm_resident_get_stats();
    tap_ok(s.resident == 0 && s.resident_bytes == 0, "shrinking the budget evicts unused copies");

    fm_resident_forget(a);
    fm_resident_forget(b);
    fm_resident_forget(c);
    fm_resident_forget(big);
    tap_ok(live_blocks == 0 && fm_resident_get_stats().offered == 0,
           "closing every buffer leaves no device memory behind (%d blocks)", live_blocks);
    fm_resident_set_ops(NULL);
}

/* A prefetch uploads once beside the caller's own work; an acquire during it waits and counts the
 * wait as its upload; closing the buffer mid-upload waits until nothing reads it any more. */
static void test_prefetch(void)
{
    enum { N = 1 << 16 };
    fm_resident_set_ops(&host_ops);
    char *a = malloc(N);
    fill(a, N, 5);
    slow_upload_us = 100000;
    fm_resident_prefetch(a, N);
    double up = 0;
    const char *d = fm_resident_acquire(a + 10, 100, &up);
    fm_resident_stats s = fm_resident_get_stats();
    tap_ok(d && memcmp(d, a + 10, 100) == 0 && s.uploads == 1,
           "an acquire during the prefetch waits for it and reads its copy (one upload)");
    tap_ok(up > 1.0, "the wait is reported as the run's upload (%.1f ms)", up);
    fm_resident_release(a + 10);
    d = fm_resident_acquire(a, N, &up);
    tap_ok(d && up == 0.0 && fm_resident_get_stats().uploads == 1, "then it is a plain hit");
    fm_resident_release(a);

    char *b = malloc(N);
    fill(b, N, 6);
    fm_resident_prefetch(b, N);
    usleep(20000); /* the upload is under way */
    fm_resident_forget(b);
    free(b); /* safe only if forget waited for the upload that reads it */
    s = fm_resident_get_stats();
    tap_ok(s.offered == 1 && s.resident == 1 && s.in_use == 0,
           "closing a buffer mid-upload waits for it, then drops it (%d offered, %d resident)",
           s.offered, s.resident);
    slow_upload_us = 0;
    fm_resident_forget(a);
    free(a);
    tap_ok(live_blocks == 0, "no device memory left behind (%d blocks)", live_blocks);
    fm_resident_set_ops(NULL);
}

/* On a GPU: spatial LSI from a resident stack equals the streamed run, and says it was resident.
 * The stack (9.6 MB) is more than one 8 MB staging piece and not a multiple of it, so the staged
 * upload's pieces and its short last one are all checked. */
static void test_cuda_lsi(void)
{
    const int W = 1031, H = 517, nf = 9;
    const size_t plane = (size_t)W * H;
    fm_lsi_params p = {.window = 5, .frames = 3, .exposure_ms = 5.0};
    void *frames = ref_random_frames(FM_PIXEL_U16, plane * nf);
    float *k0 = malloc(plane * nf * 4), *s0 = malloc(plane * nf * 4);
    float *k1 = malloc(plane * nf * 4), *s1 = malloc(plane * nf * 4);
    char msg[FM_MSG_LEN] = "";
    fm_run_info i0, i1, i2;
    fm_status a = fm_lsi_spatial(&p, frames, FM_PIXEL_U16, W, H, nf, k0, s0, FM_BACKEND_CUDA, NULL,
                                 NULL, &i0, msg, sizeof msg);
    fm_resident_offer(frames, plane * nf * 2);
    fm_status b = fm_lsi_spatial(&p, frames, FM_PIXEL_U16, W, H, nf, k1, s1, FM_BACKEND_CUDA, NULL,
                                 NULL, &i1, msg, sizeof msg);
    fm_status c = fm_lsi_spatial(&p, frames, FM_PIXEL_U16, W, H, nf, k1, s1, FM_BACKEND_CUDA, NULL,
                                 NULL, &i2, msg, sizeof msg);
    tap_ok(a == FM_OK && b == FM_OK && c == FM_OK && !i0.resident && !i1.resident &&
               i1.upload_ms > 0 && i2.resident && i2.upload_ms == 0.0,
           "LSI: first run uploads (%.3f ms), the re-run reads the resident stack (%s)",
           i1.upload_ms, msg);
    tap_ok(memcmp(k0, k1, plane * nf * 4) == 0 && memcmp(s0, s1, plane * nf * 4) == 0,
           "LSI: maps from the resident stack are bit-identical to the streamed run's");
    /* Maps in pinned memory (as core makes them once the GPU is started): downloads land there */
    float *kp = fm_host_alloc(plane * nf * 4), *sp = fm_host_alloc(plane * nf * 4);
    fm_status d = fm_lsi_spatial(&p, frames, FM_PIXEL_U16, W, H, nf, kp, sp, FM_BACKEND_CUDA, NULL,
                                 NULL, &i2, msg, sizeof msg);
    tap_ok(d == FM_OK && memcmp(k0, kp, plane * nf * 4) == 0 && memcmp(s0, sp, plane * nf * 4) == 0,
           "LSI spatial into pinned maps = streamed, bit for bit");
    float *kt = malloc(plane * nf * 4), *st = malloc(plane * nf * 4);
    fm_status t = fm_lsi_temporal(&p, frames, FM_PIXEL_U16, W, H, nf, kt, st, FM_BACKEND_CUDA, NULL,
                                  NULL, &i2, msg, sizeof msg);
    tap_ok(t == FM_OK && i2.resident, "LSI temporal reads the resident stack too");
    size_t n_t = plane * (nf - p.frames + 1) * 4;
    t = fm_lsi_temporal(&p, frames, FM_PIXEL_U16, W, H, nf, kp, sp, FM_BACKEND_CUDA, NULL, NULL,
                        &i2, msg, sizeof msg);
    tap_ok(t == FM_OK && memcmp(kt, kp, n_t) == 0 && memcmp(st, sp, n_t) == 0,
           "LSI temporal into pinned maps = into pageable maps, bit for bit");
    fm_host_free(kp, plane * nf * 4);
    fm_host_free(sp, plane * nf * 4);
    free(kt);
    free(st);
    fm_resident_forget(frames);
    tap_ok(fm_resident_get_stats().resident == 0, "forgetting the stack frees its device copy");
    free(frames);
    free(k0);
    free(s0);
    free(k1);
    free(s1);
}

/* Map memory: zeroed every time; with a started device a freed block serves the next map of
 * the same size (a re-run pays no pinning), without one it is plain memory and never kept. */
static void test_host_pool(int device)
{
    const size_t bytes = (size_t)3 << 20;
    long long reuses = fm_host_pool_reuses();
    unsigned char *a = fm_host_alloc(bytes);
    int zero = a != NULL;
    for (size_t i = 0; zero && i < bytes; i++)
        zero = a[i] == 0;
    tap_ok(zero, "a new map's memory is zeroed");
    memset(a, 0xab, bytes);
    fm_host_free(a, bytes);
    tap_ok(fm_host_pool_kept_bytes() == (device ? bytes : 0),
           "a freed map is kept for reuse only when pinned (%zu bytes kept)",
           fm_host_pool_kept_bytes());
    unsigned char *b = fm_host_alloc(bytes);
    zero = b != NULL;
    for (size_t i = 0; zero && i < bytes; i++)
        zero = b[i] == 0;
    tap_ok(zero && fm_host_pool_reuses() == reuses + (device ? 1 : 0),
           "the next map of that size %s, zeroed", device ? "reuses the block" : "is fresh");
    fm_host_free(b, bytes);

    /* Large maps start on a 2 MB boundary, so that huge pages can back them, and are zeroed
     * even when they reuse a kept block. */
    const size_t big = ((size_t)9 << 20) + 123;
    unsigned char *c = fm_host_alloc(big);
    zero = c != NULL && ((uintptr_t)c & (((size_t)2 << 20) - 1)) == 0;
    for (size_t i = 0; zero && i < big; i++)
        zero = c[i] == 0;
    tap_ok(zero, "a large map is zeroed and 2 MB-aligned");
    memset(c, 0x5a, big);
    fm_host_free(c, big);
    unsigned char *d = fm_host_alloc(big);
    zero = d != NULL;
    for (size_t i = 0; zero && i < big; i++)
        zero = d[i] == 0;
    tap_ok(zero, "the next large map is zeroed too");
    fm_host_free(d, big);

    /* Staging for transfers: pinned whatever the map policy, and kept for the next call. */
    void *s1 = fm_host_staging_get(bytes);
    fm_host_staging_put(s1, bytes);
    long long before = fm_host_pool_reuses();
    void *s2 = fm_host_staging_get(bytes);
    tap_ok(device ? s2 == s1 && fm_host_pool_reuses() == before + 1 : s1 == NULL && s2 == NULL,
           "staging %s", device ? "comes back from the pool on the next call" : "needs a device");
    fm_host_staging_put(s2, bytes);
    fm_host_pool_set_budget(0);
    tap_ok(fm_host_pool_kept_bytes() == 0, "a zero budget frees every kept block");
}

int main(void)
{
    test_contract();
    test_prefetch();
    char why[FM_MSG_LEN] = "";
    int device = fm_device_warm_up(NULL, why, sizeof why) > 0;
    if (device)
        fm_host_memory_enable_pinned(); /* as the GUI does once its device is up */
    test_host_pool(device);
    if (device)
        test_cuda_lsi();
    else
        printf("# SKIP: no CUDA device (%s): the CUDA paths' resident reads are not run\n", why);
    return tap_done();
}
