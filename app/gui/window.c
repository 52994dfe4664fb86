/* FmWindow: builds the main window from ui/window.ui, shows the dataset or result maps and
 * keeps the read-outs (ROI stats, cursor) current; opening is in window-open.c, jobs in
 * window-jobs.c. */
#include "window-private.h"

#include "demos.h"
#include "family-page.h"
#include "family-switcher.h"
#include "live/live-gui.h"
#include "pages.h"
#include "pane-fit.h"
#include "panel-util.h"
#include "start-page.h"
#include "window-batch.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

G_DEFINE_TYPE(FmWindow, fm_window, GTK_TYPE_APPLICATION_WINDOW)

enum { SIGNAL_RESULT_SHOWN, SIGNAL_DATASET_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* The note's first part (up to a "; " or line break outside brackets), capitalised, as the
 * one-line headline. */
static char *headline_of(const char *text)
{
    int depth = 0;
    const char *p = text;
    for (; *p != '\0'; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')' && depth > 0)
            depth--;
        else if (*p == '\n' || (*p == ';' && depth == 0))
            break;
    }
    g_autofree char *first = g_strstrip(g_strndup(text, (gsize)(p - text)));
    if (first[0] == '\0')
        return g_steal_pointer(&first);
    gunichar c = g_utf8_get_char(first);
    char upper[8] = {0};
    g_unichar_to_utf8(g_unichar_toupper(c), upper);
    return g_strconcat(upper, g_utf8_next_char(first), NULL);
}

void fm_window_show_message(FmWindow *win, GtkMessageType type, const char *text)
{
    g_free(win->message);
    win->message = g_strdup(text);
    win->message_from_open = FALSE;
    /* the note belongs to the page on show: it goes when another page comes on show */
    g_free(win->message_page);
    win->message_page = g_strdup(win->panel_stack != NULL ? fm_window_get_family(win) : NULL);
    g_autofree char *headline = headline_of(text);
    g_autofree char *whole = g_strstrip(g_strdup(text));
    gboolean more = g_utf8_strlen(whole, -1) > g_utf8_strlen(headline, -1) || strlen(text) > 120;
    gtk_label_set_text(GTK_LABEL(win->info_label), headline);
    gtk_widget_set_tooltip_text(win->info_label, more ? NULL : text);
    gtk_label_set_text(GTK_LABEL(win->info_details_label), text);
    gtk_expander_set_expanded(GTK_EXPANDER(win->info_details), FALSE);
    gtk_widget_set_visible(win->info_details, more);
    gtk_info_bar_set_message_type(GTK_INFO_BAR(win->info_bar), type);
    gtk_info_bar_set_revealed(GTK_INFO_BAR(win->info_bar), TRUE);
}

static void info_bar_response(GtkInfoBar *bar, int response, FmWindow *win)
{
    (void)response;
    gtk_info_bar_set_revealed(bar, FALSE);
    g_clear_pointer(&win->message, g_free);
    g_clear_pointer(&win->message_page, g_free);
}

void fm_window_hide_message(FmWindow *win)
{
    info_bar_response(GTK_INFO_BAR(win->info_bar), GTK_RESPONSE_CLOSE, win);
}

void fm_window_set_status(FmWindow *win, const char *text)
{
    gtk_label_set_text(GTK_LABEL(win->status_label), text);
}

/* ---- display ---------------------------------------------------------------------------- */

fm_map *fm_window_current_map(FmWindow *win, gboolean *owned)
{
    *owned = FALSE;
    if (g_strcmp0(win->map_name, "raw") != 0)
        return win->result != NULL ? fm_result_get_map(win->result, win->map_name) : NULL;
    if (win->dataset == NULL)
        return NULL;
    int w = fm_dataset_width(win->dataset), h = fm_dataset_height(win->dataset);
    int f = CLAMP(win->frame, 0, fm_dataset_frames(win->dataset) - 1);
    fm_map *map = fm_map_new("raw", "counts", w, h, 1);
    gsize n = (gsize)w * h, first = (gsize)f * n;
    for (gsize i = 0; i < n; i++)
        map->data[i] = (float)fm_dataset_value(win->dataset, first + i);
    *owned = TRUE;
    return map;
}

