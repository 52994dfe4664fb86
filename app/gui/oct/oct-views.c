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
    GtkWidget *display; /* the display controls, for the side panel (owned) */
    GtkWidget *split;   /* B-scan above, the small views below */
    int split_height;   /* the split's height when its handle was last placed */
    int split_wanted;   /* where the handle goes */
    guint split_idle;
    fm_dataset *spectra;
    fm_params *params;
    fm_result *result;
    double um_per_bin;
    gboolean depth_in_bins; /* the result's spectra are not open: no calibration, no µm */
    int bscan, aline, play_count;
    double aline_um, bscan_um; /* lateral steps of the spectra on show; 0 when unknown */
    int bscan_w, bscan_h;      /* the B-scan as drawn: square pixels of its true aspect */
    guint play_timer;
    gboolean updating;
    /* live frames (a camera): the B-scan row hidden, the newest B-scan drawn as it comes */
    gboolean live;
    double live_aspect; /* the live B-scan's width over its depth, 0 before its first frame */
    int live_alines;
    GtkWidget *bscan_row;
};

G_DEFINE_TYPE(FmOctViews, fm_oct_views, GTK_TYPE_BOX)

static fm_map *bscan_map(FmOctViews *v)
{
    return v->result ? fm_result_get_map(v->result, "bscan_db") : NULL;
}

/* The map view draws square pixels, so an image of w x h samples whose width is `aspect` times
 * its height (physically) is resampled (nearest sample) to *out_w x *out_h pixels of that
 * aspect, neither side shorter than its samples. */
static void resampled_size(int w, int h, double aspect, int *out_w, int *out_h)
{
    if (aspect * h >= w) {
        *out_w = MAX(w, (int)lround(aspect * h));
        *out_h = h;
    } else {
        *out_w = w;
        *out_h = MAX(h, (int)lround(w / aspect));
    }
}

static void set_resampled(FmMapView *view, const float *data, int w, int h, int out_w, int out_h,
                          const char *title)
{
    g_autofree float *big = g_new(float, (gsize)out_w *out_h);
    g_autofree int *col = g_new(int, out_w);
    for (int x = 0; x < out_w; x++)
        col[x] = MIN(w - 1, (int)((x + 0.5) * w / out_w));
    for (int y = 0; y < out_h; y++) {
        const float *row = data + (gsize)MIN(h - 1, (int)((y + 0.5) * h / out_h)) * w;
        float *dst = big + (gsize)y * out_w;
        for (int x = 0; x < out_w; x++)
            dst[x] = row[col[x]];
    }
    fm_map_view_set_map(view, big, out_w, out_h, title, "dB");
}

double fm_oct_views_get_bscan_aspect(FmOctViews *v)
{
    if (v->live)
        return v->live_aspect;
    fm_map *map = bscan_map(v);
    if (!map)
        return 0;
    /* without the lateral step (or the depth step), each sample is taken as square */
    if (v->aline_um > 0 && !v->depth_in_bins)
        return map->width * v->aline_um / (map->height * v->um_per_bin);
    return (double)map->width / map->height;
}

static void update_caption(FmOctViews *v)
{
    fm_map *map = bscan_map(v);
    if (!map)
        return;
    g_autofree char *text = g_strdup_printf(_("B-scan %d of %d"), v->bscan + 1, map->n_frames);
    gtk_label_set_text(GTK_LABEL(g_object_get_data(G_OBJECT(v->bscan_scale), "fm-caption")), text);
}

static void show_bscan(FmOctViews *v)
{
    fm_map *map = bscan_map(v);
    if (!map || v->live)
        return;
    g_autofree char *title = g_strdup_printf(_("B-scan %d of %d"), v->bscan + 1, map->n_frames);
    resampled_size(map->width, map->height, fm_oct_views_get_bscan_aspect(v), &v->bscan_w,
                   &v->bscan_h);
    set_resampled(v->bscan_view, fm_map_frame(map, v->bscan), map->width, map->height, v->bscan_w,
                  v->bscan_h, title);
    fm_map_view_set_range(v->bscan_view, gtk_range_get_value(GTK_RANGE(v->floor_scale)),
                          gtk_range_get_value(GTK_RANGE(v->ceiling_scale)));
    update_caption(v);
}

