/* The layout of every plot view: margins from measured texts, ticks chosen so that their labels
 * fit, a drop order for small widgets and a last pass that removes whatever would still overlap
 * or leave the widget. */
#include "app/gui/plot-layout.h"
#include "app/gui/plot-ticks.h"

#include <math.h>
#include <string.h>

#define PAD 4.0          /* widget edge to any text */
#define TICK_GAP 2.0     /* tick mark to its label */
#define LABEL_GAP 4.0    /* tick labels to the axis label */
#define HEADER_GAP 4.0   /* title and statistics lines to what follows */
#define X_LABEL_GAP 10.0 /* between neighbouring x tick labels */
#define Y_LABEL_GAP 3.0  /* between neighbouring y tick labels */
#define LEGEND_PAD 4.0   /* inside the legend frame */
#define LEGEND_GAP 12.0  /* between entries in a row */
#define MIN_DATA_W 48.0
#define MIN_DATA_H 24.0

enum { LEGEND_NONE, LEGEND_ABOVE, LEGEND_RIGHT, LEGEND_INSIDE };

typedef struct {
    gboolean title, stats, axis_labels, tick_labels;
    int legend;
    int corner; /* LEGEND_INSIDE: 0 top right, 1 top left, 2 bottom right, 3 bottom left */
} Level;

/* ---- small helpers ----------------------------------------------------------------------- */

static void measure(const FmPlotSpec *s, FmPlotTextRole role, const char *text, double *w,
                    double *h)
{
    *w = *h = 0;
    if (text != NULL && *text != '\0')
        s->measure(s->measure_user, role, text, w, h);
}

static double text_height(const FmPlotSpec *s, FmPlotTextRole role)
{
    double w, h;
    measure(s, role, "0g", &w, &h);
    return h;
}

static gboolean box_empty(const FmPlotBox *b)
{
    return !(b->width > 0 && b->height > 0);
}

static gboolean boxes_overlap(const FmPlotBox *a, const FmPlotBox *b)
{
    /* touching edges (a rounding hair apart) is not overlapping */
    const double eps = 0.01;
    return !box_empty(a) && !box_empty(b) && a->x + eps < b->x + b->width &&
           b->x + eps < a->x + a->width && a->y + eps < b->y + b->height &&
           b->y + eps < a->y + a->height;
}

static gboolean box_inside(const FmPlotBox *b, double width, double height)
{
    const double eps = 0.01;
    return b->x >= -eps && b->y >= -eps && b->x + b->width <= width + eps &&
           b->y + b->height <= height + eps;
}

/* The text itself when it fits max_w, else its longest prefix with "…" that does; NULL when not
 * even five characters would stay (a stub says nothing). */
static char *fit_text(const FmPlotSpec *s, FmPlotTextRole role, const char *text, double max_w,
                      double *w, double *h)
{
    *w = *h = 0;
    if (text == NULL || *text == '\0' || max_w <= 0)
        return NULL;
    measure(s, role, text, w, h);
    if (*w <= max_w)
        return g_strdup(text);
    glong n = g_utf8_strlen(text, -1), lo = 0, hi = n - 1;
    char *best = NULL;
    while (lo <= hi) { /* the longest prefix that fits: widths grow with the prefix */
        glong mid = (lo + hi) / 2;
        const char *end = g_utf8_offset_to_pointer(text, mid);
        g_autofree char *prefix = g_strndup(text, end - text);
        g_strchomp(prefix);
        char *candidate = g_strconcat(prefix, "…", NULL);
        double cw, ch;
        measure(s, role, candidate, &cw, &ch);
        if (cw <= max_w) {
            g_free(best);
            best = candidate;
            *w = cw;
            *h = ch;
            lo = mid + 1;
        } else {
            g_free(candidate);
            hi = mid - 1;
        }
    }
    if (best != NULL && g_utf8_strlen(best, -1) < 6) {
        g_clear_pointer(&best, g_free);
        *w = *h = 0;
    }
    return best;
}

static void set_text(FmPlotText *t, char *text, double x, double y, double w, double h,
                     gboolean vertical)
{
    g_free(t->text);
    t->text = text;
    t->box = (FmPlotBox){x, y, w, h};
    t->vertical = vertical;
    if (text == NULL)
        t->box = (FmPlotBox){0, 0, 0, 0};
}

