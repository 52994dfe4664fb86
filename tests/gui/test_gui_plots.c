/* The plots as they are drawn: the FLIM demo opened from its card and run with LSM, at 1366x768
 * and 1920x1080. The decay plot shows the summed decay with a fit of that sum whose weighted
 * residuals scatter around 0 (on screen: the green trace sits at the strip's zero line, not at
 * its clip), a pixel's decay with that pixel's fit; the decay, phasor and histogram texts lie
 * inside their widgets and apart; the phasor is round and large, with its placeholder in plain
 * words. The ROI time course stays readable at little height. Screenshots of each
 * (screenshot-plots-*.png beside FLUXMAP_SCREENSHOT). */
#include <math.h>
#include <string.h>

#include "app/gui/flim/flim-page.h"
#include "app/gui/flim/flim-views.h"
#include "app/gui/plot-view.h"
#include "gui-test-util.h"

static char *data_dir;
static FmApplication *app;
static FmWindow *win;

static FmFlimViews *views(void)
{
    return FM_FLIM_VIEWS(fm_window_get_flim_views(win));
}

static gboolean demo_loaded(gpointer unused G_GNUC_UNUSED)
{
    return fm_window_get_dataset(win) != NULL && !fm_window_is_loading(win) &&
           fm_flim_views_photons_ready(views());
}

static void save(GtkWidget *widget, const char *what, int width)
{
    fm_gui_test_screenshot(widget, data_dir, "screenshot.png", "-plots-%s-%d", what, width);
}

/* What is on screen of a plot: its texts inside the widget and apart, a data area of at least
 * min_w x min_h, and at least two labelled ticks on x. */
static void check_plot(GtkWidget *widget, const FmPlotLayout *l, const char *what, double min_w,
                       double min_h)
{
    double W = gtk_widget_get_allocated_width(widget), H = gtk_widget_get_allocated_height(widget);
    FmPlotBox boxes[128];
    const char *texts[128];
    int n = fm_plot_layout_text_boxes(l, boxes, texts, G_N_ELEMENTS(boxes));
    g_test_message("%s: %gx%g, data %.0fx%.0f, %d texts, %d dropped", what, W, H, l->data.width,
                   l->data.height, n, l->dropped);
    for (int i = 0; i < n; i++) {
        const FmPlotBox *b = &boxes[i];
        if (b->x < 0 || b->y < 0 || b->x + b->width > W + 0.01 || b->y + b->height > H + 0.01)
            g_error("%s: '%s' leaves the %gx%g widget", what, texts[i], W, H);
        for (int j = 0; j < i; j++) {
            const FmPlotBox *c = &boxes[j];
            if (b->x + 0.01 < c->x + c->width && c->x + 0.01 < b->x + b->width &&
                b->y + 0.01 < c->y + c->height && c->y + 0.01 < b->y + b->height)
                g_error("%s: '%s' overlaps '%s'", what, texts[i], texts[j]);
        }
    }
    g_assert_cmpfloat(l->data.width, >=, min_w);
    g_assert_cmpfloat(l->data.height, >=, min_h);
    int labelled = 0;
    for (int i = 0; i < l->x.n_ticks; i++)
        labelled += l->x.ticks[i].label[0] != '\0';
    g_assert_cmpint(labelled, >=, 2);
}

static gboolean is_residual_green(const guint8 *px)
{
    /* ARGB32 little endian: B, G, R, A; the trace is (0.4, 0.9, 0.5) */
    return px[1] > 180 && px[2] > 70 && px[2] < 140 && px[0] > 90 && px[0] < 160;
}

/* The residual trace as drawn: its pixels' mean height against the strip's zero line, and the
 * share of them on the strip's outer rows (the clip), in fractions of the half strip. */
