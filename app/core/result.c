/* fm_result and fm_map: method outputs (their statistics are in map_stats.c). */
#include "result.h"

#include "kernels/host_memory.h"

static fm_map *map_new(const char *name, const char *unit, int width, int height, int n_frames,
                       void *(*alloc)(size_t))
{
    fm_map *map = g_new0(fm_map, 1);
    map->name = g_strdup(name);
    map->unit = g_strdup(unit);
    map->width = width;
    map->height = height;
    map->n_frames = n_frames;
    /* page-locked once a GPU is started: the kernels download into the map itself */
    map->data = alloc(MAX(fm_map_n_values(map), 1) * sizeof(float));
    if (!map->data)
        g_error("out of memory for a %d x %d x %d map", width, height, n_frames);
    return map;
}

fm_map *fm_map_new(const char *name, const char *unit, int width, int height, int n_frames)
{
    return map_new(name, unit, width, height, n_frames, fm_host_alloc);
}

fm_map *fm_map_new_uninit(const char *name, const char *unit, int width, int height, int n_frames)
{
    return map_new(name, unit, width, height, n_frames, fm_host_alloc_uninit);
}

void fm_map_free(fm_map *map)
{
    if (map == NULL)
        return;
    g_free(map->name);
    g_free(map->unit);
    fm_host_free(map->data, MAX(fm_map_n_values(map), 1) * sizeof(float));
    g_free(map);
}

gsize fm_map_n_values(const fm_map *map)
{
    return (gsize)map->width * (gsize)map->height * (gsize)map->n_frames;
}

float *fm_map_frame(fm_map *map, int frame)
{
    return map->data + (gsize)frame * (gsize)map->width * (gsize)map->height;
}

fm_result *fm_result_new(const char *method_id)
{
    fm_result *r = g_new0(fm_result, 1);
    r->method_id = g_strdup(method_id);
    r->maps = g_ptr_array_new_with_free_func((GDestroyNotify)fm_map_free);
    return r;
}

void fm_result_free(fm_result *result)
{
    if (result == NULL)
        return;
    g_free(result->method_id);
    g_free(result->params_json);
    g_free(result->backend);
    g_free(result->device);
    g_free(result->note);
    g_ptr_array_unref(result->maps);
    g_free(result);
}

void fm_result_add_map(fm_result *result, fm_map *map)
{
    g_ptr_array_add(result->maps, map);
}

fm_map *fm_result_get_map(const fm_result *result, const char *name)
{
    for (guint i = 0; i < result->maps->len; i++) {
        fm_map *m = g_ptr_array_index(result->maps, i);
        if (g_strcmp0(m->name, name) == 0)
            return m;
    }
    return NULL;
}
