/* FmOctViews: grey B-scan, en-face projection, A-line and spectrum plots, B-scan playback. */
#include "oct-views.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/oct/oct_stages.h"
#include "app/gui/plot-view.h"

struct _FmOctViews {
    GtkBox parent_instance;
    FmMapView *bscan_view, *enface_view;
    FmPlotView *aline_plot, *spectrum_plot;
    GtkWidget *floor_scale, *ceiling_scale, *bscan_scale, *play_button;
    GtkWidget *depth_start_scale, *depth_end_scale, *stage_combo, *info_label;
    fm_dataset *spectra;
    fm_params *params;
    fm_result *result;
    double um_per_bin;
    gboolean depth_in_bins; /* the result's spectra are not open: no calibration, no µm */
    int bscan, aline, play_count;
    int aline_stretch; /* screen columns per A-line in the B-scan view */
    guint play_timer;
    gboolean updating;
};

G_DEFINE_TYPE(FmOctViews, fm_oct_views, GTK_TYPE_BOX)

static fm_map *bscan_map(FmOctViews *v)
{
    return v->result ? fm_result_get_map(v->result, "bscan_db") : NULL;
}

/* A B-scan has far more depth bins than A-lines (1024 x a few hundred) and an en-face far more
 * A-lines than B-scans; views draw square pixels, so each is shown with its short side repeated
 * to a roughly 4:3 image. */
static int stretch_of(int long_side, int short_side)
{
    return MAX(1, (int)lround(0.75 * long_side / MAX(short_side, 1)));
}

static void set_stretched(FmMapView *view, const float *data, int w, int h, int fx, int fy,
                          const char *title)
{
    g_autofree float *big = g_new(float, (gsize)w *fx *h *fy);
    for (int y = 0; y < h * fy; y++)
        for (int x = 0; x < w * fx; x++)
            big[(gsize)y * w * fx + x] = data[(gsize)(y / fy) * w + x / fx];
    fm_map_view_set_map(view, big, w * fx, h * fy, title, "dB");
}

static void show_bscan(FmOctViews *v)
{
    fm_map *map = bscan_map(v);
    if (!map)
        return;
    g_autofree char *title = g_strdup_printf(_("B-scan %d"), v->bscan + 1);
    v->aline_stretch = stretch_of(map->height, map->width);
    set_stretched(v->bscan_view, fm_map_frame(map, v->bscan), map->width, map->height,
                  v->aline_stretch, 1, title);
    fm_map_view_set_range(v->bscan_view, gtk_range_get_value(GTK_RANGE(v->floor_scale)),
                          gtk_range_get_value(GTK_RANGE(v->ceiling_scale)));
}

/* Mean power over the chosen depth bins (not mean dB, as in the method's en-face output). */
static void show_enface(FmOctViews *v)
{
    fm_map *map = bscan_map(v);
    if (!map || v->um_per_bin <= 0)
        return;
    int first = (int)floor(gtk_range_get_value(GTK_RANGE(v->depth_start_scale)) / v->um_per_bin);
    int last = (int)ceil(gtk_range_get_value(GTK_RANGE(v->depth_end_scale)) / v->um_per_bin);
    first = CLAMP(first, 0, map->height - 1);
    last = CLAMP(last, first + 1, map->height);
    g_autofree float *enface = g_new(float, (gsize)map->width * map->n_frames);
    for (int b = 0; b < map->n_frames; b++) {
        const float *frame = fm_map_frame(map, b);
        for (int a = 0; a < map->width; a++) {
            double power = 0;
            for (int z = first; z < last; z++)
                power += pow(10.0, frame[(gsize)z * map->width + a] / 10.0);
            enface[(gsize)b * map->width + a] =
                (float)(10.0 * log10(power / (last - first) + 1e-30));
        }
    }
    set_stretched(v->enface_view, enface, map->width, map->n_frames, 1,
                  stretch_of(map->width, map->n_frames), _("En-face"));
    fm_map_view_set_range(v->enface_view, gtk_range_get_value(GTK_RANGE(v->floor_scale)),
                          gtk_range_get_value(GTK_RANGE(v->ceiling_scale)));
}

