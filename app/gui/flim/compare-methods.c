/* FmCompareMethods: one job per chosen method on the same dataset and parameters; as each ends
 * its lifetime map joins a row of maps that share one display range and the lifetime colour
 * scale of the main view, so equal colours mean equal lifetimes, with the run time, the backend,
 * the parameters it used (and where they differ from the map in the main window) and the
 * accuracy against simulated truth. A method that ran on the GPU runs again on its CPU twin (not
 * catalogued), so both times show. */
#include "compare-methods.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/job.h"
#include "app/core/params_text.h"
#include "app/gui/map-view.h"
#include "app/gui/screen-area.h"
#include "app/gui/window.h"
#include "flim-page.h"
#include "flim-panel.h"
#include "flim-views.h"

#define COLORBAR_W 90 /* what FmMapView's colorbar takes beside the map */

typedef struct {
    const fm_method *method;
    fm_params *params;
    fm_job *job;       /* until done */
    fm_result *result; /* own copy, NULL until done or when it failed */
    char *error;
    fm_job *cpu_job; /* the CPU twin's timing run, after a GPU run */
    double cpu_ms;   /* its time, 0 until done */
    char *cpu_error;
    char *params_text; /* "Model: bi · Fit start: 0.7 ns" */
    char *unlike_main; /* "Model: mono → bi" where it differs from the main map's run, or NULL */
    GtkWidget *view;   /* its card's map view while on show */
    char *card_text;   /* the card's texts, for tests */
} Run;

struct _FmCompareMethods {
    GtkWindow parent_instance;
    fm_dataset *dataset;
    fm_catalogue *catalogue;
    FmCompareParamsFn params_fn;
    gpointer form_owner;
    fm_backend backend;
    GPtrArray *rois;
    GPtrArray *runs; /* Run* */
    double *truth;   /* per column tau (ns), or NULL */
    int truth_width;
    GtkWidget *checks_box, *cards_box, *summary_label, *run_button;
    GtkWindow *parent;
    char *main_text; /* "Least squares (LSM), Model: mono": the main window's map, or NULL */
    gboolean destroyed;
};

G_DEFINE_TYPE(FmCompareMethods, fm_compare_methods, GTK_TYPE_WINDOW)

static void run_free(Run *r)
{
    if (r->job != NULL)
        fm_job_unref(r->job);
    if (r->cpu_job != NULL)
        fm_job_unref(r->cpu_job);
    g_clear_pointer(&r->params, fm_params_free);
    g_free(r->cpu_error);
    g_clear_pointer(&r->result, fm_result_free);
    g_free(r->error);
    g_free(r->params_text);
    g_free(r->unlike_main);
    g_free(r->card_text);
    g_free(r);
}

static fm_result *copy_result(const fm_result *src)
{
    fm_result *r = fm_result_new(src->method_id);
    r->params_json = g_strdup(src->params_json);
    r->backend = g_strdup(src->backend);
    r->device = g_strdup(src->device);
    r->note = g_strdup(src->note);
    r->elapsed_ms = src->elapsed_ms;
    for (guint i = 0; src->maps != NULL && i < src->maps->len; i++) {
        const fm_map *m = src->maps->pdata[i];
        fm_map *c = fm_map_new(m->name, m->unit, m->width, m->height, m->n_frames);
        memcpy(c->data, m->data, fm_map_n_values(m) * sizeof(float));
        fm_result_add_map(r, c);
    }
    return r;
}

/* The simulator's truth: "columns": {"tau_ns": [...]} in FILE.truth.json. Read as text, since a
 * column array may hold non-finite values that strict JSON parsers refuse. */
