/* The fit window and photon threshold a FLIM method's run uses, from its parameters and the data:
 * one function for the run itself and for the GUI that draws the window of a finished run. */
#pragma once

#include <glib.h>

#include "app/core/dataset.h"
#include "app/core/flim/flim_auto.h"
#include "app/core/params.h"

G_BEGIN_DECLS

/* The window for params (fit_start_ns, fit_end_ns as fm_flim_window_choose reads them) of any
 * flim.* method on ds: a tail from the decay's peak, or from the IRF's onset for a method given
 * an IRF, or the whole period for a calibrated phasor. irf: the IRF on the data's bins, or NULL
 * to load irf_file here (a file that does not load is then ignored). */
gboolean fm_flim_params_window(fm_dataset *ds, const fm_params *params, double bin_width_ns,
                               const float *irf, fm_flim_window *window, GError **error);

/* The same from a run's method id and parameter JSON (as the catalogue keeps them), for drawing:
 * FALSE when the method is not FLIM or the parameters or the data do not give a window. */
gboolean fm_flim_run_window(fm_dataset *ds, const char *method_id, const char *params_json,
                            int *start, int *end);

/* A short account of an auto choice for the result's note, e.g. "fit window 1.45–9.89 ns (bins
 * 15–102, auto: from the decay's peak to where the tail meets the background)". g_free it. */
char *fm_flim_window_describe(const fm_flim_window *window, double bin_width_ns);

G_END_DECLS
