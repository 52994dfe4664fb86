/* Expected CPU time of a method from its work size, and the one-shot run's choice of the CPU. */
#include "backend_choice.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>

/* CPU cost of one work unit on one thread, in ns: the time `fluxmap-cli run METHOD --backend=cpu`
 * printed on this project's 2-core development machine (2 OpenMP threads, 2026-11-28, the
 * fastest of two or three runs), times 2 threads, over the input's samples, rounded up:
 *   lsi.*      512 x 512 x 30 uint16 TIFF (simulate lsi), 7.86 M samples
 *   flim.*     256 x 256 x 256 .sdt (simulate flim), 16.8 M samples
 *   oct.bscan  400 A-lines x 4 B-scans x 2048 px (simulate oct), 3.28 M samples
 *   dce.*      64 x 64 x 4 x 48 NIfTI (simulate dce; dual_input with its ROIs, the others with
 *              --aif=parker --conversion=none), 0.79 M samples
 *   mcml.run   skin7_600nm with A[r][z], per photon (mcml_sample is 5 times cheaper; the dearer
 *              preset keeps the device for anything that might be long)
 * The time a method takes scales with its samples over the threads; a fitting method's also
 * with how many pixels pass its threshold, which these constants take from the simulated data.
 * dce.t1_vfa has none: it keeps the device. */
static const struct {
    const char *method_id;
    double thread_ns_per_unit;
} cpu_costs[] = {
    {"lsi.spatial", 10},       {"lsi.temporal", 5},
    {"lsi.spatiotemporal", 6}, {"flim.iem", 8},
    {"flim.cmm", 8},           {"flim.rld", 7},
    {"flim.phasor", 7},        {"flim.bcmm1", 7},
    {"flim.bcmm2", 9},         {"flim.lsm", 100},
    {"flim.mle", 110},         {"flim.ga", 360},
    {"oct.bscan", 28},         {"dce.dual_input", 7400},
    {"dce.tofts", 115},        {"dce.extended_tofts", 140},
    {"dce.patlak", 60},        {"dce.2cxm", 330},
    {"dce.2cum", 260},         {"mcml.run", 70000},
};

double fm_expected_cpu_ms(const fm_method *method, double work_units, int threads)
{
    if (method == NULL || work_units < 0)
        return -1.0;
    for (guint i = 0; i < G_N_ELEMENTS(cpu_costs); i++)
        if (strcmp(cpu_costs[i].method_id, method->id) == 0)
            return work_units * cpu_costs[i].thread_ns_per_unit / MAX(threads, 1) / 1e6;
    return -1.0;
}

static gboolean is_mcml(const fm_method *method)
{
    return g_strcmp0(method->family, "mcml") == 0;
}

static double photons_asked(const fm_params *params)
{
    gint64 photons = params ? fm_params_get_int64(params, "photons") : 0;
    return photons > 0 ? (double)photons : -1.0; /* 0: the .mci file's count, unknown here */
}

double fm_work_units_bound(const fm_method *method, const fm_params *params, const char *input)
{
    if (is_mcml(method))
        return photons_asked(params);
    /* Formats whose samples are stored as they are: the file holds at least a byte per sample.
     * Not .gz, .ptu/.pt3 (photon records: a small file may fill a large histogram), DICOM
     * folders (JPEG 2000) or zipped .sdt blocks (rare; then the choice comes after the read). */
    static const char *const plain[] = {".tif", ".tiff", ".sdt", ".raw", ".nii", ".dat", ".u16"};
    g_autofree char *lower = input ? g_ascii_strdown(input, -1) : NULL;
    gboolean known = FALSE;
    for (guint i = 0; lower && i < G_N_ELEMENTS(plain) && !known; i++)
        known = g_str_has_suffix(lower, plain[i]);
    GStatBuf st;
    if (!known || g_stat(input, &st) != 0 || !S_ISREG(st.st_mode))
        return -1.0;
    return (double)st.st_size;
}

double fm_work_units(const fm_method *method, const fm_params *params, const fm_dataset *dataset)
{
    if (is_mcml(method))
        return photons_asked(params);
    return dataset ? (double)fm_dataset_n_elements(dataset) : -1.0;
}

gboolean fm_one_shot_prefers_cpu(const fm_method *method, double work_units, int threads,
                                 char **note)
{
    double cpu_ms = fm_expected_cpu_ms(method, work_units, threads);
    if (cpu_ms < 0 || cpu_ms >= FM_DEVICE_START_MS)
        return FALSE;
    if (note)
        *note = g_strdup_printf(_("CPU: expected %.0f ms of compute, less than the GPU's start "
                                  "(~%.0f ms)"),
                                MAX(cpu_ms, 1.0), FM_DEVICE_START_MS);
    return TRUE;
}
