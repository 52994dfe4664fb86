/* FmWindow actions beyond running jobs: colormap, playback toggle, zoom, exports, ROIs from and
 * to label maps, open dialog, recent files, catalogue reopen/compare and drag-and-drop. */
#include "window-private.h"

#include "app/core/io/open.h"

#include <glib/gi18n.h>
#include <string.h>

#include "app/core/export.h"
#include "app/core/roi_labels.h"
#include "compare-view.h"

/* ---- colormap, play, zoom --------------------------------------------------------------- */

static void colormap_change_state(GSimpleAction *action, GVariant *value, gpointer user)
{
    FmWindow *win = user;
    fm_colormap cmap;
    const char *name = g_variant_get_string(value, NULL);
    if (!fm_colormap_parse(name, &cmap))
        return;
    g_simple_action_set_state(action, value);
    fm_map_view_set_colormap(win->map_view, cmap);
    win->updating = TRUE;
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(win->colormap_combo), name);
    win->updating = FALSE;
    GtkApplication *app = gtk_window_get_application(GTK_WINDOW(win));
    if (app != NULL)
        fm_application_set_setting(FM_APPLICATION(app), "colormap", name);
}

#define FIXED_SCALE_ID "fm-fixed-scale"

void fm_window_set_fixed_colour_scale(FmWindow *win, const char *name)
{
    GtkComboBox *combo = GTK_COMBO_BOX(win->colormap_combo);
    win->updating = TRUE;
    GtkTreeModel *model = gtk_combo_box_get_model(combo);
    GtkTreeIter iter;
    int id_column = gtk_combo_box_get_id_column(combo);
    for (gboolean ok = gtk_tree_model_get_iter_first(model, &iter); ok;) {
        g_autofree char *id = NULL;
        gtk_tree_model_get(model, &iter, id_column, &id, -1);
        if (g_strcmp0(id, FIXED_SCALE_ID) == 0)
            ok = gtk_list_store_remove(GTK_LIST_STORE(model), &iter);
        else
            ok = gtk_tree_model_iter_next(model, &iter);
    }
    if (name != NULL) {
        gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(combo), FIXED_SCALE_ID, name);
        gtk_combo_box_set_active_id(combo, FIXED_SCALE_ID);
    } else {
        g_autoptr(GVariant) state =
            g_action_group_get_action_state(G_ACTION_GROUP(win), "colormap");
        if (state != NULL)
            gtk_combo_box_set_active_id(combo, g_variant_get_string(state, NULL));
    }
    gtk_widget_set_sensitive(win->colormap_combo, name == NULL);
    /* the map view's own list and range act on nothing the view on show draws: not shown
     * beside the view's own selector and range (one tau choice, one range, one number format) */
    GtkWidget *range[] = {win->auto_range_toggle, win->min_spin, win->max_spin};
    for (gsize i = 0; i < G_N_ELEMENTS(range); i++)
        gtk_widget_set_visible(range[i], name == NULL);
    win->view_has_own_scale = name != NULL;
    fm_window_sync_family_bars(win);
    gtk_widget_set_tooltip_text(win->colormap_combo,
                                name != NULL ? _("The view on show has its own colour scale")
                                             : _("Colour map of the map view"));
    win->updating = FALSE;
}

static void colormap_combo_changed(GtkComboBox *combo, FmWindow *win)
{
    const char *id = gtk_combo_box_get_active_id(combo);
    if (!win->updating && id != NULL && g_strcmp0(id, FIXED_SCALE_ID) != 0)
        g_action_group_change_action_state(G_ACTION_GROUP(win), "colormap",
                                           g_variant_new_string(id));
}

static void play_change_state(GSimpleAction *action, GVariant *value, gpointer user)
{
    FmWindow *win = user;
    gboolean play = g_variant_get_boolean(value);
    if (play)
        fm_window_playback_start(win);
    else
        fm_window_playback_stop(win);
    /* playback_start may refuse (no stack); the state follows what really happens. */
    g_simple_action_set_state(action, g_variant_new_boolean(fm_window_playback_running(win)));
    gtk_image_set_from_icon_name(GTK_IMAGE(win->play_image),
                                 fm_window_playback_running(win) ? "media-playback-pause-symbolic"
                                                                 : "media-playback-start-symbolic",
                                 GTK_ICON_SIZE_BUTTON);
}

