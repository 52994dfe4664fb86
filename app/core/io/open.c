/* Opens a dataset file with the reader its content (magic bytes), else its extension, names. */
#include "open.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/dicom.h"
#include "app/core/io/nifti.h"
#include "app/core/io/oct_raw.h"
#include "app/core/io/pt3.h"
#include "app/core/io/ptu.h"
#include "app/core/io/sdt.h"
#include "app/core/io/tiff.h"
#include "app/core/params.h"

typedef enum {
    FORMAT_UNKNOWN,
    FORMAT_TIFF,
    FORMAT_SDT,
    FORMAT_PTU,
    FORMAT_PT3,
    FORMAT_NIFTI
} file_format;

static file_format format_from_content(const guint8 *m, gsize n)
{
    if (n >= 8 && memcmp(m, "PQTTTR\0\0", 8) == 0)
        return FORMAT_PTU;
    if (fm_pt3_sniff(m, n))
        return FORMAT_PT3;
    if (n >= 4 && ((m[0] == 'I' && m[1] == 'I' && (m[2] == 42 || m[2] == 43) && m[3] == 0) ||
                   (m[0] == 'M' && m[1] == 'M' && m[2] == 0 && (m[3] == 42 || m[3] == 43))))
        return FORMAT_TIFF;
    if (fm_sdt_sniff(m, n))
        return FORMAT_SDT;
    /* NIfTI: sizeof_hdr 348 (NIfTI-1) or 540 (NIfTI-2, magic "n+2" right after it), either
     * byte order. */
    if (n >= 12 && ((memcmp(m, "\x5c\x01\0\0", 4) == 0 || memcmp(m, "\0\0\x01\x5c", 4) == 0) ||
                    ((memcmp(m, "\x1c\x02\0\0", 4) == 0 || memcmp(m, "\0\0\x02\x1c", 4) == 0) &&
                     memcmp(m + 4, "n+2", 3) == 0)))
        return FORMAT_NIFTI;
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
    if (g_str_has_suffix(lower, ".pt3"))
        return FORMAT_PT3;
    if (g_str_has_suffix(lower, ".nii") || g_str_has_suffix(lower, ".nii.gz"))
        return FORMAT_NIFTI;
    return FORMAT_UNKNOWN;
}

/* Extensions that say "raw spectra" well enough to open such a file, undecoded, without a
 * layout (oct.bscan's layout parameters decode it later). */
static gboolean raw_spectra_name(const char *path)
{
    static const char *const suffixes[] = {".raw", ".bin", ".oct", ".dat", ".u16", ".u8", ".u12"};
    g_autofree char *lower = g_ascii_strdown(path, -1);
    for (gsize i = 0; i < G_N_ELEMENTS(suffixes); i++)
        if (g_str_has_suffix(lower, suffixes[i]))
            return TRUE;
    return FALSE;
}

fm_dataset *fm_dataset_open(const char *path, void (*progress)(double fraction, gpointer user),
                            gpointer progress_user, GCancellable *cancellable, GError **error)
{
    return fm_dataset_open_with_layout(path, NULL, progress, progress_user, cancellable, error);
}

gboolean fm_dataset_layout_from_params(const fm_params *params, fm_oct_raw_layout *layout)
{
    *layout = (fm_oct_raw_layout){0, 0, 0, FM_OCT_RAW_U16};
    int n_specs = 0;
    const fm_param_spec *specs = params ? fm_params_specs(params, &n_specs) : NULL;
    for (int i = 0; i < n_specs; i++) {
        if (g_strcmp0(specs[i].key, "pixels_per_aline") == 0)
            layout->pixels_per_aline = fm_params_get_int(params, "pixels_per_aline");
        else if (g_strcmp0(specs[i].key, "alines_per_bscan") == 0)
            layout->alines_per_bscan = fm_params_get_int(params, "alines_per_bscan");
        else if (g_strcmp0(specs[i].key, "raw_format") == 0)
            fm_oct_raw_format_parse(fm_params_get_choice(params, "raw_format"), &layout->format);
    }
    /* 0 is the schema's "from the sidecar" */
    return layout->pixels_per_aline > 0 && layout->alines_per_bscan > 0;
}

