/* Uncompressed DICOM pixel samples (one frame, host byte order) to float32 after rescale. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* How one frame's stored samples are laid out (Image Pixel Module, PS3.3 C.7.6.3). */
typedef struct {
    int rows, cols;
    int samples_per_pixel; /* 1 (grey) or 3 (colour) */
    int bits_allocated;    /* 8, 16 or 32 */
    int bits_stored;       /* <= bits_allocated; the stored bits sit at the bottom */
    gboolean is_signed;    /* PixelRepresentation 1: two's complement in bits_stored bits */
    gboolean by_plane;     /* PlanarConfiguration 1: RRR..GGG..BBB.. instead of RGBRGB.. */
    /* Photometric interpretation of colour samples: FALSE for RGB; YBR_FULL and YBR_FULL_422
     * (PS3.3 C.7.6.3.1.2) are converted to RGB. */
    gboolean ybr_full, ybr_full_422;
    double slope, intercept; /* RescaleSlope / RescaleIntercept (or DoseGridScaling) */
} fm_dicom_pixel_layout;

/* Bytes one frame occupies (YBR_FULL_422 stores two chroma samples per pixel pair). */
gsize fm_dicom_frame_bytes(const fm_dicom_pixel_layout *layout);

/* NULL when the layout can be converted, else a static English reason (for a GError). */
const char *fm_dicom_layout_problem(const fm_dicom_pixel_layout *layout);

/* Converts one frame: src holds fm_dicom_frame_bytes() bytes, samples in host byte order;
 * dst receives samples_per_pixel planes of cols x rows floats (R, G, B for colour), each value
 * stored × slope + intercept. */
void fm_dicom_frame_to_float(const fm_dicom_pixel_layout *layout, const guint8 *src, float *dst);

G_END_DECLS
