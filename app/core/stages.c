/* Stage names, titles and sums for the per-run timing record. */
#include "stages.h"

#include <glib/gi18n.h>

static const struct {
    const char *key;
    const char *title;
} stages[FM_N_STAGES] = {
    [FM_STAGE_READ] = {"read", N_("Reading")},
    [FM_STAGE_DEVICE_START] = {"device_start", N_("Starting the GPU")},
    [FM_STAGE_PREPARE] = {"prepare", N_("Preparing")},
    [FM_STAGE_UPLOAD] = {"upload", N_("Uploading")},
    [FM_STAGE_COMPUTE] = {"compute", N_("Computing")},
    [FM_STAGE_DOWNLOAD] = {"download", N_("Downloading")},
    [FM_STAGE_STATISTICS] = {"statistics", N_("Statistics")},
    [FM_STAGE_WRITE] = {"write", N_("Writing maps")},
    [FM_STAGE_CATALOGUE] = {"catalogue", N_("Recording")},
};

const char *fm_stage_key(fm_stage stage)
{
    return stage < FM_N_STAGES ? stages[stage].key : "unknown";
}

const char *fm_stage_title(fm_stage stage)
{
    return stage < FM_N_STAGES ? _(stages[stage].title) : "";
}

double fm_stage_times_total(const fm_stage_times *times)
{
    double sum = 0.0;
    for (int s = 0; s < FM_N_STAGES; s++)
        sum += times->ms[s];
    return sum;
}

void fm_stage_times_add_kernel(fm_stage_times *times, const fm_run_info *info)
{
    double transfers = info->upload_ms + info->download_ms;
    times->ms[FM_STAGE_UPLOAD] += info->upload_ms;
    times->ms[FM_STAGE_DOWNLOAD] += info->download_ms;
    times->ms[FM_STAGE_COMPUTE] += MAX(0.0, info->elapsed_ms - transfers);
}

double fm_stage_now_ms(void)
{
    return (double)g_get_monotonic_time() / 1000.0;
}
