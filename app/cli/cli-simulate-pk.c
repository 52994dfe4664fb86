/* `fluxmap-cli simulate dce --model=tofts|extended_tofts|patlak|2cxm|2cum`: a reference phantom of
 * a standard pharmacokinetic model as NIfTI, with its truth, ROIs and plasma input. */
#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/cli/cli.h"
#include "app/core/dce/dce_prep.h"
#include "app/core/dce/pk_sim.h"
#include "app/core/io/nifti.h"
#include "app/core/roi.h"

int fm_cli_simulate_pk(int argc, char **argv); /* called by cli-simulate-dce.c */

static const fm_cli_option options[] = {
    {"model", TRUE},     {"width", TRUE},      {"height", TRUE},
    {"slices", TRUE},    {"frames", TRUE},     {"frame_interval_s", TRUE},
    {"arrival_s", TRUE}, {"hematocrit", TRUE}, {"snr", TRUE},
    {"seed", TRUE},      {"output", TRUE},     {"help", FALSE},
};

static void print_help(void)
{
    fm_pk_sim_params d;
    fm_pk_sim_defaults(&d, FM_PK_TOFTS);
    printf(_("Usage: fluxmap-cli simulate dce --model=MODEL [OPTIONS] -o FILE.nii|FILE.nii.gz\n"
             "MODEL: tofts, extended_tofts, patlak, 2cxm or 2cum (dual_input: the liver phantom).\n"
             "Writes an SPGR series x, y, z, t (TR %g ms, flip angle %g deg, r1 %g /(mM s),\n"
             "T10 tissue %g s, blood %g s) with an artery carrying Parker's population blood\n"
             "curve and four tissue regions of known parameters (the model's equations\n"
             "integrated on a 0.01 s grid); beside it FILE.truth.json, FILE.rois.json (artery,\n"
             "region 1..4 with the role tissue, for --roi) and FILE.inputs.csv (the true plasma\n"
             "input, t_s,ca,cp with cp = ca).\n"
             "  --width=PX --height=PX   %d x %d\n"
             "  --slices=N               %d\n"
             "  --frames=N               %d\n"
             "  --frame_interval_s=S     %g\n"
             "  --arrival_s=S            %g   bolus arrival in the artery\n"
             "  --hematocrit=H           %g\n"
             "  --snr=R                  %g   baseline tissue signal over noise sd; 0 = no noise\n"
             "  --seed=N                 %llu\n"),
           d.tr_ms, d.flip_deg, d.r1_per_mm_s, d.t10_tissue_s, d.t10_blood_s, d.nx, d.ny, d.nz,
           d.n_times, d.frame_interval_s, d.arrival_s, d.hematocrit, d.snr,
           (unsigned long long)d.seed);
}

static void member_region(JsonBuilder *b, const fm_pk_sim_params *p, int r)
{
    double th[FM_PK_N_PARAMS];
    fm_pk_sim_truth(p, r, th);
    gint64 voxels = 0;
    for (int y = 0; y < p->ny; y++)
        for (int x = 0; x < p->nx; x++)
            voxels += fm_pk_sim_region_at(p, x, y) == r;
    json_builder_begin_object(b);
    g_autofree char *name = g_strdup_printf("region %d", r + 1);
    fm_cli_json_member_string(b, "roi", name);
    fm_cli_json_member_int(b, "voxels", voxels * p->nz);
    /* The method's map names: Patlak's ktrans is the PS slot, kep = ktrans/ve (2CXM: ps/ve). */
    if (p->model == FM_PK_PATLAK)
        fm_cli_json_member_number(b, "ktrans", th[FM_PK_PS]);
    else if (isfinite(th[FM_PK_KTRANS]))
        fm_cli_json_member_number(b, "ktrans", th[FM_PK_KTRANS]);
    if (isfinite(th[FM_PK_FP]))
        fm_cli_json_member_number(b, "fp", th[FM_PK_FP]);
    if (isfinite(th[FM_PK_PS]) && p->model != FM_PK_PATLAK)
        fm_cli_json_member_number(b, "ps", th[FM_PK_PS]);
    if (isfinite(th[FM_PK_VE]))
        fm_cli_json_member_number(b, "ve", th[FM_PK_VE]);
    if (isfinite(th[FM_PK_VP]))
        fm_cli_json_member_number(b, "vp", th[FM_PK_VP]);
    if (isfinite(th[FM_PK_VE]))
        fm_cli_json_member_number(
            b, "kep", (p->model == FM_PK_2CXM ? th[FM_PK_PS] : th[FM_PK_KTRANS]) / th[FM_PK_VE]);
    fm_cli_json_member_number(b, "delay", 0.0);
    json_builder_end_object(b);
}

