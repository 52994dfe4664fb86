/* Live cameras in the window (issue 25): with FLUXMAP_FAKE_CAMERA=1, Aravis's fake camera is
 * listed in the dataset pane, fed with simulated speckle frames (tests/io/fake_camera_feed.h).
 * At 1920x1080 and 1366x768: picking it opens the Laser speckle page with the live controls;
 * Start redraws the map with pixels that change between frames, the ROI time course grows, the
 * status line says fps > 0 inside the window and whole; Record (before Start at 1920x1080,
 * while running at 1366x768) then Stop leaves a recording with every frame recorded and the run
 * in the catalogue list naming it, and the summary in the note.
 * The camera lost mid-stream: the message on screen, the recording kept and catalogued.
 * While live, the window says so where a file's run would: the map toolbar's min/max boxes show
 * the live colour range (Auto follows the frames, a fixed range holds), the Jobs pane has the
 * run's row (frames, Stop; how it ended after), Run is off with no file open (Start runs the
 * camera), a replay without recording is 'replay of FILE' in the catalogue; the SD-OCT page
 * (the OCT demo replayed) hides its B-scan slider, names the sidecar's calibration, draws the
 * B-scan at its true aspect with its centre A-line plotted and says why no spectrum is shown.
 * Screenshots: screenshot-camera-<what>-<width>.png. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/core/io/open.h"
#include "app/core/lsi/lsi_sim.h"
#include "app/gui/live/live-gui.h"
#include "app/gui/oct/oct-page.h"
#include "app/gui/oct/oct-panel.h"
#include "app/gui/oct/oct-views.h"
#include "app/gui/plot-view.h"
#include "app/gui/window-private.h"
#include "gui-test-util.h"
#include "tests/io/fake_camera_feed.h"

enum { W = 160, H = 120, N_SIM = 8 };

static char *data_dir;
static FmApplication *app;
static FmWindow *win;
static fm_dataset *sim;
static fm_fake_camera_feed *feed; /* the feed of the camera the window opened last */

/* The window opens Fake_1 through the feed, which fills its frames with the simulation. */
static fm_frame_source *open_fed(const char *id, gpointer user, GError **error)
{
    (void)user;
    g_assert_cmpstr(id, ==, "Fake_1");
    g_clear_pointer(&feed, fm_fake_camera_feed_free);
    fm_frame_source *source = NULL;
    feed = fm_fake_camera_feed_open(sim->data, N_SIM, W, H, FM_PIXFMT_MONO12, 25, &source, error);
    return feed != NULL ? source : NULL;
}

static GtkWidget *named(const char *name)
{
    GtkWidget *w = fm_widget_find_named(GTK_WIDGET(win), name);
    g_assert_nonnull(w);
    return w;
}

/* widget is on show, allocated inside the window, and (a label) shows all its text. */
static void assert_on_screen(GtkWidget *widget, const char *what)
{
    g_assert_true(gtk_widget_is_drawable(widget));
    GdkRectangle r = fm_gui_test_rect_in(widget, GTK_WIDGET(win));
    int ww = gtk_widget_get_allocated_width(GTK_WIDGET(win));
    int wh = gtk_widget_get_allocated_height(GTK_WIDGET(win));
    if (r.x < 0 || r.y < 0 || r.x + r.width > ww || r.y + r.height > wh || r.width <= 0)
        g_error("%s at %d,%d %dx%d leaves the window %dx%d", what, r.x, r.y, r.width, r.height, ww,
                wh);
    if (GTK_IS_LABEL(widget)) { /* not cut: as tall as its wrapped text asks, not ellipsized */
        int min_h = 0;
        gtk_widget_get_preferred_height_for_width(widget, r.width, &min_h, NULL);
        g_assert_cmpint(r.height, >=, min_h);
        g_assert_false(pango_layout_is_ellipsized(gtk_label_get_layout(GTK_LABEL(widget))));
    }
    /* inside the part of its scrolled panel on show */
    GtkWidget *scroller = gtk_widget_get_ancestor(widget, GTK_TYPE_SCROLLED_WINDOW);
    if (scroller != NULL) {
        GdkRectangle s = fm_gui_test_rect_in(widget, scroller);
        int sh = gtk_widget_get_allocated_height(scroller);
        if (s.y < 0 || s.y + s.height > sh)
            g_error("%s at y %d..%d is scrolled out of its pane (0..%d)", what, s.y, s.y + s.height,
                    sh);
    }
}

