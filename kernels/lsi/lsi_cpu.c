/* CPU twin of LSI: the "roll" running-sum algorithm of Yang et al. (2011), OpenMP over row bands. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../device.h"
#include "lsi_impl.h"
#include "lsi_math.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* What the spatial roll sums: a raw frame (value and its square), or, for spatio-temporal
 * contrast, per-pixel sums over time (s1 and s2 images). Integer data use the i64 members and
 * 64-bit sums (u16^2 x 225 overflows 32 bits); float data the f64 members and double sums. */
typedef struct {
    const void *raw;
    fm_pixel_type type;
    const int64_t *i1, *i2;
    const double *d1, *d2;
    int width, height;
    int row0; /* the sum images hold rows row0 on (a band of the frame), the raw frame all rows */
    double samples_per_pixel; /* 1, or the temporal window */
} roll_src;

/* Adds (sign > 0) or subtracts row r of the source to the column sums. Separate loops per case
 * keep each one simple enough for the compiler to vectorise. */
#define ROW_LOOP(OP, V1, V2)                                                                      \
    for (int x = 0; x < W; x++) {                                                             \
        c1[x] OP V1;                                                                          \
        c2[x] OP V2;                                                                          \
    }

static void row_i64(const roll_src *src, int r, int sign, int64_t *c1, int64_t *c2)
{
    const int W = src->width;
    const size_t off = (size_t)r * (size_t)W;
    if (src->i1) {
        const size_t band_off = (size_t)(r - src->row0) * (size_t)W;
        const int64_t *a = src->i1 + band_off, *b = src->i2 + band_off;
        if (sign > 0) { ROW_LOOP(+=, a[x], b[x]) } else { ROW_LOOP(-=, a[x], b[x]) }
    } else if (src->type == FM_PIXEL_U8) {
        const uint8_t *p = (const uint8_t *)src->raw + off;
        if (sign > 0) {
            ROW_LOOP(+=, (int64_t)p[x], (int64_t)p[x] * p[x])
        } else {
            ROW_LOOP(-=, (int64_t)p[x], (int64_t)p[x] * p[x])
        }
    } else {
        const uint16_t *p = (const uint16_t *)src->raw + off;
        if (sign > 0) {
            ROW_LOOP(+=, (int64_t)p[x], (int64_t)p[x] * p[x])
        } else {
            ROW_LOOP(-=, (int64_t)p[x], (int64_t)p[x] * p[x])
        }
    }
}

static void row_f64(const roll_src *src, int r, int sign, double *c1, double *c2)
{
    const int W = src->width;
    const size_t off = (size_t)r * (size_t)W;
    if (src->d1) {
        const size_t band_off = (size_t)(r - src->row0) * (size_t)W;
        const double *a = src->d1 + band_off, *b = src->d2 + band_off;
        if (sign > 0) { ROW_LOOP(+=, a[x], b[x]) } else { ROW_LOOP(-=, a[x], b[x]) }
    } else {
        const float *p = (const float *)src->raw + off;
        if (sign > 0) {
            ROW_LOOP(+=, (double)p[x], (double)p[x] * p[x])
        } else {
            ROW_LOOP(-=, (double)p[x], (double)p[x] * p[x])
        }
    }
}

/* One band of output rows [y0, y1): column running sums over the window rows, then a running
 * sum along each row (the paper's roll). Outside the image counts as 0; with the VALID border
 * such windows are NaN instead. Returns the number of pixels whose SFI is NaN. */
