/* The speckle page: the LSI panel on the right, the raw frames and the contrast and flow maps in
 * the window's map view, the live map of stack playback (lsi.spatial on one frame), and the map
 * recomputed after a parameter change (live parameters). */
#include "lsi-page.h"

#include <glib/gi18n.h>

#include "app/gui/live-params.h"
#include "app/gui/live/live-gui.h"
#include "app/gui/window-private.h"
#include "lsi-panel.h"

struct _FmLsiPage {
    GObject parent_instance;
    FmWindow *win; /* not owned: the window owns its pages */
    FmLsiPanel *panel;
    FmLiveParams *live; /* the map again after a parameter change (owned by the window) */
};

static void page_iface_init(FmFamilyPageInterface *iface);
G_DEFINE_TYPE_WITH_CODE(FmLsiPage, fm_lsi_page, G_TYPE_OBJECT,
                        G_IMPLEMENT_INTERFACE(FM_TYPE_FAMILY_PAGE, page_iface_init))

static gboolean active(FmLsiPage *self)
{
    return g_strcmp0(fm_window_get_family(self->win), "lsi") == 0;
}

static void map_list(FmWindow *win)
{
    GtkComboBoxText *combo = GTK_COMBO_BOX_TEXT(win->map_combo);
    win->updating = TRUE;
    gtk_combo_box_text_remove_all(combo);
    gtk_combo_box_text_append(combo, "raw", _("Raw frame"));
    gtk_combo_box_text_append(combo, "contrast", _("Contrast K"));
    gtk_combo_box_text_append(combo, "sfi", _("SFI"));
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(combo), win->map_name);
    win->updating = FALSE;
}

static void family_changed(GObject *stack, GParamSpec *pspec, FmLsiPage *self)
{
    (void)stack;
    (void)pspec;
    if (!active(self))
        return;
    fm_window_playback_set_labels(self->win);
    map_list(self->win);
}

static const char *get_id(FmFamilyPage *page)
{
    (void)page;
    return "lsi";
}

/* Any image or stack of images, but a decay (a time axis in ns or ps is not a speckle stack). */
static int takes(FmFamilyPage *page, const fm_dataset *ds)
{
    (void)page;
    if (ds->n_dims < 2 || ds->n_dims > 3 || g_strcmp0(ds->dims[0].name, "x") != 0 ||
        g_strcmp0(ds->dims[1].name, "y") != 0)
        return FM_PAGE_TAKES_NONE;
    if (ds->n_dims == 3 &&
        (g_strcmp0(ds->dims[2].unit, "ns") == 0 || g_strcmp0(ds->dims[2].unit, "ps") == 0))
        return FM_PAGE_TAKES_NONE;
    return FM_PAGE_TAKES_CAN_RUN;
}

static void dataset_changed(FmFamilyPage *page)
{
    FmLsiPage *self = FM_LSI_PAGE(page);
    family_changed(NULL, NULL, self); /* returns at once unless the page is on show */
}

static gboolean show_result(FmFamilyPage *page, const fm_result *res)
{
    FmLsiPage *self = FM_LSI_PAGE(page);
    if (res == NULL || !g_str_has_prefix(res->method_id, "lsi."))
        return FALSE;
    fm_window_set_family(self->win, "lsi");
    fm_window_select_map(self->win, fm_result_get_map(res, "sfi") != NULL ? "sfi" : "contrast");
    return TRUE;
}

static gboolean run(FmFamilyPage *page)
{
    FmLsiPage *self = FM_LSI_PAGE(page);
    fm_live_params_cancel(self->live); /* the user's run replaces any live one */
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_params) params = fm_lsi_panel_get_params(self->panel, NULL, &error);
    if (params == NULL) {
        fm_window_show_message(self->win, GTK_MESSAGE_ERROR, error->message);
        return TRUE;
    }
    fm_window_start_job(self->win, fm_lsi_panel_get_method(self->panel), params,
                        fm_map_view_get_rois(self->win->map_view),
                        fm_lsi_panel_get_backend(self->panel));
    return TRUE;
}

static gboolean select_method(FmFamilyPage *page, const char *method_id)
{
    return fm_lsi_panel_set_method(FM_LSI_PAGE(page)->panel, method_id);
}

static gboolean set_param(FmFamilyPage *page, const char *key, const char *text)
{
    return fm_lsi_panel_set_param(FM_LSI_PAGE(page)->panel, key, text);
}

static const fm_method *get_method(FmFamilyPage *page)
{
    return fm_lsi_panel_get_method(FM_LSI_PAGE(page)->panel);
}

static fm_params *get_params(FmFamilyPage *page)
{
    return fm_lsi_panel_get_params(FM_LSI_PAGE(page)->panel, NULL, NULL);
}

static void set_backend(FmFamilyPage *page, const char *backend)
{
    fm_lsi_panel_set_backend(FM_LSI_PAGE(page)->panel, backend);
}

