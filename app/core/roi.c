/* fm_roi: shapes on an image, their rasterisation to masks, statistics and JSON form. */
#include "roi.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "json_text.h"

static const char *const kind_names[] = {"rectangle", "ellipse", "polygon", "mask"};

fm_roi *fm_roi_new(fm_roi_kind kind, const char *name)
{
    fm_roi *roi = g_new0(fm_roi, 1);
    roi->kind = kind;
    roi->name = g_strdup(name);
    roi->slice = -1;
    roi->points = g_array_new(FALSE, FALSE, sizeof(fm_point));
    return roi;
}

fm_roi *fm_roi_new_rectangle(const char *name, double x0, double y0, double x1, double y1)
{
    fm_roi *roi = fm_roi_new(FM_ROI_RECTANGLE, name);
    fm_roi_add_point(roi, x0, y0);
    fm_roi_add_point(roi, x1, y1);
    return roi;
}

fm_roi *fm_roi_new_ellipse(const char *name, double x0, double y0, double x1, double y1)
{
    fm_roi *roi = fm_roi_new(FM_ROI_ELLIPSE, name);
    fm_roi_add_point(roi, x0, y0);
    fm_roi_add_point(roi, x1, y1);
    return roi;
}

fm_roi *fm_roi_new_mask(const char *name, const guint8 *mask, int width, int height)
{
    fm_roi *roi = fm_roi_new(FM_ROI_MASK, name);
    gsize n = (gsize)MAX(width, 0) * (gsize)MAX(height, 0);
    roi->mask = g_new0(guint8, MAX(n, 1));
    roi->mask_width = MAX(width, 0);
    roi->mask_height = MAX(height, 0);
    for (gsize i = 0; mask != NULL && i < n; i++)
        roi->mask[i] = mask[i] != 0;
    return roi;
}

void fm_roi_add_point(fm_roi *roi, double x, double y)
{
    fm_point p = {x, y};
    g_array_append_val(roi->points, p);
}

fm_roi *fm_roi_copy(const fm_roi *roi)
{
    fm_roi *c = roi->kind == FM_ROI_MASK
                    ? fm_roi_new_mask(roi->name, roi->mask, roi->mask_width, roi->mask_height)
                    : fm_roi_new(roi->kind, roi->name);
    c->role = g_strdup(roi->role);
    c->slice = roi->slice;
    g_array_append_vals(c->points, roi->points->data, roi->points->len);
    return c;
}

void fm_roi_free(fm_roi *roi)
{
    if (roi == NULL)
        return;
    g_free(roi->name);
    g_free(roi->role);
    g_array_unref(roi->points);
    g_free(roi->mask);
    g_free(roi);
}

const char *fm_roi_kind_name(fm_roi_kind kind)
{
    return (kind >= 0 && kind <= FM_ROI_MASK) ? kind_names[kind] : "unknown";
}

gboolean fm_roi_kind_parse(const char *text, fm_roi_kind *out)
{
    for (int i = 0; i <= FM_ROI_MASK; i++) {
        if (text != NULL && g_ascii_strcasecmp(text, kind_names[i]) == 0) {
            *out = (fm_roi_kind)i;
            return TRUE;
        }
    }
    return FALSE;
}