static void fix_axis(const FmPlotAxisSpec *in, FmPlotAxisSpec *out)
{
    *out = *in;
    double lo = in->lo, hi = in->hi;
    if (out->log) {
        if (!(hi > 0) || !isfinite(hi))
            hi = 10;
        if (!(lo > 0) || !isfinite(lo) || lo >= hi)
            lo = hi / 10;
    } else {
        if (!isfinite(lo) || !isfinite(hi)) {
            lo = 0;
            hi = 1;
        } else if (hi <= lo) { /* one value: a window of its own magnitude around it */
            double half = fabs(lo) > 0 ? 0.1 * fabs(lo) : 1.0;
            lo -= half;
            hi += half;
        }
    }
    out->lo = lo;
    out->hi = hi;
}

/* Fraction of the way from lo to hi, on a log or linear scale. */
static double axis_fraction(double lo, double hi, gboolean log_scale, double v)
{
    if (log_scale)
        return v > 0 ? (log10(v) - log10(lo)) / (log10(hi) - log10(lo)) : NAN;
    return (v - lo) / (hi - lo);
}

double fm_plot_axis_to_px(const FmPlotAxis *a, double v)
{
    return a->px_lo + axis_fraction(a->lo, a->hi, a->log, v) * (a->px_hi - a->px_lo);
}

double fm_plot_axis_from_px(const FmPlotAxis *a, double px)
{
    double f = a->px_hi != a->px_lo ? (px - a->px_lo) / (a->px_hi - a->px_lo) : 0;
    if (a->log)
        return pow(10, log10(a->lo) + f * (log10(a->hi) - log10(a->lo)));
    return a->lo + f * (a->hi - a->lo);
}

/* Fills the axis's ticks from c with label boxes; labelled every `every` ticks (0: none).
 * horizontal: labels under the axis, their tops at `at`; else right-aligned ending at `at`. */
static void place_ticks(const FmPlotSpec *s, FmPlotAxis *a, const FmPlotTickSet *c, int every,
                        gboolean horizontal, double at)
{
    char labels[FM_PLOT_MAX_TICKS][FM_PLOT_TICK_CHARS];
    fm_plot_format_ticks(c->values, c->n, c->step, a->log, labels);
    a->n_ticks = c->n;
    for (int i = 0; i < c->n; i++) {
        FmPlotTick *t = &a->ticks[i];
        t->value = c->values[i];
        t->px = fm_plot_axis_to_px(a, t->value);
        t->box = (FmPlotBox){0, 0, 0, 0};
        t->label[0] = '\0';
        if (every <= 0 || i % every != 0)
            continue;
        g_strlcpy(t->label, labels[i], FM_PLOT_TICK_CHARS);
        double w, h;
        measure(s, FM_PLOT_TEXT_TICK, t->label, &w, &h);
        t->box = horizontal ? (FmPlotBox){t->px - w / 2, at, w, h}
                            : (FmPlotBox){at - w, t->px - h / 2, w, h};
    }
}

/* TRUE when the labelled ticks keep their distance and stay within [min_px, max_px] across. */
static gboolean ticks_fit(const FmPlotAxis *a, gboolean horizontal, double min_px, double max_px)
{
    const FmPlotBox *prev = NULL;
    for (int i = 0; i < a->n_ticks; i++) {
        const FmPlotBox *b = &a->ticks[i].box;
        if (box_empty(b))
            continue;
        double start = horizontal ? b->x : b->y, end = start + (horizontal ? b->width : b->height);
        if (start < min_px - 0.01 || end > max_px + 0.01)
            return FALSE;
        if (prev != NULL) {
            double gap = horizontal ? X_LABEL_GAP : Y_LABEL_GAP;
            gboolean apart = horizontal ? prev->x + prev->width + gap <= b->x
                                        : fabs(prev->y - b->y) >= b->height + gap;
            if (!apart)
                return FALSE;
        }
        prev = b;
    }
    return TRUE;
}

/* Chooses the densest ticks whose labels all fit, else every other label, else one tick, else
 * marks without labels. [min_px, max_px]: where labels may lie along the axis. */
