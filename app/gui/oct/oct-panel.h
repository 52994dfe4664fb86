/* FmOctPanel: the SD-OCT family panel: oct.bscan parameters from the schema, calibration loader,
 * backend, Run and "Compare resampling". */
#pragma once

#include <gtk/gtk.h>
#include "app/core/method.h"

G_BEGIN_DECLS

#define FM_TYPE_OCT_PANEL (fm_oct_panel_get_type())
G_DECLARE_FINAL_TYPE(FmOctPanel, fm_oct_panel, FM, OCT_PANEL, GtkBox)

GtkWidget *fm_oct_panel_new(void);
/* oct.bscan parameters from the form; NULL with error when a value is out of range. */
fm_params *fm_oct_panel_get_params(FmOctPanel *panel, GError **error);
/* Sets one parameter as the CLI would take it; FALSE when the key is unknown. */
gboolean fm_oct_panel_set_value(FmOctPanel *panel, const char *key, const char *text);
fm_backend fm_oct_panel_get_backend(FmOctPanel *panel);
/* Checks a wavelength CSV against n_pixels (0: only that it parses and is monotonic), then
 * puts it in calibration_file and shows its range. */
gboolean fm_oct_panel_load_calibration(FmOctPanel *panel, const char *path, int n_pixels,
                                       GError **error);
/* Pixels per A-line of the dataset on show, for the calibration check (0 when unknown). */
void fm_oct_panel_set_n_pixels(FmOctPanel *panel, int n_pixels);
/* The calibration file the open data's sidecar names (NULL: none), which the run uses when the
 * form names none: the panel says so in one place. */
void fm_oct_panel_set_sidecar_calibration(FmOctPanel *panel, const char *path);
/* "Calibration: …" as the panel shows it. */
const char *fm_oct_panel_get_calibration_text(FmOctPanel *panel);
/* Puts the views' display controls (dB and en-face ranges) under a heading at the end. */
void fm_oct_panel_add_display(FmOctPanel *panel, GtkWidget *controls);

G_END_DECLS
