/* The maps a live run keeps: every frame's maps as stacks (what the offline run writes), or a
 * running mean and the last frame for sessions too long to keep every frame in memory. */
#include "app/core/live_private.h"

#include <math.h>
#include <string.h>

typedef struct {
    char *name, *unit;
    int width, height;
    GByteArray *frames; /* SAVE_ALL: every frame's floats, frame-major */
    /* SUMMARY: per pixel, the finite values summed in float over a block of frames, then
     * into double (half the memory traffic of a double sum per frame, the precision of one
     * per block), the count of frames where it was not finite, and the last frame (the step's
     * own map: borrowed until its next call, which never comes after the last frame) */
    float *block;
    double *sum;
    guint32 *n_nonfinite;
    int block_frames;
    const float *last;
} live_map;

/* Frames summed in float before they go into the double sum. */
#define FM_LIVE_SUM_BLOCK 32

struct fm_live_maps {
    fm_live_save mode;
    GPtrArray *maps; /* of live_map* */
    guint64 n_frames;
};

static void live_map_free(gpointer data)
{
    live_map *m = data;
    g_free(m->name);
    g_free(m->unit);
    if (m->frames)
        g_byte_array_unref(m->frames);
    g_free(m->block);
    g_free(m->sum);
    g_free(m->n_nonfinite);
    g_free(m);
}

fm_live_maps *fm_live_maps_new(fm_live_save mode)
{
    fm_live_maps *maps = g_new0(fm_live_maps, 1);
    maps->mode = mode;
    maps->maps = g_ptr_array_new_with_free_func(live_map_free);
    return maps;
}

void fm_live_maps_free(fm_live_maps *maps)
{
    if (!maps)
        return;
    g_ptr_array_unref(maps->maps);
    g_free(maps);
}

guint64 fm_live_maps_frames(const fm_live_maps *maps)
{
    return maps->n_frames;
}

static live_map *live_map_new(const fm_map *src, fm_live_save mode)
{
    live_map *m = g_new0(live_map, 1);
    m->name = g_strdup(src->name);
    m->unit = g_strdup(src->unit);
    m->width = src->width;
    m->height = src->height;
    gsize n = (gsize)src->width * src->height;
    if (mode == FM_LIVE_SAVE_ALL) {
        m->frames = g_byte_array_new();
    } else {
        m->block = g_new0(float, n);
        m->sum = g_new0(double, n);
        m->n_nonfinite = g_new0(guint32, n);
    }
    return m;
}

static void fold_block(live_map *m, gsize n)
{
    for (gsize p = 0; p < n; p++) {
        m->sum[p] += m->block[p];
        m->block[p] = 0;
    }
    m->block_frames = 0;
}

void fm_live_maps_add(fm_live_maps *maps, const fm_live_output *output)
{
    if (maps->maps->len == 0)
        for (int i = 0; i < output->n_maps; i++)
            g_ptr_array_add(maps->maps, live_map_new(output->maps[i], maps->mode));
    for (guint i = 0; i < maps->maps->len && i < (guint)output->n_maps; i++) {
        live_map *m = maps->maps->pdata[i];
        const fm_map *src = output->maps[i];
        gsize n = (gsize)m->width * m->height;
        if (m->frames) {
            g_byte_array_append(m->frames, (const guint8 *)src->data, (guint)(n * sizeof(float)));
            continue;
        }
        const float *in = src->data;
        float *block = m->block;
        guint32 *nonfinite = m->n_nonfinite;
        for (gsize p = 0; p < n; p++) {
            float v = in[p];
            if (G_LIKELY(isfinite(v)))
                block[p] += v;
            else
                nonfinite[p]++;
        }
        if (++m->block_frames == FM_LIVE_SUM_BLOCK)
            fold_block(m, n);
        m->last = in;
    }
    maps->n_frames++;
}

void fm_live_maps_take(fm_live_maps *maps, fm_result *result)
{
    if (maps->n_frames == 0)
        return;
    for (guint i = 0; i < maps->maps->len; i++) {
        live_map *m = maps->maps->pdata[i];
        gsize n = (gsize)m->width * m->height;
        if (m->frames) {
            int n_frames = (int)(m->frames->len / (n * sizeof(float)));
            fm_map *stack = fm_map_new_uninit(m->name, m->unit, m->width, m->height, n_frames);
            memcpy(stack->data, m->frames->data, m->frames->len);
            g_clear_pointer(&m->frames, g_byte_array_unref);
            fm_result_add_map(result, stack);
            continue;
        }
        g_autofree char *mean_name = g_strconcat(m->name, "_mean", NULL);
        g_autofree char *last_name = g_strconcat(m->name, "_last", NULL);
        fm_map *mean = fm_map_new_uninit(mean_name, m->unit, m->width, m->height, 1);
        fm_map *last = fm_map_new_uninit(last_name, m->unit, m->width, m->height, 1);
        fold_block(m, n);
        for (gsize p = 0; p < n; p++) {
            guint64 finite = maps->n_frames - m->n_nonfinite[p];
            mean->data[p] = finite ? (float)(m->sum[p] / (double)finite) : NAN;
        }
        memcpy(last->data, m->last, n * sizeof(float));
        fm_result_add_map(result, mean);
        fm_result_add_map(result, last);
    }
}
