/* The MCML page: the MCML view's editor in the side panel and its map and plots in the centre;
 * win.run runs the simulation, listed under Jobs and recorded in the window's catalogue like
 * every other run. */
#include "mcml-page.h"

#include <glib/gi18n.h>

#include "app/gui/window-private.h"

static FmMcmlView *view_of(FmWindow *win)
{
    return g_object_get_data(G_OBJECT(win), "fm-mcml-view");
}

static gboolean on_show(FmWindow *win)
{
    return g_strcmp0(fm_window_get_family(win), "mcml") == 0;
}

/* The header names what the centre shows: the model on this page, the open file elsewhere. */
static void update_subtitle(FmWindow *win)
{
    GtkHeaderBar *bar = GTK_HEADER_BAR(win->header_bar);
    if (on_show(win)) {
        gtk_header_bar_set_subtitle(bar, fm_mcml_view_get_model_title(view_of(win)));
    } else {
        g_autofree char *base = win->dataset && win->dataset->source_path
                                    ? g_path_get_basename(win->dataset->source_path)
                                    : NULL;
        gtk_header_bar_set_subtitle(bar, base);
    }
}

/* Runs go to the window's catalogue (opened after the pages are made), so that they show in its
 * list like every other run. */
static void share_catalogue(FmWindow *win)
{
    if (win->catalogue != NULL && !g_object_get_data(G_OBJECT(win), "fm-mcml-catalogue")) {
        fm_mcml_view_set_catalogue(view_of(win), win->catalogue);
        g_object_set_data(G_OBJECT(win), "fm-mcml-catalogue", win->catalogue);
    }
}

static void family_changed(GObject *stack, GParamSpec *pspec, FmWindow *win)
{
    (void)stack;
    (void)pspec;
    if (on_show(win)) {
        share_catalogue(win);
        gtk_stack_set_visible_child_name(GTK_STACK(win->centre_stack), "mcml");
    }
    /* only on the way in and out of the page: other pages leave the header alone */
    gboolean was = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(win), "fm-mcml-shown"));
    if (was != on_show(win)) {
        g_object_set_data(G_OBJECT(win), "fm-mcml-shown", GINT_TO_POINTER(on_show(win)));
        update_subtitle(win);
    }
}

static void model_changed(FmMcmlView *view, FmWindow *win)
{
    (void)view;
    if (on_show(win))
        update_subtitle(win);
}

/* ---- the run in the window's job list, status bar and catalogue ---- */

static void job_started(FmMcmlView *view, fm_job *job, FmWindow *win)
{
    (void)view;
    win->running_jobs++;
    fm_job_list_add(win->job_list, job);
    g_autofree char *what = fm_job_describe(job);
    g_autofree char *status = g_strdup_printf(_("Running %s…"), what);
    fm_window_set_status(win, status);
}

static void job_progress(FmMcmlView *view, fm_job *job, FmWindow *win)
{
    (void)view;
    if (!win->disposed)
        fm_job_list_update(win->job_list, job);
}

static void job_finished(FmMcmlView *view, fm_job *job, FmWindow *win)
{
    (void)view;
    win->running_jobs--;
    win->last_job_state = fm_job_get_state(job);
    if (win->disposed)
        return;
    fm_job_list_update(win->job_list, job);
    g_autofree char *what = fm_job_describe(job);
    const fm_result *res = fm_job_get_result(job);
    if (win->last_job_state == FM_JOB_DONE && res != NULL) {
        fm_window_show_done(win, res, what);
        fm_window_show_fallback(win, res->note); /* its remarks are in the panel */
    } else if (win->last_job_state == FM_JOB_FAILED)
        g_free(fm_window_show_failure(win, job, what));
    else
        fm_window_show_cancelled(win, what);
    fm_window_refresh_after_job(win); /* the run shows in the catalogue at once */
}

static gboolean page_run(FmWindow *win)
{
    share_catalogue(win);
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
    g_signal_connect_object(view, "job-started", G_CALLBACK(job_started), win, 0);
    g_signal_connect_object(view, "job-progress", G_CALLBACK(job_progress), win, 0);
    g_signal_connect_object(view, "job-finished", G_CALLBACK(job_finished), win, 0);
    g_signal_connect_object(view, "model-changed", G_CALLBACK(model_changed), win, 0);
    fm_window_add_panel(win, "mcml", _("Light transport (MCML)"), fm_mcml_view_get_panel(view));
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
