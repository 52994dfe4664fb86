/* The FM_ERROR GError domain shared by core, CLI and GUI. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define FM_ERROR (fm_error_quark())
GQuark fm_error_quark(void);

typedef enum {
    FM_ERROR_BAD_PARAM,  /* a parameter is out of range or malformed (CLI exit 2) */
    FM_ERROR_BAD_INPUT,  /* a file is unreadable, truncated or of the wrong shape (CLI exit 3) */
    FM_ERROR_IO,         /* writing or reading our own files failed (CLI exit 3) */
    FM_ERROR_COMPUTE,    /* a kernel failed (CLI exit 4) */
    FM_ERROR_DEVICE,     /* the GPU failed or is missing (CLI exit 4) */
    FM_ERROR_CANCELLED,  /* the user cancelled */
    FM_ERROR_CATALOGUE,  /* the SQLite catalogue refused a read or write */
} FmErrorCode;

/* Sets FM_ERROR_BAD_INPUT with the message "path: <formatted text>" and returns FALSE, so a
 * file reader can `return fm_error_bad_input(error, path, ...)`. */
gboolean fm_error_bad_input(GError **error, const char *path, const char *format, ...)
    G_GNUC_PRINTF(3, 4);

G_END_DECLS
