/* Cairo drawing helpers shared by the custom-drawn views (decay, histogram, phasor). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Draws `text` in Sans 8 with the current source so that the point (xalign, yalign) of its box
 * (0 = left/top, 1 = right/bottom) lies at (x, y). */
void fm_cairo_text(GtkWidget *widget, cairo_t *cr, double x, double y, const char *text,
                   double xalign, double yalign);

G_END_DECLS
