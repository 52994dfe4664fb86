/* Cairo drawing helpers shared by the custom-drawn views (decay, histogram, phasor, plots): text,
 * and the axes, texts and legend of a plot laid out by plot-layout.c. */
#include "app/gui/cairo-util.h"

#include <math.h>

void fm_cairo_text(GtkWidget *widget, cairo_t *cr, double x, double y, const char *text,
                   double xalign, double yalign)
{
    PangoLayout *layout = gtk_widget_create_pango_layout(widget, text);
    PangoFontDescription *font = pango_font_description_from_string("Sans 8");
    pango_layout_set_font_description(layout, font);
    int tw, th;
    pango_layout_get_pixel_size(layout, &tw, &th);
    cairo_move_to(cr, x - xalign * tw, y - yalign * th);
    pango_cairo_show_layout(cr, layout);
    pango_font_description_free(font);
    g_object_unref(layout);
}

PangoLayout *fm_cairo_plot_pango(GtkWidget *widget, cairo_t *cr)
{
    PangoLayout *layout = widget != NULL ? gtk_widget_create_pango_layout(widget, NULL)
                                         : pango_cairo_create_layout(cr);
    PangoFontDescription *font = pango_font_description_from_string("Sans 8");
    pango_layout_set_font_description(layout, font);
    pango_font_description_free(font);
    return layout;
}

void fm_cairo_plot_measure(gpointer pango_layout, FmPlotTextRole role, const char *text,
                           double *width, double *height)
{
    PangoLayout *layout = pango_layout;
    int w, h;
    pango_layout_set_text(layout, text, -1);
    pango_layout_get_pixel_size(layout, &w, &h);
    *width = w;
    *height = h;
}

PangoLayout *fm_cairo_plot_compute(GtkWidget *widget, cairo_t *cr, FmPlotSpec *spec,
                                   FmPlotLayout *layout)
{
    PangoLayout *pango = fm_cairo_plot_pango(widget, cr);
    spec->measure = fm_cairo_plot_measure;
    spec->measure_user = pango;
    fm_plot_layout_clear(layout);
    fm_plot_layout_compute(spec, layout);
    return pango;
}

void fm_cairo_pen_to(cairo_t *cr, gboolean *pen_down, double x, double y)
{
    if (*pen_down)
        cairo_line_to(cr, x, y);
    else
        cairo_move_to(cr, x, y);
    *pen_down = TRUE;
}

void fm_plot_colours_dark(FmPlotColours *c)
{
    c->text = (GdkRGBA){1, 1, 1, 0.72};
    c->axis = (GdkRGBA){1, 1, 1, 0.45};
    c->grid = (GdkRGBA){1, 1, 1, 0.08};
    c->panel = (GdkRGBA){0.07, 0.07, 0.08, 1};
}

void fm_plot_colours_from_style(GtkWidget *widget, FmPlotColours *c)
{
    GtkStyleContext *style = gtk_widget_get_style_context(widget);
    GdkRGBA fg;
    gtk_style_context_get_color(style, gtk_style_context_get_state(style), &fg);
    c->text = fg;
    c->axis = fg;
    c->axis.alpha *= 0.7;
    c->grid = fg;
    c->grid.alpha *= 0.12;
    c->panel = (GdkRGBA){0, 0, 0, 0};
}

static void grid_lines(cairo_t *cr, const FmPlotAxis *a, const FmPlotBox *across,
                       gboolean vertical_lines)
{
    for (int i = 0; i < a->n_ticks; i++) {
        double p = round(a->ticks[i].px) + 0.5;
        if (vertical_lines) {
            cairo_move_to(cr, p, across->y);
            cairo_line_to(cr, p, across->y + across->height);
        } else {
            cairo_move_to(cr, across->x, p);
            cairo_line_to(cr, across->x + across->width, p);
        }
    }
}

void fm_cairo_plot_background(cairo_t *cr, const FmPlotLayout *l, const FmPlotColours *c)
{
    const FmPlotBox *boxes[] = {&l->data, &l->strip};
    cairo_save(cr);
    for (int k = 0; k < 2; k++) {
        const FmPlotBox *b = boxes[k];
        if (!(b->width > 0 && b->height > 0))
            continue;
        if (c->panel.alpha > 0) {
            gdk_cairo_set_source_rgba(cr, &c->panel);
            cairo_rectangle(cr, b->x, b->y, b->width, b->height);
            cairo_fill(cr);
        }
        if (c->grid.alpha > 0) {
            gdk_cairo_set_source_rgba(cr, &c->grid);
            cairo_set_line_width(cr, 1);
            grid_lines(cr, &l->x, b, TRUE);
            grid_lines(cr, k == 0 ? &l->y : &l->strip_y, b, FALSE);
            cairo_stroke(cr);
        }
    }
    cairo_restore(cr);
}

