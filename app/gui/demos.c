/* The demos table and their opening: the one place, with the pages' registry, that lists the
 * families for the start page. */
#include "demos.h"

#include <glib/gi18n.h>

#include "fm_config.h"
#include "app/gui/mcml/mcml-page.h"

static const fm_demo demos[] = {
    {"lsi", N_("Laser speckle"),
     N_("30 frames of a simulated speckle stack with flow: contrast and flow maps, playback"),
     "speckle-demo.tif"},
    {"flim", N_("Fluorescence lifetime"),
     N_("A Becker & Hickl .sdt with a FRET gradient and its IRF: lifetimes, phasor, fits"),
     "flim-demo.sdt"},
    {"dce", N_("Perfusion (DCE)"),
     N_("A DCE-MRI liver phantom with aorta, portal-vein and liver ROIs assigned: dual-input maps"),
     "dce-demo.nii"},
    {"oct", N_("SD-OCT"),
     N_("Raw spectra of a layered sample with an inclusion, 6 x 6 mm, and the spectrometer "
        "calibration: B-scans, en-face"),
     "oct-demo.raw"},
    {"mcml", N_("Light transport (MCML)"),
     N_("Monte Carlo in a seven-layer skin model: reflectance, absorption, fluence"), NULL},
};

const fm_demo *fm_demos(gsize *n_demos)
{
    *n_demos = G_N_ELEMENTS(demos);
    return demos;
}

char *fm_demo_dir(void)
{
    const char *env = g_getenv("FLUXMAP_DEMO_DIR");
    if (env != NULL && *env != '\0')
        return g_strdup(env);
    if (g_file_test(FM_DEMO_BUILD_DIR, G_FILE_TEST_IS_DIR))
        return g_strdup(FM_DEMO_BUILD_DIR);
    return g_strdup(FM_DEMO_INSTALL_DIR);
}

static const fm_demo *find(const char *id)
{
    for (gsize i = 0; i < G_N_ELEMENTS(demos); i++)
        if (g_strcmp0(demos[i].id, id) == 0)
            return &demos[i];
    return NULL;
}

static char *demo_path(const char *file)
{
    g_autofree char *dir = fm_demo_dir();
    return g_build_filename(dir, file, NULL);
}

gboolean fm_demo_available(const fm_demo *demo)
{
    if (demo->file == NULL)
        return TRUE;
    g_autofree char *path = demo_path(demo->file);
    return g_file_test(path, G_FILE_TEST_IS_REGULAR);
}

gboolean fm_demo_open(FmWindow *win, const char *id)
{
    const fm_demo *demo = find(id);
    if (demo == NULL)
        return FALSE;
    if (demo->file == NULL) { /* MCML: its page with the skin model, ready to run */
        fm_mcml_view_load_demo(fm_window_get_mcml_view(win));
        fm_window_set_family(win, "mcml");
        return TRUE;
    }
    g_autofree char *path = demo_path(demo->file);
    if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
        g_autofree char *text = g_strdup_printf(
            _("The %s demo is not there (%s): build the project (packaging/dev.sh run) or set "
              "FLUXMAP_DEMO_DIR."),
            _(demo->title), path);
        fm_window_show_message(win, GTK_MESSAGE_ERROR, text);
        return FALSE;
    }
    /* DCE: the phantom's ROIs come with it from dce-demo.rois.json, as beside any file */
    fm_window_open_file(win, path);
    if (g_strcmp0(id, "flim") == 0) { /* the fits take the IRF written beside the decays */
        g_autofree char *base = g_strndup(path, strlen(path) - strlen(".sdt"));
        g_autofree char *irf = g_strconcat(base, ".irf.csv", NULL);
        fm_window_set_family(win, "flim");
        fm_window_select_method(win, "flim.lsm");
        fm_window_set_param(win, "irf_file", irf);
    }
    return TRUE;
}