static void update_roi_stats(FmWindow *win)
{
    GPtrArray *rois = fm_map_view_get_rois(win->map_view);
    int w = 0, h = 0;
    const float *data = fm_map_view_get_data(win->map_view, &w, &h);
    if (rois == NULL || rois->len == 0 || data == NULL) {
        gtk_label_set_text(GTK_LABEL(win->roi_stats_label),
                           _("Draw an ROI (Rectangle, Ellipse, Polygon) for live mean, sd and n."));
        return;
    }
    GString *text = g_string_new(NULL);
    for (guint i = 0; i < rois->len; i++) {
        const fm_roi *roi = rois->pdata[i];
        fm_roi_stats st = fm_roi_statistics(roi, data, w, h);
        g_autofree char *fallback = g_strdup_printf(_("ROI %u"), i + 1);
        const char *unit = win->shown_unit != NULL ? win->shown_unit : "";
        g_string_append_printf(text, _("%s%s (%s): mean %.4g %s · sd %.4g · n %" G_GSIZE_FORMAT),
                               i > 0 ? "\n" : "", roi->name != NULL ? roi->name : fallback,
                               fm_roi_kind_name(roi->kind), st.mean, unit, st.sd, st.n);
    }
    gtk_label_set_text(GTK_LABEL(win->roi_stats_label), text->str);
    g_string_free(text, TRUE);
}

void fm_window_update_range_widgets(FmWindow *win)
{
    double vmin = 0, vmax = 1;
    fm_map_view_get_range(win->map_view, &vmin, &vmax);
    double step = isfinite(vmax - vmin) && vmax > vmin ? (vmax - vmin) / 100.0 : 0.01;
    int digits = step >= 1 ? 0 : CLAMP((int)ceil(-log10(step)) + 1, 1, 6);
    win->updating = TRUE;
    for (int i = 0; i < 2; i++) {
        GtkSpinButton *spin = GTK_SPIN_BUTTON(i == 0 ? win->min_spin : win->max_spin);
        gtk_spin_button_set_digits(spin, digits);
        gtk_spin_button_set_increments(spin, step, step * 10);
        gtk_spin_button_set_value(spin, i == 0 ? vmin : vmax);
    }
    win->updating = FALSE;
}

static const char *map_title(const char *name)
{
    if (g_strcmp0(name, "sfi") == 0)
        return _("SFI");
    if (g_strcmp0(name, "contrast") == 0)
        return _("Contrast K");
    if (g_strcmp0(name, "raw") == 0)
        return _("Intensity");
    return name;
}

void fm_window_show_current(FmWindow *win)
{
    if (win->disposed)
        return;
    gboolean owned = FALSE;
    fm_map *map = fm_window_current_map(win, &owned);
    g_clear_pointer(&win->shown_unit, g_free);
    if (map == NULL) {
        fm_map_view_clear(win->map_view);
        if (win->dataset != NULL && g_strcmp0(win->map_name, "raw") != 0)
            fm_window_set_status(win, _("No result yet: press Run, or play the stack."));
    } else {
        gboolean first = !fm_map_view_has_map(win->map_view);
        int f = CLAMP(win->frame, 0, map->n_frames - 1);
        win->shown_unit = g_strdup(map->unit);
        fm_map_view_set_map(win->map_view, fm_map_frame(map, f), map->width, map->height,
                            map_title(map->name), map->unit);
        if (first)
            fm_map_view_zoom_to_fit(win->map_view);
        if (owned)
            fm_map_free(map);
    }
    fm_window_update_range_widgets(win);
    update_roi_stats(win);
}

void fm_window_select_map(FmWindow *win, const char *name)
{
    g_free(win->map_name);
    win->map_name = g_strdup(name);
    win->updating = TRUE;
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(win->map_combo), name);
    win->updating = FALSE;
    fm_window_show_current(win);
}

void fm_window_set_frame(FmWindow *win, int frame)
{
    win->frame = frame;
    int n = win->dataset != NULL ? fm_dataset_frames(win->dataset) : 1;
    g_autofree char *text = g_strdup_printf(_("frame %d / %d"), frame + 1, n);
    gtk_label_set_text(GTK_LABEL(win->frame_label), text);
    win->updating = TRUE;
    gtk_range_set_value(GTK_RANGE(win->frame_scale), frame);
    win->updating = FALSE;
}

fm_result *fm_window_copy_result(const fm_result *src)
{
    fm_result *r = fm_result_new(src->method_id);
#define COPY_FIELD(f)                                                                              \
    if (r->f == NULL)                                                                              \
        r->f = g_strdup(src->f);
    COPY_FIELD(params_json)
    COPY_FIELD(backend)
    COPY_FIELD(device)
    COPY_FIELD(note)
#undef COPY_FIELD
    r->elapsed_ms = src->elapsed_ms;
    for (guint i = 0; src->maps != NULL && i < src->maps->len; i++) {
        const fm_map *m = src->maps->pdata[i];
        fm_map *copy = fm_map_new(m->name, m->unit, m->width, m->height, m->n_frames);
        memcpy(copy->data, m->data, fm_map_n_values(m) * sizeof(float));
        fm_result_add_map(r, copy);
    }
    return r;
}

