/* Export of dce.dual_input maps: NIfTI volumes in the source's scanner geometry, float32 TIFF
 * stacks (one page per slice) and a CSV of every fitted voxel. */
#include "app/core/dce/dce_export.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/export.h"
#include "app/core/io/frame_times.h"
#include "app/core/io/nifti.h"

static const char *const format_names[] = {"nifti", "tiff", "csv"};

const char *fm_dce_export_format_name(fm_dce_export_format format)
{
    return format <= FM_DCE_EXPORT_CSV ? format_names[format] : "?";
}

gboolean fm_dce_export_format_parse(const char *text, fm_dce_export_format *out)
{
    for (int i = 0; i < (int)G_N_ELEMENTS(format_names); i++)
        if (g_strcmp0(text, format_names[i]) == 0) {
            *out = (fm_dce_export_format)i;
            return TRUE;
        }
    return FALSE;
}

char *fm_dce_export_map_path(const char *path, const char *map_name)
{
    static const char *const exts[] = {".nii.gz", ".nii", ".tiff", ".tif", ".csv"};
    for (gsize i = 0; i < G_N_ELEMENTS(exts); i++)
        if (g_str_has_suffix(path, exts[i])) {
            g_autofree char *stem = g_strndup(path, strlen(path) - strlen(exts[i]));
            return g_strdup_printf("%s_%s%s", stem, map_name, exts[i]);
        }
    return g_strdup_printf("%s_%s", path, map_name);
}

/* The CSV: one row per voxel where any map is finite, so unfitted background stays out. */
static gboolean write_csv(const fm_result *result, const char *path, GError **error)
{
    const fm_map *first = result->maps->pdata[0];
    GString *csv = g_string_new("x,y,z");
    for (guint m = 0; m < result->maps->len; m++)
        g_string_append_printf(csv, ",%s", ((const fm_map *)result->maps->pdata[m])->name);
    g_string_append_c(csv, '\n');
    gsize plane = (gsize)first->width * first->height;
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    for (int z = 0; z < first->n_frames; z++)
        for (gsize p = 0; p < plane; p++) {
            gsize v = (gsize)z * plane + p;
            gboolean any = FALSE;
            for (guint m = 0; m < result->maps->len && !any; m++)
                any = isfinite(((const fm_map *)result->maps->pdata[m])->data[v]);
            if (!any)
                continue;
            g_string_append_printf(csv, "%d,%d,%d", (int)(p % first->width),
                                   (int)(p / first->width), z);
            for (guint m = 0; m < result->maps->len; m++) {
                float value = ((const fm_map *)result->maps->pdata[m])->data[v];
                g_string_append_c(csv, ',');
                if (isfinite(value))
                    g_string_append(csv, g_ascii_formatd(buf, sizeof buf, "%.7g", value));
            }
            g_string_append_c(csv, '\n');
        }
    gboolean ok = g_file_set_contents(path, csv->str, (gssize)csv->len, error);
    g_string_free(csv, TRUE);
    return ok;
}

static gboolean write_map(const fm_map *map, const fm_result *result, const fm_dataset *source,
                          const char *file, fm_dce_export_format format, GError **error)
{
    if (format == FM_DCE_EXPORT_NIFTI) {
        const char *affine = source ? fm_dataset_get_meta(source, FM_META_AFFINE) : NULL;
        return fm_nifti_write(file, map->data, map->width, map->height, map->n_frames, 1, affine,
                              NULL, 1, error);
    }
    g_autofree char *extra =
        source && source->source_path
            ? g_strdup_printf("source=%s; slices=%d", source->source_path, map->n_frames)
            : g_strdup_printf("slices=%d", map->n_frames);
    return fm_export_tiff(file, map, result->method_id, extra, error);
}

gboolean fm_dce_export_maps(const fm_result *result, const fm_dataset *source, const char *path,
                            fm_dce_export_format format, const char *map_name, GError **error)
{
    if (!result || !result->maps || result->maps->len == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: there are no maps to export"),
                    path);
        return FALSE;
    }
    if (format == FM_DCE_EXPORT_CSV)
        return write_csv(result, path, error);
    if (map_name) {
        const fm_map *map = fm_result_get_map(result, map_name);
        if (!map) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: the result has no map '%s'"),
                        path, map_name);
            return FALSE;
        }
        return write_map(map, result, source, path, format, error);
    }
    for (guint m = 0; m < result->maps->len; m++) {
        const fm_map *map = result->maps->pdata[m];
        g_autofree char *file = fm_dce_export_map_path(path, map->name);
        if (!write_map(map, result, source, file, format, error))
            return FALSE;
    }
    return TRUE;
}
