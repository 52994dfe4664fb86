/* FmMcmlView: the MCML simulation (layers editor, grid, run, fluence map and plots), as the MCML
 * page shows it. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define FM_TYPE_MCML_VIEW (fm_mcml_view_get_type())
G_DECLARE_FINAL_TYPE(FmMcmlView, fm_mcml_view, FM, MCML_VIEW, GtkBox)

/* The fluence map and plots; fm_mcml_view_get_panel gives the editor, run and totals, to be
 * packed beside it (the MCML page puts it in the window's side panel). */
FmMcmlView *fm_mcml_view_new(void);
GtkWidget *fm_mcml_view_get_panel(FmMcmlView *view);
/* Fills the editor from a built-in preset ("skin7_600nm", "intralipid10", "mcml_sample"). */
gboolean fm_mcml_view_load_preset(FmMcmlView *win, const char *name);
/* The start page's demo: the skin preset with photons enough for a smooth fluence map in a few
 * seconds on two CPU cores. */
void fm_mcml_view_load_demo(FmMcmlView *view);
gboolean fm_mcml_view_open_mci(FmMcmlView *win, const char *path, GError **error);
gboolean fm_mcml_view_save_mci(FmMcmlView *win, const char *path, GError **error);
/* Writes the last finished run as MCML .mco. */
gboolean fm_mcml_view_save_mco(FmMcmlView *win, const char *path, GError **error);
void fm_mcml_view_set_photons(FmMcmlView *win, double photons);
/* Starts a job (win.run equivalent); FALSE with the reason in the status line if it cannot. */
gboolean fm_mcml_view_run(FmMcmlView *win);
void fm_mcml_view_cancel(FmMcmlView *win);
gboolean fm_mcml_view_is_running(FmMcmlView *win);
/* Rsp, Rd, A, Tt of the last finished run as shown in the totals table; FALSE if none. */
gboolean fm_mcml_view_get_totals(FmMcmlView *win, double totals[4]);
/* The fluence map on display (log10, nr x nz), or NULL. */
const float *fm_mcml_view_get_map(FmMcmlView *win, int *width, int *height);
/* The status line: last error or run summary. */
const char *fm_mcml_view_get_status(FmMcmlView *win);
/* Records runs in catalogue (borrowed; it must outlive the view) instead of opening the default
 * one itself. */
void fm_mcml_view_set_catalogue(FmMcmlView *view, gpointer catalogue);
/* The model's name as the user knows it (a preset's title, an .mci file's name), and the file
 * name a run records as its input ("skin7_600nm.mci"). */
const char *fm_mcml_view_get_model_title(FmMcmlView *view);
char *fm_mcml_view_get_input_name(FmMcmlView *view);
/* The drawing area of the fluence map (tests: its layout, fm_mcml_map_layout, and pixels). */
GtkWidget *fm_mcml_view_get_map_area(FmMcmlView *view);

/* Signals (each with the fm_job as a pointer): "job-started", "job-progress", "job-finished";
 * "model-changed" (): another preset or file was loaded. */

G_END_DECLS
