/* The FLIM page: the lifetime panel on the right, the lifetime views (merge image, phasor,
 * histogram, decay) in the centre beside the map (Map | Lifetime), the decay under the cursor,
 * and compare methods. */
#include "flim-page.h"

#include <glib/gi18n.h>

#include "app/core/flim/flim_model.h"
#include "app/gui/live-params.h"
#include "app/gui/window-private.h"
#include "compare-methods.h"
#include "flim-panel.h"
#include "flim-views.h"

struct _FmFlimPage {
    GObject parent_instance;
    FmWindow *win; /* not owned: the window owns its pages */
    FmFlimPanel *panel;
    FmFlimViews *views;
    GtkWidget *centre_switcher; /* Map | Lifetime, in the map toolbar */
    GtkWidget *compare_window;  /* the last compare-methods window (weak pointer), or NULL */
    FmLiveParams *live;         /* the map again after a parameter change (owned by the window) */
};

static void page_iface_init(FmFamilyPageInterface *iface);
G_DEFINE_TYPE_WITH_CODE(FmFlimPage, fm_flim_page, G_TYPE_OBJECT,
                        G_IMPLEMENT_INTERFACE(FM_TYPE_FAMILY_PAGE, page_iface_init))

static FmFlimPage *page_of(FmWindow *win)
{
    return g_object_get_data(G_OBJECT(win), "fm-flim-page");
}

static gboolean active(FmFlimPage *self)
{
    return g_strcmp0(fm_window_get_family(self->win), "flim") == 0;
}

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
    gtk_combo_box_text_append(combo, "raw",
                              _("Raw frame")); /* a FLIM dataset has no speckle maps */
    for (int i = 0; res != NULL && flim_maps[i] != NULL; i++)
        if (fm_result_get_map(res, flim_maps[i]) != NULL)
            gtk_combo_box_text_append(combo, flim_maps[i], flim_maps[i]);
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(combo), win->map_name);
    win->updating = FALSE;
}

/* The family stack changed page: the lifetime views and their switcher come with this page. */
static void family_changed(GObject *stack, GParamSpec *pspec, FmFlimPage *self)
{
    (void)stack;
    (void)pspec;
    gboolean on = active(self);
    gtk_widget_set_visible(self->centre_switcher, on);
    if (!on)
        return;
    fm_plot_view_set_labels(self->win->plot_view, _("time bin"), _("photons in ROI"));
    fm_plot_view_set_placeholder(self->win->plot_view,
                                 _("Draw an ROI on the map: its decay is plotted here"));
    gtk_stack_set_visible_child_name(GTK_STACK(self->win->centre_stack), "lifetime");
}

/* The lifetime view draws tau as hue with its own colourbar: the colormap selector says so. */
static void centre_changed(GObject *stack, GParamSpec *pspec, FmFlimPage *self)
{
    (void)pspec;
    gboolean lifetime =
        g_strcmp0(gtk_stack_get_visible_child_name(GTK_STACK(stack)), "lifetime") == 0;
    fm_window_set_fixed_colour_scale(self->win, lifetime ? _("Lifetime hue") : NULL);
}

static const char *get_id(FmFamilyPage *page)
{
    (void)page;
    return "flim";
}

static void params_changed(FmFlimPanel *panel, const char *key, FmFlimPage *self);

/* Picks this page for an x, y, t dataset in ns (TCSPC decays). */
static void dataset_changed(FmFamilyPage *page)
{
    FmFlimPage *self = FM_FLIM_PAGE(page);
    FmWindow *win = self->win;
    gboolean flim = fm_flim_dataset_is_flim(win->dataset);
    fm_flim_views_set_dataset(self->views, flim ? win->dataset : NULL);
    params_changed(self->panel, NULL, self);
    fm_flim_views_set_rois(self->views, fm_map_view_get_rois(win->map_view));
    if (flim && active(self)) {
        family_changed(NULL, NULL, self);
        fill_map_combo(win, NULL);
    }
}

