/* FmWindow: starts method jobs (Run, Cancel all) and shows their progress and outcome. */
#include "window-private.h"
#include "family-page.h"

#include <glib/gi18n.h>
#include <string.h>

/* ---- finished jobs (shared by every family's done handler) ------------------------------ */

void fm_window_show_done(FmWindow *win, const fm_result *res, const char *what)
{
    g_autofree char *status = g_strdup_printf(_("%s: done in %.1f ms"), what, res->elapsed_ms);
    fm_window_set_status(win, status);
    g_autofree char *backend =
        g_strdup_printf(_("Backend: %s"), res->device != NULL ? res->device : res->backend);
    gtk_label_set_text(GTK_LABEL(win->backend_label), backend);
}

char *fm_window_show_failure(FmWindow *win, const fm_job *job, const char *what)
{
    const GError *err = fm_job_get_error(job);
    char *msg =
        g_strdup_printf(_("%s failed: %s"), what, err != NULL ? err->message : _("unknown error"));
    fm_window_show_message(win, GTK_MESSAGE_ERROR, msg);
    fm_window_set_status(win, msg);
    return msg;
}

void fm_window_show_cancelled(FmWindow *win, const char *what)
{
    g_autofree char *status = g_strdup_printf(_("%s: cancelled"), what);
    fm_window_set_status(win, status);
}

void fm_window_refresh_after_job(FmWindow *win)
{
    g_autoptr(GError) error = NULL;
    if (!fm_catalogue_view_refresh(win->catalogue_view, &error))
        fm_window_show_message(win, GTK_MESSAGE_WARNING, error->message);
    fm_window_update_action_state(win);
}

void fm_window_mark_ready_shown(FmWindow *win, fm_job *job)
{
    g_hash_table_add(win->ready_shown, job);
    fm_window_result_shown(win, job);
}

gboolean fm_window_take_ready_shown(FmWindow *win, fm_job *job)
{
    return g_hash_table_remove(win->ready_shown, job);
}

/* ---- jobs ------------------------------------------------------------------------------- */

static void job_progress(fm_job *job, double fraction, gpointer user)
{
    FmWindow *win = user;
    if (!win->disposed)
        fm_job_list_update(win->job_list, job);
}

/* Shows a result's note in the info bar, but a CPU fallback only the first time per session for
 * the same reason: without a GPU every "auto" run falls back, and the job row and status bar
 * ("CPU, n threads") already say so. The methods write the fallback as one "; "-separated part
 * made from this same msgid, so its translation finds it. Other remarks still show each time. */
static void show_note(FmWindow *win, const char *note)
{
    if (note == NULL)
        return;
    g_autofree char *marker = g_strdup(_("fell back to the CPU: %s"));
    char *fmt = strstr(marker, "%s");
    if (fmt != NULL)
        *fmt = '\0';
    const char *start = marker[0] != '\0' ? strstr(note, marker) : NULL;
    if (start == NULL) { /* what the method chose or remarks (a fit window, pixels left out) */
        fm_window_show_message(win, GTK_MESSAGE_INFO, note);
        return;
    }
    const char *end = strstr(start, "; ");
    g_autofree char *reason = end ? g_strndup(start, (gsize)(end - start)) : g_strdup(start);
    if (g_strcmp0(reason, win->last_fallback_reason) != 0) {
        g_free(win->last_fallback_reason);
        win->last_fallback_reason = g_steal_pointer(&reason);
        fm_window_show_message(win, GTK_MESSAGE_WARNING, note);
        return;
    }
    /* Same fallback as before: show only the other remarks, if any. */
    g_autoptr(GString) rest = g_string_new_len(note, start - note);
    if (end != NULL)
        g_string_append(rest, end + 2);
    while (g_str_has_suffix(rest->str, "; "))
        g_string_truncate(rest, rest->len - 2);
    while (g_str_has_prefix(rest->str, "; "))
        g_string_erase(rest, 0, 2);
    if (rest->len > 0)
        fm_window_show_message(win, GTK_MESSAGE_INFO, rest->str);
}