static void show_spectrum(FmOctViews *v)
{
    if (!v->spectra || !v->params || v->aline < 0)
        return;
    int n = fm_dataset_width(v->spectra);
    g_autofree float *raw = g_new(float, n), *sub = g_new(float, n), *res = g_new(float, n);
    g_autoptr(GError) error = NULL;
    int bscan = MIN(v->bscan, fm_dataset_frames(v->spectra) - 1);
    int aline = MIN(v->aline, fm_dataset_height(v->spectra) - 1);
    if (!fm_oct_stages_aline(v->spectra, v->params, bscan, aline, raw, sub, res, &error)) {
        gtk_label_set_text(GTK_LABEL(v->info_label), error->message);
        return;
    }
    int stage = gtk_combo_box_get_active(GTK_COMBO_BOX(v->stage_combo));
    const float *y = stage == 0 ? raw : stage == 1 ? sub : res;
    g_autofree double *xs = g_new(double, n), *ys = g_new(double, n);
    for (int i = 0; i < n; i++) {
        xs[i] = i;
        ys[i] = y[i];
    }
    fm_plot_view_set_labels(v->spectrum_plot,
                            stage == 2 ? _("uniform k sample") : _("spectrometer pixel"),
                            _("counts"));
    fm_plot_view_set_series(v->spectrum_plot, xs, ys, n);
}

void fm_oct_views_show_aline(FmOctViews *v, int aline)
{
    fm_map *map = bscan_map(v);
    if (map)
        aline = CLAMP(aline, 0, map->width - 1);
    v->aline = aline;
    if (map && aline >= 0) {
        const float *frame = fm_map_frame(map, v->bscan);
        g_autofree double *xs = g_new(double, map->height), *ys = g_new(double, map->height);
        for (int z = 0; z < map->height; z++) {
            xs[z] = z * v->um_per_bin;
            ys[z] = frame[(gsize)z * map->width + aline];
        }
        fm_plot_view_set_series(v->aline_plot, xs, ys, map->height);
        g_autofree char *text =
            v->depth_in_bins
                ? g_strdup_printf(_("A-line %d of B-scan %d; depth in bins (the spectra's "
                                    "calibration is not open)"),
                                  aline + 1, v->bscan + 1)
                : g_strdup_printf(_("A-line %d of B-scan %d; %.3f µm per depth bin"), aline + 1,
                                  v->bscan + 1, v->um_per_bin);
        gtk_label_set_text(GTK_LABEL(v->info_label), text);
    }
    show_spectrum(v);
}

static void cursor_moved(FmMapView *view, int x, int y, double value, FmOctViews *v)
{
    if (x >= 0 && x / v->aline_stretch != v->aline)
        fm_oct_views_show_aline(v, x / v->aline_stretch);
}

static void range_changed(GtkRange *range, FmOctViews *v)
{
    if (v->updating)
        return;
    fm_map_view_set_range(v->bscan_view, gtk_range_get_value(GTK_RANGE(v->floor_scale)),
                          gtk_range_get_value(GTK_RANGE(v->ceiling_scale)));
    fm_map_view_set_range(v->enface_view, gtk_range_get_value(GTK_RANGE(v->floor_scale)),
                          gtk_range_get_value(GTK_RANGE(v->ceiling_scale)));
}

static void depth_changed(GtkRange *range, FmOctViews *v)
{
    if (!v->updating)
        show_enface(v);
}

static void bscan_changed(GtkRange *range, FmOctViews *v)
{
    if (v->updating)
        return;
    v->bscan = (int)gtk_range_get_value(range);
    show_bscan(v);
    fm_oct_views_show_aline(v, v->aline);
}

static void stage_changed(GtkComboBox *combo, FmOctViews *v)
{
    show_spectrum(v);
}

static gboolean play_tick(gpointer user)
{
    FmOctViews *v = user;
    fm_map *map = bscan_map(v);
    if (!map || map->n_frames < 2) {
        v->play_timer = 0;
        gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(v->play_button), FALSE);
        return G_SOURCE_REMOVE;
    }
    v->play_count++;
    fm_oct_views_set_bscan(v, (v->bscan + 1) % map->n_frames);
    return G_SOURCE_CONTINUE;
}

