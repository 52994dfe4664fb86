/* `fluxmap-cli simulate dce`: the DCE liver phantom as NIfTI or TIFF, with truth, ROIs and inputs.
 */
#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/cli/cli.h"
#include "app/core/dce/dce_prep.h"
#include "app/core/io/nifti.h"
#include "app/core/io/tiff.h"
#include "app/core/roi.h"
#include "app/core/dce/dce_sim.h"

int fm_cli_simulate_dce(int argc, char **argv); /* called by cli-simulate.c */

static const fm_cli_option options[] = {
    {"width", TRUE},
    {"height", TRUE},
    {"slices", TRUE},
    {"frames", TRUE},
    {"frame_interval_s", TRUE},
    {"cnr", TRUE},
    {"seed", TRUE},
    {"ka", TRUE},
    {"kp", TRUE},
    {"kl", TRUE},
    {"tau_a", TRUE},
    {"tau_p", TRUE},
    {"no_lesions", FALSE},
    {"format", TRUE},
    {"output", TRUE},
    {"help", FALSE},
};

static void print_help(void)
{
    fm_dce_sim_params d;
    fm_dce_sim_defaults(&d);
    printf(_("Usage: fluxmap-cli simulate dce [OPTIONS] -o FILE.nii|FILE.nii.gz|FILE.tif\n"
             "Writes a liver phantom x, y, z, t (float32 signal S = S0 (1 + C), S0 = %g) with\n"
             "aorta and portal-vein regions carrying Parker's population AIF and its delayed,\n"
             "dispersed copy, liver tissue from the dual-input model and two lesions; beside it\n"
             "FILE.truth.json, FILE.rois.json (aorta, portal_vein, liver for --roi) and\n"
             "FILE.inputs.csv (the true plasma inputs, t_s,ca,cp).\n"
             "  --width=PX --height=PX   %d x %d\n"
             "  --slices=N               %d\n"
             "  --frames=N               %d   (the paper: 48; 32 ... 448)\n"
             "  --frame_interval_s=S     %g\n"
             "  --cnr=R                  peak liver enhancement over noise sd; 0 = no noise\n"
             "  --ka --kp --kl=ML/100G/MIN  liver truth %g, %g, %g\n"
             "  --tau_a --tau_p=S        liver delays %g, %g\n"
             "  --no-lesions             liver only\n"
             "  --seed=N                 %llu\n"
             "  --format=nii|tif         default: from the file name (TIFF pages: z fastest)\n"),
           d.baseline_signal, d.nx, d.ny, d.nz, d.n_times, d.frame_interval_s, d.liver[0],
           d.liver[1], d.liver[2], d.liver[3], d.liver[4], (unsigned long long)d.seed);
}

static void member_truth(JsonBuilder *b, const fm_dce_sim_params *p, const char *name,
                         fm_dce_sim_label label, gint64 voxels)
{
    static const char *const keys[FM_DCE_N_PARAMS] = {"ka", "kp", "kl", "tau_a", "tau_p"};
    double theta[FM_DCE_N_PARAMS];
    fm_dce_sim_truth(p, label, theta);
    json_builder_set_member_name(b, name);
    json_builder_begin_object(b);
    for (int i = 0; i < FM_DCE_N_PARAMS; i++)
        fm_cli_json_member_number(b, keys[i], theta[i]);
    fm_cli_json_member_int(b, "label", label);
    fm_cli_json_member_int(b, "voxels", voxels);
    json_builder_end_object(b);
}

