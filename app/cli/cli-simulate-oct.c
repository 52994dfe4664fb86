/* `fluxmap-cli simulate oct`: SD-OCT raw spectra, calibration CSV, sidecar and ground truth. */
#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/cli/cli.h"
#include "app/core/io/oct_raw.h"
#include "app/core/io/tiff.h"
#include "app/core/oct/oct_calib.h"
#include "app/core/oct/oct_sim.h"

int fm_cli_simulate_oct(int argc, char **argv); /* called by cli-simulate.c */

static const fm_cli_option options[] = {
    {"sample", TRUE},           {"pixels", TRUE},         {"alines", TRUE},
    {"bscans", TRUE},           {"depth_um", TRUE},       {"reflectivity", TRUE},
    {"peak_counts", TRUE},      {"format", TRUE},         {"seed", TRUE},
    {"reference_alines", TRUE}, {"no_shot_noise", FALSE}, {"no_fixed_pattern", FALSE},
    {"output", TRUE},           {"help", FALSE},
};

static void print_help(void)
{
    fm_oct_sim_params d;
    fm_oct_sim_defaults(&d);
    printf(_("Usage: fluxmap-cli simulate oct [OPTIONS] -o FILE.raw|FILE.tif\n"
             "Writes SD-OCT spectra (Gaussian source %g nm, %g nm FWHM; spectrometer linear in\n"
             "lambda from %g to %g nm), FILE.raw.json (layout sidecar), FILE.calib.csv\n"
             "(wavelength per pixel), FILE.truth.json and, for a mirror, a reference-arm-only\n"
             "FILE.reference.raw for background subtraction.\n"
             "  --sample=mirror|layers  mirror: one reflector in every A-line; layers: a curved\n"
             "                          four-layer sample with an inclusion, scanned over\n"
             "                          %g x %g um (default layers)\n"
             "  --pixels=N              %d pixels per A-line\n"
             "  --alines=N              %d A-lines per B-scan\n"
             "  --bscans=N              %d (layers), 1 (mirror)\n"
             "  --depth_um=UM           %g   mirror depth (optical path)\n"
             "  --reflectivity=R        %g   mirror power reflectivity (reference arm = 1)\n"
             "  --peak_counts=N         %g   reference signal at the source peak\n"
             "  --format=u16|u12packed|u8|tif  default u12packed for .raw, tif for .tif\n"
             "  --reference_alines=N    64   A-lines in the reference file\n"
             "  --seed=N                %llu\n"
             "  --no-shot-noise --no-fixed-pattern\n"),
           d.center_nm, d.fwhm_nm, d.lambda_first_nm, d.lambda_last_nm, d.scan_width_um,
           d.scan_length_um, d.pixels_per_aline, d.alines_per_bscan, d.n_bscans, d.mirror_depth_um,
           d.mirror_reflectivity, d.peak_counts, (unsigned long long)d.seed);
}