static void layout_axis(const FmPlotSpec *s, FmPlotAxis *a, gboolean horizontal, gboolean labels,
                        double at, double min_px, double max_px)
{
    double length = fabs(a->px_hi - a->px_lo);
    /* an airy axis first (a tick every 48 px across, 24 up), a denser one where that leaves
     * fewer than two labels: the labels' own spacing decides */
    int airy = CLAMP((int)(length / (horizontal ? 48.0 : 24.0)), 3, 12);
    int dense = CLAMP((int)(length / (horizontal ? 24.0 : 14.0)), 3, FM_PLOT_MAX_TICKS);
    FmPlotTickSet cand[32];
    int n = 0;
    a->n_ticks = 0;
    for (int pass = 0; pass < 2; pass++) {
        n = fm_plot_tick_candidates(a->lo, a->hi, a->log, pass == 0 ? airy : dense, cand,
                                    G_N_ELEMENTS(cand));
        for (int i = 0; labels && i < n; i++) /* every label, two ticks or more */
            if (cand[i].n >= 2) {
                place_ticks(s, a, &cand[i], 1, horizontal, at);
                if (ticks_fit(a, horizontal, min_px, max_px))
                    return;
            }
    }
    if (n == 0)
        return;
    for (int i = 0; labels && i < n; i++) /* every other label */
        if (cand[i].n >= 3) {
            place_ticks(s, a, &cand[i], 2, horizontal, at);
            if (ticks_fit(a, horizontal, min_px, max_px))
                return;
        }
    for (int i = 0; labels && i < n; i++) /* a single labelled tick */
        if (cand[i].n >= 1) {
            FmPlotTickSet one = cand[i];
            one.n = 1;
            one.values[0] = cand[i].values[cand[i].n / 2];
            place_ticks(s, a, &one, 1, horizontal, at);
            if (ticks_fit(a, horizontal, min_px, max_px))
                return;
        }
    place_ticks(s, a, &cand[n - 1], 0, horizontal, at);
}

/* ---- legend ------------------------------------------------------------------------------ */

typedef struct {
    char *text[FM_PLOT_MAX_LEGEND];
    double w[FM_PLOT_MAX_LEGEND], h[FM_PLOT_MAX_LEGEND];
    int n;
    double row_h, col_w; /* one row's height; widest entry with its swatch */
} Legend;

static void legend_measure(const FmPlotSpec *s, double max_text_w, Legend *lg)
{
    memset(lg, 0, sizeof *lg);
    for (int i = 0; i < MIN(s->n_legend, FM_PLOT_MAX_LEGEND); i++) {
        double w, h;
        char *t = fit_text(s, FM_PLOT_TEXT_LEGEND, s->legend[i], max_text_w, &w, &h);
        if (t == NULL)
            continue;
        lg->text[lg->n] = t;
        lg->w[lg->n] = w;
        lg->h[lg->n] = h;
        lg->row_h = MAX(lg->row_h, h);
        lg->col_w = MAX(lg->col_w, FM_PLOT_SWATCH_W + 4 + w);
        lg->n++;
    }
}

static void legend_free(Legend *lg)
{
    for (int i = 0; i < lg->n; i++)
        g_free(lg->text[i]);
    lg->n = 0;
}

/* The legend as a column at (x, y) into the layout (frame included). */
static void legend_column(const Legend *lg, double x, double y, FmPlotLayout *L)
{
    L->n_legend = lg->n;
    L->legend = (FmPlotBox){x, y, lg->col_w + 2 * LEGEND_PAD, lg->n * lg->row_h + 2 * LEGEND_PAD};
    for (int i = 0; i < lg->n; i++) {
        double ry = y + LEGEND_PAD + i * lg->row_h;
        L->legend_swatch[i] = (FmPlotBox){x + LEGEND_PAD, ry, FM_PLOT_SWATCH_W, lg->row_h};
        set_text(&L->legend_text[i], g_strdup(lg->text[i]), x + LEGEND_PAD + FM_PLOT_SWATCH_W + 4,
                 ry + (lg->row_h - lg->h[i]) / 2, lg->w[i], lg->h[i], FALSE);
    }
}

/* Rows of entries flowing left to right within width: how many rows. */
static int legend_rows(const Legend *lg, double width)
{
    int rows = lg->n > 0 ? 1 : 0;
    double x = 0;
    for (int i = 0; i < lg->n; i++) {
        double w = FM_PLOT_SWATCH_W + 4 + lg->w[i];
        if (x > 0 && x + w > width) {
            rows++;
            x = 0;
        }
        x += w + LEGEND_GAP;
    }
    return rows;
}

