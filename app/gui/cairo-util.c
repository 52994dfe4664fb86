/* Cairo drawing helpers shared by the custom-drawn views (decay, histogram, phasor). */
#include "app/gui/cairo-util.h"

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