static gboolean listed(gpointer data)
{
    (void)data;
    return fm_live_get_lists_done(win) > 0;
}

static guint64 drawn_target;
static gboolean drawn_enough(gpointer data)
{
    (void)data;
    return fm_live_get_drawn(win) >= drawn_target;
}

static gboolean stopped(gpointer data)
{
    (void)data;
    return !fm_live_is_running(win);
}

static void wait_drawn(guint64 more)
{
    drawn_target = fm_live_get_drawn(win) + more;
    g_assert_true(fm_gui_test_wait_until(drawn_enough, NULL, 30));
    fm_gui_test_drain(0.05); /* the views paint */
}

/* The map view as drawn: a sample of its pixels in the middle half. */
static GArray *sample_map(void)
{
    GtkWidget *view = GTK_WIDGET(win->map_view);
    cairo_surface_t *s = fm_gui_test_render(view);
    int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    int stride = cairo_image_surface_get_stride(s);
    const guint8 *px = cairo_image_surface_get_data(s);
    GArray *out = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (int y = h / 4; y < 3 * h / 4; y += 3)
        for (int x = w / 4; x < 3 * w / 4; x += 3)
            g_array_append_val(out, *(const guint32 *)(px + (gsize)y * stride + 4 * (gsize)x));
    cairo_surface_destroy(s);
    return out;
}

static guint count_colours(GArray *a)
{
    g_autoptr(GHashTable) set = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < a->len; i++)
        g_hash_table_add(set, GUINT_TO_POINTER(g_array_index(a, guint32, i)));
    return g_hash_table_size(set);
}

/* The status line's camera rate ("… camera 24.9 fps …"). */
static double status_camera_fps(const char *text)
{
    const char *p = strstr(text, "camera ");
    g_assert_nonnull(p);
    return g_ascii_strtod(p + strlen("camera "), NULL);
}

/* The ROI time course on screen: laid out with a data area, its x axis over the run, and line
 * pixels drawn inside the data area. */
static void assert_time_course(void)
{
    GtkWidget *plot = GTK_WIDGET(win->plot_view);
    assert_on_screen(plot, "ROI time course");
    const FmPlotLayout *l = fm_plot_view_get_layout(win->plot_view);
    g_assert_cmpfloat(l->data.width, >, 50);
    g_assert_cmpfloat(l->data.height, >, 20);
    g_assert_cmpfloat(l->x.hi, >, l->x.lo);
    cairo_surface_t *s = fm_gui_test_render(plot);
    int stride = cairo_image_surface_get_stride(s);
    const guint8 *px = cairo_image_surface_get_data(s);
    guint32 background = *(const guint32 *)(px + (gsize)(l->data.y + 2) * stride +
                                            4 * (gsize)(l->data.x + l->data.width - 2));
    int inked = 0;
    for (int y = (int)l->data.y + 2; y < (int)(l->data.y + l->data.height) - 2; y++)
        for (int x = (int)l->data.x + 2; x < (int)(l->data.x + l->data.width) - 2; x++)
            inked += *(const guint32 *)(px + (gsize)y * stride + 4 * (gsize)x) != background;
    cairo_surface_destroy(s);
    g_assert_cmpint(inked, >, 20);
}

/* Pixels other than the background drawn inside a plot's data area (a line, or its text). */
static int plot_ink(FmPlotView *view)
{
    const FmPlotLayout *l = fm_plot_view_get_layout(view);
    cairo_surface_t *s = fm_gui_test_render(GTK_WIDGET(view));
    int stride = cairo_image_surface_get_stride(s);
    const guint8 *px = cairo_image_surface_get_data(s);
    guint32 background =
        *(const guint32 *)(px + (gsize)(l->data.y + 1) * stride + 4 * (gsize)(l->data.x + 1));
    int inked = 0;
    for (int y = (int)l->data.y + 2; y < (int)(l->data.y + l->data.height) - 2; y++)
        for (int x = (int)l->data.x + 2; x < (int)(l->data.x + l->data.width) - 2; x++)
            inked += *(const guint32 *)(px + (gsize)y * stride + 4 * (gsize)x) != background;
    cairo_surface_destroy(s);
    return inked;
}

