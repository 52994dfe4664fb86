/* GUI test of the catalogue and the compare windows, by what is on screen: the catalogue rows'
 * date and run number fully shown at a pane width of 220 px and no time-stamped file name as a
 * dataset; runs from Compare Methods (and from another connection) listed within 2 s without a
 * refresh; one activation per Enter; Compare Methods with method titles, the parameters each run
 * used, the model that differs from the main map in words, and the lifetime colours of core's
 * scale on its drawn maps; Compare two runs with the differing parameter in words and the
 * difference map's statistics against an independent computation. Screenshots of each window
 * (screenshot-compare-*-<screen>.png). */
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "app/core/catalogue.h"
#include "app/core/colormap.h"
#include "app/core/flim/flim_sim.h"
#include "app/core/io/tiff.h"
#include "app/gui/catalogue-view.h"
#include "app/gui/compare-view.h"
#include "app/gui/flim/compare-methods.h"
#include "app/gui/live-params.h"
#include "app/gui/flim/flim-page.h"
#include "app/gui/flim/flim-views.h"
#include "app/gui/screen-area.h"
#include "app/gui/window.h"
#include "gui-test-util.h"

static char *data_dir, *tif_path;
static FmApplication *app;
static FmWindow *win;
static gint64 main_run_id, compare_lsm_id;

static void save(GtkWidget *widget, const char *what)
{
    GdkRectangle area;
    fm_screen_work_area(NULL, &area);
    fm_gui_test_screenshot(widget, data_dir, "compare.png", "-compare-%s-%dx%d", what, area.width,
                           area.height);
}

static FmCatalogueView *window_catalogue_view(void)
{
    GtkWidget *found = fm_gui_test_find_type(GTK_WIDGET(win), FM_TYPE_CATALOGUE_VIEW);
    g_assert_nonnull(found);
    return FM_CATALOGUE_VIEW(found);
}

static GtkLabel *row_label(GtkWidget *row, const char *name)
{
    GtkWidget *found = fm_widget_find_named(row, name);
    g_assert_nonnull(found);
    return GTK_LABEL(found);
}

/* The label shows its whole text: allocated at least as wide as it asks to be. */
static void assert_fully_shown(GtkLabel *label)
{
    int minimum = 0, natural = 0;
    gtk_widget_get_preferred_width(GTK_WIDGET(label), &minimum, &natural);
    GtkAllocation a;
    gtk_widget_get_allocation(GTK_WIDGET(label), &a);
    g_test_message("'%s': allocated %d px, wants %d", gtk_label_get_text(label), a.width, natural);
    g_assert_cmpint(a.width, >=, natural);
    g_assert_true(gtk_widget_get_mapped(GTK_WIDGET(label)));
}

typedef struct {
    FmCatalogueView *view;
    gint64 id;
} RowWait;

static gboolean row_listed(gpointer data)
{
    RowWait *w = data;
    return fm_catalogue_view_find_row(w->view, w->id) != NULL;
}

static gboolean dataset_loaded(gpointer unused G_GNUC_UNUSED)
{
    FmFlimViews *views = FM_FLIM_VIEWS(fm_window_get_flim_views(win));
    return !fm_window_is_loading(win) && fm_window_get_dataset(win) != NULL &&
           fm_flim_views_photons_ready(views);
}

static gboolean compare_finished(gpointer cm)
{
    return fm_compare_methods_running(FM_COMPARE_METHODS(cm)) == 0;
}

static gint64 newest_run_id(const char *method_id)
{
    g_autoptr(GPtrArray) runs = fm_gui_test_list_runs(data_dir, 0);
    for (guint i = 0; i < runs->len; i++) {
        const fm_catalogue_run *r = runs->pdata[i];
        if (g_strcmp0(r->method_id, method_id) == 0 && r->status == FM_RUN_DONE)
            return r->id;
    }
    return 0;
}

/* A pointer motion over the map view: the view reports the image pixel and value under it. */
typedef struct {
    int x, y;
    double value;
} Cursor;