/* Mean power over the chosen depth bins (not mean dB, as in the method's en-face output). */
static void show_enface(FmOctViews *v)
{
    fm_map *map = bscan_map(v);
    if (!map || v->um_per_bin <= 0 || v->live)
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
    /* A-lines across, B-scans down: at the scan's aspect when its steps are known, else a
     * readable 4:3 (a few B-scans of many A-lines would be a thin strip) */
    double aspect = v->aline_um > 0 && v->bscan_um > 0
                        ? map->width * v->aline_um / (map->n_frames * v->bscan_um)
                        : 4.0 / 3.0;
    int w, h;
    resampled_size(map->width, map->n_frames, aspect, &w, &h);
    set_resampled(v->enface_view, enface, map->width, map->n_frames, w, h, _("En-face"));
    fm_map_view_set_range(v->enface_view, gtk_range_get_value(GTK_RANGE(v->floor_scale)),
                          gtk_range_get_value(GTK_RANGE(v->ceiling_scale)));
}

static void show_spectrum(FmOctViews *v)
{
    if (!v->spectra || !v->params || v->aline < 0 || v->live)
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
    if (v->live)
        return;
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
    fm_map *map = bscan_map(v);
    if (!map || x < 0 || v->bscan_w <= 0 || v->live)
        return;
    int aline = MIN(map->width - 1, (int)((x + 0.5) * map->width / v->bscan_w));
    if (aline != v->aline)
        fm_oct_views_show_aline(v, aline);
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
    v->bscan = (int)lround(gtk_range_get_value(range)) - 1; /* the slider counts from 1 */
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
    gtk_range_set_value(GTK_RANGE(v->bscan_scale), v->bscan + 1);
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
    fm_oct_views_set_live(v, FALSE, 0, NULL); /* a file's result: its own controls again */
    gboolean first = v->result == NULL;
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
    gtk_range_set_range(GTK_RANGE(v->bscan_scale), 1, MAX(map->n_frames, 2));
    gtk_widget_set_sensitive(v->bscan_scale, map->n_frames > 1);
    gtk_widget_set_sensitive(v->play_button, map->n_frames > 1);
    gtk_range_set_range(GTK_RANGE(v->depth_start_scale), 0, depth_um);
    gtk_range_set_range(GTK_RANGE(v->depth_end_scale), 0, depth_um);
    gtk_range_set_value(GTK_RANGE(v->depth_start_scale), 0);
    gtk_range_set_value(GTK_RANGE(v->depth_end_scale), depth_um);
    v->updating = FALSE;
    fm_plot_view_set_labels(v->aline_plot, fm_oct_views_get_depth_label(v), _("dB"));
    /* the first result opens on the volume's middle, where a sample's structure usually is */
    fm_oct_views_set_bscan(v, first ? map->n_frames / 2 : MIN(v->bscan, map->n_frames - 1));
    fm_oct_views_show_aline(v, v->aline >= 0 ? v->aline : map->width / 2);
    show_enface(v);
    fm_map_view_zoom_to_fit(v->bscan_view);
    fm_map_view_zoom_to_fit(v->enface_view);
    v->split_height = 0; /* another aspect: the handle goes where this one fits */
    gtk_widget_queue_resize(v->split);
}

const char *fm_oct_views_get_depth_label(FmOctViews *v)
{
    return v->depth_in_bins ? _("depth (bin)") : _("depth (µm)");
}

const fm_result *fm_oct_views_get_result(FmOctViews *v)
{
    return v->result;
}

double fm_oct_views_get_columns_per_aline(FmOctViews *v)
{
    if (v->live)
        return v->live_alines > 0 && v->bscan_w > 0 ? (double)v->bscan_w / v->live_alines : 1.0;
    fm_map *map = bscan_map(v);
    return map && v->bscan_w > 0 ? (double)v->bscan_w / map->width : 1.0;
}

void fm_oct_views_set_spacing(FmOctViews *v, double aline_um, double bscan_um)
{
    v->aline_um = aline_um > 0 ? aline_um : 0;
    v->bscan_um = bscan_um > 0 ? bscan_um : 0;
}

GtkWidget *fm_oct_views_get_display_controls(FmOctViews *v)
{
    return v->display;
}

FmMapView *fm_oct_views_get_bscan_view(FmOctViews *v)
{
    return v->bscan_view;
}

FmMapView *fm_oct_views_get_enface_view(FmOctViews *v)
{
    return v->enface_view;
}

/* A label over its slider in the display controls (the side panel): each takes the panel's
 * width, so that the slider's value stays readable in a narrow pane. */
