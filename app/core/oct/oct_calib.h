/* SD-OCT spectrometer calibration (wavelength per pixel) and background spectra. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"

G_BEGIN_DECLS

/* Wavelength per pixel from a CSV file, one value (nm) a line; blank lines and lines starting
 * with '#' are skipped, and a first line that is not a number is taken as a header. The count
 * must equal n_pixels and the values be strictly monotonic (FM_ERROR_BAD_INPUT naming the file
 * and the line). Returns n_pixels doubles (g_free them). */
double *fm_oct_calib_read_csv(const char *path, int n_pixels, GError **error);
/* lambda(n) = a0 + a1 n + a2 n^2 + a3 n^3 (nm, n the pixel index) from "a0,a1,a2,a3" (fewer
 * coefficients are allowed, missing ones are zero). Errors are FM_ERROR_BAD_PARAM. */
double *fm_oct_calib_from_polynomial(const char *coefficients, int n_pixels, GError **error);
/* Strictly increasing or strictly decreasing, all finite and positive; label names the source. */
gboolean fm_oct_calib_check(const double *lambda_nm, int n_pixels, const char *label,
                            GError **error);
gboolean fm_oct_calib_write_csv(const char *path, const double *lambda_nm, int n_pixels,
                                GError **error);
/* Depth step of one FFT bin after resampling to the uniform k grid between the first and last
 * pixel's wavenumber: dz = pi / (N dk) in micrometres (optical path, in air), dk = |k_last -
 * k_first| / (N - 1). */
double fm_oct_calib_um_per_bin(const double *lambda_nm, int n_pixels);

/* Mean spectrum (n_pixels floats, g_free) over the A-lines of B-scan `bscan` of a spectra
 * dataset (dims pixel, aline, bscan), or over the whole file for bscan < 0. */
float *fm_oct_background_mean(const fm_dataset *spectra, int bscan);
/* Mean spectrum of a separate reference file (reference arm only), opened like any dataset
 * (raw with sidecar, TIFF); its pixel count must equal n_pixels. */
float *fm_oct_background_from_file(const char *path, int n_pixels, GError **error);

G_END_DECLS