static void cursor_moved(FmMapView *view, int x, int y, double value, Cursor *c)
{
    c->x = x;
    c->y = y;
    c->value = value;
}

static Cursor pointer_at(GtkWidget *view, double wx, double wy)
{
    Cursor c = {-1, -1, NAN};
    gulong id = g_signal_connect(view, "cursor-moved", G_CALLBACK(cursor_moved), &c);
    GdkEvent *e = gdk_event_new(GDK_MOTION_NOTIFY);
    e->motion.window = g_object_ref(gtk_widget_get_window(view));
    e->motion.x = wx;
    e->motion.y = wy;
    e->motion.send_event = TRUE;
    gdk_event_set_device(
        e, gdk_seat_get_pointer(gdk_display_get_default_seat(gdk_display_get_default())));
    gtk_widget_event(view, e);
    gdk_event_free(e);
    g_signal_handler_disconnect(view, id);
    return c;
}

static void pixel_rgb(cairo_surface_t *s, int x, int y, int rgb[3])
{
    const guint8 *row = cairo_image_surface_get_data(s) + y * cairo_image_surface_get_stride(s);
    guint32 p = ((const guint32 *)row)[x];
    rgb[0] = (p >> 16) & 0xff;
    rgb[1] = (p >> 8) & 0xff;
    rgb[2] = p & 0xff;
}

/* The colours drawn on a lifetime map view are core's lifetime scale at the value under each
 * sampled point (within the 256-level lookup's rounding). Returns the points checked. */
static int check_lifetime_colours(GtkWidget *view)
{
    int w = gtk_widget_get_allocated_width(view), h = gtk_widget_get_allocated_height(view);
    cairo_surface_t *s = fm_gui_test_render(view);
    double lo, hi;
    fm_map_view_get_range(FM_MAP_VIEW(view), &lo, &hi);
    g_assert_cmpfloat(hi, >, lo);
    int checked = 0, short_red = 0, long_blue = 0;
    for (int sy = 3; sy < 12; sy++)
        for (int sx = 3; sx < 20; sx++) {
            int px = sx * w / 23, py = sy * h / 15;
            Cursor c = pointer_at(view, px + 0.5, py + 0.5);
            if (c.x < 0 || !isfinite(c.value))
                continue;
            /* Only where the 3 x 3 screen pixels around agree: not on a data pixel's edge. */
            int centre[3], other[3];
            pixel_rgb(s, px, py, centre);
            gboolean uniform = TRUE;
            for (int dy = -1; dy <= 1 && uniform; dy++)
                for (int dx = -1; dx <= 1 && uniform; dx++) {
                    pixel_rgb(s, px + dx, py + dy, other);
                    uniform = memcmp(centre, other, sizeof centre) == 0;
                }
            if (!uniform)
                continue;
            double t = (c.value - lo) / (hi - lo), want[3];
            fm_colormap_lifetime_rgb(t, 1.0, want);
            for (int k = 0; k < 3; k++)
                g_assert_cmpfloat(fabs(centre[k] - 255 * want[k]), <=, 5.0);
            short_red += t < 0.15 && centre[0] > 200 && centre[2] < 80;
            long_blue += t > 0.85 && centre[2] > 200 && centre[0] < 80;
            checked++;
        }
    cairo_surface_destroy(s);
    g_test_message("lifetime colours: %d points match core's scale (%d short red, %d long blue)",
                   checked, short_red, long_blue);
    return checked;
}

