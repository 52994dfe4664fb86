/* The live GUI's state, shared by its parts: live-gui.c (sources, Start/Stop/Record, the end of a
 * run), live-controls.c (the panel's widgets and the status line), live-sources.c (the cameras
 * in the dataset pane) and live-display.c (frames from the session's display thread onto the
 * screen). */
#pragma once

#include "app/core/live.h"
#include "app/gui/window-private.h"
#include "live-gui.h"

G_BEGIN_DECLS

typedef struct {
    /* the panel's widgets (live-controls.c), moved to the page that shows the source */
    GtkWidget *box, *source_label, *exposure, *gain, *rate, *format, *region, *start, *stop;
    GtkWidget *record;
    GtkWidget *record_path, *record_choose, *status;
} FmLiveControls;

/* The live run's row in the Jobs pane (live-job.c); NULL after the run ended. */
typedef struct {
    GtkWidget *title, *stop, *state;
} FmLiveJob;

typedef struct {
    FmWindow *win; /* not owned: the window owns this state */
    gboolean disposed;
    GPtrArray *pages;         /* fm_live_page (owned copies) */
    const fm_live_page *page; /* the page that shows the source, or NULL: no source */
    GtkWidget *sources, *camera_list, *camera_hint;
    gboolean listing; /* cameras are being looked for */
    int n_listed;     /* lists done, for tests */
    FmLiveControls c;
    gboolean updating; /* the controls are being set from the source, not by the user */

    /* The source: a camera id or a replayed file. It is open (source) between runs; a run's
     * session owns it, and Start opens it again after a run ended. */
    char *camera_id, *replay_path, *source_name;
    double replay_fps;
    fm_live_camera_opener opener; /* NULL: fm_frame_source_open_camera */
    gpointer opener_user;
    fm_frame_source *source;  /* open and idle, or NULL */
    fm_frame_source *running; /* borrowed from the session while it runs (settings, stats) */
    fm_source_settings settings;
    fm_live_session *session;
    gboolean stopping; /* the session is being stopped on a worker */
    guint stats_timer;
    char *record_file; /* the recording's path (the default until the user chooses one) */
    gboolean record_file_chosen;

    /* Display hand-over: the session's display thread waits while the main loop draws its
     * update (valid during the call), so the session counts the frames it skips meanwhile. */
    GMutex lock;
    GCond cond;
    const fm_live_update *update; /* the display thread's, while it waits */
    guint idle_id;                /* the main loop's draw of it, pending */
    gboolean drawn, closing;
    const fm_live_page *run_page; /* the page the run draws on */
    guint64 n_drawn;
    gboolean zoomed;      /* the view was fitted to the first frame */
    gboolean whole_frame; /* no ROI drawn: the time course is the whole frame's mean */

    FmLiveJob job;
    gboolean cancel_hooked; /* the panel's Cancel stops the run too */
    gint64 last_run_id;
    char *last_record;
} FmLive;

FmLive *fm_live_of(FmWindow *win); /* NULL before fm_live_add_page / fm_live_attach */

/* live-controls.c */
void fm_live_controls_build(FmLive *live);
/* The source's settings into the spin buttons and the format list. */
void fm_live_controls_show_settings(FmLive *live);
/* Buttons' sensitivity from the state (source, running, stopping). */
void fm_live_controls_sync(FmLive *live);
/* The status line from the session's counters (or the source alone when idle). */
void fm_live_controls_show_stats(FmLive *live);
/* Puts the controls at the top of page's panel and shows them. */
void fm_live_controls_place(FmLive *live, const fm_live_page *page);
/* The recording's file name beside the Record button (the whole path in its tooltip). */
void fm_live_controls_show_record_file(FmLive *live);
/* The default recording path: DATA_DIR/recordings/<source>_<date>_<time>.tif. */
char *fm_live_default_record_path(FmLive *live);

/* live-sources.c */
void fm_live_sources_build(FmLive *live);
void fm_live_sources_refresh(FmLive *live);

/* live-gui.c */
void fm_live_gui_open_camera(FmLive *live, const char *id);
void fm_live_gui_start(FmLive *live);
void fm_live_gui_stop(FmLive *live);
void fm_live_gui_record(FmLive *live, gboolean on);
void fm_live_gui_apply_setting(FmLive *live, GtkWidget *control);

/* live-job.c: the run's row in the Jobs pane */
void fm_live_job_begin(FmLive *live, const char *method_title);
void fm_live_job_update(FmLive *live, const fm_live_stats *stats);
void fm_live_job_stopping(FmLive *live);
/* text: how it ended (the page's note); bad: not as asked (camera lost, a failure) */
void fm_live_job_end(FmLive *live, const char *text, gboolean bad);

/* live-display.c */
void fm_live_display(const fm_live_update *update, gpointer user); /* the display thread */
/* Wakes a display call that waits for the main loop, for good (the window goes). */
void fm_live_display_close(FmLive *live);

G_END_DECLS
