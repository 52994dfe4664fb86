/* `fluxmap-cli info FILE [--json]`: what the readers found in a file, without running a method. */
#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/cli/cli.h"
#include "app/core/io/format_info.h"
#include "app/core/io/frame_times.h"
#include "app/core/io/mci.h"
#include "app/core/io/oct_raw.h"
#include "app/core/io/open.h"
#include "app/core/oct/oct_calib.h"

static const fm_cli_option options[] = {
    {"json", FALSE},      {"help", FALSE},  {"pixels_per_aline", TRUE}, {"alines_per_bscan", TRUE},
    {"raw_format", TRUE}, {"bscans", TRUE},       {"block", TRUE},            {"channel", TRUE},
};

static void print_help(void)
{
    printf("%s", _("Usage: fluxmap-cli info FILE [--json] [--block N | --channel N]\n"
                   "          [--pixels_per_aline=N --alines_per_bscan=N [--raw_format=u16|"
                   "u12packed|u8] [--bscans=N]]\n"
                   "Says what Fluxmap reads in FILE (any file 'run' takes, or an MCML .mci):\n"
                   "format and variant, dimensions with units and spacing, pixel type, bin\n"
                   "width and repetition rate (FLIM), frame times (DCE), the wavelength range\n"
                   "of the calibration (SD-OCT), every metadata key the reader set, and\n"
                   "pixel_sum, the sum of all values after rescaling.\n"
                   "The layout options read FILE as SD-OCT raw spectra, whatever its name,\n"
                   "when its content names no other format (a <FILE>.json sidecar does the\n"
                   "same); its size is checked against the layout.\n"
                   "--block N / --channel N read the N-th dataset of a Becker & Hickl .sdt\n"
                   "file / detector channel N of a PicoQuant .ptu or .pt3 file.\n"
                   "--json prints one JSON object.\n"));
}

/* What info found beside the dataset itself. */
typedef struct {
    fm_dataset *ds;
    char *description; /* "PicoQuant PTU, PicoHarp T3" */
    double pixel_sum;
    double *times_s; /* DCE frame times, or NULL */
    int n_times;
    double lambda_nm[2]; /* calibration's first and last wavelength; NAN when unknown */
    char *warning;       /* a calibration that could not be read, or NULL */
    fm_mci_file *mci;    /* for .mci files */
} info;

static void info_clear(info *in)
{
    g_clear_pointer(&in->ds, fm_dataset_unref);
    g_clear_pointer(&in->description, g_free);
    g_clear_pointer(&in->times_s, g_free);
    g_clear_pointer(&in->warning, g_free);
    g_clear_pointer(&in->mci, fm_mci_file_free);
}

/* Neumaier's compensated sum: float32 DCE volumes of millions of voxels keep their digits, and
 * integer data stays exact to 2^53. */
static double pixel_sum(const fm_dataset *ds)
{
    double sum = 0, compensation = 0;
    gsize n = fm_dataset_n_elements(ds);
    for (gsize i = 0; i < n; i++) {
        double v = fm_dataset_value(ds, i), t = sum + v;
        if (fabs(sum) >= fabs(v))
            compensation += (sum - t) + v;
        else
            compensation += (v - t) + sum;
        sum = t;
    }
    return sum + compensation;
}

/* The wavelengths of an OCT dataset's calibration file (from its sidecar), if it names one. */
static void oct_wavelengths(info *in)
{
    const char *calibration = fm_dataset_get_meta(in->ds, FM_OCT_META_CALIBRATION);
    if (!calibration || !fm_oct_dataset_is_spectra(in->ds))
        return;
    g_autoptr(GError) error = NULL;
    int n = (int)in->ds->dims[0].size;
    g_autofree double *lambda = fm_oct_calib_read_csv(calibration, n, &error);
    if (!lambda) {
        in->warning = g_strdup(error->message);
        return;
    }
    in->lambda_nm[0] = MIN(lambda[0], lambda[n - 1]);
    in->lambda_nm[1] = MAX(lambda[0], lambda[n - 1]);
}

