/* The layout of every plot view: data rectangle, ticks with their labels, title, statistics,
 * axis labels and legend, placed so that no two texts overlap and none leaves the widget. Pure:
 * texts are measured through a callback, so tests can check it on any size. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define FM_PLOT_MAX_TICKS 24
#define FM_PLOT_TICK_CHARS 24
#define FM_PLOT_MAX_LEGEND 8
/* Width of a legend entry's swatch (line or marker) before its text, in pixels. */
#define FM_PLOT_SWATCH_W 18.0
/* Length of a tick mark outside the data rectangle, in pixels. */
#define FM_PLOT_TICK_LEN 4.0

typedef struct {
    double x, y, width, height;
} FmPlotBox;

typedef enum {
    FM_PLOT_TEXT_TITLE = 0,
    FM_PLOT_TEXT_STATS,
    FM_PLOT_TEXT_AXIS_LABEL,
    FM_PLOT_TEXT_TICK,
    FM_PLOT_TEXT_LEGEND,
} FmPlotTextRole;

/* Size in pixels of text as it will be drawn (one line). */
typedef void (*FmPlotMeasureFunc)(gpointer user, FmPlotTextRole role, const char *text,
                                  double *width, double *height);

typedef struct {
    double lo, hi;     /* the range shown; log: both > 0 (else made so) */
    gboolean log;      /* ticks at decades (and 2, 5 within one when it is short) */
    const char *label; /* "time (ns)", or NULL */
} FmPlotAxisSpec;

typedef struct {
    double width, height; /* of the widget */
    FmPlotAxisSpec x, y;
    /* A strip under the data sharing its x axis (the decay's residuals): strip_fraction of the
     * data height, 0 for none; its own y axis and label. */
    FmPlotAxisSpec strip;
    double strip_fraction;
    const char *title; /* first to go after the statistics when space runs out */
    const char *stats; /* "τ 2.01 ns · χ²ᵣ 1.02": the first text to go */
    const char *const *legend;
    int n_legend;
    /* Where data are drawn in the main rectangle: cols x rows cells (row 0 at its top), non-zero
     * where something is; lets the legend sit in an empty corner. NULL: not known. */
    const guint8 *occupancy;
    int occupancy_cols, occupancy_rows;
    double aspect; /* > 0: pixels per x unit over pixels per y unit (phasor: 1); 0 free */
    double min_data_width, min_data_height; /* the least readable data area; 0: defaults */
    FmPlotMeasureFunc measure;
    gpointer measure_user;
} FmPlotSpec;

typedef struct {
    double value, px;               /* value and its pixel coordinate along the axis */
    char label[FM_PLOT_TICK_CHARS]; /* "" when this tick is not labelled */
    FmPlotBox box;                  /* of the label (width 0 when unlabelled) */
} FmPlotTick;

typedef struct {
    double lo, hi;
    gboolean log;
    double px_lo, px_hi; /* pixel coordinates of lo and hi (y: px_lo is the bottom) */
    int n_ticks;
    FmPlotTick ticks[FM_PLOT_MAX_TICKS];
} FmPlotAxis;

typedef struct {
    char *text; /* NULL when dropped or not asked for; ellipsized to fit */
    FmPlotBox box;
    gboolean vertical; /* drawn rotated a quarter turn counter-clockwise inside box */
} FmPlotText;

typedef struct {
    FmPlotBox data;  /* main data rectangle (width or height 0: nothing fits) */
    FmPlotBox strip; /* the strip under it, height 0 when none */
    FmPlotAxis x, y, strip_y;
    FmPlotText title, stats, x_label, y_label, strip_label;
    int n_legend;     /* entries placed (0: no legend shown) */
    FmPlotBox legend; /* the legend's frame */
    gboolean legend_inside;
    FmPlotText legend_text[FM_PLOT_MAX_LEGEND];
    FmPlotBox legend_swatch[FM_PLOT_MAX_LEGEND];
    int dropped; /* how many steps of the drop order were needed (0: everything shown) */
} FmPlotLayout;

/* Lays out spec into layout (clear it with fm_plot_layout_clear). */
void fm_plot_layout_compute(const FmPlotSpec *spec, FmPlotLayout *layout);
void fm_plot_layout_clear(FmPlotLayout *layout);

/* Pixel coordinate of value on an axis laid out (NaN for a value <= 0 on a log axis), and back. */
double fm_plot_axis_to_px(const FmPlotAxis *axis, double value);
double fm_plot_axis_from_px(const FmPlotAxis *axis, double px);

/* Every text box of a layout (tick labels, titles, legend entries) into boxes (at most max);
 * returns how many there are. For tests and for drawing checks. */
int fm_plot_layout_text_boxes(const FmPlotLayout *layout, FmPlotBox *boxes, const char **texts,
                              int max);

/* Tick labels for values on an axis with spacing step (linear) or a log axis: one format per
 * axis (same decimals; k/M/G beyond 1e4, a common exponent below 1e-2; never "-0"). */
void fm_plot_format_ticks(const double *values, int n, double step, gboolean log,
                          char labels[][FM_PLOT_TICK_CHARS]);

/* Marks the cells of an occupancy grid (cols x rows over the ranges of x and y, row 0 at the
 * top) that the segment from (x0, y0) to (x1, y1) crosses; pass the same point twice for a
 * marker. Points outside the ranges or not finite are skipped. */
void fm_plot_occupancy_mark(guint8 *grid, int cols, int rows, const FmPlotAxisSpec *x,
                            const FmPlotAxisSpec *y, double x0, double y0, double x1, double y1);

G_END_DECLS
