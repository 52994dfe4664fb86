/* "Run on files…": the page's method over several files or a folder, as one batch on this
 * machine. The plan's checks come first: bad files are named with their reason in a dialog
 * before anything runs. The batch then runs on its own thread (batch-run.c); its rows in the job
 * list follow it and its runs go into the catalogue as one group as they are written (the
 * catalogue view's poll shows them). */
#include "window-batch.h"

#include <glib/gi18n.h>
#include <string.h>

#include "batch-run.h"
#include "window-private.h"

/* The window's batch (one at a time), kept on the window. */
typedef struct {
    FmWindow *win;       /* borrowed: the running batch holds a reference */
    fm_gui_batch *batch; /* planned or running, NULL when none */
    fm_batch_view *view; /* the latest batch's rows (the job list owns them) */
    GtkWidget *problems; /* the dialog of bad files, while on show */
    gboolean planning;   /* the plan's checks run */
    char *last_batch_id;
} batch_state;

static void state_free(gpointer data)
{
    batch_state *s = data;
    /* only reached once no batch runs: a running one holds the window */
    fm_gui_batch_free(s->batch);
    g_free(s->last_batch_id);
    g_free(s);
}

static batch_state *get_state(FmWindow *win)
{
    batch_state *s = g_object_get_data(G_OBJECT(win), "fm-batch-state");
    if (s == NULL) {
        s = g_new0(batch_state, 1);
        s->win = win;
        g_object_set_data_full(G_OBJECT(win), "fm-batch-state", s, state_free);
    }
    return s;
}

static void batch_event(fm_gui_batch *batch, const fm_gui_batch_event *event, gpointer user)
{
    batch_state *s = user;
    if (s->view != NULL)
        fm_batch_view_update(s->view, event);
    if (event->kind != FM_GUI_BATCH_FINISHED)
        return;
    FmWindow *win = s->win;
    g_autofree char *what = fm_gui_batch_describe(batch);
    g_autofree char *text = NULL;
    if (event->message != NULL)
        text = g_strdup_printf(_("%s stopped: %s"), what, event->message);
    else if (event->cancelled)
        text = g_strdup_printf(_("%s cancelled: %d done, %d failed, the rest not run"), what,
                               event->done, event->failed);
    else
        text = event->elapsed_s < 1.0
                   ? g_strdup_printf(_("%s: %d done, %d failed in %.0f ms"), what, event->done,
                                     event->failed, 1000.0 * event->elapsed_s)
                   : g_strdup_printf(_("%s: %d done, %d failed in %.1f s"), what, event->done,
                                     event->failed, event->elapsed_s);
    if (win->disposed && event->message != NULL)
        g_warning("%s", text); /* no window left to say it */
    if (!win->disposed) {
        if (event->message != NULL)
            fm_window_show_message(win, GTK_MESSAGE_ERROR, text);
        fm_window_set_status(win, text);
        fm_catalogue_view_refresh(win->catalogue_view, NULL);
    }
    g_clear_pointer(&s->batch, fm_gui_batch_free);
    g_object_unref(win); /* taken when the batch started */
}

static void cancel_clicked(batch_state *s)
{
    if (s->batch != NULL)
        fm_gui_batch_cancel(s->batch);
}

/* The window goes: a running batch stops after its item (it holds the window until then). */
static void window_destroyed(GtkWidget *widget, batch_state *s)
{
    if (s->batch != NULL)
        fm_gui_batch_cancel(s->batch);
}

/* The rows went with the job list (the window closes): the batch's last events update nothing. */
static void view_destroyed(GtkWidget *widget, batch_state *s)
{
    if (s->view != NULL && fm_batch_view_widget(s->view) == widget)
        s->view = NULL;
}

static void start_planned(batch_state *s)
{
    FmWindow *win = s->win;
    fm_gui_batch_start(s->batch, win->catalogue, win->backend_choice, batch_event, s);
    g_object_ref(win);
    g_free(s->last_batch_id);
    s->last_batch_id = g_strdup(fm_gui_batch_get_plan(s->batch)->batch_id);
    g_autofree char *title = fm_gui_batch_describe(s->batch);
    s->view =
        fm_batch_view_new(title, fm_gui_batch_get_plan(s->batch), G_CALLBACK(cancel_clicked), s);
    g_signal_connect(fm_batch_view_widget(s->view), "destroy", G_CALLBACK(view_destroyed), s);
    fm_job_list_add_row(win->job_list, fm_batch_view_widget(s->view));
    g_autofree char *status = g_strdup_printf(_("Running %s…"), title);
    fm_window_set_status(win, status);
}

