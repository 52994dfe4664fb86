/* Live SD-OCT: the per-frame step of oct.bscan (fm_method.live). One camera frame of a line-scan
 * camera is one B-scan: height A-lines of width spectrometer pixels. The calibration, the
 * resampling, the window, the dispersion and the background come from the method's parameters
 * (calibration_file or lambda_polynomial_nm, reference_file for background 'reference'), as a
 * live frame carries no file metadata. */
#pragma once

#include "app/core/live.h"
#include "app/core/params.h"

G_BEGIN_DECLS

extern const fm_live_ops fm_oct_live_bscan_ops;

/* The en-face image of a live run grows one row per B-scan up to this many rows; from then on
 * it starts again at row 0, the newest row replacing the oldest (a repeating raster). */
#define FM_OCT_LIVE_ENFACE_ROWS 4096

/* En-face depth bins [first, last) from the enface_* parameters (oct_methods.c). */
gboolean fm_oct_enface_range(const fm_params *params, double um_per_bin, int n_depth, int *first,
                             int *last, GError **error);

G_END_DECLS