static gboolean write_truth(const char *path, const fm_dce_sim_params *p, const char *format,
                            GError **error)
{
    gint64 counts[FM_DCE_SIM_N_LABELS] = {0};
    for (int z = 0; z < p->nz; z++)
        for (int y = 0; y < p->ny; y++)
            for (int x = 0; x < p->nx; x++)
                counts[fm_dce_sim_label_at(p, x, y, z)]++;
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    fm_cli_json_member_string(b, "simulator", "fluxmap dce_sim");
    fm_cli_json_member_string(b, "format", format);
    fm_cli_json_member_int(b, "width", p->nx);
    fm_cli_json_member_int(b, "height", p->ny);
    fm_cli_json_member_int(b, "slices", p->nz);
    fm_cli_json_member_int(b, "frames", p->n_times);
    fm_cli_json_member_number(b, "frame_interval_s", p->frame_interval_s);
    fm_cli_json_member_number(b, "arrival_s", p->arrival_s);
    fm_cli_json_member_number(b, "portal_delay_s", p->portal_delay_s);
    fm_cli_json_member_number(b, "portal_dispersion_s", p->portal_dispersion_s);
    fm_cli_json_member_number(b, "baseline_signal", p->baseline_signal);
    fm_cli_json_member_number(b, "cnr", p->cnr);
    fm_cli_json_member_number(b, "noise_sd", fm_dce_sim_noise_sd(p));
    fm_cli_json_member_int(b, "seed", (gint64)p->seed);
    fm_cli_json_member_string(b, "model",
                              "S = S0 (1 + C); Cl = (ka Ca(t - tau_a) + kp Cp(t - tau_p)) "
                              "conv exp(-kl t), rates in ml/100g/min (/6000 per s)");
    json_builder_set_member_name(b, "regions");
    json_builder_begin_object(b);
    member_truth(b, p, "liver", FM_DCE_SIM_LIVER, counts[FM_DCE_SIM_LIVER]);
    member_truth(b, p, "lesion_hyper", FM_DCE_SIM_LESION_HYPER, counts[FM_DCE_SIM_LESION_HYPER]);
    member_truth(b, p, "lesion_hypo", FM_DCE_SIM_LESION_HYPO, counts[FM_DCE_SIM_LESION_HYPO]);
    json_builder_end_object(b);
    fm_cli_json_member_int(b, "aorta_voxels", counts[FM_DCE_SIM_AORTA]);
    fm_cli_json_member_int(b, "portal_vein_voxels", counts[FM_DCE_SIM_PORTAL_VEIN]);
    json_builder_end_object(b);
    return fm_cli_json_write_file(b, path, error);
}

static gboolean write_rois(const char *path, const fm_dce_sim_params *p, GError **error)
{
    g_autoptr(GPtrArray) rois = fm_dce_sim_rois(p);
    return fm_roi_list_to_file(path, rois, error);
}

static gboolean write_inputs(const char *path, const fm_dce_sim_params *p, GError **error)
{
    fm_dce_inputs in = {.n_times = p->n_times};
    in.times_s = g_new(double, p->n_times);
    in.ca = g_new(double, p->n_times);
    in.cp = g_new(double, p->n_times);
    fm_dce_sim_inputs(p, in.times_s, in.ca, in.cp);
    gboolean ok = fm_dce_inputs_save_csv(path, &in, error);
    fm_dce_inputs_clear(&in);
    return ok;
}