/* The maps on display (a copy: the job's own go with the job), the status and the note. */
static void show_result(FmWindow *win, fm_job *job, const fm_result *res)
{
    g_autofree char *what = fm_job_describe(job);
    fm_window_set_result(win, fm_window_copy_result(res), FALSE);
    fm_window_pages_show_result(win, res);
    fm_window_show_done(win, res, what);
    show_note(win, res->note);
}

/* The method returned its maps: show them now, while the worker still writes the catalogue. */
static void job_ready(fm_job *job, gpointer user)
{
    FmWindow *win = user;
    const fm_result *res = fm_job_get_ready_result(job);
    if (win->disposed || res == NULL)
        return;
    fm_job_list_update(win->job_list, job); /* "Recording… 100 %" rather than a stale stage */
    show_result(win, job, res);
    fm_window_mark_ready_shown(win, job);
}

static void job_done(fm_job *job, gpointer user)
{
    FmWindow *win = user;
    win->running_jobs--;
    win->last_job_state = fm_job_get_state(job);
    gboolean shown = fm_window_take_ready_shown(win, job);
    if (win->disposed) {
        g_object_unref(win); /* the reference taken when the job started */
        return;
    }
    fm_job_list_update(win->job_list, job);
    g_autofree char *what = fm_job_describe(job);
    const fm_result *res = fm_job_get_result(job);
    if (win->last_job_state == FM_JOB_DONE && res != NULL) {
        if (!shown) { /* the ready callback did not show them */
            show_result(win, job, res);
            fm_window_result_shown(win, job);
        }
    } else if (win->last_job_state == FM_JOB_FAILED) {
        /* A catalogue write that failed after ready leaves its maps on show, unrecorded; the
         * message names the failure. */
        g_free(fm_window_show_failure(win, job, what));
    } else {
        fm_window_show_cancelled(win, what);
    }
    fm_window_refresh_after_job(win);
    g_object_unref(win);
}

void fm_window_start_job(FmWindow *win, const fm_method *method, const fm_params *params,
                         GPtrArray *rois, fm_backend backend)
{
    fm_window_playback_stop(win);
    fm_window_state_save(win); /* what ran is what the next session starts with */
    win->running_jobs++;
    fm_job *job = fm_job_start(method, win->dataset, params, rois != NULL && rois->len ? rois : NULL,
                               backend, win->catalogue, job_progress, job_done, g_object_ref(win));
    fm_job_set_ready_callback(job, job_ready);
    fm_job_list_add(win->job_list, job);
    fm_job_unref(job); /* the list keeps it */
    g_autofree char *what = fm_job_describe(job);
    g_autofree char *status = g_strdup_printf(_("Running %s…"), what);
    fm_window_set_status(win, status);
}

/* win.run: the page on show runs its method. */
static void run_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    FmWindow *win = user;
    if (win->dataset == NULL) {
        fm_window_show_message(win, GTK_MESSAGE_INFO, _("Open a dataset before running a method."));
        return;
    }
    FmFamilyPage *page = fm_window_active_page(win);
    if (page == NULL || !fm_family_page_run(page))
        fm_window_show_message(win, GTK_MESSAGE_INFO, _("This page has no method to run."));
}

static void cancel_all_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    FmWindow *win = user;
    fm_window_playback_stop(win);
    fm_job_list_cancel_all(win->job_list);
}

static const GActionEntry win_entries[] = {
    {"run", run_activated, NULL, NULL, NULL, {0}},
    {"cancel-all", cancel_all_activated, NULL, NULL, NULL, {0}},
};

void fm_window_jobs_init(FmWindow *win)
{
    g_action_map_add_action_entries(G_ACTION_MAP(win), win_entries, G_N_ELEMENTS(win_entries), win);
}
