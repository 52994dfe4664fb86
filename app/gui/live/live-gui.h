/* Live cameras in the window: the cameras as sources in the dataset pane, the live controls
 * (exposure, gain, frame rate, format, Start, Stop, Record) on the page that can use the frames,
 * the map and ROI time course redrawn as frames arrive, and a status line with the rates and the
 * dropped counts. The window and the pages know only the two calls below; the session itself is
 * app/core/live.h. */
#pragma once

#include <gtk/gtk.h>

#include "app/core/io/frame_source.h"
#include "app/core/params.h"
#include "app/core/result.h"
#include "app/gui/map-view.h"
#include "app/gui/window.h"

G_BEGIN_DECLS

/* What frames a page turns into maps: images (a speckle camera) or lines (a line-scan
 * camera's A-line spectra, one line per row). */
typedef enum { FM_LIVE_FRAMES_IMAGES = 0, FM_LIVE_FRAMES_LINES } fm_live_frames;

/* A page that runs live: its method and parameters come from the page (fm_family_page_get_method
 * and get_params), the controls go into its panel, the frames' maps into its views. */
typedef struct {
    const char *page_id; /* "lsi" */
    fm_live_frames frames;
    GtkBox *panel;          /* the controls go under its first child (its heading) */
    FmMapView *view;        /* the primary map (or the map the window's map list names) */
    FmMapView *second_view; /* a second map growing beside it (OCT's en-face), or NULL */
    const char *second_map; /* the output map the second view shows ("enface") */
    const char *centre;     /* the window's centre child that holds the views ("map") */
    /* Fills what the page's parameters lack for a file replayed as a camera (replay_path NULL
     * for a camera), as a file run would take it from the file; may be NULL. FALSE (error set)
     * stops the Start. */
    gboolean (*prepare)(const char *replay_path, fm_params *params, GError **error);
    /* The page's own live views, each may be NULL. source: a source was chosen (its name; the
     * replayed file, or NULL for a camera), or went (both NULL). begin: a run starts with these
     * parameters (prepared) on frames of width x height. show: the newest frame's maps (the
     * n-th processed; app/core/live.h's fm_live_output, which lsi-page's live-params.h hides),
     * drawn by the page instead of into view and second_view. end: the run ended (the last frame
     * stays on show). */
    void (*source)(FmWindow *win, const char *source_name, const char *replay_path);
    void (*begin)(FmWindow *win, const char *source_name, const fm_params *params, int width,
                  int height);
    void (*show)(FmWindow *win, const fm_map *const *maps, int n_maps, guint64 n);
    void (*end)(FmWindow *win, const char *source_name);
} fm_live_page;

/* A page's constructor: the page can run live. */
void fm_live_add_page(FmWindow *win, const fm_live_page *page);
/* The window, once its pages exist: the cameras section in the dataset pane, and the actions
 * win.live-camera(s id), win.live-start and win.live-stop. */
void fm_live_attach(FmWindow *win);

/* For tests. Widgets are named (gtk_widget_set_name): fm-live-cameras (the list), fm-live-refresh,
 * fm-live-replay, fm-live-start, fm-live-stop, fm-live-record, fm-live-record-path,
 * fm-live-status, fm-live-exposure, fm-live-gain, fm-live-rate, fm-live-format, fm-live-region,
 * fm-live-source (the source's name and frame size). */
GtkWidget *fm_live_get_sources(FmWindow *win);  /* the cameras section of the dataset pane */
GtkWidget *fm_live_get_controls(FmWindow *win); /* the live controls (on the page on show) */
/* How the window opens a camera it lists (default fm_frame_source_open_camera): a test hands it
 * the fake camera its feed fills with simulated frames. */
typedef fm_frame_source *(*fm_live_camera_opener)(const char *id, gpointer user, GError **error);
void fm_live_set_camera_opener(FmWindow *win, fm_live_camera_opener open, gpointer user);
/* Opens a replay of path as a camera (what "Replay a file as a camera…" does after its chooser);
 * FALSE with the reason in the info bar. */
gboolean fm_live_open_replay(FmWindow *win, const char *path, double frames_per_s);
gboolean fm_live_is_running(FmWindow *win);
/* Camera lists finished (the first comes shortly after the window opens). */
int fm_live_get_lists_done(FmWindow *win);
/* Frames whose maps went on screen since the last Start. */
guint64 fm_live_get_drawn(FmWindow *win);
/* The last run's catalogue id (0: none or not catalogued) and recording (NULL: none). */
gint64 fm_live_get_last_run(FmWindow *win, const char **record_path);

G_END_DECLS