static void problems_response(GtkDialog *dialog, int response, batch_state *s)
{
    s->problems = NULL;
    gtk_widget_destroy(GTK_WIDGET(dialog));
    if (response == GTK_RESPONSE_ACCEPT && s->batch != NULL)
        start_planned(s);
    else
        g_clear_pointer(&s->batch, fm_gui_batch_free);
}

/* Names each bad file with its reason; "Run the Others" when some can run. */
static GtkWidget *problems_dialog(batch_state *s, GPtrArray *problems, int n_good)
{
    gboolean can_run = n_good > 0;
    GtkWidget *dialog = gtk_dialog_new_with_buttons(
        _("Some Files Cannot Run"), GTK_WINDOW(s->win),
        GTK_DIALOG_MODAL | GTK_DIALOG_DESTROY_WITH_PARENT, _("_Cancel"), GTK_RESPONSE_CANCEL, NULL);
    if (can_run) {
        g_autofree char *run = g_strdup_printf(
            g_dngettext(NULL, "_Run the Other File", "_Run the Other %d Files", n_good), n_good);
        gtk_dialog_add_button(GTK_DIALOG(dialog), run, GTK_RESPONSE_ACCEPT);
        gtk_dialog_set_default_response(GTK_DIALOG(dialog), GTK_RESPONSE_ACCEPT);
    }
    gtk_widget_set_name(dialog, "fm-batch-problems");
    GtkWidget *area = gtk_dialog_get_content_area(GTK_DIALOG(dialog));
    gtk_container_set_border_width(GTK_CONTAINER(area), 12);
    gtk_box_set_spacing(GTK_BOX(area), 8);
    guint total = problems->len + (guint)n_good;
    g_autofree char *head =
        can_run
            ? g_strdup_printf(
                  g_dngettext(NULL, "%u of %u files cannot run (nothing has run yet):",
                              "%u of %u files cannot run (nothing has run yet):", problems->len),
                  problems->len, total)
            : g_strdup(_("None of the files can run:"));
    GtkWidget *label = gtk_label_new(head);
    gtk_label_set_xalign(GTK_LABEL(label), 0.0);
    gtk_label_set_line_wrap(GTK_LABEL(label), TRUE);
    gtk_box_pack_start(GTK_BOX(area), label, FALSE, FALSE, 0);

    GtkWidget *list = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    for (guint i = 0; i < problems->len; i++) {
        const fm_batch_problem *p = problems->pdata[i];
        g_autofree char *base = g_path_get_basename(p->where);
        /* the reason may begin with the path: the name above says it already */
        const char *reason = p->reason;
        if (g_str_has_prefix(reason, p->where) && g_str_has_prefix(reason + strlen(p->where), ": "))
            reason += strlen(p->where) + 2;
        g_autofree char *markup =
            g_markup_printf_escaped("<b>%s</b>\n<small>%s</small>", base, reason);
        GtkWidget *item = gtk_label_new(NULL);
        gtk_label_set_markup(GTK_LABEL(item), markup);
        gtk_label_set_xalign(GTK_LABEL(item), 0.0);
        gtk_label_set_line_wrap(GTK_LABEL(item), TRUE);
        gtk_label_set_max_width_chars(GTK_LABEL(item), 60);
        gtk_label_set_selectable(GTK_LABEL(item), TRUE);
        gtk_widget_set_tooltip_text(item, p->where);
        gtk_widget_set_name(item, "fm-batch-problem");
        gtk_box_pack_start(GTK_BOX(list), item, FALSE, FALSE, 0);
    }
    GtkWidget *scroller = gtk_scrolled_window_new(NULL, NULL);
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroller), GTK_POLICY_NEVER,
                                   GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_propagate_natural_height(GTK_SCROLLED_WINDOW(scroller), TRUE);
    gtk_scrolled_window_set_max_content_height(GTK_SCROLLED_WINDOW(scroller), 320);
    gtk_container_add(GTK_CONTAINER(scroller), list);
    gtk_box_pack_start(GTK_BOX(area), scroller, TRUE, TRUE, 0);
    g_signal_connect(dialog, "response", G_CALLBACK(problems_response), s);
    gtk_widget_show_all(dialog);
    return dialog;
}

/* The plan's checks read each file's header: on a worker, so a large folder never holds the
 * window. */
