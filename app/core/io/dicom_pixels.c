/* Uncompressed DICOM pixel samples (one frame, host byte order) to float32 after rescale. */
#include "dicom_pixels.h"

#include <math.h>
#include <string.h>

gsize fm_dicom_frame_bytes(const fm_dicom_pixel_layout *layout)
{
    gsize pixels = (gsize)layout->rows * (gsize)layout->cols;
    if (layout->ybr_full_422)
        return pixels * 2 * (gsize)(layout->bits_allocated / 8); /* Y Y Cb Cr per 2 pixels */
    return pixels * (gsize)layout->samples_per_pixel * (gsize)(layout->bits_allocated / 8);
}

const char *fm_dicom_layout_problem(const fm_dicom_pixel_layout *layout)
{
    if (layout->rows < 1 || layout->cols < 1)
        return "image without Rows/Columns";
    if (layout->samples_per_pixel != 1 && layout->samples_per_pixel != 3)
        return "only 1 (grey) or 3 (colour) samples per pixel are supported";
    if (layout->bits_allocated != 8 && layout->bits_allocated != 16 && layout->bits_allocated != 32)
        return "only 8, 16 or 32 bits allocated per sample are supported (1-bit "
               "segmentations are not)";
    if (layout->bits_stored < 1 || layout->bits_stored > layout->bits_allocated)
        return "BitsStored is 0 or exceeds BitsAllocated";
    if ((layout->ybr_full || layout->ybr_full_422) &&
        (layout->samples_per_pixel != 3 || layout->bits_allocated != 8))
        return "YBR colour is only defined for 3 samples of 8 bits";
    if (layout->ybr_full_422 && layout->cols % 2 != 0)
        return "YBR_FULL_422 needs an even number of columns";
    if (!isfinite(layout->slope) || !isfinite(layout->intercept) || layout->slope == 0.0)
        return "RescaleSlope/Intercept are not finite numbers (or the slope is 0)";
    return NULL;
}

/* Sample i of the frame as an integer, stored bits only, sign-extended where signed (PS3.5
 * 8.1.1: bits above BitsStored are not part of the value). */
static double stored_sample(const fm_dicom_pixel_layout *l, const guint8 *src, gsize i)
{
    guint32 raw;
    if (l->bits_allocated == 8) {
        raw = src[i];
    } else if (l->bits_allocated == 16) {
        guint16 v;
        memcpy(&v, src + 2 * i, 2);
        raw = v;
    } else {
        memcpy(&raw, src + 4 * i, 4);
    }
    int bits = l->bits_stored;
    if (bits < 32)
        raw &= (1u << bits) - 1u;
    if (l->is_signed && bits < 32 && (raw >> (bits - 1)) != 0)
        return (double)raw - (double)(1ull << bits);
    if (l->is_signed && bits == 32)
        return (double)(gint32)raw;
    return (double)raw;
}

/* YCbCr full range (JFIF / PS3.3 C.7.6.3.1.2) to RGB, rounded and clamped to 8 bits. */
static void ybr_to_rgb(double y, double cb, double cr, double rgb[3])
{
    double v[3] = {y + 1.402 * (cr - 128.0), y - 0.344136 * (cb - 128.0) - 0.714136 * (cr - 128.0),
                   y + 1.772 * (cb - 128.0)};
    for (int c = 0; c < 3; c++)
        rgb[c] = fmin(255.0, fmax(0.0, floor(v[c] + 0.5)));
}

void fm_dicom_frame_to_float(const fm_dicom_pixel_layout *l, const guint8 *src, float *dst)
{
    gsize plane = (gsize)l->rows * (gsize)l->cols;
    int spp = l->samples_per_pixel;
    if (l->ybr_full_422) {
        /* Y0 Y1 Cb Cr: one chroma pair for each two horizontally adjacent pixels. */
        for (gsize p = 0; p < plane; p += 2) {
            const guint8 *g = src + p * 2;
            for (int k = 0; k < 2; k++) {
                double rgb[3];
                ybr_to_rgb(g[k], g[2], g[3], rgb);
                for (int c = 0; c < 3; c++)
                    dst[c * plane + p + k] = (float)(rgb[c] * l->slope + l->intercept);
            }
        }
        return;
    }
    for (gsize p = 0; p < plane; p++) {
        double v[3];
        for (int c = 0; c < spp; c++)
            v[c] = stored_sample(l, src, l->by_plane ? c * plane + p : p * spp + c);
        if (l->ybr_full) {
            double rgb[3];
            ybr_to_rgb(v[0], v[1], v[2], rgb);
            memcpy(v, rgb, sizeof rgb);
        }
        for (int c = 0; c < spp; c++)
            dst[c * plane + p] = (float)(v[c] * l->slope + l->intercept);
    }
}
