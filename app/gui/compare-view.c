/* Compare view: A and B share one display range (percentiles over the two together), so equal
 * colours mean equal values; B − A is drawn with a diverging colormap centred on 0. The header
 * says in words which runs these are and which of their parameters differ. */
#include "compare-view.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/method.h"
#include "app/core/params_text.h"
#include "screen-area.h"

#define COLORBAR_W 90 /* about what FmMapView's colorbar takes beside the map */

typedef struct {
    char *header_text, *stats_text;
    gboolean has_difference;
    fm_difference_stats stats;
    FmMapView *views[3];
} CompareData;

static void compare_data_free(CompareData *d)
{
    g_free(d->header_text);
    g_free(d->stats_text);
    g_free(d);
}

static CompareData *data_of(GtkWidget *compare)
{
    return g_object_get_data(G_OBJECT(compare), "fm-compare-data");
}

static const char *method_title(const fm_catalogue_run *run)
{
    const fm_method *m = run != NULL ? fm_method_find(run->method_id) : NULL;
    return m != NULL ? _(m->title) : run != NULL && run->method_id != NULL ? run->method_id : "?";
}

static char *dataset_name(const fm_catalogue_run *run)
{
    return run != NULL && run->dataset_path != NULL ? g_path_get_basename(run->dataset_path)
                                                    : g_strdup(_("no input file"));
}

/* "A  #2 Least squares (LSM) on flim-demo.sdt, 28 Nov 00:20" */
static char *run_line(const char *letter, const fm_catalogue_run *run, gint64 id)
{
    g_autofree char *ds = dataset_name(run);
    g_autoptr(GDateTime) when =
        run != NULL ? g_date_time_new_from_unix_local(run->started_unix) : NULL;
    g_autofree char *date = when != NULL ? g_date_time_format(when, "%-d %b %Y %H:%M") : NULL;
    return g_strdup_printf(_("%s   #%" G_GINT64_FORMAT " %s on %s, %s"), letter, id,
                           method_title(run), ds, date != NULL ? date : "?");
}

static char *join(GPtrArray *items, const char *sep)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; items != NULL && i < items->len; i++)
        g_string_append_printf(s, "%s%s", i > 0 ? sep : "", (const char *)items->pdata[i]);
    return g_string_free(s, FALSE);
}

