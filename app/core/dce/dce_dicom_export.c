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
        g_unlink(((fm_catalogue_export *)written->pdata[i])->file);
}

static fm_catalogue_export *exported(const char *path, const fm_dicom_out *out,
                                     gboolean segmentation)
{
    fm_catalogue_export *e = g_new0(fm_catalogue_export, 1);
    e->file = g_canonicalize_filename(path, NULL);
    e->format = g_strdup("dicom");
    e->sop_class_uid = g_strdup(segmentation ? FM_DICOM_SEGMENTATION_SOP_CLASS
                                             : FM_DICOM_PARAMETRIC_MAP_SOP_CLASS);
    e->series_uid = g_strdup(fm_dicom_out_series_uid(out, segmentation));
    return e;
}

gboolean fm_dce_export_dicom(const fm_result *result, const fm_dataset *source, GPtrArray *rois,
                             const char *outdir, fm_catalogue *catalogue, gint64 run_id,
                             char **note, GError **error)
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
    g_autoptr(GPtrArray) written =
        g_ptr_array_new_with_free_func((GDestroyNotify)fm_catalogue_export_free);
    for (guint i = 0; i < result->maps->len; i++) {
        const fm_map *map = result->maps->pdata[i];
        g_autofree char *name = g_strconcat(map->name, ".dcm", NULL);
        g_autofree char *path = g_build_filename(outdir, name, NULL);
        fm_catalogue_export *e = exported(path, out, FALSE);
        g_ptr_array_add(written, e);
        if (!fm_dicom_out_write_map(out, e->file, map, (int)i + 1, error)) {
            remove_written(written);
            return FALSE;
        }
    }
    gboolean with_seg = rois && rois->len > 0;
    if (with_seg) {
        g_autofree char *path = g_build_filename(outdir, FM_DCE_DICOM_SEG_FILE, NULL);
        fm_catalogue_export *e = exported(path, out, TRUE);
        g_ptr_array_add(written, e);
        if (!fm_dicom_out_write_segmentation(out, e->file, rois, error)) {
            remove_written(written);
            return FALSE;
        }
    }
    /* The files are good whether or not the catalogue takes them: a failure here is said, not
     * undone. */
    g_autoptr(GError) unrecorded = NULL;
    if (catalogue && run_id > 0)
        fm_catalogue_add_exports(catalogue, run_id, written, &unrecorded);
    if (note) {
        const char *geometry = fm_dicom_out_note(out);
        g_autofree char *what =
            with_seg ? g_strdup_printf(_("DICOM: %u Parametric Maps (<map>.dcm) and a "
                                         "Segmentation of the ROIs (%s) in %s"),
                                       result->maps->len, FM_DCE_DICOM_SEG_FILE, outdir)
                     : g_strdup_printf(_("DICOM: %u Parametric Maps (<map>.dcm) in %s"),
                                       result->maps->len, outdir);
        if (geometry) {
            char *both = g_strdup_printf("%s; %s", what, geometry);
            g_free(what);
            what = both;
        }
        char *both = NULL;
        if (unrecorded)
            both = g_strdup_printf(_("%s; the run catalogue does not list them: %s"), what,
                                   unrecorded->message);
        else if (catalogue && run_id > 0)
            both = g_strdup_printf(_("%s; listed with run %" G_GINT64_FORMAT " in the catalogue"),
                                   what, run_id);
        if (both) {
            g_free(what);
            what = both;
        }
        *note = g_steal_pointer(&what);
    }
    return TRUE;
}
