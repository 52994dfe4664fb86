/* SD-OCT spectra simulator: reflectors at known depths seen by a spectrometer linear in
 * wavelength, with shot noise and a fixed-pattern background. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"

G_BEGIN_DECLS

typedef enum {
    FM_OCT_SIM_MIRROR = 0, /* one mirror at mirror_depth_um in every A-line (PSF tests) */
    FM_OCT_SIM_LAYERS,     /* a curved layered sample for images and volumes */
} fm_oct_sim_sample;

#define FM_OCT_SIM_N_LAYERS 4

typedef struct {
    fm_oct_sim_sample sample;
    int pixels_per_aline; /* 2048 as in the paper */
    int alines_per_bscan;
    int n_bscans;
    double center_nm; /* Gaussian source: 840 nm, 45 nm FWHM as in the paper */
    double fwhm_nm;
    double lambda_first_nm; /* spectrometer linear in lambda from first to last pixel */
    double lambda_last_nm;
    double mirror_depth_um;     /* optical path difference of the mirror */
    double mirror_reflectivity; /* power reflectivity relative to the reference arm */
    double peak_counts;         /* reference-arm signal at the source peak, counts */
    int bits;                   /* 12 (default) or 16: saturation level of the camera */
    gboolean shot_noise;
    gboolean fixed_pattern; /* per-pixel dark offset pattern, identical in every A-line */
    guint64 seed;
} fm_oct_sim_params;

void fm_oct_sim_defaults(fm_oct_sim_params *p);
gboolean fm_oct_sim_sample_parse(const char *text, fm_oct_sim_sample *sample);
const char *fm_oct_sim_sample_name(fm_oct_sim_sample sample);
/* Wavelength of pixel n (nm), linear in n. Fills n_pixels values of lambda_nm. */
void fm_oct_sim_wavelengths(const fm_oct_sim_params *p, double *lambda_nm);
/* Layer depths (um) and reflectivities at A-line a of B-scan b for FM_OCT_SIM_LAYERS. */
void fm_oct_sim_layers_at(const fm_oct_sim_params *p, int bscan, int aline,
                          double depth_um[FM_OCT_SIM_N_LAYERS],
                          double reflectivity[FM_OCT_SIM_N_LAYERS]);
/* Coherence length (FWHM of the axial PSF in optical path) of a Gaussian source:
 * l_c = (2 ln 2 / pi) lambda0^2 / dlambda. */
double fm_oct_sim_coherence_length_um(const fm_oct_sim_params *p);

/* Spectra, uint16 with dims pixel, aline, bscan. Same seed, same spectra, whatever the thread
 * count. */
fm_dataset *fm_oct_simulate(const fm_oct_sim_params *p, GError **error);
/* Reference-arm-only spectra (n_alines A-lines, one B-scan) with the same fixed pattern and
 * noise model: the separate background file of a real system. */
fm_dataset *fm_oct_simulate_reference(const fm_oct_sim_params *p, int n_alines, GError **error);

G_END_DECLS
