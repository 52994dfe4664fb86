/* The live controls on a page's panel: the source, exposure, gain, frame rate and pixel format
 * within the camera's ranges, Start, Stop, Record with its file, and the status line. */
#include "live-private.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/gui/panel-util.h"

static void spin_changed(GtkSpinButton *spin, FmLive *live)
{
    if (!live->updating)
        fm_live_gui_apply_setting(live, GTK_WIDGET(spin));
}

static void combo_changed(GtkComboBox *combo, FmLive *live)
{
    if (!live->updating)
        fm_live_gui_apply_setting(live, GTK_WIDGET(combo));
}

static void start_clicked(GtkButton *button, FmLive *live)
{
    (void)button;
    fm_live_gui_start(live);
}

static void stop_clicked(GtkButton *button, FmLive *live)
{
    (void)button;
    fm_live_gui_stop(live);
}

static void record_toggled(GtkToggleButton *button, FmLive *live)
{
    if (!live->updating)
        fm_live_gui_record(live, gtk_toggle_button_get_active(button));
}

void fm_live_controls_show_record_file(FmLive *live)
{
    g_autofree char *base = g_path_get_basename(live->record_file);
    gtk_label_set_text(GTK_LABEL(live->c.record_path), base);
    gtk_widget_set_tooltip_text(live->c.record_path, live->record_file);
}

static void choose_clicked(GtkButton *button, FmLive *live)
{
    (void)button;
    GtkFileChooserNative *chooser =
        gtk_file_chooser_native_new(_("Record to"), GTK_WINDOW(live->win),
                                    GTK_FILE_CHOOSER_ACTION_SAVE, _("_Record here"), _("_Cancel"));
    GtkFileChooser *fc = GTK_FILE_CHOOSER(chooser);
    gtk_file_chooser_set_do_overwrite_confirmation(fc, TRUE);
    g_autofree char *dir = g_path_get_dirname(live->record_file);
    g_autofree char *base = g_path_get_basename(live->record_file);
    g_mkdir_with_parents(dir, 0755);
    gtk_file_chooser_set_current_folder(fc, dir);
    gtk_file_chooser_set_current_name(fc, base);
    if (gtk_native_dialog_run(GTK_NATIVE_DIALOG(chooser)) == GTK_RESPONSE_ACCEPT) {
        g_free(live->record_file);
        live->record_file = gtk_file_chooser_get_filename(fc);
        live->record_file_chosen = TRUE;
        fm_live_controls_show_record_file(live);
    }
    g_object_unref(chooser);
}

char *fm_live_default_record_path(FmLive *live)
{
    g_autofree char *dir = fm_catalogue_default_dir();
    g_autoptr(GDateTime) now = g_date_time_new_now_local();
    g_autofree char *stamp = g_date_time_format(now, "%Y%m%d_%H%M%S");
    g_autofree char *name = g_strdup(live->camera_id != NULL ? live->camera_id : "replay");
    g_strcanon(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.", '_');
    g_autofree char *file = g_strdup_printf("%s_%s.tif", name, stamp);
    return g_build_filename(dir, "recordings", file, NULL);
}

/* A dim label in front of a control that keeps its whole text (the pane ellipsizes labels):
 * the control gives way instead ("512 × 512 at 0, 0" cut "Frame rate (Hz)" at 1366x768). */
static GtkWidget *grid_label(const char *text)
{
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), 0.0);
    gtk_label_set_width_chars(GTK_LABEL(label), (int)g_utf8_strlen(text, -1));
    gtk_style_context_add_class(gtk_widget_get_style_context(label), "dim-label");
    return label;
}

/* A spin button with a dim label in front, in row of grid. */
static GtkWidget *add_spin(GtkGrid *grid, int row, const char *label, const char *name, int digits,
                           FmLive *live)
{
    GtkWidget *text = grid_label(label);
    GtkWidget *spin = gtk_spin_button_new_with_range(0, 1, 1);
    gtk_spin_button_set_digits(GTK_SPIN_BUTTON(spin), digits);
    gtk_entry_set_width_chars(GTK_ENTRY(spin), 7);
    gtk_widget_set_hexpand(spin, TRUE);
    gtk_widget_set_name(spin, name);
    gtk_grid_attach(grid, text, 0, row, 1, 1);
    gtk_grid_attach(grid, spin, 1, row, 1, 1);
    g_signal_connect(spin, "value-changed", G_CALLBACK(spin_changed), live);
    return spin;
}