static const char *meta(const info *in, const char *key)
{
    return fm_dataset_get_meta(in->ds, key);
}

/* A metadata value that is a finite number, else NAN. */
static double meta_number(const info *in, const char *key)
{
    const char *text = meta(in, key);
    char *end = NULL;
    double v = text ? g_ascii_strtod(text, &end) : NAN;
    return text && end != text && *end == '\0' && isfinite(v) ? v : NAN;
}

static int compare_keys(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The metadata keys, sorted, so that the output does not depend on the hash order. */
static GPtrArray *sorted_keys(const fm_dataset *ds)
{
    GPtrArray *keys = g_ptr_array_new();
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, ds->metadata);
    while (g_hash_table_iter_next(&it, &key, NULL))
        g_ptr_array_add(keys, key);
    g_ptr_array_sort(keys, compare_keys);
    return keys;
}

static void print_json(const char *path, const info *in)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    fm_cli_json_member_string(b, "file", path);
    if (in->mci) {
        fm_cli_json_member_string(b, "format", "mci");
        fm_cli_json_member_string(b, "format_name", fm_format_title("mci"));
        fm_cli_json_member_string(b, "description", fm_format_title("mci"));
        json_builder_set_member_name(b, "runs");
        json_builder_begin_array(b);
        for (int r = 0; r < in->mci->n_runs; r++) {
            const fm_mci_run *run = &in->mci->runs[r];
            json_builder_begin_object(b);
            fm_cli_json_member_string(b, "output", run->output_name);
            fm_cli_json_member_int(b, "photons", run->params.n_photons);
            fm_cli_json_member_int(b, "layers", run->params.n_layers);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_builder_end_object(b);
        fm_cli_json_print(b);
        return;
    }
    const fm_dataset *ds = in->ds;
    fm_cli_json_member_string(b, "format", meta(in, FM_META_FORMAT));
    fm_cli_json_member_string(b, "format_name", fm_format_title(meta(in, FM_META_FORMAT)));
    fm_cli_json_member_string(b, "format_variant", meta(in, FM_META_FORMAT_VARIANT));
    fm_cli_json_member_string(b, "description", in->description);
    fm_cli_json_member_string(b, "pixel_type", fm_pixel_type_name(ds->type));
    fm_cli_json_member_int(b, "bits_per_sample", ds->bits_per_sample);
    json_builder_set_member_name(b, "dims");
    json_builder_begin_array(b);
    for (int d = 0; d < ds->n_dims; d++) {
        json_builder_begin_object(b);
        fm_cli_json_member_string(b, "name", ds->dims[d].name);
        fm_cli_json_member_int(b, "size", (gint64)ds->dims[d].size);
        fm_cli_json_member_string(b, "unit", ds->dims[d].unit);
        fm_cli_json_member_number(b, "spacing", ds->dims[d].spacing);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    fm_cli_json_member_int(b, "n_elements", (gint64)fm_dataset_n_elements(ds));
    static const char *const numbers[] = {"bin_width_ps", "rep_rate_mhz", "tac_range_ns"};
    for (gsize i = 0; i < G_N_ELEMENTS(numbers); i++)
        if (meta(in, numbers[i]))
            fm_cli_json_member_number(b, numbers[i], meta_number(in, numbers[i]));
    if (in->times_s) {
        json_builder_set_member_name(b, "times_s");
        json_builder_begin_array(b);
        for (int i = 0; i < in->n_times; i++)
            fm_cli_json_add_number(b, in->times_s[i]);
        json_builder_end_array(b);
    }
    if (isfinite(in->lambda_nm[0])) {
        json_builder_set_member_name(b, "wavelength_range_nm");
        json_builder_begin_array(b);
        fm_cli_json_add_number(b, in->lambda_nm[0]);
        fm_cli_json_add_number(b, in->lambda_nm[1]);
        json_builder_end_array(b);
    }
    fm_cli_json_member_number(b, "pixel_sum", in->pixel_sum);
    fm_cli_json_member_string(b, "source_path", ds->source_path);
    fm_cli_json_member_string(b, "sha256", ds->sha256);
    if (in->warning)
        fm_cli_json_member_string(b, "warning", in->warning);
    json_builder_set_member_name(b, "metadata");
    json_builder_begin_object(b);
    g_autoptr(GPtrArray) keys = sorted_keys(ds);
    for (guint i = 0; i < keys->len; i++)
        fm_cli_json_member_string(b, keys->pdata[i], meta(in, keys->pdata[i]));
    json_builder_end_object(b);
    json_builder_end_object(b);
    fm_cli_json_print(b);
}

static void print_text(const char *path, const info *in)
{
    printf(_("file: %s\n"), path);
    if (in->mci) {
        printf(_("format: %s\n"), fm_format_title("mci"));
        for (int r = 0; r < in->mci->n_runs; r++)
            printf(_("run %d: %s, %lld photons, %d layers\n"), r + 1, in->mci->runs[r].output_name,
                   (long long)in->mci->runs[r].params.n_photons, in->mci->runs[r].params.n_layers);
        return;
    }
    const fm_dataset *ds = in->ds;
    printf(_("format: %s\n"), in->description ? in->description : _("(not named by the reader)"));
    printf(_("pixel type: %s, %d bits per sample\n"), fm_pixel_type_name(ds->type),
           ds->bits_per_sample);
    printf(_("dims:"));
    for (int d = 0; d < ds->n_dims; d++) {
        g_autofree char *unit =
            ds->dims[d].unit ? g_strdup_printf("%s, ", ds->dims[d].unit) : g_strdup("");
        printf("%s %s %" G_GSIZE_FORMAT " (%s%s %.10g)", d ? "," : "", ds->dims[d].name,
               ds->dims[d].size, unit, _("spacing"), ds->dims[d].spacing);
    }
    printf("\n");
    if (meta(in, "bin_width_ps"))
        printf(_("bin width: %.10g ps\n"), meta_number(in, "bin_width_ps"));
    if (meta(in, "rep_rate_mhz"))
        printf(_("repetition rate: %.10g MHz\n"), meta_number(in, "rep_rate_mhz"));
    if (in->times_s) {
        printf(_("frame times (s):"));
        for (int i = 0; i < in->n_times; i++)
            printf(" %.10g", in->times_s[i]);
        printf("\n");
    }
    /* Which time tag (or rule) the reader trusted, and why when it had to fall back. */
    if (meta(in, FM_META_FRAME_TIMES_SOURCE))
        printf(_("frame times from: %s\n"), meta(in, FM_META_FRAME_TIMES_SOURCE));
    if (meta(in, FM_META_FRAME_TIMES_NOTE))
        printf(_("note: %s\n"), meta(in, FM_META_FRAME_TIMES_NOTE));
    if (isfinite(in->lambda_nm[0]))
        printf(_("wavelengths: %.10g to %.10g nm\n"), in->lambda_nm[0], in->lambda_nm[1]);
    if (in->warning)
        printf(_("warning: %s\n"), in->warning);
    printf(_("pixel sum: %.17g\n"), in->pixel_sum);
    g_autoptr(GPtrArray) keys = sorted_keys(ds);
    if (keys->len)
        printf(_("metadata:\n"));
    for (guint i = 0; i < keys->len; i++)
        printf("  %s: %s\n", (const char *)keys->pdata[i], meta(in, keys->pdata[i]));
}

/* The layout options, all or none: exit 2 for a partial or malformed set. */
static int parse_layout(const fm_cli_args *args, fm_oct_raw_layout *layout, gboolean *given)
{
    g_autofree char *message = NULL;
    *layout = (fm_oct_raw_layout){0, 0, 0, FM_OCT_RAW_U16};
    *given = fm_cli_has(args, "pixels_per_aline") || fm_cli_has(args, "alines_per_bscan") ||
             fm_cli_has(args, "raw_format") || fm_cli_has(args, "bscans");
    if (!*given)
        return FM_EXIT_OK;
    if (!fm_cli_get_positive_int(args, "pixels_per_aline", &layout->pixels_per_aline, &message) ||
        !fm_cli_get_positive_int(args, "alines_per_bscan", &layout->alines_per_bscan, &message) ||
        !fm_cli_get_positive_int(args, "bscans", &layout->n_bscans, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "info: %s", message);
    const char *format = fm_cli_get(args, "raw_format");
    if (format && !fm_oct_raw_format_parse(format, &layout->format))
        return fm_cli_fail(FM_EXIT_USAGE, _("info: --raw_format: '%s' is not u16, u12packed or u8"),
                           format);
    if (layout->pixels_per_aline < 2 || layout->alines_per_bscan < 1)
        return fm_cli_fail(FM_EXIT_USAGE,
                           _("info: a raw layout needs --pixels_per_aline (2 or more) and "
                             "--alines_per_bscan"));
    if (layout->format == FM_OCT_RAW_U12_PACKED && layout->pixels_per_aline % 2 != 0)
        return fm_cli_fail(FM_EXIT_USAGE,
                           _("info: u12packed needs an even --pixels_per_aline, not %d"),
                           layout->pixels_per_aline);
    return FM_EXIT_OK;
}

/* A reader's message that does not name the file gets its name in front. */
static int fail_input(const char *path, const GError *error)
{
    g_autofree char *base = g_path_get_basename(path);
    const char *message = error ? error->message : _("unknown error");
    if (strstr(message, base))
        return fm_cli_fail(FM_EXIT_INPUT, "%s", message);
    return fm_cli_fail(FM_EXIT_INPUT, "%s: %s", path, message);
}

static int info_body(const fm_cli_args *args)
{
    if (fm_cli_has(args, "help")) {
        print_help();
        return FM_EXIT_OK;
    }
    if (args->positional->len != 1)
        return fm_cli_fail(FM_EXIT_USAGE,
                           args->positional->len == 0
                               ? _("info: missing FILE (see 'fluxmap-cli info --help')")
                               : _("info: expected one FILE"));
    const char *path = args->positional->pdata[0];
    fm_oct_raw_layout layout;
    gboolean has_layout = FALSE;
    int code = parse_layout(args, &layout, &has_layout);
    if (code != FM_EXIT_OK)
        return code;
    info in = {.lambda_nm = {NAN, NAN}};
    g_autoptr(GError) error = NULL;
    g_autofree char *lower = g_ascii_strdown(path, -1);
    if (g_str_has_suffix(lower, ".mci") && !g_file_test(path, G_FILE_TEST_IS_DIR)) {
        in.mci = fm_mci_read(path, &error);
        if (!in.mci)
            return fail_input(path, error);
    } else {
        int part = 0;
        code = fm_cli_input_part(args, path, &part);
        if (code != FM_EXIT_OK)
            return code;
        in.ds = fm_dataset_open_part(path, part, has_layout ? &layout : NULL, NULL, NULL, NULL,
                                     &error);
        if (!in.ds)
            return fail_input(path, error);
        in.description = fm_format_describe(in.ds);
        in.pixel_sum = pixel_sum(in.ds);
        if (in.ds->n_dims == 4 && g_strcmp0(in.ds->dims[3].unit, "s") == 0 &&
            !fm_dataset_get_frame_times(in.ds, &in.times_s, &in.n_times))
            in.warning = g_strdup(_("frame_times_s does not give one time per frame"));
        oct_wavelengths(&in);
    }
    if (fm_cli_has(args, "json"))
        print_json(path, &in);
    else
        print_text(path, &in);
    info_clear(&in);
    return FM_EXIT_OK;
}

int fm_cli_info(int argc, char **argv)
{
    return fm_cli_parse_and_run(argc, argv, "info", options, G_N_ELEMENTS(options), info_body);
}
