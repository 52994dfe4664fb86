/* FmOctCompare: the resampling methods side by side on one B-scan, with mirror-peak PSFs. */
#include "oct-compare.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/method.h"
#include "app/core/oct/oct_stages.h"
#include "app/gui/map-view.h"
#include "app/gui/plot-view.h"

#define N_METHODS 4
#define MIN_BIN 20    /* past the DC residual of the background subtraction */
#define GUARD_BINS 30 /* the peak and its first side lobes stay out of the noise estimate */

static const char *const resamples[N_METHODS] = {"tdi", "linear", "cubic", "zeropad"};

typedef struct {
    fm_dataset *bscan;
    fm_params *params;
    fm_backend backend;
    fm_result *results[N_METHODS];
    fm_oct_psf psf[N_METHODS];
    double um_per_bin;
    GError *error;
} CompareWork;

struct _FmOctCompare {
    GtkWindow parent_instance;
    GtkWidget *grid, *status;
    GCancellable *cancellable;
    char *summary;
    gboolean done;
};

G_DEFINE_TYPE(FmOctCompare, fm_oct_compare, GTK_TYPE_WINDOW)

static void work_free(gpointer data)
{
    CompareWork *w = data;
    fm_dataset_unref(w->bscan);
    fm_params_free(w->params);
    for (int i = 0; i < N_METHODS; i++)
        if (w->results[i])
            fm_result_free(w->results[i]);
    g_clear_error(&w->error);
    g_free(w);
}

static void compare_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancel)
{
    CompareWork *w = data;
    const fm_method *method = fm_method_find("oct.bscan");
    g_autoptr(fm_oct_setup) setup = fm_oct_setup_new(w->bscan, w->params, &w->error);
    if (!setup)
        return;
    w->um_per_bin = setup->um_per_bin;
    for (int i = 0; i < N_METHODS && !g_cancellable_is_cancelled(cancel); i++) {
        g_autoptr(fm_params) p = fm_params_copy(w->params);
        if (!fm_params_set_from_string(p, "resample", resamples[i], &w->error))
            return;
        fm_job_context context = {.cancellable = cancel, .backend = w->backend};
        w->results[i] = fm_method_run(method, w->bscan, p, NULL, &context, &w->error);
        if (!w->results[i])
            return;
        fm_map *map = fm_result_get_map(w->results[i], "bscan_db");
        g_autofree float *lines = g_new(float, (gsize)map->width * map->height);
        for (int z = 0; z < map->height; z++)
            for (int a = 0; a < map->width; a++)
                lines[(gsize)a * map->height + z] = map->data[(gsize)z * map->width + a];
        fm_oct_psf_measure_bscan(lines, map->width, map->height, w->um_per_bin, MIN_BIN, GUARD_BINS,
                                 &w->psf[i]);
    }
}

/* The PSF of method i around its peak, +-20 bins, in µm from the peak. */
static GtkWidget *psf_plot(const CompareWork *w, int i)
{
    fm_map *map = fm_result_get_map(w->results[i], "bscan_db");
    int n = 41, peak = w->psf[i].peak_bin;
    double xs[41], ys[41];
    for (int j = 0; j < n; j++) {
        int z = CLAMP(peak - 20 + j, 0, map->height - 1);
        double power = 0;
        for (int a = 0; a < map->width; a++)
            power += pow(10.0, map->data[(gsize)z * map->width + a] / 10.0);
        xs[j] = (z - peak) * w->um_per_bin;
        ys[j] = 10.0 * log10(power / map->width + 1e-30);
    }
    GtkWidget *plot = fm_plot_view_new();
    fm_plot_view_set_labels(FM_PLOT_VIEW(plot), _("depth from peak (µm)"), _("dB"));
    fm_plot_view_set_series(FM_PLOT_VIEW(plot), xs, ys, n);
    gtk_widget_set_size_request(plot, 220, 150);
    return plot;
}

