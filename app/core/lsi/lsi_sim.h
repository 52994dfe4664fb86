/* Speckle stack simulator with known correlation times, for tests and the demo dataset. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"

G_BEGIN_DECLS

typedef struct {
    int width, height, n_frames;
    double exposure_ms;       /* camera exposure T */
    double tau_background_ms; /* correlation time of static-ish tissue (slow) */
    double tau_vessel_ms;     /* correlation time inside the vessel (fast flow, smaller) */
    double speckle_size_px;   /* speckle grain diameter in pixels (>= 2 for sampling) */
    double mean_counts;       /* mean intensity in counts */
    int bits;                 /* 8, 12 or 16: output uint8 or uint16 with this range */
    guint64 seed;
    gboolean shot_noise; /* Poisson photon noise on the counts (default TRUE) */
} fm_lsi_sim_params;

void fm_lsi_sim_defaults(fm_lsi_sim_params *p);
/* The vessel is a diagonal band; is_vessel(x,y) says where truth tau_vessel applies. */
gboolean fm_lsi_sim_is_vessel(const fm_lsi_sim_params *p, int x, int y);
/* The band's centre line from (x0,y0) to (x1,y1) in pixel coordinates and its half width:
 * pixel (x,y) is vessel when its centre lies within half_width_px of that line. */
void fm_lsi_sim_vessel_geometry(const fm_lsi_sim_params *p, double *x0, double *y0, double *x1,
                                double *y1, double *half_width_px);
/* Expected K for exposure T and correlation time tau (Lorentzian spectrum, beta = 1):
 * K^2 = (exp(-2x) - 1 + 2x) / (2 x^2), x = T / tau. */
double fm_lsi_sim_expected_contrast(double exposure_ms, double tau_ms);
/* x, y, t counts. Same seed, same stack, whatever the thread count. */
fm_dataset *fm_lsi_simulate(const fm_lsi_sim_params *p, GError **error);

G_END_DECLS
