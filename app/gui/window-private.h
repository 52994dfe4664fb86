/* FmWindow internals shared by window.c and its window-*.c parts (actions, jobs, open, playback,
 * families). */
#pragma once

#include <gtk/gtk.h>
#include "app/core/catalogue.h"
#include "app/core/job.h"
#include "app/core/result.h"
#include "catalogue-view.h"
#include "family-page.h"
#include "job-list.h"
#include "map-view.h"
#include "plot-view.h"
#include "window.h"

G_BEGIN_DECLS

struct _FmWindow {
    GtkApplicationWindow parent_instance;

    /* From ui/window.ui. */
    GtkWidget *header_bar, *recent_button, *menu_button, *info_bar, *info_label;
    GtkWidget *info_details, *info_details_label; /* the note's whole text, behind "Details" */
    GtkWidget *outer_paned, *right_paned, *centre_paned;
    GtkWidget *ds_file_label, *ds_size_label, *ds_frames_label, *ds_type_label, *catalogue_box;
    GtkWidget *map_combo, *colormap_combo, *auto_range_toggle, *min_spin, *max_spin;
    GtkWidget *pan_tool, *rect_tool, *ellipse_tool, *polygon_tool, *clear_rois_button;
    GtkWidget *map_frame, *play_button, *play_image, *frame_scale, *frame_label;
    GtkWidget *roi_bar, *roi_stats_label, *jobs_box, *plot_box, *panel_box;
    GtkWidget *status_label, *cursor_label, *backend_label;
    /* Built in code: which dataset of a file that holds several (.sdt blocks, .ptu channels). */
    GtkWidget *part_label, *part_combo;

    /* Built in code. */
    FmMapView *map_view;
    FmPlotView *plot_view;
    FmJobList *job_list;
    FmCatalogueView *catalogue_view;
    GtkRecentManager *recent;
    GMenu *recent_menu;

    fm_catalogue *catalogue; /* NULL when it could not be opened: jobs then run unrecorded */
    fm_dataset *dataset;
    fm_result *result;       /* maps on display (own copy), or NULL */
    gboolean result_is_live; /* result came from playback: one frame, recomputed on demand */
    char *map_name;          /* "raw", "contrast", "sfi" */
    char *shown_unit;
    int frame;
    GCancellable *load_cancellable;
    gboolean loading, disposed, updating;
    int last_job_state, running_jobs;
    char *message;
    gboolean message_from_open; /* the info bar shows a failed open (a later open clears it) */
    char *last_fallback_reason; /* CPU-fallback reason already said on the status bar */
    char *message_page;         /* the page the info bar's note belongs to (NULL: every page) */
    /* window-geometry.c: what is kept between sessions */
    int saved_width, saved_height;
    gboolean maximized;
    gboolean view_has_own_scale; /* fm_window_set_fixed_colour_scale: no map list beside it */
    fm_backend backend_choice;  /* the user's backend setting, for the device label */
    GHashTable *ready_shown;    /* jobs whose maps their ready handler showed (until done) */
    /* A catalogue run reopened with its own dataset, shown once that dataset is open. */
    fm_result *reopen_result;
    char *reopen_path;
    gint64 reopen_run_id;
    /* The catalogue run whose maps fm_window_show_reopened hands to the pages (0 otherwise):
     * a page that shows more of a run than its maps (its ROIs, its exports) reads it there. */
    gint64 showing_run_id;

    /* Stack playback. */
    guint play_timer;
    gboolean play_busy;
    int play_pos, play_pending, play_count, plot_last_frame;
    GCancellable *play_cancellable;
    gint64 play_started_us;

    /* The family stack (the family pages' panels), its switcher, the centre
     * stack (the map and the pages' views), and the pages (FmFamilyPage, owned; pages.c). */
    GtkWidget *panel_stack, *centre_stack, *family_switcher;
    GPtrArray *pages;
};

/* window.c */
void fm_window_set_status(FmWindow *win, const char *text);
/* Redraws the view from dataset/result, map_name and frame. */
void fm_window_show_current(FmWindow *win);
/* The map toolbar's min/max boxes from the map view's range (a live map's too). */
void fm_window_update_range_widgets(FmWindow *win);
/* Switches the map selector without re-entering its handler, then shows. */
void fm_window_select_map(FmWindow *win, const char *name);
void fm_window_set_frame(FmWindow *win, int frame);
void fm_window_set_result(FmWindow *win, fm_result *result, gboolean live); /* takes it */
fm_result *fm_window_copy_result(const fm_result *src);
/* The map on display as an fm_map (a new one-frame "raw" map for raw data); free when owned. */
fm_map *fm_window_current_map(FmWindow *win, gboolean *owned);
/* Emits "result-shown": job's maps went on show (fm_window_mark_ready_shown calls it; a done
 * handler that shows them itself, its ready handler not having run, calls it directly). */
void fm_window_result_shown(FmWindow *win, fm_job *job);
/* Emits "dataset-changed" (window-open.c, once a new dataset is on show). */
void fm_window_dataset_changed(FmWindow *win);