static void compare_done(GObject *source, GAsyncResult *res, gpointer user)
{
    GTask *task = G_TASK(res);
    CompareWork *w = g_task_get_task_data(task);
    FmOctCompare *self = FM_OCT_COMPARE(source);
    self->done = TRUE;
    if (w->error) {
        self->summary = g_strdup(w->error->message);
        gtk_label_set_text(GTK_LABEL(self->status), w->error->message);
        return;
    }
    GString *summary = g_string_new(NULL);
    for (int i = 0; i < N_METHODS && w->results[i]; i++) {
        fm_map *map = fm_result_get_map(w->results[i], "bscan_db");
        GtkWidget *view = fm_map_view_new();
        fm_map_view_set_colormap(FM_MAP_VIEW(view), FM_COLORMAP_GRAY);
        /* A-lines repeated to a readable aspect: views draw square pixels */
        int fx = MAX(1, (int)lround(0.75 * map->height / MAX(map->width, 1)));
        g_autofree float *wide = g_new(float, (gsize)map->width *fx * map->height);
        for (int z = 0; z < map->height; z++)
            for (int x = 0; x < map->width * fx; x++)
                wide[(gsize)z * map->width * fx + x] = map->data[(gsize)z * map->width + x / fx];
        fm_map_view_set_map(FM_MAP_VIEW(view), wide, map->width * fx, map->height, resamples[i],
                            "dB");
        fm_map_view_set_range(FM_MAP_VIEW(view), 50, 110);
        gtk_widget_set_size_request(view, 220, 260);
        g_autofree char *text = g_strdup_printf(_("%s: FWHM %.2f µm, peak SNR %.1f dB"),
                                                resamples[i], w->psf[i].fwhm_um, w->psf[i].snr_db);
        g_string_append_printf(summary, "%s\n", text);
        GtkWidget *label = gtk_label_new(text);
        gtk_grid_attach(GTK_GRID(self->grid), label, i, 0, 1, 1);
        gtk_grid_attach(GTK_GRID(self->grid), view, i, 1, 1, 1);
        gtk_grid_attach(GTK_GRID(self->grid), psf_plot(w, i), i, 2, 1, 1);
    }
    self->summary = g_string_free(summary, FALSE);
    gtk_label_set_text(GTK_LABEL(self->status),
                       _("Same B-scan, same background, window and dispersion; PSF of the "
                         "strongest peak, power averaged over the A-lines."));
    gtk_widget_show_all(GTK_WIDGET(self));
}

FmOctCompare *fm_oct_compare_new(GtkWindow *parent, fm_dataset *spectra, const fm_params *params,
                                 int bscan, fm_backend backend)
{
    FmOctCompare *self = g_object_new(FM_TYPE_OCT_COMPARE, "transient-for", parent, NULL);
    CompareWork *w = g_new0(CompareWork, 1);
    w->bscan = fm_oct_spectra_bscan(spectra, CLAMP(bscan, 0, fm_dataset_frames(spectra) - 1));
    w->params = fm_params_copy(params);
    w->backend = backend;
    GTask *task = g_task_new(self, self->cancellable, compare_done, NULL);
    g_task_set_task_data(task, w, work_free);
    g_task_run_in_thread(task, compare_thread);
    g_object_unref(task);
    return self;
}

gboolean fm_oct_compare_is_done(FmOctCompare *self)
{
    return self->done;
}

const char *fm_oct_compare_get_summary(FmOctCompare *self)
{
    return self->summary;
}

static void fm_oct_compare_dispose(GObject *object)
{
    FmOctCompare *self = FM_OCT_COMPARE(object);
    if (self->cancellable)
        g_cancellable_cancel(self->cancellable);
    g_clear_object(&self->cancellable);
    G_OBJECT_CLASS(fm_oct_compare_parent_class)->dispose(object);
}

static void fm_oct_compare_finalize(GObject *object)
{
    g_free(FM_OCT_COMPARE(object)->summary);
    G_OBJECT_CLASS(fm_oct_compare_parent_class)->finalize(object);
}

static void fm_oct_compare_class_init(FmOctCompareClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = fm_oct_compare_dispose;
    G_OBJECT_CLASS(klass)->finalize = fm_oct_compare_finalize;
}

static void fm_oct_compare_init(FmOctCompare *self)
{
    self->cancellable = g_cancellable_new();
    gtk_window_set_title(GTK_WINDOW(self), _("Compare resampling"));
    gtk_window_set_default_size(GTK_WINDOW(self), 960, 560);
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    g_object_set(box, "margin", 8, NULL);
    self->status = gtk_label_new(_("Processing the B-scan with each resampling method…"));
    gtk_widget_set_halign(self->status, GTK_ALIGN_START);
    self->grid = gtk_grid_new();
    gtk_grid_set_column_spacing(GTK_GRID(self->grid), 8);
    gtk_grid_set_row_spacing(GTK_GRID(self->grid), 4);
    gtk_grid_set_column_homogeneous(GTK_GRID(self->grid), TRUE);
    gtk_box_pack_start(GTK_BOX(box), self->status, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(box), self->grid, TRUE, TRUE, 0);
    gtk_container_add(GTK_CONTAINER(self), box);
}