static void load_truth(FmCompareMethods *self)
{
    const char *src = self->dataset->source_path;
    if (src == NULL)
        return;
    const char *dot = strrchr(src, '.'), *slash = strrchr(src, '/');
    g_autofree char *stem = dot != NULL && (slash == NULL || dot > slash)
                                ? g_strndup(src, (gsize)(dot - src))
                                : g_strdup(src);
    g_autofree char *path = g_strconcat(stem, ".truth.json", NULL);
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return;
    const char *cols = strstr(text, "\"columns\"");
    const char *tau = cols != NULL ? strstr(cols, "\"tau_ns\"") : NULL;
    const char *open = tau != NULL ? strchr(tau, '[') : NULL;
    if (open == NULL)
        return;
    int w = fm_dataset_width(self->dataset);
    double *values = g_new(double, w);
    const char *p = open + 1;
    int n = 0;
    while (n < w) {
        while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t' || *p == ',')
            p++;
        if (*p == ']' || *p == '\0')
            break;
        char *end = NULL;
        values[n] = g_ascii_strtod(p, &end);
        if (end == p) { /* null or other non-number: skip the token */
            values[n] = NAN;
            while (*p != ',' && *p != ']' && *p != '\0')
                p++;
        } else {
            p = end;
        }
        n++;
    }
    if (n == w) {
        self->truth = values;
        self->truth_width = w;
    } else {
        g_free(values);
    }
}

gboolean fm_compare_methods_has_truth(FmCompareMethods *self)
{
    return self->truth != NULL;
}

gboolean fm_compare_methods_get_accuracy(FmCompareMethods *self, int i, double *bias,
                                         double *precision)
{
    if (self->truth == NULL || i < 0 || i >= (int)self->runs->len)
        return FALSE;
    const Run *r = self->runs->pdata[i];
    const fm_map *tau = r->result != NULL ? fm_result_get_map(r->result, "tau") : NULL;
    if (tau == NULL || tau->width != self->truth_width)
        return FALSE;
    double s1 = 0, s2 = 0;
    gsize n = 0;
    for (int y = 0; y < tau->height; y++)
        for (int x = 0; x < tau->width; x++) {
            double t = tau->data[(gsize)y * tau->width + x], want = self->truth[x];
            if (!isfinite(t) || !isfinite(want) || want <= 0)
                continue;
            double e = (t - want) / want;
            s1 += e;
            s2 += e * e;
            n++;
        }
    if (n < 2)
        return FALSE;
    *bias = s1 / n;
    *precision = sqrt(MAX(s2 / n - *bias * *bias, 0.0) * n / (n - 1));
    return TRUE;
}

/* The main window's lifetime map, as the run that made it: method and parameters. */
static const fm_result *main_result(FmCompareMethods *self)
{
    if (self->parent == NULL || !FM_IS_WINDOW(self->parent))
        return NULL;
    GtkWidget *views = fm_window_get_flim_views(FM_WINDOW(self->parent));
    return views != NULL ? fm_flim_views_get_result(FM_FLIM_VIEWS(views)) : NULL;
}

/* Parameters of r's method that the main map's run also has but set otherwise, in words. */
static char *unlike_main(const fm_result *main, const Run *r)
{
    const fm_method *mm = main != NULL ? fm_method_find(main->method_id) : NULL;
    if (mm == NULL || r->params == NULL)
        return NULL;
    g_autoptr(fm_params) theirs = fm_method_default_params(mm);
    if (main->params_json != NULL && !fm_params_set_from_json(theirs, main->params_json, NULL))
        return NULL;
    GString *text = g_string_new(NULL);
    int n = 0;
    const fm_param_spec *specs = fm_params_specs(r->params, &n);
    for (int i = 0; i < n; i++) {
        if (!fm_params_has(theirs, specs[i].key))
            continue;
        g_autofree char *mine = fm_params_value_text(r->params, specs[i].key);
        g_autofree char *other = fm_params_value_text(theirs, specs[i].key);
        if (g_strcmp0(mine, other) != 0)
            g_string_append_printf(text, "%s%s: %s → %s", text->len > 0 ? " · " : "",
                                   _(specs[i].title), other, mine);
    }
    return text->len > 0 ? g_string_free(text, FALSE) : (g_string_free(text, TRUE), NULL);
}

static const char *const always_shown[] = {"model", NULL};

static GtkWidget *info_label(const char *text, gboolean markup)
{
    GtkWidget *label = gtk_label_new(NULL);
    if (markup)
        gtk_label_set_markup(GTK_LABEL(label), text);
    else
        gtk_label_set_text(GTK_LABEL(label), text);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_label_set_line_wrap(GTK_LABEL(label), TRUE);
    gtk_label_set_line_wrap_mode(GTK_LABEL(label), PANGO_WRAP_WORD_CHAR);
    /* Wraps within its card instead of widening it. */
    gtk_label_set_max_width_chars(GTK_LABEL(label), 30);
    gtk_style_context_add_class(gtk_widget_get_style_context(label), "fm-value");
    return label;
}

