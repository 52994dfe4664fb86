/* ROIs from label maps and back: label values to roles, one mask ROI per label and slice. */
#include "roi_labels.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "io/frame_times.h"
#include "io/nifti.h"
#include "io/nifti_labels.h"
#include "io/tiff.h"

void fm_roi_label_role_free(fm_roi_label_role *entry)
{
    if (entry == NULL)
        return;
    g_free(entry->role);
    g_free(entry);
}

static gboolean has_suffix_nocase(const char *path, const char *suffix)
{
    g_autofree char *lower = g_ascii_strdown(path, -1);
    return g_str_has_suffix(lower, suffix);
}

static gboolean is_nifti_path(const char *path)
{
    return has_suffix_nocase(path, ".nii") || has_suffix_nocase(path, ".nii.gz");
}

static gboolean is_tiff_path(const char *path)
{
    return has_suffix_nocase(path, ".tif") || has_suffix_nocase(path, ".tiff");
}

gboolean fm_roi_is_label_map_path(const char *path)
{
    return path != NULL && (is_nifti_path(path) || is_tiff_path(path));
}

void fm_roi_grid(const fm_dataset *ds, int *nx, int *ny, int *nz, gboolean *has_z)
{
    *nx = fm_dataset_width(ds);
    *ny = fm_dataset_height(ds);
    *nz = 1;
    *has_z = FALSE;
    for (int d = 2; d < ds->n_dims; d++) {
        if (g_strcmp0(ds->dims[d].name, "z") == 0) {
            *nz = (int)ds->dims[d].size;
            *has_z = TRUE;
        }
    }
}

char *fm_roi_labels_sidecar_path(const char *label_map_path)
{
    static const char *const exts[] = {".nii.gz", ".nii", ".tiff", ".tif"};
    for (gsize i = 0; i < G_N_ELEMENTS(exts); i++) {
        if (has_suffix_nocase(label_map_path, exts[i])) {
            g_autofree char *base =
                g_strndup(label_map_path, strlen(label_map_path) - strlen(exts[i]));
            return g_strconcat(base, ".labels.txt", NULL);
        }
    }
    return g_strconcat(label_map_path, ".labels.txt", NULL);
}

/* ---- label roles ------------------------------------------------------------------------- */

static gboolean valid_role(const char *role)
{
    if (role == NULL || *role == '\0' || g_ascii_isdigit(*role))
        return FALSE;
    for (const char *c = role; *c; c++)
        if (!g_ascii_isalnum(*c) && *c != '_')
            return FALSE;
    return TRUE;
}

static fm_roi_label_role *find_label(GPtrArray *labels, int label)
{
    for (guint i = 0; labels != NULL && i < labels->len; i++) {
        fm_roi_label_role *e = labels->pdata[i];
        if (e->label == label)
            return e;
    }
    return NULL;
}

/* A whole number 1..FM_ROI_LABEL_MAX, or -1. */
static int parse_label(const char *text)
{
    g_autofree char *t = g_strstrip(g_strdup(text));
    char *end = NULL;
    errno = 0;
    gint64 v = g_ascii_strtoll(t, &end, 10);
    if (*t == '\0' || end == NULL || *end != '\0' || errno != 0 || v < 1 || v > FM_ROI_LABEL_MAX)
        return -1;
    return (int)v;
}

static GPtrArray *parse_inline(const char *text, GError **error)
{
    g_autoptr(GPtrArray) out =
        g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_label_role_free);
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    for (int i = 0; items[i] != NULL; i++) {
        g_autofree char *item = g_strstrip(g_strdup(items[i]));
        const char *eq = strchr(item, '=');
        if (eq == NULL) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                        _("--roi-labels: '%s' is not LABEL=ROLE (e.g. 1=aorta,2=portal_vein)"),
                        item);
            return NULL;
        }
        g_autofree char *label_text = g_strndup(item, (gsize)(eq - item));
        g_autofree char *role = g_strstrip(g_strdup(eq + 1));
        int label = parse_label(label_text);
        if (label < 0) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                        _("--roi-labels: '%s' is not a label value 1..%d (0 is the background)"),
                        g_strstrip(label_text), FM_ROI_LABEL_MAX);
            return NULL;
        }
        if (!valid_role(role)) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                        _("--roi-labels: role '%s' of label %d must be letters, digits and '_', "
                          "not starting with a digit"),
                        role, label);
            return NULL;
        }
        if (find_label(out, label) != NULL) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                        _("--roi-labels: label %d is given twice"), label);
            return NULL;
        }
        fm_roi_label_role *e = g_new0(fm_roi_label_role, 1);
        e->label = label;
        e->role = g_steal_pointer(&role);
        g_ptr_array_add(out, e);
    }
    return g_steal_pointer(&out);
}

