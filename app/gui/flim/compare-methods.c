/* FmCompareMethods: one job per chosen method on the same dataset and parameters; as each ends
 * its lifetime map joins a row of maps that share one display range, so equal colours mean equal
 * lifetimes, with the run time, the backend and the accuracy against simulated truth. A method
 * that ran on the GPU runs again on its CPU twin (not catalogued), so both times show. */
#include "compare-methods.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/job.h"
#include "flim-panel.h"
#include "app/gui/map-view.h"

typedef struct {
    const fm_method *method;
    fm_params *params;
    fm_job *job;       /* until done */
    fm_result *result; /* own copy, NULL until done or when it failed */
    char *error;
    fm_job *cpu_job;   /* the CPU twin's timing run, after a GPU run */
    double cpu_ms;     /* its time, 0 until done */
    char *cpu_error;
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

static GtkWidget *card(FmCompareMethods *self, int i, const Run *r, double lo, double hi)
{
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    g_autofree char *title = g_markup_printf_escaped("<b>%s</b>  <span alpha='55%%'>%s</span>",
                                                     _(r->method->title), r->method->id);
    GtkWidget *label = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(label), title);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
    gtk_box_pack_start(GTK_BOX(box), label, FALSE, FALSE, 0);
    const fm_map *tau = r->result != NULL ? fm_result_get_map(r->result, "tau") : NULL;
    GtkWidget *frame = gtk_frame_new(NULL);
    if (tau != NULL) {
        GtkWidget *view = fm_map_view_new();
        gtk_widget_set_size_request(view, 220, 200);
        fm_map_view_set_map(FM_MAP_VIEW(view), tau->data, tau->width, tau->height, "τ", "ns");
        fm_map_view_set_colormap(FM_MAP_VIEW(view), FM_COLORMAP_JET);
        if (hi > lo)
            fm_map_view_set_range(FM_MAP_VIEW(view), lo, hi);
        gtk_container_add(GTK_CONTAINER(frame), view);
    } else {
        GtkWidget *msg = gtk_label_new(r->job != NULL     ? _("Running…")
                                       : r->error != NULL ? r->error
                                                          : _("No lifetime map"));
        gtk_label_set_line_wrap(GTK_LABEL(msg), TRUE);
        gtk_widget_set_size_request(msg, 220, 200);
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
    GtkWidget *stats = gtk_label_new(info->str);
    g_string_free(info, TRUE);
    gtk_label_set_xalign(GTK_LABEL(stats), 0);
    gtk_style_context_add_class(gtk_widget_get_style_context(stats), "fm-value");
    gtk_box_pack_start(GTK_BOX(box), stats, FALSE, FALSE, 0);
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
    g_autofree char *summary =
        hi > lo ? g_strdup_printf(_("Shared lifetime range %.2f – %.2f ns%s"), lo, hi,
                                  self->truth != NULL ? _(" · accuracy against the simulator's "
                                                          "truth beside the dataset")
                                                      : "")
                : g_strdup(_("Choose methods and press Run."));
    gtk_label_set_text(GTK_LABEL(self->summary_label), summary);
}

static void job_done(fm_job *job, gpointer user);

static char *job_error_text(fm_job *job)
{
    return g_strdup(fm_job_get_error(job) != NULL ? fm_job_get_error(job)->message
                                                  : _("cancelled"));
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
            r->job = fm_job_start(r->method, self->dataset, params, self->rois, self->backend,
                                  self->catalogue, NULL, job_done, g_object_ref(self));
        }
        g_ptr_array_add(self->runs, r);
    }
    gtk_widget_set_sensitive(self->run_button, fm_compare_methods_running(self) == 0);
    rebuild_cards(self);
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
    if (rois != NULL && rois->len > 0)
        self->rois = g_ptr_array_ref(rois);
    load_truth(self);
    GtkWindow *win = GTK_WINDOW(self);
    gtk_window_set_transient_for(win, parent);
    gtk_window_set_destroy_with_parent(win, TRUE);
    gtk_window_set_default_size(win, 1120, 520);
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
    gtk_flow_box_set_max_children_per_line(GTK_FLOW_BOX(self->checks_box), 9);
    int n = 0;
    const fm_method *const *all = fm_methods_all(&n);
    for (int i = 0; i < n; i++) {
        if (g_strcmp0(all[i]->family, "flim") != 0)
            continue;
        GtkWidget *check = gtk_check_button_new_with_label(all[i]->id + 5);
        g_object_set_data(G_OBJECT(check), "fm-method-id", (gpointer)all[i]->id);
        gtk_widget_set_tooltip_text(check, fm_flim_method_summary(all[i]));
        gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(check),
                                     g_strcmp0(all[i]->id, "flim.iem") == 0 ||
                                         g_strcmp0(all[i]->id, "flim.lsm") == 0 ||
                                         g_strcmp0(all[i]->id, "flim.mle") == 0);
        gtk_container_add(GTK_CONTAINER(self->checks_box), check);
    }
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
    gtk_style_context_add_class(gtk_widget_get_style_context(self->summary_label), "dim-label");
    gtk_box_pack_start(GTK_BOX(vbox), self->summary_label, FALSE, FALSE, 0);
    gtk_container_add(GTK_CONTAINER(win), vbox);
    g_signal_connect(self->run_button, "clicked", G_CALLBACK(run_clicked), self);
    rebuild_cards(self);
    return self;
}