static void legend_flow(const Legend *lg, double x0, double y0, double width, FmPlotLayout *L)
{
    L->n_legend = lg->n;
    int rows = legend_rows(lg, width);
    L->legend = (FmPlotBox){x0, y0, width, rows * lg->row_h};
    double x = 0, y = y0;
    for (int i = 0; i < lg->n; i++) {
        double w = FM_PLOT_SWATCH_W + 4 + lg->w[i];
        if (x > 0 && x + w > width) {
            y += lg->row_h;
            x = 0;
        }
        L->legend_swatch[i] = (FmPlotBox){x0 + x, y, FM_PLOT_SWATCH_W, lg->row_h};
        set_text(&L->legend_text[i], g_strdup(lg->text[i]), x0 + x + FM_PLOT_SWATCH_W + 4,
                 y + (lg->row_h - lg->h[i]) / 2, lg->w[i], lg->h[i], FALSE);
        x += w + LEGEND_GAP;
    }
}

/* Occupied cells under a box of the data rectangle. */
static int occupied_under(const FmPlotSpec *s, const FmPlotBox *data, const FmPlotBox *b)
{
    int cols = s->occupancy_cols, rows = s->occupancy_rows, count = 0;
    int c0 = (int)floor((b->x - data->x) / data->width * cols);
    int c1 = (int)ceil((b->x + b->width - data->x) / data->width * cols);
    int r0 = (int)floor((b->y - data->y) / data->height * rows);
    int r1 = (int)ceil((b->y + b->height - data->y) / data->height * rows);
    for (int r = MAX(r0, 0); r < MIN(r1, rows); r++)
        for (int c = MAX(c0, 0); c < MIN(c1, cols); c++)
            count += s->occupancy[r * cols + c] != 0;
    return count;
}

/* ---- one attempt --------------------------------------------------------------------------- */

static void layout_reset(FmPlotLayout *L)
{
    fm_plot_layout_clear(L);
    memset(L, 0, sizeof *L);
}

