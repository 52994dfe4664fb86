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

/* The maps a live run keeps (fm_live_save), written as they come: SAVE_ALL appends each frame's
 * map as a page of <dir>/<name>.tif (the file 'fluxmap-cli run' writes for that map), so memory
 * stays bounded whatever the run's length; SUMMARY keeps a running mean and the last frame;
 * a cumulative map (fm_live_output.cumulative, the OCT en-face) is kept once, in its final
 * state, in either mode. */
typedef struct fm_live_maps fm_live_maps;

/* A map file of a finished run: where it is, what it holds. */
typedef struct {
    char *name, *unit, *path; /* path absolute */
    fm_map_stats stats;
} fm_live_map_file;

void fm_live_map_file_free(fm_live_map_file *file);

/* dir NULL: nothing is kept (a run with no folder and no catalogue). expected_frames: the most
 * frames the run will give (0: unknown), which decides classic TIFF or BigTIFF as the offline
 * writer would. method_id goes into each file's description. */
fm_live_maps *fm_live_maps_new(fm_live_save mode, const char *dir, const char *method_id,
                               guint64 expected_frames);
void fm_live_maps_free(fm_live_maps *maps);
/* Takes one frame's maps; every call must give the same maps (the sizes of cumulative maps may
 * change). FALSE when a file could not be written (the run's maps are then incomplete). */
gboolean fm_live_maps_add(fm_live_maps *maps, const fm_live_output *output, GError **error);
guint64 fm_live_maps_frames(const fm_live_maps *maps);
/* Completes the files (SAVE_ALL: each stack closed; SUMMARY: <name>_mean over the run, NaN where
 * no frame was finite, and <name>_last; cumulative maps: <name> as it ended) and their
 * statistics, as fm_live_map_file* into files. Call before the step ends (the last frame's maps
 * are the step's). */
gboolean fm_live_maps_finish(fm_live_maps *maps, GPtrArray *files, GError **error);

/* A recording made during a live run (a file complete and readable). */
typedef struct {
    char *path; /* absolute */
    guint64 frames;
    int width, height;
    fm_pixel_type type;
    gboolean whole_run; /* from the first frame to the last: the maps' input */
} fm_live_recording;

void fm_live_recording_free(fm_live_recording *recording);

/* Records a live run as running (owned by this process, fm_catalogue_begin_run) when it starts:
 * the method, params, ROIs and, when recording from the start, the recording's path as its
 * dataset (hashed when the run completes); a replay not recorded passes the replayed file. A
 * process that dies mid-run leaves it running, and the next catalogue open marks it interrupted
 * with the recording listed. note: where the frames come from (fm_live_note_source's line), the
 * run's note from the start, so that an interrupted run still says it. Returns the run id or 0
 * with error. */
gint64 fm_catalogue_begin_live_run(fm_catalogue *cat, const char *method_id,
                                   const char *params_json, GPtrArray *rois,
                                   const char *record_path, fm_pixel_type record_type,
                                   const char *note, GError **error);
/* Completes run run_id (begun with fm_catalogue_begin_live_run) in one transaction: each
 * recording as a dataset (path and the file's sha256); the run done with the maps (files, of
 * fm_live_map_file*: a file in the run's folder runs/<id>/ is taken where it is, another is
 * linked or copied there), its dataset the recording that covered the whole run (if any), other
 * recordings and the ROI time course (csv_path, may be NULL) listed with it as exports ("tiff",
 * "csv"); the note (result->note, e.g. the camera lost) as its message. FALSE with error
 * (nothing of it recorded then; the run stays as it was). */
gboolean fm_catalogue_complete_live_run(fm_catalogue *cat, gint64 run_id, GPtrArray *recordings,
                                        const fm_result *result, GPtrArray *files,
                                        const char *csv_path, GError **error);
/* Removes a run begun with fm_catalogue_begin_live_run that has nothing to keep (it did not
 * start, or no frame came), with its folder, as if it had never been recorded. */
gboolean fm_catalogue_forget_live_run(fm_catalogue *cat, gint64 run_id, GError **error);
/* The folder a live run's maps go to when the run has no folder of its own: runs/<id>/. */
char *fm_catalogue_live_run_dir(fm_catalogue *cat, gint64 run_id);

G_END_DECLS