/* A Run button: win.run, or the page's own (win.oct-run). */
static gboolean is_run_button(GtkWidget *w, gconstpointer data)
{
    (void)data;
    const char *name =
        GTK_IS_ACTIONABLE(w) ? gtk_actionable_get_action_name(GTK_ACTIONABLE(w)) : NULL;
    return g_strcmp0(name, "win.run") == 0 ||
           (name != NULL && g_str_has_prefix(name, "win.") && g_str_has_suffix(name, "-run"));
}

static gboolean is_cancel_button(GtkWidget *w, gconstpointer data)
{
    (void)data;
    return GTK_IS_BUTTON(w) &&
           g_strcmp0(gtk_actionable_get_action_name(GTK_ACTIONABLE(w)), "win.cancel-all") == 0;
}

/* Run (the header bar's and the panel's, Ctrl+R) is off while a camera's page has no file to
 * run on, and every Run button on show says so. */
static void assert_run_off(void)
{
    g_assert_false(g_action_group_get_action_enabled(G_ACTION_GROUP(win), "run"));
    GtkWidget *roots[] = {gtk_window_get_titlebar(GTK_WINDOW(win)), GTK_WIDGET(win)};
    guint n = 0;
    for (gsize r = 0; r < G_N_ELEMENTS(roots); r++) {
        g_autoptr(GPtrArray) buttons = fm_gui_test_collect(roots[r], is_run_button, NULL, FALSE);
        for (guint i = 0; i < buttons->len; i++) {
            if (!gtk_widget_is_drawable(buttons->pdata[i]))
                continue; /* another page's */
            g_test_message("Run button on show: %s",
                           gtk_actionable_get_action_name(GTK_ACTIONABLE(buttons->pdata[i])));
            g_assert_false(gtk_widget_is_sensitive(buttons->pdata[i]));
            n++;
        }
    }
    g_assert_cmpuint(n, >=, 2); /* the header bar's and the panel's */
}

/* The Jobs pane's row of the live run, on screen; its state line contains want. */
static void assert_job_row(const char *want, gboolean stop_on_show)
{
    GtkWidget *row = named("fm-live-job");
    assert_on_screen(row, "the live run's Jobs row");
    GtkWidget *state = fm_widget_find_named(row, "fm-live-job-state");
    g_assert_nonnull(state);
    assert_on_screen(state, "the live run's state line");
    const char *text = gtk_label_get_text(GTK_LABEL(state));
    g_test_message("job row: %s", text);
    if (strstr(text, want) == NULL)
        g_error("the Jobs row says '%s', not '%s'", text, want);
    GtkWidget *stop = fm_widget_find_named(row, "fm-live-job-stop");
    g_assert_nonnull(stop);
    g_assert_true(gtk_widget_is_drawable(stop) == stop_on_show);
    if (stop_on_show) {
        assert_on_screen(stop, "the Jobs row's Stop");
        g_assert_true(gtk_widget_is_sensitive(stop));
    }
}

/* The map toolbar's min/max boxes on screen, showing the map view's range. */
static void assert_range_boxes(void)
{
    double lo = 0, hi = 0;
    fm_map_view_get_range(win->map_view, &lo, &hi);
    double min = gtk_spin_button_get_value(GTK_SPIN_BUTTON(win->min_spin));
    double max = gtk_spin_button_get_value(GTK_SPIN_BUTTON(win->max_spin));
    g_test_message("range %g..%g, boxes %g..%g", lo, hi, min, max);
    g_assert_cmpfloat(hi, >, lo);
    g_assert_cmpfloat(fabs(min - lo), <=, 1e-3 * (hi - lo) + 1e-6);
    g_assert_cmpfloat(fabs(max - hi), <=, 1e-3 * (hi - lo) + 1e-6);
    assert_on_screen(win->min_spin, "the min box");
    assert_on_screen(win->max_spin, "the max box");
    /* the text on show is the value, not 0.000 */
    g_assert_cmpfloat(g_ascii_strtod(gtk_entry_get_text(GTK_ENTRY(win->max_spin)), NULL), >, 0);
}

/* The recording holds frames the camera sent, each one of the simulated frames (12 bits), as
 * many as the run says it recorded. */
