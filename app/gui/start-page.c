/* The start page's cards, from the demos table. */
#include "start-page.h"

#include <glib/gi18n.h>

#include "demos.h"

static GtkWidget *card(const fm_demo *demo)
{
    GtkWidget *button = gtk_button_new();
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    g_object_set(box, "margin", 10, NULL);
    g_autofree char *markup = g_markup_printf_escaped("<b>%s</b>", _(demo->title));
    GtkWidget *title = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(title), markup);
    gtk_label_set_xalign(GTK_LABEL(title), 0);
    GtkWidget *what = gtk_label_new(_(demo->what));
    gtk_label_set_line_wrap(GTK_LABEL(what), TRUE);
    gtk_label_set_max_width_chars(GTK_LABEL(what), 34);
    gtk_label_set_xalign(GTK_LABEL(what), 0);
    gtk_style_context_add_class(gtk_widget_get_style_context(what), "dim-label");
    gtk_box_pack_start(GTK_BOX(box), title, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(box), what, FALSE, FALSE, 0);
    gtk_container_add(GTK_CONTAINER(button), box);
    gtk_widget_set_size_request(button, 260, -1);
    gtk_actionable_set_action_name(GTK_ACTIONABLE(button), "win.open-demo");
    gtk_actionable_set_action_target_value(GTK_ACTIONABLE(button),
                                           g_variant_new_string(demo->id));
    gtk_widget_set_name(button, demo->id); /* tests and the keyboard find cards by family */
    if (!fm_demo_available(demo)) {
        gtk_widget_set_sensitive(button, FALSE);
        gtk_widget_set_tooltip_text(button, _("Not built: run packaging/dev.sh run"));
    }
    return button;
}

GtkWidget *fm_start_page_new(void)
{
    GtkWidget *page = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
    g_object_set(page, "margin", 24, "valign", GTK_ALIGN_CENTER, NULL);
    GtkWidget *heading = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(heading),
                         _("<big><b>Try a family on its demo</b></big>\n"
                           "Each opens a simulated dataset with known truth, ready to run. "
                           "Or open your own file (Ctrl+O) or drop it here."));
    gtk_label_set_justify(GTK_LABEL(heading), GTK_JUSTIFY_CENTER);
    gtk_label_set_line_wrap(GTK_LABEL(heading), TRUE);
    GtkWidget *cards = gtk_flow_box_new();
    gtk_flow_box_set_selection_mode(GTK_FLOW_BOX(cards), GTK_SELECTION_NONE);
    gtk_flow_box_set_max_children_per_line(GTK_FLOW_BOX(cards), 3);
    gtk_flow_box_set_homogeneous(GTK_FLOW_BOX(cards), TRUE);
    gtk_widget_set_halign(cards, GTK_ALIGN_CENTER);
    gsize n = 0;
    const fm_demo *demos = fm_demos(&n);
    for (gsize i = 0; i < n; i++)
        gtk_container_add(GTK_CONTAINER(cards), card(&demos[i]));
    gtk_box_pack_start(GTK_BOX(page), heading, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(page), cards, FALSE, FALSE, 0);
    GtkWidget *scroller = gtk_scrolled_window_new(NULL, NULL);
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroller), GTK_POLICY_NEVER,
                                   GTK_POLICY_AUTOMATIC);
    gtk_container_add(GTK_CONTAINER(scroller), page);
    gtk_widget_show_all(scroller);
    return scroller;
}