static fm_point pt(const fm_roi *roi, guint i)
{
    return g_array_index(roi->points, fm_point, i);
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Marks pixels whose centre lies in [xa, xb) on row j. */
static void fill_span(guint8 *mask, int width, int j, double xa, double xb)
{
    int i0 = (int)ceil(xa - 0.5);
    int i1 = (int)ceil(xb - 0.5); /* exclusive */
    i0 = MAX(i0, 0);
    i1 = MIN(i1, width);
    for (int i = i0; i < i1; i++)
        mask[(gsize)j * width + i] = 1;
}

static void rasterise_polygon(const fm_roi *roi, guint8 *mask, int width, int height)
{
    guint n = roi->points->len;
    if (n < 3)
        return;
    double *xs = g_new(double, n);
    for (int j = 0; j < height; j++) {
        double cy = j + 0.5;
        guint k = 0;
        /* Even-odd rule by scanline crossings; the half-open test (a above, b not) counts a
         * vertex lying exactly on the scanline once. */
        for (guint e = 0; e < n; e++) {
            fm_point a = pt(roi, e), b = pt(roi, (e + 1) % n);
            if ((a.y > cy) != (b.y > cy))
                xs[k++] = a.x + (cy - a.y) * (b.x - a.x) / (b.y - a.y);
        }
        qsort(xs, k, sizeof(double), compare_double);
        for (guint c = 0; c + 1 < k; c += 2)
            fill_span(mask, width, j, xs[c], xs[c + 1]);
    }
    g_free(xs);
}

guint8 *fm_roi_rasterise(const fm_roi *roi, int width, int height)
{
    guint8 *mask = g_new0(guint8, MAX((gsize)width * (gsize)height, 1));
    if (roi->kind == FM_ROI_MASK) { /* the part of the mask that lies on the image */
        int w = MIN(width, roi->mask_width), h = MIN(height, roi->mask_height);
        for (int j = 0; j < h; j++)
            memcpy(mask + (gsize)j * width, roi->mask + (gsize)j * roi->mask_width,
                   (gsize)MAX(w, 0));
        return mask;
    }
    if (roi->kind == FM_ROI_POLYGON) {
        rasterise_polygon(roi, mask, width, height);
        return mask;
    }
    if (roi->points->len < 2)
        return mask;
    fm_point p0 = pt(roi, 0), p1 = pt(roi, 1);
    double xmin = MIN(p0.x, p1.x), xmax = MAX(p0.x, p1.x);
    double ymin = MIN(p0.y, p1.y), ymax = MAX(p0.y, p1.y);
    if (roi->kind == FM_ROI_RECTANGLE) {
        for (int j = 0; j < height; j++)
            if (j + 0.5 >= ymin && j + 0.5 < ymax)
                fill_span(mask, width, j, xmin, xmax);
        return mask;
    }
    double cx = 0.5 * (xmin + xmax), cy = 0.5 * (ymin + ymax);
    double a = 0.5 * (xmax - xmin), b = 0.5 * (ymax - ymin);
    if (a <= 0.0 || b <= 0.0)
        return mask;
    for (int j = 0; j < height; j++) {
        double dy = (j + 0.5 - cy) / b;
        if (dy * dy > 1.0)
            continue;
        double half = a * sqrt(1.0 - dy * dy);
        /* Closed boundary: include centres on the ellipse itself. */
        for (int i = MAX((int)floor(cx - half - 0.5), 0); i < width; i++) {
            double dx = (i + 0.5 - cx) / a;
            if (i + 0.5 > cx + half)
                break;
            if (dx * dx + dy * dy <= 1.0)
                mask[(gsize)j * width + i] = 1;
        }
    }
    return mask;
}

gsize fm_roi_count_pixels(const fm_roi *roi, int width, int height)
{
    g_autofree guint8 *mask = fm_roi_rasterise(roi, width, height);
    gsize n = 0;
    for (gsize i = 0; i < (gsize)width * (gsize)height; i++)
        n += mask[i];
    return n;
}

gboolean fm_roi_bounds(const fm_roi *roi, double *x0, double *y0, double *x1, double *y1)
{
    double lo_x = INFINITY, lo_y = INFINITY, hi_x = -INFINITY, hi_y = -INFINITY;
    if (roi->kind == FM_ROI_MASK) {
        for (int j = 0; j < roi->mask_height; j++)
            for (int i = 0; i < roi->mask_width; i++)
                if (roi->mask[(gsize)j * roi->mask_width + i]) {
                    lo_x = MIN(lo_x, i);
                    hi_x = MAX(hi_x, i + 1);
                    lo_y = MIN(lo_y, j);
                    hi_y = MAX(hi_y, j + 1);
                }
    } else {
        for (guint i = 0; i < roi->points->len; i++) {
            lo_x = MIN(lo_x, pt(roi, i).x);
            hi_x = MAX(hi_x, pt(roi, i).x);
            lo_y = MIN(lo_y, pt(roi, i).y);
            hi_y = MAX(hi_y, pt(roi, i).y);
        }
    }
    if (!(hi_x >= lo_x && hi_y >= lo_y))
        return FALSE;
    *x0 = lo_x;
    *y0 = lo_y;
    *x1 = hi_x;
    *y1 = hi_y;
    return TRUE;
}

fm_roi_stats fm_roi_statistics(const fm_roi *roi, const float *map, int width, int height)
{
    fm_roi_stats s = {0, NAN, NAN, NAN, NAN};
    g_autofree guint8 *mask = fm_roi_rasterise(roi, width, height);
    double sum = 0.0, sum2 = 0.0, lo = INFINITY, hi = -INFINITY;
    for (gsize i = 0; i < (gsize)width * (gsize)height; i++) {
        if (!mask[i] || !isfinite(map[i]))
            continue;
        double v = map[i];
        s.n++;
        sum += v;
        sum2 += v * v;
        lo = MIN(lo, v);
        hi = MAX(hi, v);
    }
    if (s.n == 0)
        return s;
    s.mean = sum / (double)s.n;
    /* Sample standard deviation (N-1), the one a user compares with a spreadsheet's STDEV. */
    if (s.n > 1) {
        double var = (sum2 - sum * s.mean) / (double)(s.n - 1);
        s.sd = sqrt(MAX(var, 0.0));
    } else {
        s.sd = 0.0;
    }
    s.min = lo;
    s.max = hi;
    return s;
}

/* "size":[w,h] and "runs":[start,length,...] of the inside pixels, row-major. */
static void add_mask_members(JsonBuilder *b, const fm_roi *roi)
{
    json_builder_set_member_name(b, "size");
    json_builder_begin_array(b);
    json_builder_add_int_value(b, roi->mask_width);
    json_builder_add_int_value(b, roi->mask_height);
    json_builder_end_array(b);
    json_builder_set_member_name(b, "runs");
    json_builder_begin_array(b);
    gsize n = (gsize)roi->mask_width * (gsize)roi->mask_height;
    for (gsize i = 0; i < n;) {
        if (!roi->mask[i]) {
            i++;
            continue;
        }
        gsize start = i;
        while (i < n && roi->mask[i])
            i++;
        json_builder_add_int_value(b, (gint64)start);
        json_builder_add_int_value(b, (gint64)(i - start));
    }
    json_builder_end_array(b);
}

static JsonNode *roi_to_node(const fm_roi *roi)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "kind");
    json_builder_add_string_value(b, fm_roi_kind_name(roi->kind));
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, roi->name);
    json_builder_set_member_name(b, "role");
    if (roi->role)
        json_builder_add_string_value(b, roi->role);
    else
        json_builder_add_null_value(b);
    json_builder_set_member_name(b, "points");
    json_builder_begin_array(b);
    for (guint i = 0; i < roi->points->len; i++) {
        json_builder_begin_array(b);
        json_builder_add_double_value(b, pt(roi, i).x);
        json_builder_add_double_value(b, pt(roi, i).y);
        json_builder_end_array(b);
    }
    json_builder_end_array(b);
    if (roi->kind == FM_ROI_MASK)
        add_mask_members(b, roi);
    if (roi->slice >= 0) { /* omitted for "every slice", so 2-D ROI files stay as they were */
        json_builder_set_member_name(b, "slice");
        json_builder_add_int_value(b, roi->slice);
    }
    json_builder_end_object(b);
    return json_builder_get_root(b);
}