static void play_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    g_autoptr(GVariant) state = g_action_get_state(G_ACTION(action));
    g_action_change_state(G_ACTION(action), g_variant_new_boolean(!g_variant_get_boolean(state)));
}

static void zoom_fit_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    fm_map_view_zoom_to_fit(FM_WINDOW(user)->map_view);
}

/* ---- export ----------------------------------------------------------------------------- */

typedef enum { EXPORT_PNG, EXPORT_TIFF, EXPORT_CSV } ExportKind;

static gboolean export_to(FmWindow *win, ExportKind kind, const char *path, GError **error)
{
    gboolean owned = FALSE;
    fm_map *map = fm_window_current_map(win, &owned);
    gboolean ok = FALSE;
    if (map == NULL) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _("There is no map to export."));
        return FALSE;
    }
    const char *method = win->result != NULL && !owned ? win->result->method_id : "raw";
    if (kind == EXPORT_PNG) {
        double vmin = 0, vmax = 1;
        fm_map_view_get_range(win->map_view, &vmin, &vmax);
        int frame = owned ? 0 : CLAMP(win->frame, 0, map->n_frames - 1);
        ok = fm_export_png(path, map, frame, fm_map_view_get_colormap(win->map_view), vmin, vmax,
                           error);
    } else if (kind == EXPORT_TIFF) {
        const char *source = win->dataset != NULL ? win->dataset->source_path : NULL;
        g_autofree char *extra = source != NULL ? g_strdup_printf("source=%s", source) : NULL;
        ok = fm_export_tiff(path, map, method, extra, error);
    } else {
        GPtrArray *rois = fm_map_view_get_rois(win->map_view);
        if (rois == NULL || rois->len == 0) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                        _("Draw at least one ROI before exporting ROI statistics."));
        } else if (win->result != NULL) {
            ok = fm_export_roi_csv(path, win->result, rois, error);
        } else {
            fm_result *raw = fm_result_new("raw");
            fm_result_add_map(raw, map); /* the raw map of the frame on display */
            owned = FALSE;
            ok = fm_export_roi_csv(path, raw, rois, error);
            fm_result_free(raw);
        }
    }
    if (owned)
        fm_map_free(map);
    return ok;
}

static void export_response(GtkNativeDialog *dialog, int response, gpointer user)
{
    FmWindow *win = FM_WINDOW(g_object_get_data(G_OBJECT(dialog), "fm-window"));
    ExportKind kind = GPOINTER_TO_INT(user);
    if (response == GTK_RESPONSE_ACCEPT && !win->disposed) {
        g_autofree char *path = gtk_file_chooser_get_filename(GTK_FILE_CHOOSER(dialog));
        g_autoptr(GError) error = NULL;
        if (!export_to(win, kind, path, &error)) {
            g_autofree char *msg =
                g_strdup_printf(_("Export to %s failed: %s"), path, error->message);
            fm_window_show_message(win, GTK_MESSAGE_ERROR, msg);
        } else {
            g_autofree char *msg = g_strdup_printf(_("Exported %s"), path);
            gtk_label_set_text(GTK_LABEL(win->status_label), msg);
        }
    }
    g_object_unref(dialog);
}

static void export_ask(FmWindow *win, ExportKind kind)
{
    static const char *const ext[] = {"png", "tif", "csv"};
    static const char *const titles[] = {N_("Export Map as PNG"), N_("Export Map as TIFF"),
                                         N_("Export ROI Statistics")};
    GtkFileChooserNative *dialog = gtk_file_chooser_native_new(
        _(titles[kind]), GTK_WINDOW(win), GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"), _("_Cancel"));
    gtk_file_chooser_set_do_overwrite_confirmation(GTK_FILE_CHOOSER(dialog), TRUE);
    g_autofree char *stem = NULL;
    if (win->dataset != NULL && win->dataset->source_path != NULL) {
        g_autofree char *base = g_path_get_basename(win->dataset->source_path);
        char *dot = strrchr(base, '.');
        if (dot != NULL)
            *dot = '\0';
        stem = g_strdup(base);
    }
    g_autofree char *name = g_strdup_printf("%s-%s.%s", stem != NULL ? stem : "fluxmap",
                                            kind == EXPORT_CSV ? "rois" : win->map_name, ext[kind]);
    gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(dialog), name);
    g_object_set_data(G_OBJECT(dialog), "fm-window", win);
    g_signal_connect(dialog, "response", G_CALLBACK(export_response), GINT_TO_POINTER(kind));
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(dialog));
}

