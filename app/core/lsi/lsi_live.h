/* Live speckle: the per-frame steps of lsi.spatial, lsi.temporal and lsi.spatiotemporal
 * (fm_method.live), and the kernel parameters they read like the offline runs. */
#pragma once

#include "app/core/live.h"
#include "app/core/params.h"
#include "kernels/lsi/lsi.h"

G_BEGIN_DECLS

extern const fm_live_ops fm_lsi_live_spatial_ops;
extern const fm_live_ops fm_lsi_live_temporal_ops;
extern const fm_live_ops fm_lsi_live_spatiotemporal_ops;

/* The kernel parameters of an lsi.* method's parameters (lsi_methods.c): window, frames,
 * exposure and border, with the offline run's defaults for the keys a method lacks. */
void fm_lsi_params_read(const fm_params *params, fm_lsi_params *out);

G_END_DECLS
