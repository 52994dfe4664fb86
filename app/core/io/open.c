/* Opens a dataset file with the reader its content (magic bytes), else its extension, names. */
#include "open.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/ptu.h"
#include "app/core/io/sdt.h"
#include "app/core/io/tiff.h"

typedef enum { FORMAT_UNKNOWN, FORMAT_TIFF, FORMAT_SDT, FORMAT_PTU } file_format;

static file_format format_from_content(const guint8 *m, gsize n)
{
    if (n >= 8 && memcmp(m, "PQTTTR\0\0", 8) == 0)
        return FORMAT_PTU;
    if (n >= 4 && ((m[0] == 'I' && m[1] == 'I' && (m[2] == 42 || m[2] == 43) && m[3] == 0) ||
                   (m[0] == 'M' && m[1] == 'M' && m[2] == 0 && (m[3] == 42 || m[3] == 43))))
        return FORMAT_TIFF;
    if (fm_sdt_sniff(m, n))
        return FORMAT_SDT;
    return FORMAT_UNKNOWN;
}

/* Damaged files lose their magic bytes; the extension then still picks the reader, whose
 * message says what is wrong far better than "unknown format". */
static file_format format_from_name(const char *path)
{
    g_autofree char *lower = g_ascii_strdown(path, -1);
    if (g_str_has_suffix(lower, ".tif") || g_str_has_suffix(lower, ".tiff"))
        return FORMAT_TIFF;
    if (g_str_has_suffix(lower, ".sdt"))
        return FORMAT_SDT;
    if (g_str_has_suffix(lower, ".ptu"))
        return FORMAT_PTU;
    return FORMAT_UNKNOWN;
}

fm_dataset *fm_dataset_open(const char *path, void (*progress)(double fraction, gpointer user),
                            gpointer progress_user, GCancellable *cancellable, GError **error)
{
    FILE *f = g_fopen(path, "rb");
    if (!f) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot open: %s"), path,
                    g_strerror(errno));
        return NULL;
    }
    guint8 head[64] = {0};
    gsize n = fread(head, 1, sizeof head, f);
    fclose(f);
    file_format format = format_from_content(head, n);
    if (format == FORMAT_UNKNOWN)
        format = format_from_name(path);
    switch (format) {
    case FORMAT_TIFF:
        return fm_tiff_read(path, error);
    case FORMAT_SDT:
        return fm_sdt_read(path, -1, error);
    case FORMAT_PTU:
        return fm_ptu_read(path, 0, progress, progress_user, cancellable, error);
    case FORMAT_UNKNOWN:
        break;
    }
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                n == 0 ? _("%s: empty file")
                       : _("%s: unknown file format (readable: TIFF, Becker & Hickl .sdt, "
                           "PicoQuant .ptu)"),
                path);
    return NULL;
}