static void export_png_activated(GSimpleAction *a, GVariant *p, gpointer user)
{
    export_ask(user, EXPORT_PNG);
}

static void export_tiff_activated(GSimpleAction *a, GVariant *p, gpointer user)
{
    export_ask(user, EXPORT_TIFF);
}

static void export_csv_activated(GSimpleAction *a, GVariant *p, gpointer user)
{
    export_ask(user, EXPORT_CSV);
}

/* ---- ROIs from and to label maps --------------------------------------------------------- */

/* Every ROI on show or kept by the page for other slices (borrowed pointers). */
static GPtrArray *all_rois(FmWindow *win)
{
    GPtrArray *rois = fm_family_page_get_rois(fm_window_active_page(win));
    if (rois != NULL)
        return rois;
    rois = g_ptr_array_new();
    GPtrArray *shown = fm_map_view_get_rois(win->map_view);
    for (guint i = 0; shown != NULL && i < shown->len; i++)
        g_ptr_array_add(rois, shown->pdata[i]);
    return rois;
}

/* A label map as ROIs over the open dataset: roles from roles_text ("1=aorta,..."), else from
 * the description file beside the map, else none ("label N"). */
static gboolean import_rois(FmWindow *win, const char *path, const char *roles_text, GError **error)
{
    if (win->dataset == NULL) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                    _("Open a dataset before importing ROIs drawn on it."));
        return FALSE;
    }
    g_autofree char *sidecar = fm_roi_labels_sidecar_path(path);
    gboolean typed = roles_text != NULL && *roles_text != '\0';
    const char *roles = typed                                          ? roles_text
                        : g_file_test(sidecar, G_FILE_TEST_IS_REGULAR) ? sidecar
                                                                       : NULL;
    g_autoptr(GPtrArray) labels = roles ? fm_roi_labels_parse(roles, NULL, error) : NULL;
    if (roles != NULL && labels == NULL)
        return FALSE;
    g_autoptr(GPtrArray) rois =
        fm_roi_list_from_label_map(path, win->dataset, labels, typed, error);
    if (rois == NULL)
        return FALSE;
    fm_window_add_rois(win, rois, path);
    return TRUE;
}

void fm_window_add_rois(FmWindow *win, GPtrArray *rois, const char *source)
{
    if (!fm_family_page_add_rois(fm_window_active_page(win), rois))
        for (guint i = 0; i < rois->len; i++)
            fm_map_view_add_roi(win->map_view, fm_roi_copy(rois->pdata[i]));
    g_autofree char *base = g_path_get_basename(source);
    g_autofree char *status =
        g_strdup_printf(ngettext("Imported %u ROI from %s", "Imported %u ROIs from %s", rois->len),
                        rois->len, base);
    fm_window_set_status(win, status);
}

static void import_and_report(FmWindow *win, const char *path, const char *roles)
{
    g_autoptr(GError) error = NULL;
    if (!import_rois(win, path, roles, &error)) {
        g_autofree char *msg = g_strdup_printf(_("Importing ROIs failed: %s"), error->message);
        fm_window_show_message(win, GTK_MESSAGE_ERROR, msg);
    }
}

/* win.import-rois-file (path, roles): roles "" reads the description file beside the map. */
static void import_rois_file_activated(GSimpleAction *a, GVariant *parameter, gpointer user)
{
    const char *path = NULL, *roles = NULL;
    g_variant_get(parameter, "(&s&s)", &path, &roles);
    import_and_report(user, path, roles);
}

