/* The registry of family pages: adding a family adds one line here. The first is the page of any
 * dataset the others do not take. */
#include "pages.h"

#include "app/gui/dce/dce-page.h"
#include "app/gui/flim/flim-page.h"
#include "app/gui/lsi/lsi-page.h"
#include "app/gui/mcml/mcml-page.h"
#include "app/gui/oct/oct-page.h"

void fm_pages_attach(FmWindow *win, GPtrArray *pages)
{
    g_ptr_array_add(pages, fm_lsi_page_new(win));
    g_ptr_array_add(pages, fm_flim_page_new(win));
    g_ptr_array_add(pages, fm_oct_page_new(win));
    g_ptr_array_add(pages, fm_dce_page_new(win));
    g_ptr_array_add(pages, fm_mcml_page_new(win));
}