void fm_oct_views_set_playing(FmOctViews *v, gboolean playing)
{
    if (playing && !v->play_timer) {
        v->play_count = 0;
        /* 25 B-scans/s: display rate; B-scans are precomputed, so each tick only redraws */
        v->play_timer = g_timeout_add(40, play_tick, v);
    } else if (!playing && v->play_timer) {
        g_source_remove(v->play_timer);
        v->play_timer = 0;
    }
    if (gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(v->play_button)) != playing)
        gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(v->play_button), playing);
}

static void play_toggled(GtkToggleButton *button, FmOctViews *v)
{
    fm_oct_views_set_playing(v, gtk_toggle_button_get_active(button));
}

int fm_oct_views_get_play_count(FmOctViews *v)
{
    return v->play_count;
}

void fm_oct_views_set_bscan(FmOctViews *v, int bscan)
{
    fm_map *map = bscan_map(v);
    int n = map ? map->n_frames : 1;
    v->bscan = CLAMP(bscan, 0, n - 1);
    v->updating = TRUE;
    gtk_range_set_value(GTK_RANGE(v->bscan_scale), v->bscan);
    v->updating = FALSE;
    show_bscan(v);
    fm_oct_views_show_aline(v, v->aline);
}

int fm_oct_views_get_bscan(FmOctViews *v)
{
    return v->bscan;
}

void fm_oct_views_set_db_range(FmOctViews *v, double floor_db, double ceiling_db)
{
    v->updating = TRUE;
    gtk_range_set_value(GTK_RANGE(v->floor_scale), floor_db);
    gtk_range_set_value(GTK_RANGE(v->ceiling_scale), ceiling_db);
    v->updating = FALSE;
    range_changed(NULL, v);
}

void fm_oct_views_set_enface_range(FmOctViews *v, double start_um, double end_um)
{
    v->updating = TRUE;
    gtk_range_set_value(GTK_RANGE(v->depth_start_scale), start_um);
    gtk_range_set_value(GTK_RANGE(v->depth_end_scale), end_um);
    v->updating = FALSE;
    show_enface(v);
}

void fm_oct_views_set_spectra(FmOctViews *v, fm_dataset *spectra, const fm_params *params)
{
    g_clear_pointer(&v->spectra, fm_dataset_unref);
    g_clear_pointer(&v->params, fm_params_free);
    v->spectra = spectra ? fm_dataset_ref(spectra) : NULL;
    v->params = params ? fm_params_copy(params) : NULL;
    show_spectrum(v);
}

void fm_oct_views_set_result(FmOctViews *v, fm_result *result, double um_per_bin)
{
    g_clear_pointer(&v->result, fm_result_free);
    v->result = result;
    v->depth_in_bins = !(um_per_bin > 0.0);
    v->um_per_bin = v->depth_in_bins ? 1.0 : um_per_bin;
    um_per_bin = v->um_per_bin;
    gtk_label_set_text(g_object_get_data(G_OBJECT(v->depth_start_scale), "fm-label"),
                       v->depth_in_bins ? _("En-face from (bin)") : _("En-face from (µm)"));
    gtk_label_set_text(g_object_get_data(G_OBJECT(v->depth_end_scale), "fm-label"),
                       v->depth_in_bins ? _("to (bin)") : _("to (µm)"));
    fm_map *map = bscan_map(v);
    if (!map)
        return;
    double depth_um = map->height * um_per_bin;
    v->updating = TRUE;
    gtk_range_set_range(GTK_RANGE(v->bscan_scale), 0, MAX(map->n_frames - 1, 1));
    gtk_widget_set_sensitive(v->bscan_scale, map->n_frames > 1);
    gtk_widget_set_sensitive(v->play_button, map->n_frames > 1);
    gtk_range_set_range(GTK_RANGE(v->depth_start_scale), 0, depth_um);
    gtk_range_set_range(GTK_RANGE(v->depth_end_scale), 0, depth_um);
    gtk_range_set_value(GTK_RANGE(v->depth_start_scale), 0);
    gtk_range_set_value(GTK_RANGE(v->depth_end_scale), depth_um);
    v->updating = FALSE;
    fm_plot_view_set_labels(v->aline_plot, fm_oct_views_get_depth_label(v), _("dB"));
    fm_oct_views_set_bscan(v, MIN(v->bscan, map->n_frames - 1));
    fm_oct_views_show_aline(v, v->aline >= 0 ? v->aline : map->width / 2);
    show_enface(v);
    fm_map_view_zoom_to_fit(v->bscan_view);
    fm_map_view_zoom_to_fit(v->enface_view);
}

