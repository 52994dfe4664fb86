/* `fluxmap-cli run`: one method on one input file, maps to OUTDIR, recorded in the catalogue. */
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/cli/cli-method-args.h"
#include "app/cli/cli.h"
#include "app/cli/cli-roi.h"
#include "app/core/backend_choice.h"
#include "app/core/catalogue.h"
#include "app/core/dce/dce_dicom_export.h"
#include "app/core/device_warmup.h"
#include "app/core/error.h"
#include "app/core/export.h"
#include "app/core/io/mci.h"
#include "app/core/io/open.h"
#include "app/core/io/sdt.h"
#include "app/core/method.h"
#include "app/core/roi.h"
#include "kernels/device.h"

static const fm_cli_option options[] = {
    {"output", TRUE},  {"backend", TRUE}, {"json", FALSE},    {"no_catalogue", FALSE},
    {"roi", TRUE},     {"help", FALSE},   {"profile", FALSE}, {"block", TRUE},
    {"channel", TRUE}, {"export", TRUE},
};

static void print_help(void)
{
    printf("%s", _("Usage: fluxmap-cli run METHOD [--PARAM=VALUE...] INPUT -o OUTDIR\n"
                   "          [--backend=auto|cpu|cuda] [--json] [--no-catalogue] [--roi FILE]\n"
                   "          [--profile] [--block N | --channel N] [--export dicom]\n"
                   "Runs METHOD on INPUT (TIFF, Becker & Hickl .sdt, PicoQuant .ptu/.pt3, NIfTI\n"
                   ".nii/.nii.gz or a DICOM series folder) and writes OUTDIR/<output>.tif for\n"
                   "each output map (one page per frame or slice). The run is recorded in the\n"
                   "catalogue unless --no-catalogue. --roi FILE: a JSON array of ROIs with\n"
                   "roles (e.g. aorta, portal_vein, liver for dce.dual_input; \"slice\": z\n"
                   "puts one on a single slice of a volume), or a label map (.nii, .nii.gz,\n"
                   ".tif, .tiff, as ITK-SNAP or 3D Slicer save them; the size of INPUT): one\n"
                   "ROI per label and slice, named \"label N\" unless --roi-labels MAP gives\n"
                   "roles: 1=aorta,2=portal_vein,3=liver, or an ITK-SNAP label description\n"
                   "file. --export-rois LABELS writes the ROIs as a label map with INPUT's\n"
                   "geometry (see 'fluxmap-cli roi export --help').\n"
                   "--export dicom also writes each map as a DICOM Parametric Map,\n"
                   "OUTDIR/<output>.dcm, and the ROIs as a DICOM Segmentation,\n"
                   "OUTDIR/rois.seg.dcm, referencing INPUT's series and frame of reference\n"
                   "(a source that is not DICOM gets a new one; the note says so).\n"
                   "--profile adds the time of each stage (read, device start, prepare,\n"
                   "upload, compute, download, statistics, write, catalogue) and the peak\n"
                   "memory to the output.\n"
                   "--block N: the N-th dataset (1 = the first) of a Becker & Hickl .sdt\n"
                   "file: its blocks of decays in order, one per routing channel where a\n"
                   "block holds several ('fluxmap-cli info' or the sdt_datasets metadata says\n"
                   "how many). --channel N: detector channel N of a PicoQuant .ptu or .pt3\n"
                   "file (default: every channel summed).\n"
                   "'fluxmap-cli methods' lists METHOD ids and their parameters; both\n"
                   "--PARAM=VALUE and --PARAM VALUE are accepted.\n"));
}

static void report_progress(double fraction, gpointer user)
{
    fprintf(stderr, "\r%s: %3.0f%%", (const char *)user, 100.0 * fraction);
    fflush(stderr);
}

typedef struct {
    const char *input;
    gboolean shown; /* a progress line was printed and needs its newline */
} read_progress;

static void report_read_progress(double fraction, gpointer user)
{
    read_progress *reading = user;
    reading->shown = TRUE;
    report_progress(fraction, (gpointer)reading->input);
}