/* Core's lifetime scale is the main view's hue scale, unchanged: hue 0..240 degrees. */
static void test_lifetime_scale(void)
{
    for (int i = 0; i <= 20; i++)
        for (int j = 0; j <= 4; j++) {
            double t = i / 20.0, v = j / 4.0, mine[3], gtk[3];
            fm_colormap_lifetime_rgb(t, v, mine);
            gtk_hsv_to_rgb(t * 240.0 / 360.0, 0.9, v, &gtk[0], &gtk[1], &gtk[2]);
            for (int k = 0; k < 3; k++)
                g_assert_cmpfloat(mine[k], ==, gtk[k]);
        }
    double rgb[3];
    fm_colormap_lifetime_rgb(0.0, 1.0, rgb); /* short: red */
    g_assert_cmpfloat(rgb[0], ==, 1.0);
    g_assert_cmpfloat(rgb[2], <, 0.2);
    fm_colormap_lifetime_rgb(1.0, 1.0, rgb); /* long: blue */
    g_assert_cmpfloat(rgb[2], ==, 1.0);
    g_assert_cmpfloat(rgb[0], <, 0.2);
    g_assert_cmpint(fm_colormap_for_map("tau", "ns", FM_COLORMAP_GRAY), ==, FM_COLORMAP_LIFETIME);
    g_assert_cmpint(fm_colormap_for_map("sfi", "1", FM_COLORMAP_GRAY), ==, FM_COLORMAP_GRAY);
}

/* Compare Methods: titles, the parameters each run used and the model against the main map's,
 * the lifetime colours; its runs appear in the catalogue view by themselves. */
static void test_compare_methods(void)
{
    g_action_group_activate_action(G_ACTION_GROUP(app), "open", g_variant_new_string(tif_path));
    g_assert_true(fm_gui_test_wait_until(dataset_loaded, NULL, 30));
    g_assert_true(fm_window_select_method(win, "flim.lsm"));
    g_assert_true(fm_window_set_param(win, "model", "mono"));
    fm_gui_test_run_job(win, "run", 60);
    main_run_id = newest_run_id("flim.lsm");
    g_assert_cmpint(main_run_id, >, 0);
    /* The form now says bi: Compare Methods runs bi, and must say that the main map was mono. */
    g_assert_true(fm_window_set_param(win, "model", "bi"));
    /* LSM is fast on this small image, so the change would redraw the main map live as bi
     * (issue 23): dropped, the main map stays mono, as after a slow run. */
    fm_live_params_cancel(fm_live_params_of(win, "flim"));

    g_action_group_activate_action(G_ACTION_GROUP(win), "flim-compare", NULL);
    GtkWidget *cm = fm_window_get_compare_window(win);
    g_assert_nonnull(cm);
    fm_gui_test_drain(0.3);
    /* Before Run: the method ticks and a line, in a window no larger than that needs. */
    g_assert_cmpint(fm_compare_methods_n_results(FM_COMPARE_METHODS(cm)), ==, 0);
    GdkRectangle area;
    fm_screen_work_area(GTK_WINDOW(win), &area);
    int ww = 0, wh = 0;
    gtk_window_get_size(GTK_WINDOW(cm), &ww, &wh);
    g_test_message("Compare Methods opens at %d x %d in a work area of %d x %d", ww, wh, area.width,
                   area.height);
    g_assert_cmpint(ww, <=, area.width);
    g_assert_cmpint(wh, <=, 400);
    save(cm, "methods-open");

    /* Method titles on the ticks, not ids. */
    gboolean saw_lsm = FALSE;
    GList *kids = gtk_container_get_children(GTK_CONTAINER(gtk_bin_get_child(GTK_BIN(cm))));
    GtkWidget *flow = kids->data; /* the window's box holds the method ticks first */
    g_list_free(kids);
    GList *boxes = gtk_container_get_children(GTK_CONTAINER(flow));
    for (GList *l = boxes; l != NULL; l = l->next) {
        GtkWidget *check = gtk_bin_get_child(GTK_BIN(l->data));
        const char *text = gtk_button_get_label(GTK_BUTTON(check));
        g_assert_null(strstr(text, "flim."));
        g_assert_cmpstr(text, !=, "lsm");
        g_assert_cmpstr(text, !=, "bcmm1");
        saw_lsm |= g_strcmp0(text, "Least squares (LSM)") == 0;
    }
    g_list_free(boxes);
    g_assert_true(saw_lsm);

    const char *const ids[] = {"flim.iem", "flim.lsm", NULL};
    g_assert_true(fm_compare_methods_run(FM_COMPARE_METHODS(cm), ids));
    g_assert_true(fm_gui_test_wait_until(compare_finished, cm, 120));
    fm_gui_test_drain(0.3);
    /* With its maps, the window grew to show them, still within the work area. */
    gtk_window_get_size(GTK_WINDOW(cm), &ww, &wh);
    g_test_message("Compare Methods with two maps: %d x %d", ww, wh);
    g_assert_cmpint(ww, <=, area.width);
    g_assert_cmpint(wh, <=, area.height);
    g_assert_cmpint(wh, >, 400);
    const char *iem = fm_compare_methods_get_card_text(FM_COMPARE_METHODS(cm), 0);
    const char *lsm = fm_compare_methods_get_card_text(FM_COMPARE_METHODS(cm), 1);
    g_test_message("card 0: %s\ncard 1: %s", iem, lsm);
    g_assert_true(g_str_has_prefix(iem, "Integral equation method (IEM)"));
    g_assert_true(g_str_has_prefix(lsm, "Least squares (LSM)"));
    g_assert_nonnull(strstr(lsm, "Parameters: Model: bi"));
    g_assert_nonnull(strstr(lsm, "Unlike the main map: Model: mono → bi"));
    g_assert_null(strstr(iem, "Unlike the main map")); /* IEM has no model */

    /* The runs appear in the window's catalogue view by themselves, within 2 s. */
    compare_lsm_id = newest_run_id("flim.lsm");
    g_assert_cmpint(compare_lsm_id, >, main_run_id);
    RowWait wait = {window_catalogue_view(), compare_lsm_id};
    gint64 t0 = g_get_monotonic_time();
    g_assert_true(fm_gui_test_wait_until(row_listed, &wait, 2.0));
    g_test_message("Compare Methods' run #%" G_GINT64_FORMAT " listed after %.0f ms",
                   compare_lsm_id, (g_get_monotonic_time() - t0) / 1000.0);

    /* Its maps in the main view's lifetime colours. */
    GtkWidget *view = fm_compare_methods_get_map_view(FM_COMPARE_METHODS(cm), 0);
    g_assert_nonnull(view);
    g_assert_cmpint(fm_map_view_get_colormap(FM_MAP_VIEW(view)), ==, FM_COLORMAP_LIFETIME);
    g_assert_cmpint(check_lifetime_colours(view), >=, 20);
    save(cm, "methods-done");
    gtk_widget_destroy(cm);
}

