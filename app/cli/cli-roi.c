/* ROIs on the command line: --roi (JSON shapes or a label map), --roi-labels, --export-rois, and
 * `fluxmap-cli roi export`, which writes ROIs as a label map over a dataset. */
#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>

#include "app/cli/cli-roi.h"
#include "app/core/error.h"
#include "app/core/io/open.h"
#include "app/core/roi_labels.h"

void fm_cli_roi_add_options(GHashTable *extra)
{
    g_hash_table_insert(extra, (gpointer) "roi_labels", GINT_TO_POINTER(TRUE));
    g_hash_table_insert(extra, (gpointer) "export_rois", GINT_TO_POINTER(TRUE));
}

int fm_cli_check_roi_options(const fm_cli_args *args)
{
    const char *roi = fm_cli_get(args, "roi");
    const char *labels = fm_cli_get(args, "roi_labels");
    const char *export_path = fm_cli_get(args, "export_rois");
    if (labels != NULL && (roi == NULL || !fm_roi_is_label_map_path(roi)))
        return fm_cli_fail(FM_EXIT_USAGE,
                           _("--roi-labels needs --roi with a label map (.nii, .nii.gz, .tif, "
                             ".tiff)"));
    if (labels != NULL) {
        g_autoptr(GError) error = NULL;
        g_autoptr(GPtrArray) parsed = fm_roi_labels_parse(labels, NULL, &error);
        if (parsed == NULL)
            return fm_cli_fail_error(error);
    }
    if (export_path != NULL && !fm_roi_is_label_map_path(export_path))
        return fm_cli_fail(FM_EXIT_USAGE,
                           _("--export-rois: '%s' must end in .nii, .nii.gz, .tif or .tiff"),
                           export_path);
    if (export_path != NULL && roi == NULL)
        return fm_cli_fail(FM_EXIT_USAGE, _("--export-rois needs --roi FILE"));
    return FM_EXIT_OK;
}

int fm_cli_load_rois(const fm_cli_args *args, const fm_dataset *dataset, gboolean label_maps,
                     GPtrArray **rois)
{
    const char *path = fm_cli_get(args, "roi");
    if (path == NULL || fm_roi_is_label_map_path(path) != label_maps)
        return FM_EXIT_OK;
    g_autoptr(GError) error = NULL;
    if (!label_maps) {
        *rois = fm_roi_list_from_file(path, &error);
        return *rois ? FM_EXIT_OK : fm_cli_fail_error(error);
    }
    if (dataset == NULL)
        return fm_cli_fail(FM_EXIT_USAGE, _("--roi %s: a label map needs an INPUT dataset"), path);
    const char *labels_text = fm_cli_get(args, "roi_labels");
    g_autoptr(GPtrArray) labels = NULL;
    gboolean from_file = FALSE;
    if (labels_text != NULL && !(labels = fm_roi_labels_parse(labels_text, &from_file, &error)))
        return fm_cli_fail_error(error);
    /* A description file lists every label the drawing tool knew; typed pairs must all exist. */
    *rois = fm_roi_list_from_label_map(path, dataset, labels, !from_file, &error);
    return *rois ? FM_EXIT_OK : fm_cli_fail_error(error);
}

int fm_cli_export_rois(const fm_cli_args *args, GPtrArray *rois, const fm_dataset *dataset)
{
    const char *path = fm_cli_get(args, "export_rois");
    if (path == NULL)
        return FM_EXIT_OK;
    if (dataset == NULL)
        return fm_cli_fail(FM_EXIT_USAGE, _("--export-rois needs an INPUT dataset"));
    g_autoptr(GError) error = NULL;
    g_autofree char *mapping = NULL;
    if (!fm_roi_list_to_label_map(path, rois, dataset, &mapping, &error))
        return fm_cli_fail_error(error);
    g_autofree char *sidecar = fm_roi_labels_sidecar_path(path);
    /* stderr: stdout may be the run's JSON */
    fprintf(stderr, _("ROIs written to %s (labels %s; names in %s)\n"), path,
            *mapping ? mapping : _("without roles"), sidecar);
    return FM_EXIT_OK;
}