/* Without a description file beside the map, a small dialog asks which label is which role. */
static void ask_roles(FmWindow *win, const char *path)
{
    GtkWidget *dialog = gtk_dialog_new_with_buttons(
        _("Label Roles"), GTK_WINDOW(win), GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT,
        _("_Cancel"), GTK_RESPONSE_CANCEL, _("_Import"), GTK_RESPONSE_ACCEPT, NULL);
    gtk_dialog_set_default_response(GTK_DIALOG(dialog), GTK_RESPONSE_ACCEPT);
    GtkWidget *box = gtk_dialog_get_content_area(GTK_DIALOG(dialog));
    gtk_container_set_border_width(GTK_CONTAINER(box), 12);
    gtk_box_set_spacing(GTK_BOX(box), 6);
    g_autofree char *base = g_path_get_basename(path);
    g_autofree char *text =
        g_strdup_printf(_("Roles of the labels in %s, e.g. 1=aorta,2=portal_vein,3=liver.\n"
                          "Leave empty to name the ROIs \"label 1\", \"label 2\", …"),
                        base);
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    GtkWidget *entry = gtk_entry_new();
    gtk_entry_set_activates_default(GTK_ENTRY(entry), TRUE);
    gtk_entry_set_placeholder_text(GTK_ENTRY(entry), "1=aorta,2=portal_vein,3=liver");
    gtk_box_pack_start(GTK_BOX(box), label, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(box), entry, FALSE, FALSE, 0);
    gtk_widget_show_all(dialog);
    if (gtk_dialog_run(GTK_DIALOG(dialog)) == GTK_RESPONSE_ACCEPT && !win->disposed) {
        g_autofree char *roles = g_strdup(gtk_entry_get_text(GTK_ENTRY(entry)));
        gtk_widget_destroy(dialog);
        import_and_report(win, path, roles);
        return;
    }
    gtk_widget_destroy(dialog);
}

static void import_response(GtkNativeDialog *dialog, int response, gpointer user)
{
    FmWindow *win = user;
    g_autofree char *path = response == GTK_RESPONSE_ACCEPT
                                ? gtk_file_chooser_get_filename(GTK_FILE_CHOOSER(dialog))
                                : NULL;
    g_object_unref(dialog);
    if (path != NULL && !win->disposed) {
        g_autofree char *sidecar = fm_roi_labels_sidecar_path(path);
        if (g_file_test(sidecar, G_FILE_TEST_IS_REGULAR))
            import_and_report(win, path, NULL);
        else
            ask_roles(win, path);
    }
    g_object_unref(win);
}

static GtkFileFilter *label_map_filter(void)
{
    GtkFileFilter *filter = gtk_file_filter_new();
    gtk_file_filter_set_name(filter, _("Label maps (NIfTI, TIFF)"));
    static const char *const patterns[] = {"*.nii", "*.nii.gz", "*.NII", "*.NII.GZ",
                                           "*.tif", "*.tiff",   "*.TIF", "*.TIFF"};
    for (gsize i = 0; i < G_N_ELEMENTS(patterns); i++)
        gtk_file_filter_add_pattern(filter, patterns[i]);
    return filter;
}

static void import_rois_activated(GSimpleAction *a, GVariant *p, gpointer user)
{
    FmWindow *win = user;
    GtkFileChooserNative *dialog =
        gtk_file_chooser_native_new(_("Import ROIs from Mask"), GTK_WINDOW(win),
                                    GTK_FILE_CHOOSER_ACTION_OPEN, _("_Import"), _("_Cancel"));
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(dialog), label_map_filter());
    if (win->dataset != NULL && win->dataset->source_path != NULL) {
        g_autofree char *folder = g_path_get_dirname(win->dataset->source_path);
        gtk_file_chooser_set_current_folder(GTK_FILE_CHOOSER(dialog), folder);
    }
    g_signal_connect(dialog, "response", G_CALLBACK(import_response), g_object_ref(win));
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(dialog));
}

static void export_rois_to(FmWindow *win, const char *path)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) rois = all_rois(win);
    g_autofree char *mapping = NULL;
    if (win->dataset == NULL)
        g_set_error(&error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                    _("Open a dataset: the label map takes its grid and geometry."));
    else if (rois->len == 0)
        g_set_error(&error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                    _("Draw or import at least one ROI before exporting them."));
    if (error != NULL || !fm_roi_list_to_label_map(path, rois, win->dataset, &mapping, &error)) {
        g_autofree char *msg = g_strdup_printf(_("Export to %s failed: %s"), path, error->message);
        fm_window_show_message(win, GTK_MESSAGE_ERROR, msg);
        return;
    }
    g_autofree char *msg = g_strdup_printf(_("Exported %u ROIs to %s (%s)"), rois->len, path,
                                           *mapping ? mapping : _("no roles"));
    fm_window_set_status(win, msg);
}