static int takes(FmFamilyPage *page, const fm_dataset *ds)
{
    (void)page;
    return fm_flim_dataset_is_flim(ds) ? FM_PAGE_TAKES_OWN : FM_PAGE_TAKES_NONE;
}

static gboolean show_result(FmFamilyPage *page, const fm_result *res)
{
    FmFlimPage *self = FM_FLIM_PAGE(page);
    if (res == NULL || !g_str_has_prefix(res->method_id, "flim."))
        return FALSE;
    fm_flim_views_set_result(self->views, fm_window_copy_result(res));
    const char *first = "raw";
    for (int i = 0; flim_maps[i] != NULL; i++)
        if (fm_result_get_map(res, flim_maps[i]) != NULL) {
            first = flim_maps[i];
            break;
        }
    fill_map_combo(self->win, res);
    fm_window_set_family(self->win, "flim");
    fm_window_select_map(self->win, first);
    gtk_stack_set_visible_child_name(GTK_STACK(self->win->centre_stack), "lifetime");
    return TRUE;
}

/* win.run: the panel's method on the whole image, or on the drawn ROIs when the user chose so. */
static gboolean run(FmFamilyPage *page)
{
    FmFlimPage *self = FM_FLIM_PAGE(page);
    FmWindow *win = self->win;
    fm_live_params_cancel(self->live); /* the user's run replaces any live one */
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_params) params = fm_flim_panel_get_params(self->panel, NULL, &error);
    if (params == NULL) {
        fm_window_show_message(win, GTK_MESSAGE_ERROR, error->message);
        return TRUE;
    }
    GPtrArray *rois = fm_map_view_get_rois(win->map_view);
    gboolean use_rois = fm_flim_panel_get_use_rois(self->panel);
    if (use_rois && (rois == NULL || rois->len == 0)) {
        fm_window_show_message(win, GTK_MESSAGE_INFO,
                               _("Draw an ROI first, or choose to run on the whole image."));
        return TRUE;
    }
    fm_window_start_job(win, fm_flim_panel_get_method(self->panel), params, use_rois ? rois : NULL,
                        fm_flim_panel_get_backend(self->panel));
    return TRUE;
}

static gboolean select_method(FmFamilyPage *page, const char *method_id)
{
    return g_str_has_prefix(method_id, "flim.") &&
           fm_flim_panel_set_method(FM_FLIM_PAGE(page)->panel, method_id);
}

static gboolean set_param(FmFamilyPage *page, const char *key, const char *text)
{
    return fm_flim_panel_set_param(FM_FLIM_PAGE(page)->panel, key, text);
}

static const fm_method *get_method(FmFamilyPage *page)
{
    return fm_flim_panel_get_method(FM_FLIM_PAGE(page)->panel);
}

static fm_params *get_params(FmFamilyPage *page)
{
    return fm_flim_panel_get_params(FM_FLIM_PAGE(page)->panel, NULL, NULL);
}

static void set_backend(FmFamilyPage *page, const char *backend)
{
    fm_flim_panel_set_backend(FM_FLIM_PAGE(page)->panel, backend);
}

static guint get_bars(FmFamilyPage *page)
{
    (void)page; /* frames are time bins, which the decay view shows: no frame slider */
    return FM_PAGE_BAR_ROIS | FM_PAGE_BAR_MAP_TOOLBAR | FM_PAGE_BAR_MAP_LIST | FM_PAGE_BAR_PLOT;
}

static void page_iface_init(FmFamilyPageInterface *iface)
{
    iface->get_id = get_id;
    iface->takes = takes;
    iface->dataset_changed = dataset_changed;
    iface->show_result = show_result;
    iface->run = run;
    iface->select_method = select_method;
    iface->set_param = set_param;
    iface->set_backend = set_backend;
    iface->get_bars = get_bars;
    iface->get_method = get_method;
    iface->get_params = get_params;
}

