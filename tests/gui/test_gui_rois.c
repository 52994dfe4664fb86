/* GUI test of ROIs from and to label maps: a DCE phantom's label map imported through
 * win.import-rois-file (roles from the description file beside it) lands on its slices with its
 * roles, so the DCE checklist is complete and dce.dual_input runs; win.export-rois-file writes
 * them back voxel for voxel; a label map of another size is refused in the info bar naming both
 * sizes; on a 2-D speckle stack a TIFF label map's ROIs go on the map view as "label N". */
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "app/core/dce/dce_prep.h"
#include "app/core/dce/dce_sim.h"
#include "app/core/io/frame_times.h"
#include "app/core/io/nifti.h"
#include "app/core/io/tiff.h"
#include "app/core/roi_labels.h"
#include "app/gui/application.h"
#include "app/gui/dce/dce-page.h"
#include "app/gui/dce/dce-panel.h"
#include "app/gui/dce/dce-views.h"
#include "app/gui/map-view.h"
#include "app/gui/window.h"
#include "gui-test-util.h"

static char *data_dir, *nii_path, *mask_path;
static FmApplication *app;
static FmWindow *win;
static fm_dce_sim_params sim;
static const double affine[16] = {-1.5, 0, 0, 24, 0, 1.5, 0, -30, 0, 0, 4, 12, 0, 0, 0, 1};

static FmDceViews *views(void)
{
    return FM_DCE_VIEWS(fm_window_get_dce_views(win));
}

static void open_file(const char *path)
{
    g_action_group_activate_action(G_ACTION_GROUP(app), "open", g_variant_new_string(path));
    g_assert_true(fm_gui_test_wait_until(fm_gui_test_dce_loaded, win, 30));
    g_assert_null(fm_window_get_message(win, NULL));
}

static void import_rois(const char *path, const char *roles)
{
    g_action_group_activate_action(G_ACTION_GROUP(win), "import-rois-file",
                                   g_variant_new("(ss)", path, roles));
    fm_gui_test_drain(0.25);
}

static void test_import_dce(void)
{
    open_file(nii_path);
    g_assert_cmpstr(fm_window_get_family(win), ==, "dce");
    import_rois(mask_path, ""); /* roles from mask.labels.txt */
    g_assert_null(fm_gui_test_error_message(win));
    g_autoptr(GPtrArray) all = fm_window_dce_get_rois(win);
    g_assert_cmpuint(all->len, ==, 3u * sim.nz); /* one per label and slice */
    for (guint i = 0; i < all->len; i++)
        g_assert_cmpint(((fm_roi *)all->pdata[i])->kind, ==, FM_ROI_MASK);
    /* the slice on show holds one ROI of each role on the map view */
    GPtrArray *shown = fm_map_view_get_rois(fm_window_get_map_view(win));
    g_assert_cmpuint(shown->len, ==, 3);
    int slice = fm_dce_views_get_slice(views());
    static const char *const roles[] = {"aorta", "portal_vein", "liver"};
    for (guint i = 0; i < shown->len; i++) {
        const fm_roi *roi = shown->pdata[i];
        g_assert_cmpint(roi->slice, ==, slice);
        gboolean known = FALSE;
        for (gsize r = 0; r < G_N_ELEMENTS(roles); r++)
            known |= g_strcmp0(roi->role, roles[r]) == 0 && g_strcmp0(roi->name, roles[r]) == 0;
        g_assert_true(known);
    }
    /* every input the method asks for is there */
    g_assert_null(fm_dce_panel_get_missing(FM_DCE_PANEL(fm_window_get_dce_panel(win))));
    g_autofree char *shot = fm_gui_test_screenshot_path(data_dir, "rois.png", "");
    fm_gui_test_save_png(GTK_WIDGET(win), shot);
}

static void test_run_with_imported(void)
{
    fm_gui_test_run_job(win, "dce-run", 90);
    fm_roi_stats st;
    g_assert_true(fm_dce_views_role_stats(views(), "liver", "ka", &st));
    g_assert_cmpuint(st.n, >, 20);
    /* noise-free, no lesions: the liver's ka as the phantom made it (see gui-dce) */
    g_assert_cmpfloat(fabs(st.mean - sim.liver[0]), <, 0.02 * sim.liver[0]);
}

