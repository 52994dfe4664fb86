/* `fluxmap-cli simulate lsi|flim` (dce and oct dispatch to their own files): synthetic datasets
 * plus their ground truth as JSON. */
#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/cli/cli.h"
#include "app/core/io/flim_write.h"
#include "app/core/io/tiff.h"
#include "app/core/flim/flim_sim.h"
#include "app/core/lsi/lsi_sim.h"

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
    fm_cli_json_member_string(b, "simulator", "fluxmap lsi_sim");
    fm_cli_json_member_int(b, "width", p->width);
    fm_cli_json_member_int(b, "height", p->height);
    fm_cli_json_member_int(b, "frames", p->n_frames);
    fm_cli_json_member_number(b, "exposure_ms", p->exposure_ms);
    fm_cli_json_member_number(b, "tau_vessel_ms", p->tau_vessel_ms);
    fm_cli_json_member_number(b, "tau_background_ms", p->tau_background_ms);
    fm_cli_json_member_number(b, "speckle_px", p->speckle_size_px);
    fm_cli_json_member_number(b, "mean_counts", p->mean_counts);
    fm_cli_json_member_int(b, "bits", p->bits);
    fm_cli_json_member_int(b, "seed", (gint64)p->seed);
    json_builder_set_member_name(b, "shot_noise");
    json_builder_add_boolean_value(b, p->shot_noise);
    json_builder_set_member_name(b, "vessel");
    json_builder_begin_object(b);
    fm_cli_json_member_string(b, "shape", "band");
    fm_cli_json_member_number(b, "x0", x0);
    fm_cli_json_member_number(b, "y0", y0);
    fm_cli_json_member_number(b, "x1", x1);
    fm_cli_json_member_number(b, "y1", y1);
    fm_cli_json_member_number(b, "half_width_px", hw);
    fm_cli_json_member_int(b, "pixels", vessel_pixels);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "formula");
    json_builder_add_string_value(b, "K^2 = (exp(-2x) - 1 + 2x) / (2 x^2), x = T / tau; "
                                     "SFI = 1 / (2 T K^2)");
    json_builder_set_member_name(b, "expected_contrast");
    json_builder_begin_object(b);
    fm_cli_json_member_number(b, "vessel", k_v);
    fm_cli_json_member_number(b, "background", k_b);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "expected_sfi");
    json_builder_begin_object(b);
    fm_cli_json_member_number(b, "vessel", 1.0 / (2.0 * t_s * k_v * k_v));
    fm_cli_json_member_number(b, "background", 1.0 / (2.0 * t_s * k_b * k_b));
    json_builder_end_object(b);
    json_builder_end_object(b);

    return fm_cli_json_write_file(b, path, error);
}

