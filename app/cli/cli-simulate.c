/* `fluxmap-cli simulate lsi`: a synthetic speckle stack plus its ground truth as JSON. */
#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/cli/cli.h"
#include "app/core/io/tiff.h"
#include "app/core/sim/lsi_sim.h"

static const fm_cli_option options[] = {
    {"width", TRUE},       {"height", TRUE},         {"frames", TRUE},
    {"exposure_ms", TRUE}, {"tau_vessel_ms", TRUE},  {"tau_background_ms", TRUE},
    {"speckle_px", TRUE},  {"mean_counts", TRUE},    {"bits", TRUE},
    {"seed", TRUE},        {"no_shot_noise", FALSE}, {"output", TRUE},
    {"help", FALSE},
};

static void print_help(void)
{
    fm_lsi_sim_params d;
    fm_lsi_sim_defaults(&d);
    printf(_("Usage: fluxmap-cli simulate lsi [OPTIONS] -o FILE.tif\n"
             "Writes a fully developed dynamic speckle stack (uint16, or uint8 for --bits=8)\n"
             "with a diagonal vessel band of faster flow, and FILE.truth.json beside it.\n"
             "  --width=PX           %d\n"
             "  --height=PX          %d\n"
             "  --frames=N           %d\n"
             "  --exposure_ms=MS     %g\n"
             "  --tau_vessel_ms=MS   %g   correlation time inside the vessel\n"
             "  --tau_background_ms=MS %g correlation time elsewhere\n"
             "  --speckle_px=PX      %g   speckle grain size (FWHM)\n"
             "  --mean_counts=N      %g   (default scales with --bits)\n"
             "  --bits=8|12|16       %d\n"
             "  --seed=N             %llu\n"
             "  --no-shot-noise      leave out Poisson photon noise\n"),
           d.width, d.height, d.n_frames, d.exposure_ms, d.tau_vessel_ms, d.tau_background_ms,
           d.speckle_size_px, d.mean_counts, d.bits, (unsigned long long)d.seed);
}

static gboolean get_int(const fm_cli_args *args, const char *name, int *out, char **message)
{
    const char *text = fm_cli_get(args, name);
    gint64 v;
    if (!text)
        return TRUE;
    if (!g_ascii_string_to_signed(text, 10, G_MININT, G_MAXINT, &v, NULL)) {
        *message = g_strdup_printf(_("--%s: '%s' is not an integer"), name, text);
        return FALSE;
    }
    *out = (int)v;
    return TRUE;
}

static gboolean get_double(const fm_cli_args *args, const char *name, double *out, char **message)
{
    const char *text = fm_cli_get(args, name);
    if (!text)
        return TRUE;
    char *end = NULL;
    double v = g_ascii_strtod(text, &end);
    if (!*text || *end || !isfinite(v)) {
        *message = g_strdup_printf(_("--%s: '%s' is not a number"), name, text);
        return FALSE;
    }
    *out = v;
    return TRUE;
}

static void member_double(JsonBuilder *b, const char *name, double v)
{
    json_builder_set_member_name(b, name);
    fm_cli_json_add_number(b, v);
}

static void member_int(JsonBuilder *b, const char *name, gint64 v)
{
    json_builder_set_member_name(b, name);
    json_builder_add_int_value(b, v);
}

static gboolean write_truth(const char *path, const fm_lsi_sim_params *p, GError **error)
{
    double x0, y0, x1, y1, hw;
    fm_lsi_sim_vessel_geometry(p, &x0, &y0, &x1, &y1, &hw);
    gint64 vessel_pixels = 0;
    for (int y = 0; y < p->height; y++)
        for (int x = 0; x < p->width; x++)
            vessel_pixels += fm_lsi_sim_is_vessel(p, x, y);
    double k_v = fm_lsi_sim_expected_contrast(p->exposure_ms, p->tau_vessel_ms);
    double k_b = fm_lsi_sim_expected_contrast(p->exposure_ms, p->tau_background_ms);
    double t_s = p->exposure_ms * 1e-3;

    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "simulator");
    json_builder_add_string_value(b, "fluxmap lsi_sim");
    member_int(b, "width", p->width);
    member_int(b, "height", p->height);
    member_int(b, "frames", p->n_frames);
    member_double(b, "exposure_ms", p->exposure_ms);
    member_double(b, "tau_vessel_ms", p->tau_vessel_ms);
    member_double(b, "tau_background_ms", p->tau_background_ms);
    member_double(b, "speckle_px", p->speckle_size_px);
    member_double(b, "mean_counts", p->mean_counts);
    member_int(b, "bits", p->bits);
    member_int(b, "seed", (gint64)p->seed);
    json_builder_set_member_name(b, "shot_noise");
    json_builder_add_boolean_value(b, p->shot_noise);
    json_builder_set_member_name(b, "vessel");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "shape");
    json_builder_add_string_value(b, "band");
    member_double(b, "x0", x0);
    member_double(b, "y0", y0);
    member_double(b, "x1", x1);
    member_double(b, "y1", y1);
    member_double(b, "half_width_px", hw);
    member_int(b, "pixels", vessel_pixels);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "formula");
    json_builder_add_string_value(b, "K^2 = (exp(-2x) - 1 + 2x) / (2 x^2), x = T / tau; "
                                     "SFI = 1 / (2 T K^2)");
    json_builder_set_member_name(b, "expected_contrast");
    json_builder_begin_object(b);
    member_double(b, "vessel", k_v);
    member_double(b, "background", k_b);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "expected_sfi");
    json_builder_begin_object(b);
    member_double(b, "vessel", 1.0 / (2.0 * t_s * k_v * k_v));
    member_double(b, "background", 1.0 / (2.0 * t_s * k_b * k_b));
    json_builder_end_object(b);
    json_builder_end_object(b);

    g_autoptr(JsonGenerator) gen = json_generator_new();
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    json_generator_set_root(gen, root);
    json_generator_set_pretty(gen, TRUE);
    return json_generator_to_file(gen, path, error);
}

