/* Shared helpers of the GUI tests (see gui-test-util.h). */
#include "gui-test-util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "app/core/catalogue.h"
#include "app/core/io/nifti.h"
#include "app/core/io/tiff.h"
#include "app/core/job.h"
#include "app/gui/dce/dce-page.h"
#include "app/gui/dce/dce-views.h"

char *fm_gui_test_init(int *argc, char ***argv, const char *tmpl)
{
    if (g_getenv("DISPLAY") == NULL && g_getenv("WAYLAND_DISPLAY") == NULL) {
        printf("1..0 # SKIP no display\n");
        return NULL;
    }
    g_test_init(argc, argv, NULL);
    char *data_dir = g_dir_make_tmp(tmpl, NULL);
    g_assert_nonnull(data_dir);
    g_setenv("FLUXMAP_DATA_DIR", data_dir, TRUE);
    /* Recent files and any other user state go to the temporary directory, not the user's. */
    const char *xdg[] = {"XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"};
    for (gsize i = 0; i < G_N_ELEMENTS(xdg); i++) {
        g_autofree char *dir = g_build_filename(data_dir, xdg[i], NULL);
        g_mkdir_with_parents(dir, 0700);
        g_setenv(xdg[i], dir, TRUE);
    }
    if (!gtk_init_check(argc, argv)) {
        printf("1..0 # SKIP display cannot be opened\n");
        g_free(data_dir);
        return NULL;
    }
    return data_dir;
}

FmApplication *fm_gui_test_new_app(void)
{
    FmApplication *app = fm_application_new();
    g_application_set_flags(G_APPLICATION(app),
                            g_application_get_flags(G_APPLICATION(app)) | G_APPLICATION_NON_UNIQUE);
    g_assert_true(g_application_register(G_APPLICATION(app), NULL, NULL));
    return app;
}

FmWindow *fm_gui_test_activate(FmApplication *app)
{
    g_application_activate(G_APPLICATION(app));
    FmWindow *win = FM_WINDOW(gtk_application_get_active_window(GTK_APPLICATION(app)));
    g_assert_nonnull(win);
    return win;
}

gboolean fm_gui_test_wait_until(gboolean (*cond)(gpointer data), gpointer data, double timeout_s)
{
    gint64 end = g_get_monotonic_time() + (gint64)(timeout_s * G_USEC_PER_SEC);
    while (!cond(data)) {
        if (g_get_monotonic_time() > end)
            return FALSE;
        if (!g_main_context_iteration(NULL, FALSE))
            g_usleep(2000);
    }
    return TRUE;
}

void fm_gui_test_drain(double seconds)
{
    gint64 end = g_get_monotonic_time() + (gint64)(seconds * G_USEC_PER_SEC);
    while (g_get_monotonic_time() < end)
        if (!g_main_context_iteration(NULL, FALSE))
            g_usleep(2000);
}

const char *fm_gui_test_error_message(FmWindow *win)
{
    GtkMessageType type;
    const char *msg = fm_window_get_message(win, &type);
    return type == GTK_MESSAGE_ERROR ? msg : NULL;
}

static gboolean job_finished(gpointer win)
{
    return fm_window_get_last_job_state(win) >= 0 && fm_window_get_running_jobs(win) == 0;
}

void fm_gui_test_run_job(FmWindow *win, const char *action, double timeout_s)
{
    g_action_group_activate_action(G_ACTION_GROUP(win), action, NULL);
    g_assert_true(fm_gui_test_wait_until(job_finished, win, timeout_s));
    if (fm_window_get_message(win, NULL) != NULL)
        g_test_message("info bar: %s", fm_window_get_message(win, NULL));
    g_assert_cmpint(fm_window_get_last_job_state(win), ==, FM_JOB_DONE);
}

GPtrArray *fm_gui_test_list_runs(const char *data_dir, int limit)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(data_dir, &error);
    g_assert_no_error(error);
    GPtrArray *runs = fm_catalogue_list_runs(cat, limit, &error);
    g_assert_no_error(error);
    g_ptr_array_set_free_func(runs, (GDestroyNotify)fm_catalogue_run_free);
    return runs;
}