static int simulate_lsi(const fm_cli_args *args)
{
    fm_lsi_sim_params p;
    fm_lsi_sim_defaults(&p);
    g_autofree char *message = NULL;
    if (!fm_cli_get_seed(args, &p.seed, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "%s", message);
    if (!fm_cli_get_int(args, "width", &p.width, &message) ||
        !fm_cli_get_int(args, "height", &p.height, &message) ||
        !fm_cli_get_int(args, "frames", &p.n_frames, &message) ||
        !fm_cli_get_int(args, "bits", &p.bits, &message) ||
        !fm_cli_get_double(args, "exposure_ms", &p.exposure_ms, &message) ||
        !fm_cli_get_double(args, "tau_vessel_ms", &p.tau_vessel_ms, &message) ||
        !fm_cli_get_double(args, "tau_background_ms", &p.tau_background_ms, &message) ||
        !fm_cli_get_double(args, "speckle_px", &p.speckle_size_px, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "%s", message);
    /* the default mean sits at the same fraction of full scale whatever the bit depth */
    p.mean_counts *= ldexp(1.0, p.bits - 12);
    if (!fm_cli_get_double(args, "mean_counts", &p.mean_counts, &message))
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

    static const char *const exts[] = {".tif", ".tiff", NULL};
    g_autofree char *stem = fm_cli_output_stem(output, exts, NULL);
    g_autofree char *truth = g_strconcat(stem, ".truth.json", NULL);
    if (!write_truth(truth, &p, &error))
        return fm_cli_fail(FM_EXIT_INPUT, "%s: %s", truth, error->message);
    return FM_EXIT_OK;
}

/* `simulate flim`: TCSPC decays with known lifetimes (app/core/flim/flim_sim.c). */
static const fm_cli_option flim_options[] = {
    {"pattern", TRUE},      {"width", TRUE},    {"height", TRUE},       {"bins", TRUE},
    {"bin_width_ps", TRUE}, {"photons", TRUE},  {"irf_sigma_ns", TRUE}, {"irf_offset_ns", TRUE},
    {"background", TRUE},   {"tau_d_ns", TRUE}, {"tau_f_ns", TRUE},     {"fd_left", TRUE},
    {"fd_right", TRUE},     {"seed", TRUE},     {"format", TRUE},       {"output", TRUE},
    {"help", FALSE},
};

static void print_flim_help(void)
{
    fm_flim_sim_params d;
    fm_flim_sim_defaults(&d);
    printf(_("Usage: fluxmap-cli simulate flim [OPTIONS] -o FILE.tif|.sdt|.ptu\n"
             "Writes TCSPC decays with Poisson photon noise and known lifetimes, and\n"
             "FILE.truth.json (truth per column) beside it; with an IRF also FILE.irf.csv.\n"
             "  --pattern=bars|biexp   bars: tau = 2, 2.5, 3, 4 ns in four vertical bars;\n"
             "                         biexp: tauD, tauF with fD falling left to right\n"
             "  --width=PX             %d\n"
             "  --height=PX            %d\n"
             "  --bins=N               %d\n"
             "  --bin_width_ps=PS      %g\n"
             "  --photons=N            %g   mean photons per pixel\n"
             "  --irf_sigma_ns=NS      %g   Gaussian IRF sd (0 = none)\n"
             "  --irf_offset_ns=NS     %g   IRF centre\n"
             "  --background=N         %g   mean background counts per bin\n"
             "  --tau_d_ns=NS          %g   biexp slow (donor) lifetime\n"
             "  --tau_f_ns=NS          %g   biexp fast (FRET) lifetime\n"
             "  --fd_left=F --fd_right=F  %g, %g  biexp fD at the left and right edge\n"
             "  --seed=N               %llu\n"
             "  --format=tif|sdt|ptu   default: from the file name, else tif\n"),
           d.width, d.height, d.n_bins, d.bin_width_ps, d.photons, d.irf_sigma_ns, d.irf_offset_ns,
           d.background, d.tau_d_ns, d.tau_f_ns, d.fraction_left, d.fraction_right,
           (unsigned long long)d.seed);
}

static void member_array(JsonBuilder *b, const char *name, const double *v, int n)
{
    json_builder_set_member_name(b, name);
    json_builder_begin_array(b);
    for (int i = 0; i < n; i++)
        fm_cli_json_add_number(b, v[i]);
    json_builder_end_array(b);
}

static gboolean write_flim_truth(const char *path, const fm_flim_sim_params *p,
                                 const char *irf_path, GError **error)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    fm_cli_json_member_string(b, "simulator", "fluxmap flim_sim");
    fm_cli_json_member_string(b, "pattern", fm_flim_sim_pattern_name(p->pattern));
    fm_cli_json_member_int(b, "width", p->width);
    fm_cli_json_member_int(b, "height", p->height);
    fm_cli_json_member_int(b, "bins", p->n_bins);
    fm_cli_json_member_number(b, "bin_width_ps", p->bin_width_ps);
    fm_cli_json_member_number(b, "photons", p->photons);
    fm_cli_json_member_number(b, "irf_sigma_ns", p->irf_sigma_ns);
    fm_cli_json_member_number(b, "irf_offset_ns", p->irf_sigma_ns > 0.0 ? p->irf_offset_ns : 0.0);
    fm_cli_json_member_string(b, "irf_file", irf_path);
    fm_cli_json_member_number(b, "background", p->background);
    fm_cli_json_member_int(b, "seed", (gint64)p->seed);
    fm_cli_json_member_string(b, "model",
                              "I(t) = A (fD exp(-t/tauD) + (1 - fD) exp(-t/tauF)); "
                              "bars: fD = 1, tauD = tau");
    if (p->pattern == FM_FLIM_SIM_BARS) {
        json_builder_set_member_name(b, "bars");
        json_builder_begin_array(b);
        for (int i = 0; i < FM_FLIM_SIM_N_BARS; i++) {
            int x0 = -1, x1 = -1;
            for (int x = 0; x < p->width; x++)
                if (fm_flim_sim_bar_of(p, x) == i) {
                    x0 = x0 < 0 ? x : x0;
                    x1 = x + 1;
                }
            json_builder_begin_object(b);
            fm_cli_json_member_number(b, "tau_ns", fm_flim_sim_bar_tau_ns[i]);
            fm_cli_json_member_int(b, "x0", x0);
            fm_cli_json_member_int(b, "x1", x1);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
    } else {
        fm_cli_json_member_number(b, "tau_d_ns", p->tau_d_ns);
        fm_cli_json_member_number(b, "tau_f_ns", p->tau_f_ns);
        fm_cli_json_member_number(b, "fd_left", p->fraction_left);
        fm_cli_json_member_number(b, "fd_right", p->fraction_right);
    }
    g_autofree double *tau = g_new(double, p->width), *fast = g_new(double, p->width);
    g_autofree double *slow = g_new(double, p->width), *fd = g_new(double, p->width);
    for (int x = 0; x < p->width; x++) {
        fm_flim_sim_truth t = fm_flim_sim_truth_at(p, x);
        tau[x] = t.tau_ns;
        fast[x] = t.tau_fast_ns;
        slow[x] = t.tau_slow_ns;
        fd[x] = t.fraction_d;
    }
    json_builder_set_member_name(b, "columns");
    json_builder_begin_object(b);
    member_array(b, "tau_ns", tau, p->width);
    member_array(b, "tau_fast_ns", fast, p->width);
    member_array(b, "tau_slow_ns", slow, p->width);
    member_array(b, "fraction_d", fd, p->width);
    json_builder_end_object(b);
    json_builder_end_object(b);

    return fm_cli_json_write_file(b, path, error);
}

static gboolean write_irf_csv(const char *path, const fm_flim_sim_params *p, GError **error)
{
    g_autofree float *irf = fm_flim_sim_irf(p);
    g_autoptr(GString) text = g_string_new("t_ns,irf\n");
    char t[G_ASCII_DTOSTR_BUF_SIZE], v[G_ASCII_DTOSTR_BUF_SIZE];
    for (int i = 0; i < p->n_bins; i++)
        g_string_append_printf(text, "%s,%s\n",
                               g_ascii_formatd(t, sizeof t, "%.6g", i * p->bin_width_ps * 1e-3),
                               g_ascii_formatd(v, sizeof v, "%.9g", irf[i]));
    return g_file_set_contents(path, text->str, (gssize)text->len, error);
}

/* FILE.tif -> FILE (the stem the truth and IRF files are named after) and the format. */
static char *output_stem(const char *output, const char **format_from_name)
{
    static const char *const exts[] = {".tif", ".tiff", ".sdt", ".ptu", NULL};
    static const char *const formats[] = {"tif", "tif", "sdt", "ptu"};
    int which = -1;
    char *stem = fm_cli_output_stem(output, exts, &which);
    *format_from_name = which >= 0 ? formats[which] : NULL;
    return stem;
}

static int simulate_flim(const fm_cli_args *args)
{
    fm_flim_sim_params p;
    fm_flim_sim_defaults(&p);
    g_autofree char *message = NULL;
    const char *pattern = fm_cli_get(args, "pattern");
    if (pattern && !fm_flim_sim_pattern_parse(pattern, &p.pattern))
        return fm_cli_fail(FM_EXIT_USAGE, _("--pattern: '%s' is not bars or biexp"), pattern);
    if (!fm_cli_get_seed(args, &p.seed, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "%s", message);
    if (!fm_cli_get_int(args, "width", &p.width, &message) ||
        !fm_cli_get_int(args, "height", &p.height, &message) ||
        !fm_cli_get_int(args, "bins", &p.n_bins, &message) ||
        !fm_cli_get_double(args, "bin_width_ps", &p.bin_width_ps, &message) ||
        !fm_cli_get_double(args, "photons", &p.photons, &message) ||
        !fm_cli_get_double(args, "irf_sigma_ns", &p.irf_sigma_ns, &message) ||
        !fm_cli_get_double(args, "irf_offset_ns", &p.irf_offset_ns, &message) ||
        !fm_cli_get_double(args, "background", &p.background, &message) ||
        !fm_cli_get_double(args, "tau_d_ns", &p.tau_d_ns, &message) ||
        !fm_cli_get_double(args, "tau_f_ns", &p.tau_f_ns, &message) ||
        !fm_cli_get_double(args, "fd_left", &p.fraction_left, &message) ||
        !fm_cli_get_double(args, "fd_right", &p.fraction_right, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "%s", message);

    const char *output = fm_cli_get(args, "output");
    if (!output || !*output)
        return fm_cli_fail(FM_EXIT_USAGE, _("simulate flim: missing -o FILE.tif|.sdt|.ptu"));
    const char *named = NULL;
    g_autofree char *stem = output_stem(output, &named);
    const char *format = fm_cli_get(args, "format");
    if (!format)
        format = named ? named : "tif";
    if (strcmp(format, "tif") != 0 && strcmp(format, "sdt") != 0 && strcmp(format, "ptu") != 0)
        return fm_cli_fail(FM_EXIT_USAGE, _("--format: '%s' is not tif, sdt or ptu"), format);

    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_flim_simulate(&p, &error);
    if (!ds)
        return fm_cli_fail_error(error);
    gboolean ok;
    if (strcmp(format, "sdt") == 0) {
        ok = fm_sdt_write(output, ds, p.bin_width_ps, &error);
    } else if (strcmp(format, "ptu") == 0) {
        ok = fm_ptu_write(output, ds, p.bin_width_ps, NULL, &error);
    } else {
        /* a TIFF has no field for the bin width: the FLIM methods read it from here */
        g_autofree char *description = g_strdup_printf(
            "fluxmap simulate flim; pattern=%s; bin_width_ps=%g; bins=%d; photons=%g; "
            "irf_sigma_ns=%g; background=%g; seed=%" G_GUINT64_FORMAT,
            fm_flim_sim_pattern_name(p.pattern), p.bin_width_ps, p.n_bins, p.photons,
            p.irf_sigma_ns, p.background, p.seed);
        ok = fm_tiff_write_dataset(output, ds, description, &error);
    }
    if (!ok)
        return fm_cli_fail(FM_EXIT_INPUT, "%s", error->message);

    g_autofree char *irf_path = NULL;
    if (p.irf_sigma_ns > 0.0) {
        irf_path = g_strconcat(stem, ".irf.csv", NULL);
        if (!write_irf_csv(irf_path, &p, &error))
            return fm_cli_fail(FM_EXIT_INPUT, "%s: %s", irf_path, error->message);
    }
    g_autofree char *truth = g_strconcat(stem, ".truth.json", NULL);
    if (!write_flim_truth(truth, &p, irf_path, &error))
        return fm_cli_fail(FM_EXIT_INPUT, "%s: %s", truth, error->message);
    return FM_EXIT_OK;
}

int fm_cli_simulate_oct(int argc, char **argv); /* app/cli/cli-simulate-oct.c */
int fm_cli_simulate_dce(int argc, char **argv); /* app/cli/cli-simulate-dce.c */

int fm_cli_simulate(int argc, char **argv)
{
    if (argc >= 1 && strcmp(argv[0], "oct") == 0)
        return fm_cli_simulate_oct(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "dce") == 0)
        return fm_cli_simulate_dce(argc - 1, argv + 1);
    if (argc < 1)
        return fm_cli_fail(FM_EXIT_USAGE, _("simulate: missing family (lsi, flim, dce or oct)"));
    if (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        print_help();
        printf("\n");
        print_flim_help();
        return FM_EXIT_OK;
    }
    gboolean flim = strcmp(argv[0], "flim") == 0;
    if (strcmp(argv[0], "lsi") != 0 && !flim)
        return fm_cli_fail(FM_EXIT_USAGE,
                           _("simulate: unknown family '%s' (lsi, flim, dce or oct)"), argv[0]);
    if (flim)
        return fm_cli_parse_and_run_options(argc - 1, argv + 1, "simulate flim", flim_options,
                                            G_N_ELEMENTS(flim_options), print_flim_help,
                                            simulate_flim);
    return fm_cli_parse_and_run_options(argc - 1, argv + 1, "simulate lsi", options,
                                        G_N_ELEMENTS(options), print_help, simulate_lsi);
}
