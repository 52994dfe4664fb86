/* FmDceResults: the perfusion results of one slice as a compact table beside the map: one
 * column per ROI with fitted voxels (at most four side by side, further ones in a band below),
 * one row per parameter of the model that ran (unit in its header), the mean over its sd. */
#include "dce-results.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/roi.h"
#include "dce-panel.h"
#include "app/gui/map-overlays.h"

/* Rows in the order a hepatologist reads them; decimals fixed per quantity so that a column
 * reads down evenly and mean and sd share their precision. */
typedef struct {
    const char *map, *title, *unit;
    int decimals;
} Row;

static const Row liver_rows[] = {
    {"ka", N_("ka"), N_("ml/100g/min"), 1}, {"kp", N_("kp"), N_("ml/100g/min"), 1},
    {"kl", N_("kl"), N_("ml/100g/min"), 1}, {"arterial_fraction", N_("Art. fraction"), "", 2},
    {"mtt", N_("MTT"), N_("s"), 1},         {"tau_a", N_("τa"), N_("s"), 2},
    {"tau_p", N_("τp"), N_("s"), 2},        {"r2", N_("R²"), "", 3},
};

/* The standard models' maps; each model's result has its own subset, in this order. Units are
 * the registry's (pk_methods.c). */
static const Row pk_rows[] = {
    {"ktrans", N_("Ktrans"), N_("1/min"), 3},
    {"fp", N_("Fp"), N_("ml/100ml/min"), 1},
    {"ps", N_("PS"), N_("1/min"), 3},
    {"ve", N_("ve"), "", 3},
    {"vp", N_("vp"), "", 3},
    {"kep", N_("kep"), N_("1/min"), 3},
    {"delay", N_("Delay"), N_("s"), 2},
    {"r2", N_("R²"), "", 3},
    {"aic", N_("AIC"), "", 0},
};

/* ROI columns side by side: four fit beside the map at 1366x768 without scrolling sideways. */
#define COLUMNS_PER_BAND 4

struct _FmDceResults {
    GtkBox parent_instance;
    GtkWidget *heading, *run, *caption, *unfitted, *scroller, *grid;
};

G_DEFINE_FINAL_TYPE(FmDceResults, fm_dce_results, GTK_TYPE_BOX)

static void destroy_child(GtkWidget *child, gpointer user)
{
    gtk_widget_destroy(child);
}

/* Digits of equal width, so that decimals line up in a right-aligned column. */
static void tabular(GtkWidget *label)
{
    PangoAttrList *attrs = pango_attr_list_new();
    pango_attr_list_insert(attrs, pango_attr_font_features_new("tnum"));
    gtk_label_set_attributes(GTK_LABEL(label), attrs);
    pango_attr_list_unref(attrs);
}

static GtkWidget *cell(const char *text, double xalign)
{
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), (float)xalign);
    tabular(label);
    return label;
}

/* Mean and "± sd" in small dim type; with three or more ROIs on two short lines, which keep a
 * column narrow enough for four beside the map, where "0.050 ± 0.001" needed a scrollbar. */
static GtkWidget *value_cell(const fm_roi_stats *st, int decimals, gboolean two_lines)
{
    GtkWidget *label = cell("", 1);
    if (!(st->n && isfinite(st->mean))) {
        gtk_label_set_text(GTK_LABEL(label), "—");
        return label;
    }
    g_autofree char *mean = g_strdup_printf("%.*f", decimals, st->mean);
    g_autofree char *sd = g_strdup_printf("± %.*f", decimals, st->sd);
    /* The sd's line set close under its mean: five rows of two lines and their headers fit
     * beside the map at 1366x768 without scrolling down. */
    g_autofree char *markup = g_markup_printf_escaped(
        two_lines ? "%s\n<span size=\"small\" alpha=\"60%%\" line_height=\"0.8\">%s</span>"
                  : "%s <span size=\"small\" alpha=\"60%%\">%s</span>",
        mean, sd);
    gtk_label_set_markup(GTK_LABEL(label), markup);
    gtk_label_set_justify(GTK_LABEL(label), GTK_JUSTIFY_RIGHT);
    return label;
}

static GtkWidget *row_header(const Row *row)
{
    GtkWidget *label = gtk_label_new(NULL);
    g_autofree char *markup =
        *row->unit ? g_markup_printf_escaped("%s <span size=\"small\" alpha=\"60%%\">%s</span>",
                                             _(row->title), _(row->unit))
                   : g_markup_escape_text(_(row->title), -1);
    gtk_label_set_markup(GTK_LABEL(label), markup);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    return label;
}

