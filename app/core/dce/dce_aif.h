/* Population arterial input functions (Parker 2006, Georgiou 2019) and the bolus arrival found in
 * a measured curve, where a population curve is placed. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
    FM_DCE_AIF_PARKER = 0, /* Parker et al., Magn. Reson. Med. 56 (2006) 993, eq. 1, Table 1 */
    FM_DCE_AIF_GEORGIOU,   /* Georgiou et al., Magn. Reson. Med. 81 (2019) 1955, eq. 1 */
} fm_dce_population;

const char *fm_dce_population_name(fm_dce_population which); /* "parker", "georgiou" */
gboolean fm_dce_population_parse(const char *text, fm_dce_population *which);

/* Whole-blood concentration (mM) of the population curve t_s seconds after the bolus arrival,
 * 0 before it (t_s < 0): OSIPI's convention, Cb(t) = f(t - delay) for t >= delay, else 0. */
double fm_dce_population_blood(fm_dce_population which, double t_s);

/* The curve at n times (s), the bolus arriving at arrival_s: cb[i] = blood(times_s[i] -
 * arrival_s). A time within 1 ns of the arrival counts as after it (times built in minutes and
 * converted to seconds do not land exactly). */
void fm_dce_population_curve(fm_dce_population which, const double *times_s, int n,
                             double arrival_s, double *cb);

/* Bolus arrival in a curve (s): the knot t0 of the least-squares fit of a constant baseline
 * before t0 and a baseline plus a non-decreasing linear-quadratic upslope a1 (t - t0) + a2 (t -
 * t0)^2 (a1, a2 >= 0) after it, over the frames up to the curve's peak (Cheong et al., Phys.
 * Med. Biol. 48 (2003) N83, with a continuous knot searched on a grid of 1/20 of the shortest
 * frame interval). Non-finite values are skipped. Returns times_s[0] when the peak is one of the
 * first three frames (nothing before it to call a baseline). */
double fm_dce_bolus_arrival(const double *times_s, const double *curve, int n);

/* The population curve's own arrival by the same detector (its blood curve sampled every 0.1 s
 * from 0 to 60 s): placing a population curve at arrival(data) - this puts the onsets of both
 * in one place, whatever the shape of the curve's upslope. */
double fm_dce_population_onset_s(fm_dce_population which);

G_END_DECLS
