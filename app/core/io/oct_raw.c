/* SD-OCT raw spectra reader and writer: headerless uint16/12-bit packed/uint8 with a JSON
 * sidecar, and multi-page TIFF B-scans. */
#include "oct_raw.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/io_threads.h"
#include "app/core/io/tiff.h"

static const char *const format_names[] = {"u16", "u12packed", "u8"};

const char *fm_oct_raw_format_name(fm_oct_raw_format format)
{
    return (unsigned)format < G_N_ELEMENTS(format_names) ? format_names[format] : "?";
}

gboolean fm_oct_raw_format_parse(const char *text, fm_oct_raw_format *format)
{
    for (gsize i = 0; i < G_N_ELEMENTS(format_names); i++)
        if (g_strcmp0(text, format_names[i]) == 0) {
            *format = (fm_oct_raw_format)i;
            return TRUE;
        }
    return FALSE;
}

gsize fm_oct_raw_aline_bytes(const fm_oct_raw_layout *layout)
{
    gsize n = (gsize)MAX(layout->pixels_per_aline, 0);
    switch (layout->format) {
    case FM_OCT_RAW_U16:
        return 2 * n;
    case FM_OCT_RAW_U12_PACKED:
        return 3 * n / 2;
    default:
        return n;
    }
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, G_DIR_SEPARATOR);
    return slash ? slash + 1 : path;
}

char *fm_oct_raw_sidecar_path(const char *path)
{
    return g_strconcat(path, ".json", NULL);
}

gboolean fm_oct_raw_has_sidecar(const char *path)
{
    g_autofree char *sidecar = fm_oct_raw_sidecar_path(path);
    return g_file_test(sidecar, G_FILE_TEST_IS_REGULAR);
}

static gboolean check_layout(const char *label, const fm_oct_raw_layout *layout, GError **error)
{
    if (layout->pixels_per_aline < 2 || layout->alines_per_bscan < 1 || layout->n_bscans < 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: layout needs pixels_per_aline >= 2 and alines_per_bscan >= 1 "
                      "(got %d and %d)"),
                    label, layout->pixels_per_aline, layout->alines_per_bscan);
        return FALSE;
    }
    if (layout->format == FM_OCT_RAW_U12_PACKED && layout->pixels_per_aline % 2 != 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: 12-bit packed A-lines need an even pixel count, not %d"), label,
                    layout->pixels_per_aline);
        return FALSE;
    }
    return TRUE;
}

static gboolean member_int(JsonObject *o, const char *name, int *out, const char *label,
                           GError **error)
{
    if (!json_object_has_member(o, name))
        return TRUE;
    JsonNode *n = json_object_get_member(o, name);
    if (!JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_INT64) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: \"%s\" must be an integer"), label,
                    name);
        return FALSE;
    }
    *out = (int)json_node_get_int(n);
    return TRUE;
}

gboolean fm_oct_raw_read_sidecar(const char *path, fm_oct_raw_layout *layout,
                                 char **calibration_path, GError **error)
{
    g_autofree char *sidecar = fm_oct_raw_sidecar_path(path);
    const char *label = base_name(sidecar);
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) local = NULL;
    if (calibration_path)
        *calibration_path = NULL;
    if (!json_parser_load_from_file(parser, sidecar, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: %s"), label, local->message);
        return FALSE;
    }
    JsonNode *root = json_parser_get_root(parser);
    if (!root || !JSON_NODE_HOLDS_OBJECT(root)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: expected a JSON object"), label);
        return FALSE;
    }
    JsonObject *o = json_node_get_object(root);
    fm_oct_raw_layout l = {0, 0, 0, FM_OCT_RAW_U16};
    if (!member_int(o, "pixels_per_aline", &l.pixels_per_aline, label, error) ||
        !member_int(o, "alines_per_bscan", &l.alines_per_bscan, label, error) ||
        !member_int(o, "bscans", &l.n_bscans, label, error))
        return FALSE;
    const char *format = json_object_get_string_member_with_default(o, "format", "u16");
    if (!fm_oct_raw_format_parse(format, &l.format)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: \"format\" is '%s', not u16, u12packed or u8"), label, format);
        return FALSE;
    }
    if (!json_object_has_member(o, "pixels_per_aline") ||
        !json_object_has_member(o, "alines_per_bscan")) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: needs \"pixels_per_aline\" and \"alines_per_bscan\""), label);
        return FALSE;
    }
    const char *calib = json_object_get_string_member_with_default(o, "calibration_file", NULL);
    if (calib && *calib && calibration_path) {
        if (g_path_is_absolute(calib)) {
            *calibration_path = g_strdup(calib);
        } else {
            g_autofree char *dir = g_path_get_dirname(path);
            *calibration_path = g_build_filename(dir, calib, NULL);
        }
    }
    *layout = l;
    return TRUE;
}