static void export_rois_file_activated(GSimpleAction *a, GVariant *parameter, gpointer user)
{
    export_rois_to(user, g_variant_get_string(parameter, NULL));
}

static void export_rois_response(GtkNativeDialog *dialog, int response, gpointer user)
{
    FmWindow *win = user;
    g_autofree char *path = response == GTK_RESPONSE_ACCEPT
                                ? gtk_file_chooser_get_filename(GTK_FILE_CHOOSER(dialog))
                                : NULL;
    g_object_unref(dialog);
    if (path != NULL && !win->disposed)
        export_rois_to(win, path);
    g_object_unref(win);
}

static void export_rois_activated(GSimpleAction *a, GVariant *p, gpointer user)
{
    FmWindow *win = user;
    GtkFileChooserNative *dialog =
        gtk_file_chooser_native_new(_("Export ROIs as Label Map"), GTK_WINDOW(win),
                                    GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"), _("_Cancel"));
    gtk_file_chooser_set_do_overwrite_confirmation(GTK_FILE_CHOOSER(dialog), TRUE);
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(dialog), label_map_filter());
    g_autofree char *stem = NULL;
    if (win->dataset != NULL && win->dataset->source_path != NULL) {
        g_autofree char *base = g_path_get_basename(win->dataset->source_path);
        char *dot = strchr(base, '.');
        if (dot != NULL)
            *dot = '\0';
        stem = g_strdup(base);
    }
    g_autofree char *name = g_strdup_printf("%s-rois.nii.gz", stem != NULL ? stem : "fluxmap");
    gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(dialog), name);
    g_signal_connect(dialog, "response", G_CALLBACK(export_rois_response), g_object_ref(win));
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(dialog));
}

static const GActionEntry entries[] = {
    {"colormap", NULL, "s", "'viridis'", colormap_change_state, {0}},
    {"play", play_activated, NULL, "false", play_change_state, {0}},
    {"zoom-fit", zoom_fit_activated, NULL, NULL, NULL, {0}},
    {"export-png", export_png_activated, NULL, NULL, NULL, {0}},
    {"export-tiff", export_tiff_activated, NULL, NULL, NULL, {0}},
    {"export-csv", export_csv_activated, NULL, NULL, NULL, {0}},
    {"import-rois", import_rois_activated, NULL, NULL, NULL, {0}},
    {"import-rois-file", import_rois_file_activated, "(ss)", NULL, NULL, {0}},
    {"export-rois", export_rois_activated, NULL, NULL, NULL, {0}},
    {"export-rois-file", export_rois_file_activated, "s", NULL, NULL, {0}},
};

static void set_enabled(FmWindow *win, const char *name, gboolean enabled)
{
    GAction *action = g_action_map_lookup_action(G_ACTION_MAP(win), name);
    if (action != NULL)
        g_simple_action_set_enabled(G_SIMPLE_ACTION(action), enabled);
}

void fm_window_update_action_state(FmWindow *win)
{
    gboolean have = win->dataset != NULL;
    set_enabled(win, "play", have && fm_dataset_frames(win->dataset) > 1);
    set_enabled(win, "export-png", have || win->result != NULL);
    set_enabled(win, "export-tiff", have || win->result != NULL);
    set_enabled(win, "export-csv", have || win->result != NULL);
    set_enabled(win, "import-rois", have);
    set_enabled(win, "import-rois-file", have);
    set_enabled(win, "export-rois", have);
    set_enabled(win, "export-rois-file", have);
}