static GtkWidget *card(FmCompareMethods *self, int i, Run *r, double lo, double hi)
{
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    g_autofree char *title = g_markup_printf_escaped("<b>%s</b>", _(r->method->title));
    GtkWidget *label = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(label), title);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
    gtk_widget_set_tooltip_text(label, _(r->method->title));
    gtk_box_pack_start(GTK_BOX(box), label, FALSE, FALSE, 0);
    const fm_map *tau = r->result != NULL ? fm_result_get_map(r->result, "tau") : NULL;
    GtkWidget *frame = gtk_frame_new(NULL);
    r->view = NULL;
    if (tau != NULL) {
        GtkWidget *view = fm_map_view_new();
        gtk_widget_set_size_request(view, 160, 120);
        fm_map_view_set_map(FM_MAP_VIEW(view), tau->data, tau->width, tau->height, "τ", "ns");
        /* The main view's scale: short lifetimes red, long ones blue, long at the bar's top. */
        fm_map_view_set_colormap(FM_MAP_VIEW(view), FM_COLORMAP_LIFETIME);
        if (hi > lo)
            fm_map_view_set_range(FM_MAP_VIEW(view), lo, hi);
        gtk_container_add(GTK_CONTAINER(frame), view);
        r->view = view;
    } else {
        GtkWidget *msg =
            gtk_label_new(r->job != NULL                           ? _("Running…")
                          : r->error != NULL                       ? r->error
                          : r->params == NULL && r->result == NULL ? _("Press Run to compare")
                                                                   : _("No lifetime map"));
        gtk_label_set_line_wrap(GTK_LABEL(msg), TRUE);
        gtk_label_set_max_width_chars(GTK_LABEL(msg), 30);
        gtk_style_context_add_class(gtk_widget_get_style_context(msg), "dim-label");
        gtk_widget_set_size_request(msg, 160, 120);
        gtk_container_add(GTK_CONTAINER(frame), msg);
    }
    gtk_box_pack_start(GTK_BOX(box), frame, TRUE, TRUE, 0);
    GString *info = g_string_new(NULL);
    if (r->result != NULL) {
        g_string_append_printf(info, _("%.1f ms · %s"), r->result->elapsed_ms,
                               r->result->backend != NULL ? r->result->backend : "?");
        if (r->result->device != NULL)
            g_string_append_printf(info, " (%s)", r->result->device);
        if (r->cpu_job != NULL)
            g_string_append(info, _(" · CPU twin running…"));
        else if (r->cpu_ms > 0)
            g_string_append_printf(info, _(" · CPU twin %.1f ms"), r->cpu_ms);
        else if (r->cpu_error != NULL)
            g_string_append_printf(info, _(" · CPU twin: %s"), r->cpu_error);
        fm_map_stats st = tau != NULL ? fm_map_statistics(tau) : (fm_map_stats){0};
        if (tau != NULL)
            g_string_append_printf(info, _("\nmean τ %.3f ns · %" G_GSIZE_FORMAT " px"), st.mean,
                                   st.valid_pixels);
        double bias, prec;
        if (fm_compare_methods_get_accuracy(self, i, &bias, &prec))
            g_string_append_printf(info, _("\nbias %+.2f %% · precision %.2f %%"), 100 * bias,
                                   100 * prec);
    }
    if (info->len > 0)
        gtk_box_pack_start(GTK_BOX(box), info_label(info->str, FALSE), FALSE, FALSE, 0);
    /* Which parameters this run used: a model other than the main map's must not pass unseen. */
    g_autofree char *params =
        r->params_text != NULL
            ? g_strdup_printf(_("Parameters: %s"),
                              *r->params_text != '\0' ? r->params_text : _("defaults"))
            : NULL;
    if (params != NULL)
        gtk_box_pack_start(GTK_BOX(box), info_label(params, FALSE), FALSE, FALSE, 0);
    g_autofree char *unlike =
        r->unlike_main != NULL
            ? g_markup_printf_escaped(_("<b>Unlike the main map:</b> %s"), r->unlike_main)
            : NULL;
    if (unlike != NULL) {
        GtkWidget *warn = info_label(unlike, TRUE);
        gtk_style_context_add_class(gtk_widget_get_style_context(warn), "warning");
        gtk_box_pack_start(GTK_BOX(box), warn, FALSE, FALSE, 0);
    }
    g_free(r->card_text);
    r->card_text = g_strdup_printf("%s\n%s\n%s%s%s", _(r->method->title), info->str,
                                   params != NULL ? params : "",
                                   r->unlike_main != NULL ? _("\nUnlike the main map: ") : "",
                                   r->unlike_main != NULL ? r->unlike_main : "");
    g_string_free(info, TRUE);
    return box;
}

