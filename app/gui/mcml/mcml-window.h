/* FmMcmlWindow: the MCML simulation window (layers editor, grid, run, fluence map and plots). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define FM_TYPE_MCML_WINDOW (fm_mcml_window_get_type())
G_DECLARE_FINAL_TYPE(FmMcmlWindow, fm_mcml_window, FM, MCML_WINDOW, GtkApplicationWindow)

FmMcmlWindow *fm_mcml_window_new(GtkApplication *app);
/* Fills the editor from a built-in preset ("skin7_600nm", "intralipid10", "mcml_sample"). */
gboolean fm_mcml_window_load_preset(FmMcmlWindow *win, const char *name);
gboolean fm_mcml_window_open_mci(FmMcmlWindow *win, const char *path, GError **error);
gboolean fm_mcml_window_save_mci(FmMcmlWindow *win, const char *path, GError **error);
/* Writes the last finished run as MCML .mco. */
gboolean fm_mcml_window_save_mco(FmMcmlWindow *win, const char *path, GError **error);
void fm_mcml_window_set_photons(FmMcmlWindow *win, double photons);
/* Starts a job (win.run equivalent); FALSE with the reason in the status line if it cannot. */
gboolean fm_mcml_window_run(FmMcmlWindow *win);
void fm_mcml_window_cancel(FmMcmlWindow *win);
gboolean fm_mcml_window_is_running(FmMcmlWindow *win);
/* Rsp, Rd, A, Tt of the last finished run as shown in the totals table; FALSE if none. */
gboolean fm_mcml_window_get_totals(FmMcmlWindow *win, double totals[4]);
/* The fluence map on display (log10, nr x nz), or NULL. */
const float *fm_mcml_window_get_map(FmMcmlWindow *win, int *width, int *height);
/* The status line: last error or run summary. */
const char *fm_mcml_window_get_status(FmMcmlWindow *win);

G_END_DECLS