void fm_window_actions_init(FmWindow *win)
{
    g_action_map_add_action_entries(G_ACTION_MAP(win), entries, G_N_ELEMENTS(entries), win);
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(win->colormap_combo), "viridis");
    fm_map_view_set_colormap(win->map_view, FM_COLORMAP_VIRIDIS);
    g_signal_connect(win->colormap_combo, "changed", G_CALLBACK(colormap_combo_changed), win);

    g_autoptr(GtkBuilder) builder =
        gtk_builder_new_from_resource("/io/github/fluxmap/Fluxmap/menus.ui");
    GMenuModel *menu = G_MENU_MODEL(gtk_builder_get_object(builder, "main_menu"));
    gtk_menu_button_set_menu_model(GTK_MENU_BUTTON(win->menu_button), menu);
}

/* ---- open dialog ------------------------------------------------------------------------ */

static void open_response(GtkNativeDialog *dialog, int response, gpointer user)
{
    FmWindow *win = user;
    if (response == GTK_RESPONSE_ACCEPT && !win->disposed) {
        g_autofree char *path = gtk_file_chooser_get_filename(GTK_FILE_CHOOSER(dialog));
        if (path != NULL)
            fm_window_open_file(win, path);
    }
    g_object_unref(dialog);
    g_object_unref(win);
}

void fm_window_choose_file(FmWindow *win)
{
    GtkFileChooserNative *dialog = gtk_file_chooser_native_new(
        _("Open Dataset"), GTK_WINDOW(win), GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
    /* One filter per format the readers know (app/core/io/open.c), and their union first. */
    gsize n_formats = 0;
    const fm_file_format *formats = fm_dataset_formats(&n_formats);
    GtkFileFilter *supported = gtk_file_filter_new();
    gtk_file_filter_set_name(supported, _("All supported datasets"));
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(dialog), supported);
    for (gsize f = 0; f < n_formats; f++) {
        GtkFileFilter *one = gtk_file_filter_new();
        gtk_file_filter_set_name(one, _(formats[f].name));
        for (int i = 0; formats[f].patterns[i] != NULL; i++) {
            gtk_file_filter_add_pattern(one, formats[f].patterns[i]);
            gtk_file_filter_add_pattern(supported, formats[f].patterns[i]);
        }
        gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(dialog), one);
    }
    GtkFileFilter *all = gtk_file_filter_new();
    gtk_file_filter_set_name(all, _("All files"));
    gtk_file_filter_add_pattern(all, "*");
    gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(dialog), all);
    GtkApplication *app = gtk_window_get_application(GTK_WINDOW(win));
    g_autofree char *folder =
        app != NULL ? fm_application_get_setting(FM_APPLICATION(app), "last-folder", "") : NULL;
    if (folder != NULL && folder[0] != '\0' && g_file_test(folder, G_FILE_TEST_IS_DIR))
        gtk_file_chooser_set_current_folder(GTK_FILE_CHOOSER(dialog), folder);
    g_signal_connect(dialog, "response", G_CALLBACK(open_response), g_object_ref(win));
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(dialog));
}

/* ---- recent files ----------------------------------------------------------------------- */

static gint newest_first(gconstpointer a, gconstpointer b)
{
    GtkRecentInfo *ia = *(GtkRecentInfo **)a, *ib = *(GtkRecentInfo **)b;
    time_t ta = gtk_recent_info_get_modified(ia), tb = gtk_recent_info_get_modified(ib);
    return ta < tb ? 1 : ta > tb ? -1 : 0;
}

static void rebuild_recent_menu(GtkRecentManager *manager, FmWindow *win)
{
    g_menu_remove_all(win->recent_menu);
    GList *items = gtk_recent_manager_get_items(manager);
    g_autoptr(GPtrArray) ours = g_ptr_array_new();
    for (GList *l = items; l != NULL; l = l->next) {
        GtkRecentInfo *info = l->data;
        /* What Fluxmap itself opened, whatever the format (NIfTI, DICOM folders, OCT raw...):
         * a list of extensions kept dropping the formats added later. */
        if (gtk_recent_info_is_local(info) &&
            gtk_recent_info_has_application(info, g_get_application_name()))
            g_ptr_array_add(ours, info);
    }
    g_ptr_array_sort(ours, newest_first);
    for (guint i = 0; i < ours->len && i < 10; i++) {
        g_autofree char *path =
            g_filename_from_uri(gtk_recent_info_get_uri(ours->pdata[i]), NULL, NULL);
        if (path == NULL)
            continue;
        g_autofree char *base = g_path_get_basename(path);
        /* a menu label reads "_" as a mnemonic: doubled, the name shows as it is */
        g_auto(GStrv) pieces = g_strsplit(base, "_", -1);
        g_autofree char *label = g_strjoinv("__", pieces);
        g_autoptr(GMenuItem) item = g_menu_item_new(label, NULL);
        g_menu_item_set_action_and_target_value(item, "app.open", g_variant_new_string(path));
        g_menu_append_item(win->recent_menu, item);
    }
    if (g_menu_model_get_n_items(G_MENU_MODEL(win->recent_menu)) == 0)
        g_menu_append(win->recent_menu, _("No recent datasets"), "win.none");
    g_list_free_full(items, (GDestroyNotify)gtk_recent_info_unref);
}