/* The ROI's name in its outline colour's swatch (ellipsized, full name in the tooltip) over its
 * role. */
void fm_dce_roi_colour_on_light(guint index, double rgb[3])
{
    const double *c = fm_map_roi_colour(index);
    double light = 0.3 * c[0] + 0.59 * c[1] + 0.11 * c[2];
    for (int k = 0; k < 3; k++)
        rgb[k] = light > 0.85 ? 0.35 : c[k];
}

/* The ROI's name (ellipsized; name and role in the tooltip): its role is the panel's and the
 * ROI bar's to say, and a line of "Tissue" over every column would push the last row out of
 * sight beside the map at 1366x768. */
static GtkWidget *column_header(const fm_roi *roi)
{
    const char *name = roi->name ? roi->name : _("ROI");
    g_autofree char *markup = g_markup_printf_escaped("<b>%s</b>", name);
    GtkWidget *title = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(title), markup);
    gtk_label_set_ellipsize(GTK_LABEL(title), PANGO_ELLIPSIZE_END);
    gtk_label_set_max_width_chars(GTK_LABEL(title), 12);
    gtk_label_set_xalign(GTK_LABEL(title), 1);
    gtk_widget_set_valign(title, GTK_ALIGN_END);
    const char *role = roi->role ? fm_dce_panel_role_title(roi->role) : NULL;
    g_autofree char *tip = role ? g_strdup_printf("%s (%s)", name, role) : g_strdup(name);
    gtk_widget_set_tooltip_text(title, tip);
    return title;
}

/* The voxel count beside the ROI's outline colour, which ties the column to its outline. */
static GtkWidget *count_cell(gsize n, guint colour_index)
{
    double rgb[3];
    fm_dce_roi_colour_on_light(colour_index, rgb);
    g_autofree char *markup =
        g_strdup_printf("<span foreground=\"#%02x%02x%02x\">●</span> %" G_GSIZE_FORMAT,
                        (int)(rgb[0] * 255), (int)(rgb[1] * 255), (int)(rgb[2] * 255), n);
    GtkWidget *label = cell("", 1);
    gtk_label_set_markup(GTK_LABEL(label), markup);
    return label;
}

static const float *slice_plane(const fm_result *result, const char *name, int slice, int nz)
{
    const fm_map *m = result ? fm_result_get_map(result, name) : NULL;
    if (!m || m->n_frames != nz || slice < 0 || slice >= nz)
        return NULL;
    return m->data + (gsize)slice * m->width * m->height;
}

/* The first column of a band: what the numbers are, the voxel count and each parameter. */
static void attach_row_headers(FmDceResults *self, const Row *const *rows, gsize n_rows, int top)
{
    GtkWidget *what = gtk_label_new(_("mean ± sd"));
    gtk_label_set_xalign(GTK_LABEL(what), 0);
    gtk_widget_set_valign(what, GTK_ALIGN_END);
    gtk_style_context_add_class(gtk_widget_get_style_context(what), "dim-label");
    gtk_grid_attach(GTK_GRID(self->grid), what, 0, top, 1, 1);
    GtkWidget *voxels = gtk_label_new(_("Voxels"));
    gtk_label_set_xalign(GTK_LABEL(voxels), 0);
    gtk_grid_attach(GTK_GRID(self->grid), voxels, 0, top + 1, 1, 1);
    for (gsize r = 0; r < n_rows; r++) {
        GtkWidget *header = row_header(rows[r]);
        gtk_widget_set_valign(header, GTK_ALIGN_START); /* beside the mean, over its sd */
        gtk_grid_attach(GTK_GRID(self->grid), header, 0, top + (int)r + 2, 1, 1);
    }
}