static gboolean write_truth(const char *path, const fm_oct_sim_params *p, const char *format,
                            double um_per_bin, GError **error)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    fm_cli_json_member_string(b, "simulator", "fluxmap oct_sim");
    fm_cli_json_member_string(b, "sample", fm_oct_sim_sample_name(p->sample));
    fm_cli_json_member_string(b, "format", format);
    fm_cli_json_member_int(b, "pixels_per_aline", p->pixels_per_aline);
    fm_cli_json_member_int(b, "alines_per_bscan", p->alines_per_bscan);
    fm_cli_json_member_int(b, "bscans", p->n_bscans);
    fm_cli_json_member_number(b, "center_nm", p->center_nm);
    fm_cli_json_member_number(b, "fwhm_nm", p->fwhm_nm);
    fm_cli_json_member_number(b, "lambda_first_nm", p->lambda_first_nm);
    fm_cli_json_member_number(b, "lambda_last_nm", p->lambda_last_nm);
    fm_cli_json_member_number(b, "peak_counts", p->peak_counts);
    fm_cli_json_member_int(b, "bits", p->bits);
    fm_cli_json_member_int(b, "seed", (gint64)p->seed);
    json_builder_set_member_name(b, "shot_noise");
    json_builder_add_boolean_value(b, p->shot_noise);
    json_builder_set_member_name(b, "fixed_pattern");
    json_builder_add_boolean_value(b, p->fixed_pattern);
    fm_cli_json_member_number(b, "um_per_depth_bin", um_per_bin);
    fm_cli_json_member_number(b, "aline_spacing_um", fm_oct_sim_aline_spacing_um(p));
    fm_cli_json_member_number(b, "bscan_spacing_um", fm_oct_sim_bscan_spacing_um(p));
    fm_cli_json_member_number(b, "coherence_length_um", fm_oct_sim_coherence_length_um(p));
    fm_cli_json_member_string(b, "model",
                              "I(k) = P S(k) [1 + sum R + 2 sum sqrt(R) cos(2 k z + phi)] + "
                              "fixed pattern + shot noise; depth bin = z / um_per_depth_bin");
    if (p->sample == FM_OCT_SIM_MIRROR) {
        fm_cli_json_member_number(b, "mirror_depth_um", p->mirror_depth_um);
        fm_cli_json_member_number(b, "mirror_reflectivity", p->mirror_reflectivity);
        fm_cli_json_member_number(b, "mirror_bin", p->mirror_depth_um / um_per_bin);
    } else {
        double depth[FM_OCT_SIM_N_LAYERS], refl[FM_OCT_SIM_N_LAYERS];
        fm_oct_sim_layers_at(p, p->n_bscans / 2, p->alines_per_bscan / 2, depth, refl);
        json_builder_set_member_name(b, "layers_centre_aline");
        json_builder_begin_array(b);
        for (int i = 0; i < FM_OCT_SIM_N_LAYERS; i++) {
            json_builder_begin_object(b);
            fm_cli_json_member_number(b, "depth_um", depth[i]);
            fm_cli_json_member_number(b, "reflectivity", refl[i]);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        fm_cli_json_member_string(b, "surface",
                                  "z = 300 + 1200 (u^2 + v^2) um, u = (a + 0.5) / A - 0.5 and "
                                  "v = (b + 0.5) / B - 0.5 across A-lines and B-scans; layers "
                                  "0, 60, 180, 320 um below");
        json_builder_set_member_name(b, "inclusion");
        json_builder_begin_object(b);
        fm_cli_json_member_number(b, "centre_u", FM_OCT_SIM_INCLUSION_U);
        fm_cli_json_member_number(b, "centre_v", FM_OCT_SIM_INCLUSION_V);
        fm_cli_json_member_number(b, "radius", FM_OCT_SIM_INCLUSION_RADIUS);
        fm_cli_json_member_number(b, "depth_below_surface_um", FM_OCT_SIM_INCLUSION_DEPTH_UM);
        fm_cli_json_member_number(b, "half_height_um", FM_OCT_SIM_INCLUSION_HALF_UM);
        fm_cli_json_member_number(b, "reflectivity_top", FM_OCT_SIM_INCLUSION_R_TOP);
        fm_cli_json_member_number(b, "reflectivity_bottom", FM_OCT_SIM_INCLUSION_R_BOTTOM);
        fm_cli_json_member_number(b, "shadow_factor", FM_OCT_SIM_SHADOW);
        fm_cli_json_member_string(b, "shape",
                                  "ellipsoid: where rho = |(u, v) - centre| / radius < 1, "
                                  "top and bottom at the surface + depth -+ half_height "
                                  "sqrt(1 - rho^2); layers below its top reflect "
                                  "shadow_factor as much");
        json_builder_end_object(b);
    }
    json_builder_end_object(b);
    return fm_cli_json_write_file(b, path, error);
}

