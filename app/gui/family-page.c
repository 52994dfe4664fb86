/* FmFamilyPage: the interface's dispatch, with its optional calls. */
#include "family-page.h"

#include <gio/gio.h>

G_DEFINE_INTERFACE(FmFamilyPage, fm_family_page, G_TYPE_OBJECT)

static void fm_family_page_default_init(FmFamilyPageInterface *iface)
{
    (void)iface;
}

#define IFACE(page) FM_FAMILY_PAGE_GET_IFACE(page)

const char *fm_family_page_get_id(FmFamilyPage *page)
{
    return IFACE(page)->get_id(page);
}

int fm_family_page_takes(FmFamilyPage *page, const fm_dataset *ds)
{
    return IFACE(page)->takes != NULL ? IFACE(page)->takes(page, ds) : FM_PAGE_TAKES_NONE;
}

gboolean fm_family_page_needs_dataset(FmFamilyPage *page)
{
    /* a page that needs none takes any dataset as such, even an empty 1 x 1 image */
    static const gsize one[2] = {1, 1};
    g_autoptr(fm_dataset) probe = fm_dataset_new(FM_PIXEL_U16, 2, one, NULL);
    return fm_family_page_takes(page, probe) != FM_PAGE_TAKES_NO_DATASET;
}

void fm_family_page_dataset_changed(FmFamilyPage *page)
{
    if (IFACE(page)->dataset_changed != NULL)
        IFACE(page)->dataset_changed(page);
}

gboolean fm_family_page_show_result(FmFamilyPage *page, const fm_result *result)
{
    return IFACE(page)->show_result != NULL && IFACE(page)->show_result(page, result);
}

gboolean fm_family_page_run(FmFamilyPage *page)
{
    return IFACE(page)->run != NULL && IFACE(page)->run(page);
}

gboolean fm_family_page_select_method(FmFamilyPage *page, const char *method_id)
{
    return IFACE(page)->select_method != NULL && IFACE(page)->select_method(page, method_id);
}

gboolean fm_family_page_set_param(FmFamilyPage *page, const char *key, const char *text)
{
    return IFACE(page)->set_param != NULL && IFACE(page)->set_param(page, key, text);
}

void fm_family_page_set_backend(FmFamilyPage *page, const char *backend)
{
    if (IFACE(page)->set_backend != NULL)
        IFACE(page)->set_backend(page, backend);
}

guint fm_family_page_get_bars(FmFamilyPage *page)
{
    return IFACE(page)->get_bars != NULL ? IFACE(page)->get_bars(page) : 0;
}

gboolean fm_family_page_get_live(FmFamilyPage *page, fm_page_live *live, GError **error)
{
    if (IFACE(page)->get_live == NULL) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "%s",
                    "this page has no stack playback");
        return FALSE;
    }
    return IFACE(page)->get_live(page, live, error);
}

const fm_method *fm_family_page_get_method(FmFamilyPage *page)
{
    return IFACE(page)->get_method != NULL ? IFACE(page)->get_method(page) : NULL;
}

fm_params *fm_family_page_get_params(FmFamilyPage *page)
{
    return IFACE(page)->get_params != NULL ? IFACE(page)->get_params(page) : NULL;
}

gboolean fm_family_page_add_rois(FmFamilyPage *page, GPtrArray *rois)
{
    return IFACE(page)->add_rois != NULL && IFACE(page)->add_rois(page, rois);
}

GPtrArray *fm_family_page_get_rois(FmFamilyPage *page)
{
    return IFACE(page)->get_rois != NULL ? IFACE(page)->get_rois(page) : NULL;
}

/* ---- a page from plain functions ---------------------------------------------------------- */

#define FM_TYPE_FUNCS_PAGE (fm_funcs_page_get_type())
G_DECLARE_FINAL_TYPE(FmFuncsPage, fm_funcs_page, FM, FUNCS_PAGE, GObject)

struct _FmFuncsPage {
    GObject parent_instance;
    FmWindow *win; /* not owned: the window owns its pages */
    const fm_page_funcs *funcs;
};

static void funcs_iface_init(FmFamilyPageInterface *iface);
G_DEFINE_TYPE_WITH_CODE(FmFuncsPage, fm_funcs_page, G_TYPE_OBJECT,
                        G_IMPLEMENT_INTERFACE(FM_TYPE_FAMILY_PAGE, funcs_iface_init))

