/* The FM_ERROR GError domain. */
#include "error.h"

GQuark fm_error_quark(void)
{
    return g_quark_from_static_string("fm-error-quark");
}