void fm_window_set_result(FmWindow *win, fm_result *result, gboolean live)
{
    g_clear_pointer(&win->result, fm_result_free);
    g_clear_pointer(&win->reopen_result, fm_result_free);
    g_clear_pointer(&win->reopen_path, g_free);
    win->result = result;
    win->result_is_live = live;
    fm_window_update_action_state(win);
}

/* ---- widgets' handlers ------------------------------------------------------------------ */

static void map_combo_changed(GtkComboBox *combo, FmWindow *win)
{
    if (win->updating)
        return;
    const char *id = gtk_combo_box_get_active_id(combo);
    g_free(win->map_name);
    win->map_name = g_strdup(id != NULL ? id : "raw");
    fm_window_show_current(win);
}

static void frame_changed(GtkRange *range, FmWindow *win)
{
    if (win->updating)
        return;
    int frame = (int)lround(gtk_range_get_value(range));
    fm_window_set_frame(win, frame);
    /* A live map belongs to one frame: recompute it rather than show a stale one. */
    if (win->result_is_live && g_strcmp0(win->map_name, "raw") != 0 &&
        !fm_window_playback_running(win))
        fm_window_playback_compute(win, frame);
    else
        fm_window_show_current(win);
}

static void auto_range_toggled(GtkToggleButton *button, FmWindow *win)
{
    gboolean automatic = gtk_toggle_button_get_active(button);
    gtk_widget_set_sensitive(win->min_spin, !automatic);
    gtk_widget_set_sensitive(win->max_spin, !automatic);
    if (automatic)
        fm_map_view_set_auto_range(win->map_view, 1.0, 99.0);
    fm_window_update_range_widgets(win);
}

static void range_spin_changed(GtkSpinButton *spin, FmWindow *win)
{
    if (win->updating || gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(win->auto_range_toggle)))
        return;
    double vmin = gtk_spin_button_get_value(GTK_SPIN_BUTTON(win->min_spin));
    double vmax = gtk_spin_button_get_value(GTK_SPIN_BUTTON(win->max_spin));
    if (vmax > vmin)
        fm_map_view_set_range(win->map_view, vmin, vmax);
}

static void tool_toggled(GtkToggleButton *button, FmWindow *win)
{
    if (!gtk_toggle_button_get_active(button))
        return;
    FmMapTool tool = GTK_WIDGET(button) == win->rect_tool      ? FM_MAP_TOOL_RECTANGLE
                     : GTK_WIDGET(button) == win->ellipse_tool ? FM_MAP_TOOL_ELLIPSE
                     : GTK_WIDGET(button) == win->polygon_tool ? FM_MAP_TOOL_POLYGON
                                                               : FM_MAP_TOOL_PAN;
    fm_map_view_set_tool(win->map_view, tool);
}

static void clear_rois_clicked(GtkButton *button, FmWindow *win)
{
    fm_map_view_clear_rois(win->map_view);
    update_roi_stats(win);
}

static void rois_changed(FmMapView *view, FmWindow *win)
{
    update_roi_stats(win);
}

static void cursor_moved(FmMapView *view, int x, int y, double value, FmWindow *win)
{
    if (x < 0) {
        gtk_label_set_text(GTK_LABEL(win->cursor_label), "");
        return;
    }
    g_autofree char *text = isfinite(value)
                                ? g_strdup_printf("x %d, y %d: %.4g %s", x, y, value,
                                                  win->shown_unit != NULL ? win->shown_unit : "")
                                : g_strdup_printf("x %d, y %d: —", x, y);
    gtk_label_set_text(GTK_LABEL(win->cursor_label), text);
}

/* The status bar names the device the next job will run on: the GPU that start-up found, or the
 * CPU twin when the user chose it or there is no GPU for "auto". */
static void show_next_device(FmWindow *win)
{
    GtkApplication *app = gtk_window_get_application(GTK_WINDOW(win));
    int n_devices = 0;
    fm_gpu_info gpu = {0};
    const char *why = NULL;
    gboolean known =
        app != NULL && fm_application_get_device(FM_APPLICATION(app), &n_devices, &gpu, &why);
    int threads = fm_cpu_threads();
    g_autofree char *device = NULL;
    if (win->backend_choice == FM_BACKEND_CPU ||
        (known && n_devices == 0 && win->backend_choice == FM_BACKEND_AUTO))
        /* TRANSLATORS: the device of the next run, as job rows and the catalogue name it */
        device = g_strdup_printf(ngettext("CPU, %d thread", "CPU, %d threads", threads), threads);
    else if (!known)
        device = g_strdup(_("starting the GPU…"));
    else if (n_devices > 0)
        device = g_strdup(gpu.name);
    else /* "cuda" chosen, none found: the next run will fail and say why */
        device = g_strdup(_("CUDA, no device"));
    g_autofree char *text = g_strdup_printf(_("Backend: %s"), device);
    gtk_label_set_text(GTK_LABEL(win->backend_label), text);
    gtk_widget_set_tooltip_text(
        win->backend_label, known && n_devices == 0 && why != NULL && why[0] != '\0' ? why : NULL);
}

