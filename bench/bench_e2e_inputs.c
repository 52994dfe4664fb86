/* fluxmap-bench e2e inputs: each workload's file written once with the project's simulators, as
 * `fluxmap-cli simulate` writes it, and reused by later runs that name the same folder. */
#include <string.h>

#include "bench_e2e.h"
#include "app/core/dataset.h"
#include "app/core/io/flim_write.h"
#include "app/core/io/nifti.h"
#include "app/core/io/oct_raw.h"
#include "app/core/io/tiff.h"
#include "app/core/oct/oct_calib.h"
#include "app/core/roi.h"
#include "app/core/dce/dce_sim.h"
#include "app/core/flim/flim_sim.h"
#include "app/core/lsi/lsi_sim.h"
#include "app/core/oct/oct_sim.h"

/* The table: lsi.spatial with window 5, the FLIM direct methods and the mono LSM fit,
 * oct.bscan with time-domain interpolation (21 taps), dce.dual_input with the phantom's ROIs. */
static const char *const lsi_params[] = {"window=5", NULL};
static const fm_bench_e2e_method lsi_methods[] = {{"lsi.spatial", lsi_params}};
static const char *const lsm_params[] = {"model=mono", NULL};
static const fm_bench_e2e_method flim_methods[] = {
    {"flim.iem", NULL}, {"flim.phasor", NULL}, {"flim.lsm", lsm_params}};
static const char *const oct_params[] = {"resample=tdi", "taps=21", NULL};
static const fm_bench_e2e_method oct_methods[] = {{"oct.bscan", oct_params}};
static const fm_bench_e2e_method dce_methods[] = {{"dce.dual_input", NULL}};

void fm_bench_e2e_input_clear(fm_bench_e2e_input *input)
{
    g_clear_pointer(&input->input, g_free);
    g_clear_pointer(&input->rois, g_free);
    g_clear_pointer(&input->summary, g_free);
}

/* A workload's files are complete once this stamp stands beside its input: a run cut short
 * while writing them leaves none, and the next run writes them all again. */
static char *stamp_path(const fm_bench_e2e_input *input)
{
    return g_strconcat(input->input, ".e2e-complete", NULL);
}

/* Sets the paths and the summary; TRUE when an earlier run completed the files. */
static gboolean reuse(fm_bench_e2e_input *input, const char *dir, const char *name,
                      const char *rois_suffix, char *summary, gboolean *generated)
{
    input->input = g_build_filename(dir, name, NULL);
    if (rois_suffix) {
        const char *dot = strchr(name, '.');
        g_autofree char *stem = g_strndup(name, dot ? (gsize)(dot - name) : strlen(name));
        g_autofree char *rois = g_strconcat(stem, rois_suffix, NULL);
        input->rois = g_build_filename(dir, rois, NULL);
    }
    input->summary = summary;
    g_autofree char *stamp = stamp_path(input);
    *generated =
        !g_file_test(stamp, G_FILE_TEST_EXISTS) || !g_file_test(input->input, G_FILE_TEST_EXISTS);
    return !*generated;
}

static gboolean complete(const fm_bench_e2e_input *input, GError **error)
{
    g_autofree char *stamp = stamp_path(input);
    return g_file_set_contents(stamp, input->summary, -1, error);
}

static gboolean prepare_lsi(const char *dir, gboolean small, fm_bench_e2e_input *input,
                            gboolean *generated, GError **error)
{
    fm_lsi_sim_params p;
    fm_lsi_sim_defaults(&p);
    p.width = small ? 96 : 1392;
    p.height = small ? 64 : 1040;
    p.n_frames = small ? 3 : 30;
    p.bits = 12;
    g_autofree char *name = g_strdup_printf("lsi_%dx%dx%d.tif", p.width, p.height, p.n_frames);
    if (reuse(input, dir, name, NULL,
              g_strdup_printf("%d frames %dx%d uint16 12-bit TIFF", p.n_frames, p.width, p.height),
              generated))
        return TRUE;
    g_autoptr(fm_dataset) ds = fm_lsi_simulate(&p, error);
    return ds &&
           fm_tiff_write_dataset(input->input, ds, "fluxmap-bench e2e; simulate lsi", error) &&
           complete(input, error);
}