typedef struct {
    const fm_method *method;
    fm_params *params;
    char **paths;
    fm_gui_batch *batch; /* the outcome */
    GPtrArray *problems;
    int skipped;
} plan_work;

static void plan_work_free(gpointer data)
{
    plan_work *w = data;
    fm_params_free(w->params);
    g_strfreev(w->paths);
    fm_gui_batch_free(w->batch);
    g_ptr_array_unref(w->problems);
    g_free(w);
}

static void plan_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
    plan_work *w = data;
    w->batch = fm_gui_batch_plan(w->method, w->params, (const char *const *)w->paths,
                                 (int)g_strv_length(w->paths), w->problems, &w->skipped);
    g_task_return_boolean(task, TRUE);
}

static void plan_done(GObject *source, GAsyncResult *result, gpointer user)
{
    FmWindow *win = FM_WINDOW(source);
    plan_work *w = g_task_get_task_data(G_TASK(result));
    batch_state *s = get_state(win);
    s->planning = FALSE;
    if (win->disposed)
        return;
    fm_window_set_status(win, "");
    if (w->problems->len > 0) {
        s->batch = g_steal_pointer(&w->batch);
        int n_good = s->batch != NULL ? (int)fm_gui_batch_get_plan(s->batch)->items->len : 0;
        s->problems = problems_dialog(s, w->problems, n_good);
        return;
    }
    if (w->batch == NULL) {
        fm_window_show_message(win, GTK_MESSAGE_INFO,
                               w->skipped > 0
                                   ? _("None of the files is of a kind the method reads.")
                                   : _("No files to run on."));
        return;
    }
    s->batch = g_steal_pointer(&w->batch);
    start_planned(s);
}

gboolean fm_window_run_on_paths(FmWindow *win, const char *const *paths)
{
    batch_state *s = get_state(win);
    if (s->batch != NULL || s->problems != NULL || s->planning) {
        fm_window_show_message(win, GTK_MESSAGE_INFO,
                               _("A batch is already running: cancel it in the job list first."));
        return FALSE;
    }
    if (win->catalogue == NULL) {
        fm_window_show_message(win, GTK_MESSAGE_ERROR,
                               _("The catalogue could not be opened: a batch has nowhere to put "
                                 "its results."));
        return FALSE;
    }
    FmFamilyPage *page = fm_window_active_page(win);
    const fm_method *method = page != NULL ? fm_family_page_get_method(page) : NULL;
    fm_params *params = method != NULL ? fm_family_page_get_params(page) : NULL;
    if (method == NULL || params == NULL) {
        fm_window_show_message(win, GTK_MESSAGE_INFO,
                               method == NULL
                                   ? _("Choose a page with a method first: Run on Files runs "
                                       "the method and parameters on show.")
                                   : _("A parameter on the page is out of range: correct it, "
                                       "then Run on Files again."));
        return FALSE;
    }
    plan_work *w = g_new0(plan_work, 1);
    w->method = method;
    w->params = params;
    w->paths = g_strdupv((char **)paths);
    w->problems = g_ptr_array_new_with_free_func((GDestroyNotify)fm_batch_problem_free);
    s->planning = TRUE;
    guint n = g_strv_length(w->paths);
    g_autofree char *status =
        g_strdup_printf(g_dngettext(NULL, "Checking %u file or folder before the batch runs…",
                                    "Checking %u files or folders before the batch runs…", n),
                        n);
    fm_window_set_status(win, status);
    g_autoptr(GTask) task = g_task_new(win, NULL, plan_done, NULL);
    g_task_set_task_data(task, w, plan_work_free);
    g_task_run_in_thread(task, plan_thread);
    return TRUE;
}

/* ---- the file chooser ------------------------------------------------------------------- */

enum { RESPONSE_FOLDER = 1 };

static void chooser_response(GtkDialog *dialog, int response, FmWindow *win)
{
    GtkFileChooser *chooser = GTK_FILE_CHOOSER(dialog);
    g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
    if (response == GTK_RESPONSE_ACCEPT) {
        GSList *files = gtk_file_chooser_get_filenames(chooser);
        for (GSList *l = files; l != NULL; l = l->next)
            g_ptr_array_add(paths, l->data);
        g_slist_free(files);
    } else if (response == RESPONSE_FOLDER) {
        char *folder = gtk_file_chooser_get_current_folder(chooser);
        if (folder != NULL)
            g_ptr_array_add(paths, folder);
    }
    gtk_widget_destroy(GTK_WIDGET(dialog));
    g_ptr_array_add(paths, NULL);
    if (paths->len > 1)
        fm_window_run_on_paths(win, (const char *const *)paths->pdata);
    g_object_unref(win);
}