/* Compare two runs: the header names the differing parameter in words; B − A and its
 * statistics equal an independent computation from the two catalogued maps. */
static void test_compare_runs(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(data_dir, &error);
    g_assert_no_error(error);
    GtkWidget *cv = fm_compare_view_new(GTK_WINDOW(win), cat, main_run_id, compare_lsm_id, "tau",
                                        FM_COLORMAP_VIRIDIS, &error);
    g_assert_no_error(error);
    g_assert_nonnull(cv);
    fm_gui_test_drain(0.3);
    const char *header = fm_compare_view_get_header_text(cv);
    g_test_message("header:\n%s", header);
    g_assert_nonnull(strstr(header, "Least squares (LSM)"));
    g_assert_nonnull(strstr(header, "bars.tif"));
    g_assert_nonnull(strstr(header, "Differs: Model: mono → bi"));
    g_assert_null(strstr(header, "{\"")); /* no raw JSON */

    fm_map *a = fm_catalogue_load_map(cat, main_run_id, "tau", &error);
    fm_map *b = fm_catalogue_load_map(cat, compare_lsm_id, "tau", &error);
    g_assert_no_error(error);
    double sum = 0, sum_sq = 0;
    gsize n = 0;
    for (gsize i = 0; i < (gsize)a->width * a->height; i++)
        if (isfinite(a->data[i]) && isfinite(b->data[i])) {
            double d = (double)b->data[i] - a->data[i];
            sum += d;
            sum_sq += d * d;
            n++;
        }
    double mean = sum / n, rms = sqrt(sum_sq / n), dev = 0;
    for (gsize i = 0; i < (gsize)a->width * a->height; i++)
        if (isfinite(a->data[i]) && isfinite(b->data[i]))
            dev += pow((double)b->data[i] - a->data[i] - mean, 2);
    double sd = sqrt(dev / (n - 1));
    fm_difference_stats st;
    g_assert_true(fm_compare_view_get_difference(cv, &st));
    g_test_message("B - A: n %" G_GSIZE_FORMAT " mean %.6g sd %.6g rms %.6g", n, mean, sd, rms);
    g_assert_cmpuint(st.n, ==, n);
    g_assert_cmpfloat(fabs(st.mean - mean), <, 1e-6);
    g_assert_cmpfloat(fabs(st.sd - sd), <, 1e-6);
    g_assert_cmpfloat(fabs(st.rms - rms), <, 1e-6);
    /* ...and the numbers on screen are those. */
    g_autofree char *shown_mean = g_strdup_printf("mean %.4g ns", mean);
    g_autofree char *shown_n = g_strdup_printf("%" G_GSIZE_FORMAT " pixels", n);
    const char *stats_text = fm_compare_view_get_stats_text(cv);
    g_assert_nonnull(strstr(stats_text, shown_mean));
    g_assert_nonnull(strstr(stats_text, shown_n));
    g_assert_nonnull(strstr(stats_text, "RMS"));
    /* The difference map: diverging, centred on 0; A and B on one lifetime scale. */
    FmMapView *diff = fm_compare_view_get_map_view(cv, 2);
    g_assert_nonnull(diff);
    g_assert_cmpint(fm_map_view_get_colormap(diff), ==, FM_COLORMAP_DIVERGING);
    double lo, hi, lo_a, hi_a, lo_b, hi_b;
    fm_map_view_get_range(diff, &lo, &hi);
    g_assert_cmpfloat(hi, >, 0);
    g_assert_cmpfloat(lo, ==, -hi);
    fm_map_view_get_range(fm_compare_view_get_map_view(cv, 0), &lo_a, &hi_a);
    fm_map_view_get_range(fm_compare_view_get_map_view(cv, 1), &lo_b, &hi_b);
    g_assert_cmpfloat(lo_a, ==, lo_b);
    g_assert_cmpfloat(hi_a, ==, hi_b);
    g_assert_cmpint(fm_map_view_get_colormap(fm_compare_view_get_map_view(cv, 0)), ==,
                    FM_COLORMAP_LIFETIME);
    /* All three maps drawn inside the window, none squeezed. */
    for (int i = 0; i < 3; i++) {
        GtkWidget *v = GTK_WIDGET(fm_compare_view_get_map_view(cv, i));
        int x = 0, y = 0;
        g_assert_true(gtk_widget_translate_coordinates(v, cv, 0, 0, &x, &y));
        g_assert_cmpint(x + gtk_widget_get_allocated_width(v), <=,
                        gtk_widget_get_allocated_width(cv));
        g_assert_cmpint(y + gtk_widget_get_allocated_height(v), <=,
                        gtk_widget_get_allocated_height(cv));
        g_assert_cmpint(gtk_widget_get_allocated_width(v), >=, 200);
    }
    save(cv, "runs");
    fm_map_free(a);
    fm_map_free(b);
    gtk_widget_destroy(cv);
}