/* The run's result as one JSON object on stdout. */
static void print_json(const fm_method *method, const fm_params *params, const fm_result *result,
                       gint64 run_id, GPtrArray *files, const fm_map_stats *stats,
                       const fm_cli_profile *profile)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    fm_cli_json_member_string(b, "method", method->id);
    json_builder_set_member_name(b, "params");
    g_autofree char *params_json = fm_params_to_json(params);
    fm_cli_json_add_parsed(b, params_json);
    fm_cli_json_member_string(b, "backend", result->backend ? result->backend : "cpu");
    fm_cli_json_member_string(b, "device", result->device ? result->device : "");
    fm_cli_json_member_number(b, "elapsed_ms", result->elapsed_ms);
    fm_cli_json_member_run_id(b, run_id);
    fm_cli_json_member_string(b, "note", result->note);
    json_builder_set_member_name(b, "outputs");
    json_builder_begin_array(b);
    for (guint i = 0; i < result->maps->len; i++) {
        const fm_map *map = result->maps->pdata[i];
        json_builder_begin_object(b);
        fm_cli_json_member_string(b, "name", map->name);
        fm_cli_json_member_string(b, "unit", map->unit);
        fm_cli_json_add_stats(b, &stats[i]);
        fm_cli_json_member_int(b, "frames", map->n_frames);
        fm_cli_json_member_string(b, "file", files->pdata[i]);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    if (profile)
        fm_cli_json_member_profile(b, profile);
    json_builder_end_object(b);
    fm_cli_json_print(b);
}

static void print_text(const fm_result *result, gint64 run_id, GPtrArray *files,
                       const fm_map_stats *stats, const fm_cli_profile *profile)
{
    printf(_("%s on %s (%s): %.1f ms\n"), result->method_id,
           result->backend ? result->backend : "cpu", result->device ? result->device : "",
           result->elapsed_ms);
    if (result->note)
        printf(_("note: %s\n"), result->note);
    for (guint i = 0; i < result->maps->len; i++) {
        const fm_map *map = result->maps->pdata[i];
        const fm_map_stats *s = &stats[i];
        printf("  %-10s [%s] mean %.4g median %.4g min %.4g max %.4g valid %" G_GSIZE_FORMAT
               "  %s\n",
               map->name, map->unit, s->mean, s->median, s->min, s->max, s->valid_pixels,
               (const char *)files->pdata[i]);
    }
    if (run_id > 0)
        printf(_("catalogue run %lld\n"), (long long)run_id);
    if (profile)
        fm_cli_print_profile(profile);
}

/* Everything that can be checked without reading the input: exit 2 comes before exit 3. */
static int parse_command(int argc, char **argv, fm_cli_args *args, const fm_method **method,
                         fm_params **params, fm_backend *backend)
{
    int code = fm_cli_parse_method_args(argc, argv, "run", options, G_N_ELEMENTS(options),
                                        print_help, args, method, params, backend);
    if (code != FM_EXIT_OK)
        return code;
    /* MCML simulates from an .mci file or a preset: INPUT is optional there. */
    if (args->positional->len == 0 && g_strcmp0((*method)->family, "mcml") != 0)
        return fm_cli_fail(FM_EXIT_USAGE, _("run: missing INPUT file"));
    if (args->positional->len > 1 && !(*method)->open_inputs)
        return fm_cli_fail(FM_EXIT_USAGE, _("run: expected one INPUT file, got %u"),
                           args->positional->len);
    const char *outdir = fm_cli_get(args, "output");
    if (!outdir || !*outdir)
        return fm_cli_fail(FM_EXIT_USAGE, _("run: missing -o OUTDIR"));
    int block = 1, channel = 1;
    g_autofree char *part_message = NULL;
    if (!fm_cli_get_positive_int(args, "block", &block, &part_message) ||
        !fm_cli_get_positive_int(args, "channel", &channel, &part_message))
        return fm_cli_fail(FM_EXIT_USAGE, "%s", part_message);
    const char *export_format = fm_cli_get(args, "export");
    if (export_format && strcmp(export_format, "dicom") != 0)
        return fm_cli_fail(FM_EXIT_USAGE, _("--export: '%s' is not 'dicom'"), export_format);
    return fm_cli_check_roi_options(args);
}

