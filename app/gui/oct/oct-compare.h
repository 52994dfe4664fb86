/* FmOctCompare: one B-scan processed by every resampling method side by side, with the
 * point-spread function of its strongest peak (FWHM in µm, peak SNR in dB) for each. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/dataset.h"
#include "app/core/params.h"
#include "kernels/fm_kernel.h"

G_BEGIN_DECLS

#define FM_TYPE_OCT_COMPARE (fm_oct_compare_get_type())
G_DECLARE_FINAL_TYPE(FmOctCompare, fm_oct_compare, FM, OCT_COMPARE, GtkWindow)

/* Starts the runs on a worker thread at once; the window fills in when they are done. */
FmOctCompare *fm_oct_compare_new(GtkWindow *parent, fm_dataset *spectra, const fm_params *params,
                                 int bscan, fm_backend backend);
gboolean fm_oct_compare_is_done(FmOctCompare *compare);
/* "tdi: FWHM 7.1 µm, SNR 41.3 dB\n…" once done, or the error; NULL before. */
const char *fm_oct_compare_get_summary(FmOctCompare *compare);

G_END_DECLS