/* "Portal Vein" -> "portal_vein"; NULL for ITK-SNAP's placeholder names. */
static char *role_from_description(const char *name)
{
    g_autoptr(GRegex) placeholder =
        g_regex_new("^\\s*(clear label|label\\s*\\d+)?\\s*$", G_REGEX_CASELESS, 0, NULL);
    if (placeholder != NULL && g_regex_match(placeholder, name, 0, NULL))
        return NULL;
    GString *role = g_string_new(NULL);
    for (const char *c = name; *c; c++) {
        if (g_ascii_isalnum(*c))
            g_string_append_c(role, g_ascii_tolower(*c));
        else if (role->len > 0 && role->str[role->len - 1] != '_')
            g_string_append_c(role, '_');
    }
    while (role->len > 0 && role->str[role->len - 1] == '_')
        g_string_truncate(role, role->len - 1);
    if (role->len > 0 && g_ascii_isdigit(role->str[0]))
        g_string_prepend_c(role, '_');
    return g_string_free(role, role->len == 0);
}

static GPtrArray *parse_description_file(const char *path, GError **error)
{
    g_autofree char *data = NULL;
    g_autoptr(GError) local = NULL;
    if (!g_file_get_contents(path, &data, NULL, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot read: %s"), path,
                    local->message);
        return NULL;
    }
    g_autoptr(GPtrArray) out =
        g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_label_role_free);
    g_auto(GStrv) lines = g_strsplit(data, "\n", -1);
    for (int i = 0; lines[i] != NULL; i++) {
        const char *line = lines[i];
        while (g_ascii_isspace(*line))
            line++;
        if (*line == '\0' || *line == '#')
            continue;
        int label = 0, r = 0, g = 0, b = 0, vis = 0, msh = 0;
        double alpha = 0;
        const char *open = strchr(line, '"'), *close = open ? strrchr(open + 1, '"') : NULL;
        if (sscanf(line, "%d %d %d %d %lf %d %d", &label, &r, &g, &b, &alpha, &vis, &msh) != 7 ||
            close == NULL || label < 0 || label > FM_ROI_LABEL_MAX) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: line %d is not an ITK-SNAP label description "
                          "(IDX R G B A VIS MSH \"name\")"),
                        path, i + 1);
            return NULL;
        }
        g_autofree char *name = g_strndup(open + 1, (gsize)(close - open - 1));
        char *role = label > 0 ? role_from_description(name) : NULL;
        if (role == NULL || find_label(out, label) != NULL) {
            g_free(role);
            continue;
        }
        fm_roi_label_role *e = g_new0(fm_roi_label_role, 1);
        e->label = label;
        e->role = role;
        g_ptr_array_add(out, e);
    }
    return g_steal_pointer(&out);
}

GPtrArray *fm_roi_labels_parse(const char *text, gboolean *from_file, GError **error)
{
    gboolean file =
        text != NULL && strchr(text, '=') == NULL && g_file_test(text, G_FILE_TEST_IS_REGULAR);
    if (from_file != NULL)
        *from_file = file;
    if (text == NULL || *text == '\0') {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("--roi-labels: empty; give LABEL=ROLE pairs (e.g. 1=aorta,2=portal_vein) "
                      "or a label description file"));
        return NULL;
    }
    return file ? parse_description_file(text, error) : parse_inline(text, error);
}

/* ---- reading ------------------------------------------------------------------------------ */

static char *size_text(int nx, int ny, int nz, gboolean with_z)
{
    return with_z ? g_strdup_printf("%dx%dx%d", nx, ny, nz) : g_strdup_printf("%dx%d", nx, ny);
}

