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
    char *sidecar_calibration; /* the open file's sidecar's calibration, or NULL */
    char *loaded_text;         /* what the last loaded calibration file holds, for the label */
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

static const char *form_text(FmOctPanel *panel, const char *key)
{
    GtkWidget *entry = fm_widget_find_named(GTK_WIDGET(panel->form), key);
    return entry && GTK_IS_ENTRY(entry) ? gtk_entry_get_text(GTK_ENTRY(entry)) : "";
}

/* One account of where the wavelengths come from: the label says it, and the form's empty
 * "Calibration file" shows the sidecar's file as its placeholder rather than "none". */
static void update_calibration(FmOctPanel *panel)
{
    GtkWidget *entry = fm_widget_find_named(GTK_WIDGET(panel->form), "calibration_file");
    g_autofree char *sidecar_base =
        panel->sidecar_calibration ? g_path_get_basename(panel->sidecar_calibration) : NULL;
    if (entry && GTK_IS_ENTRY(entry)) {
        g_autofree char *hint =
            sidecar_base ? g_strdup_printf(_("%s (sidecar)"), sidecar_base) : g_strdup(_("none"));
        gtk_entry_set_placeholder_text(GTK_ENTRY(entry), hint);
    }
    const char *chosen = form_text(panel, "calibration_file");
    g_autofree char *text = NULL;
    if (chosen && *chosen) {
        g_autofree char *base = g_path_get_basename(chosen);
        text = panel->loaded_text ? g_strdup_printf(_("Calibration: %s"), panel->loaded_text)
                                  : g_strdup_printf(_("Calibration: %s"), base);
    } else if (*form_text(panel, "lambda_polynomial_nm")) {
        text = g_strdup(_("Calibration: the wavelength polynomial"));
    } else if (sidecar_base) {
        text = g_strdup_printf(_("Calibration: %s, named by the data's sidecar"), sidecar_base);
    } else {
        text = g_strdup(_("Calibration: none yet; load a file or give the wavelength "
                          "polynomial"));
    }
    gtk_label_set_text(GTK_LABEL(panel->calib_label), text);
}

void fm_oct_panel_set_sidecar_calibration(FmOctPanel *panel, const char *path)
{
    g_free(panel->sidecar_calibration);
    panel->sidecar_calibration = path && *path ? g_strdup(path) : NULL;
    update_calibration(panel);
}

const char *fm_oct_panel_get_calibration_text(FmOctPanel *panel)
{
    return gtk_label_get_text(GTK_LABEL(panel->calib_label));
}

static void form_changed(FmParamForm *form, const char *key, FmOctPanel *panel)
{
    (void)form;
    if (key == NULL || g_str_equal(key, "calibration_file") ||
        g_str_equal(key, "lambda_polynomial_nm")) {
        if (key && g_str_equal(key, "calibration_file"))
            g_clear_pointer(&panel->loaded_text, g_free);
        update_calibration(panel);
    }
}

void fm_oct_panel_add_display(FmOctPanel *panel, GtkWidget *controls)
{
    GtkWidget *heading = fm_panel_heading(_("DISPLAY"));
    gtk_widget_set_margin_top(heading, 8);
    gtk_box_pack_start(GTK_BOX(panel), heading, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(panel), controls, FALSE, FALSE, 0);
    gtk_widget_show_all(heading);
}

gboolean fm_oct_panel_load_calibration(FmOctPanel *panel, const char *path, int n_pixels,
                                       GError **error)
{
    int n = n_pixels > 0 ? n_pixels : panel->n_pixels;
    g_autofree char *base = g_path_get_basename(path);
    if (n <= 0) {
        /* no spectra yet: the run checks the length against the pixels per A-line */
        fm_param_form_set_value(panel->form, "calibration_file", path);
        g_free(panel->loaded_text);
        panel->loaded_text = g_strdup_printf(_("%s (checked when the data is open)"), base);
        update_calibration(panel);
        return TRUE;
    }
    g_autofree double *lambda = fm_oct_calib_read_csv(path, n, error);
    if (!lambda)
        return FALSE;
    fm_param_form_set_value(panel->form, "calibration_file", path);
    g_free(panel->loaded_text);
    panel->loaded_text =
        g_strdup_printf(_("%s: %d pixels, %.1f–%.1f nm"), base, n, lambda[0], lambda[n - 1]);
    update_calibration(panel);
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

static void fm_oct_panel_finalize(GObject *object)
{
    FmOctPanel *panel = FM_OCT_PANEL(object);
    g_free(panel->sidecar_calibration);
    g_free(panel->loaded_text);
    G_OBJECT_CLASS(fm_oct_panel_parent_class)->finalize(object);
}

static void fm_oct_panel_class_init(FmOctPanelClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = fm_oct_panel_finalize;
}

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
    panel->calib_label = gtk_label_new(NULL);
    gtk_label_set_line_wrap(GTK_LABEL(panel->calib_label), TRUE);
    gtk_label_set_line_wrap_mode(GTK_LABEL(panel->calib_label), PANGO_WRAP_WORD_CHAR);
    gtk_label_set_xalign(GTK_LABEL(panel->calib_label), 0);
    gtk_label_set_max_width_chars(GTK_LABEL(panel->calib_label), 30);
    gtk_box_pack_start(GTK_BOX(panel), panel->calib_label, FALSE, FALSE, 0);

    panel->form = FM_PARAM_FORM(fm_param_form_new());
    fm_param_form_set_method(panel->form, oct_method());
    g_signal_connect(panel->form, "changed", G_CALLBACK(form_changed), panel);
    gtk_box_pack_start(GTK_BOX(panel), GTK_WIDGET(panel->form), FALSE, FALSE, 0);
    update_calibration(panel);

    panel->backend_combo = gtk_combo_box_text_new();
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(panel->backend_combo), "auto", _("Auto"));
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(panel->backend_combo), "cpu", _("CPU"));
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(panel->backend_combo), "cuda", _("CUDA"));
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(panel->backend_combo), "auto");
    gtk_box_pack_start(GTK_BOX(panel), panel->backend_combo, FALSE, FALSE, 0);

    GtkWidget *run = gtk_button_new_with_label(_("Run"));
    gtk_actionable_set_action_name(GTK_ACTIONABLE(run), "win.oct-run");
    gtk_style_context_add_class(gtk_widget_get_style_context(run), "suggested-action");
    fm_panel_pin_to_bottom(run); /* in sight under the long form */
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
