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

G_END_DECLS