static GtkWidget *labelled_scale(GtkWidget *box, const char *label, double lo, double hi,
                                 double value, GCallback cb, FmOctViews *v)
{
    GtkWidget *l = gtk_label_new(label);
    gtk_widget_set_halign(l, GTK_ALIGN_START);
    GtkWidget *scale = gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, lo, hi, 1);
    gtk_scale_set_value_pos(GTK_SCALE(scale), GTK_POS_RIGHT);
    gtk_scale_set_digits(GTK_SCALE(scale), 0);
    gtk_range_set_value(GTK_RANGE(scale), value);
    gtk_widget_set_hexpand(scale, TRUE);
    g_object_set_data(G_OBJECT(scale), "fm-label", l);
    gtk_box_pack_start(GTK_BOX(box), l, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(box), scale, FALSE, FALSE, 0);
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
    g_clear_object(&v->display);
    if (v->split_idle) {
        g_source_remove(v->split_idle);
        v->split_idle = 0;
    }
    G_OBJECT_CLASS(fm_oct_views_parent_class)->dispose(object);
}

static void fm_oct_views_class_init(FmOctViewsClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = fm_oct_views_dispose;
}

/* The B-scan's row under it: which B-scan (counted from 1, as its caption says) and playback. */
static GtkWidget *bscan_row(FmOctViews *v)
{
    GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    v->bscan_scale = gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, 1, 2, 1);
    gtk_scale_set_draw_value(GTK_SCALE(v->bscan_scale), FALSE);
    gtk_range_set_round_digits(GTK_RANGE(v->bscan_scale), 0);
    gtk_widget_set_hexpand(v->bscan_scale, TRUE);
    gtk_widget_set_tooltip_text(v->bscan_scale, _("Which B-scan of the volume to show"));
    g_signal_connect(v->bscan_scale, "value-changed", G_CALLBACK(bscan_changed), v);
    GtkWidget *caption = gtk_label_new(_("B-scan 1 of 1"));
    gtk_label_set_width_chars(GTK_LABEL(caption), 14);
    gtk_label_set_xalign(GTK_LABEL(caption), 0);
    g_object_set_data(G_OBJECT(v->bscan_scale), "fm-caption", caption);
    v->play_button = gtk_toggle_button_new_with_label(_("Play"));
    gtk_widget_set_tooltip_text(v->play_button, _("Play the B-scans of the volume"));
    g_signal_connect(v->play_button, "toggled", G_CALLBACK(play_toggled), v);
    gtk_box_pack_start(GTK_BOX(row), caption, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(row), v->bscan_scale, TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(row), v->play_button, FALSE, FALSE, 0);
    return row;
}

/* dB range, en-face depth range and the spectrum plot's stage: set once and left, so they live
 * in the side panel and leave the centre to the images. */
static GtkWidget *display_controls(FmOctViews *v)
{
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
    v->floor_scale = labelled_scale(box, _("dB floor"), 0, 160, 50, G_CALLBACK(range_changed), v);
    v->ceiling_scale =
        labelled_scale(box, _("dB ceiling"), 0, 160, 110, G_CALLBACK(range_changed), v);
    v->depth_start_scale =
        labelled_scale(box, _("En-face from (µm)"), 0, 1, 0, G_CALLBACK(depth_changed), v);
    v->depth_end_scale = labelled_scale(box, _("to (µm)"), 0, 1, 1, G_CALLBACK(depth_changed), v);
    GtkWidget *stage_label = gtk_label_new(_("Spectrum plot"));
    gtk_widget_set_halign(stage_label, GTK_ALIGN_START);
    v->stage_combo = gtk_combo_box_text_new();
    gtk_combo_box_text_append_text(GTK_COMBO_BOX_TEXT(v->stage_combo), _("Raw spectrum"));
    gtk_combo_box_text_append_text(GTK_COMBO_BOX_TEXT(v->stage_combo), _("Background subtracted"));
    gtk_combo_box_text_append_text(GTK_COMBO_BOX_TEXT(v->stage_combo), _("Resampled to k"));
    gtk_combo_box_set_active(GTK_COMBO_BOX(v->stage_combo), 1);
    g_signal_connect(v->stage_combo, "changed", G_CALLBACK(stage_changed), v);
    gtk_box_pack_start(GTK_BOX(box), stage_label, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(box), v->stage_combo, FALSE, FALSE, 0);
    gtk_widget_show_all(box);
    return box;
}

/* On a resize, the handle goes where the B-scan, as wide as the view, just fits above it: height
 * the B-scan cannot use (it is width-bound on a wide screen) goes to the small views below. A
 * handle the user moved stays until the next resize. */
static gboolean place_handle(gpointer data)
{
    FmOctViews *v = data;
    v->split_idle = 0;
    gtk_paned_set_position(GTK_PANED(v->split), v->split_wanted);
    return G_SOURCE_REMOVE;
}