char *fm_roi_to_json(const fm_roi *roi)
{
    g_autoptr(JsonNode) root = roi_to_node(roi);
    return fm_json_to_text(root, FALSE);
}

static double node_number(JsonNode *n, gboolean *ok)
{
    if (n == NULL || !JSON_NODE_HOLDS_VALUE(n)) {
        *ok = FALSE;
        return 0;
    }
    GType t = json_node_get_value_type(n);
    if (t == G_TYPE_INT64)
        return (double)json_node_get_int(n);
    if (t == G_TYPE_DOUBLE)
        return json_node_get_double(n);
    *ok = FALSE;
    return 0;
}

/* The "size" and "runs" of a mask ROI (see roi.h); FALSE with error when they do not fit. */
static gboolean read_mask_members(JsonObject *o, fm_roi *roi, const char *where, GError **error)
{
    JsonNode *size_node = json_object_get_member(o, "size");
    JsonNode *runs_node = json_object_get_member(o, "runs");
    JsonArray *size =
        size_node && JSON_NODE_HOLDS_ARRAY(size_node) ? json_node_get_array(size_node) : NULL;
    JsonArray *runs =
        runs_node && JSON_NODE_HOLDS_ARRAY(runs_node) ? json_node_get_array(runs_node) : NULL;
    gboolean ok = size != NULL && runs != NULL && json_array_get_length(size) == 2 &&
                  json_array_get_length(runs) % 2 == 0;
    double w = 0, h = 0;
    if (ok) {
        w = node_number(json_array_get_element(size, 0), &ok);
        h = node_number(json_array_get_element(size, 1), &ok);
    }
    /* bounds the allocation a damaged file can ask for (256 MiB) */
    if (!ok || w != floor(w) || h != floor(h) || w < 1 || h < 1 || w > 65536 || h > 65536 ||
        w * h > (double)(1 << 28)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: mask ROI '%s' needs \"size\": [width, height] and \"runs\": "
                      "[start, length, ...]"),
                    where, roi->name);
        return FALSE;
    }
    gsize n = (gsize)w * (gsize)h;
    roi->mask_width = (int)w;
    roi->mask_height = (int)h;
    roi->mask = g_new0(guint8, n);
    double end = 0; /* runs ascend and do not overlap */
    for (guint k = 0; k < json_array_get_length(runs); k += 2) {
        double start = node_number(json_array_get_element(runs, k), &ok);
        double length = node_number(json_array_get_element(runs, k + 1), &ok);
        if (!ok || start != floor(start) || length != floor(length) || start < end || length < 1 ||
            start + length > (double)n) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: mask ROI '%s' run %u is not inside its %dx%d mask after the "
                          "run before"),
                        where, roi->name, k / 2 + 1, roi->mask_width, roi->mask_height);
            return FALSE;
        }
        memset(roi->mask + (gsize)start, 1, (gsize)length);
        end = start + length;
    }
    return TRUE;
}

