/* Checking a batch item before anything runs: method, parameters, the input's header, ROIs. */
#include "batch_plan.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>

#include "app/core/io/dicom.h"
#include "app/core/io/pt3.h"
#include "app/core/io/sdt.h"
#include "app/core/io/tiff.h"
#include "app/core/roi.h"
#include "app/core/roi_labels.h"

typedef enum {
    KIND_UNKNOWN,
    KIND_TIFF,
    KIND_SDT,
    KIND_TTTR, /* .ptu, .pt3 */
    KIND_NIFTI,
    KIND_DICOM, /* a folder */
    KIND_RAW,   /* SD-OCT spectra: content that names no format */
    KIND_MCI,
} input_kind;

static const char *kind_name(input_kind kind)
{
    static const char *const names[] = {N_("files of unknown format"),
                                        N_("TIFF files"),
                                        N_("Becker & Hickl .sdt files"),
                                        N_("PicoQuant files"),
                                        N_("NIfTI files"),
                                        N_("DICOM folders"),
                                        N_("files of no known format (raw)"),
                                        N_("MCML .mci files")};
    return _(names[kind]);
}

/* The kind of input the first bytes (and the name, where the content names none) say. */
static input_kind kind_of(const char *path, const guint8 *m, gsize n)
{
    g_autofree char *lower = g_ascii_strdown(path, -1);
    if (n >= 4 && ((m[0] == 'I' && m[1] == 'I' && (m[2] == 42 || m[2] == 43) && m[3] == 0) ||
                   (m[0] == 'M' && m[1] == 'M' && m[2] == 0 && (m[3] == 42 || m[3] == 43))))
        return KIND_TIFF;
    if ((n >= 8 && memcmp(m, "PQTTTR\0\0", 8) == 0) || fm_pt3_sniff(m, n))
        return KIND_TTTR;
    if (fm_sdt_sniff(m, n))
        return KIND_SDT;
    if (n >= 4 && (memcmp(m, "\x5c\x01\0\0", 4) == 0 || memcmp(m, "\0\0\x01\x5c", 4) == 0 ||
                   memcmp(m, "\x1c\x02\0\0", 4) == 0 || memcmp(m, "\0\0\x02\x1c", 4) == 0))
        return KIND_NIFTI;
    if (n >= 2 && m[0] == 0x1f && m[1] == 0x8b && g_str_has_suffix(lower, ".nii.gz"))
        return KIND_NIFTI;
    if (g_str_has_suffix(lower, ".mci"))
        return KIND_MCI;
    return n > 0 ? KIND_RAW : KIND_UNKNOWN;
}

/* Which kinds a family's methods read. */
static gboolean family_reads(const char *family, input_kind kind)
{
    if (kind == KIND_TIFF)
        return g_strcmp0(family, "mcml") != 0;
    if (g_strcmp0(family, "flim") == 0)
        return kind == KIND_SDT || kind == KIND_TTTR;
    if (g_strcmp0(family, "dce") == 0)
        return kind == KIND_NIFTI || kind == KIND_DICOM;
    if (g_strcmp0(family, "oct") == 0)
        return kind == KIND_RAW;
    if (g_strcmp0(family, "mcml") == 0)
        return kind == KIND_MCI;
    return FALSE;
}

/* The input's kind from its header alone (a DICOM folder: its series listed), or a reason. */
static char *check_input(const char *path, const fm_method *method, input_kind *kind)
{
    *kind = KIND_UNKNOWN;
    g_autoptr(GError) error = NULL;
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
        *kind = KIND_DICOM;
        if (!fm_dicom_available())
            return g_strdup(_("a folder (DICOM series), and this build reads no DICOM"));
        g_auto(GStrv) series = fm_dicom_list_series(path, &error);
        if (series == NULL)
            return g_strdup(error->message);
        if (series[0] == NULL)
            return g_strdup(_("the folder holds no DICOM series"));
    } else {
        FILE *f = fopen(path, "rb");
        if (f == NULL)
            return g_strdup_printf(_("cannot open: %s"), g_strerror(errno));
        guint8 head[512];
        gsize n = fread(head, 1, sizeof head, f);
        fclose(f);
        *kind = kind_of(path, head, n);
        if (*kind == KIND_UNKNOWN)
            return g_strdup(_("the file is empty"));
        /* TIFF: libtiff reads the header and the first directory */
        if (*kind == KIND_TIFF) {
            g_free(fm_tiff_read_description(path, &error));
            if (error)
                return g_strdup(error->message);
        }
    }
    if (!family_reads(method->family, *kind))
        return g_strdup_printf(_("%s does not read %s"), method->id, kind_name(*kind));
    return NULL;
}