void fm_oct_raw_sidecar_steps(const char *path, double *aline_um, double *bscan_um)
{
    *aline_um = *bscan_um = 0;
    g_autofree char *sidecar = fm_oct_raw_sidecar_path(path);
    g_autoptr(JsonParser) parser = json_parser_new();
    if (!json_parser_load_from_file(parser, sidecar, NULL))
        return;
    JsonNode *root = json_parser_get_root(parser);
    if (!root || !JSON_NODE_HOLDS_OBJECT(root))
        return;
    JsonObject *o = json_node_get_object(root);
    *aline_um = json_object_get_double_member_with_default(o, "aline_spacing_um", 0.0);
    *bscan_um = json_object_get_double_member_with_default(o, "bscan_spacing_um", 0.0);
}

/* The sidecar's lateral steps (FM_OCT_META_*_SPACING) onto ds, where it gives them. */
static void read_spacing(const char *path, fm_dataset *ds)
{
    double um[2];
    fm_oct_raw_sidecar_steps(path, &um[0], &um[1]);
    static const char *const keys[2] = {FM_OCT_META_ALINE_SPACING, FM_OCT_META_BSCAN_SPACING};
    for (int i = 0; i < 2; i++) {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        if (um[i] > 0.0)
            fm_dataset_set_meta(ds, keys[i], g_ascii_dtostr(buf, sizeof buf, um[i]));
    }
}

static void write_spacing(JsonBuilder *b, const fm_dataset *spectra)
{
    static const char *const keys[2][2] = {{"aline_spacing_um", FM_OCT_META_ALINE_SPACING},
                                           {"bscan_spacing_um", FM_OCT_META_BSCAN_SPACING}};
    for (int i = 0; spectra && i < 2; i++) {
        const char *um = fm_dataset_get_meta(spectra, keys[i][1]);
        if (um && g_ascii_strtod(um, NULL) > 0.0) {
            json_builder_set_member_name(b, keys[i][0]);
            json_builder_add_double_value(b, g_ascii_strtod(um, NULL));
        }
    }
}

static gboolean write_sidecar(const char *path, const fm_oct_raw_layout *layout,
                              const char *calibration_file, const fm_dataset *spectra,
                              GError **error)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "pixels_per_aline");
    json_builder_add_int_value(b, layout->pixels_per_aline);
    json_builder_set_member_name(b, "alines_per_bscan");
    json_builder_add_int_value(b, layout->alines_per_bscan);
    json_builder_set_member_name(b, "bscans");
    json_builder_add_int_value(b, layout->n_bscans);
    json_builder_set_member_name(b, "format");
    json_builder_add_string_value(b, fm_oct_raw_format_name(layout->format));
    if (calibration_file) {
        json_builder_set_member_name(b, "calibration_file");
        json_builder_add_string_value(b, calibration_file);
    }
    write_spacing(b, spectra);
    json_builder_end_object(b);
    g_autoptr(JsonGenerator) gen = json_generator_new();
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    json_generator_set_root(gen, root);
    json_generator_set_pretty(gen, TRUE);
    g_autofree char *sidecar = fm_oct_raw_sidecar_path(path);
    g_autoptr(GError) local = NULL;
    if (!json_generator_to_file(gen, sidecar, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: %s"), sidecar, local->message);
        return FALSE;
    }
    return TRUE;
}

gboolean fm_oct_raw_write_sidecar(const char *path, const fm_oct_raw_layout *layout,
                                  const char *calibration_file, GError **error)
{
    return write_sidecar(path, layout, calibration_file, NULL, error);
}

