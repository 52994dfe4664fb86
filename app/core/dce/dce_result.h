/* What the DCE fits (dce.dual_input and the standard models) share in their results: the
 * backend and device, the note's closing clauses, and the signal-to-concentration parameters
 * that mean the same in both schemas. */
#pragma once

#include <glib.h>

#include "app/core/result.h"
#include "kernels/fm_kernel.h"

G_BEGIN_DECLS

/* result->backend ("cuda" or "cpu") and result->device from the kernel's run info. */
void fm_dce_result_set_run(fm_result *result, const fm_run_info *info);

/* Appends "; N stopped at max_iterations", "; N voxels had non-finite curves" and "; fell back
 * to the CPU: why", each only when it happened. */
void fm_dce_note_append_fit(GString *note, gsize not_converged, const fm_run_info *info);

G_END_DECLS

/* Schema entries and choices the same, to the letter, in both methods' parameters. */
#define FM_DCE_CONVERSION_CHOICES                                                                  \
    {                                                                                              \
        "enhancement", "spgr", "ct", "none", NULL                                                  \
    }
#define FM_DCE_PARAM_BASELINE_FRAMES                                                               \
    {                                                                                              \
        .key = "baseline_frames", .type = FM_PARAM_INT, .title = N_("Baseline frames"),            \
        .default_value = 4, .min = 1, .max = 1000, .unit = "frames",                               \
        .help = N_("S0 (HU0) is the mean of this many first frames, before the bolus arrives.")    \
    }
#define FM_DCE_PARAM_R1                                                                            \
    {                                                                                              \
        .key = "r1_per_mm_s", .type = FM_PARAM_DOUBLE, .title = N_("Relaxivity r1"),               \
        .default_value = 4.5, .min = 0.001, .max = 100, .unit = "1/(mM s)",                        \
        .help = N_("SPGR: longitudinal relaxivity of the contrast agent.")                         \
    }