static int simulate(const fm_cli_args *args)
{
    fm_dce_sim_params p;
    fm_dce_sim_defaults(&p);
    g_autofree char *message = NULL;
    if (!fm_cli_get_seed(args, &p.seed, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "%s", message);
    if (!fm_cli_get_int(args, "width", &p.nx, &message) ||
        !fm_cli_get_int(args, "height", &p.ny, &message) ||
        !fm_cli_get_int(args, "slices", &p.nz, &message) ||
        !fm_cli_get_int(args, "frames", &p.n_times, &message) ||
        !fm_cli_get_double(args, "frame_interval_s", &p.frame_interval_s, &message) ||
        !fm_cli_get_double(args, "cnr", &p.cnr, &message) ||
        !fm_cli_get_double(args, "ka", &p.liver[FM_DCE_KA], &message) ||
        !fm_cli_get_double(args, "kp", &p.liver[FM_DCE_KP], &message) ||
        !fm_cli_get_double(args, "kl", &p.liver[FM_DCE_KL], &message) ||
        !fm_cli_get_double(args, "tau_a", &p.liver[FM_DCE_TAU_A], &message) ||
        !fm_cli_get_double(args, "tau_p", &p.liver[FM_DCE_TAU_P], &message))
        return fm_cli_fail(FM_EXIT_USAGE, "%s", message);
    p.lesions = !fm_cli_has(args, "no_lesions");

    const char *output = fm_cli_get(args, "output");
    if (!output || !*output)
        return fm_cli_fail(FM_EXIT_USAGE, _("simulate dce: missing -o FILE.nii|FILE.tif"));
    const char *format = fm_cli_get(args, "format");
    static const char *const exts[] = {".nii.gz", ".nii", ".tiff", ".tif", NULL};
    int which = -1;
    g_autofree char *stem = fm_cli_output_stem(output, exts, &which);
    if (!format)
        format = which < 2 ? "nii" : "tif"; /* none matched (-1): NIfTI */
    if (strcmp(format, "nii") != 0 && strcmp(format, "tif") != 0)
        return fm_cli_fail(FM_EXIT_USAGE, _("--format: '%s' is not nii or tif"), format);

    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_dce_simulate(&p, &error);
    if (!ds)
        return fm_cli_fail_error(error);
    gboolean ok;
    if (strcmp(format, "nii") == 0) {
        ok = fm_nifti_write_dataset(output, ds, 1, &error);
    } else {
        /* A TIFF has no z/t structure: dce.dual_input reads slices and the frame interval from
         * this description (pages are z fastest: page = t slices + z). */
        g_autofree char *description = g_strdup_printf(
            "fluxmap simulate dce; slices=%d; frames=%d; frame_interval_s=%.17g; cnr=%g; "
            "seed=%" G_GUINT64_FORMAT,
            p.nz, p.n_times, p.frame_interval_s, p.cnr, p.seed);
        ok = fm_tiff_write_dataset(output, ds, description, &error);
    }
    if (!ok)
        return fm_cli_fail(FM_EXIT_INPUT, "%s", error->message);
    g_autofree char *truth = g_strconcat(stem, ".truth.json", NULL);
    g_autofree char *rois = g_strconcat(stem, ".rois.json", NULL);
    g_autofree char *inputs = g_strconcat(stem, ".inputs.csv", NULL);
    if (!write_truth(truth, &p, format, &error))
        return fm_cli_fail(FM_EXIT_INPUT, "%s: %s", truth, error->message);
    if (!write_rois(rois, &p, &error))
        return fm_cli_fail(FM_EXIT_INPUT, "%s: %s", rois, error->message);
    if (!write_inputs(inputs, &p, &error))
        return fm_cli_fail(FM_EXIT_INPUT, "%s", error->message);
    return FM_EXIT_OK;
}

int fm_cli_simulate_pk(int argc, char **argv); /* cli-simulate-pk.c */

int fm_cli_simulate_dce(int argc, char **argv)
{
    /* --model=tofts ... 2cum: the standard models' phantom (cli-simulate-pk.c); --model=dual_input
     * or none: the liver phantom below, the --model option dropped. */
    g_autoptr(GPtrArray) rest = g_ptr_array_new();
    for (int i = 0; i < argc; i++) {
        const char *model = NULL;
        if (g_str_has_prefix(argv[i], "--model="))
            model = argv[i] + strlen("--model=");
        else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc)
            model = argv[++i];
        if (model && strcmp(model, "dual_input") != 0)
            return fm_cli_simulate_pk(argc, argv);
        if (!model)
            g_ptr_array_add(rest, argv[i]);
    }
    argc = (int)rest->len;
    argv = (char **)rest->pdata;
    return fm_cli_parse_and_run_options(argc, argv, "simulate dce", options, G_N_ELEMENTS(options),
                                        print_help, simulate);
}