/* Lays out with the texts that lv keeps; FALSE when the data area stays under the minimum. */
static gboolean layout_level(const FmPlotSpec *s, const FmPlotAxisSpec *xs,
                             const FmPlotAxisSpec *ys, const FmPlotAxisSpec *ss, const Level *lv,
                             const Legend *lg, FmPlotLayout *L)
{
    layout_reset(L);
    const double W = s->width, H = s->height;
    const double min_w = s->min_data_width > 0 ? s->min_data_width : MIN_DATA_W;
    const double min_h = s->min_data_height > 0 ? s->min_data_height : MIN_DATA_H;
    const double tick_h = text_height(s, FM_PLOT_TEXT_TICK);
    const double label_h = text_height(s, FM_PLOT_TEXT_AXIS_LABEL);
    const gboolean strip = s->strip_fraction > 0;
    const double avail_w = W - 2 * PAD;

    /* Header: title left, statistics right on one line, or on two when they do not share. */
    double top = PAD;
    const char *title = lv->title ? s->title : NULL, *stats = lv->stats ? s->stats : NULL;
    double tw = 0, th = 0, sw = 0, sh = 0;
    measure(s, FM_PLOT_TEXT_TITLE, title, &tw, &th);
    measure(s, FM_PLOT_TEXT_STATS, stats, &sw, &sh);
    if (title != NULL && *title && stats != NULL && *stats && tw + 12 + sw <= avail_w) {
        set_text(&L->title, g_strdup(title), PAD, top, tw, th, FALSE);
        set_text(&L->stats, g_strdup(stats), W - PAD - sw, top, sw, sh, FALSE);
        top += MAX(th, sh) + HEADER_GAP;
    } else {
        char *t = fit_text(s, FM_PLOT_TEXT_TITLE, title, avail_w, &tw, &th);
        if (t != NULL) {
            set_text(&L->title, t, PAD, top, tw, th, FALSE);
            top += th + HEADER_GAP;
        }
        char *st = fit_text(s, FM_PLOT_TEXT_STATS, stats, avail_w, &sw, &sh);
        if (st != NULL) {
            set_text(&L->stats, st, W - PAD - sw, top, sw, sh, FALSE);
            top += sh + HEADER_GAP;
        }
    }
    double legend_top = top;
    if (lv->legend == LEGEND_ABOVE)
        top += legend_rows(lg, avail_w) * lg->row_h + HEADER_GAP;

    /* Bottom: x tick labels under their marks (clear of the lowest y label), the x label. */
    double bottom = H - PAD;
    const gboolean x_label = lv->axis_labels && xs->label != NULL && *xs->label;
    if (x_label)
        bottom -= label_h + LABEL_GAP;
    const double tick_off = MAX(FM_PLOT_TICK_LEN + TICK_GAP, tick_h / 2 + 1);
    bottom -= lv->tick_labels ? tick_off + tick_h : FM_PLOT_TICK_LEN;

    double left = PAD;
    const gboolean y_labels =
        lv->axis_labels && ((ys->label && *ys->label) || (strip && ss->label && *ss->label));
    if (y_labels)
        left += label_h + LABEL_GAP;
    double right = W - PAD;
    if (lv->legend == LEGEND_RIGHT)
        right -= lg->col_w + 2 * LEGEND_PAD + 6;
    const double data_top = top + (lv->tick_labels ? tick_h / 2 : 0);
    const double strip_gap = strip ? tick_h + 4 : 0;

    double ytick_w = 0, overhang = 0;
    for (int iter = 0; iter < 4; iter++) {
        double dl = left + (lv->tick_labels ? ytick_w + TICK_GAP : 0) + FM_PLOT_TICK_LEN;
        double dr = right - overhang;
        double dh = bottom - data_top - strip_gap;
        if (dr - dl < 1 || dh < 1)
            return FALSE;
        double strip_h = strip ? floor(dh * s->strip_fraction) : 0;
        L->data = (FmPlotBox){dl, data_top, dr - dl, dh - strip_h};
        if (s->aspect > 0) { /* equal scales: shrink one side and centre */
            double want = s->aspect * (xs->hi - xs->lo) / (ys->hi - ys->lo);
            if (L->data.width / L->data.height > want) {
                double w = L->data.height * want;
                L->data.x += (L->data.width - w) / 2;
                L->data.width = w;
            } else {
                double h = L->data.width / want;
                L->data.y += (L->data.height - h) / 2;
                L->data.height = h;
            }
        }
        L->strip = strip ? (FmPlotBox){L->data.x, L->data.y + L->data.height + strip_gap,
                                       L->data.width, strip_h}
                         : (FmPlotBox){L->data.x, L->data.y + L->data.height, L->data.width, 0};
        const FmPlotBox *low = strip ? &L->strip : &L->data;
        double base = low->y + low->height;

        L->x = (FmPlotAxis){.lo = xs->lo,
                            .hi = xs->hi,
                            .log = xs->log,
                            .px_lo = L->data.x,
                            .px_hi = L->data.x + L->data.width};
        L->y = (FmPlotAxis){.lo = ys->lo,
                            .hi = ys->hi,
                            .log = ys->log,
                            .px_lo = L->data.y + L->data.height,
                            .px_hi = L->data.y};
        /* the last x label may stick out right of the data: the next round makes room */
        layout_axis(s, &L->x, TRUE, lv->tick_labels, base + tick_off, PAD, INFINITY);
        double y_at = L->data.x - FM_PLOT_TICK_LEN - TICK_GAP;
        layout_axis(s, &L->y, FALSE, lv->tick_labels, y_at, top,
                    L->data.y + L->data.height + (strip ? strip_gap / 2 : tick_off));
        if (strip) {
            L->strip_y = (FmPlotAxis){.lo = ss->lo,
                                      .hi = ss->hi,
                                      .log = ss->log,
                                      .px_lo = L->strip.y + L->strip.height,
                                      .px_hi = L->strip.y};
            layout_axis(s, &L->strip_y, FALSE, lv->tick_labels, y_at, L->strip.y - strip_gap / 2,
                        base + tick_off);
        }
        double new_w = 0, new_over = 0;
        for (int i = 0; i < L->y.n_ticks; i++)
            new_w = MAX(new_w, L->y.ticks[i].box.width);
        for (int i = 0; i < L->strip_y.n_ticks; i++)
            new_w = MAX(new_w, L->strip_y.ticks[i].box.width);
        for (int i = 0; i < L->x.n_ticks; i++) {
            const FmPlotBox *b = &L->x.ticks[i].box;
            if (!box_empty(b))
                new_over = MAX(new_over, b->x + b->width - (L->data.x + L->data.width));
        }
        new_over = MIN(new_over, avail_w / 4);
        if (fabs(new_w - ytick_w) < 0.5 && fabs(new_over - overhang) < 0.5)
            break;
        ytick_w = new_w;
        overhang = new_over;
    }
    if (L->data.width < min_w || L->data.height < min_h || (strip && L->strip.height < 12))
        return FALSE;

    /* Axis labels, ellipsized to the extent of their axis. */
    if (x_label) {
        double w, h;
        char *t = fit_text(s, FM_PLOT_TEXT_AXIS_LABEL, xs->label, avail_w, &w, &h);
        double cx = CLAMP(L->data.x + L->data.width / 2, PAD + w / 2, W - PAD - w / 2);
        set_text(&L->x_label, t, cx - w / 2, H - PAD - h, w, h, FALSE);
    }
    /* the y labels beside the tick labels (the data may sit right of its column: aspect) */
    const double y_label_x =
        MAX(PAD, L->data.x - FM_PLOT_TICK_LEN - (lv->tick_labels ? ytick_w + TICK_GAP : 0) -
                     LABEL_GAP - label_h);
    if (lv->axis_labels && ys->label && *ys->label) {
        double w, h;
        char *t = fit_text(s, FM_PLOT_TEXT_AXIS_LABEL, ys->label, L->data.height, &w, &h);
        set_text(&L->y_label, t, y_label_x, L->data.y + (L->data.height - w) / 2, h, w, TRUE);
    }
    if (strip && lv->axis_labels && ss->label && *ss->label) {
        double w, h;
        char *t = fit_text(s, FM_PLOT_TEXT_AXIS_LABEL, ss->label, L->strip.height, &w, &h);
        set_text(&L->strip_label, t, y_label_x, L->strip.y + (L->strip.height - w) / 2, h, w, TRUE);
    }

    /* Legend where this attempt puts it. */
    double lw = lg->col_w + 2 * LEGEND_PAD, lh = lg->n * lg->row_h + 2 * LEGEND_PAD;
    if (lv->legend == LEGEND_ABOVE) {
        legend_flow(lg, PAD, legend_top, avail_w, L);
    } else if (lv->legend == LEGEND_RIGHT) {
        if (L->data.y + lh > H - PAD)
            return FALSE;
        legend_column(lg, W - PAD - lw, L->data.y, L);
    } else if (lv->legend == LEGEND_INSIDE) {
        if (lw + 8 > L->data.width || lh + 8 > L->data.height)
            return FALSE;
        gboolean at_right = lv->corner == 0 || lv->corner == 2;
        gboolean at_top = lv->corner < 2;
        double x = at_right ? L->data.x + L->data.width - lw - 4 : L->data.x + 4;
        double y = at_top ? L->data.y + 4 : L->data.y + L->data.height - lh - 4;
        legend_column(lg, x, y, L);
        L->legend_inside = TRUE;
    }
    return TRUE;
}