static void split_allocated(GtkWidget *split, GdkRectangle *alloc, FmOctViews *v)
{
    double aspect = fm_oct_views_get_bscan_aspect(v);
    if (alloc->height == v->split_height || !(aspect > 0))
        return;
    v->split_height = alloc->height;
    int row_h = 0, small_min = 0;
    gtk_widget_get_preferred_height(gtk_paned_get_child1(GTK_PANED(split)), &row_h, NULL);
    row_h -= 120; /* the B-scan view's own minimum is in there */
    gtk_widget_get_preferred_height(gtk_paned_get_child2(GTK_PANED(split)), &small_min, NULL);
    const int colorbar_w = 80; /* about what the map view keeps for its colorbar */
    int want = (int)ceil((alloc->width - colorbar_w) / aspect) + row_h + 8;
    int handle = 0;
    gtk_widget_style_get(split, "handle-size", &handle, NULL);
    int most = alloc->height - small_min - handle;
    v->split_wanted = CLAMP(want, 120 + row_h, MAX(most, 120 + row_h));
    if (v->split_wanted != gtk_paned_get_position(GTK_PANED(split)) && !v->split_idle)
        v->split_idle = g_idle_add(place_handle, v); /* not within the allocation itself */
}

static void fm_oct_views_init(FmOctViews *v)
{
    v->aline = -1;
    gtk_orientable_set_orientation(GTK_ORIENTABLE(v), GTK_ORIENTATION_VERTICAL);
    gtk_box_set_spacing(GTK_BOX(v), 4);
    v->display = g_object_ref_sink(display_controls(v));

    /* The B-scan takes what the row of small views leaves (a handle between them). */
    GtkWidget *split = gtk_paned_new(GTK_ORIENTATION_VERTICAL);
    v->split = split;
    g_signal_connect_after(split, "size-allocate", G_CALLBACK(split_allocated), v);
    GtkWidget *top = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    v->bscan_view = FM_MAP_VIEW(fm_map_view_new());
    fm_map_view_set_colormap(v->bscan_view, FM_COLORMAP_GRAY);
    gtk_widget_set_size_request(GTK_WIDGET(v->bscan_view), 240, 120);
    gtk_widget_set_vexpand(GTK_WIDGET(v->bscan_view), TRUE);
    g_signal_connect(v->bscan_view, "cursor-moved", G_CALLBACK(cursor_moved), v);
    gtk_box_pack_start(GTK_BOX(top), GTK_WIDGET(v->bscan_view), TRUE, TRUE, 0);
    v->bscan_row = bscan_row(v);
    gtk_widget_set_name(v->bscan_row, "fm-oct-bscan-row");
    gtk_box_pack_start(GTK_BOX(top), v->bscan_row, FALSE, FALSE, 0);
    gtk_paned_pack1(GTK_PANED(split), top, TRUE, FALSE);

    GtkWidget *small = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    v->enface_view = FM_MAP_VIEW(fm_map_view_new());
    fm_map_view_set_colormap(v->enface_view, FM_COLORMAP_GRAY);
    v->aline_plot = FM_PLOT_VIEW(fm_plot_view_new());
    v->spectrum_plot = FM_PLOT_VIEW(fm_plot_view_new());
    gtk_widget_set_size_request(GTK_WIDGET(v->enface_view), 150, 110);
    gtk_widget_set_size_request(GTK_WIDGET(v->aline_plot), 180, 110);
    gtk_widget_set_size_request(GTK_WIDGET(v->spectrum_plot), 180, 110);
    fm_plot_view_set_labels(v->aline_plot, _("depth (µm)"), _("dB"));
    fm_plot_view_set_labels(v->spectrum_plot, _("spectrometer pixel"), _("counts"));
    gtk_box_pack_start(GTK_BOX(small), GTK_WIDGET(v->enface_view), TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(small), GTK_WIDGET(v->aline_plot), TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(small), GTK_WIDGET(v->spectrum_plot), TRUE, TRUE, 0);
    gtk_paned_pack2(GTK_PANED(split), small, FALSE, FALSE);
    gtk_box_pack_start(GTK_BOX(v), split, TRUE, TRUE, 0);

    v->info_label = gtk_label_new(_("Run oct.bscan to see B-scans."));
    gtk_widget_set_name(v->info_label, "fm-oct-info");
    gtk_label_set_ellipsize(GTK_LABEL(v->info_label), PANGO_ELLIPSIZE_END);
    gtk_label_set_xalign(GTK_LABEL(v->info_label), 0);
    gtk_box_pack_start(GTK_BOX(v), v->info_label, FALSE, FALSE, 0);
}

