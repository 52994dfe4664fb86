/* FLIM defaults read from the data: time zero and the fit window from the summed decay, the
 * background before the rise, and a photon threshold that follows the image's brightness. */
#pragma once

#include <glib.h>

#include "app/core/dataset.h"
#include "app/core/flim/flim_prep.h"

G_BEGIN_DECLS

/* Parameters whose value FM_FLIM_AUTO (any negative value) means "choose from the data". */
#define FM_FLIM_AUTO (-1.0)

/* The photon threshold never goes below this when chosen from the data: fewer photons give no
 * usable lifetime with any method here. */
#define FM_FLIM_AUTO_MIN_PHOTONS_FLOOR 10.0
/* ... and is this share of the 99th percentile of the photons per pixel: 100 photons on the
 * paper's 2000-photon workload, the floor on a live-cell image of a few dozen photons. */
#define FM_FLIM_AUTO_MIN_PHOTONS_SHARE 0.05

/* What the summed decay says about the time axis (bins of the data). */
typedef struct {
    int peak;             /* bin of the maximum of the summed decay */
    int rise;             /* first bin of the rise: bins [0, rise) lie before it */
    int period_end;       /* one past the last usable bin: the laser period or where counts drop */
    int background_end;   /* one past the last bin before the tail sinks into the background,
                             or period_end when the background is unknown or zero */
    double background;    /* counts per bin per pixel before the rise (the median of bins
                             [background_first, + background_bins)), or NaN when too few */
    int background_first; /* the first bin with any count (the TAC's measured range) */
    int background_bins;
} fm_flim_decay_shape;

/* Summed decay of every pixel (n_bins doubles), kept on the dataset for later runs. */
GBytes *fm_flim_decay_sum(fm_dataset *ds);

/* Reads the shape of a summed decay of n_pixels pixels. period_ns: the laser period, or 0 when
 * unknown (then the data's own end, less trailing bins whose counts drop off). */
void fm_flim_decay_shape_of(const double *decay, int n_bins, int n_pixels, double bin_width_ns,
                            double period_ns, fm_flim_decay_shape *shape);

/* First bin where the IRF reaches 1 % of its maximum: where a fit that convolves it starts. */
int fm_flim_irf_onset(const float *irf, int n_bins);

/* How the fit window is chosen where it is "auto". */
typedef enum {
    FM_FLIM_WINDOW_TAIL = 0, /* from the peak of the summed decay, before the background */
    FM_FLIM_WINDOW_IRF,      /* from the IRF's onset (the fit convolves the IRF) */
    FM_FLIM_WINDOW_PERIOD,   /* the whole period (a calibrated phasor) */
} fm_flim_window_kind;

/* The fit window a run uses, in bins, and how it was found. */
typedef struct {
    int start, end; /* [start, end) */
    gboolean start_auto, end_auto;
    fm_flim_window_kind kind;
    gboolean to_background; /* the auto end is where the tail meets the background */
    fm_flim_decay_shape shape;
} fm_flim_window;

/* The fit window for fit_start_ns/fit_end_ns as given (>= 0; end 0 = the last bin) or chosen
 * from the summed decay where negative (FM_FLIM_AUTO): start at the peak (TAIL), the IRF's onset
 * (IRF, irf needed) or bin 0 (PERIOD); end before the tail sinks into the background (TAIL,
 * unless to_period_end: a fitted background, a phasor), else at the end of the laser period. Errors
 * as fm_flim_prep_fit_range. period_ns 0 = unknown. */
gboolean fm_flim_window_choose(fm_dataset *ds, double start_ns, double end_ns, double bin_width_ns,
                               double period_ns, fm_flim_window_kind kind, gboolean to_period_end,
                               const float *irf, fm_flim_window *window, GError **error);

/* The laser period in ns from a repetition rate in MHz (> 0), else the dataset's rep_rate_mhz
 * metadata, else 0. */
double fm_flim_period_ns(const fm_dataset *ds, double rep_rate_mhz);

/* A photon threshold from the photons per pixel: the share above of the 99th percentile over the
 * pixels with any photon, never below the floor. */
double fm_flim_auto_min_photons(const double *photons, int n_pixels);

/* The k of k x k binning that would lift the median of the pixels with any photon to
 * min_photons (2..FM_FLIM_MAX_BINNING), or 0 when none would. */
int fm_flim_suggest_binning(const double *photons, int n_pixels, double min_photons);

G_END_DECLS
