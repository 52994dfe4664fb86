/* PicoQuant .pt3 reader: the old binary header, read into the layout the T3 histogram needs. */
#include "pt3.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/flim_bytes.h"
#include "app/core/io/map_input.h"
#include "app/core/io/ptu.h"
#include "app/core/io/tttr.h"

gboolean fm_pt3_sniff(const guint8 *head, gsize n)
{
    return n >= 16 && memcmp(head, FM_PT3_IDENT, sizeof FM_PT3_IDENT) == 0;
}

static gint32 word(const guint8 *p)
{
    return (gint32)fm_le32(p);
}

/* The imaging header: a point, or an LSM image with its markers. */
static gboolean read_image_header(const char *path, const guint8 *img, gint32 words,
                                  fm_tttr_layout *L, GError **error)
{
    if (words == 0 || word(img + 4 * FM_PT3_IMG_DIMENSIONS) == 1)
        return TRUE; /* a point measurement */
    if (words <= FM_PT3_IMG_PIX_Y)
        return fm_error_bad_input(
            error, path, _("the imaging header holds %d words; an image needs at least %d"), words,
            FM_PT3_IMG_PIX_Y + 1);
    gint32 ident = word(img + 4 * FM_PT3_IMG_IDENT);
    if (ident != FM_PT3_IMG_LSM)
        return fm_error_bad_input(
            error, path,
            _("imaging header of scanner ident %d: only laser scanning microscopes "
              "(ident 3, pixels marked by line markers) are supported"),
            ident);
    static const struct {
        int at;
        const char *name;
        gint32 lo, hi;
    } fields[] = {{FM_PT3_IMG_LINE_START, "LineStart", 1, 15},
                  {FM_PT3_IMG_LINE_STOP, "LineStop", 1, 15},
                  {FM_PT3_IMG_PIX_X, "PixX", 1, 65536},
                  {FM_PT3_IMG_PIX_Y, "PixY", 1, 65536}};
    gint32 v[G_N_ELEMENTS(fields)];
    for (gsize i = 0; i < G_N_ELEMENTS(fields); i++) {
        v[i] = word(img + 4 * fields[i].at);
        if (v[i] < fields[i].lo || v[i] > fields[i].hi)
            return fm_error_bad_input(error, path, _("imaging header %s is %d, expected %d..%d"),
                                      fields[i].name, v[i], fields[i].lo, fields[i].hi);
    }
    gint32 frame = word(img + 4 * FM_PT3_IMG_FRAME);
    L->image = TRUE;
    L->line_start = v[0];
    L->line_stop = v[1];
    L->pix_x = v[2];
    L->pix_y = v[3];
    L->frame = frame >= 1 && frame <= 15 ? frame : 0;
    L->bidirectional = (img[4 * FM_PT3_IMG_PATTERN] & 0xff) == 1;
    return TRUE;
}

fm_dataset *fm_pt3_read(const char *path, int channel, int max_bins,
                        void (*progress)(double fraction, gpointer user), gpointer progress_user,
                        GCancellable *cancellable, GError **error)
{
    g_autoptr(GMappedFile) map = fm_map_input(path, error);
    if (!map)
        return NULL;
    const guint8 *b = (const guint8 *)g_mapped_file_get_contents(map);
    gsize len = g_mapped_file_get_length(map);
    if (!fm_pt3_sniff(b, len)) {
        fm_error_bad_input(error, path, "%s",
                           len == 0 ? _("empty file, not a PicoHarp .pt3 file")
                                    : _("not a PicoHarp .pt3 file (no \"PicoHarp 300\" ident)"));
        return NULL;
    }
    if (len < FM_PT3_IMG_HDR) {
        fm_error_bad_input(error, path,
                           _("truncated: %" G_GSIZE_FORMAT " bytes, the header alone takes %d"),
                           len, FM_PT3_IMG_HDR);
        return NULL;
    }
    char version[7] = {0};
    memcpy(version, b + FM_PT3_FORMAT_VERSION, 6);
    if (strncmp(version, "2.0", 3) != 0) {
        g_autofree char *shown = g_strescape(version, NULL);
        fm_error_bad_input(error, path, _("file format version \"%s\"; only 2.0 is known"), shown);
        return NULL;
    }
    gint32 mode = word(b + FM_PT3_MEAS_MODE);
    if (mode != 3) {
        fm_error_bad_input(error, path,
                           _("measurement mode %d is not T3 (2 is T2, without decay times)"), mode);
        return NULL;
    }
    fm_tttr_layout L = {.path = path, .rec_type = FM_PTU_PICOHARP_T3};
    float resolution_ns = fm_le_float(b + FM_PT3_RESOLUTION_NS);
    if (!(resolution_ns > 0) || !isfinite(resolution_ns)) {
        fm_error_bad_input(error, path, _("the resolution (the bin width) is %g ns"),
                           resolution_ns);
        return NULL;
    }
    L.resolution_s = resolution_ns * 1e-9;
    gint32 sync_rate = word(b + FM_PT3_SYNC_RATE_HZ);
    L.sync_period_s = sync_rate > 0 ? 1.0 / sync_rate : 0;
    gint32 img_words = word(b + FM_PT3_IMG_HDR_SIZE);
    if (img_words < 0 || (gsize)img_words > (len - FM_PT3_IMG_HDR) / 4) {
        fm_error_bad_input(error, path,
                           _("truncated: the imaging header declares %d words but %" G_GSIZE_FORMAT
                             " bytes follow"),
                           img_words, len - FM_PT3_IMG_HDR);
        return NULL;
    }
    if (!read_image_header(path, b + FM_PT3_IMG_HDR, img_words, &L, error))
        return NULL;
    gsize records_at = FM_PT3_IMG_HDR + 4 * (gsize)img_words;
    guint32 n_records = fm_le32(b + FM_PT3_RECORDS);
    gsize available = (len - records_at) / 4;
    if (n_records > available) {
        fm_error_bad_input(
            error, path,
            _("truncated: the header declares %u records but the file holds %" G_GSIZE_FORMAT),
            n_records, available);
        return NULL;
    }
    L.records = b + records_at;
    L.n_records = n_records;
    fm_dataset *ds =
        fm_tttr_histogram(&L, channel, max_bins, progress, progress_user, cancellable, error);
    if (ds)
        fm_dataset_set_meta(ds, "format", "pt3");
    return ds;
}