/* One range for every map: percentiles of all finite lifetimes pooled. */
static void rebuild_cards(FmCompareMethods *self)
{
    GList *children = gtk_container_get_children(GTK_CONTAINER(self->cards_box));
    for (GList *l = children; l != NULL; l = l->next)
        gtk_widget_destroy(l->data);
    g_list_free(children);
    g_autoptr(GArray) pooled = g_array_new(FALSE, FALSE, sizeof(float));
    for (guint i = 0; i < self->runs->len; i++) {
        const Run *r = self->runs->pdata[i];
        const fm_map *tau = r->result != NULL ? fm_result_get_map(r->result, "tau") : NULL;
        if (tau != NULL)
            g_array_append_vals(pooled, tau->data, (guint)((gsize)tau->width * tau->height));
    }
    double lo = 0, hi = 0;
    if (pooled->len > 0)
        fm_percentile_range((float *)pooled->data, pooled->len, 1, 99, &lo, &hi);
    for (guint i = 0; i < self->runs->len; i++)
        gtk_box_pack_start(GTK_BOX(self->cards_box),
                           card(self, (int)i, self->runs->pdata[i], lo, hi), TRUE, TRUE, 0);
    gtk_widget_show_all(self->cards_box);
    GString *summary = g_string_new(NULL);
    if (hi > lo)
        g_string_append_printf(summary, _("Shared lifetime range %.2f – %.2f ns"), lo, hi);
    else if (self->runs->len == 0)
        g_string_append(summary, _("Tick the methods to compare and press Run: their lifetime "
                                   "maps appear here side by side on one colour scale."));
    if (self->main_text != NULL)
        g_string_append_printf(summary, _("\nMain map (to compare the parameters with): %s"),
                               self->main_text);
    if (self->truth != NULL && hi > lo)
        g_string_insert(summary, strcspn(summary->str, "\n"),
                        _(" · accuracy against the simulator's truth beside the dataset"));
    gtk_label_set_text(GTK_LABEL(self->summary_label), summary->str);
    g_string_free(summary, TRUE);
}

static void job_done(fm_job *job, gpointer user);

static char *job_error_text(fm_job *job)
{
    return g_strdup(fm_job_get_error(job) != NULL ? fm_job_get_error(job)->message
                                                  : _("cancelled"));
}

/* From the content: before a run, the method ticks and a line; then n cards, each with a map of
 * the dataset's aspect at a readable size, the whole inside the work area of the main window's
 * monitor. grow_only keeps a size the user made larger. */
static void size_window(FmCompareMethods *self, gboolean grow_only)
{
    int n = (int)self->runs->len;
    GdkRectangle area;
    fm_screen_work_area(self->parent, &area);
    if (n == 0) {
        gtk_window_set_default_size(GTK_WINDOW(self), MIN(area.width, 1000), -1);
        return;
    }
    double w = fm_dataset_width(self->dataset), h = fm_dataset_height(self->dataset);
    double aspect = h > 0 ? w / h : 1.0;
    /* Header bar, method ticks, card title, four lines of figures, summary and margins. */
    const double chrome_h = 330, chrome_w = 24 + 12 * (n - 1);
    /* Maps up to 400 x 360 px: large enough to read, small enough for three side by side. */
    double map_h = CLAMP(area.height - chrome_h, 120.0, 360.0);
    if (map_h * aspect > 400.0)
        map_h = 400.0 / aspect;
    double card_w = MAX(map_h * aspect + COLORBAR_W, 240.0);
    if (n * card_w + chrome_w > area.width) {
        card_w = MAX((area.width - chrome_w) / n, 160.0);
        map_h = MAX((card_w - COLORBAR_W) / aspect, 100.0);
    }
    int want_w = (int)MIN(MAX(n * card_w + chrome_w, 640.0), area.width);
    int want_h = (int)MIN(map_h + chrome_h, area.height);
    if (!grow_only) {
        gtk_window_set_default_size(GTK_WINDOW(self), want_w, want_h);
        return;
    }
    int cur_w = 0, cur_h = 0;
    gtk_window_get_size(GTK_WINDOW(self), &cur_w, &cur_h);
    if (!gtk_window_is_maximized(GTK_WINDOW(self)) && (cur_w < want_w || cur_h < want_h))
        gtk_window_resize(GTK_WINDOW(self), MAX(cur_w, want_w), MAX(cur_h, want_h));
}

