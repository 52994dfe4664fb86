/* IRF and reference decays from files onto the data's time bins: an IRF recorded with another bin
 * width or bin count (4096 bins of an SPCM IRF file against a 256-bin image) is resampled so
 * that its area and its timing are kept. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Area-preserving resampling: source bin j covers [src_start_ns + j src_bin_ns, + src_bin_ns)
 * and holds src[j] counts spread evenly over it; data bin b covers [b bin_width_ns,
 * (b + 1) bin_width_ns) and gets the counts of every source bin in the share of it that it
 * overlaps. Counts outside [0, n_bins bin_width_ns) are lost; out gets n_bins values. */
void fm_flim_resample_decay(const double *src, int n_src, double src_start_ns, double src_bin_ns,
                            int n_bins, double bin_width_ns, double *out);

/* A decay file (fm_flim_prep_read_decay) on the data's n_bins bins of bin_width_ns, normalised to
 * sum 1. The file's bins are taken as they are when it has n_bins values and no other bin width;
 * else resampled from its own bin width (a "t,value" time column, an image file's bin width) or,
 * when it gives none, on the assumption that it spans the data's time range (n_bins x
 * bin_width_ns), as an IRF measured with the same TAC range does. What was done is appended to
 * note (may be NULL). */
float *fm_flim_load_decay_resampled(const char *path, int n_bins, double bin_width_ns,
                                    const char *what, GString *note, GError **error);

G_END_DECLS