void fm_live_controls_build(FmLive *live)
{
    FmLiveControls *c = &live->c;
    c->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    g_object_ref_sink(c->box);
    GtkBox *box = GTK_BOX(c->box);
    gtk_box_pack_start(box, fm_panel_heading(_("LIVE CAMERA")), FALSE, FALSE, 0);
    c->source_label = gtk_label_new("");
    gtk_widget_set_name(c->source_label, "fm-live-source");
    gtk_label_set_xalign(GTK_LABEL(c->source_label), 0.0);
    gtk_label_set_line_wrap(GTK_LABEL(c->source_label), TRUE);
    gtk_label_set_line_wrap_mode(GTK_LABEL(c->source_label), PANGO_WRAP_WORD_CHAR);
    gtk_label_set_max_width_chars(GTK_LABEL(c->source_label), 30);
    gtk_box_pack_start(box, c->source_label, FALSE, FALSE, 0);

    GtkWidget *grid = gtk_grid_new();
    gtk_grid_set_row_spacing(GTK_GRID(grid), 4);
    gtk_grid_set_column_spacing(GTK_GRID(grid), 8);
    /* TRANSLATORS: camera exposure time in microseconds */
    c->exposure = add_spin(GTK_GRID(grid), 0, _("Exposure (µs)"), "fm-live-exposure", 0, live);
    c->gain = add_spin(GTK_GRID(grid), 1, _("Gain (dB)"), "fm-live-gain", 1, live);
    c->rate = add_spin(GTK_GRID(grid), 2, _("Frame rate (Hz)"), "fm-live-rate", 1, live);
    GtkWidget *format_label = grid_label(_("Pixel format"));
    c->format = gtk_combo_box_text_new();
    gtk_widget_set_name(c->format, "fm-live-format");
    gtk_grid_attach(GTK_GRID(grid), format_label, 0, 3, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), c->format, 1, 3, 1, 1);
    g_signal_connect(c->format, "changed", G_CALLBACK(combo_changed), live);
    /* the region as the sensor's centre (fewer pixels per frame: faster cameras and maps) */
    GtkWidget *region_label = grid_label(_("Region"));
    c->region = gtk_combo_box_text_new();
    gtk_widget_set_name(c->region, "fm-live-region");
    gtk_widget_set_tooltip_text(c->region, _("The part of the sensor the camera sends"));
    gtk_grid_attach(GTK_GRID(grid), region_label, 0, 4, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), c->region, 1, 4, 1, 1);
    g_signal_connect(c->region, "changed", G_CALLBACK(combo_changed), live);
    gtk_box_pack_start(box, grid, FALSE, FALSE, 0);

    GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_box_set_homogeneous(GTK_BOX(row), TRUE);
    c->start = gtk_button_new_with_mnemonic(_("_Start"));
    gtk_widget_set_name(c->start, "fm-live-start");
    gtk_style_context_add_class(gtk_widget_get_style_context(c->start), "suggested-action");
    c->stop = gtk_button_new_with_mnemonic(_("St_op"));
    gtk_widget_set_name(c->stop, "fm-live-stop");
    c->record = gtk_toggle_button_new_with_mnemonic(_("Re_cord"));
    gtk_widget_set_name(c->record, "fm-live-record");
    gtk_widget_set_tooltip_text(c->record, _("Write every frame to the file below while running "
                                             "(press before Start to record from the first "
                                             "frame)"));
    gtk_box_pack_start(GTK_BOX(row), c->start, TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(row), c->stop, TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(row), c->record, TRUE, TRUE, 0);
    gtk_box_pack_start(box, row, FALSE, FALSE, 0);
    g_signal_connect(c->start, "clicked", G_CALLBACK(start_clicked), live);
    g_signal_connect(c->stop, "clicked", G_CALLBACK(stop_clicked), live);
    g_signal_connect(c->record, "toggled", G_CALLBACK(record_toggled), live);

    GtkWidget *file_row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    c->record_path = gtk_label_new("");
    gtk_widget_set_name(c->record_path, "fm-live-record-path");
    gtk_label_set_xalign(GTK_LABEL(c->record_path), 0.0);
    gtk_label_set_ellipsize(GTK_LABEL(c->record_path), PANGO_ELLIPSIZE_START);
    gtk_style_context_add_class(gtk_widget_get_style_context(c->record_path), "dim-label");
    c->record_choose = gtk_button_new_with_mnemonic(_("_File…"));
    gtk_widget_set_tooltip_text(c->record_choose, _("Where the recording goes"));
    gtk_box_pack_start(GTK_BOX(file_row), c->record_path, TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(file_row), c->record_choose, FALSE, FALSE, 0);
    gtk_box_pack_start(box, file_row, FALSE, FALSE, 0);
    g_signal_connect(c->record_choose, "clicked", G_CALLBACK(choose_clicked), live);

    c->status = gtk_label_new("");
    gtk_widget_set_name(c->status, "fm-live-status");
    gtk_label_set_xalign(GTK_LABEL(c->status), 0.0);
    gtk_label_set_line_wrap(GTK_LABEL(c->status), TRUE);
    gtk_label_set_line_wrap_mode(GTK_LABEL(c->status), PANGO_WRAP_WORD_CHAR);
    gtk_label_set_max_width_chars(GTK_LABEL(c->status), 30);
    gtk_box_pack_start(box, c->status, FALSE, FALSE, 0);
    gtk_box_pack_start(box, gtk_separator_new(GTK_ORIENTATION_HORIZONTAL), FALSE, FALSE, 4);

    gtk_widget_show_all(c->box);
    gtk_widget_hide(c->box);
    gtk_widget_set_no_show_all(c->box, TRUE);
}