static void name_dims(fm_dataset *ds)
{
    static const char *const names[] = {"pixel", "aline", "bscan"};
    static const char *const units[] = {"px", "aline", "bscan"};
    for (int i = 0; i < 3 && i < ds->n_dims; i++) {
        g_free(ds->dims[i].name);
        g_free(ds->dims[i].unit);
        ds->dims[i].name = g_strdup(names[i]);
        ds->dims[i].unit = g_strdup(units[i]);
    }
}

typedef struct {
    const guint8 *bytes;
    guint16 *out;
    fm_oct_raw_format format;
    gsize pixels, aline_bytes; /* per A-line */
} decode_job;

/* Below this many A-lines per thread (about 1 MiB of samples) a thread costs more than it
 * saves. */
#define DECODE_MIN_ALINES 256

static void decode_alines(int part, gsize first, gsize end, gpointer data)
{
    const decode_job *job = data;
    const guint8 *in = job->bytes + first * job->aline_bytes;
    guint16 *out = job->out + first * job->pixels;
    gsize n = (end - first) * job->pixels;
    switch (job->format) {
    case FM_OCT_RAW_U16:
        for (gsize i = 0; i < n; i++)
            out[i] = (guint16)(in[2 * i] | in[2 * i + 1] << 8);
        break;
    case FM_OCT_RAW_U12_PACKED: /* pixels per A-line are even: no pair spans two A-lines */
        for (gsize i = 0; i < n / 2; i++) {
            const guint8 *p = in + 3 * i;
            out[2 * i] = (guint16)(p[0] | (p[1] & 0x0f) << 8);
            out[2 * i + 1] = (guint16)(p[1] >> 4 | p[2] << 4);
        }
        break;
    case FM_OCT_RAW_U8: /* widened so every OCT dataset reaches the kernels as uint16 */
        for (gsize i = 0; i < n; i++)
            out[i] = in[i];
        break;
    }
}

fm_dataset *fm_oct_raw_decode(const guint8 *bytes, gsize n_bytes, const char *label,
                              const fm_oct_raw_layout *layout, GError **error)
{
    if (!check_layout(label, layout, error))
        return NULL;
    gsize aline_bytes = fm_oct_raw_aline_bytes(layout);
    gsize n_bscans = 0;
    if (!fm_oct_raw_check_size(label, n_bytes, layout, &n_bscans, error))
        return NULL;
    gsize per_bscan = (gsize)layout->alines_per_bscan;
    gsize n_alines = n_bscans * per_bscan;
    gsize sizes[3] = {(gsize)layout->pixels_per_aline, per_bscan, n_bscans};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    name_dims(ds);
    static const int bits[] = {16, 12, 8};
    ds->bits_per_sample = bits[layout->format];
    /* A-lines decode independently; each thread takes a contiguous run of them. */
    decode_job job = {bytes, ds->data, layout->format, (gsize)layout->pixels_per_aline,
                      aline_bytes};
    fm_io_parallel_ranges(n_alines, fm_io_threads_for(n_alines, DECODE_MIN_ALINES), decode_alines,
                          &job);
    fm_dataset_set_meta(ds, FM_OCT_META_FORMAT, fm_oct_raw_format_name(layout->format));
    fm_dataset_set_meta(ds, "format", "oct_raw");
    fm_dataset_set_meta(ds, "format_variant", fm_oct_raw_format_name(layout->format));
    return ds;
}

