/* Pieces of the live session (live.c) with one job each: rates over the last second
 * (live_stats.c), the ROI time course (live_roi_series.c), the maps kept of a run
 * (live_maps.c) and the catalogue record of a finished run (catalogue_live.c). */
#pragma once

#include "app/core/catalogue.h"
#include "app/core/live.h"

G_BEGIN_DECLS

/* Events per second over the last second: the times of the latest events in a ring. */
typedef struct {
    gint64 *times; /* monotonic microseconds */
    int capacity, head, count;
} fm_live_rate;

void fm_live_rate_init(fm_live_rate *rate);
void fm_live_rate_clear(fm_live_rate *rate);
void fm_live_rate_add(fm_live_rate *rate, gint64 now_us);
double fm_live_rate_per_s(const fm_live_rate *rate, gint64 now_us);

/* The ROI time course: the mean of the finite pixels of a map inside each ROI, one point per
 * frame (NaN when none is finite). */
typedef struct fm_live_roi_series fm_live_roi_series;

/* rois (fm_roi*, may be NULL or empty) over maps of width x height; masks are made once. */
fm_live_roi_series *fm_live_roi_series_new(GPtrArray *rois, int width, int height);
void fm_live_roi_series_free(fm_live_roi_series *series);
int fm_live_roi_series_n_rois(const fm_live_roi_series *series);
int fm_live_roi_series_n_points(const fm_live_roi_series *series);
/* Adds one point per ROI from map (width x height floats), at t_s, for the source's frame id. */
void fm_live_roi_series_add(fm_live_roi_series *series, const float *map, double t_s,
                            guint64 frame_id);
const double *fm_live_roi_series_values(const fm_live_roi_series *series, int roi);
const double *fm_live_roi_series_times(const fm_live_roi_series *series);
/* CSV: "frame,t_s,<roi name>,..." then one row per point ("nan" where no pixel was finite). */
gboolean fm_live_roi_series_write_csv(const fm_live_roi_series *series, GPtrArray *rois,
                                      const char *path, GError **error);

/* The maps a live run keeps (fm_live_save). */
typedef struct fm_live_maps fm_live_maps;

fm_live_maps *fm_live_maps_new(fm_live_save mode);
void fm_live_maps_free(fm_live_maps *maps);
/* Takes one frame's maps (copied); every call must give the same maps. */
void fm_live_maps_add(fm_live_maps *maps, const fm_live_output *output);
guint64 fm_live_maps_frames(const fm_live_maps *maps);
/* Moves the kept maps into result (SAVE_ALL: one stack per map, named as the step names them;
 * SUMMARY: <name>_mean over the run, NaN where no frame was finite, and <name>_last). */
void fm_live_maps_take(fm_live_maps *maps, fm_result *result);

/* A recording made during a live run (a file complete and readable). */
typedef struct {
    char *path; /* absolute */
    guint64 frames;
    int width, height;
    fm_pixel_type type;
    gboolean whole_run; /* from the first frame to the last: the maps' input */
} fm_live_recording;

void fm_live_recording_free(fm_live_recording *recording);

/* Records a finished live run in one transaction: each recording as a dataset (path and the
 * file's sha256); the run of method_id with params, rois and the maps (result; files[i] written
 * already, stats[i] computed), its dataset the recording that covered the whole run (if any),
 * other recordings and the ROI time course (csv_path, may be NULL) listed with it as exports
 * ("tiff", "csv"); status done, the note (result->note, e.g. the camera lost) as its message.
 * Returns the run id, or 0 with error (nothing is recorded then). */
gint64 fm_catalogue_add_live_run(fm_catalogue *cat, const char *method_id, const char *params_json,
                                 GPtrArray *rois, GPtrArray *recordings, const fm_result *result,
                                 const char *const *files, const fm_map_stats *stats,
                                 const char *csv_path, gint64 started_unix, GError **error);

G_END_DECLS