void fm_window_device_changed(FmWindow *win)
{
    if (!win->disposed)
        show_next_device(win);
}

void fm_window_backend_chosen(FmWindow *win, const char *name)
{
    fm_application_set_setting(FM_APPLICATION(gtk_window_get_application(GTK_WINDOW(win))),
                               "backend", name);
    fm_backend choice = FM_BACKEND_AUTO;
    if (fm_backend_parse(name, &choice) != FM_OK)
        choice = FM_BACKEND_AUTO;
    win->backend_choice = choice;
    show_next_device(win);
}

/* ---- life cycle ------------------------------------------------------------------------- */

static gboolean key_pressed(GtkWidget *widget, GdkEventKey *event, FmWindow *win)
{
    /* Space plays, unless the user is typing into a field. */
    GtkWidget *focus = gtk_window_get_focus(GTK_WINDOW(win));
    if (event->keyval == GDK_KEY_space &&
        (event->state & gtk_accelerator_get_default_mod_mask()) == 0 &&
        !(focus != NULL && GTK_IS_EDITABLE(focus))) {
        g_action_group_activate_action(G_ACTION_GROUP(win), "play", NULL);
        return GDK_EVENT_STOP;
    }
    return GDK_EVENT_PROPAGATE;
}

static void fm_window_dispose(GObject *object)
{
    FmWindow *win = FM_WINDOW(object);
    if (!win->disposed) {
        fm_window_state_save(win); /* while the pages' panels still exist */
        fm_window_geometry_save(win);
        win->disposed = TRUE;
        fm_window_playback_dispose(win);
        if (win->load_cancellable != NULL)
            g_cancellable_cancel(win->load_cancellable);
        if (win->job_list != NULL)
            fm_job_list_cancel_all(win->job_list);
    }
    g_clear_object(&win->load_cancellable);
    g_clear_object(&win->recent_menu);
    g_clear_pointer(&win->pages, g_ptr_array_unref);
    G_OBJECT_CLASS(fm_window_parent_class)->dispose(object);
}

static void fm_window_finalize(GObject *object)
{
    FmWindow *win = FM_WINDOW(object);
    /* Jobs hold a window reference until done, so no job still uses the catalogue here. */
    g_clear_pointer(&win->catalogue, fm_catalogue_close);
    g_clear_pointer(&win->dataset, fm_dataset_unref);
    g_clear_pointer(&win->result, fm_result_free);
    g_free(win->map_name);
    g_free(win->shown_unit);
    g_free(win->message);
    g_free(win->last_fallback_reason);
    g_free(win->message_page);
    g_hash_table_unref(win->ready_shown);
    G_OBJECT_CLASS(fm_window_parent_class)->finalize(object);
}