const char *fm_oct_views_get_depth_label(FmOctViews *v)
{
    return v->depth_in_bins ? _("depth (bin)") : _("depth (µm)");
}

const fm_result *fm_oct_views_get_result(FmOctViews *v)
{
    return v->result;
}

int fm_oct_views_get_aline_stretch(FmOctViews *v)
{
    return v->aline_stretch;
}

FmMapView *fm_oct_views_get_bscan_view(FmOctViews *v)
{
    return v->bscan_view;
}

FmMapView *fm_oct_views_get_enface_view(FmOctViews *v)
{
    return v->enface_view;
}

/* A label and its slider at (row, pair) of the grid: two pairs per row, the value beside the
 * slider rather than above it, so the controls stay short on a laptop screen. */
static GtkWidget *labelled_scale(GtkWidget *grid, int row, int pair, const char *label, double lo,
                                 double hi, double value, GCallback cb, FmOctViews *v)
{
    GtkWidget *l = gtk_label_new(label);
    gtk_widget_set_halign(l, GTK_ALIGN_START);
    GtkWidget *scale = gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, lo, hi, 1);
    gtk_scale_set_value_pos(GTK_SCALE(scale), GTK_POS_RIGHT);
    gtk_range_set_value(GTK_RANGE(scale), value);
    gtk_widget_set_hexpand(scale, TRUE);
    g_object_set_data(G_OBJECT(scale), "fm-label", l);
    gtk_grid_attach(GTK_GRID(grid), l, 2 * pair, row, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), scale, 2 * pair + 1, row, 1, 1);
    g_signal_connect(scale, "value-changed", cb, v);
    return scale;
}

static void fm_oct_views_dispose(GObject *object)
{
    FmOctViews *v = FM_OCT_VIEWS(object);
    if (v->play_timer) {
        g_source_remove(v->play_timer);
        v->play_timer = 0;
    }
    g_clear_pointer(&v->spectra, fm_dataset_unref);
    g_clear_pointer(&v->params, fm_params_free);
    g_clear_pointer(&v->result, fm_result_free);
    G_OBJECT_CLASS(fm_oct_views_parent_class)->dispose(object);
}

static void fm_oct_views_class_init(FmOctViewsClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = fm_oct_views_dispose;
}

