/* Live runs: frames from a frame source through a method's per-frame step, to a recorder (every
 * frame), the maps, an ROI time course and a display that takes what it can. Knows no family:
 * a method that runs live has fm_method.live (lsi.spatial, lsi.temporal, oct.bscan ...). */
#pragma once

#include <gio/gio.h>
#include "io/frame_source.h"
#include "method.h"

G_BEGIN_DECLS

typedef struct fm_live_step fm_live_step; /* a family's per-frame state, opaque here */

/* This frame's outputs, borrowed from the step until its next call: maps of one frame each
 * (n_frames 1), e.g. contrast and sfi, or bscan_db and the en-face image built so far.
 * primary is the map the display and the ROI time course use (sfi, bscan_db). */
typedef struct {
    gboolean ready; /* FALSE while a temporal window fills */
    const fm_map *const *maps;
    int n_maps;
    int primary;
    /* Bit i set: maps[i] is cumulative, the state built so far over the run (the OCT en-face,
     * a row per B-scan), not this frame's map: a run keeps it once, as it ended. */
    guint32 cumulative;
    /* Pipelined steps (fm_live_ops.flush set): the frame these outputs are of, as it was given
     * to frame() or flush() returned it; NULL: no output this call (the frames are in flight).
     * A step without flush leaves it NULL: its outputs are of the frame just given. */
    const fm_frame *of_frame;
} fm_live_output;

/* A method's live path, in its family's core folder (app/core/lsi/lsi_live.c ...). The step
 * gives the same numbers, bit for bit, as the method's offline run on the same frames and
 * backend: frame k's maps equal frame k of the offline maps. */
typedef struct fm_live_ops {
    fm_live_step *(*begin)(const fm_method *method, const fm_params *params, int width, int height,
                           fm_pixfmt format, fm_backend backend, GError **error);
    gboolean (*frame)(fm_live_step *step, const fm_frame *frame, fm_live_output *out,
                      GError **error);
    /* What ran ("cuda" / "cpu") and on what, and the fallback note if any. */
    void (*describe)(fm_live_step *step, char **backend, char **device, char **note);
    void (*end)(fm_live_step *step);
    /* Camera buffers registered with the device by the step's backend (may be NULL). */
    fm_buffer_hook register_buffer, unregister_buffer;
    /* A pipelined step (the device works on frame k+1 while the host handles frame k's maps)
     * sets flush; NULL for a step that finishes each frame within its frame() call. frame()
     * then queues the frame and returns the oldest finished frame's output if any (of_frame;
     * outputs come in the order the frames were given); a frame's memory is the step's to read
     * until its output has come back, and the session releases its buffer only then. flush()
     * returns the oldest frame still in flight (of_frame NULL when none is left): the session
     * calls it at the end until none is left, so that no frame's output is lost. */
    gboolean (*flush)(fm_live_step *step, fm_live_output *out, GError **error);
} fm_live_ops;

/* Which maps a live run keeps: every frame's maps as stacks (what the offline run writes), or
 * the mean over the run and the last frame (long sessions). */
typedef enum { FM_LIVE_SAVE_ALL = 0, FM_LIVE_SAVE_SUMMARY } fm_live_save;

typedef struct {
    guint64 frame_id;    /* the source's frame id */
    guint64 n_processed; /* frames processed so far */
    double t_s;          /* seconds since start */
    const fm_live_output *output;
    /* The ROI time course so far: n_points values per ROI (mean of the primary map inside the
     * ROI, one point per processed frame), roi_series[r][i]; times in t_points. */
    const double *const *roi_series;
    const double *t_points;
    int n_rois, n_points;
} fm_live_update;