void fm_live_controls_place(FmLive *live, const fm_live_page *page)
{
    GtkWidget *box = live->c.box;
    GtkWidget *parent = gtk_widget_get_parent(box);
    if (parent != GTK_WIDGET(page->panel)) {
        if (parent != NULL)
            gtk_container_remove(GTK_CONTAINER(parent), box);
        gtk_box_pack_start(page->panel, box, FALSE, FALSE, 0);
        gtk_box_reorder_child(page->panel, box, 1); /* under the page's heading */
    }
    gtk_widget_show(box);
}

/* One setting's range and value into its spin button (insensitive when the camera lacks it). */
static void show_setting(GtkWidget *spin, const fm_source_setting *s)
{
    gboolean ok = s->available && s->max > s->min;
    if (ok) {
        double span = s->max - s->min;
        double step = span >= 1000 ? 10 : span >= 10 ? 1 : 0.1;
        gtk_spin_button_set_range(GTK_SPIN_BUTTON(spin), s->min, s->max);
        gtk_spin_button_set_increments(GTK_SPIN_BUTTON(spin), step, step * 10);
        gtk_spin_button_set_value(GTK_SPIN_BUTTON(spin), s->value);
        g_autofree char *tip = g_strdup_printf(_("%.6g to %.6g"), s->min, s->max);
        gtk_widget_set_tooltip_text(spin, tip);
    } else {
        gtk_widget_set_tooltip_text(spin, _("This source has no such setting"));
    }
    g_object_set_data(G_OBJECT(spin), "fm-available", GINT_TO_POINTER(ok));
}

void fm_live_controls_show_settings(FmLive *live)
{
    FmLiveControls *c = &live->c;
    const fm_source_settings *s = &live->settings;
    live->updating = TRUE;
    show_setting(c->exposure, &s->exposure_us);
    show_setting(c->gain, &s->gain_db);
    show_setting(c->rate, &s->frame_rate_hz);
    gtk_combo_box_text_remove_all(GTK_COMBO_BOX_TEXT(c->format));
    for (int f = 0; f < FM_PIXFMT_UNKNOWN; f++)
        if (s->formats_offered & (1u << f))
            gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(c->format), fm_pixfmt_name(f),
                                      fm_pixfmt_name(f));
    if (s->format_name != NULL && s->format == FM_PIXFMT_UNKNOWN) /* shown, Start says why not */
        gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(c->format), s->format_name, s->format_name);
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(c->format), s->format_name);
    /* the full sensor, its centre half and quarter (each side), and the current one if other */
    GtkComboBoxText *region = GTK_COMBO_BOX_TEXT(c->region);
    gtk_combo_box_text_remove_all(region);
    const char *current = NULL;
    for (int div = 1; div <= 4 && s->sensor_width > 0; div *= 2) {
        int w = s->sensor_width / div, h = MAX(s->sensor_height / div, 1);
        g_autofree char *id = g_strdup_printf("%d", div);
        g_autofree char *text = div == 1 ? g_strdup_printf(_("Full sensor, %d × %d"), w, h)
                                         : g_strdup_printf(_("Centre %d × %d"), w, h);
        gtk_combo_box_text_append(region, id, text);
        if (w == s->width && h == s->height && s->x_offset == (s->sensor_width - w) / 2 / 2 * 2 &&
            s->y_offset == (s->sensor_height - h) / 2 / 2 * 2)
            current = div == 1 ? "1" : div == 2 ? "2" : "4";
    }
    if (current == NULL) {
        g_autofree char *text =
            g_strdup_printf(_("%d × %d at %d, %d"), s->width, s->height, s->x_offset, s->y_offset);
        gtk_combo_box_text_append(region, "0", text);
        current = "0";
    }
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(region), current);
    live->updating = FALSE;
    g_autofree char *text =
        g_strdup_printf(_("%s\n%d × %d pixels"), live->source_name, s->width, s->height);
    gtk_label_set_text(GTK_LABEL(c->source_label), text);
    if (!live->record_file_chosen) {
        g_free(live->record_file);
        live->record_file = fm_live_default_record_path(live);
    }
    fm_live_controls_show_record_file(live);
}