/* ---- the last pass ------------------------------------------------------------------------- */

typedef struct {
    FmPlotBox *box;
    char *label;      /* a tick's label buffer, or NULL */
    FmPlotText *text; /* or a text, or NULL */
    int priority;     /* the lower goes first */
} Item;

static void drop_item(Item *it)
{
    if (it->label != NULL)
        it->label[0] = '\0';
    if (it->text != NULL) {
        g_clear_pointer(&it->text->text, g_free);
    }
    *it->box = (FmPlotBox){0, 0, 0, 0};
}

static int collect(FmPlotLayout *L, Item *items, int max)
{
    int n = 0;
    FmPlotAxis *axes[] = {&L->strip_y, &L->y, &L->x};
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < axes[a]->n_ticks && n < max; i++)
            items[n++] = (Item){&axes[a]->ticks[i].box, axes[a]->ticks[i].label, NULL, a};
    struct {
        FmPlotText *t;
        int priority;
    } texts[] = {
        {&L->stats, 3}, {&L->title, 4}, {&L->strip_label, 5}, {&L->x_label, 5}, {&L->y_label, 6}};
    for (gsize i = 0; i < G_N_ELEMENTS(texts) && n < max; i++)
        items[n++] = (Item){&texts[i].t->box, NULL, texts[i].t, texts[i].priority};
    for (int i = 0; i < L->n_legend && n < max; i++)
        items[n++] = (Item){&L->legend_text[i].box, NULL, &L->legend_text[i], 7};
    return n;
}

