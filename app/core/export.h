/* Export of maps: float32 TIFF with units, colour-mapped PNG with colorbar, ROI statistics CSV. */
#pragma once

#include <glib.h>
#include "colormap.h"
#include "result.h"
#include "roi.h"

G_BEGIN_DECLS

/* One page per frame; ImageDescription holds "method=<id>; map=<name>; unit=<unit>; <extra>". */
gboolean fm_export_tiff(const char *path, const fm_map *map, const char *method_id,
                        const char *extra_description, GError **error);
/* Frame `frame` coloured with cmap over [vmin, vmax], NaN transparent, colorbar with unit. */
gboolean fm_export_png(const char *path, const fm_map *map, int frame, fm_colormap cmap,
                       double vmin, double vmax, GError **error);
/* Header: roi,role,map,unit,frame,n,mean,sd,min,max — one row per ROI x map x frame. */
gboolean fm_export_roi_csv(const char *path, const fm_result *result, GPtrArray *rois,
                           GError **error);
/* Appends text as one CSV field: quoted (quotes doubled) when it holds a comma, quote or line
 * break; nothing for NULL. */
void fm_csv_append_field(GString *out, const char *text);

G_END_DECLS
