/* FmWindow's family switching and FLIM wiring: the right pane becomes a stack of the LSI and FLIM
 * panels, the centre a stack of the map and the FLIM views, chosen by the dataset. */
#include "app/gui/window-private.h"

#include <glib/gi18n.h>

#include "app/core/flim/flim_model.h"
#include "compare-methods.h"
#include "app/gui/family-switcher.h"

/* Lifetime-like outputs first: they are what a FLIM user looks at. */
static const char *const flim_maps[] = {
    "tau",       "tau_avg_int", "tau_avg_amp", "tau_fast",   "tau_slow",  "fraction_d",
    "amplitude", "intensity",   "chi2",        "iterations", "converged", "phasor_g",
    "phasor_s",  "tau_phase",   "tau_mod",     "background", "mask",      NULL};

static void fill_map_combo(FmWindow *win, const fm_result *res)
{
    GtkComboBoxText *combo = GTK_COMBO_BOX_TEXT(win->map_combo);
    win->updating = TRUE;
    gtk_combo_box_text_remove_all(combo);
    gtk_combo_box_text_append(combo, "raw", _("Raw frame"));
    if (res == NULL) {
        gtk_combo_box_text_append(combo, "contrast", _("Contrast K"));
        gtk_combo_box_text_append(combo, "sfi", _("SFI"));
    }
    for (int i = 0; res != NULL && flim_maps[i] != NULL; i++)
        if (fm_result_get_map(res, flim_maps[i]) != NULL)
            gtk_combo_box_text_append(combo, flim_maps[i], flim_maps[i]);
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(combo), win->map_name);
    win->updating = FALSE;
}

gboolean fm_window_flim_active(FmWindow *win)
{
    return g_strcmp0(fm_window_get_family(win), "flim") == 0;
}

const char *fm_window_get_family(FmWindow *win)
{
    const char *name = gtk_stack_get_visible_child_name(GTK_STACK(win->panel_stack));
    return name != NULL ? name : "lsi";
}

void fm_window_set_family(FmWindow *win, const char *family)
{
    gtk_stack_set_visible_child_name(GTK_STACK(win->panel_stack), family);
}

/* The window-level bars serve the main map view: OCT brings its own B-scan views with their own
 * playback and dB controls, DCE its slice/time bar; there the map tools would act on nothing.
 * FLIM's frames are time bins, which its decay view shows: no frame slider there either. */