void fm_dce_results_update(FmDceResults *self, const fm_result *result, GPtrArray *rois, int slice,
                           int nz, gboolean have_dataset)
{
    g_return_if_fail(FM_IS_DCE_RESULTS(self));
    gtk_container_foreach(GTK_CONTAINER(self->grid), destroy_child, NULL);
    /* The liver model's rows for its result, else the standard models' rows its maps have. */
    gboolean liver = !result || fm_result_get_map(result, "ka") != NULL;
    const Row *all = liver ? liver_rows : pk_rows;
    gsize n_all = liver ? G_N_ELEMENTS(liver_rows) : G_N_ELEMENTS(pk_rows);
    const Row *rows[G_N_ELEMENTS(pk_rows) + G_N_ELEMENTS(liver_rows)];
    gsize n_rows = 0;
    for (gsize r = 0; r < n_all; r++)
        if (liver || fm_result_get_map(result, all[r].map))
            rows[n_rows++] = &all[r];
    /* The first row's map says which voxels were fitted (NaN elsewhere). */
    const char *first = n_rows ? rows[0]->map : "ka";
    const fm_map *ka = result ? fm_result_get_map(result, first) : NULL;
    const float *ka_plane = slice_plane(result, first, slice, nz);
    GString *unfitted = g_string_new(NULL);
    int column = 0, n_fitted = 0;
    guint on_slice = 0;
    for (guint i = 0; ka_plane && rois && i < rois->len; i++) {
        const fm_roi *roi = rois->pdata[i];
        n_fitted += (roi->slice < 0 || roi->slice == slice) &&
                    fm_roi_statistics(roi, ka_plane, ka->width, ka->height).n > 0;
    }
    gboolean two_lines = n_fitted > 2;
    /* Each band: the ROI headers, the voxel count and the parameters; bands one under another
     * with a blank row between them. */
    const int band_rows = (int)n_rows + 3;
    for (guint i = 0; rois && i < rois->len; i++) {
        const fm_roi *roi = rois->pdata[i];
        if (roi->slice >= 0 && roi->slice != slice)
            continue;
        guint colour = on_slice++; /* the map view numbers the ROIs of the slice on show */
        fm_roi_stats n =
            ka_plane ? fm_roi_statistics(roi, ka_plane, ka->width, ka->height) : (fm_roi_stats){0};
        if (n.n == 0) { /* input vessels usually: said in the caption, not a column of dashes */
            g_string_append_printf(unfitted, "%s%s", unfitted->len ? ", " : "",
                                   roi->name ? roi->name : _("ROI"));
            continue;
        }
        int band = column / COLUMNS_PER_BAND, top = band * band_rows;
        int x = column % COLUMNS_PER_BAND + 1;
        column++;
        if (x == 1)
            attach_row_headers(self, rows, n_rows, top);
        if (x == 1 && band > 0) /* a blank row above a further band */
            gtk_grid_attach(GTK_GRID(self->grid), gtk_label_new(""), 0, top - 1, 1, 1);
        gtk_grid_attach(GTK_GRID(self->grid), column_header(roi), x, top, 1, 1);
        gtk_grid_attach(GTK_GRID(self->grid), count_cell(n.n, colour), x, top + 1, 1, 1);
        for (gsize r = 0; r < n_rows; r++) {
            const float *plane = slice_plane(result, rows[r]->map, slice, nz);
            fm_roi_stats st =
                plane ? fm_roi_statistics(roi, plane, ka->width, ka->height) : (fm_roi_stats){0};
            gtk_grid_attach(GTK_GRID(self->grid), value_cell(&st, rows[r]->decimals, two_lines), x,
                            top + (int)r + 2, 1, 1);
        }
    }
    gtk_widget_show_all(self->grid);

    g_autofree char *heading = g_strdup_printf(_("RESULTS · SLICE %d"), slice + 1);
    gtk_label_set_text(GTK_LABEL(self->heading), have_dataset ? heading : _("RESULTS"));
    const char *text = !have_dataset              ? ""
                       : !result                  ? _("Run the fit for the ROIs' values.")
                       : column == 0 && !on_slice ? _("No ROI on this slice.")
                       : column == 0              ? _("No fitted voxels in an ROI.")
                                                  : "";
    gtk_label_set_text(GTK_LABEL(self->caption), text);
    gtk_widget_set_visible(self->caption, *text != '\0');
    /* Input vessels are not fitted: one line that says so rather than columns of dashes. */
    g_autofree char *others = g_strdup_printf(_("Not fitted: %s"), unfitted->str);
    gtk_label_set_text(GTK_LABEL(self->unfitted), others);
    gtk_widget_set_tooltip_text(self->unfitted, others);
    gtk_widget_set_visible(self->unfitted, result && unfitted->len);
    gtk_widget_set_visible(self->scroller, column > 0);
    g_string_free(unfitted, TRUE);
}

GtkWidget *fm_dce_results_get_grid(FmDceResults *self)
{
    return self->grid;
}

