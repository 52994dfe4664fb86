/* The MCML page: the MCML view's editor in the side panel and its map and plots in the centre;
 * win.run runs the simulation. */
#include "mcml-page.h"

#include <glib/gi18n.h>

#include "app/gui/window-private.h"

static FmMcmlView *view_of(FmWindow *win)
{
    return g_object_get_data(G_OBJECT(win), "fm-mcml-view");
}

static void family_changed(GObject *stack, GParamSpec *pspec, FmWindow *win)
{
    (void)stack;
    (void)pspec;
    if (g_strcmp0(fm_window_get_family(win), "mcml") == 0)
        gtk_stack_set_visible_child_name(GTK_STACK(win->centre_stack), "mcml");
}

static gboolean page_run(FmWindow *win)
{
    fm_mcml_view_run(view_of(win)); /* the reason, if it cannot, is on its status line */
    return TRUE;
}

static int takes_no_dataset(const fm_dataset *ds)
{
    (void)ds;
    return FM_PAGE_TAKES_NO_DATASET;
}

FmFamilyPage *fm_mcml_page_new(FmWindow *win)
{
    FmMcmlView *view = fm_mcml_view_new();
    g_object_set_data(G_OBJECT(win), "fm-mcml-view", view);
    fm_window_add_panel(win, "mcml", _("Light transport"), fm_mcml_view_get_panel(view));
    gtk_stack_add_named(GTK_STACK(win->centre_stack), GTK_WIDGET(view), "mcml");
    gtk_widget_show_all(GTK_WIDGET(view));
    g_signal_connect(win->panel_stack, "notify::visible-child", G_CALLBACK(family_changed), win);
    /* no dataset of its own, none of the map's bars */
    static const fm_page_funcs funcs = {.id = "mcml", .takes = takes_no_dataset, .run = page_run};
    return fm_family_page_from_funcs(win, &funcs);
}

FmMcmlView *fm_window_get_mcml_view(FmWindow *win)
{
    return view_of(win);
}