void fm_window_sync_family_bars(FmWindow *win)
{
    const char *family = fm_window_get_family(win);
    gboolean oct = g_strcmp0(family, "oct") == 0, dce = g_strcmp0(family, "dce") == 0;
    gboolean flim = g_strcmp0(family, "flim") == 0;
    gtk_widget_set_visible(gtk_widget_get_parent(win->frame_scale), !oct && !dce && !flim);
    gtk_widget_set_visible(win->roi_bar, !oct);
    gtk_widget_set_visible(gtk_widget_get_parent(win->map_combo), !oct);
    gtk_widget_set_visible(win->map_combo, !dce);
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

/* The bottom plot is shared by the families, so each page sets its own axes when it comes on show
 * and the old family's curves go (never plotted under another family's labels). OCT has no ROI
 * time course: the plot hides. DCE redraws its curves from window-dce.c's handler. */
static void plot_for_family(FmWindow *win)
{
    const char *family = fm_window_get_family(win);
    gboolean oct = g_strcmp0(family, "oct") == 0;
    gtk_widget_set_visible(win->plot_box, !oct);
    fm_window_sync_family_bars(win);
    if (oct || g_strcmp0(family, "dce") == 0)
        return;
    fm_plot_view_clear(win->plot_view);
    win->plot_last_frame = G_MAXINT;
    if (g_strcmp0(family, "flim") == 0)
        fm_plot_view_set_labels(win->plot_view, _("time bin"), _("photons in ROI"));
    else
        fm_window_playback_set_labels(win);
}

static void family_changed(GObject *stack, GParamSpec *pspec, FmWindow *win)
{
    plot_for_family(win);
    gboolean flim = fm_window_flim_active(win);
    gtk_widget_set_visible(win->centre_switcher, flim);
    gtk_stack_set_visible_child_name(GTK_STACK(win->centre_stack), flim ? "lifetime" : "map");
    if (!flim)
        fill_map_combo(win, NULL);
}

void fm_window_flim_dataset_changed(FmWindow *win)
{
    gboolean flim = fm_flim_dataset_is_flim(win->dataset);
    fm_flim_views_set_dataset(win->flim_views, flim ? win->dataset : NULL);
    fm_flim_views_set_rois(win->flim_views, fm_map_view_get_rois(win->map_view));
    fm_window_set_family(win, flim ? "flim" : "lsi");
    family_changed(NULL, NULL, win);
    if (flim)
        fill_map_combo(win, NULL);
}

gboolean fm_window_flim_show_result(FmWindow *win, const fm_result *res)
{
    if (res == NULL || !g_str_has_prefix(res->method_id, "flim."))
        return FALSE;
    fm_flim_views_set_result(win->flim_views, fm_window_copy_result(res));
    const char *first = "raw";
    for (int i = 0; flim_maps[i] != NULL; i++)
        if (fm_result_get_map(res, flim_maps[i]) != NULL) {
            first = flim_maps[i];
            break;
        }
    fill_map_combo(win, res);
    fm_window_set_family(win, "flim");
    fm_window_select_map(win, first);
    gtk_stack_set_visible_child_name(GTK_STACK(win->centre_stack), "lifetime");
    return TRUE;
}

void fm_window_flim_rois_changed(FmWindow *win)
{
    if (win->flim_views != NULL)
        fm_flim_views_set_rois(win->flim_views, fm_map_view_get_rois(win->map_view));
}

void fm_window_flim_cursor(FmWindow *win, int x, int y)
{
    if (fm_window_flim_active(win) && win->dataset != NULL)
        fm_flim_views_show_decay(win->flim_views, x, y);
}

/* ---- progress of slow readers (.ptu) ---------------------------------------------------- */

typedef struct {
    FmWindow *win;
    double fraction;
    char *base;
} LoadProgress;

static gboolean load_progress_idle(gpointer user)
{
    LoadProgress *p = user;
    if (!p->win->disposed && p->win->loading) {
        g_autofree char *text =
            g_strdup_printf(_("Reading %s… %.0f %%"), p->base, 100.0 * p->fraction);
        fm_window_set_status(p->win, text);
    }
    return G_SOURCE_REMOVE;
}

static void load_progress_free(gpointer user)
{
    LoadProgress *p = user;
    g_object_unref(p->win);
    g_free(p->base);
    g_free(p);
}

/* Called on the worker by slow readers (.ptu histogramming); posts whole percents only. */
void fm_window_load_progress(double fraction, gpointer user)
{
    GTask *task = user;
    int *last = g_object_get_data(G_OBJECT(task), "fm-last-percent");
    int percent = (int)(fraction * 100);
    if (last == NULL || percent == *last)
        return;
    *last = percent;
    LoadProgress *p = g_new0(LoadProgress, 1);
    p->win = g_object_ref(g_task_get_source_object(task));
    p->fraction = fraction;
    p->base = g_path_get_basename(g_task_get_task_data(task));
    g_main_context_invoke_full(g_task_get_context(task), G_PRIORITY_DEFAULT, load_progress_idle, p,
                               load_progress_free);
}

/* ---- compare methods --------------------------------------------------------------------- */

static void compare_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    FmWindow *win = user;
    if (win->dataset == NULL || !fm_flim_dataset_is_flim(win->dataset)) {
        fm_window_show_message(win, GTK_MESSAGE_INFO,
                               _("Open a FLIM dataset before comparing methods."));
        return;
    }
    if (win->compare_window != NULL)
        gtk_widget_destroy(win->compare_window);
    GPtrArray *rois = fm_map_view_get_rois(win->map_view);
    FmCompareMethods *cm = fm_compare_methods_new(
        GTK_WINDOW(win), win->dataset, win->catalogue, (FmCompareParamsFn)fm_flim_panel_get_params,
        win->flim_panel, fm_flim_panel_get_backend(win->flim_panel),
        fm_flim_panel_get_use_rois(win->flim_panel) ? rois : NULL);
    win->compare_window = GTK_WIDGET(cm);
    g_object_add_weak_pointer(G_OBJECT(cm), (gpointer *)&win->compare_window);
    gtk_widget_show_all(GTK_WIDGET(cm));
}