static void fm_oct_views_init(FmOctViews *v)
{
    v->aline = -1;
    v->aline_stretch = 1;
    gtk_orientable_set_orientation(GTK_ORIENTABLE(v), GTK_ORIENTATION_VERTICAL);
    gtk_box_set_spacing(GTK_BOX(v), 4);
    GtkWidget *images = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL);
    v->bscan_view = FM_MAP_VIEW(fm_map_view_new());
    v->enface_view = FM_MAP_VIEW(fm_map_view_new());
    fm_map_view_set_colormap(v->bscan_view, FM_COLORMAP_GRAY);
    fm_map_view_set_colormap(v->enface_view, FM_COLORMAP_GRAY);
    gtk_widget_set_size_request(GTK_WIDGET(v->bscan_view), 320, 100);
    gtk_widget_set_size_request(GTK_WIDGET(v->enface_view), 160, 100);
    gtk_paned_pack1(GTK_PANED(images), GTK_WIDGET(v->bscan_view), TRUE, FALSE);
    gtk_paned_pack2(GTK_PANED(images), GTK_WIDGET(v->enface_view), TRUE, FALSE);
    gtk_box_pack_start(GTK_BOX(v), images, TRUE, TRUE, 0);
    g_signal_connect(v->bscan_view, "cursor-moved", G_CALLBACK(cursor_moved), v);

    GtkWidget *grid = gtk_grid_new();
    gtk_grid_set_column_spacing(GTK_GRID(grid), 6);
    v->floor_scale =
        labelled_scale(grid, 0, 0, _("dB floor"), 0, 160, 50, G_CALLBACK(range_changed), v);
    v->ceiling_scale =
        labelled_scale(grid, 0, 1, _("dB ceiling"), 0, 160, 110, G_CALLBACK(range_changed), v);
    v->bscan_scale =
        labelled_scale(grid, 1, 0, _("B-scan"), 0, 1, 0, G_CALLBACK(bscan_changed), v);
    gtk_scale_set_digits(GTK_SCALE(v->bscan_scale), 0);
    v->play_button = gtk_toggle_button_new_with_label(_("Play"));
    gtk_widget_set_tooltip_text(v->play_button, _("Play the B-scans of the volume"));
    gtk_widget_set_halign(v->play_button, GTK_ALIGN_START);
    g_signal_connect(v->play_button, "toggled", G_CALLBACK(play_toggled), v);
    gtk_grid_attach(GTK_GRID(grid), v->play_button, 2, 1, 1, 1);
    v->depth_start_scale =
        labelled_scale(grid, 2, 0, _("En-face from (µm)"), 0, 1, 0, G_CALLBACK(depth_changed), v);
    v->depth_end_scale =
        labelled_scale(grid, 2, 1, _("to (µm)"), 0, 1, 1, G_CALLBACK(depth_changed), v);
    gtk_box_pack_start(GTK_BOX(v), grid, FALSE, FALSE, 0);

    GtkWidget *plots = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    v->aline_plot = FM_PLOT_VIEW(fm_plot_view_new());
    v->spectrum_plot = FM_PLOT_VIEW(fm_plot_view_new());
    gtk_widget_set_size_request(GTK_WIDGET(v->aline_plot), 240, 80);
    gtk_widget_set_size_request(GTK_WIDGET(v->spectrum_plot), 240, 80);
    fm_plot_view_set_labels(v->aline_plot, _("depth (µm)"), _("dB"));
    fm_plot_view_set_labels(v->spectrum_plot, _("spectrometer pixel"), _("counts"));
    GtkWidget *spectrum_box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
    v->stage_combo = gtk_combo_box_text_new();
    gtk_combo_box_text_append_text(GTK_COMBO_BOX_TEXT(v->stage_combo), _("Raw spectrum"));
    gtk_combo_box_text_append_text(GTK_COMBO_BOX_TEXT(v->stage_combo), _("Background subtracted"));
    gtk_combo_box_text_append_text(GTK_COMBO_BOX_TEXT(v->stage_combo), _("Resampled to k"));
    gtk_combo_box_set_active(GTK_COMBO_BOX(v->stage_combo), 1);
    g_signal_connect(v->stage_combo, "changed", G_CALLBACK(stage_changed), v);
    gtk_box_pack_start(GTK_BOX(spectrum_box), v->stage_combo, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(spectrum_box), GTK_WIDGET(v->spectrum_plot), TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(plots), GTK_WIDGET(v->aline_plot), TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(plots), spectrum_box, TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(v), plots, TRUE, TRUE, 0); /* shares spare height with images */
    v->info_label = gtk_label_new(_("Run oct.bscan to see B-scans."));
    gtk_label_set_ellipsize(GTK_LABEL(v->info_label), PANGO_ELLIPSIZE_END);
    gtk_widget_set_halign(v->info_label, GTK_ALIGN_START);
    gtk_box_pack_start(GTK_BOX(v), v->info_label, FALSE, FALSE, 0);
}

GtkWidget *fm_oct_views_new(void)
{
    return g_object_new(FM_TYPE_OCT_VIEWS, NULL);
}
