/* Reference phantoms of the standard pharmacokinetic models: an SPGR series (x, y, z, t) with an
 * artery and four tissue regions of known parameters, for tests, demos and CI. The tissue curves
 * come from the models' differential equations integrated on a fine grid, not from the kernels'
 * convolution, so a fit that recovers them checks the kernels against an independent reference. */
#pragma once

#include <glib.h>

#include "app/core/dataset.h"
#include "kernels/dce/pk.h"

G_BEGIN_DECLS

#define FM_PK_SIM_N_REGIONS 4

typedef struct {
    fm_pk_model model;
    int nx, ny, nz, n_times;
    double frame_interval_s;
    double arrival_s;  /* the artery's bolus arrival: Parker's blood curve delayed by this */
    double hematocrit; /* plasma = blood / (1 - Hct) drives the tissue */
    double t10_tissue_s, t10_blood_s, tr_ms, flip_deg, r1_per_mm_s;
    double baseline_signal; /* precontrast tissue signal */
    double snr;             /* baseline tissue signal over the noise sd; <= 0: no noise */
    guint64 seed;
} fm_pk_sim_params;

void fm_pk_sim_defaults(fm_pk_sim_params *p, fm_pk_model model);

/* Truth of region r (0..3): FM_PK_N_PARAMS values in pk.h's slots and units, NaN for the
 * slots the model has not; the delay is 0. */
void fm_pk_sim_truth(const fm_pk_sim_params *p, int region, double theta[FM_PK_N_PARAMS]);

/* Region of a voxel: 0..3, -1 outside the regions (non-enhancing tissue), -2 the artery. */
int fm_pk_sim_region_at(const fm_pk_sim_params *p, int x, int y);

/* Plasma input at time t_s (mM): Parker's blood curve at arrival_s / (1 - Hct). */
double fm_pk_sim_plasma(const fm_pk_sim_params *p, double t_s);

/* Tissue concentration of region r at the frame times t_i = i frame_interval_s (n_times values):
 * the model's compartment equations integrated by RK4 on a 0.01 s grid. */
void fm_pk_sim_tissue(const fm_pk_sim_params *p, int region, double *curve);

/* The series: float32 SPGR signal of every voxel, Gaussian noise (fixed by seed), frame times
 * metadata. FM_ERROR_BAD_PARAM names an out-of-range field. */
fm_dataset *fm_pk_simulate(const fm_pk_sim_params *p, GError **error);

/* ROIs matching the phantom exactly: "artery" (role artery) and "region 1".."region 4" (role
 * tissue), every slice. GPtrArray of fm_roi*, owning. */
GPtrArray *fm_pk_sim_rois(const fm_pk_sim_params *p);

G_END_DECLS
