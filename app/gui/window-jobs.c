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

/* The CPU fallback, said once per session on the status bar in plain words (without a GPU every
 * "auto" run falls back; the job row and the Backend label say "CPU" each time), with the
 * technical reason in the Backend label's tooltip. */
static void tell_fallback(FmWindow *win, const char *part, const char *marker)
{
    const char *reason = part + strlen(marker);
    if (win->last_fallback_reason != NULL)
        return;
    win->last_fallback_reason = g_strdup(reason);
    g_autofree char *status = g_strdup_printf(
        _("%s — no usable NVIDIA GPU, so Fluxmap computes on the CPU (details: Backend)"),
        gtk_label_get_text(GTK_LABEL(win->status_label)));
    fm_window_set_status(win, status);
    g_autofree char *tip = g_strdup_printf(_("Computing on the CPU: %s"), reason);
    gtk_widget_set_tooltip_text(win->backend_label, tip);
}

/* Shows a result's note: its remarks (what the method chose, pixels left out) in the info bar,
 * one line with the rest behind Details; the CPU fallback on the status bar, once. The methods
 * write the fallback as one "; "-separated part made from this same msgid, so its translation
 * finds it. */
static void take_note(FmWindow *win, const char *note, gboolean remarks)
{
    if (note == NULL)
        return;
    g_autofree char *marker = g_strdup(_("fell back to the CPU: %s"));
    char *fmt = strstr(marker, "%s");
    if (fmt != NULL)
        *fmt = '\0';
    g_auto(GStrv) parts = g_strsplit_set(note, ";\n", -1);
    g_autoptr(GString) rest = g_string_new(NULL);
    for (int i = 0; parts[i] != NULL; i++) {
        char *part = g_strstrip(parts[i]);
        if (part[0] == '\0')
            continue;
        if (marker[0] != '\0' && g_str_has_prefix(part, marker)) {
            tell_fallback(win, part, marker);
            continue;
        }
        g_string_append_printf(rest, "%s%s", rest->len > 0 ? "; " : "", part);
    }
    if (remarks && rest->len > 0)
        fm_window_show_message(win, GTK_MESSAGE_INFO, rest->str);
}

void fm_window_show_note(FmWindow *win, const char *note)
{
    take_note(win, note, TRUE);
}

void fm_window_show_fallback(FmWindow *win, const char *note)
{
    take_note(win, note, FALSE);
}

/* The maps on display (a copy: the job's own go with the job), the status and the note. */
static void show_result(FmWindow *win, fm_job *job, const fm_result *res)
{
    g_autofree char *what = fm_job_describe(job);
    fm_window_set_result(win, fm_window_copy_result(res), FALSE);
    fm_window_pages_show_result(win, res);
    fm_window_show_done(win, res, what);
    fm_window_show_note(win, res->note);
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
    fm_job *job =
        fm_job_start(method, win->dataset, params, rois != NULL && rois->len ? rois : NULL, backend,
                     win->catalogue, job_progress, job_done, g_object_ref(win));
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
    fm_window_hide_message(win); /* the last run's note: this run brings its own */
    FmFamilyPage *page = fm_window_active_page(win);
    if (win->dataset == NULL && (page == NULL || fm_family_page_needs_dataset(page))) {
        fm_window_show_message(win, GTK_MESSAGE_INFO, _("Open a dataset before running a method."));
        return;
    }
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
