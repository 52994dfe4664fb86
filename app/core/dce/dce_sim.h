/* DCE liver phantom (x, y, z, t) with known dual-input perfusion, for tests, demos and CI. */
#pragma once

#include <glib.h>

#include "app/core/dataset.h"
#include "kernels/dce/dce.h"

G_BEGIN_DECLS

/* What each voxel is. Lesions are discs inside the liver on the middle slice(s). */
typedef enum {
    FM_DCE_SIM_AIR = 0,
    FM_DCE_SIM_BODY,         /* non-enhancing soft tissue */
    FM_DCE_SIM_LIVER,        /* truth = fm_dce_sim_params.liver */
    FM_DCE_SIM_AORTA,        /* carries Ca */
    FM_DCE_SIM_PORTAL_VEIN,  /* carries Cp */
    FM_DCE_SIM_LESION_HYPER, /* arterialised lesion (HCC-like) */
    FM_DCE_SIM_LESION_HYPO,  /* poorly perfused lesion */
    FM_DCE_SIM_N_LABELS,
} fm_dce_sim_label;

typedef struct {
    int nx, ny, nz;
    int n_times;                   /* frames (the paper: 48; 32 ... 448) */
    double frame_interval_s;       /* the paper: 2.37 s */
    double arrival_s;              /* bolus arrival in the aorta (Parker AIF shifted by this) */
    double portal_delay_s;         /* portal input: Ca delayed by this ... */
    double portal_dispersion_s;    /* ... and convolved with exp(-t / this) / this */
    double liver[FM_DCE_N_PARAMS]; /* the paper's truth: ka 20, kp 100, kl 400, tau_a 1, tau_p 2 */
    double baseline_signal;        /* S0 of body, liver and vessels: S = S0 (1 + C) */
    double cnr;                    /* peak liver enhancement over the noise sd; <= 0: no noise */
    gboolean lesions;
    guint64 seed;
} fm_dce_sim_params;

void fm_dce_sim_defaults(fm_dce_sim_params *p);

/* Truth parameters of a label (NaN for air, body and the vessels). */
void fm_dce_sim_truth(const fm_dce_sim_params *p, fm_dce_sim_label label,
                      double theta[FM_DCE_N_PARAMS]);
fm_dce_sim_label fm_dce_sim_label_at(const fm_dce_sim_params *p, int x, int y, int z);

/* Plasma input curves at the frame times t_i = i × frame_interval_s: Ca is Parker et al.'s
 * population AIF (Magn. Reson. Med. 56 (2006) 993) in mM, delayed by arrival_s; Cp is Ca
 * delayed by portal_delay_s and dispersed by a unit-area exponential. Arrays of n_times. */
void fm_dce_sim_inputs(const fm_dce_sim_params *p, double *times_s, double *ca, double *cp);

/* Noise-free tissue concentration at the frame times for theta, from the kernels' own model
 * (fm_dce_model), so fits can recover the truth exactly. FALSE with msg on a kernel error. */
gboolean fm_dce_sim_tissue(const fm_dce_sim_params *p, const double theta[FM_DCE_N_PARAMS],
                           double *curve, GError **error);

/* Noise sd in signal units for the chosen CNR (0 when cnr <= 0). */
double fm_dce_sim_noise_sd(const fm_dce_sim_params *p);

/* The phantom: float32 x, y, z, t signal S = S0 (1 + C) + Gaussian noise, with frame times
 * metadata. FM_ERROR_BAD_PARAM names an out-of-range field. Same seed, same phantom, whatever
 * the thread count. */
fm_dataset *fm_dce_simulate(const fm_dce_sim_params *p, GError **error);

/* ROIs matching the phantom exactly: aorta, portal_vein (every slice) and liver (the liver
 * ellipse, lesions included). GPtrArray of fm_roi*, owning. */
GPtrArray *fm_dce_sim_rois(const fm_dce_sim_params *p);

G_END_DECLS
