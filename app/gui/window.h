/* FmWindow: the main window (dataset, catalogue, map view, family pages, jobs, playback). */
#pragma once

#include <gtk/gtk.h>
#include "app/core/dataset.h"
#include "app/core/job.h"
#include "application.h"
#include "map-view.h"
#include "plot-view.h"

G_BEGIN_DECLS

#define FM_TYPE_WINDOW (fm_window_get_type())
G_DECLARE_FINAL_TYPE(FmWindow, fm_window, FM, WINDOW, GtkApplicationWindow)

FmWindow *fm_window_new(FmApplication *app);
/* The application's device start finished: the status bar names the device of the next job. */
void fm_window_device_changed(FmWindow *win);

/* Reads the file on a worker thread; errors go to the info bar. */
void fm_window_open_file(FmWindow *win, const char *path);
/* The same for one of the datasets of a file that holds several (fm_dataset_open_part: an .sdt
 * file's N-th, a .ptu/.pt3 file's detector channel N; 0 the reader's default). */
void fm_window_open_file_part(FmWindow *win, const char *path, int part);
/* The dataset panel's choice among the open file's datasets (hidden when it holds one). */
GtkWidget *fm_window_get_part_combo(FmWindow *win);
/* Shows a file chooser, then opens the chosen file. */
void fm_window_choose_file(FmWindow *win);
/* A drop of URIs: opens the first local one (one dataset at a time). FALSE when none is local. */
gboolean fm_window_open_uris(FmWindow *win, const char *const *uris);
/* The Open Recent section: datasets this application opened, newest first. */
GMenuModel *fm_window_get_recent_menu(FmWindow *win);

/* For tests and scripting. */
gboolean fm_window_is_loading(FmWindow *win);
fm_dataset *fm_window_get_dataset(FmWindow *win); /* borrowed, or NULL */
FmMapView *fm_window_get_map_view(FmWindow *win);
/* The ROI time course under the map (playback). */
FmPlotView *fm_window_get_plot_view(FmWindow *win);
/* Selects a method by id on the page that offers it; FALSE when none does. */
gboolean fm_window_select_method(FmWindow *win, const char *method_id);
/* State of the last finished job, or -1 when none has finished yet. */
int fm_window_get_last_job_state(FmWindow *win);
int fm_window_get_running_jobs(FmWindow *win);
/* Text of the info bar when it is shown, else NULL; type (may be NULL) says error, warning… */
const char *fm_window_get_message(FmWindow *win, GtkMessageType *type);
/* Shows text in the info bar (type: error, warning, info). */
void fm_window_show_message(FmWindow *win, GtkMessageType type, const char *text);
/* Closes the info bar, as its close button does. */
void fm_window_hide_message(FmWindow *win);
/* Frames shown by stack playback since it last started. */
int fm_window_get_playback_count(FmWindow *win);
/* The status bar's device label ("Backend: …"). */
const char *fm_window_get_device_text(FmWindow *win);
/* Sets a parameter of the page on show from text, as the CLI takes it; FALSE when its form has
 * no such key. */
gboolean fm_window_set_param(FmWindow *win, const char *key, const char *text);
GtkWidget *fm_window_get_job_list(FmWindow *win);
/* The ids of the pages the family switcher lists, in its order (g_strfreev). */
char **fm_window_list_pages(FmWindow *win);
/* Chooses page id in the family switcher, as a user would; FALSE when it does not list it. */
gboolean fm_window_switch_page(FmWindow *win, const char *id);
/* The method page id shows and its parameters as JSON (g_free), or NULL when it has none. */
char *fm_window_get_page_params(FmWindow *win, const char *id, const char **method_id);

/* Signals: "result-shown" (gpointer fm_job): a job's maps went on show, as soon as the method
 * returned them (before the catalogue has recorded them) or, failing that, when it ended.
 * "dataset-changed": a newly opened dataset is on show. */

/* The id of the family page on show ("lsi", "flim", …: the pages of pages.c), and a switch to
 * another. */
const char *fm_window_get_family(FmWindow *win);
/* What the centre shows: the name of its visible view ("start" for the demo cards, "map", or a
 * page's own views), and that view. */
const char *fm_window_get_centre_name(FmWindow *win);
GtkWidget *fm_window_get_centre_view(FmWindow *win);
/* The page the info bar's note belongs to (NULL when it shows none or belongs to no page). */
const char *fm_window_get_message_page(FmWindow *win);
/* The map on show in the map view ("raw" for the data's frames, "sfi", "tau", …). */
const char *fm_window_get_map_name(FmWindow *win);
/* The side panes: the dataset and catalogue pane (left) and the method panel (right). */
GtkWidget *fm_window_get_side_pane(FmWindow *win, gboolean right);
void fm_window_set_family(FmWindow *win, const char *family);
/* Whether the main map view's map toolbar and ROI bar are on show (not for OCT). */
gboolean fm_window_map_tools_visible(FmWindow *win);
/* The frame slider and playback: on show only on pages whose frames are a time series. */
gboolean fm_window_frame_slider_visible(FmWindow *win);

G_END_DECLS
