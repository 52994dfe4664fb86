/* The plot layout over a grid of widget sizes (120x60 to 1200x800) and value ranges (1e-6 to
 * 1e6, linear and log), with and without title, statistics, legend and residual strip, texts
 * measured by Pango as the views draw them: no two texts overlap, none leaves the widget, the
 * data area stays, tick labels are short, unique and of one format per axis. */
#include <math.h>
#include <string.h>

#include <glib.h>
#include <pango/pangocairo.h>

#include "app/gui/cairo-util.h"
#include "app/gui/plot-layout.h"

typedef struct {
    cairo_surface_t *surface;
    cairo_t *cr;
    PangoLayout *pango;
} Measure;

static void measure_init(Measure *m)
{
    m->surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 8, 8);
    m->cr = cairo_create(m->surface);
    m->pango = fm_cairo_plot_pango(NULL, m->cr);
}

static void measure_free(Measure *m)
{
    g_object_unref(m->pango);
    cairo_destroy(m->cr);
    cairo_surface_destroy(m->surface);
}

static const double widths[] = {120, 150, 200, 260, 320, 400, 520, 640, 800, 1000, 1200};
static const double heights[] = {60, 75, 90, 120, 160, 200, 260, 340, 480, 640, 800};

typedef struct {
    double lo, hi;
    gboolean log;
} Range;

static const Range ranges[] = {
    {0, 1e-6, FALSE},    {-3e-6, 3e-6, FALSE}, {1e-6, 1.7e-6, FALSE}, {0, 1e-3, FALSE},
    {0, 1, FALSE},       {-1, 1, FALSE},       {0.5, 1.5, FALSE},     {0, 25.6, FALSE},
    {-0.0004, 1, FALSE}, {0, 1000, FALSE},     {0, 12000, FALSE},     {0, 1e5, FALSE},
    {0, 1e6, FALSE},     {1e5, 1e6, FALSE},    {-1e6, 1e6, FALSE},    {123456, 123789, FALSE},
    {1e-6, 1e6, TRUE},   {0.5, 2e6, TRUE},     {1, 10, TRUE},         {3, 7, TRUE},
    {1e-6, 1e-5, TRUE},  {100, 1e6, TRUE},     {2e-3, 0.5, TRUE},     {5, 5, FALSE},
};

static const char *const legend[] = {"Ca aorta", "Cp portal vein", "liver mean",
                                     "model ka 26, kp 90, kl 394"};

/* How many digits follow the decimal point (0 without one). */
static int decimals_of(const char *label)
{
    const char *dot = strchr(label, '.');
    if (dot == NULL)
        return 0;
    int d = 0;
    for (const char *c = dot + 1; *c >= '0' && *c <= '9'; c++)
        d++;
    return d;
}

static void check_axis(const FmPlotAxis *a, const char *what)
{
    int decimals = -1;
    for (int i = 0; i < a->n_ticks; i++) {
        const char *label = a->ticks[i].label;
        if (label[0] == '\0')
            continue;
        if (strstr(label, "000000") != NULL)
            g_error("%s: tick label '%s'", what, label);
        gboolean all_zero = TRUE;
        for (const char *c = label; *c; c++)
            if (*c >= '1' && *c <= '9')
                all_zero = FALSE;
        if (all_zero && g_str_has_prefix(label, "-"))
            g_error("%s: tick label '%s' is a negative zero", what, label);
        for (int j = 0; j < i; j++)
            if (strcmp(a->ticks[j].label, label) == 0)
                g_error("%s: tick label '%s' twice", what, label);
        /* one number format on a linear axis: the same decimals (zero may be a bare "0") */
        if (!a->log && strcmp(label, "0") != 0) {
            int d = decimals_of(label);
            if (decimals >= 0 && d != decimals)
                g_error("%s: '%s' has %d decimals, another label %d", what, label, d, decimals);
            decimals = d;
        }
    }
}

static int labelled(const FmPlotAxis *a)
{
    int n = 0;
    for (int i = 0; i < a->n_ticks; i++)
        n += a->ticks[i].label[0] != '\0';
    return n;
}

