/* FLIM input preparation: bin width, k x k binning into the kernels' bin-major counts, ROI masks
 * and GA segments, fit range in bins, IRF and reference decays from files. */
#pragma once

#include <glib.h>

#include "app/core/dataset.h"

G_BEGIN_DECLS

#define FM_FLIM_MIN_BINS 8
#define FM_FLIM_MAX_BINNING 7

/* Bin width of an x,y,t dataset in ns: override_ps when > 0, else the t spacing when its unit
 * is "ns" or "ps", else the metadata "bin_width_ps", else "bin_width_ps=" in the TIFF
 * ImageDescription (metadata "description"). Errors (FM_ERROR_BAD_PARAM) when none is known. */
gboolean fm_flim_prep_bin_width(const fm_dataset *ds, double override_ps, double *bin_width_ns,
                                GError **error);

/* Checks that ds is an x,y,t decay stack with at least FM_FLIM_MIN_BINS bins and that the
 * binning fits the image; errors name the dataset and the field. */
gboolean fm_flim_prep_check(const fm_dataset *ds, int binning, GError **error);

/* Bin-major float counts (counts[b * W * H + y * W + x]) after k x k binning: each pixel holds
 * the sum of the k x k neighbourhood around it (offsets -(k-1)/2 .. k/2, clipped at the image
 * edge), so the image keeps its size. binning 1 copies. g_free the result. */
float *fm_flim_prep_counts(const fm_dataset *ds, int binning, GError **error);

/* The counts handed to the kernels: the dataset's own uint16 samples, uncopied, when it holds
 * uint16 and binning is 1 (TCSPC histograms then cross PCIe at 2 bytes per count); else the
 * float32 of fm_flim_prep_counts (k x k sums may exceed 65535), owned here. */
typedef struct {
    const void *data;   /* bin-major, n_bins x n_pixels */
    fm_pixel_type type; /* FM_PIXEL_U16 or FM_PIXEL_F32 */
    float *owned;       /* the float copy when one was made, else NULL */
} fm_flim_counts;

gboolean fm_flim_prep_counts_typed(const fm_dataset *ds, int binning, fm_flim_counts *counts,
                                   GError **error);
void fm_flim_counts_clear(fm_flim_counts *counts);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(fm_flim_counts, fm_flim_counts_clear)
/* One count, whatever the type. */
static inline double fm_flim_counts_at(const fm_flim_counts *c, gsize i)
{
    return c->type == FM_PIXEL_U16 ? (double)((const guint16 *)c->data)[i]
                                   : (double)((const float *)c->data)[i];
}

/* Fit range [start_ns, end_ns) to bins [*start, *end); 0/0 means the whole range and end 0
 * means "to the last bin". Error: "fit range 0–40 ns lies outside the data (0–25.6 ns)". */
gboolean fm_flim_prep_fit_range(double start_ns, double end_ns, int n_bins, double bin_width_ns,
                                int *start, int *end, GError **error);

/* Pixels to fit (1) from ROIs (GPtrArray of fm_roi*, may be NULL): inside any ROI without a
 * role or with role "fit"; every pixel when there is no such ROI. g_free the result. */
guint8 *fm_flim_prep_mask(GPtrArray *rois, int width, int height);

/* Union mask of the ROIs with the given role, or NULL when there is none. */
guint8 *fm_flim_prep_role_mask(GPtrArray *rois, const char *role, int width, int height);

/* GA segments: segment[p] in [0, *n_segments) or -1. ROIs of role "segment" define them (first
 * ROI containing the pixel wins); without any, automatic tiles of about tile_pixels pixels
 * (w x h with w * h = tile_pixels where a near-square factorisation exists: 32 -> 8 x 4, the
 * paper's GA-32). Only pixels with mask[p] != 0 get a segment; empty segments are dropped. */
int *fm_flim_prep_segments(GPtrArray *rois, const guint8 *mask, int width, int height,
                           int tile_pixels, int *n_segments);
/* The tile shape used for automatic segments. */
void fm_flim_prep_tile_shape(int tile_pixels, int *tile_width, int *tile_height);

/* A decay of n_bins values from a file: CSV/text with one value per line or "t,value" per line
 * ('#' comments and a non-numeric header line allowed), or a TIFF whose pages are the bins
 * (summed over the image: a single-pixel decay or a reference measurement), or a FLIM file
 * (.ptu/.pt3 point measurement, .sdt; an image is summed likewise). Normalised to sum 1.
 * what names it in messages ("IRF", "calibration reference"). g_free the result. */
float *fm_flim_prep_load_decay(const char *path, int n_bins, const char *what, GError **error);
/* The values of a decay file as recorded (GArray of double), with its bin width and the time of
 * its first bin in ns where the file gives them (a "t,value" text with even steps, taken as bin
 * starts; an image file with a bin width), else 0. Image files: .tif/.tiff/.sdt/.ptu/.pt3. */
GArray *fm_flim_prep_read_decay(const char *path, const char *what, double *bin_width_ns,
                                double *start_ns, GError **error);
/* Every value finite and >= 0, and not all zero; errors name the file and the value. */
gboolean fm_flim_prep_check_decay(const GArray *values, const char *path, const char *what,
                                  GError **error);

/* Photon sums per pixel over bins [start, end) of bin-major counts. g_free the result. */
double *fm_flim_prep_photons(const float *counts, int n_pixels, int start, int end);
/* The same from typed counts. */
double *fm_flim_prep_photons_typed(const fm_flim_counts *counts, int n_pixels, int start, int end);

G_END_DECLS
