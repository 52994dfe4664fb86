/* FmOctViews: SD-OCT result views: grey B-scan with dB floor/ceiling, B-scan slider and
 * playback, en-face projection over a chosen depth range, A-line and spectrum plots. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/dataset.h"
#include "app/core/params.h"
#include "app/core/result.h"
#include "app/gui/map-view.h"

G_BEGIN_DECLS

#define FM_TYPE_OCT_VIEWS (fm_oct_views_get_type())
G_DECLARE_FINAL_TYPE(FmOctViews, fm_oct_views, FM, OCT_VIEWS, GtkBox)

GtkWidget *fm_oct_views_new(void);
/* The spectra (dims pixel, aline, bscan; a new reference is kept) and the parameters the
 * spectrum plot's stages use (copied); either may be NULL. */
void fm_oct_views_set_spectra(FmOctViews *views, fm_dataset *spectra, const fm_params *params);
/* An oct.bscan result (takes it) with the depth step of its bins; 0 when unknown (its spectra
 * are not open): depth is then shown and labelled in bins. */
void fm_oct_views_set_result(FmOctViews *views, fm_result *result, double um_per_bin);
/* The depth axis label of the A-line plot ("depth (µm)" or "depth (bin)"). */
const char *fm_oct_views_get_depth_label(FmOctViews *views);
const fm_result *fm_oct_views_get_result(FmOctViews *views);
void fm_oct_views_set_bscan(FmOctViews *views, int bscan);
int fm_oct_views_get_bscan(FmOctViews *views);
/* Plots A-line `aline` of the B-scan on show and its spectrum stages. */
void fm_oct_views_show_aline(FmOctViews *views, int aline);
void fm_oct_views_set_db_range(FmOctViews *views, double floor_db, double ceiling_db);
void fm_oct_views_set_enface_range(FmOctViews *views, double start_um, double end_um);
void fm_oct_views_set_playing(FmOctViews *views, gboolean playing);
/* B-scans shown by playback since it last started. */
int fm_oct_views_get_play_count(FmOctViews *views);
/* The lateral steps between A-lines and between B-scans in µm of the spectra on show (0 when
 * unknown), for the next result: the B-scan and en-face are drawn at their true aspect. */
void fm_oct_views_set_spacing(FmOctViews *views, double aline_um, double bscan_um);
/* The B-scan's width over its depth as drawn: physical when the steps are known, else one A-line
 * as wide as one depth bin is deep; 0 without a result. */
double fm_oct_views_get_bscan_aspect(FmOctViews *views);
/* Screen columns of the B-scan image per A-line (the image is resampled to that aspect). */
double fm_oct_views_get_columns_per_aline(FmOctViews *views);
/* Live frames (a camera, or a file replayed as one): the B-scan slider and Play are hidden,
 * the spectrum plot says the spectra are not kept, the info line says text (may be NULL);
 * um_per_bin (0: unknown, depth in bins) and the lateral steps (fm_oct_views_set_spacing) give
 * the depth axis and the B-scan's aspect. FALSE (or a file's result) gives the file's views
 * back. */
void fm_oct_views_set_live(FmOctViews *views, gboolean live, double um_per_bin, const char *text);
gboolean fm_oct_views_is_live(FmOctViews *views);
void fm_oct_views_set_live_text(FmOctViews *views, const char *text);
/* The newest live B-scan (A-lines across, depth down) at its true aspect, its centre A-line in
 * the A-line plot, and the en-face image so far (a row per B-scan); both may be NULL. */
void fm_oct_views_show_live(FmOctViews *views, const fm_map *bscan, const fm_map *enface);
/* dB range, en-face depth range and spectrum stage, for the page's side panel. */
GtkWidget *fm_oct_views_get_display_controls(FmOctViews *views);
FmMapView *fm_oct_views_get_bscan_view(FmOctViews *views);
FmMapView *fm_oct_views_get_enface_view(FmOctViews *views);

G_END_DECLS
