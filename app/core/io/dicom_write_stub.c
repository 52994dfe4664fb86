/* DICOM export for builds without DCMTK's dcmpmap and dcmseg: every call fails and says why. */
#include "app/core/io/dicom_write.h"

#include <glib/gi18n.h>

#include "app/core/error.h"

fm_dicom_out *fm_dicom_out_new(const fm_dataset *source, const char *series_description,
                               GError **error)
{
    (void)source;
    (void)series_description;
    g_set_error_literal(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("this Fluxmap was built without DCMTK's dcmpmap and dcmseg; maps "
                          "cannot be written as DICOM (export NIfTI or TIFF instead)"));
    return NULL;
}

void fm_dicom_out_free(fm_dicom_out *out)
{
    (void)out;
}

const char *fm_dicom_out_note(const fm_dicom_out *out)
{
    (void)out;
    return NULL;
}

const char *fm_dicom_out_series_uid(const fm_dicom_out *out, gboolean segmentation)
{
    (void)out;
    (void)segmentation;
    return NULL;
}

gboolean fm_dicom_out_write_map(fm_dicom_out *out, const char *path, const fm_map *map,
                                int instance_number, GError **error)
{
    (void)out;
    (void)map;
    (void)instance_number;
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: no DICOM writer in this build"), path);
    return FALSE;
}

gboolean fm_dicom_out_write_segmentation(fm_dicom_out *out, const char *path, GPtrArray *rois,
                                         GError **error)
{
    (void)out;
    (void)rois;
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: no DICOM writer in this build"), path);
    return FALSE;
}

gboolean fm_dicom_write_available(void)
{
    return FALSE;
}