/* window-jobs.c */
/* Adds the "run" and "cancel-all" window actions. */
void fm_window_jobs_init(FmWindow *win);
/* A job's outcome on the status bar: "done in" plus the Backend label, or the failure (also as a
 * dialog; returns the message, free it), or "cancelled". */
void fm_window_show_done(FmWindow *win, const fm_result *res, const char *what);
char *fm_window_show_failure(FmWindow *win, const fm_job *job, const char *what);
/* Of a result's note, only the CPU fallback (once per session, on the status bar), for a page
 * that shows the note's remarks itself. */
void fm_window_show_fallback(FmWindow *win, const char *note);
void fm_window_show_cancelled(FmWindow *win, const char *what);
/* After any job: refresh the run catalogue (warning on failure) and the actions' state. */
void fm_window_refresh_after_job(FmWindow *win);
/* A ready handler put job's maps on show (emits "result-shown"); the done handler then asks
 * fm_window_take_ready_shown (TRUE once) instead of showing them a second time. */
void fm_window_mark_ready_shown(FmWindow *win, fm_job *job);
gboolean fm_window_take_ready_shown(FmWindow *win, fm_job *job);
/* A result's note: its remarks in the info bar (one line, the rest behind Details), the CPU
 * fallback once on the status bar. */
void fm_window_show_note(FmWindow *win, const char *note);

/* window-actions.c */
void fm_window_actions_init(FmWindow *win);
void fm_window_recent_init(FmWindow *win);
void fm_window_recent_add(FmWindow *win, const char *path);
void fm_window_dnd_init(FmWindow *win);
void fm_window_catalogue_init(FmWindow *win);
void fm_window_update_action_state(FmWindow *win);
/* The colormap selector names the scale of the view on show when that view has its own (a
 * lifetime view's hue scale): name shown and the selector insensitive; NULL: the colormaps. */
void fm_window_set_fixed_colour_scale(FmWindow *win, const char *name);

/* window-geometry.c: size, maximized state and pane widths between sessions */
void fm_window_geometry_restore(FmWindow *win);
void fm_window_geometry_save(FmWindow *win);

/* window-state.c: the pages' methods and parameters between sessions */
void fm_window_state_save(FmWindow *win);
void fm_window_state_restore(FmWindow *win);

/* window-playback.c */
void fm_window_playback_start(FmWindow *win);
void fm_window_playback_stop(FmWindow *win);
gboolean fm_window_playback_running(FmWindow *win);
/* Recomputes the live SFI of one frame (slider moved while a live map is shown). */
void fm_window_playback_compute(FmWindow *win, int frame);
/* A one-frame x,y copy of frame f of ds (a method then sees a single image). */
fm_dataset *fm_window_frame_copy(const fm_dataset *ds, int f);
void fm_window_playback_dispose(FmWindow *win);
/* The bottom plot's axes for the page's live map (ROI 1 or the whole frame, as playback plots it).
 */
void fm_window_playback_set_labels(FmWindow *win);

/* window.c: the family pages */
/* A page's side panel into the family stack, scrolled, as child id with the switcher's title. */
void fm_window_add_panel(FmWindow *win, const char *id, const char *title, GtkWidget *panel);
/* Lists the pages that take the open dataset in the switcher and puts the best on show; FALSE
 * when none takes it (the first page, pages.c, then shows it as frames). */
gboolean fm_window_choose_page(FmWindow *win);
/* The page on show (NULL only before the pages exist). */
FmFamilyPage *fm_window_active_page(FmWindow *win);
/* Shows the bars the page on show uses (fm_page_bars). */
void fm_window_sync_family_bars(FmWindow *win);
/* Asks the pages to show res; FALSE when none takes it. */
gboolean fm_window_pages_show_result(FmWindow *win, const fm_result *res);
/* The user chose a backend on a panel: remembered as the setting, named on the status bar. */
void fm_window_backend_chosen(FmWindow *win, const char *name);

/* window-jobs.c: starts method on the dataset with params, rois (NULL or empty: the whole
 * image) on backend, listed in the job list and recorded in the catalogue. */
void fm_window_start_job(FmWindow *win, const fm_method *method, const fm_params *params,
                         GPtrArray *rois, fm_backend backend);

/* window-actions.c: shows a reopened run's maps on the page of its method. */
void fm_window_show_reopened(FmWindow *win, fm_result *result, gint64 run_id); /* takes it */

/* window-actions.c: ROIs (fm_roi*, copied) to the page on show, else onto the map view; the
 * status bar names source, the file they came from. */
void fm_window_add_rois(FmWindow *win, GPtrArray *rois, const char *source);

/* window-open.c */
/* The dataset panel's choice among a file's datasets (built once). */
void fm_window_parts_init(FmWindow *win);
/* Opens path, then shows result (taken) over it; result alone when path cannot be read. */
void fm_window_open_for_result(FmWindow *win, const char *path, fm_result *result, gint64 run_id);
/* Progress callback of fm_dataset_open on the load worker (user: the load GTask, whose
 * "fm-last-percent" data holds an int); shows "Reading FILE… n %" on the main loop. */
void fm_window_load_progress(double fraction, gpointer user);

G_END_DECLS