static void tick_marks(cairo_t *cr, const FmPlotAxis *a, double at, gboolean horizontal)
{
    for (int i = 0; i < a->n_ticks; i++) {
        double p = round(a->ticks[i].px) + 0.5;
        if (horizontal) {
            cairo_move_to(cr, p, at);
            cairo_line_to(cr, p, at + FM_PLOT_TICK_LEN);
        } else {
            cairo_move_to(cr, at, p);
            cairo_line_to(cr, at - FM_PLOT_TICK_LEN, p);
        }
    }
}

void fm_cairo_plot_text(cairo_t *cr, PangoLayout *pango, const FmPlotText *t)
{
    if (t->text == NULL)
        return;
    pango_layout_set_text(pango, t->text, -1);
    cairo_save(cr);
    if (t->vertical) {
        cairo_translate(cr, t->box.x, t->box.y + t->box.height);
        cairo_rotate(cr, -G_PI / 2);
        cairo_move_to(cr, 0, 0);
    } else {
        cairo_move_to(cr, t->box.x, t->box.y);
    }
    pango_cairo_show_layout(cr, pango);
    cairo_restore(cr);
}

static void tick_labels(cairo_t *cr, PangoLayout *pango, const FmPlotAxis *a)
{
    for (int i = 0; i < a->n_ticks; i++) {
        const FmPlotTick *t = &a->ticks[i];
        if (t->label[0] == '\0')
            continue;
        pango_layout_set_text(pango, t->label, -1);
        cairo_move_to(cr, t->box.x, t->box.y);
        pango_cairo_show_layout(cr, pango);
    }
}

void fm_cairo_plot_axes(cairo_t *cr, PangoLayout *pango, const FmPlotLayout *l,
                        const FmPlotColours *c)
{
    cairo_save(cr);
    cairo_set_line_width(cr, 1);
    gdk_cairo_set_source_rgba(cr, &c->axis);
    const FmPlotBox *boxes[] = {&l->data, &l->strip};
    for (int k = 0; k < 2; k++) {
        const FmPlotBox *b = boxes[k];
        if (!(b->width > 0 && b->height > 0))
            continue;
        cairo_rectangle(cr, round(b->x) + 0.5, round(b->y) + 0.5, round(b->width) - 1,
                        round(b->height) - 1);
        tick_marks(cr, k == 0 ? &l->y : &l->strip_y, b->x, FALSE);
    }
    const FmPlotBox *low = l->strip.height > 0 ? &l->strip : &l->data;
    if (low->width > 0 && low->height > 0)
        tick_marks(cr, &l->x, low->y + low->height, TRUE);
    cairo_stroke(cr);
    gdk_cairo_set_source_rgba(cr, &c->text);
    tick_labels(cr, pango, &l->x);
    tick_labels(cr, pango, &l->y);
    tick_labels(cr, pango, &l->strip_y);
    const FmPlotText *texts[] = {&l->title, &l->stats, &l->x_label, &l->y_label, &l->strip_label};
    for (gsize i = 0; i < G_N_ELEMENTS(texts); i++)
        fm_cairo_plot_text(cr, pango, texts[i]);
    cairo_restore(cr);
}

void fm_cairo_plot_legend(cairo_t *cr, PangoLayout *pango, const FmPlotLayout *l,
                          const FmPlotColours *c, const GdkRGBA *frame_fill,
                          FmPlotSwatchFunc swatch, gpointer user)
{
    if (l->n_legend == 0)
        return;
    cairo_save(cr);
    if (l->legend_inside && frame_fill != NULL) {
        gdk_cairo_set_source_rgba(cr, frame_fill);
        cairo_rectangle(cr, l->legend.x, l->legend.y, l->legend.width, l->legend.height);
        cairo_fill_preserve(cr);
        gdk_cairo_set_source_rgba(cr, &c->grid);
        cairo_set_line_width(cr, 1);
        cairo_stroke(cr);
    }
    for (int i = 0; i < l->n_legend; i++) {
        if (l->legend_text[i].text == NULL)
            continue;
        cairo_save(cr);
        swatch(cr, i, &l->legend_swatch[i], user);
        cairo_restore(cr);
        gdk_cairo_set_source_rgba(cr, &c->text);
        fm_cairo_plot_text(cr, pango, &l->legend_text[i]);
    }
    cairo_restore(cr);
}