static void assert_recording(const char *path, guint64 frames)
{
    g_assert_nonnull(path);
    g_assert_true(g_file_test(path, G_FILE_TEST_IS_REGULAR));
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) rec = fm_dataset_open(path, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fm_dataset_width(rec), ==, W);
    g_assert_cmpint(fm_dataset_height(rec), ==, H);
    g_assert_cmpint(fm_dataset_frames(rec), ==, (int)frames);
    g_assert_cmpint(rec->type, ==, FM_PIXEL_U16);
    gsize n = (gsize)W * H;
    for (gsize f = 0; f < frames; f++) {
        const guint16 *got = (const guint16 *)rec->data + f * n;
        gboolean found = FALSE;
        for (int k = 0; k < N_SIM && !found; k++)
            found = memcmp(got, (const guint16 *)sim->data + (gsize)k * n, n * 2) == 0;
        g_assert_true(found);
    }
}

/* "… recording NAME (N frames) …" in the note. */
static guint64 note_recorded(const char *note)
{
    const char *p = strstr(note, "recording ");
    g_assert_nonnull(p);
    p = strchr(p, '(');
    g_assert_nonnull(p);
    return g_ascii_strtoull(p + 1, NULL, 10);
}

/* The run in the catalogue list, on screen, naming the recording as its dataset. */
static void assert_catalogued(gint64 run_id, const char *record_path)
{
    g_assert_cmpint(run_id, >, 0);
    fm_catalogue_view_refresh(win->catalogue_view, NULL);
    fm_gui_test_drain(0.1);
    GtkWidget *row = fm_catalogue_view_find_row(win->catalogue_view, run_id);
    g_assert_nonnull(row);
    GtkWidget *dataset = fm_widget_find_named(row, "fm-catalogue-dataset");
    g_assert_nonnull(dataset);
    g_autofree char *base = g_path_get_basename(record_path);
    g_autofree char *stem = g_strndup(base, strlen(base) - 4); /* the label may cut ".tif" */
    const char *text = gtk_label_get_text(GTK_LABEL(dataset));
    g_autofree char *tip = gtk_widget_get_tooltip_text(dataset);
    if (strstr(text, stem) == NULL && (tip == NULL || strstr(tip, stem) == NULL))
        g_error("the catalogue row names '%s', not the recording %s", text, base);
    assert_on_screen(row, "the live run's catalogue row");
}

/* The live controls' labels whole (not cut) beside their spin buttons and lists. */
static void assert_control_labels(void)
{
    GtkWidget *grid = gtk_widget_get_parent(named("fm-live-rate"));
    g_autoptr(GPtrArray) labels = fm_gui_test_collect_type(grid, GTK_TYPE_LABEL);
    guint n = 0;
    for (guint i = 0; i < labels->len; i++)
        if (gtk_widget_get_parent(labels->pdata[i]) == grid) {
            assert_on_screen(labels->pdata[i], gtk_label_get_text(labels->pdata[i]));
            n++;
        }
    g_assert_cmpuint(n, ==, 5);
}

static void pick_camera(void)
{
    g_assert_true(fm_gui_test_wait_until(listed, NULL, 30));
    GtkWidget *list = named("fm-live-cameras");
    GtkListBoxRow *row = gtk_list_box_get_row_at_index(GTK_LIST_BOX(list), 0);
    g_assert_nonnull(row);
    assert_on_screen(GTK_WIDGET(row), "the camera's row");
    gtk_widget_activate(GTK_WIDGET(row)); /* as a click does */
    fm_gui_test_drain(0.2);
    g_assert_cmpstr(fm_window_get_family(win), ==, "lsi");
    g_assert_null(fm_gui_test_error_message(win));
    assert_on_screen(named("fm-live-start"), "Start");
    g_assert_true(gtk_widget_is_sensitive(named("fm-live-start")));
    g_assert_true(gtk_widget_is_sensitive(named("fm-live-exposure")));
    g_assert_true(fm_window_select_method(win, "lsi.spatial"));
    assert_control_labels();
}