static void run_on_files_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    FmWindow *win = user;
    FmFamilyPage *page = fm_window_active_page(win);
    const fm_method *method = page != NULL ? fm_family_page_get_method(page) : NULL;
    g_autofree char *title = method != NULL
                                 ? g_strdup_printf(_("Run %s on Files"), _(method->title))
                                 : g_strdup(_("Run on Files"));
    /* Not a native chooser: one dialog takes several files or, with its own button, the folder
     * it shows. */
    GtkWidget *dialog = gtk_file_chooser_dialog_new(
        title, GTK_WINDOW(win), GTK_FILE_CHOOSER_ACTION_OPEN, _("_Cancel"), GTK_RESPONSE_CANCEL,
        _("Run on the Whole _Folder"), RESPONSE_FOLDER, _("_Run on Selected Files"),
        GTK_RESPONSE_ACCEPT, NULL);
    gtk_file_chooser_set_select_multiple(GTK_FILE_CHOOSER(dialog), TRUE);
    gtk_dialog_set_default_response(GTK_DIALOG(dialog), GTK_RESPONSE_ACCEPT);
    gtk_window_set_modal(GTK_WINDOW(dialog), TRUE);
    if (win->dataset != NULL && win->dataset->source_path != NULL) {
        g_autofree char *dir = g_path_get_dirname(win->dataset->source_path);
        gtk_file_chooser_set_current_folder(GTK_FILE_CHOOSER(dialog), dir);
    }
    g_signal_connect(dialog, "response", G_CALLBACK(chooser_response), g_object_ref(win));
    gtk_widget_show(dialog);
    /* the chooser sizes itself for a large screen (822 px tall): a laptop's must hold it */
    gtk_window_resize(GTK_WINDOW(dialog), 820, 560);
}

static void run_on_paths_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    g_autofree const char **paths = g_variant_get_strv(parameter, NULL);
    fm_window_run_on_paths(FM_WINDOW(user), paths);
}

/* "Cancel All Jobs" stops a batch too (after its running file). */
static void cancel_all_activated(GSimpleAction *action, GVariant *parameter, batch_state *s)
{
    cancel_clicked(s);
}

void fm_window_batch_init(FmWindow *win)
{
    static const GActionEntry entries[] = {
        {"run-on-files", run_on_files_activated, NULL, NULL, NULL, {0}},
        {"run-on-paths", run_on_paths_activated, "as", NULL, NULL, {0}},
    };
    g_action_map_add_action_entries(G_ACTION_MAP(win), entries, G_N_ELEMENTS(entries), win);
    batch_state *s = get_state(win);
    g_signal_connect(win, "destroy", G_CALLBACK(window_destroyed), s);
    GAction *cancel_all = g_action_map_lookup_action(G_ACTION_MAP(win), "cancel-all");
    if (cancel_all != NULL)
        g_signal_connect(cancel_all, "activate", G_CALLBACK(cancel_all_activated), s);
    /* Where the runs of a batch end up, under the catalogue's list */
    GtkWidget *button = gtk_button_new_with_mnemonic(_("Run on _Files…"));
    gtk_widget_set_name(button, "fm-run-on-files");
    gtk_widget_set_tooltip_text(button, _("Run the method and parameters on show over several "
                                          "files or a folder, as one batch; the results go into "
                                          "the catalogue as one group"));
    gtk_actionable_set_action_name(GTK_ACTIONABLE(button), "win.run-on-files");
    gtk_widget_set_margin_top(button, 6);
    gtk_widget_show(button);
    gtk_box_pack_end(GTK_BOX(win->catalogue_box), button, FALSE, FALSE, 0);
}

GtkWidget *fm_window_batch_problems_dialog(FmWindow *win)
{
    return get_state(win)->problems;
}

fm_batch_view *fm_window_batch_view(FmWindow *win)
{
    return get_state(win)->view;
}

gboolean fm_window_batch_planning(FmWindow *win)
{
    return get_state(win)->planning;
}

gboolean fm_window_batch_running(FmWindow *win)
{
    batch_state *s = get_state(win);
    return s->planning || (s->batch != NULL && fm_gui_batch_is_running(s->batch));
}

const char *fm_window_batch_id(FmWindow *win)
{
    return get_state(win)->last_batch_id;
}