static void fm_window_class_init(FmWindowClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    object_class->dispose = fm_window_dispose;
    object_class->finalize = fm_window_finalize;
    signals[SIGNAL_RESULT_SHOWN] =
        g_signal_new("result-shown", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                     NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
    signals[SIGNAL_DATASET_CHANGED] =
        g_signal_new("dataset-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                     NULL, G_TYPE_NONE, 0);
    gtk_widget_class_set_template_from_resource(widget_class,
                                                "/io/github/fluxmap/Fluxmap/window.ui");
#define BIND(name) gtk_widget_class_bind_template_child(widget_class, FmWindow, name)
    BIND(header_bar);
    BIND(recent_button);
    BIND(menu_button);
    BIND(info_bar);
    BIND(info_label);
    BIND(info_details);
    BIND(info_details_label);
    BIND(outer_paned);
    BIND(right_paned);
    BIND(centre_paned);
    BIND(ds_file_label);
    BIND(ds_size_label);
    BIND(ds_frames_label);
    BIND(ds_type_label);
    BIND(catalogue_box);
    BIND(map_combo);
    BIND(colormap_combo);
    BIND(auto_range_toggle);
    BIND(min_spin);
    BIND(max_spin);
    BIND(pan_tool);
    BIND(rect_tool);
    BIND(ellipse_tool);
    BIND(polygon_tool);
    BIND(clear_rois_button);
    BIND(map_frame);
    BIND(play_button);
    BIND(play_image);
    BIND(frame_scale);
    BIND(frame_label);
    BIND(roi_bar);
    BIND(roi_stats_label);
    BIND(jobs_box);
    BIND(plot_box);
    BIND(panel_box);
    BIND(status_label);
    BIND(cursor_label);
    BIND(backend_label);
#undef BIND
}

static void build_children(FmWindow *win)
{
    win->map_view = FM_MAP_VIEW(fm_map_view_new());
    gtk_container_add(GTK_CONTAINER(win->map_frame), GTK_WIDGET(win->map_view));
    win->plot_view = FM_PLOT_VIEW(fm_plot_view_new());
    gtk_widget_set_size_request(GTK_WIDGET(win->plot_view), -1, 100);
    fm_plot_view_set_labels(win->plot_view, _("frame"), _("mean SFI (1/s)"));
    gtk_box_pack_start(GTK_BOX(win->plot_box), GTK_WIDGET(win->plot_view), TRUE, TRUE, 0);
    win->job_list = FM_JOB_LIST(fm_job_list_new());
    gtk_box_pack_start(GTK_BOX(win->jobs_box), GTK_WIDGET(win->job_list), TRUE, TRUE, 0);
    /* The family stack (the pages add their panels) and the one family switcher. */
    win->panel_stack = gtk_stack_new();
    gtk_stack_set_homogeneous(GTK_STACK(win->panel_stack), FALSE);
    gtk_stack_set_transition_type(GTK_STACK(win->panel_stack), GTK_STACK_TRANSITION_TYPE_CROSSFADE);
    win->family_switcher = fm_family_switcher_new(GTK_STACK(win->panel_stack));
    g_object_set(win->family_switcher, "margin", 8, NULL);
    gtk_box_pack_start(GTK_BOX(win->panel_box), win->family_switcher, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(win->panel_box), win->panel_stack, TRUE, TRUE, 0);
    gtk_style_context_add_class(gtk_widget_get_style_context(win->panel_box), "fm-side-panel");
    /* both side panes fit their width: nothing cut at their edge, no sideways scrolling */
    fm_pane_fit_install(win->panel_box);
    fm_pane_fit_install(gtk_paned_get_child1(GTK_PANED(win->outer_paned)));
    /* The centre: the map, and the pages' own views beside it. */
    win->centre_stack = gtk_stack_new();
    /* sized by the page on show, not the largest: each page alone must fit a laptop screen */
    gtk_stack_set_homogeneous(GTK_STACK(win->centre_stack), FALSE);
    g_object_ref(win->map_view);
    gtk_container_remove(GTK_CONTAINER(win->map_frame), GTK_WIDGET(win->map_view));
    gtk_stack_add_titled(GTK_STACK(win->centre_stack), GTK_WIDGET(win->map_view), "map", _("Map"));
    g_object_unref(win->map_view);
    gtk_container_add(GTK_CONTAINER(win->map_frame), win->centre_stack);
    fm_window_parts_init(win);
    win->catalogue_view = FM_CATALOGUE_VIEW(fm_catalogue_view_new());
    gtk_box_pack_start(GTK_BOX(win->catalogue_box), GTK_WIDGET(win->catalogue_view), TRUE, TRUE, 0);
    gtk_widget_show_all(win->map_frame);
    gtk_widget_show_all(win->plot_box);
    gtk_widget_show_all(win->jobs_box);
    gtk_widget_show_all(win->panel_box);
}

/* ---- family pages ------------------------------------------------------------------------ */

const char *fm_window_get_family(FmWindow *win)
{
    const char *name = gtk_stack_get_visible_child_name(GTK_STACK(win->panel_stack));
    return name; /* NULL only before the pages exist */
}

const char *fm_window_get_centre_name(FmWindow *win)
{
    return gtk_stack_get_visible_child_name(GTK_STACK(win->centre_stack));
}

GtkWidget *fm_window_get_centre_view(FmWindow *win)
{
    return gtk_stack_get_visible_child(GTK_STACK(win->centre_stack));
}

const char *fm_window_get_message_page(FmWindow *win)
{
    return gtk_info_bar_get_revealed(GTK_INFO_BAR(win->info_bar)) ? win->message_page : NULL;
}

const char *fm_window_get_map_name(FmWindow *win)
{
    return win->map_name;
}

GtkWidget *fm_window_get_side_pane(FmWindow *win, gboolean right)
{
    return right ? win->panel_box : gtk_paned_get_child1(GTK_PANED(win->outer_paned));
}

void fm_window_set_family(FmWindow *win, const char *family)
{
    gtk_stack_set_visible_child_name(GTK_STACK(win->panel_stack), family);
}

void fm_window_add_panel(FmWindow *win, const char *id, const char *title, GtkWidget *panel)
{
    /* the panel scrolls; its pinned row (Run, Cancel) stays in sight under it */
    GtkWidget *pinned = fm_panel_find_pinned(panel);
    if (pinned != NULL) {
        g_object_ref(pinned);
        gtk_container_remove(GTK_CONTAINER(gtk_widget_get_parent(pinned)), pinned);
    }
    GtkWidget *scroller = fm_panel_scroller_new(panel);
    GtkWidget *child = scroller;
    if (pinned != NULL) {
        child = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
        gtk_box_pack_start(GTK_BOX(child), scroller, TRUE, TRUE, 0);
        gtk_box_pack_start(GTK_BOX(child), pinned, FALSE, FALSE, 0);
        g_object_set(pinned, "margin-start", 8, "margin-end", 8, "margin-bottom", 8, NULL);
        g_object_unref(pinned);
    }
    gtk_stack_add_titled(GTK_STACK(win->panel_stack), child, id, title);
    gtk_widget_show_all(child);
}

gboolean fm_window_choose_page(FmWindow *win)
{
    g_autoptr(GPtrArray) listed = g_ptr_array_new();
    FmFamilyPage *best = NULL;
    int best_fit = FM_PAGE_TAKES_NO_DATASET; /* a page that needs no dataset is never chosen */
    for (guint i = 0; i < win->pages->len; i++) {
        FmFamilyPage *page = win->pages->pdata[i];
        int fit = fm_family_page_takes(page, win->dataset);
        if (fit > FM_PAGE_TAKES_NONE)
            g_ptr_array_add(listed, (gpointer)fm_family_page_get_id(page));
        if (fit > best_fit) {
            best = page;
            best_fit = fit;
        }
    }
    if (best == NULL && win->pages->len > 0) {
        best = win->pages->pdata[0];
        g_ptr_array_insert(listed, 0, (gpointer)fm_family_page_get_id(best));
    }
    g_ptr_array_add(listed, NULL);
    if (best != NULL)
        fm_window_set_family(win, fm_family_page_get_id(best));
    fm_family_switcher_set_listed(win->family_switcher, (const char *const *)listed->pdata);
    return best_fit > FM_PAGE_TAKES_NO_DATASET;
}

FmFamilyPage *fm_window_active_page(FmWindow *win)
{
    const char *family = fm_window_get_family(win);
    for (guint i = 0; win->pages != NULL && i < win->pages->len; i++)
        if (g_strcmp0(fm_family_page_get_id(win->pages->pdata[i]), family) == 0)
            return win->pages->pdata[i];
    return NULL; /* the stack shows none of the pages (not after start-up) */
}

gboolean fm_window_pages_show_result(FmWindow *win, const fm_result *res)
{
    for (guint i = 0; i < win->pages->len; i++)
        if (fm_family_page_show_result(win->pages->pdata[i], res))
            return TRUE;
    return FALSE;
}

/* The bars the page on show uses. */
static guint active_bars(FmWindow *win)
{
    FmFamilyPage *page = fm_window_active_page(win);
    return page != NULL ? fm_family_page_get_bars(page) : 0;
}

void fm_window_sync_family_bars(FmWindow *win)
{
    guint bars = active_bars(win);
    gtk_widget_set_visible(gtk_widget_get_parent(win->frame_scale), bars & FM_PAGE_BAR_FRAMES);
    gtk_widget_set_visible(win->roi_bar, bars & FM_PAGE_BAR_ROIS);
    gtk_widget_set_visible(gtk_widget_get_parent(win->map_combo), bars & FM_PAGE_BAR_MAP_TOOLBAR);
    gtk_widget_set_visible(win->map_combo,
                           (bars & FM_PAGE_BAR_MAP_LIST) && !win->view_has_own_scale);
    gtk_widget_set_visible(win->plot_box, bars & FM_PAGE_BAR_PLOT);
}

gboolean fm_window_map_tools_visible(FmWindow *win)
{
    return gtk_widget_get_visible(gtk_widget_get_parent(win->map_combo)) &&
           gtk_widget_get_visible(win->roi_bar);
}

gboolean fm_window_frame_slider_visible(FmWindow *win)
{
    return gtk_widget_get_visible(gtk_widget_get_parent(win->frame_scale));
}

/* Another page came on show: the bars it uses, a cleared plot, the map in the centre (pages
 * with views of their own switch to them in their handlers, which run after this one). */
static void family_changed(GObject *stack, GParamSpec *pspec, FmWindow *win)
{
    (void)stack;
    (void)pspec;
    fm_window_sync_family_bars(win);
    if (win->message_page != NULL && g_strcmp0(win->message_page, fm_window_get_family(win)) != 0)
        fm_window_hide_message(win); /* another page's note */
    fm_plot_view_clear(win->plot_view);
    win->plot_last_frame = G_MAXINT;
    gtk_stack_set_visible_child_name(GTK_STACK(win->centre_stack), "map");
}

/* win.open-demo(id): a start-page card. */
static void open_demo_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    (void)action;
    fm_demo_open(FM_WINDOW(user), g_variant_get_string(parameter, NULL));
}

/* win.show-demos: the start page's demo cards, at any time (a menu item). */
static void show_demos_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    (void)action;
    (void)parameter;
    FmWindow *win = FM_WINDOW(user);
    gtk_stack_set_visible_child_name(GTK_STACK(win->centre_stack), "start");
}