/* The header: both runs, then what differs (method, dataset, parameters), then what is equal. */
static GtkWidget *header(const fm_catalogue_run *ra, gint64 a, const fm_catalogue_run *rb, gint64 b,
                         CompareData *data)
{
    g_autofree char *line_a = run_line("A", ra, a), *line_b = run_line("B", rb, b);
    g_autoptr(GPtrArray) differ = NULL, same = NULL;
    g_autoptr(GError) error = NULL;
    if (ra == NULL || rb == NULL ||
        !fm_params_compare_runs(ra->method_id, ra->params_json, rb->method_id, rb->params_json,
                                &differ, &same, &error)) {
        differ = g_ptr_array_new_with_free_func(g_free);
        same = g_ptr_array_new_with_free_func(g_free);
        g_ptr_array_add(differ, g_strdup_printf(_("parameters not readable (%s)"),
                                                error != NULL ? error->message : "?"));
    }
    if (ra != NULL && rb != NULL && g_strcmp0(ra->method_id, rb->method_id) != 0)
        g_ptr_array_insert(
            differ, 0, g_strdup_printf(_("Method: %s → %s"), method_title(ra), method_title(rb)));
    if (ra != NULL && rb != NULL && g_strcmp0(ra->dataset_path, rb->dataset_path) != 0) {
        g_autofree char *da = dataset_name(ra), *db = dataset_name(rb);
        g_ptr_array_insert(differ, 0, g_strdup_printf(_("Dataset: %s → %s"), da, db));
    }
    g_autofree char *differ_text = join(differ, " · "), *same_text = join(same, " · ");
    g_autofree char *differs =
        differ->len > 0 ? g_strdup_printf(_("Differs: %s"), differ_text)
                        : g_strdup(_("Same method, dataset and parameters: the runs should agree "
                                     "to rounding."));
    g_autofree char *equal = same->len > 0
                                 ? g_strdup_printf(g_dngettext(NULL, "Same %u parameter: %s",
                                                               "Same %u parameters: %s", same->len),
                                                   same->len, same_text)
                                 : g_strdup("");
    data->header_text = g_strdup_printf("%s\n%s\n%s\n%s", line_a, line_b, differs, equal);

    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
    const char *lines[] = {line_a, line_b, differs, equal};
    for (int i = 0; i < 4; i++) {
        if (*lines[i] == '\0')
            continue;
        GtkWidget *label = gtk_label_new(NULL);
        if (i == 2 && differ->len > 0) {
            g_autofree char *markup = g_markup_printf_escaped(_("<b>Differs:</b> %s"), differ_text);
            gtk_label_set_markup(GTK_LABEL(label), markup);
        } else {
            gtk_label_set_text(GTK_LABEL(label), lines[i]);
        }
        gtk_label_set_xalign(GTK_LABEL(label), 0.0);
        gtk_label_set_line_wrap(GTK_LABEL(label), TRUE);
        gtk_label_set_line_wrap_mode(GTK_LABEL(label), PANGO_WRAP_WORD_CHAR);
        gtk_label_set_selectable(GTK_LABEL(label), TRUE);
        gtk_widget_set_can_focus(label, FALSE);
        /* A long line wraps inside the window instead of widening it. */
        gtk_label_set_max_width_chars(GTK_LABEL(label), 60);
        if (i == 3)
            gtk_style_context_add_class(gtk_widget_get_style_context(label), "dim-label");
        gtk_box_pack_start(GTK_BOX(box), label, FALSE, FALSE, 0);
    }
    return box;
}

static GtkWidget *panel(const char *title_markup, FmMapView **view_out)
{
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    GtkWidget *label = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(label), title_markup);
    gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
    gtk_label_set_xalign(GTK_LABEL(label), 0.0);
    GtkWidget *view = fm_map_view_new();
    gtk_widget_set_hexpand(view, TRUE);
    gtk_widget_set_vexpand(view, TRUE);
    GtkWidget *frame = gtk_frame_new(NULL);
    gtk_container_add(GTK_CONTAINER(frame), view);
    gtk_box_pack_start(GTK_BOX(box), label, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(box), frame, TRUE, TRUE, 0);
    *view_out = FM_MAP_VIEW(view);
    return box;
}

static GtkWidget *run_panel(const char *letter, gint64 id, const fm_catalogue_run *run,
                            const fm_map *map, fm_colormap cmap, FmMapView **view_out)
{
    g_autofree char *title = g_markup_printf_escaped("<b>%s</b>  #%" G_GINT64_FORMAT " %s", letter,
                                                     id, method_title(run));
    GtkWidget *box = panel(title, view_out);
    fm_map_view_set_map(*view_out, map->data, map->width, map->height, map->name, map->unit);
    fm_map_view_set_colormap(*view_out, cmap);
    return box;
}

static char *stats_text(const fm_map *a, const fm_difference_stats *st)
{
    const char *unit = a->unit != NULL && g_strcmp0(a->unit, "1") != 0 ? a->unit : "";
    const char *sp = *unit != '\0' ? " " : "";
    if (st->n == 0)
        return g_strdup(_("B − A: no pixel has a value in both maps."));
    return g_strdup_printf(_("B − A over %" G_GSIZE_FORMAT " pixels:\nmean %.4g%s%s · sd "
                             "%.4g%s%s · RMS %.4g%s%s"),
                           st->n, st->mean, sp, unit, st->sd, sp, unit, st->rms, sp, unit);
}