static fm_roi *roi_from_node(JsonNode *node, const char *where, GError **error)
{
    if (!JSON_NODE_HOLDS_OBJECT(node)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: an ROI must be a JSON object"),
                    where);
        return NULL;
    }
    JsonObject *o = json_node_get_object(node);
    const char *kind_text = json_object_get_string_member_with_default(o, "kind", NULL);
    fm_roi_kind kind;
    if (!fm_roi_kind_parse(kind_text, &kind)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: kind '%s' is not rectangle, ellipse, polygon or mask"), where,
                    kind_text ? kind_text : "");
        return NULL;
    }
    const char *name = json_object_get_string_member_with_default(o, "name", "roi");
    g_autoptr(fm_roi) roi = fm_roi_new(kind, name);
    JsonNode *role = json_object_get_member(o, "role");
    if (role && JSON_NODE_HOLDS_VALUE(role) && json_node_get_value_type(role) == G_TYPE_STRING)
        roi->role = g_strdup(json_node_get_string(role));
    JsonNode *pts_node = json_object_get_member(o, "points");
    JsonArray *pts =
        pts_node && JSON_NODE_HOLDS_ARRAY(pts_node) ? json_node_get_array(pts_node) : NULL;
    if (pts == NULL && kind != FM_ROI_MASK) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: ROI '%s' has no points"), where,
                    name);
        return NULL;
    }
    for (guint i = 0; pts != NULL && i < json_array_get_length(pts); i++) {
        JsonNode *p = json_array_get_element(pts, i);
        gboolean ok =
            JSON_NODE_HOLDS_ARRAY(p) && json_array_get_length(json_node_get_array(p)) == 2;
        double x = 0, y = 0;
        if (ok) {
            x = node_number(json_array_get_element(json_node_get_array(p), 0), &ok);
            y = node_number(json_array_get_element(json_node_get_array(p), 1), &ok);
        }
        if (!ok) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: ROI '%s' point %u is not [x, y]"), where, name, i + 1);
            return NULL;
        }
        fm_roi_add_point(roi, x, y);
    }
    JsonNode *slice = json_object_get_member(o, "slice");
    if (slice && !JSON_NODE_HOLDS_NULL(slice)) {
        gboolean ok = TRUE;
        double z = node_number(slice, &ok);
        if (!ok || z != floor(z) || z < -1 || z > G_MAXINT) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: ROI '%s' slice must be an integer >= 0 (or -1 for every slice)"),
                        where, name);
            return NULL;
        }
        roi->slice = (int)z;
    }
    if (kind == FM_ROI_MASK)
        return read_mask_members(o, roi, where, error) ? g_steal_pointer(&roi) : NULL;
    guint need = kind == FM_ROI_POLYGON ? 3 : 2;
    if (roi->points->len < need || (kind != FM_ROI_POLYGON && roi->points->len != 2)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: ROI '%s' (%s) has %u points, needs %s%u"), where, name, kind_text,
                    roi->points->len, kind == FM_ROI_POLYGON ? "at least " : "", need);
        return NULL;
    }
    return g_steal_pointer(&roi);
}