/* ---- layout ------------------------------------------------------------------------------ */

void fm_window_flim_init(FmWindow *win)
{
    static const GActionEntry entries[] = {
        {"flim-compare", compare_activated, NULL, NULL, NULL, {0}},
    };
    g_action_map_add_action_entries(G_ACTION_MAP(win), entries, G_N_ELEMENTS(entries), win);

    /* Right pane: the LSI panel's scroller (packed by build_children) moves into a stack. */
    GList *children = gtk_container_get_children(GTK_CONTAINER(win->panel_box));
    GtkWidget *lsi_scroller = children != NULL ? g_object_ref(children->data) : NULL;
    g_list_free(children);
    if (lsi_scroller != NULL)
        gtk_container_remove(GTK_CONTAINER(win->panel_box), lsi_scroller);
    win->panel_stack = gtk_stack_new();
    gtk_stack_set_transition_type(GTK_STACK(win->panel_stack), GTK_STACK_TRANSITION_TYPE_CROSSFADE);
    if (lsi_scroller != NULL) {
        gtk_stack_add_titled(GTK_STACK(win->panel_stack), lsi_scroller, "lsi", _("Speckle"));
        g_object_unref(lsi_scroller);
    }
    win->flim_panel = FM_FLIM_PANEL(fm_flim_panel_new());
    gtk_stack_add_titled(GTK_STACK(win->panel_stack),
                         fm_panel_scroller_new(GTK_WIDGET(win->flim_panel)), "flim", _("Lifetime"));
    /* the one family switcher; the pages added after this one are listed by window.c */
    win->family_switcher = fm_family_switcher_new(GTK_STACK(win->panel_stack));
    g_object_set(win->family_switcher, "margin", 8, NULL);
    gtk_box_pack_start(GTK_BOX(win->panel_box), win->family_switcher, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(win->panel_box), win->panel_stack, TRUE, TRUE, 0);

    /* Centre: the map view and the FLIM views in a stack, switched from the map toolbar. */
    g_object_ref(win->map_view);
    gtk_container_remove(GTK_CONTAINER(win->map_frame), GTK_WIDGET(win->map_view));
    win->centre_stack = gtk_stack_new();
    gtk_stack_add_titled(GTK_STACK(win->centre_stack), GTK_WIDGET(win->map_view), "map", _("Map"));
    g_object_unref(win->map_view);
    win->flim_views = FM_FLIM_VIEWS(fm_flim_views_new());
    gtk_stack_add_titled(GTK_STACK(win->centre_stack), GTK_WIDGET(win->flim_views), "lifetime",
                         _("Lifetime"));
    gtk_container_add(GTK_CONTAINER(win->map_frame), win->centre_stack);
    win->centre_switcher = gtk_stack_switcher_new();
    gtk_stack_switcher_set_stack(GTK_STACK_SWITCHER(win->centre_switcher),
                                 GTK_STACK(win->centre_stack));
    GtkWidget *toolbar = gtk_widget_get_parent(win->map_combo);
    gtk_box_pack_start(GTK_BOX(toolbar), win->centre_switcher, FALSE, FALSE, 0);
    gtk_box_reorder_child(GTK_BOX(toolbar), win->centre_switcher, 0);

    gtk_widget_show_all(win->panel_box);
    gtk_widget_show_all(win->map_frame);
    gtk_widget_show_all(win->centre_switcher);
    gtk_stack_set_visible_child_name(GTK_STACK(win->panel_stack), "lsi");
    gtk_widget_set_visible(win->centre_switcher, FALSE);
    g_signal_connect(win->panel_stack, "notify::visible-child", G_CALLBACK(family_changed), win);
}

GtkWidget *fm_window_get_flim_views(FmWindow *win)
{
    return GTK_WIDGET(win->flim_views);
}

GtkWidget *fm_window_get_compare_window(FmWindow *win)
{
    return win->compare_window;
}
