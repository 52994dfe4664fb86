/* FmFamilyPage: what a family brings to the window, so that the window can host it without
 * naming it. A page is made by its family's constructor (listed once in pages.c), which puts its
 * panel in the window's family stack and its views in the centre, and connects to the shared
 * services it needs (map view, ROIs, dataset-changed). The window then asks its pages in turn. */
#pragma once

#include <glib-object.h>

#include "app/core/result.h"

G_BEGIN_DECLS

#define FM_TYPE_FAMILY_PAGE (fm_family_page_get_type())
G_DECLARE_INTERFACE(FmFamilyPage, fm_family_page, FM, FAMILY_PAGE, GObject)

struct _FmFamilyPageInterface {
    GTypeInterface parent_iface;
    /* The page's family id ("flim", …), the name of its child in the window's family stack. */
    const char *(*get_id)(FmFamilyPage *page);
    /* A newly opened dataset is on show: the page takes it, and shows itself if it is its own. */
    void (*dataset_changed)(FmFamilyPage *page);
    /* Shows a result of one of its methods (a finished job, a catalogue entry); FALSE when the
     * result is not its own. */
    gboolean (*show_result)(FmFamilyPage *page, const fm_result *result);
    /* win.run while the page is on show; FALSE leaves it to the window's default. */
    gboolean (*run)(FmFamilyPage *page);
    /* Scripting and tests: selects a method, sets a parameter from text; FALSE when the page
     * has no such method or key. */
    gboolean (*select_method)(FmFamilyPage *page, const char *method_id);
    gboolean (*set_param)(FmFamilyPage *page, const char *key, const char *text);
};

const char *fm_family_page_get_id(FmFamilyPage *page);
/* Every call below is optional for a page: where it has none, it answers FALSE or does nothing. */
void fm_family_page_dataset_changed(FmFamilyPage *page);
gboolean fm_family_page_show_result(FmFamilyPage *page, const fm_result *result);
gboolean fm_family_page_run(FmFamilyPage *page);
gboolean fm_family_page_select_method(FmFamilyPage *page, const char *method_id);
gboolean fm_family_page_set_param(FmFamilyPage *page, const char *key, const char *text);

G_END_DECLS
