/* fm_result: the named float maps a method produced, with the record of how it ran. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
    char *name; /* "contrast", "sfi" */
    char *unit; /* "1" (dimensionless), "1/s" */
    int width, height, n_frames;
    float *data; /* n_frames * width * height, frame-major; owned */
} fm_map;

/* Summary over all frames, NaN and ±Inf skipped. */
typedef struct {
    double min, max, mean, median;
    gsize valid_pixels;
} fm_map_stats;

typedef struct {
    char *method_id;
    char *params_json;
    char *backend;     /* "cpu" or "cuda": what actually ran */
    char *device;      /* GPU name or "CPU, n threads" */
    char *note;        /* fallback reason or other remark for the user, or NULL */
    double elapsed_ms; /* wall time of the method's run() */
    GPtrArray *maps;   /* of fm_map*, owned */
} fm_result;

fm_map *fm_map_new(const char *name, const char *unit, int width, int height, int n_frames);
/* For maps a kernel overwrites entirely: no zeroing of a reused page-locked block. */
fm_map *fm_map_new_uninit(const char *name, const char *unit, int width, int height, int n_frames);
void fm_map_free(fm_map *map);
gsize fm_map_n_values(const fm_map *map);
float *fm_map_frame(fm_map *map, int frame);
/* Exact, O(n), parallel, no copy: map_stats.c, where map_stats.h has the streaming form. */
fm_map_stats fm_map_statistics(const fm_map *map);

fm_result *fm_result_new(const char *method_id);
void fm_result_free(fm_result *result);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fm_result, fm_result_free)
void fm_result_add_map(fm_result *result, fm_map *map); /* takes ownership */
fm_map *fm_result_get_map(const fm_result *result, const char *name);

G_END_DECLS