/* Whatever still overlaps or leaves the widget goes, the less important first. */
static void resolve(const FmPlotSpec *s, FmPlotLayout *L)
{
    Item items[3 * FM_PLOT_MAX_TICKS + 8 + FM_PLOT_MAX_LEGEND];
    int n = collect(L, items, G_N_ELEMENTS(items));
    for (int i = 0; i < n; i++)
        if (!box_empty(items[i].box) && !box_inside(items[i].box, s->width, s->height))
            drop_item(&items[i]);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (boxes_overlap(items[i].box, items[j].box))
                drop_item(items[i].priority <= items[j].priority ? &items[i] : &items[j]);
    /* a legend frame over another text: the legend goes (its entries never overlap it) */
    if (L->n_legend > 0) {
        gboolean clash = !box_inside(&L->legend, s->width, s->height);
        for (int i = 0; i < n && !clash; i++)
            clash = items[i].priority < 7 && boxes_overlap(&L->legend, items[i].box);
        gboolean empty = TRUE;
        for (int i = 0; i < L->n_legend; i++)
            empty = empty && L->legend_text[i].text == NULL;
        if (clash || empty) {
            for (int i = 0; i < L->n_legend; i++)
                set_text(&L->legend_text[i], NULL, 0, 0, 0, 0, FALSE);
            L->n_legend = 0;
            L->legend = (FmPlotBox){0, 0, 0, 0};
        }
    }
}

/* ---- public ------------------------------------------------------------------------------ */

static double data_area(const FmPlotLayout *L)
{
    return L->data.width * L->data.height + L->strip.width * L->strip.height;
}

/* The legend in an empty corner of the data; else above or right of it, whichever leaves the
 * larger data area, as long as it takes no more than a third of the widget; else in the corner
 * it covers least, when it covers a small part of the data; else none. */
static void place_legend(const FmPlotSpec *s, const FmPlotAxisSpec *xs, const FmPlotAxisSpec *ys,
                         const FmPlotAxisSpec *ss, const Level *base, const Legend *lg,
                         FmPlotLayout *L)
{
    const gboolean known = s->occupancy != NULL && s->occupancy_cols > 0 && s->occupancy_rows > 0;
    const double lw = lg->col_w + 2 * LEGEND_PAD, lh = lg->n * lg->row_h + 2 * LEGEND_PAD;
    FmPlotLayout best;
    memset(&best, 0, sizeof best);
    int best_count = G_MAXINT;
    for (int corner = 0; known && corner < 4 && best_count > 0; corner++) {
        Level lv = *base;
        lv.legend = LEGEND_INSIDE;
        lv.corner = corner;
        FmPlotLayout trial;
        memset(&trial, 0, sizeof trial);
        int count = layout_level(s, xs, ys, ss, &lv, lg, &trial)
                        ? occupied_under(s, &trial.data, &trial.legend)
                        : G_MAXINT;
        if (count < best_count) {
            fm_plot_layout_clear(&best);
            best = trial;
            best_count = count;
        } else {
            fm_plot_layout_clear(&trial);
        }
    }
    if (best_count == 0) {
        fm_plot_layout_clear(L);
        *L = best;
        return;
    }
    FmPlotLayout above, right;
    memset(&above, 0, sizeof above);
    memset(&right, 0, sizeof right);
    Level la = *base, lr = *base;
    la.legend = LEGEND_ABOVE;
    lr.legend = LEGEND_RIGHT;
    gboolean ok_a =
        layout_level(s, xs, ys, ss, &la, lg, &above) && above.legend.height <= s->height / 3;
    gboolean ok_r = lw <= s->width / 3 && layout_level(s, xs, ys, ss, &lr, lg, &right);
    FmPlotLayout *pick = NULL;
    if (ok_a && (!ok_r || data_area(&above) >= data_area(&right)))
        pick = &above;
    else if (ok_r)
        pick = &right;
    else if (best_count < G_MAXINT && lw * lh <= 0.3 * best.data.width * best.data.height)
        pick = &best;
    if (pick != NULL) {
        fm_plot_layout_clear(L);
        *L = *pick;
        memset(pick, 0, sizeof *pick);
    }
    fm_plot_layout_clear(&above);
    fm_plot_layout_clear(&right);
    fm_plot_layout_clear(&best);
}