static void test_run_record_stop(gconstpointer data)
{
    const int *size = data;
    fm_gui_test_resize_outer(GTK_WIDGET(win), size[0], size[1]);
    fm_gui_test_drain(0.3);
    pick_camera();
    gboolean record_from_start = size[2] == 0;
    /* Record before Start: the recording is the run's dataset; else it joins the run later */
    if (record_from_start)
        gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(named("fm-live-record")), TRUE);
    /* the camera takes the rate the user sets (the feed opened it at 25/s) */
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(named("fm-live-rate")), 20);
    gtk_button_clicked(GTK_BUTTON(named("fm-live-start")));
    g_assert_null(fm_gui_test_error_message(win));
    g_assert_true(fm_live_is_running(win));
    wait_drawn(3);
    g_autoptr(GArray) first = sample_map();
    wait_drawn(3);
    g_autoptr(GArray) later = sample_map();
    /* a map is drawn (many colours), and it changes between frames */
    g_assert_cmpuint(count_colours(first), >, 20);
    guint changed = 0;
    for (guint i = 0; i < first->len; i++)
        changed += g_array_index(first, guint32, i) != g_array_index(later, guint32, i);
    g_assert_cmpuint(changed, >, first->len / 10);
    fm_gui_test_drain(1.2); /* the rates cover a second */
    GtkWidget *status = named("fm-live-status");
    const char *text = gtk_label_get_text(GTK_LABEL(status));
    g_test_message("status: %s", text);
    g_assert_cmpfloat(status_camera_fps(text), >, 10);
    g_assert_cmpfloat(status_camera_fps(text), <, 22);
    assert_on_screen(status, "the status line");
    assert_time_course();
    assert_run_off();
    assert_job_row("Running", TRUE);
    /* Auto: the boxes follow the frames' range */
    g_assert_true(gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(win->auto_range_toggle)));
    assert_range_boxes();
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot.png", "-camera-running-%d",
                           size[0]);
    /* a fixed range holds over the next frames, in the view and the boxes */
    gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(win->auto_range_toggle), FALSE);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(win->min_spin), 100);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(win->max_spin), 300);
    wait_drawn(2);
    double lo = 0, hi = 0;
    fm_map_view_get_range(win->map_view, &lo, &hi);
    g_assert_cmpfloat(lo, ==, 100);
    g_assert_cmpfloat(hi, ==, 300);
    assert_range_boxes();
    gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(win->auto_range_toggle), TRUE);

    if (!record_from_start)
        gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(named("fm-live-record")), TRUE);
    wait_drawn(8);
    g_assert_nonnull(strstr(gtk_label_get_text(GTK_LABEL(status)), "Recording"));
    /* Stop (1920x1080), or the panel's Cancel beside Run (1366x768) */
    if (size[0] == 1366) {
        g_autoptr(GPtrArray) cancels =
            fm_gui_test_collect(GTK_WIDGET(win), is_cancel_button, NULL, FALSE);
        GtkWidget *cancel = NULL;
        for (guint i = 0; i < cancels->len && cancel == NULL; i++)
            if (gtk_widget_is_drawable(cancels->pdata[i]))
                cancel = cancels->pdata[i];
        g_assert_nonnull(cancel);
        assert_on_screen(cancel, "the panel's Cancel");
        g_assert_true(gtk_widget_is_sensitive(cancel));
        gtk_button_clicked(GTK_BUTTON(cancel));
    } else {
        gtk_button_clicked(GTK_BUTTON(named("fm-live-stop")));
    }
    g_assert_true(fm_gui_test_wait_until(stopped, NULL, 60));
    fm_gui_test_drain(0.3);
    GtkMessageType type;
    const char *note = fm_window_get_message(win, &type);
    g_assert_nonnull(note);
    g_test_message("note: %s", note);
    g_assert_cmpint(type, ==, GTK_MESSAGE_INFO);
    g_assert_cmpstr(fm_window_get_message_page(win), ==, "lsi");
    assert_on_screen(win->info_label, "the note");
    const char *record_path = NULL;
    gint64 run_id = fm_live_get_last_run(win, &record_path);
    guint64 recorded = note_recorded(note);
    g_assert_cmpuint(recorded, >=, 8);
    assert_recording(record_path, recorded);
    assert_catalogued(run_id, record_path);
    assert_job_row("ended", FALSE);
    assert_run_off(); /* still no file: Start is the way */
    g_assert_true(gtk_widget_is_sensitive(named("fm-live-start"))); /* ready to go again */
    /* the camera open again with the rate set before, changeable before the next Start */
    g_assert_true(gtk_widget_is_sensitive(named("fm-live-rate")));
    g_assert_cmpfloat(gtk_spin_button_get_value(GTK_SPIN_BUTTON(named("fm-live-rate"))), ==, 20);
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot.png", "-camera-stopped-%d",
                           size[0]);
}

