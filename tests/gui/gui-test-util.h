/* Shared helpers of the GUI tests: start-up in a temporary data directory, main-loop waits, job
 * runs, catalogue checks, screenshots and the DCE tests' phantom. */
#pragma once

#include <gtk/gtk.h>

#include "app/core/dce/dce_sim.h"
#include "app/gui/application.h"
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

/* FLUXMAP_SCREENSHOT (else data_dir/fallback) with suffix put before ".png" (free it). */
char *fm_gui_test_screenshot_path(const char *data_dir, const char *fallback, const char *suffix);

/* Draws widget into a PNG at path and asserts that it was written. */
void fm_gui_test_save_png(GtkWidget *widget, const char *path);

/* Waits up to timeout_s for the window's Open Recent section to list a dataset named basename;
 * TRUE when it does. */
gboolean fm_gui_test_wait_recent(FmWindow *win, const char *basename, double timeout_s);

/* Destroys window (if any), drains the main loop, releases app and frees data_dir, after
 * g_test_run. */
void fm_gui_test_shutdown(FmApplication *app, GtkWidget *window, char *data_dir);