static void fm_window_init(FmWindow *win)
{
    gtk_widget_init_template(GTK_WIDGET(win));
    win->last_job_state = -1;
    win->play_pending = -1;
    win->map_name = g_strdup("raw");
    win->ready_shown = g_hash_table_new(g_direct_hash, g_direct_equal);
    build_children(win);
    /* first, so that the pages' own handlers come after it */
    g_signal_connect(win->panel_stack, "notify::visible-child", G_CALLBACK(family_changed), win);
    win->pages = g_ptr_array_new_with_free_func(g_object_unref);
    fm_pages_attach(win, win->pages);
    fm_live_attach(win); /* cameras as sources, on the pages that run live */
    fm_family_switcher_refresh(win->family_switcher);
    /* Until a dataset is open the centre offers the demos (untitled: no switcher lists it). */
    static const GActionEntry demo_entries[] = {
        {"open-demo", open_demo_activated, "s", NULL, NULL, {0}},
        {"show-demos", show_demos_activated, NULL, NULL, NULL, {0}},
    };
    g_action_map_add_action_entries(G_ACTION_MAP(win), demo_entries, G_N_ELEMENTS(demo_entries),
                                    win);
    gtk_stack_add_named(GTK_STACK(win->centre_stack), fm_start_page_new(), "start");
    gtk_stack_set_visible_child_name(GTK_STACK(win->centre_stack), "start");
    /* the map's bars act on nothing yet; a dataset's family brings back its own */
    gtk_widget_set_visible(gtk_widget_get_parent(win->frame_scale), FALSE);
    gtk_widget_set_visible(win->roi_bar, FALSE);
    gtk_widget_set_visible(gtk_widget_get_parent(win->map_combo), FALSE);

    fm_window_jobs_init(win); /* window-jobs.c: the run and cancel-all actions */
    fm_window_actions_init(win);
    fm_window_catalogue_init(win);
    fm_window_batch_init(win); /* window-batch.c: Run on Files */
    fm_window_recent_init(win);
    fm_window_dnd_init(win);

    g_signal_connect(win->info_bar, "response", G_CALLBACK(info_bar_response), win);
    g_signal_connect(win->map_combo, "changed", G_CALLBACK(map_combo_changed), win);
    g_signal_connect(win->frame_scale, "value-changed", G_CALLBACK(frame_changed), win);
    g_signal_connect(win->auto_range_toggle, "toggled", G_CALLBACK(auto_range_toggled), win);
    gtk_spin_button_set_range(GTK_SPIN_BUTTON(win->min_spin), -1e12, 1e12);
    gtk_spin_button_set_range(GTK_SPIN_BUTTON(win->max_spin), -1e12, 1e12);
    g_signal_connect(win->min_spin, "value-changed", G_CALLBACK(range_spin_changed), win);
    g_signal_connect(win->max_spin, "value-changed", G_CALLBACK(range_spin_changed), win);
    gtk_widget_set_sensitive(win->min_spin, FALSE);
    gtk_widget_set_sensitive(win->max_spin, FALSE);
    GtkWidget *tools[] = {win->pan_tool, win->rect_tool, win->ellipse_tool, win->polygon_tool};
    for (gsize i = 0; i < G_N_ELEMENTS(tools); i++)
        g_signal_connect(tools[i], "toggled", G_CALLBACK(tool_toggled), win);
    g_signal_connect(win->clear_rois_button, "clicked", G_CALLBACK(clear_rois_clicked), win);
    g_signal_connect(win->map_view, "rois-changed", G_CALLBACK(rois_changed), win);
    g_signal_connect(win->map_view, "cursor-moved", G_CALLBACK(cursor_moved), win);
    g_signal_connect(win, "key-press-event", G_CALLBACK(key_pressed), win);

    g_autofree char *dir = fm_catalogue_default_dir();
    g_autoptr(GError) error = NULL;
    win->catalogue = fm_catalogue_open(dir, &error);
    if (win->catalogue == NULL) {
        g_autofree char *msg = g_strdup_printf(
            _("The run catalogue could not be opened, so runs will not be recorded: %s"),
            error->message);
        fm_window_show_message(win, GTK_MESSAGE_WARNING, msg);
        g_clear_error(&error);
    }
    fm_catalogue_view_set_catalogue(win->catalogue_view, win->catalogue);
    if (!fm_catalogue_view_refresh(win->catalogue_view, &error))
        fm_window_show_message(win, GTK_MESSAGE_WARNING, error->message);
    update_roi_stats(win);
    fm_window_update_action_state(win);
    /* Start with the keyboard on the map, not on the first selectable label. */
    gtk_widget_set_can_focus(GTK_WIDGET(win->map_view), TRUE);
    gtk_window_set_focus(GTK_WINDOW(win), GTK_WIDGET(win->map_view));
}