static void job_done(fm_job *job, gpointer user)
{
    FmCompareMethods *self = user;
    for (guint i = 0; i < self->runs->len; i++) {
        Run *r = self->runs->pdata[i];
        const fm_result *res = fm_job_get_result(job);
        const gboolean done = fm_job_get_state(job) == FM_JOB_DONE && res != NULL;
        if (r->cpu_job == job) {
            if (done)
                r->cpu_ms = MAX(res->elapsed_ms, 1e-3);
            else
                r->cpu_error = job_error_text(job);
            fm_job_unref(r->cpu_job);
            r->cpu_job = NULL;
            continue;
        }
        if (r->job != job)
            continue;
        if (done)
            r->result = copy_result(res);
        else
            r->error = job_error_text(job);
        fm_job_unref(r->job);
        r->job = NULL;
        /* The comparison shows CPU and GPU times: after a GPU run, time the CPU twin on
         * the same data and parameters (results equal by design; not written to the catalogue). */
        if (done && !self->destroyed && g_strcmp0(res->backend, "cpu") != 0 && r->params != NULL)
            r->cpu_job = fm_job_start(r->method, self->dataset, r->params, self->rois,
                                      FM_BACKEND_CPU, NULL, NULL, job_done, g_object_ref(self));
    }
    if (!self->destroyed) {
        rebuild_cards(self);
        gtk_widget_set_sensitive(self->run_button, fm_compare_methods_running(self) == 0);
    }
    g_object_unref(self);
}

/* "Least squares (LSM), Model: mono" for the main window's map, or NULL without one. */
static void update_main_text(FmCompareMethods *self)
{
    g_clear_pointer(&self->main_text, g_free);
    const fm_result *main = main_result(self);
    const fm_method *m = main != NULL ? fm_method_find(main->method_id) : NULL;
    if (m == NULL)
        return;
    g_autoptr(fm_params) p = fm_method_default_params(m);
    g_autofree char *params = NULL;
    if (main->params_json == NULL || fm_params_set_from_json(p, main->params_json, NULL))
        params = fm_params_describe(p, always_shown);
    self->main_text = params != NULL && *params != '\0'
                          ? g_strdup_printf("%s, %s", _(m->title), params)
                          : g_strdup(_(m->title));
}

gboolean fm_compare_methods_run(FmCompareMethods *self, const char *const *ids)
{
    for (int i = 0; ids[i] != NULL; i++)
        if (fm_method_find(ids[i]) == NULL)
            return FALSE;
    GList *checks = gtk_container_get_children(GTK_CONTAINER(self->checks_box));
    for (GList *l = checks; l != NULL; l = l->next) {
        GtkWidget *check = gtk_bin_get_child(GTK_BIN(l->data));
        const char *id = g_object_get_data(G_OBJECT(check), "fm-method-id");
        gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(check), g_strv_contains(ids, id));
    }
    g_list_free(checks);
    update_main_text(self);
    const fm_result *main = main_result(self);
    g_ptr_array_set_size(self->runs, 0);
    for (int i = 0; ids[i] != NULL; i++) {
        Run *r = g_new0(Run, 1);
        r->method = fm_method_find(ids[i]);
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_params) params = self->params_fn(self->form_owner, r->method, &error);
        if (params == NULL) {
            r->error = g_strdup(error->message);
        } else {
            r->params = fm_params_copy(params);
            r->params_text = fm_params_describe(params, always_shown);
            r->unlike_main = unlike_main(main, r);
            r->job = fm_job_start(r->method, self->dataset, params, self->rois, self->backend,
                                  self->catalogue, NULL, job_done, g_object_ref(self));
        }
        g_ptr_array_add(self->runs, r);
    }
    gtk_widget_set_sensitive(self->run_button, fm_compare_methods_running(self) == 0);
    rebuild_cards(self);
    size_window(self, TRUE);
    return TRUE;
}