void fm_dce_results_set_run(FmDceResults *self, const char *summary)
{
    g_return_if_fail(FM_IS_DCE_RESULTS(self));
    gtk_label_set_text(GTK_LABEL(self->run), summary ? summary : "");
    gtk_widget_set_visible(self->run, summary && *summary);
}

GtkWidget *fm_dce_results_get_run_label(FmDceResults *self)
{
    return self->run;
}

GtkWidget *fm_dce_results_get_scroller(FmDceResults *self)
{
    return self->scroller;
}

static void fm_dce_results_class_init(FmDceResultsClass *klass) {}

static void fm_dce_results_init(FmDceResults *self)
{
    gtk_orientable_set_orientation(GTK_ORIENTABLE(self), GTK_ORIENTATION_VERTICAL);
    gtk_box_set_spacing(GTK_BOX(self), 6);
    self->heading = gtk_label_new(_("RESULTS"));
    gtk_label_set_xalign(GTK_LABEL(self->heading), 0);
    gtk_style_context_add_class(gtk_widget_get_style_context(self->heading), "fm-heading");
    /* The run on show: its model and input, which may differ from the page's settings now. */
    self->run = gtk_label_new("");
    gtk_label_set_xalign(GTK_LABEL(self->run), 0);
    gtk_label_set_line_wrap(GTK_LABEL(self->run), TRUE);
    gtk_label_set_max_width_chars(GTK_LABEL(self->run), 40);
    gtk_style_context_add_class(gtk_widget_get_style_context(self->run), "dim-label");
    self->caption = gtk_label_new("");
    gtk_label_set_xalign(GTK_LABEL(self->caption), 0);
    gtk_label_set_line_wrap(GTK_LABEL(self->caption), TRUE);
    gtk_label_set_max_width_chars(GTK_LABEL(self->caption), 28);
    gtk_style_context_add_class(gtk_widget_get_style_context(self->caption), "dim-label");
    self->unfitted = gtk_label_new("");
    gtk_label_set_xalign(GTK_LABEL(self->unfitted), 0);
    gtk_label_set_ellipsize(GTK_LABEL(self->unfitted), PANGO_ELLIPSIZE_END);
    gtk_label_set_max_width_chars(GTK_LABEL(self->unfitted), 28);
    gtk_label_set_width_chars(GTK_LABEL(self->unfitted), 8);
    gtk_style_context_add_class(gtk_widget_get_style_context(self->unfitted), "dim-label");
    self->grid = gtk_grid_new();
    gtk_grid_set_column_spacing(GTK_GRID(self->grid), 10);
    gtk_grid_set_row_spacing(GTK_GRID(self->grid), 1);
    /* Never sideways (further ROIs go to a band below); many bands scroll down inside the
     * table, never the window. */
    self->scroller = gtk_scrolled_window_new(NULL, NULL);
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(self->scroller), GTK_POLICY_NEVER,
                                   GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_propagate_natural_width(GTK_SCROLLED_WINDOW(self->scroller), TRUE);
    gtk_scrolled_window_set_propagate_natural_height(GTK_SCROLLED_WINDOW(self->scroller), TRUE);
    gtk_scrolled_window_set_max_content_width(GTK_SCROLLED_WINDOW(self->scroller), 420);
    gtk_container_add(GTK_CONTAINER(self->scroller), self->grid);
    /* The ROIs not fitted (input vessels) said on the heading's line, leaving the height beside
     * the map to the table. */
    GtkWidget *top = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
    gtk_box_pack_start(GTK_BOX(top), self->heading, FALSE, FALSE, 0);
    gtk_label_set_xalign(GTK_LABEL(self->unfitted), 1);
    gtk_widget_set_valign(self->unfitted, GTK_ALIGN_BASELINE);
    gtk_widget_set_valign(self->heading, GTK_ALIGN_BASELINE);
    gtk_box_pack_end(GTK_BOX(top), self->unfitted, TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(self), top, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(self), self->run, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(self), self->caption, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(self), self->scroller, FALSE, FALSE, 0);
    gtk_widget_show_all(GTK_WIDGET(self));
    gtk_widget_set_no_show_all(self->scroller, TRUE);
    gtk_widget_set_no_show_all(self->unfitted, TRUE);
    gtk_widget_set_no_show_all(self->caption, TRUE);
    gtk_widget_set_no_show_all(self->run, TRUE);
    gtk_widget_set_visible(self->run, FALSE);
}

GtkWidget *fm_dce_results_new(void)
{
    return g_object_new(FM_TYPE_DCE_RESULTS, NULL);
}
