/* ROIs on the command line (app/cli/cli-roi.c): --roi, --roi-labels, --export-rois, `roi`. */
#pragma once

#include "app/cli/cli.h"
#include "app/core/dataset.h"

G_BEGIN_DECLS

/* Adds --roi-labels and --export-rois (both with a value) to a table of extra options. */
void fm_cli_roi_add_options(GHashTable *extra);
/* What can be checked before any file is read (exit 2): --roi-labels only with a label map
 * --roi and of a valid syntax; --export-rois with a label map name and an --roi. */
int fm_cli_check_roi_options(const fm_cli_args *args);
/* Reads --roi into *rois when it is of the kind asked for: JSON shapes (label_maps FALSE, read
 * before the dataset, which they do not need) or a label map over dataset with --roi-labels
 * (label_maps TRUE). Leaves *rois alone otherwise. Returns an exit code (printed when not 0). */
int fm_cli_load_rois(const fm_cli_args *args, const fm_dataset *dataset, gboolean label_maps,
                     GPtrArray **rois);
/* --export-rois FILE: writes rois as a label map over dataset (exit code, printed when not 0). */
int fm_cli_export_rois(const fm_cli_args *args, GPtrArray *rois, const fm_dataset *dataset);
/* `fluxmap-cli roi export ...` */
int fm_cli_roi(int argc, char **argv);

G_END_DECLS