fm_dataset *fm_dataset_open_with_params(const char *path, const fm_params *params,
                                        void (*progress)(double fraction, gpointer user),
                                        gpointer progress_user, GCancellable *cancellable,
                                        GError **error)
{
    fm_oct_raw_layout layout;
    gboolean has_layout = fm_dataset_layout_from_params(params, &layout);
    return fm_dataset_open_part(path, 0, has_layout ? &layout : NULL, progress, progress_user,
                                cancellable, error);
}

fm_dataset *fm_dataset_open_with_layout(const char *path, const fm_oct_raw_layout *raw_layout,
                                        void (*progress)(double fraction, gpointer user),
                                        gpointer progress_user, GCancellable *cancellable,
                                        GError **error)
{
    return fm_dataset_open_part(path, 0, raw_layout, progress, progress_user, cancellable, error);
}

fm_dataset *fm_dataset_open_part(const char *path, int part, const fm_oct_raw_layout *raw_layout,
                                 void (*progress)(double fraction, gpointer user),
                                 gpointer progress_user, GCancellable *cancellable, GError **error)
{
    /* A folder is a DICOM series (4-D DCE); one series only, see fm_dicom_read, unless a part
     * picks one of several (series k of the folder's, 1-based). A file of the series opens its
     * series (below). */
    if (g_file_test(path, G_FILE_TEST_IS_DIR) && part == 0)
        return fm_dicom_read_progress(path, NULL, progress, progress_user, cancellable, error);
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
        g_auto(GStrv) uids = fm_dicom_list_series(path, error);
        if (uids == NULL)
            return NULL;
        int n = (int)g_strv_length(uids);
        if (part < 1 || part > n) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                        _("%s: series %d asked for, the folder holds %d"), path, part, n);
            return NULL;
        }
        fm_dataset *ds = fm_dicom_read_progress(path, uids[part - 1], progress, progress_user,
                                                cancellable, error);
        if (ds != NULL && n > 1) {
            char text[16];
            g_snprintf(text, sizeof text, "%d", n);
            fm_dataset_set_meta(ds, "dicom_folder_series", text);
            g_snprintf(text, sizeof text, "%d", part);
            fm_dataset_set_meta(ds, "dicom_folder_part", text);
        }
        return ds;
    }
    FILE *f = g_fopen(path, "rb");
    if (!f) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot open: %s"), path,
                    g_strerror(errno));
        return NULL;
    }
    guint8 head[132] = {0};
    gsize n = fread(head, 1, sizeof head, f);
    fclose(f);
    /* One file of a DICOM series (Part-10 "DICM" after the 128-byte preamble): its series. */
    if (n == sizeof head && memcmp(head + 128, "DICM", 4) == 0)
        return fm_dicom_read_file_series(path, progress, progress_user, cancellable, error);
    file_format format = format_from_content(head, n);
    if (format == FORMAT_UNKNOWN)
        format = format_from_name(path);
    /* SD-OCT raw spectra have no magic bytes: only when neither the content nor the extension
     * names another format are they considered, then by their layout (given, or the JSON
     * sidecar's) whatever the extension; without either, a raw-looking name brings them back
     * undecoded for oct.bscan's layout parameters. */
    gboolean has_parts = format == FORMAT_SDT || format == FORMAT_PTU || format == FORMAT_PT3;
    if (part != 0 && !has_parts) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: holds one dataset (only .sdt blocks and .ptu/.pt3 detector channels "
                      "can be chosen)"),
                    path);
        return NULL;
    }
    if (format == FORMAT_UNKNOWN && n > 0 &&
        (raw_layout || fm_oct_raw_has_sidecar(path) || raw_spectra_name(path)))
        return fm_oct_raw_read(path, raw_layout, error);
    switch (format) {
    case FORMAT_TIFF:
        return fm_tiff_read(path, error);
    case FORMAT_SDT:
        return fm_sdt_read(path, part - 1, error); /* -1: the first dataset */
    case FORMAT_PTU:
        return fm_ptu_read_channel(path, part, 0, progress, progress_user, cancellable, error);
    case FORMAT_PT3:
        return fm_pt3_read(path, part, 0, progress, progress_user, cancellable, error);
    case FORMAT_NIFTI:
        return fm_nifti_read(path, error);
    case FORMAT_UNKNOWN:
        break;
    }
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                n == 0 ? _("%s: empty file")
                       : _("%s: unknown file format (readable: TIFF, Becker & Hickl .sdt, "
                           "PicoQuant .ptu/.pt3, NIfTI .nii/.nii.gz, a DICOM series folder; "
                           "SD-OCT raw spectra with their layout given or a <file>.json "
                           "sidecar)"),
                path);
    return NULL;
}