/* The label map as a dataset and its x, y, z sizes. */
static fm_dataset *read_label_map(const char *path, int *lx, int *ly, int *lz, GError **error)
{
    g_autoptr(fm_dataset) map = NULL;
    if (is_nifti_path(path)) {
        map = fm_nifti_read(path, error);
        if (map != NULL && map->n_dims > 3 && map->dims[3].size > 1) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: a label map holds one volume, this file has %" G_GSIZE_FORMAT), path,
                        map->dims[3].size);
            return NULL;
        }
    } else if (is_tiff_path(path)) {
        map = fm_tiff_read(path, error);
    } else {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: a label map must be NIfTI (.nii, .nii.gz) or TIFF (.tif, .tiff)"), path);
        return NULL;
    }
    if (map == NULL)
        return NULL;
    *lx = fm_dataset_width(map);
    *ly = fm_dataset_height(map);
    *lz = map->n_dims > 2 ? (int)map->dims[2].size : 1;
    return g_steal_pointer(&map);
}

static void add_role_or_name(fm_roi *roi, int label, GPtrArray *labels)
{
    const fm_roi_label_role *e = find_label(labels, label);
    g_free(roi->name);
    roi->name = e != NULL ? g_strdup(e->role) : g_strdup_printf(_("label %d"), label);
    roi->role = e != NULL ? g_strdup(e->role) : NULL;
}

/* Where both the label map and the dataset place their voxels in space, they must agree: a map
 * of the right size drawn on a reoriented or resampled copy would put every ROI in the wrong
 * place. 0.01 mm (and 1e-4 of a voxel step) is well above float32 header rounding. */
static gboolean check_orientation(const char *path, const fm_dataset *map, const fm_dataset *ds,
                                  GError **error)
{
    double a[16], b[16];
    gboolean ds_oriented = fm_dataset_get_meta(ds, "nifti_version") == NULL ||
                           fm_nifti_has_orientation(ds->source_path);
    if (!is_nifti_path(path) || !fm_nifti_has_orientation(path) || !ds_oriented ||
        !fm_dataset_get_affine(map, a) || !fm_dataset_get_affine(ds, b))
        return TRUE;
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 4; c++) {
            double tol = c == 3 ? 0.01 : 1e-4 * MAX(1.0, fabs(b[r * 4 + c]));
            if (fabs(a[r * 4 + c] - b[r * 4 + c]) <= tol)
                continue;
            g_autofree char *name =
                ds->source_path ? g_path_get_basename(ds->source_path) : g_strdup(_("the dataset"));
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: the label map lies elsewhere in space than %s (its voxel (0, 0, 0) "
                          "at %.2f, %.2f, %.2f mm, theirs at %.2f, %.2f, %.2f mm; affine row %d "
                          "column %d: %g vs %g): it was drawn on another grid or orientation"),
                        path, name, a[3], a[7], a[11], b[3], b[7], b[11], r + 1, c + 1,
                        a[r * 4 + c], b[r * 4 + c]);
            return FALSE;
        }
    }
    return TRUE;
}

