/* CPU twin of the noniterative FLIM estimators: OpenMP over tiles of pixels, chunked for ticks. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../device.h"
#include "flim_impl.h"
#include "flim_math.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Pixels per tile: the bin-major input is transposed tile by tile into a pixel-major scratch
 * (64 pixels x 256 bins = 64 KB, L2-resident), so each bin row is read as 256 contiguous bytes
 * and each pixel's decay is then contiguous for the per-pixel math. */
#define TILE 64
/* Pixels between ticks: big enough that a tick costs nothing next to the work. */
#define CHUNK 16384

static const int v_to_out[FM_FLIM_V_COUNT] = FM_FLIM_V_TO_OUT_INIT;

void fm_flim_fill_undefined(const fm_flim_job *job)
{
    for (int j = 0; j < FM_FLIM_OUT_COUNT; j++) {
        int mine = 0;
        for (int v = 0; v < FM_FLIM_V_COUNT; v++)
            mine |= v_to_out[v] == j;
        float *m = job->out->map[j];
        if (mine || !m)
            continue;
#pragma omp parallel for schedule(static)
        for (int q = 0; q < job->n_pixels; q++)
            m[q] = NAN;
    }
}

void fm_flim_copy_rows(void *dst, size_t dst_pitch, const void *src, size_t src_pitch,
                       size_t row_bytes, int rows)
{
#pragma omp parallel for schedule(static)
    for (int b = 0; b < rows; b++)
        memcpy((char *)dst + (size_t)b * dst_pitch, (const char *)src + (size_t)b * src_pitch,
               row_bytes);
}

fm_status fm_flim_direct_cpu(const fm_flim_job *job, char *msg, size_t msg_len)
{
    const fm_flim_params *p = job->params;
    const int n_pixels = job->n_pixels;
    static const double simpson[9] = FM_FLIM_SIMPSON_INIT;
    fm_flim_consts k;
    fm_flim_consts_init(&k, job->method, p);
    const int threads = fm_cpu_threads();
    fm_flim_trig *trig = malloc(sizeof *trig * (size_t)k.n);
    float *scratch = malloc(sizeof(float) * (size_t)TILE * k.n * threads);
    fm_status status = FM_OK;
    if (!trig || !scratch) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len,
                         "no memory for %d threads' tiles of %d bins", threads, k.n);
        goto cleanup;
    }
    fm_flim_trig_init(&k, trig);
    float *maps[FM_FLIM_V_COUNT];
    for (int j = 0; j < FM_FLIM_V_COUNT; j++)
        maps[j] = job->out->map[v_to_out[j]];
    fm_flim_fill_undefined(job);

    /* u16 or float32 counts: the transpose into the float tile converts, exactly, so both give
     * the same results. */
    const int is_u16 = job->counts_type == FM_PIXEL_U16;
    const size_t first = (size_t)p->fit_start * n_pixels;
    const float *base = is_u16 ? NULL : (const float *)job->counts_data + first;
    const uint16_t *base16 = is_u16 ? (const uint16_t *)job->counts_data + first : NULL;
    for (int c0 = 0; c0 < n_pixels; c0 += CHUNK) {
        const int c1 = c0 + CHUNK < n_pixels ? c0 + CHUNK : n_pixels;
        const int n_tiles = (c1 - c0 + TILE - 1) / TILE;
#pragma omp parallel for schedule(dynamic, 4)
        for (int t = 0; t < n_tiles; t++) {
            int me = 0;
#ifdef _OPENMP
            me = omp_get_thread_num();
#endif
            float *tile = scratch + (size_t)me * TILE * k.n;
            const int p0 = c0 + t * TILE, np = p0 + TILE < c1 ? TILE : c1 - p0;
            for (int b = 0; b < k.n; b++) {
                const size_t at = (size_t)b * n_pixels + p0;
                if (is_u16) {
                    const uint16_t *row = base16 + at;
                    for (int q = 0; q < np; q++)
                        tile[(size_t)q * k.n + b] = (float)row[q];
                } else {
                    const float *row = base + at;
                    for (int q = 0; q < np; q++)
                        tile[(size_t)q * k.n + b] = row[q];
                }
            }
            for (int q = 0; q < np; q++) {
                float v[FM_FLIM_V_COUNT];
                const int pix = p0 + q;
                const int valid = !job->mask || job->mask[pix];
                fm_flim_direct_pixel(&k, tile + (size_t)q * k.n, 1, valid, simpson, trig, v);
                for (int j = 0; j < FM_FLIM_V_COUNT; j++)
                    if (maps[j])
                        maps[j][pix] = v[j];
            }
        }
        if (job->tick && job->tick(job->tick_user, (double)c1 / n_pixels)) {
            status = fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled");
            goto cleanup;
        }
    }

cleanup:
    free(trig);
    free(scratch);
    return status;
}