static const fm_file_format formats[] = {
    {N_("TIFF images and stacks (LSI, FLIM time bins, DCE)"),
     {"*.tif", "*.tiff", "*.TIF", "*.TIFF"}},
    {N_("FLIM: Becker & Hickl .sdt, PicoQuant .ptu and .pt3"),
     {"*.sdt", "*.SDT", "*.ptu", "*.PTU", "*.pt3", "*.PT3"}},
    {N_("DCE: NIfTI, or any file of a DICOM series"),
     {"*.nii", "*.nii.gz", "*.NII", "*.NII.GZ", "*.dcm", "*.DCM", "*.ima", "*.IMA"}},
    {N_("SD-OCT raw spectra (.raw, .bin, .oct, .dat, .u16 beside their JSON sidecar)"),
     {"*.raw", "*.bin", "*.oct", "*.dat", "*.u16", "*.RAW", "*.BIN", "*.DAT"}},
};

GArray *fm_dataset_parts(const fm_dataset *ds, int *current)
{
    GArray *parts = g_array_new(FALSE, TRUE, sizeof(fm_dataset_part));
    const char *n_sdt = fm_dataset_get_meta(ds, "sdt_datasets");
    const char *channels = fm_dataset_get_meta(ds, "ptu_channels");
    const char *channel = fm_dataset_get_meta(ds, "ptu_channel");
    const char *n_series = fm_dataset_get_meta(ds, "dicom_folder_series");
    *current = 0;
    if (n_series != NULL) {
        int n = atoi(n_series);
        const char *open = fm_dataset_get_meta(ds, "dicom_folder_part");
        for (int k = 1; n > 1 && k <= n; k++) {
            fm_dataset_part p = {.part = k};
            g_snprintf(p.label, sizeof p.label, _("DICOM series %d of %d"), k, n);
            g_array_append_val(parts, p);
            if (open != NULL && atoi(open) == k)
                *current = (int)parts->len - 1;
        }
    } else if (n_sdt != NULL) {
        int n = atoi(n_sdt);
        const char *open = fm_dataset_get_meta(ds, "sdt_dataset");
        for (int k = 1; n > 1 && k <= n; k++) {
            fm_dataset_part p = {.part = k};
            g_snprintf(p.label, sizeof p.label, _("Dataset %d of %d"), k, n);
            g_array_append_val(parts, p);
            if (open != NULL && atoi(open) == k)
                *current = (int)parts->len - 1;
        }
    } else if (channels != NULL && strchr(channels, ',') != NULL) {
        fm_dataset_part all = {.part = 0};
        g_strlcpy(all.label, _("All detector channels"), sizeof all.label);
        g_array_append_val(parts, all);
        g_auto(GStrv) list = g_strsplit(channels, ",", -1);
        for (int i = 0; list[i] != NULL; i++) {
            fm_dataset_part p = {.part = atoi(list[i])};
            g_snprintf(p.label, sizeof p.label, _("Detector channel %d"), p.part);
            g_array_append_val(parts, p);
            if (g_strcmp0(channel, list[i]) == 0)
                *current = (int)parts->len - 1;
        }
    }
    return parts;
}

const fm_file_format *fm_dataset_formats(gsize *n_formats)
{
    *n_formats = G_N_ELEMENTS(formats);
    return formats;
}