/* The roles a ROI file gives: a JSON list's, or a label map's from its label description file. */
static char *check_rois(const char *path, const fm_method *method)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) roles = g_ptr_array_new_with_free_func(g_free);
    if (fm_roi_is_label_map_path(path)) {
        if (!g_file_test(path, G_FILE_TEST_IS_REGULAR) || g_access(path, R_OK) != 0)
            return g_strdup_printf(_("ROI file %s cannot be read"), path);
        g_autofree char *sidecar = fm_roi_labels_sidecar_path(path);
        g_autoptr(GPtrArray) labels = g_file_test(sidecar, G_FILE_TEST_EXISTS)
                                          ? fm_roi_labels_parse(sidecar, NULL, &error)
                                          : NULL;
        if (error)
            return g_strdup_printf(_("ROI file %s: %s"), path, error->message);
        for (guint i = 0; labels && i < labels->len; i++)
            g_ptr_array_add(roles, g_strdup(((fm_roi_label_role *)labels->pdata[i])->role));
    } else {
        g_autoptr(GPtrArray) rois = fm_roi_list_from_file(path, &error);
        if (rois == NULL)
            return g_strdup_printf(_("ROI file: %s"), error->message);
        for (guint i = 0; i < rois->len; i++)
            g_ptr_array_add(roles, g_strdup(((fm_roi *)rois->pdata[i])->role));
    }
    for (int r = 0; method->roi_roles && method->roi_roles[r]; r++) {
        gboolean found = FALSE;
        for (guint i = 0; i < roles->len && !found; i++)
            found = g_strcmp0(roles->pdata[i], method->roi_roles[r]) == 0;
        if (!found)
            return g_strdup_printf(_("ROI file %s has no ROI with role '%s' (%s needs one)"), path,
                                   method->roi_roles[r], method->id);
    }
    return NULL;
}

/* "key=value;key=value" or a JSON object into params. */
static char *parse_params(fm_params *params, const char *text)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *trimmed = g_strstrip(g_strdup(text ? text : ""));
    if (*trimmed == '{')
        return fm_params_set_from_json(params, trimmed, &error) ? NULL : g_strdup(error->message);
    g_auto(GStrv) pairs = g_strsplit(trimmed, ";", -1);
    for (int i = 0; pairs[i]; i++) {
        char *pair = g_strstrip(pairs[i]);
        if (*pair == '\0')
            continue;
        char *eq = strchr(pair, '=');
        if (eq == NULL)
            return g_strdup_printf(_("parameter '%s' is not key=value"), pair);
        *eq = '\0';
        char *key = g_strstrip(pair), *value = g_strstrip(eq + 1);
        if (g_str_has_prefix(key, "--"))
            key += 2;
        g_strdelimit(key, "-", '_');
        if (!fm_params_set_from_string(params, key, value, &error))
            return g_strdup(error->message);
    }
    return NULL;
}

char *fm_batch_check_item(fm_batch_item *item, const char *params_text)
{
    const fm_method *method = fm_method_find(item->method);
    if (method == NULL)
        return g_strdup_printf(_("unknown method '%s' (see 'fluxmap-cli methods')"),
                               item->method ? item->method : "");
    g_autoptr(fm_params) params = fm_method_default_params(method);
    char *reason = parse_params(params, params_text);
    if (reason)
        return reason;
    g_free(item->params_json);
    item->params_json = fm_params_to_json(params);
    input_kind kind;
    if ((reason = check_input(item->input, method, &kind)) != NULL)
        return reason;
    if (item->roi)
        return check_rois(item->roi, method);
    for (int r = 0; method->roi_roles && method->roi_roles[r]; r++)
        return g_strdup_printf(_("%s needs an ROI with role '%s' and the row gives no ROI file"),
                               method->id, method->roi_roles[r]);
    return NULL;
}