guint fm_gui_test_catalogue_runs(const char *data_dir)
{
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(data_dir, NULL);
    g_autoptr(GPtrArray) runs = cat ? fm_catalogue_list_runs(cat, 0, NULL) : NULL;
    if (runs != NULL)
        g_ptr_array_set_free_func(runs, (GDestroyNotify)fm_catalogue_run_free);
    return runs ? runs->len : 0;
}

GPtrArray *fm_gui_test_assert_done_runs(const char *data_dir, int limit,
                                        const char *const *method_ids)
{
    GPtrArray *runs = fm_gui_test_list_runs(data_dir, limit);
    g_assert_cmpuint(runs->len, ==, g_strv_length((char **)method_ids));
    for (guint i = 0; i < runs->len; i++) {
        const fm_catalogue_run *run = runs->pdata[i];
        g_assert_cmpstr(run->method_id, ==, method_ids[i]);
        g_assert_cmpint(run->status, ==, FM_RUN_DONE);
    }
    return runs;
}

char *fm_gui_test_screenshot_path(const char *data_dir, const char *fallback, const char *suffix)
{
    const char *base = g_getenv("FLUXMAP_SCREENSHOT");
    g_autofree char *fallback_path = g_build_filename(data_dir, fallback, NULL);
    if (base == NULL)
        base = fallback_path;
    g_autofree char *stem =
        g_strndup(base, strlen(base) - (g_str_has_suffix(base, ".png") ? 4 : 0));
    return g_strconcat(stem, suffix, ".png", NULL);
}

typedef struct {
    GtkWidget *top;
    cairo_t *cr;
} HeaderPaint;

/* GTK 3's gtk_widget_draw() into an offscreen surface leaves GtkTreeView column headers blank
 * (their buttons sit on the view's own header GdkWindow, which that path does not paint), though
 * they show on screen (checked with gdk_pixbuf_get_from_window under Xvfb). So the screenshot
 * paints each visible header button itself, clipped to its tree view. */
static void paint_tree_headers(GtkWidget *w, gpointer data)
{
    HeaderPaint *hp = data;
    if (!gtk_widget_is_drawable(w))
        return;
    if (GTK_IS_TREE_VIEW(w)) {
        int tx, ty;
        if (!gtk_tree_view_get_headers_visible(GTK_TREE_VIEW(w)) ||
            !gtk_widget_translate_coordinates(w, hp->top, 0, 0, &tx, &ty))
            return;
        GList *cols = gtk_tree_view_get_columns(GTK_TREE_VIEW(w));
        for (GList *l = cols; l != NULL; l = l->next) {
            GtkWidget *button = gtk_tree_view_column_get_button(l->data);
            int bx, by;
            if (!gtk_widget_is_drawable(button) ||
                !gtk_widget_translate_coordinates(button, hp->top, 0, 0, &bx, &by))
                continue;
            cairo_save(hp->cr);
            cairo_rectangle(hp->cr, tx, ty, gtk_widget_get_allocated_width(w),
                            gtk_widget_get_allocated_height(w));
            cairo_clip(hp->cr);
            cairo_translate(hp->cr, bx, by);
            gtk_widget_draw(button, hp->cr);
            cairo_restore(hp->cr);
        }
        g_list_free(cols);
        return;
    }
    if (GTK_IS_CONTAINER(w))
        gtk_container_forall(GTK_CONTAINER(w), paint_tree_headers, data);
}