static void rois_changed(FmMapView *view, FmFlimPage *self)
{
    fm_flim_views_set_rois(self->views, fm_map_view_get_rois(view));
}

static void cursor_moved(FmMapView *view, int x, int y, double value, FmFlimPage *self)
{
    (void)view;
    (void)value;
    if (active(self) && self->win->dataset != NULL)
        fm_flim_views_show_decay(self->views, x, y);
}

/* The decay plot shows the window the panel's parameters give: again whenever one changes. */
static void params_changed(FmFlimPanel *panel, const char *key, FmFlimPage *self)
{
    g_autoptr(fm_params) params = fm_flim_panel_get_params(panel, NULL, NULL);
    fm_flim_views_set_params(self->views, params); /* NULL (a value out of range) hides it */
    if (key != NULL)
        fm_live_params_changed(self->live);
    else /* another method, another dataset: what was pending is for the old one */
        fm_live_params_cancel(self->live);
}

/* Live parameters: the panel's method on the whole image (or the drawn ROIs, as Run would). */
static gboolean live_request(fm_live_params_request *req, gpointer user)
{
    FmFlimPage *self = user;
    FmWindow *win = self->win;
    const fm_method *method = fm_flim_panel_get_method(self->panel);
    if (!active(self) || method == NULL || win->dataset == NULL ||
        !fm_flim_dataset_is_flim(win->dataset))
        return FALSE;
    GPtrArray *rois = fm_map_view_get_rois(win->map_view);
    gboolean use_rois = fm_flim_panel_get_use_rois(self->panel);
    if (use_rois && (rois == NULL || rois->len == 0))
        return FALSE;
    req->params = fm_flim_panel_get_params(self->panel, NULL, NULL);
    if (req->params == NULL)
        return FALSE;
    req->method = method;
    req->dataset = fm_dataset_ref(win->dataset);
    req->rois = use_rois ? rois : NULL;
    req->backend = fm_flim_panel_get_backend(self->panel);
    return TRUE;
}

/* A live map replaces the one on show where the user looks (Map or Lifetime, the map chosen). */
static void live_show(const fm_result *res, gpointer user)
{
    FmFlimPage *self = user;
    FmWindow *win = self->win;
    fm_window_set_result(win, fm_window_copy_result(res), FALSE);
    fm_flim_views_set_result(self->views, fm_window_copy_result(res));
    fill_map_combo(win, res);
    if (g_strcmp0(win->map_name, "raw") != 0 && fm_result_get_map(res, win->map_name) == NULL) {
        for (int i = 0; flim_maps[i] != NULL; i++)
            if (fm_result_get_map(res, flim_maps[i]) != NULL) {
                fm_window_select_map(win, flim_maps[i]);
                return;
            }
    }
    fm_window_show_current(win);
}

/* An edge of the fit window dragged on the decay plot: that edge is given from now on. */
static void window_dragged(FmDecayView *decay, gboolean start_edge, double start_ns, double end_ns,
                           FmFlimPage *self)
{
    (void)decay;
    char text[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(text, sizeof text, "%.6g", start_edge ? start_ns : end_ns);
    fm_flim_panel_set_param(self->panel, start_edge ? "fit_start_ns" : "fit_end_ns", text);
}

static void backend_changed(FmFlimPanel *panel, const char *name, FmFlimPage *self)
{
    (void)panel;
    fm_window_backend_chosen(self->win, name);
}

/* ---- compare methods --------------------------------------------------------------------- */

static void compare_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    FmWindow *win = user;
    FmFlimPage *self = page_of(win);
    if (win->dataset == NULL || !fm_flim_dataset_is_flim(win->dataset)) {
        fm_window_show_message(win, GTK_MESSAGE_INFO,
                               _("Open a FLIM dataset before comparing methods."));
        return;
    }
    if (self->compare_window != NULL)
        gtk_widget_destroy(self->compare_window);
    GPtrArray *rois = fm_map_view_get_rois(win->map_view);
    FmCompareMethods *cm = fm_compare_methods_new(
        GTK_WINDOW(win), win->dataset, win->catalogue, (FmCompareParamsFn)fm_flim_panel_get_params,
        self->panel, fm_flim_panel_get_backend(self->panel),
        fm_flim_panel_get_use_rois(self->panel) ? rois : NULL);
    self->compare_window = GTK_WIDGET(cm);
    g_object_add_weak_pointer(G_OBJECT(cm), (gpointer *)&self->compare_window);
    gtk_widget_show_all(GTK_WIDGET(cm));
}