#define DEFINE_ROLL(SUFFIX, ACC)                                                                  \
    static long long roll_band_##SUFFIX(const roll_src *src, const fm_lsi_params *p, int y0,     \
                                        int y1, ACC *c1, ACC *c2, float *k_out, float *sfi_out)  \
    {                                                                                         \
        const int W = src->width, H = src->height, w = (p->window - 1) / 2;                    \
        const int valid = p->border == FM_LSI_BORDER_VALID;                                    \
        const double n = (double)p->window * p->window * src->samples_per_pixel;               \
        const double exposure_s = p->exposure_ms / 1000.0;                                     \
        long long invalid = 0;                                                                 \
        memset(c1, 0, sizeof(ACC) * (size_t)W);                                                \
        memset(c2, 0, sizeof(ACC) * (size_t)W);                                                \
        for (int r = y0 - w; r <= y0 + w; r++)                                                 \
            if (r >= 0 && r < H)                                                               \
                row_##SUFFIX(src, r, +1, c1, c2);                                              \
        for (int y = y0; y < y1; y++) {                                                        \
            if (y > y0) {                                                                      \
                if (y + w < H)                                                                 \
                    row_##SUFFIX(src, y + w, +1, c1, c2);                                      \
                if (y - 1 - w >= 0)                                                            \
                    row_##SUFFIX(src, y - 1 - w, -1, c1, c2);                                  \
            }                                                                                  \
            float *ko = k_out ? k_out + (size_t)y * W : NULL;                                  \
            float *so = sfi_out ? sfi_out + (size_t)y * W : NULL;                              \
            const int row_ok = !valid || (y - w >= 0 && y + w < H);                            \
            ACC s1 = 0, s2 = 0;                                                                \
            for (int x = 0; x <= w && x < W; x++) {                                            \
                s1 += c1[x];                                                                   \
                s2 += c2[x];                                                                   \
            }                                                                                  \
            for (int x = 0; x < W; x++) {                                                      \
                float k = NAN, s = NAN;                                                        \
                if (row_ok && (!valid || (x - w >= 0 && x + w < W)))                           \
                    invalid += fm_lsi_window_stats((double)s1, (double)s2, n, exposure_s, &k,  \
                                                   &s);                                        \
                else                                                                           \
                    invalid++;                                                                 \
                if (ko)                                                                        \
                    ko[x] = k;                                                                 \
                if (so)                                                                        \
                    so[x] = s;                                                                 \
                if (x + 1 + w < W) {                                                           \
                    s1 += c1[x + 1 + w];                                                       \
                    s2 += c2[x + 1 + w];                                                       \
                }                                                                              \
                if (x - w >= 0) {                                                              \
                    s1 -= c1[x - w];                                                           \
                    s2 -= c2[x - w];                                                           \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
        return invalid;                                                                        \
    }

DEFINE_ROLL(i64, int64_t)
DEFINE_ROLL(f64, double)

/* Rows [r0, r1) of one output frame, split into bands that threads take independently; each
 * band rebuilds its own column sums, which costs window rows per band and keeps bands apart. */
static long long roll_rows(const roll_src *src, const fm_lsi_params *p, int r0, int r1,
                           void *scratch, float *k_out, float *sfi_out)
{
    const int W = src->width;
    /* Four bands per thread balance the load; at least 16 rows so that each band's start-up
     * (window rows summed) stays small next to the band itself. */
    const int threads = fm_cpu_threads();
    int band_rows = (r1 - r0 + 4 * threads - 1) / (4 * threads);
    if (band_rows < 16)
        band_rows = 16;
    const int is_float = src->d1 != NULL || (src->raw && src->type == FM_PIXEL_F32);
    const int n_bands = (r1 - r0 + band_rows - 1) / band_rows;
    long long invalid = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : invalid)
    for (int b = 0; b < n_bands; b++) {
        int y0 = r0 + b * band_rows;
        int y1 = y0 + band_rows < r1 ? y0 + band_rows : r1;
        char *mine = (char *)scratch + (size_t)fm_thread_index() * 2 * 8 * (size_t)W;
        if (is_float)
            invalid += roll_band_f64(src, p, y0, y1, (double *)mine, (double *)mine + W, k_out,
                                     sfi_out);
        else
            invalid += roll_band_i64(src, p, y0, y1, (int64_t *)mine, (int64_t *)mine + W,
                                     k_out, sfi_out);
    }
    return invalid;
}

/* Per-pixel sums over frames [t, t + F) of rows [s0, s1), into arrays that start at row s0:
 * built once for t = 0, then one frame in, one out. */
static void temporal_update(const fm_lsi_job *job, int t, int s0, int s1, int64_t *i1,
                            int64_t *i2, double *d1, double *d2)
{
    const size_t plane = (size_t)job->width * job->height;
    const int F = job->params.frames;
    const size_t px = fm_pixel_size(job->type);
    const char *base = (const char *)job->frames + (size_t)s0 * job->width * px;
    const long long n = (long long)(s1 - s0) * job->width;
    int first = t == 0 ? 0 : t + F - 1, last = t == 0 ? F - 1 : t + F - 1;
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < n; i++) {
        if (t == 0) {
            if (d1) d1[i] = d2[i] = 0;
            else i1[i] = i2[i] = 0;
        }
        for (int f = first; f <= last; f++) {
            const char *frame = base + (size_t)f * plane * px;
            if (job->type == FM_PIXEL_F32) {
                double v = ((const float *)frame)[i];
                d1[i] += v;
                d2[i] += v * v;
            } else {
                int64_t v = job->type == FM_PIXEL_U8 ? ((const uint8_t *)frame)[i]
                                                     : ((const uint16_t *)frame)[i];
                i1[i] += v;
                i2[i] += v * v;
            }
        }
        if (t > 0) {
            const char *old = base + (size_t)(t - 1) * plane * px;
            if (job->type == FM_PIXEL_F32) {
                double v = ((const float *)old)[i];
                d1[i] -= v;
                d2[i] -= v * v;
            } else {
                int64_t v = job->type == FM_PIXEL_U8 ? ((const uint8_t *)old)[i]
                                                     : ((const uint16_t *)old)[i];
                i1[i] -= v;
                i2[i] -= v * v;
            }
        }
    }
}

/* Statistics of n pixels from their sums over time. */
static long long temporal_stats(const fm_lsi_job *job, long long n_pixels, const int64_t *i1,
                                const int64_t *i2, const double *d1, const double *d2,
                                float *k_out, float *sfi_out)
{
    const long long plane = n_pixels;
    const double n = job->params.frames, exposure_s = job->params.exposure_ms / 1000.0;
    long long invalid = 0;
#pragma omp parallel for schedule(static) reduction(+ : invalid)
    for (long long i = 0; i < plane; i++) {
        float k, s;
        double s1 = d1 ? d1[i] : (double)i1[i], s2 = d1 ? d2[i] : (double)i2[i];
        invalid += fm_lsi_window_stats(s1, s2, n, exposure_s, &k, &s);
        if (k_out)
            k_out[i] = k;
        if (sfi_out)
            sfi_out[i] = s;
    }
    return invalid;
}

fm_status fm_lsi_cpu_from_sums(const fm_lsi_job *job, const int64_t *s1, const int64_t *s2,
                               long long *invalid, char *msg, size_t msg_len)
{
    const int W = job->width, H = job->height;
    if (job->mode == FM_LSI_MODE_TEMPORAL) {
        *invalid +=
            temporal_stats(job, (long long)W * H, s1, s2, NULL, NULL, job->contrast, job->sfi);
        return FM_OK;
    }
    void *scratch = malloc((size_t)fm_cpu_threads() * 2 * 8 * (size_t)W);
    if (!scratch)
        return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for the row buffers");
    roll_src src = {.i1 = s1,
                    .i2 = s2,
                    .type = job->type,
                    .width = W,
                    .height = H,
                    .samples_per_pixel = job->params.frames};
    *invalid += roll_rows(&src, &job->params, 0, H, scratch, job->contrast, job->sfi);
    free(scratch);
    return FM_OK;
}

fm_status fm_lsi_cpu_run(const fm_lsi_job *job, long long *invalid, char *msg, size_t msg_len)
{
    fm_status status = FM_OK;
    const int W = job->width, H = job->height;
    const size_t plane = (size_t)W * H;
    const int threads = fm_cpu_threads();
    const int is_float = job->type == FM_PIXEL_F32;
    void *scratch = malloc((size_t)threads * 2 * 8 * (size_t)W);
    void *sum1 = NULL, *sum2 = NULL;

    if (!scratch) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for %d row buffers", threads);
        goto cleanup;
    }

    if (job->mode == FM_LSI_MODE_SPATIAL) {
        /* A lone frame is cut into row chunks so that progress and cancel still work; without a
         * tick (live frames) it is one chunk: each chunk restarts its bands' column sums. */
        const int chunks = job->n_frames == 1 && job->tick ? 8 : 1;
        const int chunk_rows = (H + chunks - 1) / chunks;
        roll_src src = {.type = job->type, .width = W, .height = H, .samples_per_pixel = 1};
        for (int f = 0; f < job->n_frames; f++) {
            src.raw = (const char *)job->frames + (size_t)f * plane * fm_pixel_size(job->type);
            float *k = job->contrast ? job->contrast + (size_t)f * plane : NULL;
            float *s = job->sfi ? job->sfi + (size_t)f * plane : NULL;
            for (int c = 0; c < chunks; c++) {
                int r0 = c * chunk_rows, r1 = r0 + chunk_rows < H ? r0 + chunk_rows : H;
                if (r0 < r1)
                    *invalid += roll_rows(&src, &job->params, r0, r1, scratch, k, s);
                double done = ((double)f * chunks + c + 1) / ((double)job->n_frames * chunks);
                if (job->tick && job->tick(job->tick_user, done)) {
                    status = fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled");
                    goto cleanup;
                }
            }
        }
        goto cleanup;
    }

    /* Temporal and spatio-temporal: running sums over time per pixel, then either the
     * statistics per pixel or the spatial roll over the sum images. The sums are kept for one
     * band of output rows at a time, plus the window's rows above and below it, not for the whole
     * frame: two 8-byte planes were 23 MB at 1392 x 1040, a seventh of the run's data. */
    const int halo = job->mode == FM_LSI_MODE_TEMPORAL ? 0 : (job->params.window - 1) / 2;
    const int band = H < 16 * threads ? H : (16 * threads > 64 ? 16 * threads : 64);
    const int n_bands = (H + band - 1) / band;
    const size_t span = (size_t)(band + 2 * halo < H ? band + 2 * halo : H) * (size_t)W;
    sum1 = malloc(span * 8);
    sum2 = malloc(span * 8);
    if (!sum1 || !sum2) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for %dx%d running sums", W,
                         band);
        goto cleanup;
    }
    int64_t *i1 = is_float ? NULL : sum1, *i2 = is_float ? NULL : sum2;
    double *d1 = is_float ? sum1 : NULL, *d2 = is_float ? sum2 : NULL;
    roll_src src = {.i1 = i1, .i2 = i2, .d1 = d1, .d2 = d2, .type = job->type, .width = W,
                    .height = H, .samples_per_pixel = job->params.frames};
    for (int b = 0; b < n_bands; b++) {
        const int r0 = b * band, r1 = r0 + band < H ? r0 + band : H;
        const int s0 = r0 - halo > 0 ? r0 - halo : 0, s1 = r1 + halo < H ? r1 + halo : H;
        src.row0 = s0;
        for (int t = 0; t < job->n_out; t++) {
            float *k = job->contrast ? job->contrast + (size_t)t * plane : NULL;
            float *s = job->sfi ? job->sfi + (size_t)t * plane : NULL;
            temporal_update(job, t, s0, s1, i1, i2, d1, d2);
            if (job->mode == FM_LSI_MODE_TEMPORAL)
                *invalid += temporal_stats(job, (long long)(r1 - r0) * W, i1, i2, d1, d2,
                                           k ? k + (size_t)r0 * W : NULL,
                                           s ? s + (size_t)r0 * W : NULL);
            else
                *invalid += roll_rows(&src, &job->params, r0, r1, scratch, k, s);
            double done = ((double)b * job->n_out + t + 1) / ((double)n_bands * job->n_out);
            if (job->tick && job->tick(job->tick_user, done)) {
                status = fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled");
                goto cleanup;
            }
        }
    }

cleanup:
    free(scratch);
    free(sum1);
    free(sum2);
    return status;
}
