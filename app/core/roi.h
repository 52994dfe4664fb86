/* fm_roi: named shapes on an image, rasterised to masks, with roles methods ask for. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
    FM_ROI_RECTANGLE = 0, /* points[0] and points[1] are opposite corners */
    FM_ROI_ELLIPSE,       /* bounding box corners, as for the rectangle */
    FM_ROI_POLYGON,       /* n points, closed implicitly */
    FM_ROI_MASK,          /* a pixel mask (from a label map): no points, see mask below */
} fm_roi_kind;

typedef struct {
    double x, y; /* image pixel coordinates; pixel (i,j) covers [i,i+1) x [j,j+1) */
} fm_point;

typedef struct {
    fm_roi_kind kind;
    char *name;
    char *role;     /* "aorta", "portal_vein", "segment", … or NULL */
    GArray *points; /* of fm_point */
    /* z index (0-based) of the slice the shape is drawn on in a volume (x, y, z[, t]); -1 (the
     * default) = the same shape on every slice. Several ROIs with one role on different slices
     * together form a volume of interest (DCE input VOIs). Addition to the original struct. */
    int slice;
    /* FM_ROI_MASK only: mask_width x mask_height bytes, 0 or 1, x fastest, pixel (i, j) of the
     * mask over pixel (i, j) of the image; NULL for the shapes. */
    guint8 *mask;
    int mask_width, mask_height;
} fm_roi;

fm_roi *fm_roi_new(fm_roi_kind kind, const char *name);
fm_roi *fm_roi_new_rectangle(const char *name, double x0, double y0, double x1, double y1);
fm_roi *fm_roi_new_ellipse(const char *name, double x0, double y0, double x1, double y1);
/* A mask ROI: copies width*height bytes of mask (non-zero = inside). */
fm_roi *fm_roi_new_mask(const char *name, const guint8 *mask, int width, int height);
void fm_roi_add_point(fm_roi *roi, double x, double y);
fm_roi *fm_roi_copy(const fm_roi *roi);
void fm_roi_free(fm_roi *roi);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fm_roi, fm_roi_free)

const char *fm_roi_kind_name(fm_roi_kind kind); /* "rectangle", "ellipse", "polygon", "mask" */
gboolean fm_roi_kind_parse(const char *text, fm_roi_kind *out);

/* A pixel is inside when its centre (i+0.5, j+0.5) is inside the shape.
 * Returns a width*height mask of 0/1 bytes (g_free it). */
guint8 *fm_roi_rasterise(const fm_roi *roi, int width, int height);
gsize fm_roi_count_pixels(const fm_roi *roi, int width, int height);

/* Statistics of a float map inside the ROI, NaN pixels skipped. */
typedef struct {
    gsize n;     /* finite pixels inside */
    double mean, sd, min, max;
} fm_roi_stats;
fm_roi_stats fm_roi_statistics(const fm_roi *roi, const float *map, int width, int height);

/* Pixel bounds of what the ROI covers: [x0, x1) x [y0, y1) in image pixel coordinates; FALSE
 * when it covers nothing (a mask of zeros, a shape without points). */
gboolean fm_roi_bounds(const fm_roi *roi, double *x0, double *y0, double *x1, double *y1);

/* JSON round trip: {"kind":"ellipse","name":"vessel","role":null,"points":[[x,y],...]}, plus
 * "slice":z only when slice >= 0 (files without it read as -1, every slice). A mask is
 * {"kind":"mask",...,"points":[],"size":[w,h],"runs":[start,length,...]}: the runs of inside
 * pixels, start = j*w + i in the row-major order, ascending and not touching.
 * fm_roi_list_from_json reads an array of such objects (a --roi FILE). */
char *fm_roi_to_json(const fm_roi *roi);
fm_roi *fm_roi_from_json(const char *json, GError **error);
GPtrArray *fm_roi_list_from_file(const char *path, GError **error); /* of fm_roi*, owns them */
/* The same JSON array, one ROI per line, as fm_roi_list_from_file reads it. */
gboolean fm_roi_list_to_file(const char *path, GPtrArray *rois, GError **error);

G_END_DECLS