/* Summaries of every map, each computed in parallel inside fm_map_statistics. */
static fm_map_stats *summarise(const fm_result *result)
{
    fm_map_stats *stats = g_new0(fm_map_stats, MAX(result->maps->len, 1));
    for (guint i = 0; i < result->maps->len; i++)
        stats[i] = fm_map_statistics(result->maps->pdata[i]);
    return stats;
}

/* One TIFF per map in outdir; files gets their absolute paths. An earlier run's file of the same
 * name is unlinked first and a new file written: never a rewrite in place, since the catalogue
 * may hold the old one as a hard link. (Not a temporary name renamed over it: ext4 flushes a file
 * renamed over another, which made writing 3 to 6 times slower on this machine.) */
static int write_maps(const fm_method *method, const fm_result *result, const char *outdir,
                      GPtrArray *files)
{
    g_autoptr(GError) error = NULL;
    if (g_mkdir_with_parents(outdir, 0755) != 0)
        return fm_cli_fail(FM_EXIT_INPUT, _("%s: cannot create directory: %s"), outdir,
                           g_strerror(errno));
    for (guint i = 0; i < result->maps->len; i++) {
        const fm_map *map = result->maps->pdata[i];
        g_autofree char *name = g_strconcat(map->name, ".tif", NULL);
        g_autofree char *path = g_build_filename(outdir, name, NULL);
        char *absolute = g_canonicalize_filename(path, NULL);
        g_ptr_array_add(files, absolute);
        if (g_unlink(absolute) != 0 && errno != ENOENT)
            return fm_cli_fail(FM_EXIT_INPUT, _("%s: cannot replace: %s"), absolute,
                               g_strerror(errno));
        if (!fm_export_tiff(absolute, map, method->id, NULL, &error))
            return fm_cli_fail_error(error); /* fm_export_tiff removes what it began */
    }
    return FM_EXIT_OK;
}

/* --export dicom: Parametric Maps and a Segmentation beside the TIFF maps, listed with the run
 * in the catalogue; the note says so. */
static int export_dicom(fm_result *result, const fm_dataset *dataset, GPtrArray *rois,
                        const char *outdir, const fm_cli_record *record)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *note = NULL;
    if (!fm_dce_export_dicom(result, dataset, rois, outdir, record->catalogue, record->run_id,
                             &note, &error))
        return fm_cli_fail_error(error);
    char *joined = result->note ? g_strdup_printf("%s\n%s", result->note, note) : g_strdup(note);
    g_free(result->note);
    result->note = joined;
    return FM_EXIT_OK;
}

