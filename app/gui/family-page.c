/* FmFamilyPage: the interface's dispatch, with its optional calls. */
#include "family-page.h"

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
