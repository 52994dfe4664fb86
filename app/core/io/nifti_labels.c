/* NIfTI label maps (ROIs as integer voxels) written with the source dataset's qform and sform. */
#include "nifti_labels.h"
#include "nifti_private.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/fm_dce_io_config.h"
#include "app/core/io/frame_times.h"

#if FM_HAVE_NIFTI

#include <nifti/nifti2_io.h>

/* The source's header when it was read from a NIfTI file (fm_nifti_read sets "nifti_version"),
 * else NULL. nifti_image_free() it. */
static nifti_image *source_header(const fm_dataset *source)
{
    if (source == NULL || source->source_path == NULL ||
        fm_dataset_get_meta(source, "nifti_version") == NULL ||
        !g_file_test(source->source_path, G_FILE_TEST_IS_REGULAR))
        return NULL;
    return nifti_image_read(source->source_path, 0);
}

/* The source's qform and sform exactly as its file holds them. */
static void copy_geometry(nifti_image *nim, const nifti_image *src)
{
    nim->qform_code = src->qform_code;
    nim->quatern_b = src->quatern_b;
    nim->quatern_c = src->quatern_c;
    nim->quatern_d = src->quatern_d;
    nim->qoffset_x = src->qoffset_x;
    nim->qoffset_y = src->qoffset_y;
    nim->qoffset_z = src->qoffset_z;
    nim->qfac = src->qfac;
    nim->qto_xyz = src->qto_xyz;
    nim->qto_ijk = src->qto_ijk;
    nim->sform_code = src->sform_code;
    nim->sto_xyz = src->sto_xyz;
    nim->sto_ijk = src->sto_ijk;
    nim->dx = nim->pixdim[1] = src->dx;
    nim->dy = nim->pixdim[2] = src->dy;
    nim->dz = nim->pixdim[3] = src->dz;
    nim->xyz_units = src->xyz_units;
}

gboolean fm_nifti_write_labels(const char *path, const guint16 *labels, int nx, int ny, int nz,
                               const fm_dataset *source, GError **error)
{
    g_return_val_if_fail(nx > 0 && ny > 0 && nz > 0, FALSE);
    nifti_set_debug_level(0);
    gsize n = (gsize)nx * ny * nz;
    guint16 top = 0;
    for (gsize i = 0; i < n; i++)
        top = MAX(top, labels[i]);
    int datatype = top <= G_MAXUINT8 ? DT_UINT8 : DT_UINT16;
    int64_t dims[8] = {3, nx, ny, nz, 1, 1, 1, 1};
    nifti_image *nim = nifti_make_new_nim(dims, datatype, 1);
    if (nim == NULL) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: nifticlib cannot make an image"), path);
        return FALSE;
    }
    if (datatype == DT_UINT8)
        for (gsize i = 0; i < n; i++)
            ((guint8 *)nim->data)[i] = (guint8)labels[i];
    else
        memcpy(nim->data, labels, n * sizeof(guint16));
    nifti_image *src = source_header(source);
    if (src != NULL) {
        copy_geometry(nim, src);
        nifti_image_free(src);
    } else {
        double affine[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
        if (source != NULL)
            fm_dataset_get_affine(source, affine);
        fm_nifti_set_affine(nim, affine);
    }
    /* Labels are names, not quantities: no scaling, and the intent says so. */
    nim->scl_slope = 0.0;
    nim->scl_inter = 0.0;
    nim->intent_code = NIFTI_INTENT_LABEL;
    g_strlcpy(nim->descrip, "Fluxmap ROIs", sizeof nim->descrip);
    if (!fm_nifti_set_output_path(nim, path, error)) {
        nifti_image_free(nim);
        return FALSE;
    }
    nifti_image_write(nim);
    nifti_image_free(nim);
    GStatBuf st;
    if (g_stat(path, &st) != 0 || st.st_size == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write the NIfTI file"), path);
        return FALSE;
    }
    return TRUE;
}

gboolean fm_nifti_has_orientation(const char *path)
{
    nifti_set_debug_level(0);
    nifti_image *nim = path != NULL ? nifti_image_read(path, 0) : NULL;
    gboolean oriented = nim != NULL && (nim->qform_code > 0 || nim->sform_code > 0);
    if (nim != NULL)
        nifti_image_free(nim);
    return oriented;
}

#else /* !FM_HAVE_NIFTI */

gboolean fm_nifti_has_orientation(const char *path)
{
    return FALSE;
}

gboolean fm_nifti_write_labels(const char *path, const guint16 *labels, int nx, int ny, int nz,
                               const fm_dataset *source, GError **error)
{
    g_set_error(error, FM_ERROR, FM_ERROR_IO,
                _("%s: this Fluxmap was built without nifticlib; NIfTI files cannot be written"),
                path);
    return FALSE;
}

#endif