static void check_layout(const FmPlotSpec *spec, const FmPlotLayout *l, const char *what)
{
    FmPlotBox boxes[128];
    const char *texts[128];
    int n = fm_plot_layout_text_boxes(l, boxes, texts, G_N_ELEMENTS(boxes));
    g_assert_cmpint(n, <=, (int)G_N_ELEMENTS(boxes));
    for (int i = 0; i < n; i++) {
        const FmPlotBox *b = &boxes[i];
        if (b->x < -0.01 || b->y < -0.01 || b->x + b->width > spec->width + 0.01 ||
            b->y + b->height > spec->height + 0.01)
            g_error("%s: '%s' at %.1f,%.1f %.1fx%.1f leaves the %gx%g widget", what, texts[i], b->x,
                    b->y, b->width, b->height, spec->width, spec->height);
        for (int j = 0; j < i; j++) {
            const FmPlotBox *c = &boxes[j];
            if (b->x + 0.01 < c->x + c->width && c->x + 0.01 < b->x + b->width &&
                b->y + 0.01 < c->y + c->height && c->y + 0.01 < b->y + b->height)
                g_error("%s: '%s' overlaps '%s'", what, texts[i], texts[j]);
        }
    }
    /* the legend's frame lies clear of every other text, and inside the data when inside */
    if (l->n_legend > 0) {
        for (int i = 0; i < n; i++) {
            gboolean entry = FALSE;
            for (int k = 0; k < l->n_legend; k++)
                entry = entry || texts[i] == l->legend_text[k].text;
            const FmPlotBox *b = &boxes[i], *f = &l->legend;
            if (!entry && b->x + 0.01 < f->x + f->width && f->x + 0.01 < b->x + b->width &&
                b->y + 0.01 < f->y + f->height && f->y + 0.01 < b->y + b->height)
                g_error("%s: the legend covers '%s'", what, texts[i]);
        }
        if (l->legend_inside)
            g_assert_true(l->legend.x >= l->data.x && l->legend.y >= l->data.y &&
                          l->legend.x + l->legend.width <= l->data.x + l->data.width &&
                          l->legend.y + l->legend.height <= l->data.y + l->data.height);
    }
    /* the data area: never outside the widget, and there wherever the size allows it */
    g_assert_cmpfloat(l->data.x, >=, 0);
    g_assert_cmpfloat(l->data.y, >=, 0);
    g_assert_cmpfloat(l->data.x + l->data.width, <=, spec->width);
    g_assert_cmpfloat(l->strip.y + l->strip.height, <=, spec->height);
    if (l->data.width <= 0 || l->data.height <= 0)
        g_error("%s: no data area", what);
    if (spec->width >= 200 && spec->height >= 120 && spec->strip_fraction == 0 &&
        spec->aspect == 0 && (l->data.width < 48 || l->data.height < 24))
        g_error("%s: data area %.0fx%.0f under the minimum", what, l->data.width, l->data.height);
    check_axis(&l->x, what);
    check_axis(&l->y, what);
    check_axis(&l->strip_y, what);
    /* a readable plot at a usual size: at least two labelled ticks on each axis */
    if (spec->width >= 320 && spec->height >= 200 && spec->aspect == 0) {
        if (labelled(&l->x) < 2 || labelled(&l->y) < 2)
            g_error("%s: %d x and %d y labelled ticks", what, labelled(&l->x), labelled(&l->y));
    }
}

static void fill_occupancy(guint8 *grid, int cols, int rows, const FmPlotSpec *spec)
{
    /* a decay-like curve from the top left to the bottom right */
    memset(grid, 0, (gsize)cols * rows);
    for (int i = 0; i < 64; i++) {
        double f0 = i / 64.0, f1 = (i + 1) / 64.0;
        double x0 = spec->x.lo + f0 * (spec->x.hi - spec->x.lo);
        double x1 = spec->x.lo + f1 * (spec->x.hi - spec->x.lo);
        double y0, y1;
        if (spec->y.log) {
            y0 = spec->y.hi * pow(spec->y.lo / spec->y.hi, f0);
            y1 = spec->y.hi * pow(spec->y.lo / spec->y.hi, f1);
        } else {
            y0 = spec->y.hi - f0 * (spec->y.hi - spec->y.lo);
            y1 = spec->y.hi - f1 * (spec->y.hi - spec->y.lo);
        }
        fm_plot_occupancy_mark(grid, cols, rows, &spec->x, &spec->y, x0, y0, x1, y1);
    }
}