void fm_gui_test_save_png(GtkWidget *widget, const char *path)
{
    /* Drawing a widget whose size allocation is still pending is a GTK critical: let the
     * layout settle first (panels may have just been shown or hidden). */
    for (int i = 0; i < 200 && gtk_widget_get_toplevel(widget) &&
                    (gtk_events_pending() || !gtk_widget_get_realized(widget));
         i++)
        gtk_main_iteration_do(FALSE);
    GtkWidget *top = gtk_widget_get_toplevel(widget);
    if (GTK_IS_CONTAINER(top))
        gtk_container_check_resize(GTK_CONTAINER(top));
    int w = gtk_widget_get_allocated_width(widget), h = gtk_widget_get_allocated_height(widget);
    g_assert_cmpint(w, >, 0);
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
    cairo_t *cr = cairo_create(surface);
    gtk_widget_draw(widget, cr);
    HeaderPaint hp = {widget, cr};
    paint_tree_headers(widget, &hp);
    cairo_destroy(cr);
    g_assert_cmpint(cairo_surface_write_to_png(surface, path), ==, CAIRO_STATUS_SUCCESS);
    cairo_surface_destroy(surface);
    printf("# screenshot: %s\n", path);
}

void fm_gui_test_screenshot(GtkWidget *widget, const char *data_dir, const char *fallback,
                            const char *suffix_format, ...)
{
    g_autofree char *suffix = NULL;
    if (suffix_format != NULL) {
        va_list args;
        va_start(args, suffix_format);
        suffix = g_strdup_vprintf(suffix_format, args);
        va_end(args);
    }
    g_autofree char *path = fm_gui_test_screenshot_path(data_dir, fallback, suffix ? suffix : "");
    fm_gui_test_save_png(widget, path);
}

cairo_surface_t *fm_gui_test_render(GtkWidget *widget)
{
    int w = gtk_widget_get_allocated_width(widget), h = gtk_widget_get_allocated_height(widget);
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
    cairo_t *cr = cairo_create(surface);
    gtk_widget_draw(widget, cr);
    cairo_destroy(cr);
    cairo_surface_flush(surface);
    return surface;
}

static gboolean is_type(GtkWidget *widget, gconstpointer type)
{
    return G_TYPE_CHECK_INSTANCE_TYPE(widget, GPOINTER_TO_SIZE(type));
}

GtkWidget *fm_gui_test_find_type(GtkWidget *root, GType type)
{
    return fm_widget_find(root, is_type, GSIZE_TO_POINTER(type));
}

static gboolean is_card(GtkWidget *widget, gconstpointer family)
{
    return GTK_IS_BUTTON(widget) && g_strcmp0(gtk_widget_get_name(widget), family) == 0;
}

GtkWidget *fm_gui_test_find_card(GtkWidget *root, const char *family)
{
    return fm_widget_find(root, is_card, family);
}

typedef struct {
    FmWidgetMatch match;
    gconstpointer data;
    gboolean internal;
    GPtrArray *out;
} Collect;

static void collect_in(GtkWidget *widget, gpointer user)
{
    Collect *c = user;
    if (!gtk_widget_get_visible(widget))
        return;
    if (c->match(widget, c->data))
        g_ptr_array_add(c->out, widget);
    if (!GTK_IS_CONTAINER(widget))
        return;
    if (c->internal)
        gtk_container_forall(GTK_CONTAINER(widget), collect_in, c);
    else
        gtk_container_foreach(GTK_CONTAINER(widget), collect_in, c);
}

GPtrArray *fm_gui_test_collect(GtkWidget *root, FmWidgetMatch match, gconstpointer data,
                               gboolean internal)
{
    Collect c = {match, data, internal, g_ptr_array_new()};
    collect_in(root, &c);
    return c.out;
}

GPtrArray *fm_gui_test_collect_type(GtkWidget *root, GType type)
{
    return fm_gui_test_collect(root, is_type, GSIZE_TO_POINTER(type), FALSE);
}

GdkRectangle fm_gui_test_rect_in(GtkWidget *widget, GtkWidget *ancestor)
{
    int x = 0, y = 0;
    g_assert_true(gtk_widget_translate_coordinates(widget, ancestor, 0, 0, &x, &y));
    GdkRectangle r = {x, y, gtk_widget_get_allocated_width(widget),
                      gtk_widget_get_allocated_height(widget)};
    return r;
}

