/* TIFF stacks as 4-D DCE series: pages reshaped to x, y, z, t with nz and nt given by the user. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"
#include "app/core/io/frame_times.h"

G_BEGIN_DECLS

typedef enum {
    FM_DCE_PAGES_Z_FASTEST, /* page = t * nz + z: one volume after another (ImageJ's default) */
    FM_DCE_PAGES_T_FASTEST, /* page = z * nt + t: the time series of each slice in turn */
} fm_dce_page_order;

/* Reshapes an x, y, pages image stack (any pixel type) into an x, y, z, t float32 dataset.
 * pages must equal nz × nt. frame_times_s: nt strictly increasing times in seconds, or NULL
 * for index × frame_interval_s (which must then be > 0). Voxel sizes stay 1 (unit "px") and
 * the affine is the identity unless the caller sets them. Errors (FM_ERROR_BAD_INPUT /
 * FM_ERROR_BAD_PARAM) say what does not add up: "a.tif: 30 pages are not nz 4 x nt 8". */
fm_dataset *fm_dce_stack_reshape(const fm_dataset *stack, int nz, int nt, fm_dce_page_order order,
                                 double frame_interval_s, const double *frame_times_s,
                                 GError **error);

/* Reads a multi-page TIFF (see fm_tiff_read) and reshapes it as above. */
fm_dataset *fm_dce_stack_read(const char *path, int nz, int nt, fm_dce_page_order order,
                              double frame_interval_s, const double *frame_times_s, GError **error);

G_END_DECLS
