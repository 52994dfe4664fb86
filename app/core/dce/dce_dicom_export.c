/* A run's maps and ROIs back to the archive: DICOM Parametric Maps and a Segmentation beside
 * the TIFF maps. */
#include "app/core/dce/dce_dicom_export.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "app/core/error.h"
#include "app/core/io/dicom_write.h"

static void remove_written(GPtrArray *written)
{
    for (guint i = 0; i < written->len; i++)
        g_unlink(written->pdata[i]);
}

gboolean fm_dce_export_dicom(const fm_result *result, const fm_dataset *source, GPtrArray *rois,
                             const char *outdir, GPtrArray *files, char **note, GError **error)
{
    if (!result || !result->maps || result->maps->len == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: there are no maps to export"),
                    outdir);
        return FALSE;
    }
    g_autofree char *description = g_strdup_printf("Fluxmap %s", result->method_id);
    g_autoptr(fm_dicom_out) out = fm_dicom_out_new(source, description, error);
    if (!out)
        return FALSE;
    if (g_mkdir_with_parents(outdir, 0755) != 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot create directory"), outdir);
        return FALSE;
    }
    g_autoptr(GPtrArray) written = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < result->maps->len; i++) {
        const fm_map *map = result->maps->pdata[i];
        g_autofree char *name = g_strconcat(map->name, ".dcm", NULL);
        g_autofree char *path = g_build_filename(outdir, name, NULL);
        char *absolute = g_canonicalize_filename(path, NULL);
        g_ptr_array_add(written, absolute);
        if (!fm_dicom_out_write_map(out, absolute, map, (int)i + 1, error)) {
            remove_written(written);
            return FALSE;
        }
    }
    gboolean with_seg = rois && rois->len > 0;
    if (with_seg) {
        g_autofree char *path = g_build_filename(outdir, FM_DCE_DICOM_SEG_FILE, NULL);
        char *absolute = g_canonicalize_filename(path, NULL);
        g_ptr_array_add(written, absolute);
        if (!fm_dicom_out_write_segmentation(out, absolute, rois, error)) {
            remove_written(written);
            return FALSE;
        }
    }
    if (note) {
        const char *geometry = fm_dicom_out_note(out);
        g_autofree char *what =
            with_seg ? g_strdup_printf(_("DICOM: %u Parametric Maps (<map>.dcm) and a "
                                         "Segmentation of the ROIs (%s) in %s"),
                                       result->maps->len, FM_DCE_DICOM_SEG_FILE, outdir)
                     : g_strdup_printf(_("DICOM: %u Parametric Maps (<map>.dcm) in %s"),
                                       result->maps->len, outdir);
        *note = geometry ? g_strdup_printf("%s; %s", what, geometry) : g_steal_pointer(&what);
    }
    if (files)
        for (guint i = 0; i < written->len; i++)
            g_ptr_array_add(files, g_strdup(written->pdata[i]));
    return TRUE;
}