void fm_plot_layout_compute(const FmPlotSpec *s, FmPlotLayout *L)
{
    memset(L, 0, sizeof *L);
    FmPlotAxisSpec xs, ys, ss;
    fix_axis(&s->x, &xs);
    fix_axis(&s->y, &ys);
    fix_axis(&s->strip, &ss);
    static const Level levels[] = {
        {TRUE, TRUE, TRUE, TRUE, 0, 0},     {TRUE, FALSE, TRUE, TRUE, 0, 0},
        {FALSE, FALSE, TRUE, TRUE, 0, 0},   {FALSE, FALSE, FALSE, TRUE, 0, 0},
        {FALSE, FALSE, FALSE, FALSE, 0, 0},
    };
    Legend lg;
    legend_measure(s, MAX(s->width * 0.45, 40), &lg);
    int k = 0;
    for (k = 0; k < (int)G_N_ELEMENTS(levels); k++)
        if (layout_level(s, &xs, &ys, &ss, &levels[k], &lg, L))
            break;
    if (k == G_N_ELEMENTS(levels)) {
        /* nothing fits the minimum: the bare data area that is left, no texts */
        k--;
        layout_level(s, &xs, &ys, &ss, &levels[k], &lg, L);
        if (L->data.width < 1 || L->data.height < 1)
            L->data = L->strip = (FmPlotBox){0, 0, 0, 0};
    } else if (lg.n > 0) {
        place_legend(s, &xs, &ys, &ss, &levels[k], &lg, L);
    }
    legend_free(&lg);
    L->dropped = k;
    resolve(s, L);
}

void fm_plot_layout_clear(FmPlotLayout *L)
{
    FmPlotText *texts[] = {&L->title, &L->stats, &L->x_label, &L->y_label, &L->strip_label};
    for (gsize i = 0; i < G_N_ELEMENTS(texts); i++)
        g_clear_pointer(&texts[i]->text, g_free);
    for (int i = 0; i < FM_PLOT_MAX_LEGEND; i++)
        g_clear_pointer(&L->legend_text[i].text, g_free);
}

int fm_plot_layout_text_boxes(const FmPlotLayout *L, FmPlotBox *boxes, const char **texts, int max)
{
    int n = 0;
#define ADD(b, t)                                                                                  \
    do {                                                                                           \
        if (n < max) {                                                                             \
            boxes[n] = (b);                                                                        \
            if (texts != NULL)                                                                     \
                texts[n] = (t);                                                                    \
        }                                                                                          \
        n++;                                                                                       \
    } while (0)
    const FmPlotAxis *axes[] = {&L->x, &L->y, &L->strip_y};
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < axes[a]->n_ticks; i++)
            if (axes[a]->ticks[i].label[0] != '\0')
                ADD(axes[a]->ticks[i].box, axes[a]->ticks[i].label);
    const FmPlotText *t[] = {&L->title, &L->stats, &L->x_label, &L->y_label, &L->strip_label};
    for (gsize i = 0; i < G_N_ELEMENTS(t); i++)
        if (t[i]->text != NULL)
            ADD(t[i]->box, t[i]->text);
    for (int i = 0; i < L->n_legend; i++)
        if (L->legend_text[i].text != NULL)
            ADD(L->legend_text[i].box, L->legend_text[i].text);
#undef ADD
    return n;
}

void fm_plot_occupancy_mark(guint8 *grid, int cols, int rows, const FmPlotAxisSpec *x,
                            const FmPlotAxisSpec *y, double x0, double y0, double x1, double y1)
{
    double fx0 = axis_fraction(x->lo, x->hi, x->log, x0),
           fx1 = axis_fraction(x->lo, x->hi, x->log, x1);
    double fy0 = axis_fraction(y->lo, y->hi, y->log, y0),
           fy1 = axis_fraction(y->lo, y->hi, y->log, y1);
    if (!isfinite(fx0) || !isfinite(fx1) || !isfinite(fy0) || !isfinite(fy1))
        return;
    /* samples every half cell along the segment */
    double span = MAX(fabs(fx1 - fx0) * cols, fabs(fy1 - fy0) * rows);
    int steps = MIN((int)ceil(span * 2), 4 * (cols + rows));
    for (int k = 0; k <= steps; k++) {
        double f = steps > 0 ? (double)k / steps : 0;
        double fx = fx0 + f * (fx1 - fx0), fy = fy0 + f * (fy1 - fy0);
        if (fx < 0 || fx > 1 || fy < 0 || fy > 1)
            continue;
        int c = MIN((int)(fx * cols), cols - 1), r = MIN((int)((1 - fy) * rows), rows - 1);
        grid[r * cols + c] = 1;
    }
}