static void test_export(void)
{
    g_autofree char *out = g_build_filename(data_dir, "exported.nii.gz", NULL);
    g_action_group_activate_action(G_ACTION_GROUP(win), "export-rois-file",
                                   g_variant_new_string(out));
    fm_gui_test_drain(0.1);
    g_assert_null(fm_gui_test_error_message(win));
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) a = fm_nifti_read(mask_path, &error);
    g_assert_no_error(error);
    g_autoptr(fm_dataset) b = fm_nifti_read(out, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(fm_dataset_n_elements(a), ==, fm_dataset_n_elements(b));
    gsize inside = 0;
    for (gsize i = 0; i < fm_dataset_n_elements(a); i++) {
        g_assert_cmpfloat(fm_dataset_value(a, i), ==, fm_dataset_value(b, i));
        inside += fm_dataset_value(a, i) > 0;
    }
    g_assert_cmpuint(inside, >, 50);
    double back[16];
    g_assert_true(fm_dataset_get_affine(b, back));
    for (int i = 0; i < 16; i++)
        g_assert_cmpfloat(fabs(back[i] - affine[i]), <, 1e-4);
}

static void test_size_mismatch(void)
{
    gsize sizes[3] = {8, 6, 1};
    g_autoptr(fm_dataset) small = fm_dataset_new(FM_PIXEL_F32, 3, sizes, NULL);
    g_autofree char *path = g_build_filename(data_dir, "small.nii", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_nifti_write(path, small->data, 8, 6, 1, 1, NULL, NULL, 1, &error));
    import_rois(path, "");
    const char *message = fm_gui_test_error_message(win);
    g_assert_nonnull(message);
    g_autofree char *want =
        g_strdup_printf("label map is 8x6x1 but liver.nii.gz is %dx%dx%d", sim.nx, sim.ny, sim.nz);
    g_assert_nonnull(strstr(message, want));
    fm_window_hide_message(win);
}

/* A 2-D stack: the window's map view takes the ROIs, named "label N" without roles. */
static void test_import_2d(void)
{
    g_autofree char *stack = fm_gui_test_write_speckle(data_dir, "speckle.tif", 48, 40, 8, 7);
    open_file(stack);
    gsize sizes[2] = {48, 40};
    g_autoptr(fm_dataset) labels = fm_dataset_new(FM_PIXEL_U8, 2, sizes, NULL);
    guint8 *v = labels->data;
    for (int y = 4; y < 12; y++)
        for (int x = 5; x < 15; x++)
            v[y * 48 + x] = 1;
    v[30 * 48 + 40] = 4;
    g_autofree char *path = g_build_filename(data_dir, "labels2d.tif", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_tiff_write_dataset(path, labels, NULL, &error));
    FmMapView *map = fm_window_get_map_view(win);
    fm_map_view_clear_rois(map);
    import_rois(path, "");
    g_assert_null(fm_gui_test_error_message(win));
    GPtrArray *shown = fm_map_view_get_rois(map);
    g_assert_cmpuint(shown->len, ==, 2);
    g_assert_cmpstr(((fm_roi *)shown->pdata[0])->name, ==, "label 1");
    g_assert_cmpstr(((fm_roi *)shown->pdata[1])->name, ==, "label 4");
    g_assert_cmpuint(fm_roi_count_pixels(shown->pdata[0], 48, 40), ==, 80);
    g_assert_cmpuint(fm_roi_count_pixels(shown->pdata[1], 48, 40), ==, 1);
    /* a typed role for a label the map lacks is refused */
    import_rois(path, "2=aorta");
    g_assert_nonnull(fm_gui_test_error_message(win));
    g_assert_nonnull(strstr(fm_gui_test_error_message(win), "label 2 (aorta) is not in"));
}

int main(int argc, char **argv)
{
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-rois-XXXXXX");
    if (data_dir == NULL)
        return 0;
    nii_path = fm_gui_test_write_dce_phantom(data_dir, 32, 28, 2, 16, affine, &sim);
    g_autoptr(GError) error = NULL;
    /* The phantom's ROIs as a label map over the file, as a segmentation tool would save it */
    g_autoptr(fm_dataset) source = fm_nifti_read(nii_path, &error);
    g_assert_no_error(error);
    g_autoptr(GPtrArray) rois = fm_dce_sim_rois(&sim);
    mask_path = g_build_filename(data_dir, "mask.nii.gz", NULL);
    g_assert_true(fm_roi_list_to_label_map(mask_path, rois, source, NULL, &error));

    app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);
    gtk_window_resize(GTK_WINDOW(win), 1400, 900);
    fm_gui_test_drain(0.25);

    g_test_add_func("/gui-rois/import-dce", test_import_dce);
    g_test_add_func("/gui-rois/run-with-imported", test_run_with_imported);
    g_test_add_func("/gui-rois/export", test_export);
    g_test_add_func("/gui-rois/size-mismatch", test_size_mismatch);
    g_test_add_func("/gui-rois/import-2d", test_import_2d);
    int status = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    g_free(nii_path);
    g_free(mask_path);
    return status;
}