/* The difference panel: diverging colours on a range symmetric about 0, from the 99th
 * percentile of |B − A| so that one outlier does not wash out the rest. */
static GtkWidget *difference_panel(const fm_map *a, const fm_map *b, CompareData *data)
{
    g_autoptr(GString) title = g_string_new(NULL);
    GtkWidget *stats = gtk_label_new(NULL);
    gtk_label_set_xalign(GTK_LABEL(stats), 0.0);
    gtk_label_set_line_wrap(GTK_LABEL(stats), TRUE);
    gtk_label_set_selectable(GTK_LABEL(stats), TRUE);
    gtk_widget_set_can_focus(stats, FALSE);
    fm_map *d = fm_map_difference(a, b, &data->stats);
    if (d == NULL) {
        data->stats_text = g_strdup_printf(
            _("The maps differ in size (%d × %d and %d × %d px): no difference map."), a->width,
            a->height, b->width, b->height);
        gtk_label_set_text(GTK_LABEL(stats), data->stats_text);
        gtk_label_set_max_width_chars(GTK_LABEL(stats), 30);
        return stats;
    }
    data->has_difference = TRUE;
    g_autofree char *head = g_markup_printf_escaped(_("<b>B − A</b>  %s"), a->name);
    GtkWidget *box = panel(head, &data->views[2]);
    g_autofree char *bar_title = g_strdup_printf(_("Δ%s"), a->name);
    fm_map_view_set_map(data->views[2], d->data, d->width, d->height, bar_title, a->unit);
    fm_map_view_set_colormap(data->views[2], FM_COLORMAP_DIVERGING);
    gsize n = (gsize)d->width * d->height;
    float *magnitude = g_new(float, n);
    for (gsize i = 0; i < n; i++)
        magnitude[i] = fabsf(d->data[i]);
    double lo = 0, hi = 0;
    if (!fm_percentile_range(magnitude, n, 0, 99, &lo, &hi) || !(hi > 0))
        hi = data->stats.max_abs > 0 ? data->stats.max_abs : 1.0;
    g_free(magnitude);
    fm_map_view_set_range(data->views[2], -hi, hi);
    fm_map_free(d);
    data->stats_text = stats_text(a, &data->stats);
    gtk_label_set_text(GTK_LABEL(stats), data->stats_text);
    gtk_box_pack_start(GTK_BOX(box), stats, FALSE, FALSE, 0);
    return box;
}

/* From the content: each map at a readable size for its aspect, the whole within the work area
 * of the parent's monitor. */
static void size_window(GtkWindow *win, GtkWindow *parent, const fm_map *a, int n_panels)
{
    GdkRectangle area;
    fm_screen_work_area(parent, &area);
    double aspect = (double)a->width / MAX(a->height, 1);
    const int chrome_w = 24 + 12 * (n_panels - 1), chrome_h = 230; /* margins, header, stats */
    /* Maps up to 400 x 420 px: large enough to read, small enough for three side by side. */
    double map_h = MIN(420.0, area.height * 0.92 - chrome_h);
    if (map_h * aspect > 400.0)
        map_h = 400.0 / aspect;
    double panel_w = map_h * aspect + COLORBAR_W;
    if (n_panels * panel_w + chrome_w > area.width * 0.96) {
        panel_w = (area.width * 0.96 - chrome_w) / n_panels;
        map_h = MAX(120.0, (panel_w - COLORBAR_W) / aspect);
    }
    int w = (int)MIN(n_panels * panel_w + chrome_w, area.width);
    int h = (int)MIN(map_h + chrome_h, area.height);
    gtk_window_set_default_size(win, w, h);
}