static guint get_bars(FmFamilyPage *page)
{
    (void)page;
    return FM_PAGE_BAR_ALL;
}

/* The paper's real-time display: spatial contrast of each frame with the panel's parameters. */
static gboolean get_live(FmFamilyPage *page, fm_page_live *live, GError **error)
{
    FmLsiPage *self = FM_LSI_PAGE(page);
    live->method = fm_method_find("lsi.spatial");
    if (live->method == NULL) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "%s",
                    _("The lsi.spatial method is missing."));
        return FALSE;
    }
    live->params = fm_lsi_panel_get_params(self->panel, live->method, error);
    if (live->params == NULL)
        return FALSE;
    live->backend = fm_lsi_panel_get_backend(self->panel);
    live->map = "sfi";
    live->y_label = _("SFI (1/s)");
    return TRUE;
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
    iface->get_live = get_live;
    iface->get_method = get_method;
    iface->get_params = get_params;
}

static void backend_changed(FmLsiPanel *panel, const char *name, FmLsiPage *self)
{
    (void)panel;
    fm_window_backend_chosen(self->win, name);
}

static void params_changed(FmLsiPanel *panel, const char *key, FmLsiPage *self)
{
    (void)panel;
    if (key != NULL)
        fm_live_params_changed(self->live);
    else /* another method: what was pending is for the old one */
        fm_live_params_cancel(self->live);
}

/* Live parameters: spatial contrast on the frame shown, as playback computes it (the share of a
 * run over the stack is one frame); the other methods, which span frames, on the whole stack. */
static gboolean live_request(fm_live_params_request *req, gpointer user)
{
    FmLsiPage *self = user;
    FmWindow *win = self->win;
    const fm_method *method = fm_lsi_panel_get_method(self->panel);
    if (!active(self) || method == NULL || win->dataset == NULL ||
        fm_window_playback_running(win) || takes(NULL, win->dataset) == FM_PAGE_TAKES_NONE)
        return FALSE;
    req->params = fm_lsi_panel_get_params(self->panel, NULL, NULL);
    if (req->params == NULL)
        return FALSE;
    int frames = fm_dataset_frames(win->dataset);
    gboolean one_frame = g_strcmp0(method->id, "lsi.spatial") == 0 && frames > 1;
    req->method = method;
    req->dataset = one_frame ? fm_window_frame_copy(win->dataset, CLAMP(win->frame, 0, frames - 1))
                             : fm_dataset_ref(win->dataset);
    req->share = one_frame ? 1.0 / frames : 1.0;
    req->rois = fm_map_view_get_rois(win->map_view);
    req->backend = fm_lsi_panel_get_backend(self->panel);
    return TRUE;
}

/* A one-frame map is the playback kind (the frame slider recomputes it); the map chosen stays. */
static void live_show(const fm_result *res, gpointer user)
{
    FmLsiPage *self = user;
    FmWindow *win = self->win;
    const fm_map *first = res->maps != NULL && res->maps->len > 0 ? res->maps->pdata[0] : NULL;
    gboolean one_frame = first != NULL && first->n_frames == 1 && win->dataset != NULL &&
                         fm_dataset_frames(win->dataset) > 1;
    fm_window_set_result(win, fm_window_copy_result(res), one_frame);
    if (g_strcmp0(win->map_name, "raw") == 0 || fm_result_get_map(res, win->map_name) == NULL)
        fm_window_select_map(win, fm_result_get_map(res, "sfi") != NULL ? "sfi" : "contrast");
    else
        fm_window_show_current(win);
}

static void fm_lsi_page_init(FmLsiPage *self)
{
    (void)self;
}

static void fm_lsi_page_class_init(FmLsiPageClass *klass)
{
    (void)klass;
}

FmFamilyPage *fm_lsi_page_new(FmWindow *win)
{
    FmLsiPage *self = g_object_new(FM_TYPE_LSI_PAGE, NULL);
    self->win = win;
    self->panel = FM_LSI_PANEL(fm_lsi_panel_new("lsi"));
    fm_window_add_panel(win, "lsi", _("Laser speckle"), GTK_WIDGET(self->panel));
    g_signal_connect(win->panel_stack, "notify::visible-child", G_CALLBACK(family_changed), self);
    g_signal_connect(self->panel, "backend-changed", G_CALLBACK(backend_changed), self);
    self->live = fm_live_params_new(win, "lsi", live_request, live_show, self);
    g_signal_connect(self->panel, "params-changed", G_CALLBACK(params_changed), self);
    /* a camera's frames: the map and the ROI time course redrawn as they arrive */
    fm_live_add_page(win, &(fm_live_page){.page_id = "lsi",
                                          .frames = FM_LIVE_FRAMES_IMAGES,
                                          .panel = GTK_BOX(self->panel),
                                          .view = win->map_view,
                                          .centre = "map"});
    return FM_FAMILY_PAGE(self);
}