void fm_oct_views_set_live(FmOctViews *v, gboolean live, double um_per_bin, const char *text)
{
    if (!live && !v->live)
        return;
    gboolean began = live && !v->live;
    v->live = live;
    /* no volume to step through or play while frames come one by one */
    gtk_widget_set_no_show_all(v->bscan_row, live);
    gtk_widget_set_visible(v->bscan_row, !live);
    if (live) {
        fm_oct_views_set_playing(v, FALSE);
        if (began || um_per_bin > 0) { /* a source chosen again keeps the last run's depth */
            v->depth_in_bins = !(um_per_bin > 0.0);
            v->um_per_bin = v->depth_in_bins ? 1.0 : um_per_bin;
        }
        if (began) {
            v->live_aspect = 0;
            fm_plot_view_clear(v->aline_plot);
            fm_plot_view_clear(v->spectrum_plot);
        }
        fm_plot_view_set_labels(v->aline_plot, fm_oct_views_get_depth_label(v), _("dB"));
        /* TRANSLATORS: the spectrum plot while a camera runs: its frames are not kept */
        fm_plot_view_set_placeholder(v->spectrum_plot, _("live: the spectra are not kept"));
        fm_plot_view_set_placeholder(v->aline_plot, _("live: the centre A-line comes with "
                                                      "the first B-scan"));
        if (text)
            gtk_label_set_text(GTK_LABEL(v->info_label), text);
        return;
    }
    fm_plot_view_set_placeholder(v->spectrum_plot, NULL);
    fm_plot_view_set_placeholder(v->aline_plot, NULL);
    fm_plot_view_clear(v->aline_plot);
    v->live_aspect = 0;
    gtk_label_set_text(GTK_LABEL(v->info_label), _("Run oct.bscan to see B-scans."));
}

void fm_oct_views_set_live_text(FmOctViews *v, const char *text)
{
    gtk_label_set_text(GTK_LABEL(v->info_label), text);
}

void fm_oct_views_show_live(FmOctViews *v, const fm_map *bscan, const fm_map *enface)
{
    if (!v->live || !bscan || bscan->width <= 0 || bscan->height <= 0)
        return;
    /* physical when the lateral and depth steps are known, else square samples */
    double aspect = v->aline_um > 0 && !v->depth_in_bins
                        ? bscan->width * v->aline_um / (bscan->height * v->um_per_bin)
                        : (double)bscan->width / bscan->height;
    gboolean first = v->live_aspect != aspect || v->live_alines != bscan->width;
    v->live_aspect = aspect;
    v->live_alines = bscan->width;
    resampled_size(bscan->width, bscan->height, aspect, &v->bscan_w, &v->bscan_h);
    set_resampled(v->bscan_view, bscan->data, bscan->width, bscan->height, v->bscan_w, v->bscan_h,
                  _("B-scan"));
    double lo = gtk_range_get_value(GTK_RANGE(v->floor_scale));
    double hi = gtk_range_get_value(GTK_RANGE(v->ceiling_scale));
    fm_map_view_set_range(v->bscan_view, lo, hi);
    /* the newest B-scan's centre A-line: what a live view is aligned on */
    int aline = bscan->width / 2;
    g_autofree double *xs = g_new(double, bscan->height), *ys = g_new(double, bscan->height);
    for (int z = 0; z < bscan->height; z++) {
        xs[z] = z * v->um_per_bin;
        ys[z] = bscan->data[(gsize)z * bscan->width + aline];
    }
    fm_plot_view_set_series(v->aline_plot, xs, ys, bscan->height);
    if (enface && enface->width > 0 && enface->height > 0) {
        /* A-lines across, B-scans down, as the file's en-face is drawn */
        double ea = v->aline_um > 0 && v->bscan_um > 0
                        ? enface->width * v->aline_um / (enface->height * v->bscan_um)
                        : 4.0 / 3.0;
        int w, h;
        resampled_size(enface->width, enface->height, ea, &w, &h);
        set_resampled(v->enface_view, enface->data, enface->width, enface->height, w, h,
                      _("En-face"));
        fm_map_view_set_range(v->enface_view, lo, hi);
        fm_map_view_zoom_to_fit(v->enface_view); /* it grows a row per B-scan */
    }
    if (first) { /* another aspect: the view fits it, the handle goes where it fits */
        fm_map_view_zoom_to_fit(v->bscan_view);
        v->split_height = 0;
        gtk_widget_queue_resize(v->split);
    }
}

gboolean fm_oct_views_is_live(FmOctViews *v)
{
    return v->live;
}

GtkWidget *fm_oct_views_new(void)
{
    return g_object_new(FM_TYPE_OCT_VIEWS, NULL);
}