/* Catalogue rows in a pane 220 px wide: title and run number on one line, the dataset
 * ellipsized at its end, the date never cut; a run written by another connection (an edited
 * simulation model saved in the catalogue folder) appears by itself, named in words. */
static void test_catalogue_rows(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(data_dir, &error);
    g_assert_no_error(error);
    const gsize sizes[2] = {8, 4};
    g_autoptr(fm_dataset) model = fm_dataset_new(FM_PIXEL_F32, 2, sizes, NULL);
    model->source_path =
        g_build_filename(fm_catalogue_dir(cat), "mcml-inputs", "input-1732751234567.mci", NULL);
    gint64 id = fm_catalogue_begin_run(cat, model, "mcml.run", "{}", NULL, &error);
    g_assert_no_error(error);
    g_autoptr(fm_result) res = fm_result_new("mcml.run");
    res->params_json = g_strdup("{}");
    fm_result_add_map(res, fm_map_new("fluence", "1/cm2", 8, 4, 1));
    g_assert_true(fm_catalogue_finish_run(cat, id, res, &error));

    GtkWidget *pane = gtk_window_new(GTK_WINDOW_TOPLEVEL);
    FmCatalogueView *view = FM_CATALOGUE_VIEW(fm_catalogue_view_new());
    g_autoptr(fm_catalogue) own = fm_catalogue_open(data_dir, &error);
    fm_catalogue_view_set_catalogue(view, own);
    g_assert_true(fm_catalogue_view_refresh(view, &error));
    gtk_container_add(GTK_CONTAINER(pane), GTK_WIDGET(view));
    gtk_window_set_default_size(GTK_WINDOW(pane), 220, 420);
    gtk_widget_show_all(pane);
    fm_gui_test_drain(0.3);
    g_assert_cmpint(gtk_widget_get_allocated_width(GTK_WIDGET(view)), <=, 220);

    /* The window's own view lists the new run by itself (written by another connection). */
    RowWait wait = {window_catalogue_view(), id};
    g_assert_true(fm_gui_test_wait_until(row_listed, &wait, 2.0));

    const gint64 ids[] = {id, compare_lsm_id, main_run_id};
    for (int i = 0; i < 3; i++) {
        GtkWidget *row = fm_catalogue_view_find_row(view, ids[i]);
        g_assert_nonnull(row);
        GtkLabel *date = row_label(row, "fm-catalogue-date");
        GtkLabel *number = row_label(row, "fm-catalogue-number");
        GtkLabel *dataset = row_label(row, "fm-catalogue-dataset");
        GtkLabel *title = row_label(row, "fm-catalogue-title");
        assert_fully_shown(date);
        assert_fully_shown(number);
        g_assert_cmpint(gtk_label_get_ellipsize(dataset), ==, PANGO_ELLIPSIZE_END);
        g_assert_nonnull(strchr(gtk_label_get_text(date), ':')); /* "28 Nov 00:48" */
        g_autofree char *want_number = g_strdup_printf("#%" G_GINT64_FORMAT, ids[i]);
        g_assert_cmpstr(gtk_label_get_text(number), ==, want_number);
        /* Title and number on one line, dataset and date on the next. */
        GtkAllocation ta, na, da;
        gtk_widget_get_allocation(GTK_WIDGET(title), &ta);
        gtk_widget_get_allocation(GTK_WIDGET(number), &na);
        gtk_widget_get_allocation(GTK_WIDGET(dataset), &da);
        g_assert_cmpint(ta.y, ==, na.y);
        g_assert_cmpint(da.y, >=, ta.y + ta.height);
        g_assert_cmpint(na.x + na.width, <=, gtk_widget_get_allocated_width(row));
        const char *ds = gtk_label_get_text(dataset);
        g_test_message("row #%" G_GINT64_FORMAT ": %s %s / %s %s", ids[i],
                       gtk_label_get_text(title), gtk_label_get_text(number), ds,
                       gtk_label_get_text(date));
        if (i == 0) {
            g_assert_cmpstr(gtk_label_get_text(title), ==, "MCML light transport");
            g_assert_null(strstr(ds, "input-"));
            g_assert_cmpstr(ds, ==, "model edited in Fluxmap");
        } else {
            g_assert_cmpstr(gtk_label_get_text(title), ==, "Least squares (LSM)");
            g_assert_cmpstr(ds, ==, "bars.tif");
            g_assert_nonnull(strstr(gtk_widget_get_tooltip_text(row), tif_path));
        }
    }
    /* The tooltip says the parameters in words. */
    g_autofree char *tip =
        gtk_widget_get_tooltip_text(fm_catalogue_view_find_row(view, compare_lsm_id));
    g_assert_nonnull(strstr(tip, "Model: bi"));
    save(pane, "catalogue-220");

    /* Enter on a row: exactly one activation. */
    int activations = 0;
    g_signal_connect_swapped(view, "run-activated", G_CALLBACK(g_atomic_int_inc), &activations);
    GtkWidget *row = fm_catalogue_view_find_row(view, main_run_id);
    gtk_widget_grab_focus(row);
    /* Delivered to the window as a key press is: to the focus row, then up to the list. */
    GdkKeymapKey *keys = NULL;
    int n_keys = 0;
    g_assert_true(gdk_keymap_get_entries_for_keyval(
        gdk_keymap_get_for_display(gdk_display_get_default()), GDK_KEY_Return, &keys, &n_keys));
    GdkEvent *key = gdk_event_new(GDK_KEY_PRESS);
    key->key.window = g_object_ref(gtk_widget_get_window(pane));
    key->key.keyval = GDK_KEY_Return;
    key->key.hardware_keycode = (guint16)keys[0].keycode;
    key->key.group = (guint8)keys[0].group;
    key->key.send_event = TRUE;
    gdk_event_set_device(
        key, gdk_seat_get_keyboard(gdk_display_get_default_seat(gdk_display_get_default())));
    gtk_widget_event(pane, key);
    gdk_event_free(key);
    g_free(keys);
    fm_gui_test_drain(0.2);
    g_assert_cmpint(activations, ==, 1);

    /* A double click on a row, as the X server delivers it: exactly one more activation. */
    GtkWidget *list = gtk_widget_get_parent(row);
    int rx = 0, ry = 0;
    g_assert_true(gtk_widget_translate_coordinates(row, list, 20, 8, &rx, &ry));
    guint32 time = (guint32)(g_get_monotonic_time() / 1000);
    const GdkEventType kinds[] = {GDK_BUTTON_PRESS, GDK_BUTTON_RELEASE, GDK_BUTTON_PRESS,
                                  GDK_2BUTTON_PRESS, GDK_BUTTON_RELEASE};
    for (guint k = 0; k < G_N_ELEMENTS(kinds); k++) {
        GdkEvent *click = gdk_event_new(kinds[k]);
        click->button.window = g_object_ref(gtk_widget_get_window(list));
        click->button.x = rx;
        click->button.y = ry;
        click->button.button = 1;
        click->button.time = time + 40 * (k / 2);
        gdk_event_set_device(
            click, gdk_seat_get_pointer(gdk_display_get_default_seat(gdk_display_get_default())));
        gtk_main_do_event(click);
        gdk_event_free(click);
    }
    fm_gui_test_drain(0.2);
    g_assert_cmpint(activations, ==, 2);
    gtk_widget_destroy(pane);
    fm_gui_test_drain(0.2);
}

int main(int argc, char **argv)
{
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-compare-XXXXXX");
    if (data_dir == NULL)
        return 0;
    /* A small bars dataset (64 x 32 px, 256 bins x 100 ps, fixed seed) saved as a TIFF. */
    fm_flim_sim_params sim;
    tif_path = fm_gui_test_write_flim_bars(data_dir, 64, 32, 2311, &sim, NULL);

    app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);
    fm_gui_test_drain(0.25);

    g_test_add_func("/gui-compare/lifetime-scale", test_lifetime_scale);
    g_test_add_func("/gui-compare/compare-methods", test_compare_methods);
    g_test_add_func("/gui-compare/compare-runs", test_compare_runs);
    g_test_add_func("/gui-compare/catalogue-rows", test_catalogue_rows);
    int status = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    g_free(tif_path);
    return status;
}