static void test_camera_lost(void)
{
    fm_gui_test_resize_outer(GTK_WIDGET(win), 1366, 768);
    pick_camera();
    gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(named("fm-live-record")), TRUE);
    gtk_button_clicked(GTK_BUTTON(named("fm-live-start")));
    g_assert_true(fm_live_is_running(win));
    wait_drawn(3);
    fm_fake_camera_feed_disappear_after(feed, 4, TRUE); /* unplugged */
    g_assert_true(fm_gui_test_wait_until(stopped, NULL, 60));
    fm_gui_test_drain(0.3);
    GtkMessageType type;
    const char *note = fm_window_get_message(win, &type);
    g_assert_nonnull(note);
    g_test_message("note: %s", note);
    g_assert_cmpint(type, ==, GTK_MESSAGE_WARNING);
    g_assert_nonnull(strstr(note, "Fake_1"));
    g_assert_nonnull(strstr(note, "kept"));
    assert_on_screen(win->info_label, "the camera-lost note");
    const char *record_path = NULL;
    gint64 run_id = fm_live_get_last_run(win, &record_path);
    guint64 recorded = note_recorded(note);
    g_assert_cmpuint(recorded, >=, 3);
    assert_recording(record_path, recorded);
    assert_catalogued(run_id, record_path);
    assert_job_row("disconnected", FALSE);
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot.png", "-camera-lost-%d", 1366);
}

/* The region list offers the sensor's centre: choosing its half makes the camera send frames of
 * half the sensor's sides, as the panel then says. */
static void test_region(void)
{
    pick_camera();
    GtkWidget *region = named("fm-live-region");
    g_assert_true(gtk_widget_is_sensitive(region));
    g_assert_cmpstr(gtk_combo_box_get_active_id(GTK_COMBO_BOX(region)), ==, "0"); /* the feed's */
    g_assert_true(gtk_combo_box_set_active_id(GTK_COMBO_BOX(region), "2"));
    g_assert_null(fm_gui_test_error_message(win));
    g_assert_cmpstr(gtk_combo_box_get_active_id(GTK_COMBO_BOX(region)), ==, "2");
    g_autofree char *text = gtk_combo_box_text_get_active_text(GTK_COMBO_BOX_TEXT(region));
    g_test_message("region: %s", text);
    g_assert_true(g_str_has_prefix(text, "Centre "));
    g_autofree char *size = g_strdup_printf("%s pixels", text + strlen("Centre "));
    g_assert_nonnull(strstr(gtk_label_get_text(GTK_LABEL(named("fm-live-source"))), size));
    /* a long region beside them in the narrowest side pane (300 px, as a window manager gives
     * at 1366x768) */
    fm_gui_test_resize_outer(GTK_WIDGET(win), 1366, 768);
    fm_gui_test_drain(0.3);
    GtkPaned *paned = GTK_PANED(win->right_paned);
    int position = gtk_paned_get_position(paned);
    gtk_paned_set_position(paned, gtk_widget_get_allocated_width(GTK_WIDGET(paned)) - 300);
    fm_gui_test_drain(0.3);
    g_test_message("side pane %d px", gtk_widget_get_allocated_width(gtk_paned_get_child2(paned)));
    assert_control_labels();
    gtk_paned_set_position(paned, position);
    fm_gui_test_drain(0.2);
    /* the camera taken to the SD-OCT page: its views leave the file's slider and say Start */
    fm_window_set_family(win, "oct");
    fm_gui_test_drain(0.2);
    assert_on_screen(named("fm-live-start"), "Start on the SD-OCT page");
    g_assert_false(gtk_widget_is_drawable(named("fm-oct-bscan-row")));
    GtkWidget *info = named("fm-oct-info");
    g_assert_nonnull(strstr(gtk_label_get_text(GTK_LABEL(info)), "Press Start"));
    assert_on_screen(info, "the SD-OCT info line");
    assert_run_off();
    fm_window_set_family(win, "lsi");
    fm_gui_test_drain(0.2);
    g_assert_true(gtk_widget_is_drawable(named("fm-live-start")));
}

/* The catalogue row of run_id, on screen, names its input as want, whole or, when the narrow
 * list ellipsizes it as it does file names, with at least its first visible_chars shown. */