GPtrArray *fm_roi_list_from_label_map(const char *path, const fm_dataset *ds, GPtrArray *labels,
                                      gboolean strict, GError **error)
{
    int lx = 0, ly = 0, lz = 0, nx, ny, nz;
    gboolean has_z;
    g_autoptr(fm_dataset) map = read_label_map(path, &lx, &ly, &lz, error);
    if (map == NULL)
        return NULL;
    fm_roi_grid(ds, &nx, &ny, &nz, &has_z);
    if (lx != nx || ly != ny || lz != nz) {
        g_autofree char *have = size_text(lx, ly, lz, has_z || lz > 1);
        g_autofree char *want = size_text(nx, ny, nz, has_z);
        g_autofree char *name =
            ds->source_path ? g_path_get_basename(ds->source_path) : g_strdup(_("the dataset"));
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: label map is %s but %s is %s"),
                    path, have, name, want);
        return NULL;
    }
    if (!check_orientation(path, map, ds, error))
        return NULL;
    const gsize plane = (gsize)nx * ny, n = plane * nz;
    g_autofree guint16 *values = g_new(guint16, MAX(n, 1));
    int top = 0;
    for (gsize i = 0; i < n; i++) {
        double v = fm_dataset_value(map, i);
        if (!isfinite(v) || v != floor(v) || v < 0 || v > FM_ROI_LABEL_MAX) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: voxel (%d, %d, %d) holds %g; labels are whole numbers 0..%d"), path,
                        (int)(i % nx), (int)(i / nx % ny), (int)(i / plane), v, FM_ROI_LABEL_MAX);
            return NULL;
        }
        values[i] = (guint16)v;
        top = MAX(top, values[i]);
    }
    /* present[label * nz + z]: the label occurs on slice z */
    g_autofree guint8 *present = g_new0(guint8, (gsize)(top + 1) * nz);
    for (gsize i = 0; i < n; i++)
        present[(gsize)values[i] * nz + i / plane] = 1;
    for (guint k = 0; strict && labels != NULL && k < labels->len; k++) {
        const fm_roi_label_role *e = labels->pdata[k];
        gboolean found = FALSE;
        for (int z = 0; e->label <= top && z < nz && !found; z++)
            found = present[(gsize)e->label * nz + z];
        if (!found) {
            g_autoptr(GString) held = g_string_new(NULL);
            for (int l = 1; l <= top; l++)
                for (int z = 0; z < nz; z++)
                    if (present[(gsize)l * nz + z]) {
                        g_string_append_printf(held, "%s%d", held->len ? ", " : "", l);
                        break;
                    }
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                        _("--roi-labels: label %d (%s) is not in %s (its labels: %s)"), e->label,
                        e->role, path, held->len ? held->str : _("none"));
            return NULL;
        }
    }
    GPtrArray *rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    g_autofree guint8 *mask = g_new(guint8, MAX(plane, 1));
    for (int label = 1; label <= top; label++) {
        if (!has_z) { /* a 2-D image: the label's one ROI */
            if (!present[label])
                continue;
            for (gsize p = 0; p < plane; p++)
                mask[p] = values[p] == label;
            fm_roi *roi = fm_roi_new_mask(NULL, mask, nx, ny);
            add_role_or_name(roi, label, labels);
            g_ptr_array_add(rois, roi);
            continue;
        }
        for (int z = 0; z < nz; z++) {
            if (!present[(gsize)label * nz + z])
                continue;
            const guint16 *slice = values + (gsize)z * plane;
            for (gsize p = 0; p < plane; p++)
                mask[p] = slice[p] == label;
            fm_roi *roi = fm_roi_new_mask(NULL, mask, nx, ny);
            roi->slice = z;
            add_role_or_name(roi, label, labels);
            g_ptr_array_add(rois, roi);
        }
    }
    return rois;
}

/* ---- writing ------------------------------------------------------------------------------ */

/* A label colour for the description file, distinct for neighbouring labels. */
static void label_colour(int label, int rgb[3])
{
    static const int palette[][3] = {{255, 0, 0},   {0, 255, 0},   {0, 0, 255},
                                     {255, 255, 0}, {0, 255, 255}, {255, 0, 255},
                                     {255, 128, 0}, {128, 0, 255}, {0, 128, 128}};
    const int *c = palette[(label - 1) % G_N_ELEMENTS(palette)];
    memcpy(rgb, c, 3 * sizeof(int));
}

static gboolean write_description(const char *path, GPtrArray *names, GError **error)
{
    g_autoptr(GString) text =
        g_string_new("################################################\n"
                     "# ITK-SnAP Label Description File\n"
                     "# Written by Fluxmap with its ROI label map.\n"
                     "# Columns: IDX R G B A VIS MSH \"LABEL\"\n"
                     "#   IDX: label value; R, G, B: colour 0..255; A: opacity 0..1;\n"
                     "#   VIS, MSH: shown in the slices and in 3-D; LABEL: the ROI's role or name\n"
                     "################################################\n");
    g_string_append_printf(text, "%5d %5d %5d %5d %9g %2d %2d    \"%s\"\n", 0, 0, 0, 0, 0.0, 0, 0,
                           "Clear Label");
    for (guint i = 0; i < names->len; i++) {
        int rgb[3];
        label_colour((int)i + 1, rgb);
        g_autofree char *name = g_strdup(names->pdata[i]);
        g_strdelimit(name, "\"\n", '_');
        g_string_append_printf(text, "%5u %5d %5d %5d %9g %2d %2d    \"%s\"\n", i + 1, rgb[0],
                               rgb[1], rgb[2], 1.0, 1, 1, name);
    }
    g_autofree char *sidecar = fm_roi_labels_sidecar_path(path);
    g_autoptr(GError) local = NULL;
    if (!g_file_set_contents(sidecar, text->str, (gssize)text->len, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write: %s"), sidecar,
                    local->message);
        return FALSE;
    }
    return TRUE;
}

