/* Opens any supported dataset file by its content (magic bytes) and extension. */
#pragma once

#include <gio/gio.h>
#include "app/core/dataset.h"
#include "app/core/io/oct_raw.h"
#include "app/core/params.h"

G_BEGIN_DECLS

/* .tif/.tiff (LSI stacks or FLIM time-bin pages), .sdt (Becker & Hickl), .ptu and .pt3 (PicoQuant T3);
 * .nii/.nii.gz (NIfTI-1/2) and a folder (DICOM series) open as 4-D DCE x,y,z,t float32.
 * Progress (0..1) for slow readers such as .ptu histogramming; may be NULL; cancellable may be
 * NULL. FLIM datasets have dims x, y, t with t spacing = bin width in ns and unit "ns", and
 * metadata "bin_width_ps", "tac_range_ns", "rep_rate_mhz" where the file gives them. */
fm_dataset *fm_dataset_open(const char *path, void (*progress)(double fraction, gpointer user),
                            gpointer progress_user, GCancellable *cancellable, GError **error);
/* The same, and a file whose content names no format opens as SD-OCT raw spectra with
 * raw_layout (which wins over a sidecar), whatever its extension; its size is checked against
 * the layout (fm_oct_raw_check_size). raw_layout NULL: as fm_dataset_open. */
fm_dataset *fm_dataset_open_with_layout(const char *path, const fm_oct_raw_layout *raw_layout,
                                        void (*progress)(double fraction, gpointer user),
                                        gpointer progress_user, GCancellable *cancellable,
                                        GError **error);
/* The same with the raw layout from a method's parameters where its schema has them
 * (pixels_per_aline and alines_per_bscan > 0, raw_format); params may be NULL. */
fm_dataset *fm_dataset_open_with_params(const char *path, const fm_params *params,
                                        void (*progress)(double fraction, gpointer user),
                                        gpointer progress_user, GCancellable *cancellable,
                                        GError **error);

/* The raw layout of a method's parameters (see fm_dataset_open_with_params); FALSE when they
 * give none. */
gboolean fm_dataset_layout_from_params(const fm_params *params, fm_oct_raw_layout *layout);
/* As fm_dataset_open_with_layout, for files that hold several datasets: part N >= 1 opens an .sdt
 * file's N-th dataset (its blocks in order, one per routing channel where a block holds several) or
 * a .ptu/.pt3 file's detector channel N, or a DICOM folder's series N (of those
 * fm_dicom_list_series lists; metadata "dicom_folder_series" and "dicom_folder_part" where it holds
 * several); 0 the reader's default (the first dataset; every channel summed; a folder's only
 * series). A part of another format is FM_ERROR_BAD_PARAM. */
fm_dataset *fm_dataset_open_part(const char *path, int part, const fm_oct_raw_layout *raw_layout,
                                 void (*progress)(double fraction, gpointer user),
                                 gpointer progress_user, GCancellable *cancellable, GError **error);

/* The parts of the file ds came from that a user can choose among, from the reader's metadata
 * (empty when there is one); *current is the index of the one ds holds. */
typedef struct {
    int part;       /* for fm_dataset_open_part */
    char label[64]; /* "Dataset 2 of 3", "Detector channel 1" */
} fm_dataset_part;
GArray *fm_dataset_parts(const fm_dataset *ds, int *current);

/* The formats fm_dataset_open reads, for file choosers: a name and shell patterns (every case a
 * file system may hold them in: GTK 3 matches patterns case-sensitively). */
typedef struct {
    const char *name; /* translatable (N_), say what the format holds */
    const char *patterns[9];
} fm_file_format;

const fm_file_format *fm_dataset_formats(gsize *n_formats);

G_END_DECLS