static void run_clicked(GtkButton *button, FmCompareMethods *self)
{
    g_autoptr(GPtrArray) ids = g_ptr_array_new();
    GList *checks = gtk_container_get_children(GTK_CONTAINER(self->checks_box));
    for (GList *l = checks; l != NULL; l = l->next) {
        GtkWidget *check = gtk_bin_get_child(GTK_BIN(l->data));
        if (gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(check)))
            g_ptr_array_add(ids, g_object_get_data(G_OBJECT(check), "fm-method-id"));
    }
    g_list_free(checks);
    g_ptr_array_add(ids, NULL);
    fm_compare_methods_run(self, (const char *const *)ids->pdata);
}

int fm_compare_methods_running(FmCompareMethods *self)
{
    int n = 0;
    for (guint i = 0; i < self->runs->len; i++) {
        const Run *r = self->runs->pdata[i];
        n += (r->job != NULL) + (r->cpu_job != NULL);
    }
    return n;
}

int fm_compare_methods_n_results(FmCompareMethods *self)
{
    return (int)self->runs->len;
}

const fm_result *fm_compare_methods_get_result(FmCompareMethods *self, int i)
{
    return i >= 0 && i < (int)self->runs->len ? ((Run *)self->runs->pdata[i])->result : NULL;
}

GtkWidget *fm_compare_methods_get_map_view(FmCompareMethods *self, int i)
{
    return i >= 0 && i < (int)self->runs->len ? ((Run *)self->runs->pdata[i])->view : NULL;
}

const char *fm_compare_methods_get_card_text(FmCompareMethods *self, int i)
{
    return i >= 0 && i < (int)self->runs->len ? ((Run *)self->runs->pdata[i])->card_text : NULL;
}

static void fm_compare_methods_destroy(GtkWidget *widget)
{
    FmCompareMethods *self = FM_COMPARE_METHODS(widget);
    self->destroyed = TRUE;
    for (guint i = 0; self->runs != NULL && i < self->runs->len; i++) {
        Run *r = self->runs->pdata[i];
        if (r->job != NULL)
            fm_job_cancel(r->job);
        if (r->cpu_job != NULL)
            fm_job_cancel(r->cpu_job);
        r->view = NULL;
    }
    GTK_WIDGET_CLASS(fm_compare_methods_parent_class)->destroy(widget);
}

static void fm_compare_methods_finalize(GObject *object)
{
    FmCompareMethods *self = FM_COMPARE_METHODS(object);
    g_ptr_array_unref(self->runs);
    if (self->rois != NULL)
        g_ptr_array_unref(self->rois);
    g_clear_pointer(&self->dataset, fm_dataset_unref);
    g_free(self->truth);
    g_free(self->main_text);
    G_OBJECT_CLASS(fm_compare_methods_parent_class)->finalize(object);
}

static void fm_compare_methods_class_init(FmCompareMethodsClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = fm_compare_methods_finalize;
    GTK_WIDGET_CLASS(klass)->destroy = fm_compare_methods_destroy;
}

static void fm_compare_methods_init(FmCompareMethods *self)
{
    self->runs = g_ptr_array_new_with_free_func((GDestroyNotify)run_free);
}

static GtkWidget *method_check(FmCompareMethods *self, const fm_method *method)
{
    GtkWidget *check = gtk_check_button_new_with_label(_(method->title));
    g_object_set_data(G_OBJECT(check), "fm-method-id", (gpointer)method->id);
    g_autofree char *tip = g_strdup_printf("%s\n%s", fm_flim_method_summary(method), method->id);
    gtk_widget_set_tooltip_text(check, tip);
    gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(check),
                                 g_strcmp0(method->id, "flim.iem") == 0 ||
                                     g_strcmp0(method->id, "flim.lsm") == 0 ||
                                     g_strcmp0(method->id, "flim.mle") == 0);
    return check;
}