FmWindow *fm_window_new(FmApplication *app)
{
    FmWindow *win = g_object_new(FM_TYPE_WINDOW, "application", app, NULL);
    g_autofree char *backend = fm_application_get_setting(app, "backend", "auto");
    for (guint i = 0; i < win->pages->len; i++)
        fm_family_page_set_backend(win->pages->pdata[i], backend);
    fm_window_state_restore(win);
    fm_window_geometry_restore(win);
    if (fm_backend_parse(backend, &win->backend_choice) != FM_OK)
        win->backend_choice = FM_BACKEND_AUTO;
    show_next_device(win); /* until the device start ends: "starting the GPU…" */
    g_autofree char *cmap = fm_application_get_setting(app, "colormap", "viridis");
    g_action_group_change_action_state(G_ACTION_GROUP(win), "colormap", g_variant_new_string(cmap));
    return win;
}

/* ---- test and scripting API ------------------------------------------------------------- */

gboolean fm_window_is_loading(FmWindow *win)
{
    return win->loading;
}
fm_dataset *fm_window_get_dataset(FmWindow *win)
{
    return win->dataset;
}
FmMapView *fm_window_get_map_view(FmWindow *win)
{
    return win->map_view;
}

FmPlotView *fm_window_get_plot_view(FmWindow *win)
{
    return win->plot_view;
}