static void residual_pixels(GtkWidget *decay, const FmPlotLayout *l, double *mean_offset,
                            double *at_clip)
{
    cairo_surface_t *s = fm_gui_test_render(decay);
    const guint8 *data = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    double zero = fm_plot_axis_to_px(&l->strip_y, 0), half = l->strip.height / 2;
    double sum = 0;
    long n = 0, clip = 0;
    for (int y = (int)l->strip.y + 1; y < (int)(l->strip.y + l->strip.height) - 1; y++)
        for (int x = (int)l->strip.x + 2; x < (int)(l->strip.x + l->strip.width) - 2; x++)
            if (is_residual_green(data + (gsize)y * stride + 4 * x)) {
                sum += (zero - y) / half;
                n++;
                clip += fabs(zero - y) > 0.9 * half;
            }
    cairo_surface_destroy(s);
    g_assert_cmpint(n, >, 50); /* the trace is there */
    *mean_offset = sum / n;
    *at_clip = (double)clip / n;
}

static void check_flim_views(int width)
{
    FmDecayView *decay = fm_flim_views_get_decay_view(views());
    GtkWidget *phasor = GTK_WIDGET(fm_flim_views_get_phasor_view(views()));
    const FmPlotLayout *hist_layout = NULL;
    GtkWidget *hist = fm_flim_views_get_histogram(views(), &hist_layout);
    save(GTK_WIDGET(decay), "decay", width);
    save(phasor, "phasor", width);
    save(hist, "histogram", width);
    check_plot(GTK_WIDGET(decay), fm_decay_view_get_layout(decay), "decay", 120, 30);
    const FmPlotLayout *dl = fm_decay_view_get_layout(decay);
    g_assert_cmpfloat(dl->strip.height, >=, 12);
    g_assert_nonnull(dl->title.text); /* whose decay it is */
    if (fm_phasor_view_count_points(FM_PHASOR_VIEW(phasor)) > 0) {
        check_plot(phasor, fm_phasor_view_get_layout(FM_PHASOR_VIEW(phasor)), "phasor", 100, 50);
        /* as large as its widget allows: the data area fills most of its width or height */
        const FmPlotLayout *pl = fm_phasor_view_get_layout(FM_PHASOR_VIEW(phasor));
        double pw = gtk_widget_get_allocated_width(phasor);
        double ph = gtk_widget_get_allocated_height(phasor);
        g_assert_true(pl->data.width > 0.6 * pw || pl->data.height > 0.5 * ph);
    }
    check_plot(hist, hist_layout, "histogram", 100, 20);
    /* the histogram's title whole, not cut: its full text or an ellipsis inside the widget */
    g_assert_nonnull(hist_layout->title.text);
    g_assert_true(g_str_has_prefix(hist_layout->title.text, "Lifetime histogram") ||
                  g_str_has_suffix(hist_layout->title.text, "…"));
}

static void set_size(int width, int height)
{
    gtk_window_unmaximize(GTK_WINDOW(win));
    gtk_window_resize(GTK_WINDOW(win), width, height);
    fm_gui_test_drain(0.8);
    g_test_message("window %dx%d", gtk_widget_get_allocated_width(GTK_WIDGET(win)),
                   gtk_widget_get_allocated_height(GTK_WIDGET(win)));
}