void fm_window_recent_init(FmWindow *win)
{
    win->recent = gtk_recent_manager_get_default();
    win->recent_menu = g_menu_new();
    g_autoptr(GMenu) top = g_menu_new();
    g_menu_append_section(top, _("Open Recent"), G_MENU_MODEL(win->recent_menu));
    gtk_menu_button_set_menu_model(GTK_MENU_BUTTON(win->recent_button), G_MENU_MODEL(top));
    rebuild_recent_menu(win->recent, win);
    g_signal_connect_object(win->recent, "changed", G_CALLBACK(rebuild_recent_menu), win, 0);
}

void fm_window_recent_add(FmWindow *win, const char *path)
{
    g_autofree char *uri = g_filename_to_uri(path, NULL, NULL);
    if (uri != NULL)
        gtk_recent_manager_add_item(win->recent, uri);
}

/* ---- catalogue: reopen and compare runs ------------------------------------------------- */

static void run_reopened(FmCatalogueView *view, gint64 run_id, FmWindow *win)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue_run) run = fm_catalogue_get_run(win->catalogue, run_id, &error);
    if (run == NULL) {
        fm_window_show_message(win, GTK_MESSAGE_ERROR, error->message);
        return;
    }
    fm_window_playback_stop(win);
    fm_result *result = fm_result_new(run->method_id);
    result->params_json = g_strdup(run->params_json);
    for (guint i = 0; run->outputs != NULL && i < run->outputs->len; i++) {
        const fm_catalogue_output *out = run->outputs->pdata[i];
        fm_map *map = fm_catalogue_load_map(win->catalogue, run_id, out->name, &error);
        if (map == NULL) {
            fm_result_free(result);
            fm_window_show_message(win, GTK_MESSAGE_ERROR, error->message);
            return;
        }
        fm_result_add_map(result, map);
    }
    /* A run is shown over the dataset it ran on, as its page needs (OCT's depth scale comes
     * from the spectra's calibration, DCE's maps lie over the anatomy). */
    const char *path = run->dataset_path;
    gboolean other =
        path != NULL && (win->dataset == NULL || g_strcmp0(win->dataset->source_path, path) != 0);
    if (other && g_file_test(path, G_FILE_TEST_EXISTS)) {
        fm_window_open_for_result(win, path, result, run_id);
        return;
    }
    fm_window_show_reopened(win, result, run_id); /* first: its page comes on show */
    if (other) { /* a note of the run's page, which a change of page would take away */
        g_autofree char *msg = g_strdup_printf(_("The dataset of run #%" G_GINT64_FORMAT
                                                 ", %s, is no longer there: its maps are "
                                                 "shown without it."),
                                               run_id, path);
        fm_window_show_message(win, GTK_MESSAGE_INFO, msg);
    }
}

void fm_window_show_reopened(FmWindow *win, fm_result *result, gint64 run_id)
{
    g_autofree char *status = g_strdup_printf(_("Reopened a %s run"), result->method_id);
    fm_window_set_result(win, result, FALSE);
    win->showing_run_id = run_id;
    fm_window_pages_show_result(win, result);
    win->showing_run_id = 0;
    fm_window_set_status(win, status);
}

/* The map to compare: the one on show when both runs have it, else the first output of run a
 * that run b has too (runs of any family: "sfi", "tau", "bscan", "ka", …); NULL when none. */