static JsonNode *parse_json(JsonParser *parser, const char *data, gssize len, const char *where,
                            GError **error)
{
    GError *local = NULL;
    if (!json_parser_load_from_data(parser, data, len, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: invalid JSON: %s"), where,
                    local->message);
        g_error_free(local);
        return NULL;
    }
    JsonNode *root = json_parser_get_root(parser);
    if (root == NULL)
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: empty JSON"), where);
    return root;
}

fm_roi *fm_roi_from_json(const char *json, GError **error)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonNode *root = parse_json(parser, json, -1, "ROI", error);
    return root ? roi_from_node(root, "ROI", error) : NULL;
}

GPtrArray *fm_roi_list_from_file(const char *path, GError **error)
{
    g_autofree char *data = NULL;
    gsize len = 0;
    GError *local = NULL;
    if (!g_file_get_contents(path, &data, &len, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot read: %s"), path,
                    local->message);
        g_error_free(local);
        return NULL;
    }
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonNode *root = parse_json(parser, data, (gssize)len, path, error);
    if (root == NULL)
        return NULL;
    g_autoptr(GPtrArray) list = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    if (JSON_NODE_HOLDS_OBJECT(root)) { /* one ROI on its own is accepted too */
        fm_roi *roi = roi_from_node(root, path, error);
        if (roi == NULL)
            return NULL;
        g_ptr_array_add(list, roi);
        return g_steal_pointer(&list);
    }
    if (!JSON_NODE_HOLDS_ARRAY(root)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: expected a JSON array of ROIs"),
                    path);
        return NULL;
    }
    JsonArray *arr = json_node_get_array(root);
    for (guint i = 0; i < json_array_get_length(arr); i++) {
        fm_roi *roi = roi_from_node(json_array_get_element(arr, i), path, error);
        if (roi == NULL)
            return NULL;
        g_ptr_array_add(list, roi);
    }
    return g_steal_pointer(&list);
}

gboolean fm_roi_list_to_file(const char *path, GPtrArray *rois, GError **error)
{
    g_autoptr(GString) text = g_string_new("[\n");
    for (guint i = 0; i < rois->len; i++) {
        g_autofree char *json = fm_roi_to_json(rois->pdata[i]);
        g_string_append_printf(text, "  %s%s\n", json, i + 1 < rois->len ? "," : "");
    }
    g_string_append(text, "]\n");
    return g_file_set_contents(path, text->str, (gssize)text->len, error);
}
