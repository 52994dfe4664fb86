/* SD-OCT processing setup from oct.bscan parameters, one A-line's intermediate spectra for the
 * GUI, and point-spread-function figures (FWHM, peak SNR) of a mirror peak. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"
#include "app/core/params.h"
#include "kernels/oct/oct.h"

G_BEGIN_DECLS

/* Everything the kernels need, built from a spectra dataset and oct.bscan parameters. */
typedef struct {
    fm_oct_params kernel; /* points into the arrays below */
    int n_pixels;
    double *lambda_nm;        /* n_pixels, from the calibration */
    double *k_source;         /* n_pixels, s(n) */
    float *background;        /* n_pixels for background file/reference, else NULL */
    double um_per_bin;        /* depth step of one output bin */
    char *calibration_source; /* file path or "polynomial a0,a1,..." for notes */
} fm_oct_setup;

void fm_oct_setup_free(fm_oct_setup *setup);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fm_oct_setup, fm_oct_setup_free)

/* The dataset as spectra (dims pixel, aline, bscan; uint16 or float32): a raw file opened
 * without sidecar is decoded with the pixels_per_aline, alines_per_bscan and raw_format
 * parameters, uint8 is widened. Returns a new reference. */
fm_dataset *fm_oct_spectra_from_dataset(fm_dataset *dataset, const fm_params *params,
                                        GError **error);
/* Calibration (calibration_file, else lambda_polynomial_nm, else the sidecar's calibration
 * file), resampling, window, dispersion and background from the parameters. Errors name the
 * parameter or file: FM_ERROR_BAD_PARAM or FM_ERROR_BAD_INPUT. */
fm_oct_setup *fm_oct_setup_new(const fm_dataset *spectra, const fm_params *params, GError **error);

/* One A-line's spectrum at each stage (n_pixels floats each, any may be NULL): as recorded,
 * background-subtracted (B-scan mean for background=bscan) and resampled to linear k. */
gboolean fm_oct_stages_aline(const fm_dataset *spectra, const fm_params *params, int bscan,
                             int aline, float *raw, float *subtracted, float *resampled,
                             GError **error);

/* Copy of B-scan `bscan` of a spectra dataset as a one-B-scan dataset (metadata kept). */
fm_dataset *fm_oct_spectra_bscan(const fm_dataset *spectra, int bscan);

typedef struct {
    int peak_bin;
    double peak_db;
    double fwhm_bins, fwhm_um; /* full width at half maximum of |A| (-6.02 dB), interpolated */
    double noise_db;           /* RMS magnitude of the noise bins, in dB */
    double snr_db;             /* peak_db - noise_db */
} fm_oct_psf;

/* PSF figures of the strongest peak at or beyond min_bin in one A-line (dB, n_depth bins).
 * Noise bins: from min_bin on, more than guard_bins away from the peak. */
void fm_oct_psf_measure(const float *aline_db, int n_depth, double um_per_bin, int min_bin,
                        int guard_bins, fm_oct_psf *psf);
/* Mean over the A-lines of a B-scan (depth fastest, as the kernels give it) of the figures,
 * the peak taken near the strongest bin of the mean A-line. */
void fm_oct_psf_measure_bscan(const float *bscan_db, int n_alines, int n_depth, double um_per_bin,
                              int min_bin, int guard_bins, fm_oct_psf *psf);

G_END_DECLS