static int write_outputs(const char *output, const char *format, fm_oct_sim_params *p,
                         const fm_cli_args *args)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_oct_simulate(p, &error);
    if (!ds)
        return fm_cli_fail_error(error);
    static const char *const exts[] = {".raw", ".bin", ".oct", ".tif", ".tiff", NULL};
    g_autofree char *stem = fm_cli_output_stem(output, exts, NULL);
    g_autofree char *calib = g_strconcat(stem, ".calib.csv", NULL);
    g_autofree char *calib_name = g_path_get_basename(calib);
    g_autofree double *lambda = g_new(double, p->pixels_per_aline);
    fm_oct_sim_wavelengths(p, lambda);
    if (!fm_oct_calib_write_csv(calib, lambda, p->pixels_per_aline, &error))
        return fm_cli_fail_error(error);
    fm_oct_raw_format raw_format = FM_OCT_RAW_U16;
    gboolean tif = strcmp(format, "tif") == 0;
    if (tif) {
        g_autofree char *description = g_strdup_printf(
            "fluxmap simulate oct; sample=%s; calibration=%s; seed=%" G_GUINT64_FORMAT,
            fm_oct_sim_sample_name(p->sample), calib_name, p->seed);
        fm_oct_raw_layout layout = {p->pixels_per_aline, p->alines_per_bscan, p->n_bscans,
                                    FM_OCT_RAW_U16};
        /* the sidecar of a TIFF only names the calibration for oct.bscan */
        if (!fm_tiff_write_dataset(output, ds, description, &error) ||
            !fm_oct_raw_write_sidecar(output, &layout, calib_name, &error))
            return fm_cli_fail(FM_EXIT_INPUT, "%s", error->message);
    } else {
        fm_oct_raw_format_parse(format, &raw_format);
        if (!fm_oct_raw_write(output, ds, raw_format, calib_name, &error))
            return fm_cli_fail_error(error);
    }
    if (p->sample == FM_OCT_SIM_MIRROR) {
        int n_ref = 64;
        char *message = NULL;
        if (!fm_cli_get_positive_int(args, "reference_alines", &n_ref, &message)) {
            int code = fm_cli_fail(FM_EXIT_USAGE, "%s", message);
            g_free(message);
            return code;
        }
        g_autoptr(fm_dataset) ref = fm_oct_simulate_reference(p, n_ref, &error);
        g_autofree char *ref_path =
            g_strconcat(stem, tif ? ".reference.tif" : ".reference.raw", NULL);
        gboolean ok =
            ref && (tif ? fm_tiff_write_dataset(ref_path, ref, "reference", &error)
                        : fm_oct_raw_write(ref_path, ref, raw_format, calib_name, &error));
        if (!ok)
            return fm_cli_fail_error(error);
    }
    g_autofree char *truth = g_strconcat(stem, ".truth.json", NULL);
    double um_per_bin = fm_oct_calib_um_per_bin(lambda, p->pixels_per_aline);
    if (!write_truth(truth, p, format, um_per_bin, &error))
        return fm_cli_fail(FM_EXIT_INPUT, "%s: %s", truth, error->message);
    return FM_EXIT_OK;
}

static int simulate(const fm_cli_args *args)
{
    fm_oct_sim_params p;
    fm_oct_sim_defaults(&p);
    g_autofree char *message = NULL;
    const char *sample = fm_cli_get(args, "sample");
    if (sample && !fm_oct_sim_sample_parse(sample, &p.sample))
        return fm_cli_fail(FM_EXIT_USAGE, _("--sample: '%s' is not mirror or layers"), sample);
    if (p.sample == FM_OCT_SIM_MIRROR)
        p.n_bscans = 1;
    if (!fm_cli_get_seed(args, &p.seed, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "%s", message);
    const char *output = fm_cli_get(args, "output");
    if (!output || !*output)
        return fm_cli_fail(FM_EXIT_USAGE, _("simulate oct: missing -o FILE.raw|FILE.tif"));
    const char *format = fm_cli_get(args, "format");
    if (!format)
        format = g_str_has_suffix(output, ".tif") || g_str_has_suffix(output, ".tiff")
                     ? "tif"
                     : "u12packed";
    fm_oct_raw_format raw_format;
    if (strcmp(format, "tif") != 0 && !fm_oct_raw_format_parse(format, &raw_format))
        return fm_cli_fail(FM_EXIT_USAGE, _("--format: '%s' is not u16, u12packed, u8 or tif"),
                           format);
    if (strcmp(format, "u8") == 0) {
        /* an 8-bit camera: same fraction of full scale as the 12-bit default */
        p.bits = 8;
        p.peak_counts /= 16.0;
    } else if (strcmp(format, "u16") == 0) {
        p.bits = 16;
    }
    if (!fm_cli_get_positive_int(args, "pixels", &p.pixels_per_aline, &message) ||
        !fm_cli_get_positive_int(args, "alines", &p.alines_per_bscan, &message) ||
        !fm_cli_get_positive_int(args, "bscans", &p.n_bscans, &message) ||
        !fm_cli_get_double(args, "depth_um", &p.mirror_depth_um, &message) ||
        !fm_cli_get_double(args, "reflectivity", &p.mirror_reflectivity, &message) ||
        !fm_cli_get_double(args, "peak_counts", &p.peak_counts, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "%s", message);
    p.shot_noise = !fm_cli_has(args, "no_shot_noise");
    p.fixed_pattern = !fm_cli_has(args, "no_fixed_pattern");
    return write_outputs(output, format, &p, args);
}

int fm_cli_simulate_oct(int argc, char **argv)
{
    return fm_cli_parse_and_run_options(argc, argv, "simulate oct", options, G_N_ELEMENTS(options),
                                        print_help, simulate);
}