static void test_flim_demo(void)
{
    GtkWidget *card = fm_gui_test_find_card(GTK_WIDGET(win), "flim");
    g_assert_nonnull(card);
    gtk_button_clicked(GTK_BUTTON(card));
    g_assert_true(fm_gui_test_wait_until(demo_loaded, NULL, 60));
    g_assert_null(fm_gui_test_error_message(win));
    g_assert_true(fm_window_select_method(win, "flim.lsm"));
    fm_gui_test_run_job(win, "run", 110);
    fm_gui_test_drain(0.3);

    /* The summed decay with the fit of that sum: residuals around 0, chi-square near 1. */
    FmDecayView *decay = fm_flim_views_get_decay_view(views());
    fm_flim_views_show_decay(views(), -1, -1);
    double mean = NAN, chi2 = NAN;
    int dof = 0;
    g_assert_true(fm_decay_view_get_fit_stats(decay, &mean, &chi2, &dof));
    g_test_message("sum over the image: mean weighted residual %.3f, chi2/dof %.3f (%d dof)", mean,
                   chi2, dof);
    g_assert_cmpfloat(fabs(mean), <, 1);
    g_assert_cmpfloat(chi2, <, 3);
    g_assert_cmpint(dof, >, 100);

    /* A pixel's decay with that pixel's fit (its ~1500 photons: chi2 near 1 as well). */
    fm_flim_views_show_decay(views(), 64, 64);
    g_assert_true(fm_decay_view_get_fit_stats(decay, &mean, &chi2, &dof));
    g_test_message("pixel 64, 64: mean weighted residual %.3f, chi2/dof %.3f (%d dof)", mean, chi2,
                   dof);
    g_assert_cmpfloat(fabs(mean), <, 1);
    g_assert_cmpfloat(chi2, <, 2);
    g_assert_cmpfloat(chi2, >, 0.3);
    fm_gui_test_drain(0.2);
    save(GTK_WIDGET(decay), "decay-pixel", gtk_widget_get_allocated_width(GTK_WIDGET(win)));
    check_plot(GTK_WIDGET(decay), fm_decay_view_get_layout(decay), "pixel decay", 120, 30);
    fm_flim_views_show_decay(views(), -1, -1);

    static const int sizes[][2] = {{1366, 768}, {1920, 1080}};
    for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
        set_size(sizes[i][0], sizes[i][1]);
        fm_flim_views_show_decay(views(), -1, -1);
        fm_gui_test_drain(0.2);
        check_flim_views(sizes[i][0]);
        /* on screen, the residual trace of the sum sits on the zero line, not at the clip */
        double offset, clip;
        residual_pixels(GTK_WIDGET(decay), fm_decay_view_get_layout(decay), &offset, &clip);
        g_test_message("residual trace: mean offset %.3f half-strips, %.1f %% at the clip", offset,
                       100 * clip);
        g_assert_cmpfloat(fabs(offset), <, 0.25);
        g_assert_cmpfloat(clip, <, 0.05);
        save(GTK_WIDGET(win), "window-lsm", sizes[i][0]);
    }

    /* The phasor: its placeholder says what to do until the phasor method ran, then the plot. */
    FmPhasorView *phasor = fm_flim_views_get_phasor_view(views());
    g_assert_cmpuint(fm_phasor_view_count_points(phasor), ==, 0);
    g_assert_true(fm_window_select_method(win, "flim.phasor"));
    fm_gui_test_run_job(win, "run", 110);
    fm_gui_test_drain(0.3);
    g_assert_cmpuint(fm_phasor_view_count_points(phasor), >, 0);
    for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
        set_size(sizes[i][0], sizes[i][1]);
        save(GTK_WIDGET(phasor), "phasor-run", sizes[i][0]);
        check_flim_views(sizes[i][0]);
        save(GTK_WIDGET(win), "window-phasor", sizes[i][0]);
    }
}

/* The ROI time course (FmPlotView) of a perfusion-like set of curves with a legend, at little
 * height and at more: ticks apart, legend clear of them, no text cut. */