fm_dataset *fm_oct_raw_read(const char *path, const fm_oct_raw_layout *layout, GError **error)
{
    const char *label = base_name(path);
    fm_oct_raw_layout from_sidecar;
    g_autofree char *calibration = NULL;
    if (!layout && fm_oct_raw_has_sidecar(path)) {
        if (!fm_oct_raw_read_sidecar(path, &from_sidecar, &calibration, error))
            return NULL;
        layout = &from_sidecar;
    }
    /* Mapped, not read: the decoder takes the bytes straight from the page cache. */
    g_autoptr(GError) local = NULL;
    g_autoptr(GMappedFile) map = g_mapped_file_new(path, FALSE, &local);
    if (!map) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot read: %s"), label,
                    local->message);
        return NULL;
    }
    const guint8 *contents = (const guint8 *)g_mapped_file_get_contents(map);
    gsize length = g_mapped_file_get_length(map);
    fm_dataset *ds;
    if (layout) {
        ds = fm_oct_raw_decode(contents, length, label, layout, error);
        if (!ds)
            return NULL;
    } else {
        if (length == 0) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: empty file"), label);
            return NULL;
        }
        gsize size = length;
        ds = fm_dataset_new(FM_PIXEL_U8, 1, &size, (const char *const[]){"byte"});
        memcpy(ds->data, contents, length);
        fm_dataset_set_meta(ds, FM_OCT_META_UNPARSED, "1");
        fm_dataset_set_meta(ds, "format", "oct_raw");
        fm_dataset_set_meta(ds, "format_variant", _("layout not given"));
    }
    if (calibration)
        fm_dataset_set_meta(ds, FM_OCT_META_CALIBRATION, calibration);
    if (layout == &from_sidecar)
        read_spacing(path, ds);
    ds->source_path = g_canonicalize_filename(path, NULL);
    return ds;
}

fm_dataset *fm_oct_raw_decode_dataset(const fm_dataset *unparsed, const fm_oct_raw_layout *layout,
                                      GError **error)
{
    const char *label = unparsed->source_path ? base_name(unparsed->source_path) : "raw data";
    fm_dataset *ds =
        fm_oct_raw_decode(unparsed->data, fm_dataset_n_bytes(unparsed), label, layout, error);
    if (!ds)
        return NULL;
    ds->source_path = g_strdup(unparsed->source_path);
    ds->sha256 = g_strdup(unparsed->sha256);
    return ds;
}

fm_dataset *fm_oct_tiff_read(const char *path, GError **error)
{
    fm_dataset *ds = fm_tiff_read(path, error);
    if (!ds)
        return NULL;
    name_dims(ds);
    fm_dataset_set_meta(ds, FM_OCT_META_FORMAT, "tiff");
    return ds;
}

gboolean fm_oct_raw_write(const char *path, const fm_dataset *spectra, fm_oct_raw_format format,
                          const char *calibration_file, GError **error)
{
    g_return_val_if_fail(spectra->type == FM_PIXEL_U16, FALSE);
    fm_oct_raw_layout layout = {
        .pixels_per_aline = fm_dataset_width(spectra),
        .alines_per_bscan = fm_dataset_height(spectra),
        .n_bscans = fm_dataset_frames(spectra),
        .format = format,
    };
    if (!check_layout(base_name(path), &layout, error))
        return FALSE;
    gsize n = fm_dataset_n_elements(spectra);
    const guint16 *in = spectra->data;
    gsize n_bytes = fm_oct_raw_aline_bytes(&layout) * (n / (gsize)layout.pixels_per_aline);
    g_autofree guint8 *bytes = g_malloc(MAX(n_bytes, 1));
    switch (format) {
    case FM_OCT_RAW_U16:
        for (gsize i = 0; i < n; i++) {
            bytes[2 * i] = (guint8)(in[i] & 0xff);
            bytes[2 * i + 1] = (guint8)(in[i] >> 8);
        }
        break;
    case FM_OCT_RAW_U12_PACKED:
        for (gsize i = 0; i < n / 2; i++) {
            guint16 a = MIN(in[2 * i], 4095), b = MIN(in[2 * i + 1], 4095);
            bytes[3 * i] = (guint8)(a & 0xff);
            bytes[3 * i + 1] = (guint8)(a >> 8 | (b & 0x0f) << 4);
            bytes[3 * i + 2] = (guint8)(b >> 4);
        }
        break;
    case FM_OCT_RAW_U8:
        for (gsize i = 0; i < n; i++)
            bytes[i] = (guint8)MIN(in[i], 255);
        break;
    }
    g_autoptr(GError) local = NULL;
    if (!g_file_set_contents(path, (const char *)bytes, (gssize)n_bytes, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: %s"), path, local->message);
        return FALSE;
    }
    return write_sidecar(path, &layout, calibration_file, spectra, error);
}

gboolean fm_oct_dataset_is_spectra(const fm_dataset *ds)
{
    return ds && ds->n_dims >= 2 && g_strcmp0(ds->dims[0].name, "pixel") == 0 &&
           g_strcmp0(ds->dims[1].name, "aline") == 0;
}