static void test_grid(void)
{
    Measure m;
    measure_init(&m);
    int count = 0, dropped = 0;
    guint8 grid[16 * 10];
    for (gsize wi = 0; wi < G_N_ELEMENTS(widths); wi++)
        for (gsize hi = 0; hi < G_N_ELEMENTS(heights); hi++)
            for (gsize r = 0; r < G_N_ELEMENTS(ranges); r++)
                for (int variant = 0; variant < 5; variant++) {
                    const Range *rx = &ranges[r];
                    const Range *ry = &ranges[(r * 7 + wi + hi + variant) % G_N_ELEMENTS(ranges)];
                    FmPlotSpec spec = {
                        .width = widths[wi],
                        .height = heights[hi],
                        .x = {rx->lo, rx->hi, rx->log, "time (ns)"},
                        .y = {ry->lo, ry->hi, ry->log, "mean SFI, whole frame (1/s)"},
                        .measure = fm_cairo_plot_measure,
                        .measure_user = m.pango,
                    };
                    if (variant >= 1) {
                        spec.title = "Decay · sum over the image";
                        spec.stats = "τ 1.992 ns · χ²ᵣ 1.03";
                    }
                    if (variant >= 2) {
                        spec.legend = legend;
                        spec.n_legend = G_N_ELEMENTS(legend);
                    }
                    if (variant == 3) {
                        spec.occupancy = grid;
                        spec.occupancy_cols = 16;
                        spec.occupancy_rows = 10;
                        spec.strip = (FmPlotAxisSpec){-4, 4, FALSE, "res."};
                        spec.strip_fraction = 0.3;
                        fill_occupancy(grid, 16, 10, &spec);
                    }
                    if (variant == 4) { /* the phasor: equal scales on both axes */
                        spec.x = (FmPlotAxisSpec){-0.05, 1.05, FALSE, "g"};
                        spec.y = (FmPlotAxisSpec){-0.03, 0.63, FALSE, "s"};
                        spec.aspect = 1;
                        spec.legend = NULL;
                        spec.n_legend = 0;
                    }
                    FmPlotLayout layout;
                    fm_plot_layout_compute(&spec, &layout);
                    g_autofree char *what =
                        g_strdup_printf("%gx%g x [%g, %g]%s y [%g, %g]%s variant %d", spec.width,
                                        spec.height, spec.x.lo, spec.x.hi, spec.x.log ? " log" : "",
                                        spec.y.lo, spec.y.hi, spec.y.log ? " log" : "", variant);
                    check_layout(&spec, &layout, what);
                    if (variant == 4) { /* equal scales */
                        double sx = layout.data.width / (spec.x.hi - spec.x.lo);
                        double sy = layout.data.height / (spec.y.hi - spec.y.lo);
                        g_assert_cmpfloat(fabs(sx - sy), <, 0.01 * sx);
                    }
                    dropped += layout.dropped > 0;
                    count++;
                    fm_plot_layout_clear(&layout);
                }
    g_test_message("%d layouts, %d with texts dropped", count, dropped);
    measure_free(&m);
}