static const char *funcs_get_id(FmFamilyPage *page)
{
    return FM_FUNCS_PAGE(page)->funcs->id;
}

static int funcs_takes(FmFamilyPage *page, const fm_dataset *ds)
{
    FmFuncsPage *self = FM_FUNCS_PAGE(page);
    return self->funcs->takes != NULL ? self->funcs->takes(ds) : FM_PAGE_TAKES_NONE;
}

static void funcs_dataset_changed(FmFamilyPage *page)
{
    FmFuncsPage *self = FM_FUNCS_PAGE(page);
    if (self->funcs->dataset_changed != NULL)
        self->funcs->dataset_changed(self->win);
}

static gboolean funcs_run(FmFamilyPage *page)
{
    FmFuncsPage *self = FM_FUNCS_PAGE(page);
    return self->funcs->run != NULL && self->funcs->run(self->win);
}

static gboolean funcs_show_result(FmFamilyPage *page, const fm_result *result)
{
    FmFuncsPage *self = FM_FUNCS_PAGE(page);
    return self->funcs->show_result != NULL && self->funcs->show_result(self->win, result);
}

static guint funcs_get_bars(FmFamilyPage *page)
{
    return FM_FUNCS_PAGE(page)->funcs->bars;
}

static gboolean funcs_select_method(FmFamilyPage *page, const char *method_id)
{
    FmFuncsPage *self = FM_FUNCS_PAGE(page);
    if (self->funcs->select_method != NULL)
        return self->funcs->select_method(self->win, method_id);
    /* a page of one method "selects" that one */
    return self->funcs->get_method != NULL &&
           self->funcs->get_method(self->win) == fm_method_find(method_id);
}

static gboolean funcs_set_param(FmFamilyPage *page, const char *key, const char *text)
{
    FmFuncsPage *self = FM_FUNCS_PAGE(page);
    return self->funcs->set_param != NULL && self->funcs->set_param(self->win, key, text);
}

static const fm_method *funcs_get_method(FmFamilyPage *page)
{
    FmFuncsPage *self = FM_FUNCS_PAGE(page);
    return self->funcs->get_method != NULL ? self->funcs->get_method(self->win) : NULL;
}

static fm_params *funcs_get_params(FmFamilyPage *page)
{
    FmFuncsPage *self = FM_FUNCS_PAGE(page);
    return self->funcs->get_params != NULL ? self->funcs->get_params(self->win) : NULL;
}

static gboolean funcs_add_rois(FmFamilyPage *page, GPtrArray *rois)
{
    FmFuncsPage *self = FM_FUNCS_PAGE(page);
    return self->funcs->add_rois != NULL && self->funcs->add_rois(self->win, rois);
}

static GPtrArray *funcs_get_rois(FmFamilyPage *page)
{
    FmFuncsPage *self = FM_FUNCS_PAGE(page);
    return self->funcs->get_rois != NULL ? self->funcs->get_rois(self->win) : NULL;
}

static void funcs_iface_init(FmFamilyPageInterface *iface)
{
    iface->get_id = funcs_get_id;
    iface->takes = funcs_takes;
    iface->dataset_changed = funcs_dataset_changed;
    iface->run = funcs_run;
    iface->show_result = funcs_show_result;
    iface->get_bars = funcs_get_bars;
    iface->select_method = funcs_select_method;
    iface->set_param = funcs_set_param;
    iface->get_method = funcs_get_method;
    iface->get_params = funcs_get_params;
    iface->add_rois = funcs_add_rois;
    iface->get_rois = funcs_get_rois;
}

static void fm_funcs_page_init(FmFuncsPage *self)
{
    (void)self;
}

static void fm_funcs_page_class_init(FmFuncsPageClass *klass)
{
    (void)klass;
}

FmFamilyPage *fm_family_page_from_funcs(FmWindow *win, const fm_page_funcs *funcs)
{
    FmFuncsPage *self = g_object_new(FM_TYPE_FUNCS_PAGE, NULL);
    self->win = win;
    self->funcs = funcs;
    return FM_FAMILY_PAGE(self);
}