void fm_gui_test_resize_outer(GtkWidget *top, int width, int height)
{
    int ask_w = width, ask_h = height;
    for (int i = 0; i < 3; i++) { /* the decorations' size shows only once allocated */
        gtk_window_resize(GTK_WINDOW(top), ask_w, ask_h);
        fm_gui_test_drain(0.5);
        ask_w -= gtk_widget_get_allocated_width(top) - width;
        ask_h -= gtk_widget_get_allocated_height(top) - height;
    }
    int w = gtk_widget_get_allocated_width(top), h = gtk_widget_get_allocated_height(top);
    g_test_message("window %d x %d (asked %d x %d)", w, h, width, height);
    g_assert_cmpint(w, <=, width); /* the page's minimum fits the screen */
    g_assert_cmpint(h, <=, height);
}

void fm_gui_test_shutdown(FmApplication *app, GtkWidget *window, char *data_dir)
{
    if (window != NULL)
        gtk_widget_destroy(window);
    fm_gui_test_drain(0.25); /* lets the destroyed window's idles run before app goes */
    g_object_unref(app);
    g_free(data_dir);
}

typedef struct {
    FmWindow *win;
    const char *basename;
} recent_query;

static gboolean recent_lists(gpointer data)
{
    const recent_query *q = data;
    GMenuModel *menu = fm_window_get_recent_menu(q->win);
    for (int i = 0; i < g_menu_model_get_n_items(menu); i++) {
        g_autofree char *label = NULL;
        if (g_menu_model_get_item_attribute(menu, i, G_MENU_ATTRIBUTE_LABEL, "s", &label) &&
            g_strcmp0(label, q->basename) == 0)
            return TRUE;
    }
    return FALSE;
}

gboolean fm_gui_test_wait_recent(FmWindow *win, const char *basename, double timeout_s)
{
    recent_query q = {win, basename};
    return fm_gui_test_wait_until(recent_lists, &q, timeout_s);
}

char *fm_gui_test_write_speckle(const char *dir, const char *name, int width, int height,
                                int frames, guint32 seed)
{
    gsize sizes[3] = {(gsize)width, (gsize)height, (gsize)frames};
    g_autoptr(fm_dataset) ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    GRand *rand = g_rand_new_with_seed(seed);
    guint16 *px = ds->data;
    for (gsize i = 0; i < fm_dataset_n_elements(ds); i++)
        px[i] = (guint16)(200.0 - 150.0 * log(1.0 - g_rand_double(rand)));
    g_rand_free(rand);
    char *path = g_build_filename(dir, name, NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_tiff_write_dataset(path, ds, "gui test speckle", &error));
    return path;
}

gboolean fm_gui_test_dce_loaded(gpointer window)
{
    FmWindow *win = window;
    return !fm_window_is_loading(win) &&
           (fm_window_get_message(win, NULL) != NULL ||
            (fm_window_get_dataset(win) != NULL &&
             !fm_dce_views_busy(FM_DCE_VIEWS(fm_window_get_dce_views(win)))));
}

char *fm_gui_test_write_flim_bars(const char *dir, int width, int height, guint64 seed,
                                  fm_flim_sim_params *sim, fm_dataset **ds)
{
    fm_flim_sim_defaults(sim);
    sim->width = width;
    sim->height = height;
    sim->seed = seed;
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) bars = fm_flim_simulate(sim, &error);
    g_assert_no_error(error);
    char *path = g_build_filename(dir, "bars.tif", NULL);
    g_assert_true(fm_tiff_write_dataset(path, bars, "bin_width_ps=100", &error));
    if (ds != NULL)
        *ds = g_steal_pointer(&bars);
    return path;
}

char *fm_gui_test_write_dce_phantom(const char *dir, int nx, int ny, int nz, int n_times,
                                    const double affine[16], fm_dce_sim_params *sim)
{
    fm_dce_sim_defaults(sim);
    sim->nx = nx;
    sim->ny = ny;
    sim->nz = nz;
    sim->n_times = n_times;
    sim->lesions = FALSE;
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_dce_simulate(sim, &error);
    g_assert_no_error(error);
    fm_dataset_set_affine(ds, affine);
    char *path = g_build_filename(dir, "liver.nii.gz", NULL);
    g_assert_true(fm_nifti_write_dataset(path, ds, 1, &error));
    return path;
}