/* A title far longer than the widget ends in an ellipsis inside it, never cut at the edge. */
static void test_ellipsis(void)
{
    Measure m;
    measure_init(&m);
    FmPlotSpec spec = {
        .width = 300,
        .height = 200,
        .x = {0, 10, FALSE, "a very long axis label that says far more than any axis should say"},
        .y = {0, 1, FALSE, "an even longer y axis label that cannot possibly fit its axis"},
        .title = "Lifetime histogram · tau_avg_int · mean 1.992 ns · n 16384 · a long note",
        .measure = fm_cairo_plot_measure,
        .measure_user = m.pango,
    };
    FmPlotLayout l;
    fm_plot_layout_compute(&spec, &l);
    g_assert_nonnull(l.title.text);
    g_assert_true(g_str_has_suffix(l.title.text, "…"));
    g_assert_cmpfloat(l.title.box.x + l.title.box.width, <=, spec.width);
    g_assert_nonnull(l.x_label.text);
    g_assert_true(g_str_has_suffix(l.x_label.text, "…"));
    g_assert_nonnull(l.y_label.text);
    g_assert_true(g_str_has_suffix(l.y_label.text, "…"));
    g_assert_cmpfloat(l.y_label.box.height, <=, l.data.height);
    check_layout(&spec, &l, "ellipsis");
    fm_plot_layout_clear(&l);
    measure_free(&m);
}

/* Statistics go first, then the title, then axis labels, as the widget shrinks. */
static void test_drop_order(void)
{
    Measure m;
    measure_init(&m);
    FmPlotSpec spec = {
        .x = {0, 25.6, FALSE, "time (ns)"},
        .y = {0.5, 2e6, TRUE, "counts"},
        .title = "Decay · sum over the image",
        .stats = "τ 1.992 ns · χ²ᵣ 1.03",
        .measure = fm_cairo_plot_measure,
        .measure_user = m.pango,
    };
    int last = 0;
    for (double h = 400; h >= 40; h -= 4) {
        spec.width = h * 1.5;
        spec.height = h;
        FmPlotLayout l;
        fm_plot_layout_compute(&spec, &l);
        g_assert_cmpint(l.dropped, >=, last); /* never takes a text back when shrinking */
        last = l.dropped;
        if (l.dropped >= 1)
            g_assert_null(l.stats.text);
        if (l.dropped >= 2)
            g_assert_null(l.title.text);
        if (l.dropped >= 3)
            g_assert_true(l.x_label.text == NULL && l.y_label.text == NULL);
        check_layout(&spec, &l, "drop order");
        fm_plot_layout_clear(&l);
    }
    g_assert_cmpint(last, >=, 2);
    measure_free(&m);
}

static void test_format(void)
{
    char labels[8][FM_PLOT_TICK_CHARS];
    const double big[] = {0, 2e5, 4e5, 6e5, 8e5, 1e6};
    fm_plot_format_ticks(big, 6, 2e5, FALSE, labels);
    g_assert_cmpstr(labels[0], ==, "0");
    g_assert_cmpstr(labels[1], ==, "0.2M");
    g_assert_cmpstr(labels[5], ==, "1.0M");
    const double mid[] = {0, 20000, 40000};
    fm_plot_format_ticks(mid, 3, 20000, FALSE, labels);
    g_assert_cmpstr(labels[2], ==, "40k");
    const double small[] = {-1e-6, -5e-7, 0, 5e-7, 1e-6};
    fm_plot_format_ticks(small, 5, 5e-7, FALSE, labels);
    g_assert_cmpstr(labels[0], ==, "-1.0e-6");
    g_assert_cmpstr(labels[2], ==, "0");
    g_assert_cmpstr(labels[3], ==, "0.5e-6");
    const double around[] = {-0.5, -1e-17, 0.5};
    fm_plot_format_ticks(around, 3, 0.5, FALSE, labels);
    g_assert_cmpstr(labels[1], ==, "0.0");
    g_assert_cmpstr(labels[0], ==, "-0.5");
    const double decades[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e-6};
    fm_plot_format_ticks(decades, 8, 0, TRUE, labels);
    g_assert_cmpstr(labels[3], ==, "1000");
    g_assert_cmpstr(labels[4], ==, "10k");
    g_assert_cmpstr(labels[6], ==, "1M");
    g_assert_cmpstr(labels[7], ==, "1e-6");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/plot-layout/format", test_format);
    g_test_add_func("/plot-layout/ellipsis", test_ellipsis);
    g_test_add_func("/plot-layout/drop-order", test_drop_order);
    g_test_add_func("/plot-layout/grid", test_grid);
    return g_test_run();
}