static void assert_catalogue_input(gint64 run_id, const char *want, int visible_chars)
{
    g_assert_cmpint(run_id, >, 0);
    fm_catalogue_view_refresh(win->catalogue_view, NULL);
    fm_gui_test_drain(0.1);
    GtkWidget *row = fm_catalogue_view_find_row(win->catalogue_view, run_id);
    g_assert_nonnull(row);
    GtkWidget *dataset = fm_widget_find_named(row, "fm-catalogue-dataset");
    g_assert_nonnull(dataset);
    g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(dataset)), ==, want);
    assert_on_screen(row, "the live run's catalogue row");
    if (visible_chars <= 0) {
        g_assert_false(pango_layout_is_ellipsized(gtk_label_get_layout(GTK_LABEL(dataset))));
        return;
    }
    /* the start and the ellipsis fit the label's width */
    g_autofree char *start = g_strdup_printf("%.*s\u2026", visible_chars, want);
    PangoLayout *layout = gtk_widget_create_pango_layout(dataset, start);
    int start_w = 0;
    pango_layout_get_pixel_size(layout, &start_w, NULL);
    g_object_unref(layout);
    g_assert_cmpint(start_w, <=, gtk_widget_get_allocated_width(dataset));
}

/* The OCT demo's raw spectra replayed as a line camera: the SD-OCT page takes them and says its
 * sidecar's calibration serves; the file's B-scan slider is hidden, the B-scan is drawn at its
 * true aspect with its centre A-line plotted, the spectrum plot says why it is empty, and the
 * en-face image grows a row per B-scan. */
static void test_oct_replay(gconstpointer data)
{
    const int *size = data;
    const char *demo_dir = g_getenv("FLUXMAP_DEMO_DIR");
    g_autofree char *raw = demo_dir ? g_build_filename(demo_dir, "oct-demo.raw", NULL) : NULL;
    if (raw == NULL || !g_file_test(raw, G_FILE_TEST_EXISTS)) {
        g_test_skip("no OCT demo (FLUXMAP_DEMO_DIR)");
        return;
    }
    fm_gui_test_resize_outer(GTK_WIDGET(win), size[0], size[1]);
    fm_gui_test_drain(0.3);
    g_assert_true(fm_live_open_replay(win, raw, 10));
    fm_gui_test_drain(0.2);
    g_assert_cmpstr(fm_window_get_family(win), ==, "oct");
    assert_on_screen(named("fm-live-start"), "Start on the SD-OCT page");
    /* the calibration the run will use, named before Start */
    FmOctPanel *panel = FM_OCT_PANEL(fm_window_get_oct_panel(win));
    const char *calibration = fm_oct_panel_get_calibration_text(panel);
    g_test_message("panel: %s", calibration);
    g_assert_nonnull(strstr(calibration, "oct-demo.calib.csv"));
    g_assert_false(gtk_widget_is_drawable(named("fm-oct-bscan-row"))); /* no file slider */
    g_assert_nonnull(strstr(gtk_label_get_text(GTK_LABEL(named("fm-oct-info"))), "Start"));
    assert_run_off();
    fm_gui_test_drain(0.5); /* the panel's page transition */
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot.png", "-camera-oct-ready-%d",
                           size[0]);
    gtk_button_clicked(GTK_BUTTON(named("fm-live-start")));
    g_assert_null(fm_gui_test_error_message(win));
    g_assert_true(fm_live_is_running(win));
    wait_drawn(2);
    FmOctViews *views = FM_OCT_VIEWS(fm_window_get_oct_views(win));
    FmMapView *bscan = fm_oct_views_get_bscan_view(views);
    FmMapView *enface = fm_oct_views_get_enface_view(views);
    int bw = 0, bh = 0, ew = 0, eh1 = 0, eh2 = 0;
    g_assert_nonnull(fm_map_view_get_data(bscan, &bw, &bh));
    /* 256 A-lines across at the scan's aspect: 23.4375 µm apart (the sidecar), depth from the
     * calibration (µm per bin, as the info line says) */
    double columns = fm_oct_views_get_columns_per_aline(views);
    g_assert_cmpfloat(fabs(columns * 256 - bw), <, 1.0);
    GtkWidget *info = named("fm-oct-info");
    const char *text = gtk_label_get_text(GTK_LABEL(info));
    g_test_message("info: %s", text);
    g_assert_nonnull(strstr(text, "replay of oct-demo.raw"));
    const char *per = strstr(text, " µm per depth bin");
    g_assert_nonnull(per);
    const char *num = per;
    while (num > text && (g_ascii_isdigit(num[-1]) || num[-1] == '.'))
        num--;
    double um_per_bin = g_ascii_strtod(num, NULL);
    g_assert_cmpfloat(um_per_bin, >, 0);
    double aspect = 256 * 23.4375 / (1024 * um_per_bin); /* 2048 pixels: 1024 depth bins */
    g_test_message("B-scan %dx%d drawn, aspect %.3f, true %.3f", bw, bh, (double)bw / bh, aspect);
    g_assert_cmpfloat(fabs((double)bw / bh / aspect - 1), <, 0.01);
    assert_on_screen(info, "the SD-OCT info line");
    g_assert_false(gtk_widget_is_drawable(named("fm-oct-bscan-row"))); /* no file slider */
    /* the A-line plot has the centre A-line; the spectrum plot says why it is empty */
    g_autoptr(GPtrArray) plots = fm_gui_test_collect_type(GTK_WIDGET(views), FM_TYPE_PLOT_VIEW);
    g_assert_cmpuint(plots->len, ==, 2);
    FmPlotView *aline = plots->pdata[0], *spectrum = plots->pdata[1];
    assert_on_screen(GTK_WIDGET(aline), "the A-line plot");
    assert_on_screen(GTK_WIDGET(spectrum), "the spectrum plot");
    g_assert_cmpfloat(fm_plot_view_get_layout(aline)->x.hi, >, 1000); /* µm, not bins */
    g_assert_cmpint(plot_ink(aline), >, 20);
    g_assert_true(g_str_has_prefix(fm_plot_view_get_placeholder(spectrum), "live: "));
    g_assert_cmpint(plot_ink(spectrum), >, 20); /* its text is drawn */
    g_assert_nonnull(fm_map_view_get_data(enface, &ew, &eh1));
    wait_drawn(2);
    g_assert_nonnull(fm_map_view_get_data(enface, &ew, &eh2));
    g_assert_cmpint(eh2, >, eh1); /* a row per B-scan */
    assert_on_screen(GTK_WIDGET(bscan), "the live B-scan");
    assert_on_screen(GTK_WIDGET(enface), "the growing en-face image");
    assert_job_row("Running", TRUE);
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot.png", "-camera-oct-%d", size[0]);
    /* Stop from the Jobs row */
    gtk_button_clicked(GTK_BUTTON(named("fm-live-job-stop")));
    g_assert_true(fm_gui_test_wait_until(stopped, NULL, 60));
    fm_gui_test_drain(0.3);
    GtkMessageType type;
    const char *note = fm_window_get_message(win, &type);
    g_assert_nonnull(note);
    g_test_message("note: %s", note);
    g_assert_cmpstr(fm_window_get_message_page(win), ==, "oct");
    assert_job_row("ended", FALSE);
    g_assert_nonnull(strstr(gtk_label_get_text(GTK_LABEL(info)), "last live B-scan"));
    g_assert_cmpstr(fm_oct_views_get_depth_label(views), ==, "depth (µm)"); /* as it was drawn */
    assert_run_off();
    assert_on_screen(info, "the SD-OCT info line after the run");
    /* not recorded: the catalogue names the replayed file, the run's dataset */
    assert_catalogue_input(fm_live_get_last_run(win, NULL), "replay of oct-demo.raw", 11);
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot.png", "-camera-oct-stopped-%d",
                           size[0]);
}