int fm_window_get_last_job_state(FmWindow *win)
{
    return win->last_job_state;
}
int fm_window_get_running_jobs(FmWindow *win)
{
    return win->running_jobs;
}
int fm_window_get_playback_count(FmWindow *win)
{
    return win->play_count;
}
const char *fm_window_get_device_text(FmWindow *win)
{
    return gtk_label_get_text(GTK_LABEL(win->backend_label));
}
GtkWidget *fm_window_get_part_combo(FmWindow *win)
{
    return win->part_combo;
}
GtkWidget *fm_window_get_job_list(FmWindow *win)
{
    return GTK_WIDGET(win->job_list);
}

gboolean fm_window_set_param(FmWindow *win, const char *key, const char *text)
{
    FmFamilyPage *page = fm_window_active_page(win);
    return page != NULL && fm_family_page_set_param(page, key, text);
}

char **fm_window_list_pages(FmWindow *win)
{
    GtkTreeModel *model = gtk_combo_box_get_model(GTK_COMBO_BOX(win->family_switcher));
    int id_column = gtk_combo_box_get_id_column(GTK_COMBO_BOX(win->family_switcher));
    g_autoptr(GStrvBuilder) ids = g_strv_builder_new();
    GtkTreeIter iter;
    for (gboolean ok = gtk_tree_model_get_iter_first(model, &iter); ok;
         ok = gtk_tree_model_iter_next(model, &iter)) {
        g_autofree char *id = NULL;
        gtk_tree_model_get(model, &iter, id_column, &id, -1);
        g_strv_builder_add(ids, id);
    }
    return g_strv_builder_end(ids);
}

gboolean fm_window_switch_page(FmWindow *win, const char *id)
{
    return gtk_combo_box_set_active_id(GTK_COMBO_BOX(win->family_switcher), id);
}

char *fm_window_get_page_params(FmWindow *win, const char *id, const char **method_id)
{
    for (guint i = 0; i < win->pages->len; i++) {
        FmFamilyPage *page = win->pages->pdata[i];
        if (g_strcmp0(fm_family_page_get_id(page), id) != 0)
            continue;
        const fm_method *method = fm_family_page_get_method(page);
        g_autoptr(fm_params) params = method ? fm_family_page_get_params(page) : NULL;
        if (params == NULL)
            return NULL;
        if (method_id != NULL)
            *method_id = method->id;
        return fm_params_to_json(params);
    }
    return NULL;
}

void fm_window_result_shown(FmWindow *win, fm_job *job)
{
    g_signal_emit(win, signals[SIGNAL_RESULT_SHOWN], 0, job);
}

void fm_window_dataset_changed(FmWindow *win)
{
    g_signal_emit(win, signals[SIGNAL_DATASET_CHANGED], 0);
}

gboolean fm_window_select_method(FmWindow *win, const char *method_id)
{
    for (guint i = 0; i < win->pages->len; i++)
        if (fm_family_page_select_method(win->pages->pdata[i], method_id))
            return TRUE;
    return FALSE;
}

const char *fm_window_get_message(FmWindow *win, GtkMessageType *type)
{
    if (type != NULL)
        *type = gtk_info_bar_get_message_type(GTK_INFO_BAR(win->info_bar));
    return gtk_info_bar_get_revealed(GTK_INFO_BAR(win->info_bar)) ? win->message : NULL;
}