static gboolean write_truth(const char *path, const fm_pk_sim_params *p, GError **error)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    fm_cli_json_member_string(b, "simulator", "fluxmap pk_sim");
    fm_cli_json_member_string(b, "model", fm_pk_model_name(p->model));
    fm_cli_json_member_int(b, "width", p->nx);
    fm_cli_json_member_int(b, "height", p->ny);
    fm_cli_json_member_int(b, "slices", p->nz);
    fm_cli_json_member_int(b, "frames", p->n_times);
    fm_cli_json_member_number(b, "frame_interval_s", p->frame_interval_s);
    fm_cli_json_member_number(b, "arrival_s", p->arrival_s);
    fm_cli_json_member_number(b, "hematocrit", p->hematocrit);
    fm_cli_json_member_number(b, "t10_tissue_s", p->t10_tissue_s);
    fm_cli_json_member_number(b, "t10_blood_s", p->t10_blood_s);
    fm_cli_json_member_number(b, "tr_ms", p->tr_ms);
    fm_cli_json_member_number(b, "flip_deg", p->flip_deg);
    fm_cli_json_member_number(b, "r1_per_mm_s", p->r1_per_mm_s);
    fm_cli_json_member_number(b, "baseline_signal", p->baseline_signal);
    fm_cli_json_member_number(b, "snr", p->snr);
    fm_cli_json_member_int(b, "seed", (gint64)p->seed);
    fm_cli_json_member_string(b, "input",
                              "Parker et al. 2006 blood curve at arrival_s; plasma = "
                              "blood / (1 - hematocrit); the artery holds blood");
    json_builder_set_member_name(b, "regions");
    json_builder_begin_array(b);
    for (int r = 0; r < FM_PK_SIM_N_REGIONS; r++)
        member_region(b, p, r);
    json_builder_end_array(b);
    json_builder_end_object(b);
    return fm_cli_json_write_file(b, path, error);
}

static gboolean write_inputs(const char *path, const fm_pk_sim_params *p, GError **error)
{
    fm_dce_inputs in = {.n_times = p->n_times};
    in.times_s = g_new(double, p->n_times);
    in.ca = g_new(double, p->n_times);
    in.cp = g_new(double, p->n_times);
    for (int i = 0; i < p->n_times; i++) {
        in.times_s[i] = i * p->frame_interval_s;
        in.ca[i] = in.cp[i] = fm_pk_sim_plasma(p, in.times_s[i]);
    }
    gboolean ok = fm_dce_inputs_save_csv(path, &in, error);
    fm_dce_inputs_clear(&in);
    return ok;
}

static int simulate(const fm_cli_args *args)
{
    const char *model_name = fm_cli_get(args, "model");
    fm_pk_model model = FM_PK_N_MODELS;
    for (int m = 0; m < FM_PK_N_MODELS && model_name; m++)
        if (strcmp(model_name, fm_pk_model_name((fm_pk_model)m)) == 0)
            model = (fm_pk_model)m;
    if (model == FM_PK_N_MODELS)
        return fm_cli_fail(FM_EXIT_USAGE,
                           _("--model: '%s' is not tofts, extended_tofts, patlak, 2cxm, 2cum or "
                             "dual_input"),
                           model_name ? model_name : "");
    fm_pk_sim_params p;
    fm_pk_sim_defaults(&p, model);
    g_autofree char *message = NULL;
    if (!fm_cli_get_seed(args, &p.seed, &message) ||
        !fm_cli_get_int(args, "width", &p.nx, &message) ||
        !fm_cli_get_int(args, "height", &p.ny, &message) ||
        !fm_cli_get_int(args, "slices", &p.nz, &message) ||
        !fm_cli_get_int(args, "frames", &p.n_times, &message) ||
        !fm_cli_get_double(args, "frame_interval_s", &p.frame_interval_s, &message) ||
        !fm_cli_get_double(args, "arrival_s", &p.arrival_s, &message) ||
        !fm_cli_get_double(args, "hematocrit", &p.hematocrit, &message) ||
        !fm_cli_get_double(args, "snr", &p.snr, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "%s", message);
    const char *output = fm_cli_get(args, "output");
    if (!output || !*output)
        return fm_cli_fail(FM_EXIT_USAGE, _("simulate dce: missing -o FILE.nii"));
    static const char *const exts[] = {".nii.gz", ".nii", NULL};
    int which = -1;
    g_autofree char *stem = fm_cli_output_stem(output, exts, &which);
    if (which < 0)
        return fm_cli_fail(FM_EXIT_USAGE,
                           _("simulate dce --model=%s writes NIfTI: name the file .nii or .nii.gz"),
                           model_name);

    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_pk_simulate(&p, &error);
    if (!ds)
        return fm_cli_fail_error(error);
    if (!fm_nifti_write_dataset(output, ds, 1, &error))
        return fm_cli_fail(FM_EXIT_INPUT, "%s", error->message);
    g_autofree char *truth = g_strconcat(stem, ".truth.json", NULL);
    g_autofree char *rois = g_strconcat(stem, ".rois.json", NULL);
    g_autofree char *inputs = g_strconcat(stem, ".inputs.csv", NULL);
    g_autoptr(GPtrArray) list = fm_pk_sim_rois(&p);
    if (!write_truth(truth, &p, &error))
        return fm_cli_fail(FM_EXIT_INPUT, "%s: %s", truth, error->message);
    if (!fm_roi_list_to_file(rois, list, &error))
        return fm_cli_fail(FM_EXIT_INPUT, "%s: %s", rois, error->message);
    if (!write_inputs(inputs, &p, &error))
        return fm_cli_fail(FM_EXIT_INPUT, "%s", error->message);
    return FM_EXIT_OK;
}

int fm_cli_simulate_pk(int argc, char **argv)
{
    return fm_cli_parse_and_run_options(argc, argv, "simulate dce", options, G_N_ELEMENTS(options),
                                        print_help, simulate);
}