int main(int argc, char **argv)
{
    g_setenv("FLUXMAP_FAKE_CAMERA", "1", TRUE);
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-camera-XXXXXX");
    if (data_dir == NULL)
        return 0;
    fm_lsi_sim_params p;
    fm_lsi_sim_defaults(&p);
    p.width = W;
    p.height = H;
    p.n_frames = N_SIM;
    p.bits = 12;
    g_autoptr(GError) error = NULL;
    sim = fm_lsi_simulate(&p, &error);
    g_assert_no_error(error);
    app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);
    fm_live_set_camera_opener(win, open_fed, NULL);
    /* width, height, Record pressed while running (else before Start) */
    static const int large[3] = {1920, 1080, 0}, small[3] = {1366, 768, 1};
    g_test_add_data_func("/camera/run-record-stop/1920x1080", large, test_run_record_stop);
    g_test_add_data_func("/camera/run-record-stop/1366x768", small, test_run_record_stop);
    g_test_add_func("/camera/lost", test_camera_lost);
    g_test_add_data_func("/camera/oct-replay/1920x1080", large, test_oct_replay);
    g_test_add_data_func("/camera/oct-replay/1366x768", small, test_oct_replay);
    g_test_add_func("/camera/region", test_region);
    int rc = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    g_clear_pointer(&feed, fm_fake_camera_feed_free);
    fm_dataset_unref(sim);
    return rc;
}