static const fm_cli_option export_options[] = {
    {"roi", TRUE}, {"roi_labels", TRUE}, {"output", TRUE}, {"help", FALSE}};

static void print_help(void)
{
    printf("%s",
           _("Usage: fluxmap-cli roi export INPUT --roi FILE [--roi-labels MAP] -o LABELS\n"
             "Writes the ROIs of FILE (JSON shapes, or a label map with --roi-labels) as a\n"
             "label map over INPUT's grid: LABELS.nii or .nii.gz with INPUT's NIfTI geometry\n"
             "(its qform and sform copied; the affine of a DICOM series), or .tif/.tiff with\n"
             "one page per slice. Each role (or name, for an ROI without role) gets a label\n"
             "1, 2, ... in order; the labels are printed as --roi-labels takes them, and an\n"
             "ITK-SNAP label description file LABELS.labels.txt names them.\n"
             "MAP: LABEL=ROLE pairs, e.g. 1=aorta,2=portal_vein,3=liver, or the path of an\n"
             "ITK-SNAP label description file.\n"));
}

static int roi_export(const fm_cli_args *args)
{
    if (fm_cli_has(args, "help")) {
        print_help();
        return FM_EXIT_OK;
    }
    if (args->positional->len != 1)
        return fm_cli_fail(FM_EXIT_USAGE, _("roi export: expected one INPUT file, got %u"),
                           args->positional->len);
    const char *output = fm_cli_get(args, "output");
    if (output == NULL || *output == '\0')
        return fm_cli_fail(FM_EXIT_USAGE, _("roi export: missing -o LABELS"));
    if (!fm_roi_is_label_map_path(output))
        return fm_cli_fail(FM_EXIT_USAGE,
                           _("roi export: '%s' must end in .nii, .nii.gz, .tif or .tiff"), output);
    if (fm_cli_get(args, "roi") == NULL)
        return fm_cli_fail(FM_EXIT_USAGE, _("roi export: missing --roi FILE"));
    int code = fm_cli_check_roi_options(args);
    if (code != FM_EXIT_OK)
        return code;
    g_autoptr(GPtrArray) rois = NULL;
    if ((code = fm_cli_load_rois(args, NULL, FALSE, &rois)) != FM_EXIT_OK)
        return code;
    g_autoptr(GError) error = NULL;
    const char *input = args->positional->pdata[0];
    g_autoptr(fm_dataset) dataset = fm_dataset_open(input, NULL, NULL, NULL, &error);
    if (dataset == NULL)
        return fm_cli_fail_error(error);
    if (rois == NULL && (code = fm_cli_load_rois(args, dataset, TRUE, &rois)) != FM_EXIT_OK)
        return code;
    g_autofree char *mapping = NULL;
    if (!fm_roi_list_to_label_map(output, rois, dataset, &mapping, &error))
        return fm_cli_fail_error(error);
    g_autofree char *sidecar = fm_roi_labels_sidecar_path(output);
    guint n = rois ? rois->len : 0;
    printf(ngettext("%s: %u ROI, labels %s (names in %s)\n",
                    "%s: %u ROIs, labels %s (names in %s)\n", n),
           output, n, *mapping ? mapping : _("without roles"), sidecar);
    return FM_EXIT_OK;
}

int fm_cli_roi(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        print_help();
        return argc < 1 ? FM_EXIT_USAGE : FM_EXIT_OK;
    }
    if (strcmp(argv[0], "export") == 0)
        return fm_cli_parse_and_run(argc - 1, argv + 1, "roi export", export_options,
                                    G_N_ELEMENTS(export_options), roi_export);
    return fm_cli_fail(FM_EXIT_USAGE, _("roi: unknown command '%s' (export)"), argv[0]);
}