static char *shared_map(FmWindow *win, gint64 a, gint64 b, GError **error)
{
    g_autoptr(fm_catalogue_run) run_a = fm_catalogue_get_run(win->catalogue, a, error);
    g_autoptr(fm_catalogue_run) run_b =
        run_a ? fm_catalogue_get_run(win->catalogue, b, error) : NULL;
    if (run_b == NULL)
        return NULL;
    char *first_shared = NULL;
    for (guint i = 0; run_a->outputs != NULL && i < run_a->outputs->len; i++) {
        const char *name = ((const fm_catalogue_output *)run_a->outputs->pdata[i])->name;
        gboolean in_b = FALSE;
        for (guint j = 0; run_b->outputs != NULL && j < run_b->outputs->len; j++)
            in_b |=
                g_strcmp0(((const fm_catalogue_output *)run_b->outputs->pdata[j])->name, name) == 0;
        if (in_b && g_strcmp0(name, win->map_name) == 0) {
            g_free(first_shared);
            return g_strdup(name);
        }
        if (in_b && first_shared == NULL)
            first_shared = g_strdup(name);
    }
    if (first_shared == NULL)
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                    _("Runs #%" G_GINT64_FORMAT " (%s) and #%" G_GINT64_FORMAT
                      " (%s) have no map in common to compare."),
                    a, run_a->method_id, b, run_b->method_id);
    return first_shared;
}

static void compare_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    FmWindow *win = user;
    gint64 a = 0, b = 0;
    if (win->catalogue == NULL || !fm_catalogue_view_get_pair(win->catalogue_view, &a, &b)) {
        fm_window_show_message(win, GTK_MESSAGE_INFO,
                               _("Select two runs in the catalogue (Ctrl+click) to compare."));
        return;
    }
    g_autoptr(GError) error = NULL;
    g_autofree char *name = shared_map(win, a, b, &error);
    if (name == NULL ||
        fm_compare_view_new(GTK_WINDOW(win), win->catalogue, a, b, name,
                            fm_map_view_get_colormap(win->map_view), &error) == NULL)
        fm_window_show_message(win, GTK_MESSAGE_ERROR, error->message);
}

static void compare_requested(FmCatalogueView *view, FmWindow *win)
{
    g_action_group_activate_action(G_ACTION_GROUP(win), "compare", NULL);
}

void fm_window_catalogue_init(FmWindow *win)
{
    static const GActionEntry catalogue_entries[] = {
        {"compare", compare_activated, NULL, NULL, NULL, {0}},
    };
    g_action_map_add_action_entries(G_ACTION_MAP(win), catalogue_entries,
                                    G_N_ELEMENTS(catalogue_entries), win);
    g_signal_connect(win->catalogue_view, "run-activated", G_CALLBACK(run_reopened), win);
    g_signal_connect(win->catalogue_view, "compare-requested", G_CALLBACK(compare_requested), win);
}

/* ---- drag and drop ---------------------------------------------------------------------- */

gboolean fm_window_open_uris(FmWindow *win, const char *const *uris)
{
    for (int i = 0; uris != NULL && uris[i] != NULL; i++) {
        g_autofree char *path = g_filename_from_uri(uris[i], NULL, NULL);
        if (path != NULL) {
            fm_window_open_file(win, path);
            return TRUE;
        }
    }
    return FALSE;
}

GMenuModel *fm_window_get_recent_menu(FmWindow *win)
{
    return G_MENU_MODEL(win->recent_menu);
}

static void drag_data_received(GtkWidget *widget, GdkDragContext *context, int x, int y,
                               GtkSelectionData *data, guint info, guint time, FmWindow *win)
{
    g_auto(GStrv) uris = gtk_selection_data_get_uris(data);
    gtk_drag_finish(context, fm_window_open_uris(win, (const char *const *)uris), FALSE, time);
}

void fm_window_dnd_init(FmWindow *win)
{
    gtk_drag_dest_set(GTK_WIDGET(win), GTK_DEST_DEFAULT_ALL, NULL, 0, GDK_ACTION_COPY);
    gtk_drag_dest_add_uri_targets(GTK_WIDGET(win));
    g_signal_connect(win, "drag-data-received", G_CALLBACK(drag_data_received), win);
}
