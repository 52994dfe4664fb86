/* The series a DCE method fits, from what the user opened: a 4-D series as it is, a TIFF stack
 * (x, y, pages) reshaped to x, y, z, t by the stack parameters every DCE fit has. */
#pragma once

#include <glib.h>

#include "app/core/dataset.h"
#include "app/core/params.h"

G_BEGIN_DECLS

/* The two schema entries that say how a TIFF stack's pages make volumes, the same in every DCE
 * fit's parameters (dce.dual_input and the standard models). */
#define FM_DCE_PARAM_STACK_SLICES                                                                  \
    {                                                                                              \
        .key = "stack_slices", .type = FM_PARAM_INT, .title = N_("Slices in a TIFF stack"),        \
        .default_value = 0, .min = 0, .max = 1024, .unit = "slices",                               \
        .help = N_("TIFF stacks (pages z fastest): slices per volume; 0 = from the file's "        \
                   "description (slices=N), else 1.")                                              \
    }
#define FM_DCE_PARAM_FRAME_INTERVAL                                                                \
    {                                                                                              \
        .key = "frame_interval_s", .type = FM_PARAM_DOUBLE, .title = N_("Frame interval"),         \
        .default_value = 0, .min = 0, .max = 3600, .unit = "s",                                    \
        .help = N_("TIFF stacks: time between volumes; 0 = from the file's description "           \
                   "(frame_interval_s=S), else 1 s. NIfTI and DICOM carry their own times.")       \
    }

/* ds as an x, y, z, t series (a new reference): a 3-D x, y, pages stack is reshaped with the
 * parameters' stack_slices and frame_interval_s (0: the TIFF description's slices=N and
 * frame_interval_s=S, else 1 slice and 1 s); anything else is returned as it is. Error
 * (FM_ERROR_BAD_PARAM) when the pages are not whole volumes. */
fm_dataset *fm_dce_series_of(fm_dataset *ds, const fm_params *params, GError **error);

G_END_DECLS
