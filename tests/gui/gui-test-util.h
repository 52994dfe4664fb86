/* Shared helpers of the GUI tests: start-up in a temporary data directory, main-loop waits, job
 * runs, catalogue checks, screenshots and the DCE tests' phantom. */
#pragma once

#include <gtk/gtk.h>

#include "app/core/dce/dce_sim.h"
#include "app/core/flim/flim_sim.h"
#include "app/gui/application.h"
#include "app/gui/panel-util.h"
#include "app/gui/window.h"

/* Skips (prints a TAP plan of 0 and returns NULL) without a display; otherwise initialises
 * g_test and GTK and returns a fresh temporary directory made from tmpl (free it) that holds
 * FLUXMAP_DATA_DIR and the XDG directories, so no user state is touched. */
char *fm_gui_test_init(int *argc, char ***argv, const char *tmpl);

/* Writes dir/name: a width x height x frames uint16 speckle-like stack (exponential intensities
 * from seed) as a TIFF, and returns its path (free it). */
char *fm_gui_test_write_speckle(const char *dir, const char *name, int width, int height,
                                int frames, guint32 seed);

/* A registered non-unique FmApplication, not yet activated. */
FmApplication *fm_gui_test_new_app(void);

/* Activates app and returns its main window. */
FmWindow *fm_gui_test_activate(FmApplication *app);

/* Iterates the default main context until cond(data) holds (TRUE) or timeout_s passes (FALSE). */
gboolean fm_gui_test_wait_until(gboolean (*cond)(gpointer data), gpointer data, double timeout_s);

/* For fm_gui_test_wait_until with the window as data: TRUE once the window has finished opening
 * a dataset and its DCE views are idle, or shows a message. */
gboolean fm_gui_test_dce_loaded(gpointer window);

/* Writes dir/liver.nii.gz and returns its path (free it): the noise-free DCE liver phantom of
 * nx x ny x nz voxels and n_times frames, without lesions, placed in space by affine
 * (FM_META_AFFINE). sim receives the phantom's parameters, the truth the test checks. */
char *fm_gui_test_write_dce_phantom(const char *dir, int nx, int ny, int nz, int n_times,
                                    const double affine[16], fm_dce_sim_params *sim);

/* Writes dir/bars.tif and returns its path (free it): the FLIM simulator's bars (its defaults,
 * but width x height and seed) with the 100 ps bin width in its description. sim receives the
 * parameters (the truth), ds the dataset unless NULL (unref it). */
char *fm_gui_test_write_flim_bars(const char *dir, int width, int height, guint64 seed,
                                  fm_flim_sim_params *sim, fm_dataset **ds);

/* Iterates the default main context for the given time (lets redraws and idles run). */
void fm_gui_test_drain(double seconds);

/* The info bar's text when it shows an error, else NULL (warnings such as the reported CUDA
 * fallback are expected on machines without a GPU). */
const char *fm_gui_test_error_message(FmWindow *win);

/* Activates the window action (e.g. "run"), waits up to timeout_s for its job and asserts that
 * it finished as FM_JOB_DONE. */
void fm_gui_test_run_job(FmWindow *win, const char *action, double timeout_s);

/* Asserts that data_dir's catalogue lists exactly the NULL-terminated method_ids (newest first,
 * at most limit runs, 0 for all), each FM_RUN_DONE; returns the runs (fm_catalogue_run). */
GPtrArray *fm_gui_test_assert_done_runs(const char *data_dir, int limit,
                                        const char *const *method_ids);

/* The runs in data_dir's catalogue, newest first (at most limit, 0 for all), asserting that it
 * reads (free it: its free function frees the fm_catalogue_run). */
GPtrArray *fm_gui_test_list_runs(const char *data_dir, int limit);

/* How many runs data_dir's catalogue holds (0 when there is none yet). */
guint fm_gui_test_catalogue_runs(const char *data_dir);

/* FLUXMAP_SCREENSHOT (else data_dir/fallback) with suffix put before ".png" (free it). */
char *fm_gui_test_screenshot_path(const char *data_dir, const char *fallback, const char *suffix);

/* Draws widget into a PNG at path and asserts that it was written. */
void fm_gui_test_save_png(GtkWidget *widget, const char *path);

/* fm_gui_test_save_png at fm_gui_test_screenshot_path(data_dir, fallback, suffix), the suffix
 * made from a printf format (NULL: none). */
void fm_gui_test_screenshot(GtkWidget *widget, const char *data_dir, const char *fallback,
                            const char *suffix_format, ...) G_GNUC_PRINTF(4, 5);

/* The widget as it is allocated, drawn into a new image surface (destroy it). */
cairo_surface_t *fm_gui_test_render(GtkWidget *widget);

/* Finding widgets (fm_widget_find and fm_widget_find_named serve first matches): */
/* The first widget of type at or below root, or NULL. */
GtkWidget *fm_gui_test_find_type(GtkWidget *root, GType type);
/* The start-page card of family (a button named family) at or below root, or NULL. */
GtkWidget *fm_gui_test_find_card(GtkWidget *root, const char *family);
/* Every widget at or below root that match accepts, depth first, in visible subtrees only; with
 * internal, the containers' internal children too (a combo box's button, a frame's label). */
GPtrArray *fm_gui_test_collect(GtkWidget *root, FmWidgetMatch match, gconstpointer data,
                               gboolean internal);
/* fm_gui_test_collect of the widgets of type (internal children left out). */
GPtrArray *fm_gui_test_collect_type(GtkWidget *root, GType type);

/* widget's allocation in ancestor's coordinates (scrolling included); asserts that they share a
 * toplevel. */
GdkRectangle fm_gui_test_rect_in(GtkWidget *widget, GtkWidget *ancestor);

/* The toplevel's whole allocation (header bar and client-side decorations included, as a window
 * manager's screen holds them) becomes width x height, or as near as the page's minimum allows;
 * asserts that it is no larger than the screen. */
void fm_gui_test_resize_outer(GtkWidget *top, int width, int height);

/* Waits up to timeout_s for the window's Open Recent section to list a dataset named basename;
 * TRUE when it does. */
gboolean fm_gui_test_wait_recent(FmWindow *win, const char *basename, double timeout_s);

/* Destroys window (if any), drains the main loop, releases app and frees data_dir, after
 * g_test_run. */
void fm_gui_test_shutdown(FmApplication *app, GtkWidget *window, char *data_dir);