static gboolean write_tiff(const char *path, const guint16 *labels, int nx, int ny, int nz, int top,
                           const char *mapping, GError **error)
{
    gsize sizes[3] = {(gsize)nx, (gsize)ny, (gsize)nz};
    static const char *const names[3] = {"x", "y", "z"};
    g_autoptr(fm_dataset) out =
        fm_dataset_new(top <= G_MAXUINT8 ? FM_PIXEL_U8 : FM_PIXEL_U16, 3, sizes, names);
    gsize n = fm_dataset_n_elements(out);
    for (gsize i = 0; i < n; i++) {
        if (out->type == FM_PIXEL_U8)
            ((guint8 *)out->data)[i] = (guint8)labels[i];
        else
            ((guint16 *)out->data)[i] = labels[i];
    }
    g_autofree char *description = g_strdup_printf("Fluxmap ROI labels: %s", mapping);
    return fm_tiff_write_dataset(path, out, description, error);
}

gboolean fm_roi_list_to_label_map(const char *path, GPtrArray *rois, const fm_dataset *ds,
                                  char **mapping, GError **error)
{
    if (!fm_roi_is_label_map_path(path)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: a label map is written as .nii, .nii.gz, .tif or .tiff"), path);
        return FALSE;
    }
    int nx, ny, nz;
    gboolean has_z;
    fm_roi_grid(ds, &nx, &ny, &nz, &has_z);
    const gsize plane = (gsize)nx * ny;
    g_autofree guint16 *labels = g_new0(guint16, MAX(plane * nz, 1));
    /* keys "r:<role>" or "n:<name>" in label order, and what the description file calls them */
    g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GString) roles = g_string_new(NULL);
    for (guint r = 0; rois != NULL && r < rois->len; r++) {
        const fm_roi *roi = rois->pdata[r];
        g_autofree char *key = roi->role ? g_strconcat("r:", roi->role, NULL)
                                         : g_strconcat("n:", roi->name ? roi->name : "", NULL);
        guint index = 0;
        if (!g_ptr_array_find_with_equal_func(keys, key, g_str_equal, &index)) {
            if (keys->len >= FM_ROI_LABEL_MAX) {
                g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                            _("%s: more than %d distinct ROIs do not fit a label map"), path,
                            FM_ROI_LABEL_MAX);
                return FALSE;
            }
            index = keys->len;
            g_ptr_array_add(keys, g_steal_pointer(&key));
            g_ptr_array_add(names, g_strdup(roi->role   ? roi->role
                                            : roi->name ? roi->name
                                                        : _("ROI")));
            if (roi->role != NULL)
                g_string_append_printf(roles, "%s%u=%s", roles->len ? "," : "", index + 1,
                                       roi->role);
        }
        guint16 label = (guint16)(index + 1);
        g_autofree guint8 *mask = fm_roi_rasterise(roi, nx, ny);
        int z0 = roi->slice < 0 ? 0 : MIN(roi->slice, nz),
            z1 = roi->slice < 0 ? nz : MIN(roi->slice + 1, nz);
        for (int z = z0; z < z1; z++)
            for (gsize p = 0; p < plane; p++)
                if (mask[p])
                    labels[(gsize)z * plane + p] = label;
    }
    gboolean ok = is_nifti_path(path)
                      ? fm_nifti_write_labels(path, labels, nx, ny, nz, ds, error)
                      : write_tiff(path, labels, nx, ny, nz, (int)keys->len, roles->str, error);
    if (ok)
        ok = write_description(path, names, error);
    if (ok && mapping != NULL)
        *mapping = g_strdup(roles->str);
    return ok;
}