static gboolean prepare_flim(const char *dir, gboolean small, fm_bench_e2e_input *input,
                             gboolean *generated, GError **error)
{
    fm_flim_sim_params p; /* the paper's 512 x 512 bars, 256 bins of 100 ps */
    fm_flim_sim_defaults(&p);
    if (small) {
        p.width = p.height = 32;
        p.n_bins = 64;
    }
    g_autofree char *name = g_strdup_printf("flim_%dx%dx%d.sdt", p.width, p.height, p.n_bins);
    if (reuse(input, dir, name, NULL,
              g_strdup_printf("%dx%d px x %d bins of %g ps, Becker & Hickl .sdt", p.width, p.height,
                              p.n_bins, p.bin_width_ps),
              generated))
        return TRUE;
    g_autoptr(fm_dataset) ds = fm_flim_simulate(&p, error);
    return ds && fm_sdt_write(input->input, ds, p.bin_width_ps, error) && complete(input, error);
}

static gboolean prepare_oct(const char *dir, gboolean small, fm_bench_e2e_input *input,
                            gboolean *generated, GError **error)
{
    fm_oct_sim_params p; /* the layered sample, 2048 pixels per A-line */
    fm_oct_sim_defaults(&p);
    p.alines_per_bscan = small ? 32 : 1000;
    p.n_bscans = small ? 2 : 50;
    if (small)
        p.pixels_per_aline = 512;
    g_autofree char *name =
        g_strdup_printf("oct_%dx%dx%d.raw", p.pixels_per_aline, p.alines_per_bscan, p.n_bscans);
    if (reuse(input, dir, name, NULL,
              g_strdup_printf("%d B-scans x %d A-lines x %d px, 12-bit packed raw", p.n_bscans,
                              p.alines_per_bscan, p.pixels_per_aline),
              generated))
        return TRUE;
    /* the sidecar names the calibration, which oct.bscan finds beside the file */
    g_autofree char *calib_name = g_strdup_printf("oct_%d.calib.csv", p.pixels_per_aline);
    g_autofree char *calib = g_build_filename(dir, calib_name, NULL);
    g_autofree double *lambda = g_new(double, p.pixels_per_aline);
    fm_oct_sim_wavelengths(&p, lambda);
    if (!fm_oct_calib_write_csv(calib, lambda, p.pixels_per_aline, error))
        return FALSE;
    g_autoptr(fm_dataset) ds = fm_oct_simulate(&p, error);
    return ds && fm_oct_raw_write(input->input, ds, FM_OCT_RAW_U12_PACKED, calib_name, error) &&
           complete(input, error);
}

static gboolean prepare_dce(const char *dir, gboolean small, fm_bench_e2e_input *input,
                            gboolean *generated, GError **error)
{
    fm_dce_sim_params p; /* the liver phantom of `fluxmap-cli simulate dce` */
    fm_dce_sim_defaults(&p);
    if (small) {
        p.nx = p.ny = 24;
        p.nz = 2;
        p.n_times = 24;
    }
    g_autofree char *name = g_strdup_printf("liver_%dx%dx%dx%d.nii", p.nx, p.ny, p.nz, p.n_times);
    if (reuse(input, dir, name, ".rois.json",
              g_strdup_printf("liver phantom %dx%dx%d voxels x %d frames, float32 NIfTI, "
                              "aorta, portal vein and liver ROIs",
                              p.nx, p.ny, p.nz, p.n_times),
              generated))
        return TRUE;
    g_autoptr(fm_dataset) ds = fm_dce_simulate(&p, error);
    g_autoptr(GPtrArray) rois = fm_dce_sim_rois(&p);
    return ds && fm_nifti_write_dataset(input->input, ds, 1, error) &&
           fm_roi_list_to_file(input->rois, rois, error) && complete(input, error);
}

static const fm_bench_e2e_workload workloads[] = {
    {"lsi", lsi_methods, G_N_ELEMENTS(lsi_methods), prepare_lsi},
    {"flim", flim_methods, G_N_ELEMENTS(flim_methods), prepare_flim},
    {"oct", oct_methods, G_N_ELEMENTS(oct_methods), prepare_oct},
    {"dce", dce_methods, G_N_ELEMENTS(dce_methods), prepare_dce},
};

const fm_bench_e2e_workload *fm_bench_e2e_workloads(int *n_workloads)
{
    *n_workloads = G_N_ELEMENTS(workloads);
    return workloads;
}