void fm_live_controls_sync(FmLive *live)
{
    FmLiveControls *c = &live->c;
    gboolean running = live->session != NULL;
    gboolean idle = !running && !live->stopping && live->page != NULL;
    gtk_widget_set_sensitive(c->start, idle);
    gtk_widget_set_sensitive(c->stop, running && !live->stopping);
    gtk_widget_set_sensitive(c->record, !live->stopping && live->page != NULL);
    gtk_widget_set_sensitive(c->record_choose,
                             !gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(c->record)));
    /* region and format before start; exposure, gain and rate at any time */
    gtk_widget_set_sensitive(c->format, idle && live->source != NULL && live->settings.is_camera);
    gtk_widget_set_sensitive(c->region, idle && live->source != NULL && live->settings.is_camera);
    GtkWidget *spins[] = {c->exposure, c->gain, c->rate};
    for (gsize i = 0; i < G_N_ELEMENTS(spins); i++)
        gtk_widget_set_sensitive(
            spins[i], (live->source != NULL || live->running != NULL) && !live->stopping &&
                          GPOINTER_TO_INT(g_object_get_data(G_OBJECT(spins[i]), "fm-available")));
}

void fm_live_controls_show_stats(FmLive *live)
{
    if (live->session == NULL) {
        if (live->stopping)
            gtk_label_set_text(GTK_LABEL(live->c.status),
                               _("Stopping: closing the recording and saving the maps…"));
        return;
    }
    fm_live_stats st;
    fm_live_get_stats(live->session, &st);
    GString *text = g_string_new(NULL);
    /* TRANSLATORS: frames per second of the camera, the processing and the screen */
    /* short lines: the panel is narrow on a laptop; the camera's name is above, in the
     * source label, and on the window's status bar */
    g_string_append_printf(text, _("camera %.1f fps · processed %.1f · shown %.1f"), st.camera_fps,
                           st.processed_fps, st.displayed_fps);
    g_string_append_printf(text,
                           _("\ndropped: camera %" G_GUINT64_FORMAT ", link %" G_GUINT64_FORMAT
                             ", display %" G_GUINT64_FORMAT),
                           st.dropped_by_camera, st.dropped_by_link, st.skipped_display);
    if (st.skipped_processing > 0)
        g_string_append_printf(text, _(", not processed %" G_GUINT64_FORMAT),
                               st.skipped_processing);
    if (gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(live->c.record))) {
        g_autofree char *base = g_path_get_basename(live->record_file);
        g_string_append_printf(text, _("\nRecording %" G_GUINT64_FORMAT " frames to %s"),
                               st.recorded, base);
    } else {
        g_string_append_printf(text, _("\n%" G_GUINT64_FORMAT " frames, not recorded"),
                               st.camera_frames);
    }
    gtk_label_set_text(GTK_LABEL(live->c.status), text->str);
    fm_live_job_update(live, &st);
    g_autofree char *line = g_strdup_printf(_("Live: %s · %.1f frames/s processed · %.1f shown"),
                                            live->source_name, st.processed_fps, st.displayed_fps);
    fm_window_set_status(live->win, line);
    g_string_free(text, TRUE);
}
