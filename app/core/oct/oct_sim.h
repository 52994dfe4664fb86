/* SD-OCT spectra simulator: reflectors at known depths seen by a spectrometer linear in
 * wavelength, with shot noise and a fixed-pattern background. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"

G_BEGIN_DECLS

typedef enum {
    FM_OCT_SIM_MIRROR = 0, /* one mirror at mirror_depth_um in every A-line (PSF tests) */
    FM_OCT_SIM_LAYERS,     /* a curved layered sample with an inclusion, for images and volumes */
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
    double scan_width_um;       /* lateral extent across the A-lines of a B-scan */
    double scan_length_um;      /* lateral extent across the B-scans */
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
/* Layer depths (um) and reflectivities at A-line a of B-scan b for FM_OCT_SIM_LAYERS (the
 * layers below an inclusion's top are in its shadow: their reflectivity is lower there). */
void fm_oct_sim_layers_at(const fm_oct_sim_params *p, int bscan, int aline,
                          double depth_um[FM_OCT_SIM_N_LAYERS],
                          double reflectivity[FM_OCT_SIM_N_LAYERS]);

/* The FM_OCT_SIM_LAYERS sample's inclusion (a vessel-like ellipsoid below the surface, off the
 * volume's centre): where A-line a of B-scan b crosses it, its top and bottom depths (um) and
 * their reflectivities; FALSE where it does not. The en-face image shows it as a bright disc. */
#define FM_OCT_SIM_INCLUSION_U 0.12         /* centre across the A-lines, -0.5..0.5 */
#define FM_OCT_SIM_INCLUSION_V 0.08         /* centre across the B-scans, -0.5..0.5 */
#define FM_OCT_SIM_INCLUSION_RADIUS 0.2     /* lateral radius, a fraction of the scan */
#define FM_OCT_SIM_INCLUSION_DEPTH_UM 150.0 /* centre below the surface */
#define FM_OCT_SIM_INCLUSION_HALF_UM 90.0   /* half its height at its centre */
#define FM_OCT_SIM_INCLUSION_R_TOP 1e-2
#define FM_OCT_SIM_INCLUSION_R_BOTTOM 3e-3
#define FM_OCT_SIM_SHADOW 0.25 /* reflectivity factor of the layers below an inclusion */
gboolean fm_oct_sim_inclusion_at(const fm_oct_sim_params *p, int bscan, int aline, double *top_um,
                                 double *bottom_um);
/* Lateral step between A-lines and between B-scans (um): scan extents over their counts. */
double fm_oct_sim_aline_spacing_um(const fm_oct_sim_params *p);
double fm_oct_sim_bscan_spacing_um(const fm_oct_sim_params *p);
/* Coherence length (FWHM of the axial PSF in optical path) of a Gaussian source:
 * l_c = (2 ln 2 / pi) lambda0^2 / dlambda. */
double fm_oct_sim_coherence_length_um(const fm_oct_sim_params *p);

/* Spectra, uint16 with dims pixel, aline, bscan, with the lateral steps as metadata
 * (FM_OCT_META_ALINE_SPACING, FM_OCT_META_BSCAN_SPACING). Same seed, same spectra, whatever
 * the thread count. */
fm_dataset *fm_oct_simulate(const fm_oct_sim_params *p, GError **error);
/* Reference-arm-only spectra (n_alines A-lines, one B-scan) with the same fixed pattern and
 * noise model: the separate background file of a real system. */
fm_dataset *fm_oct_simulate_reference(const fm_oct_sim_params *p, int n_alines, GError **error);

G_END_DECLS