static int simulate_lsi(const fm_cli_args *args)
{
    fm_lsi_sim_params p;
    fm_lsi_sim_defaults(&p);
    g_autofree char *message = NULL;
    const char *seed_text = fm_cli_get(args, "seed");
    guint64 seed = p.seed;
    if (seed_text && !g_ascii_string_to_unsigned(seed_text, 10, 0, G_MAXUINT64, &seed, NULL))
        return fm_cli_fail(FM_EXIT_USAGE, _("--seed: '%s' is not an unsigned integer"), seed_text);
    p.seed = seed;
    if (!get_int(args, "width", &p.width, &message) ||
        !get_int(args, "height", &p.height, &message) ||
        !get_int(args, "frames", &p.n_frames, &message) ||
        !get_int(args, "bits", &p.bits, &message) ||
        !get_double(args, "exposure_ms", &p.exposure_ms, &message) ||
        !get_double(args, "tau_vessel_ms", &p.tau_vessel_ms, &message) ||
        !get_double(args, "tau_background_ms", &p.tau_background_ms, &message) ||
        !get_double(args, "speckle_px", &p.speckle_size_px, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "%s", message);
    /* the default mean sits at the same fraction of full scale whatever the bit depth */
    p.mean_counts *= ldexp(1.0, p.bits - 12);
    if (!get_double(args, "mean_counts", &p.mean_counts, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "%s", message);
    p.shot_noise = !fm_cli_has(args, "no_shot_noise");

    const char *output = fm_cli_get(args, "output");
    if (!output || !*output)
        return fm_cli_fail(FM_EXIT_USAGE, _("simulate lsi: missing -o FILE.tif"));
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_lsi_simulate(&p, &error);
    if (!ds)
        return fm_cli_fail_error(error);
    g_autofree char *description = g_strdup_printf(
        "fluxmap simulate lsi; exposure_ms=%g; tau_vessel_ms=%g; tau_background_ms=%g; "
        "speckle_px=%g; seed=%" G_GUINT64_FORMAT,
        p.exposure_ms, p.tau_vessel_ms, p.tau_background_ms, p.speckle_size_px, p.seed);
    if (!fm_tiff_write_dataset(output, ds, description, &error))
        return fm_cli_fail(FM_EXIT_INPUT, "%s", error->message);

    g_autofree char *stem = NULL;
    if (g_str_has_suffix(output, ".tif"))
        stem = g_strndup(output, strlen(output) - 4);
    else if (g_str_has_suffix(output, ".tiff"))
        stem = g_strndup(output, strlen(output) - 5);
    else
        stem = g_strdup(output);
    g_autofree char *truth = g_strconcat(stem, ".truth.json", NULL);
    if (!write_truth(truth, &p, &error))
        return fm_cli_fail(FM_EXIT_INPUT, "%s: %s", truth, error->message);
    return FM_EXIT_OK;
}

int fm_cli_simulate(int argc, char **argv)
{
    if (argc < 1)
        return fm_cli_fail(FM_EXIT_USAGE, _("simulate: missing family (only 'lsi' for now)"));
    if (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        print_help();
        return FM_EXIT_OK;
    }
    if (strcmp(argv[0], "lsi") != 0)
        return fm_cli_fail(FM_EXIT_USAGE, _("simulate: unknown family '%s' (only 'lsi')"), argv[0]);
    fm_cli_args args = {0};
    g_autofree char *message = NULL;
    int code;
    if (!fm_cli_parse(argc - 1, argv + 1, options, G_N_ELEMENTS(options), NULL, &args, &message))
        code = fm_cli_fail(FM_EXIT_USAGE, "simulate lsi: %s", message);
    else if (fm_cli_has(&args, "help"))
        print_help(), code = FM_EXIT_OK;
    else if (args.positional->len > 0)
        code = fm_cli_fail(FM_EXIT_USAGE, _("simulate lsi: unexpected argument '%s'"),
                           (const char *)args.positional->pdata[0]);
    else
        code = simulate_lsi(&args);
    fm_cli_args_clear(&args);
    return code;
}