typedef struct {
    const fm_method *method; /* has ->live */
    const fm_params *params;
    GPtrArray *rois; /* fm_roi* or NULL: the time course follows them */
    fm_backend backend;
    guint64 max_frames;      /* 0: until stopped (or the replay ends) */
    double max_seconds;      /* 0: no limit */
    const char *record_path; /* raw frames to BigTIFF as they arrive, or NULL */
    const char *maps_dir;    /* where the maps go, written as they come (NULL: into the
                                catalogue's folder for the run, or nowhere without one) */
    fm_live_save save_maps;
    gboolean catalogue; /* record the recording and the maps in the catalogue */
    /* Display: called on the session's display thread with a copy of the newest processed
     * frame (valid during the call), at most display_max_hz; while a call runs, newer frames
     * are skipped for display only (counted), the processing goes on. */
    void (*display)(const fm_live_update *update, gpointer user);
    gpointer display_user;
    double display_max_hz; /* 0: 30 */
} fm_live_request;

typedef struct {
    guint64 camera_frames, processed, displayed, recorded;
    guint64 dropped_by_camera, dropped_by_link; /* from the source */
    guint64 skipped_display;    /* processed, due for display but not shown: the display was
                                   busy (frames within 1/display_max_hz of the last shown are
                                   not counted) */
    guint64 skipped_processing; /* not processed (only without recording: newest frame wins) */
    double camera_fps, processed_fps, displayed_fps; /* over the last second */
    /* seconds since start of the first and the last processed frame: the steady rate leaves
     * out the start (device, registration of the pool) */
    double first_processed_s, last_processed_s;
} fm_live_stats;

/* Why a live run ended. */
typedef enum {
    FM_LIVE_END_ASKED = 0,      /* stopped, frame or time limit, end of a replay */
    FM_LIVE_END_SOURCE_LOST,    /* the camera vanished or stopped sending */
    FM_LIVE_END_SOURCE_FAILED,  /* the source failed otherwise */
    FM_LIVE_END_RECORD_FAILED,  /* writing the recording failed (disk full ...) */
    FM_LIVE_END_PROCESS_FAILED, /* the method's step failed */
} fm_live_end;

/* How a live run ended, for the user. */
typedef struct {
    fm_live_end end;
    char *message;     /* NULL when it ended as asked with nothing to tell; else "Fake_1:
                          camera disconnected after 312 frames; the recording (312 frames) is
                          kept", or, for a run that ended as asked, "processing 12 frames/s
                          could not follow the camera's 30 frames/s: 180 frames dropped by the
                          camera" */
    char *record_path; /* the recording, complete and readable, or NULL */
    char **map_paths;  /* NULL-terminated */
    /* catalogue ids, 0 when not catalogued: one run holds the maps, the ROI time course and
     * the recordings (the one that covered the whole run as its dataset), so both are the
     * same id */
    gint64 recording_run_id, maps_run_id;
    fm_live_stats stats;
} fm_live_summary;

void fm_live_summary_free(fm_live_summary *summary);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fm_live_summary, fm_live_summary_free)

typedef struct fm_live_session fm_live_session;

/* Starts the source (the session owns it from here) and the worker threads. Fails before
 * anything streams when the method has no live path or the frame format cannot be read; the
 * caller then still owns the source. */
fm_live_session *fm_live_start(fm_frame_source *source, const fm_live_request *request,
                               GError **error);
void fm_live_get_stats(fm_live_session *session, fm_live_stats *out);
/* Starts or stops recording while running (path NULL stops); the recording is catalogued. */
gboolean fm_live_set_recording(fm_live_session *session, const char *path, GError **error);
/* TRUE once the run ended by itself (frame or time limit, end of replay, camera lost). */
gboolean fm_live_finished(fm_live_session *session);
/* Stops (if still running), drains, closes the recording, writes and catalogues the maps.
 * Frees the session. Returns NULL only when nothing could be saved (error set). */
fm_live_summary *fm_live_stop(fm_live_session *session, GError **error);

/* Where a catalogued live run's frames came from, as the first line of its note says:
 * "live from <camera>" ("live from Fake_1 (Aravis Fake)") or "replay of <file name>" (the
 * replayed file, then also the run's dataset unless a recording covers the whole run). The
 * prefixes are not translated so that the catalogue reads back the same. */
#define FM_LIVE_NOTE_CAMERA "live from "
#define FM_LIVE_NOTE_REPLAY "replay of "

/* The first line of note when it names the source (one of the prefixes above), else NULL. */
char *fm_live_note_source(const char *note);

G_END_DECLS
