/* FmOctPanel: oct.bscan parameter form, calibration loader, backend, Run and Compare buttons. */
#include "oct-panel.h"

#include <glib/gi18n.h>

#include "app/core/oct/oct_calib.h"
#include "app/gui/panel-util.h"
#include "app/gui/param-form.h"

struct _FmOctPanel {
    GtkBox parent_instance;
    FmParamForm *form;
    GtkWidget *backend_combo, *calib_label;
    int n_pixels;
};

G_DEFINE_TYPE(FmOctPanel, fm_oct_panel, GTK_TYPE_BOX)

static const fm_method *oct_method(void)
{
    return fm_method_find("oct.bscan");
}

fm_params *fm_oct_panel_get_params(FmOctPanel *panel, GError **error)
{
    return fm_param_form_get_params(panel->form, oct_method(), error);
}

gboolean fm_oct_panel_set_value(FmOctPanel *panel, const char *key, const char *text)
{
    return fm_param_form_set_value(panel->form, key, text);
}

fm_backend fm_oct_panel_get_backend(FmOctPanel *panel)
{
    return fm_backend_combo_get(panel->backend_combo);
}

void fm_oct_panel_set_n_pixels(FmOctPanel *panel, int n_pixels)
{
    panel->n_pixels = n_pixels;
}

gboolean fm_oct_panel_load_calibration(FmOctPanel *panel, const char *path, int n_pixels,
                                       GError **error)
{
    int n = n_pixels > 0 ? n_pixels : panel->n_pixels;
    g_autofree char *base = g_path_get_basename(path);
    if (n <= 0) {
        /* no spectra yet: the run checks the length against the pixels per A-line */
        fm_param_form_set_value(panel->form, "calibration_file", path);
        g_autofree char *text = g_strdup_printf(_("%s (checked when the data is open)"), base);
        gtk_label_set_text(GTK_LABEL(panel->calib_label), text);
        return TRUE;
    }
    g_autofree double *lambda = fm_oct_calib_read_csv(path, n, error);
    if (!lambda)
        return FALSE;
    fm_param_form_set_value(panel->form, "calibration_file", path);
    g_autofree char *text =
        g_strdup_printf(_("%s: %d pixels, %.1f–%.1f nm"), base, n, lambda[0], lambda[n - 1]);
    gtk_label_set_text(GTK_LABEL(panel->calib_label), text);
    return TRUE;
}

static void calib_clicked(GtkButton *button, FmOctPanel *panel)
{
    GtkWidget *top = gtk_widget_get_toplevel(GTK_WIDGET(panel));
    GtkFileChooserNative *chooser = gtk_file_chooser_native_new(
        _("Load wavelength calibration"), GTK_IS_WINDOW(top) ? GTK_WINDOW(top) : NULL,
        GTK_FILE_CHOOSER_ACTION_OPEN, _("_Load"), _("_Cancel"));
    if (gtk_native_dialog_run(GTK_NATIVE_DIALOG(chooser)) == GTK_RESPONSE_ACCEPT) {
        g_autofree char *path = gtk_file_chooser_get_filename(GTK_FILE_CHOOSER(chooser));
        g_autoptr(GError) error = NULL;
        if (!fm_oct_panel_load_calibration(panel, path, 0, &error))
            gtk_label_set_text(GTK_LABEL(panel->calib_label), error->message);
    }
    g_object_unref(chooser);
}

static void fm_oct_panel_class_init(FmOctPanelClass *klass) {}

static void fm_oct_panel_init(FmOctPanel *panel)
{
    gtk_orientable_set_orientation(GTK_ORIENTABLE(panel), GTK_ORIENTATION_VERTICAL);
    gtk_box_set_spacing(GTK_BOX(panel), 6);
    g_object_set(panel, "margin", 8, NULL);
    GtkWidget *title = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(title), _("<b>SD-OCT B-scans</b>"));
    gtk_widget_set_halign(title, GTK_ALIGN_START);
    gtk_box_pack_start(GTK_BOX(panel), title, FALSE, FALSE, 0);

    GtkWidget *calib_button = gtk_button_new_with_label(_("Load calibration…"));
    gtk_widget_set_tooltip_text(calib_button,
                                _("CSV with one wavelength (nm) per spectrometer pixel"));
    g_signal_connect(calib_button, "clicked", G_CALLBACK(calib_clicked), panel);
    gtk_box_pack_start(GTK_BOX(panel), calib_button, FALSE, FALSE, 0);
    panel->calib_label = gtk_label_new(_("Calibration: from the file's sidecar"));
    gtk_label_set_line_wrap(GTK_LABEL(panel->calib_label), TRUE);
    gtk_widget_set_halign(panel->calib_label, GTK_ALIGN_START);
    gtk_box_pack_start(GTK_BOX(panel), panel->calib_label, FALSE, FALSE, 0);

    panel->form = FM_PARAM_FORM(fm_param_form_new());
    fm_param_form_set_method(panel->form, oct_method());
    gtk_box_pack_start(GTK_BOX(panel), GTK_WIDGET(panel->form), FALSE, FALSE, 0);

    panel->backend_combo = gtk_combo_box_text_new();
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(panel->backend_combo), "auto", _("Auto"));
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(panel->backend_combo), "cpu", _("CPU"));
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(panel->backend_combo), "cuda", _("CUDA"));
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(panel->backend_combo), "auto");
    gtk_box_pack_start(GTK_BOX(panel), panel->backend_combo, FALSE, FALSE, 0);

    GtkWidget *run = gtk_button_new_with_label(_("Run"));
    gtk_actionable_set_action_name(GTK_ACTIONABLE(run), "win.oct-run");
    gtk_style_context_add_class(gtk_widget_get_style_context(run), "suggested-action");
    GtkWidget *compare = gtk_button_new_with_label(_("Compare resampling"));
    gtk_actionable_set_action_name(GTK_ACTIONABLE(compare), "win.oct-compare");
    gtk_widget_set_tooltip_text(compare, _("The B-scan on show processed by tdi, linear, cubic "
                                           "and zeropad side by side, with the PSF of its "
                                           "strongest peak"));
    gtk_box_pack_start(GTK_BOX(panel), run, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(panel), compare, FALSE, FALSE, 0);
}

GtkWidget *fm_oct_panel_new(void)
{
    return g_object_new(FM_TYPE_OCT_PANEL, NULL);
}
