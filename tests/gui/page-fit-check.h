/* Checks of what a page shows at a screen size, shared by the MCML and OCT page tests (header
 * only: each test includes it once): a side panel that fits its width. */
#pragma once

#include <gtk/gtk.h>

#include "gui-test-util.h"

static inline void fit_check_widgets_within(GtkWidget *widget, GtkWidget *panel, int right,
                                            int *n_checked)
{
    if (!gtk_widget_get_visible(widget) || !gtk_widget_get_child_visible(widget))
        return;
    if (widget != panel) {
        GdkRectangle r = fm_gui_test_rect_in(widget, panel);
        if (r.x < 0 || r.x + r.width > right)
            g_error("%s (%s) at x %d..%d leaves the panel (0..%d)", G_OBJECT_TYPE_NAME(widget),
                    GTK_IS_LABEL(widget)    ? gtk_label_get_text(GTK_LABEL(widget))
                    : GTK_IS_BUTTON(widget) ? gtk_button_get_label(GTK_BUTTON(widget))
                                            : gtk_widget_get_name(widget),
                    r.x, r.x + r.width, right);
        (*n_checked)++;
    }
    if (GTK_IS_TREE_VIEW(widget)) { /* columns are not widgets: their widths add up */
        int sum = 0, n = gtk_tree_view_get_n_columns(GTK_TREE_VIEW(widget));
        for (int i = 0; i < n; i++) {
            GtkTreeViewColumn *col = gtk_tree_view_get_column(GTK_TREE_VIEW(widget), i);
            g_assert_cmpint(gtk_tree_view_column_get_width(col), >, 0);
            sum += gtk_tree_view_column_get_width(col);
        }
        g_assert_cmpint(sum, <=, gtk_widget_get_allocated_width(widget));
    }
    if (GTK_IS_CONTAINER(widget)) {
        g_autoptr(GList) children = gtk_container_get_children(GTK_CONTAINER(widget));
        for (GList *l = children; l; l = l->next)
            fit_check_widgets_within(l->data, panel, right, n_checked);
    }
}

/* Names the widest-asking widgets under widget (what to fix when a panel asks too much). */
static inline void fit_check_report_minimum(GtkWidget *widget, int depth)
{
    if (!gtk_widget_get_visible(widget) || depth > 12)
        return;
    int min_w = 0;
    gtk_widget_get_preferred_width(widget, &min_w, NULL);
    if (min_w > 250)
        g_test_message("%*s%s %s: minimum width %d", 2 * depth, "", G_OBJECT_TYPE_NAME(widget),
                       GTK_IS_LABEL(widget) ? gtk_label_get_text(GTK_LABEL(widget))
                                            : gtk_widget_get_name(widget),
                       min_w);
    if (GTK_IS_CONTAINER(widget)) {
        g_autoptr(GList) children = gtk_container_get_children(GTK_CONTAINER(widget));
        for (GList *l = children; l; l = l->next)
            fit_check_report_minimum(l->data, depth + 1);
    }
}

/* The side panel asks for at most 300 pixels of width, and every widget in it lies inside its
 * allocation, which lies inside the window; its scrolled window does not scroll sideways. */
static inline void fit_check_panel(GtkWidget *panel, GtkWidget *top)
{
    g_assert_true(gtk_widget_is_drawable(panel));
    int min_w = 0;
    gtk_widget_get_preferred_width(panel, &min_w, NULL);
    g_test_message("panel minimum width %d, allocated %d", min_w,
                   gtk_widget_get_allocated_width(panel));
    if (min_w > 300)
        fit_check_report_minimum(panel, 0);
    g_assert_cmpint(min_w, <=, 300);
    GdkRectangle p = fm_gui_test_rect_in(panel, top);
    g_assert_cmpint(p.x, >=, 0);
    g_assert_cmpint(p.x + p.width, <=, gtk_widget_get_allocated_width(top));
    GtkWidget *scroller = gtk_widget_get_ancestor(panel, GTK_TYPE_SCROLLED_WINDOW);
    if (scroller != NULL) {
        GtkAdjustment *h = gtk_scrolled_window_get_hadjustment(GTK_SCROLLED_WINDOW(scroller));
        g_assert_cmpfloat(gtk_adjustment_get_upper(h) - gtk_adjustment_get_lower(h), <=,
                          gtk_adjustment_get_page_size(h) + 0.5);
        GdkRectangle in = fm_gui_test_rect_in(panel, scroller);
        g_assert_cmpint(in.x + in.width, <=, gtk_widget_get_allocated_width(scroller));
    }
    int n = 0;
    fit_check_widgets_within(panel, panel, gtk_widget_get_allocated_width(panel), &n);
    g_assert_cmpint(n, >, 5);
}