static void fm_flim_page_init(FmFlimPage *self)
{
    (void)self;
}

static void fm_flim_page_class_init(FmFlimPageClass *klass)
{
    (void)klass;
}

FmFamilyPage *fm_flim_page_new(FmWindow *win)
{
    FmFlimPage *self = g_object_new(FM_TYPE_FLIM_PAGE, NULL);
    self->win = win;
    g_object_set_data(G_OBJECT(win), "fm-flim-page", self);
    static const GActionEntry entries[] = {
        {"flim-compare", compare_activated, NULL, NULL, NULL, {0}},
    };
    g_action_map_add_action_entries(G_ACTION_MAP(win), entries, G_N_ELEMENTS(entries), win);

    self->panel = FM_FLIM_PANEL(fm_flim_panel_new());
    fm_window_add_panel(win, "flim", _("Fluorescence lifetime"), GTK_WIDGET(self->panel));
    self->views = FM_FLIM_VIEWS(fm_flim_views_new());
    gtk_stack_add_titled(GTK_STACK(win->centre_stack), GTK_WIDGET(self->views), "lifetime",
                         _("Lifetime"));
    /* Map | Lifetime: a switcher over the centre stack, whose other pages are untitled */
    self->centre_switcher = gtk_stack_switcher_new();
    gtk_stack_switcher_set_stack(GTK_STACK_SWITCHER(self->centre_switcher),
                                 GTK_STACK(win->centre_stack));
    GtkWidget *toolbar = gtk_widget_get_parent(win->map_combo);
    gtk_box_pack_start(GTK_BOX(toolbar), self->centre_switcher, FALSE, FALSE, 0);
    gtk_box_reorder_child(GTK_BOX(toolbar), self->centre_switcher, 0);
    gtk_widget_show_all(GTK_WIDGET(self->views));
    gtk_widget_show_all(self->centre_switcher);
    gtk_widget_set_visible(self->centre_switcher, FALSE);

    g_signal_connect(win->panel_stack, "notify::visible-child", G_CALLBACK(family_changed), self);
    g_signal_connect(win->centre_stack, "notify::visible-child", G_CALLBACK(centre_changed), self);
    g_signal_connect(win->map_view, "rois-changed", G_CALLBACK(rois_changed), self);
    g_signal_connect(win->map_view, "cursor-moved", G_CALLBACK(cursor_moved), self);
    g_signal_connect(self->panel, "backend-changed", G_CALLBACK(backend_changed), self);
    g_signal_connect(self->panel, "params-changed", G_CALLBACK(params_changed), self);
    g_signal_connect(fm_flim_views_get_decay_view(self->views), "window-changed",
                     G_CALLBACK(window_dragged), self);
    self->live = fm_live_params_new(win, "flim", live_request, live_show, self);
    params_changed(self->panel, NULL, self);
    return FM_FAMILY_PAGE(self);
}

GtkWidget *fm_window_get_flim_views(FmWindow *win)
{
    FmFlimPage *self = page_of(win);
    return self ? GTK_WIDGET(self->views) : NULL;
}

GtkWidget *fm_window_get_compare_window(FmWindow *win)
{
    FmFlimPage *self = page_of(win);
    return self ? self->compare_window : NULL;
}
