/* The FM_ERROR GError domain. */
#include "error.h"

GQuark fm_error_quark(void)
{
    return g_quark_from_static_string("fm-error-quark");
}

gboolean fm_error_bad_input(GError **error, const char *path, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *what = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, "%s: %s", path, what);
    return FALSE;
}
