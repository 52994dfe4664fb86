/* DICOM entry points for builds without DCMTK: every call fails and says why. */
#include "dicom.h"

#include <glib/gi18n.h>

#include "app/core/error.h"

fm_dataset *fm_dicom_read(const char *folder, const char *series_uid, GError **error)
{
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                _("%s: this Fluxmap was built without DCMTK; DICOM series cannot be read "
                  "(convert to NIfTI, e.g. with dcm2niix)"),
                folder);
    return NULL;
}

fm_dataset *fm_dicom_read_progress(const char *folder, const char *series_uid,
                                   void (*progress)(double fraction, gpointer user), gpointer user,
                                   GCancellable *cancellable, GError **error)
{
    return fm_dicom_read(folder, series_uid, error);
}

fm_dataset *fm_dicom_read_file_series(const char *file,
                                      void (*progress)(double fraction, gpointer user),
                                      gpointer user, GCancellable *cancellable, GError **error)
{
    return fm_dicom_read(file, NULL, error);
}

char **fm_dicom_list_series(const char *folder, GError **error)
{
    fm_dataset *none = fm_dicom_read(folder, NULL, error);
    g_assert(none == NULL);
    return NULL;
}

gboolean fm_dicom_available(void)
{
    return FALSE;
}

guint16 fm_dicom_test_stored_value(int x, int y, int z, int t)
{
    return (guint16)((x + 7 * y + 131 * z + 1009 * t) % 30000);
}

gboolean fm_dicom_write_test_series(const char *dir, const fm_dicom_test_series *spec,
                                    GError **error)
{
    g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: built without DCMTK"), dir);
    return FALSE;
}