static int execute(const fm_method *method, const fm_params *params, fm_backend backend,
                   const fm_cli_args *args)
{
    fm_cli_profile profile = {0};
    fm_stage_times *stages = &profile.stages;
    double t_start = fm_stage_now_ms(), t = t_start;
    const char *input = args->positional->len ? args->positional->pdata[0] : NULL;
    /* --backend=auto on a small input: the CPU may finish before the device would have started.
     * Where even the file's size promises that, the device is left alone until the read tells. */
    gboolean choose_after_read =
        backend == FM_BACKEND_AUTO && fm_device_cuda_built() &&
        fm_one_shot_prefers_cpu(method, fm_work_units_bound(method, params, input),
                                fm_cpu_threads(), NULL);
    /* The CUDA start (~0.3 s) runs beside the read instead of inside the first kernel call;
     * once it is up, maps are pinned so that the GPU writes them at full PCIe speed. */
    g_autoptr(fm_device_warmup) warmup =
        backend != FM_BACKEND_CPU && fm_device_cuda_built() && !choose_after_read
            ? fm_device_warmup_start(NULL, NULL, TRUE)
            : NULL;
    const char *outdir = fm_cli_get(args, "output");
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) rois = NULL;
    int code = fm_cli_load_rois(args, NULL, FALSE, &rois); /* JSON shapes need no dataset */
    if (code != FM_EXIT_OK)
        return code;
    /* .ptu files are histogrammed while read, which takes a while for large ones */
    read_progress reading = {input, FALSE};
    g_autoptr(fm_dataset) dataset = NULL;
    if (input && g_str_has_suffix(input, ".mci"))
        dataset = fm_mci_dataset_new(input, &error);
    else if (input && method->open_inputs)
        dataset = method->open_inputs((const char *const *)args->positional->pdata,
                                      (int)args->positional->len, &error);
    else if (input) {
        int part = 0;
        code = fm_cli_input_part(args, input, &part);
        if (code != FM_EXIT_OK)
            return code;
        fm_oct_raw_layout layout;
        gboolean has_layout = fm_dataset_layout_from_params(params, &layout);
        dataset = fm_dataset_open_part(input, part, has_layout ? &layout : NULL,
                                       isatty(STDERR_FILENO) ? report_read_progress : NULL,
                                       &reading, NULL, &error);
    }
    if (reading.shown)
        fprintf(stderr, "\n");
    if (input && !dataset)
        return fm_cli_fail_error(error);
    if ((code = fm_cli_load_rois(args, dataset, TRUE, &rois)) != FM_EXIT_OK ||
        (code = fm_cli_export_rois(args, rois, dataset)) != FM_EXIT_OK)
        return code;
    stages->ms[FM_STAGE_READ] = fm_stage_now_ms() - t;
    g_autofree char *backend_note = NULL;
    if (choose_after_read) {
        if (fm_one_shot_prefers_cpu(method, fm_work_units(method, params, dataset),
                                    fm_cpu_threads(), &backend_note))
            backend = FM_BACKEND_CPU;
        else /* more samples than the file's size promised (zipped blocks): start it now */
            warmup = fm_device_warmup_start(NULL, NULL, TRUE);
    }
    if (warmup)
        stages->ms[FM_STAGE_DEVICE_START] =
            fm_device_warmup_wait(warmup, NULL, NULL, &profile.device_start_total_ms, NULL);

    t = fm_stage_now_ms();
    g_auto(fm_cli_record) record = {0};
    code = fm_cli_record_begin(&record, args, dataset, method->id, params, rois);
    if (code != FM_EXIT_OK)
        return code;
    stages->ms[FM_STAGE_CATALOGUE] = fm_stage_now_ms() - t;

    fm_job_context context = {.backend = backend, .stages = stages};
    if (isatty(STDERR_FILENO)) {
        context.progress = report_progress;
        context.progress_user = (gpointer)method->id;
    }
    g_autoptr(fm_result) result = fm_method_run(method, dataset, params, rois, &context, &error);
    if (context.progress)
        fprintf(stderr, "\n");
    if (!result) {
        fm_cli_record_abort(&record, error);
        return fm_cli_fail_error(error);
    }

    if (backend_note) { /* the choice first: it explains the backend the run names */
        char *joined = result->note ? g_strdup_printf("%s; %s", backend_note, result->note)
                                    : g_steal_pointer(&backend_note);
        g_free(result->note);
        result->note = joined;
    }
    t = fm_stage_now_ms();
    g_autofree fm_map_stats *stats = summarise(result);
    stages->ms[FM_STAGE_STATISTICS] = fm_stage_now_ms() - t;
    t = fm_stage_now_ms();
    g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
    code = write_maps(method, result, outdir, files);
    if (code == FM_EXIT_OK && fm_cli_get(args, "export"))
        code = export_dicom(result, dataset, rois, outdir, &record);
    stages->ms[FM_STAGE_WRITE] = fm_stage_now_ms() - t;
    t = fm_stage_now_ms();
    g_ptr_array_add(files, NULL); /* NULL-terminated for the catalogue, not counted below */
    code = fm_cli_record_end_with(&record, code, result,
                                  code == FM_EXIT_OK ? (const char *const *)files->pdata : NULL,
                                  stats, _("writing the output maps failed"));
    g_ptr_array_set_size(files, files->len - 1);
    stages->ms[FM_STAGE_CATALOGUE] += fm_stage_now_ms() - t;
    if (code != FM_EXIT_OK)
        return code;
    gboolean want_profile = fm_cli_has(args, "profile");
    profile.wall_ms = fm_stage_now_ms() - t_start;
    fm_cli_profile_measure(&profile, dataset, result);
    if (fm_cli_has(args, "json"))
        print_json(method, params, result, record.run_id, files, stats,
                   want_profile ? &profile : NULL);
    else
        print_text(result, record.run_id, files, stats, want_profile ? &profile : NULL);
    return FM_EXIT_OK;
}

int fm_cli_run(int argc, char **argv)
{
    return fm_cli_method_command(argc, argv, parse_command, execute);
}