GtkWidget *fm_compare_view_new(GtkWindow *parent, fm_catalogue *cat, gint64 run_a, gint64 run_b,
                               const char *map_name, fm_colormap cmap, GError **error)
{
    fm_map *a = fm_catalogue_load_map(cat, run_a, map_name, error);
    if (a == NULL)
        return NULL;
    fm_map *b = fm_catalogue_load_map(cat, run_b, map_name, error);
    if (b == NULL) {
        fm_map_free(a);
        return NULL;
    }
    g_autoptr(fm_catalogue_run) ra = fm_catalogue_get_run(cat, run_a, NULL);
    g_autoptr(fm_catalogue_run) rb = fm_catalogue_get_run(cat, run_b, NULL);
    cmap = fm_colormap_for_map(a->name, a->unit, cmap);

    GtkWidget *win = gtk_window_new(GTK_WINDOW_TOPLEVEL);
    CompareData *data = g_new0(CompareData, 1);
    g_object_set_data_full(G_OBJECT(win), "fm-compare-data", data,
                           (GDestroyNotify)compare_data_free);
    g_autofree char *wtitle =
        g_strdup_printf(_("Compare %s: run #%" G_GINT64_FORMAT " and run #%" G_GINT64_FORMAT),
                        map_name, run_a, run_b);
    gtk_window_set_title(GTK_WINDOW(win), wtitle);
    gtk_window_set_transient_for(GTK_WINDOW(win), parent);
    gtk_window_set_destroy_with_parent(GTK_WINDOW(win), TRUE);

    GtkWidget *vbox = gtk_box_new(GTK_ORIENTATION_VERTICAL, 10);
    g_object_set(vbox, "margin", 12, NULL);
    gtk_box_pack_start(GTK_BOX(vbox), header(ra, run_a, rb, run_b, data), FALSE, FALSE, 0);
    GtkWidget *maps = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
    gtk_box_set_homogeneous(GTK_BOX(maps), TRUE);
    gtk_box_pack_start(GTK_BOX(maps), run_panel("A", run_a, ra, a, cmap, &data->views[0]), TRUE,
                       TRUE, 0);
    gtk_box_pack_start(GTK_BOX(maps), run_panel("B", run_b, rb, b, cmap, &data->views[1]), TRUE,
                       TRUE, 0);
    gtk_box_pack_start(GTK_BOX(maps), difference_panel(a, b, data), TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(vbox), maps, TRUE, TRUE, 0);

    /* One range for A and B: percentiles of the first frame of each map, pooled. */
    gsize na = (gsize)a->width * a->height, nb = (gsize)b->width * b->height;
    float *pooled = g_new(float, na + nb);
    memcpy(pooled, a->data, na * sizeof(float));
    memcpy(pooled + na, b->data, nb * sizeof(float));
    double vmin, vmax;
    if (fm_percentile_range(pooled, na + nb, 1.0, 99.0, &vmin, &vmax) && vmax > vmin) {
        fm_map_view_set_range(data->views[0], vmin, vmax);
        fm_map_view_set_range(data->views[1], vmin, vmax);
    }
    g_free(pooled);
    size_window(GTK_WINDOW(win), parent, a, data->has_difference ? 3 : 2);
    fm_map_free(a);
    fm_map_free(b);

    gtk_container_add(GTK_CONTAINER(win), vbox);
    gtk_widget_show_all(win);
    return win;
}

const char *fm_compare_view_get_header_text(GtkWidget *compare)
{
    CompareData *d = data_of(compare);
    return d != NULL ? d->header_text : NULL;
}

const char *fm_compare_view_get_stats_text(GtkWidget *compare)
{
    CompareData *d = data_of(compare);
    return d != NULL ? d->stats_text : NULL;
}

gboolean fm_compare_view_get_difference(GtkWidget *compare, fm_difference_stats *stats)
{
    CompareData *d = data_of(compare);
    if (d == NULL || !d->has_difference)
        return FALSE;
    *stats = d->stats;
    return TRUE;
}

FmMapView *fm_compare_view_get_map_view(GtkWidget *compare, int which)
{
    CompareData *d = data_of(compare);
    return d != NULL && which >= 0 && which < 3 ? d->views[which] : NULL;
}
