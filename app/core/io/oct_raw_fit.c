/* Whether a raw OCT file's size fits its layout, and which layouts would fit when it does not. */
#include "oct_raw.h"

#include <glib/gi18n.h>
#include <string.h>

#include "app/core/error.h"

#define MAX_HINTS 3

/* "8,192,000": byte counts are long enough to need grouping to be read at a glance. */
static char *grouped(guint64 n)
{
    g_autofree char *digits = g_strdup_printf("%" G_GUINT64_FORMAT, n);
    GString *s = g_string_new(NULL);
    gsize len = strlen(digits);
    for (gsize i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            g_string_append_c(s, ',');
        g_string_append_c(s, digits[i]);
    }
    return g_string_free(s, FALSE);
}

/* "1 A-line", "400 A-lines" */
static char *alines_text(int n)
{
    return g_strdup_printf(ngettext("%d A-line", "%d A-lines", n), n);
}

static guint64 aline_bytes(int pixels, fm_oct_raw_format format)
{
    fm_oct_raw_layout l = {pixels, 1, 0, format};
    return fm_oct_raw_aline_bytes(&l);
}

static gboolean format_takes(int pixels, fm_oct_raw_format format)
{
    return pixels >= 2 && (format != FM_OCT_RAW_U12_PACKED || pixels % 2 == 0);
}

/* Adds "2048 pixels u16 would fit 5 B-scans of 400 A-lines" when that layout holds n_bytes
 * exactly (and has the declared B-scan count, when bscans > 0). */
static void try_layout(GPtrArray *hints, guint64 n_bytes, int pixels, int alines, int bscans,
                       fm_oct_raw_format format)
{
    if (hints->len >= MAX_HINTS || !format_takes(pixels, format) || alines < 1)
        return;
    guint64 bscan_bytes = aline_bytes(pixels, format) * (guint64)alines;
    if (n_bytes % bscan_bytes != 0 || (bscans > 0 && n_bytes / bscan_bytes != (guint64)bscans))
        return;
    guint64 n = n_bytes / bscan_bytes;
    g_autofree char *per_bscan = alines_text(alines);
    char *hint =
        g_strdup_printf(ngettext("%d pixels %s would fit %" G_GUINT64_FORMAT " B-scan of %s",
                                 "%d pixels %s would fit %" G_GUINT64_FORMAT " B-scans of %s", n),
                        pixels, fm_oct_raw_format_name(format), n, per_bscan);
    for (guint i = 0; i < hints->len; i++)
        if (g_strcmp0(hints->pdata[i], hint) == 0) {
            g_free(hint);
            return;
        }
    g_ptr_array_add(hints, hint);
}

/* Layouts near the given one that hold the file exactly: another sample format first (the most
 * common mistake), then another A-line count per B-scan, then another spectrometer width. */
static char *fitting_layouts(guint64 n_bytes, const fm_oct_raw_layout *layout)
{
    g_autoptr(GPtrArray) hints = g_ptr_array_new_with_free_func(g_free);
    int p = layout->pixels_per_aline, a = layout->alines_per_bscan, b = layout->n_bscans;
    for (int f = FM_OCT_RAW_U16; f <= FM_OCT_RAW_U8; f++)
        if ((fm_oct_raw_format)f != layout->format)
            try_layout(hints, n_bytes, p, a, 0, (fm_oct_raw_format)f);
    guint64 line = aline_bytes(p, layout->format);
    if (b > 0 && n_bytes % ((guint64)b * line) == 0 && n_bytes / ((guint64)b * line) <= G_MAXINT)
        try_layout(hints, n_bytes, p, (int)(n_bytes / ((guint64)b * line)), b, layout->format);
    static const int widths[] = {512, 1024, 2048, 4096, 8192};
    for (gsize i = 0; i < G_N_ELEMENTS(widths); i++)
        if (widths[i] != p)
            try_layout(hints, n_bytes, widths[i], a, b, layout->format);
    if (hints->len == 0 && n_bytes % line == 0)
        g_ptr_array_add(hints, g_strdup_printf(_("it holds %" G_GUINT64_FORMAT
                                                 " A-lines of %d pixels %s, not a multiple of %d"),
                                               n_bytes / line, p,
                                               fm_oct_raw_format_name(layout->format), a));
    if (hints->len == 0)
        return g_strdup_printf(_("no layout of %d pixels or %d A-lines per B-scan in u16, "
                                 "u12packed or u8 fits"),
                               p, a);
    g_ptr_array_add(hints, NULL);
    return g_strjoinv("; ", (char **)hints->pdata);
}

gboolean fm_oct_raw_check_size(const char *label, guint64 n_bytes, const fm_oct_raw_layout *layout,
                               gsize *n_bscans, GError **error)
{
    if (n_bytes == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: empty file"), label);
        return FALSE;
    }
    guint64 bscan_bytes =
        fm_oct_raw_aline_bytes(layout) * (guint64)MAX(layout->alines_per_bscan, 1);
    const char *format = fm_oct_raw_format_name(layout->format);
    int p = layout->pixels_per_aline, a = layout->alines_per_bscan, b = layout->n_bscans;
    g_autofree char *size = grouped(n_bytes);
    g_autofree char *per_bscan = alines_text(a);
    if (b > 0 && n_bytes != bscan_bytes * (guint64)b) {
        g_autofree char *need = grouped(bscan_bytes * (guint64)b);
        g_autofree char *hints = fitting_layouts(n_bytes, layout);
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    ngettext("%s: %s bytes do not hold %d B-scan of %s of %d %s pixels (%s "
                             "bytes); %s",
                             "%s: %s bytes do not hold %d B-scans of %s of %d %s pixels (%s "
                             "bytes); %s",
                             b),
                    label, size, b, per_bscan, p, format, need, hints);
        return FALSE;
    }
    if (n_bytes % bscan_bytes != 0) {
        g_autofree char *need = grouped(bscan_bytes);
        g_autofree char *hints = fitting_layouts(n_bytes, layout);
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: %s bytes do not hold whole B-scans of %s of %d %s pixels (%s bytes "
                      "each); %s"),
                    label, size, per_bscan, p, format, need, hints);
        return FALSE;
    }
    if (n_bscans)
        *n_bscans = (gsize)(n_bytes / bscan_bytes);
    return TRUE;
}
