/* TCSPC FLIM simulator: Poisson photon decays with known lifetimes, for tests and demos. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"

G_BEGIN_DECLS

typedef enum {
    FM_FLIM_SIM_BARS = 0, /* single-exponential vertical bars, tau = 2, 2.5, 3, 4 ns */
    FM_FLIM_SIM_BIEXP,    /* bi-exponential, fixed tauD and tauF, fD 0.8 -> 0.2 left to right */
} fm_flim_sim_pattern;

#define FM_FLIM_SIM_N_BARS 4

typedef struct {
    fm_flim_sim_pattern pattern;
    int width, height, n_bins;
    double bin_width_ps;
    double photons;       /* mean photons emitted per pixel (Poisson), before the window cut */
    double irf_sigma_ns;  /* Gaussian IRF sd; 0 = none (decays start at t = 0) */
    double irf_offset_ns; /* IRF centre when irf_sigma_ns > 0 */
    double background;    /* mean background counts per bin (Poisson), uniform in time */
    double tau_d_ns;      /* biexp: slow (donor) lifetime */
    double tau_f_ns;      /* biexp: fast (FRET) lifetime */
    double fraction_left, fraction_right; /* biexp: fD at the first and the last column */
    guint64 seed;
} fm_flim_sim_params;

/* The paper's workload: bars, 512 x 512, 256 bins x 100 ps, 1500 photons, no IRF, seed 1;
 * biexp values tauD = 2.5 ns, tauF = 0.8 ns, fD 0.8 -> 0.2. */
void fm_flim_sim_defaults(fm_flim_sim_params *p);
const char *fm_flim_sim_pattern_name(fm_flim_sim_pattern pattern); /* "bars", "biexp" */
gboolean fm_flim_sim_pattern_parse(const char *text, fm_flim_sim_pattern *out);

/* Truth of column x: bars give the mono lifetime (tau_slow = tau, fraction 1, tau_fast NaN);
 * biexp gives tauF, tauD and the amplitude fraction fD of tauD. */
typedef struct {
    double tau_ns;      /* mono tau, or the amplitude-weighted mean for biexp */
    double tau_fast_ns; /* NaN for bars */
    double tau_slow_ns;
    double fraction_d; /* amplitude fraction of tau_slow */
} fm_flim_sim_truth;
fm_flim_sim_truth fm_flim_sim_truth_at(const fm_flim_sim_params *p, int x);
/* Bar index 0..3 of column x (bars pattern). */
int fm_flim_sim_bar_of(const fm_flim_sim_params *p, int x);
extern const double fm_flim_sim_bar_tau_ns[FM_FLIM_SIM_N_BARS];

/* The IRF as the kernels want it: n_bins values, the Gaussian integrated over each bin and
 * normalised to sum 1; NULL when irf_sigma_ns is 0. g_free it. */
float *fm_flim_sim_irf(const fm_flim_sim_params *p);

/* x, y, t uint16 counts; t spacing = bin width in ns (unit "ns"), metadata bin_width_ps,
 * tac_range_ns, simulator, pattern, seed. Same seed, same counts, whatever the thread count. */
fm_dataset *fm_flim_simulate(const fm_flim_sim_params *p, GError **error);

G_END_DECLS