FmCompareMethods *fm_compare_methods_new(GtkWindow *parent, fm_dataset *dataset,
                                         fm_catalogue *catalogue, FmCompareParamsFn params_fn,
                                         gpointer form_owner, fm_backend backend, GPtrArray *rois)
{
    FmCompareMethods *self = g_object_new(FM_TYPE_COMPARE_METHODS, NULL);
    self->dataset = fm_dataset_ref(dataset);
    self->catalogue = catalogue;
    self->params_fn = params_fn;
    self->form_owner = form_owner;
    self->backend = backend;
    self->parent = parent;
    if (rois != NULL && rois->len > 0)
        self->rois = g_ptr_array_ref(rois);
    load_truth(self);
    GtkWindow *win = GTK_WINDOW(self);
    gtk_window_set_transient_for(win, parent);
    gtk_window_set_destroy_with_parent(win, TRUE);
    GtkWidget *header = gtk_header_bar_new();
    gtk_header_bar_set_show_close_button(GTK_HEADER_BAR(header), TRUE);
    gtk_header_bar_set_title(GTK_HEADER_BAR(header), _("Compare Methods"));
    g_autofree char *base = dataset->source_path != NULL ? g_path_get_basename(dataset->source_path)
                                                         : g_strdup(_("dataset"));
    gtk_header_bar_set_subtitle(GTK_HEADER_BAR(header), base);
    self->run_button = gtk_button_new_with_mnemonic(_("_Run"));
    gtk_style_context_add_class(gtk_widget_get_style_context(self->run_button), "suggested-action");
    gtk_header_bar_pack_end(GTK_HEADER_BAR(header), self->run_button);
    gtk_window_set_titlebar(win, header);

    GtkWidget *vbox = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8);
    g_object_set(vbox, "margin", 12, NULL);
    self->checks_box = gtk_flow_box_new();
    gtk_flow_box_set_selection_mode(GTK_FLOW_BOX(self->checks_box), GTK_SELECTION_NONE);
    /* Two titles a line at least: the window's height then follows the width it opens at. */
    gtk_flow_box_set_min_children_per_line(GTK_FLOW_BOX(self->checks_box), 2);
    gtk_flow_box_set_max_children_per_line(GTK_FLOW_BOX(self->checks_box), 3);
    gtk_flow_box_set_column_spacing(GTK_FLOW_BOX(self->checks_box), 12);
    int n = 0;
    const fm_method *const *all = fm_methods_all(&n);
    for (int i = 0; i < n; i++)
        if (g_strcmp0(all[i]->family, "flim") == 0)
            gtk_container_add(GTK_CONTAINER(self->checks_box), method_check(self, all[i]));
    gtk_box_pack_start(GTK_BOX(vbox), self->checks_box, FALSE, FALSE, 0);
    GtkWidget *scroller = gtk_scrolled_window_new(NULL, NULL);
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroller), GTK_POLICY_AUTOMATIC,
                                   GTK_POLICY_NEVER);
    self->cards_box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
    gtk_box_set_homogeneous(GTK_BOX(self->cards_box), TRUE);
    gtk_container_add(GTK_CONTAINER(scroller), self->cards_box);
    gtk_widget_set_vexpand(scroller, TRUE);
    gtk_box_pack_start(GTK_BOX(vbox), scroller, TRUE, TRUE, 0);
    self->summary_label = gtk_label_new(NULL);
    gtk_label_set_xalign(GTK_LABEL(self->summary_label), 0);
    gtk_label_set_line_wrap(GTK_LABEL(self->summary_label), TRUE);
    gtk_style_context_add_class(gtk_widget_get_style_context(self->summary_label), "dim-label");
    gtk_box_pack_start(GTK_BOX(vbox), self->summary_label, FALSE, FALSE, 0);
    gtk_container_add(GTK_CONTAINER(win), vbox);
    g_signal_connect(self->run_button, "clicked", G_CALLBACK(run_clicked), self);
    update_main_text(self);
    rebuild_cards(self);
    size_window(self, FALSE);
    return self;
}