static void test_time_course(void)
{
    static const int heights[] = {64, 90, 140, 220};
    double t[48], ca[48], cp[48], tissue[48], model[48];
    for (int i = 0; i < 48; i++) {
        t[i] = 2.5 * i;
        ca[i] = 6 * exp(-pow((t[i] - 18) / 4, 2)) + 0.8 * (t[i] > 18);
        cp[i] = 3.4 * exp(-pow((t[i] - 26) / 7, 2)) + 0.7 * (t[i] > 26);
        tissue[i] = 0.9 * (1 - exp(-fmax(t[i] - 20, 0) / 15));
        model[i] = 0.92 * (1 - exp(-fmax(t[i] - 20, 0) / 14));
    }
    static const double red[] = {0.85, 0.2, 0.2}, blue[] = {0.2, 0.45, 0.85};
    static const double black[] = {0.1, 0.1, 0.1}, orange[] = {1, 0.5, 0.1};
    for (gsize i = 0; i < G_N_ELEMENTS(heights); i++) {
        GtkWidget *window = gtk_offscreen_window_new();
        GtkWidget *plot = fm_plot_view_new();
        gtk_widget_set_size_request(plot, 740, heights[i]);
        gtk_container_add(GTK_CONTAINER(window), plot);
        FmPlotView *view = FM_PLOT_VIEW(plot);
        fm_plot_view_set_labels(view, "time (s)", "enhancement S/S0 - 1, whole frame");
        fm_plot_view_add_series(view, "Ca aorta", t, ca, 48, red, FM_PLOT_STYLE_LINE);
        fm_plot_view_add_series(view, "Cp portal vein", t, cp, 48, blue, FM_PLOT_STYLE_LINE);
        fm_plot_view_add_series(view, "liver mean", t, tissue, 48, black, FM_PLOT_STYLE_MARKERS);
        fm_plot_view_add_series(view, "model ka 26, kp 90, kl 394", t, model, 48, orange,
                                FM_PLOT_STYLE_DASHED);
        gtk_widget_show_all(window);
        fm_gui_test_drain(0.2);
        cairo_surface_destroy(fm_gui_test_render(plot));
        const FmPlotLayout *l = fm_plot_view_get_layout(view);
        g_autofree char *what = g_strdup_printf("time course %d px", heights[i]);
        check_plot(plot, l, what, 200, 24);
        int y_labels = 0;
        for (int k = 0; k < l->y.n_ticks; k++)
            y_labels += l->y.ticks[k].label[0] != '\0';
        g_assert_cmpint(y_labels, >=, 2);
        save(plot, "time-course", heights[i]);
        gtk_widget_destroy(window);
    }
}

/* MCML's Rd(r): a log y axis over seven decades, in a plot of its usual size and a small one. */
static void test_log_plot(void)
{
    double r[200], rd[200];
    for (int i = 0; i < 200; i++) {
        r[i] = 0.005 * (i + 0.5);
        rd[i] = 3.2 * exp(-r[i] / 0.08) + 1e-6;
    }
    static const int sizes[][2] = {{420, 240}, {220, 120}};
    for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
        GtkWidget *window = gtk_offscreen_window_new();
        GtkWidget *plot = fm_plot_view_new();
        gtk_widget_set_size_request(plot, sizes[i][0], sizes[i][1]);
        gtk_container_add(GTK_CONTAINER(window), plot);
        fm_plot_view_set_labels(FM_PLOT_VIEW(plot), "r (cm)", "Rd (1/cm²)");
        fm_plot_view_set_log_y(FM_PLOT_VIEW(plot), TRUE);
        fm_plot_view_set_series(FM_PLOT_VIEW(plot), r, rd, 200);
        gtk_widget_show_all(window);
        fm_gui_test_drain(0.2);
        cairo_surface_destroy(fm_gui_test_render(plot));
        const FmPlotLayout *l = fm_plot_view_get_layout(FM_PLOT_VIEW(plot));
        check_plot(plot, l, "Rd(r)", 120, 40);
        for (int k = 0; k < l->y.n_ticks; k++) /* decades, none in full zeros */
            g_assert_null(strstr(l->y.ticks[k].label, "0000"));
        save(plot, "log-rd", sizes[i][0]);
        gtk_widget_destroy(window);
    }
}

int main(int argc, char **argv)
{
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-plots-XXXXXX");
    if (data_dir == NULL)
        return 0;
    app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);
    fm_gui_test_drain(0.5);
    g_test_add_func("/gui-plots/time-course", test_time_course);
    g_test_add_func("/gui-plots/log-plot", test_log_plot);
    g_test_add_func("/gui-plots/flim-demo", test_flim_demo);
    int status = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    return status;
}
