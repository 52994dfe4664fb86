/* SD-OCT live context: validation, backend choice, tables made once, and the CPU twin, which
 * runs the offline CPU code on one B-scan (fm_oct_cpu_run with the app's layout). On CUDA two
 * B-scans are in flight, each in a slot of the kept stream (its own CUDA stream and device
 * buffers) with its own page-locked B-scan and en-face row, so that B-scan k+1 uploads and
 * computes while the host handles B-scan k. */
#include "oct_live.h"

#include <stdlib.h>
#include <string.h>

#include "../device.h"
#include "../host_memory.h"
#include "../live_host.h"
#include "fm_config.h"
#include "oct_impl.h"

#define OCT_LIVE_DEPTH 2 /* CUDA: B-scans in flight */

struct fm_oct_live {
    fm_oct_params params; /* points at k_source and background below */
    double *k_source;
    float *background;
    fm_oct_tables tables; /* CPU twin */
    fm_pixel_type type;
    int n_alines;
    fm_oct_layout layout;  /* depth down, en-face into enface */
    float *bscan, *enface; /* CPU twin */
    size_t bscan_bytes, enface_bytes;
    long long submitted, collected;
    const void *pending; /* CPU twin: the submitted spectra */
#if FM_HAVE_CUDA
    fm_oct_cuda_stream *gpu; /* NULL: the CPU twin */
    /* slot i's B-scan and en-face row, page-locked: the downloads land there directly */
    float *slot_bscan[OCT_LIVE_DEPTH], *slot_enface[OCT_LIVE_DEPTH];
#endif
};

#if FM_HAVE_CUDA
static void put_slots(fm_oct_live *live)
{
    for (int i = 0; i < OCT_LIVE_DEPTH; i++) {
        fm_host_staging_put(live->slot_bscan[i], live->bscan_bytes);
        fm_host_staging_put(live->slot_enface[i], live->enface_bytes);
        live->slot_bscan[i] = live->slot_enface[i] = NULL;
    }
}
#endif

void fm_oct_live_destroy(fm_oct_live *live)
{
    if (!live)
        return;
#if FM_HAVE_CUDA
    fm_oct_cuda_stream_close(live->gpu); /* waits for what is in flight */
    put_slots(live);
#endif
    fm_oct_tables_free(&live->tables);
    free(live->bscan);
    free(live->enface);
    free(live->k_source);
    free(live->background);
    free(live);
}

fm_status fm_oct_live_create(const fm_oct_params *params, int n_alines, fm_pixel_type type,
                             int enface_first, int enface_last, fm_backend backend,
                             fm_oct_live **out, fm_run_info *info, char *msg, size_t msg_len)
{
    fm_run_info local;
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);
    *out = NULL;
    fm_status status = fm_oct_check(params, msg, msg_len);
    if (status != FM_OK)
        return status;
    const int n = params->n_pixels;
    if (n_alines <= 0)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "n_alines must be > 0 (got %d)", n_alines);
    if (type != FM_PIXEL_U8 && type != FM_PIXEL_U16)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "live spectra are uint8 or uint16 (got pixel type %d)", (int)type);
    if (enface_first < 0 || enface_first >= enface_last || enface_last > n / 2)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "en-face depth range %d..%d is empty or outside the %d depth bins",
                       enface_first, enface_last, n / 2);
    status = fm_backend_resolve(backend, info, msg, msg_len);
    if (status != FM_OK)
        return status;

    fm_oct_live *live = calloc(1, sizeof *live);
    if (!live)
        return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for the live context");
    live->params = *params;
    live->type = type;
    live->n_alines = n_alines;
    live->k_source = malloc(sizeof(double) * n);
    live->background = params->background_spectrum ? malloc(sizeof(float) * n) : NULL;
    live->bscan_bytes = sizeof(float) * (size_t)n_alines * (n / 2);
    live->enface_bytes = sizeof(float) * (size_t)n_alines;
    if (!live->k_source || (params->background_spectrum && !live->background)) {
        fm_oct_live_destroy(live);
        return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for the calibration");
    }
    memcpy(live->k_source, params->k_source, sizeof(double) * n);
    if (live->background)
        memcpy(live->background, params->background_spectrum, sizeof(float) * n);
    live->params.k_source = live->k_source;
    live->params.background_spectrum = live->background;
    live->layout = (fm_oct_layout){1, NULL, enface_first, enface_last};

#if FM_HAVE_CUDA
    if (info->backend_used == FM_BACKEND_CUDA) {
        char why[FM_MSG_LEN] = "";
        int have = 1;
        for (int i = 0; i < OCT_LIVE_DEPTH; i++) {
            live->slot_bscan[i] = fm_host_staging_get(live->bscan_bytes);
            live->slot_enface[i] = fm_host_staging_get(live->enface_bytes);
            have = have && live->slot_bscan[i] && live->slot_enface[i];
        }
        live->layout.enface_db = live->slot_enface[0]; /* the stream makes en-face lines */
        status = have
                     ? fm_oct_cuda_stream_open_shown(&live->params, type, n_alines, -OCT_LIVE_DEPTH,
                                                     &live->layout, &live->gpu, why, sizeof why)
                     : fm_fail(FM_ERR_DEVICE, why, sizeof why, "no pinned memory for the maps");
        if (fm_backend_cuda_settled(status, backend, info, why, msg, msg_len)) {
            if (status != FM_OK) {
                fm_oct_live_destroy(live);
                return status;
            }
            *out = live;
            return FM_OK;
        }
        /* AUTO: the CPU twin below, info says why */
        put_slots(live);
    }
#endif
    live->bscan = malloc(live->bscan_bytes);
    live->enface = malloc(live->enface_bytes);
    live->layout.enface_db = live->enface;
    if (!live->bscan || !live->enface) {
        fm_oct_live_destroy(live);
        return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for the B-scan");
    }
    status = fm_oct_tables_build(&live->params, &live->tables, msg, msg_len);
    if (status != FM_OK) {
        fm_oct_live_destroy(live);
        return status;
    }
    *out = live;
    return FM_OK;
}

int fm_oct_live_register_host(fm_oct_live *live, void *ptr, size_t bytes)
{
#if FM_HAVE_CUDA
    if (live && live->gpu)
        return fm_live_host_register(ptr, bytes);
#endif
    (void)live;
    (void)ptr;
    (void)bytes;
    return 0;
}

int fm_oct_live_depth(const fm_oct_live *live)
{
#if FM_HAVE_CUDA
    if (live->gpu)
        return fm_oct_cuda_stream_slots(live->gpu);
#endif
    (void)live;
    return 1;
}

fm_status fm_oct_live_submit(fm_oct_live *live, const void *spectra, char *msg, size_t msg_len)
{
    if (!spectra)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "the frame is NULL");
    const int depth = fm_oct_live_depth(live);
    if (live->submitted - live->collected >= depth)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "%d B-scans are in flight: collect one before submitting", depth);
#if FM_HAVE_CUDA
    if (live->gpu) {
        const int slot = (int)(live->submitted % depth);
        fm_status status =
            fm_oct_cuda_stream_enqueue(live->gpu, slot, spectra, live->slot_bscan[slot],
                                       live->slot_enface[slot], &live->layout, msg, msg_len);
        if (status != FM_OK)
            return status;
        live->submitted++;
        return FM_OK;
    }
#endif
    live->pending = spectra; /* the twin computes when collected */
    live->submitted++;
    return FM_OK;
}

fm_status fm_oct_live_collect(fm_oct_live *live, const float **bscan_db, const float **enface_row,
                              char *msg, size_t msg_len)
{
    if (live->collected == live->submitted)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "no B-scan was submitted");
#if FM_HAVE_CUDA
    if (live->gpu) {
        const int slot = (int)(live->collected % fm_oct_cuda_stream_slots(live->gpu));
        live->collected++;
        fm_status status = fm_oct_cuda_stream_wait(live->gpu, slot, msg, msg_len);
        if (status != FM_OK)
            return status;
        *bscan_db = live->slot_bscan[slot];
        *enface_row = live->slot_enface[slot];
        return FM_OK;
    }
#endif
    live->collected++;
    fm_oct_job job = {.params = live->params,
                      .spectra = live->pending,
                      .type = live->type,
                      .n_alines = live->n_alines,
                      .n_bscans = 1,
                      .bscan_db = live->bscan,
                      .layout = live->layout,
                      .fft = FM_OCT_FFT_DEFAULT};
    live->pending = NULL;
    fm_status status = fm_oct_cpu_run(&job, &live->tables, msg, msg_len);
    if (status != FM_OK)
        return status;
    *bscan_db = live->bscan;
    *enface_row = live->enface;
    return FM_OK;
}

fm_status fm_oct_live_process(fm_oct_live *live, const void *spectra, const float **bscan_db,
                              const float **enface_row, char *msg, size_t msg_len)
{
    fm_status status = fm_oct_live_submit(live, spectra, msg, msg_len);
    if (status != FM_OK)
        return status;
    return fm_oct_live_collect(live, bscan_db, enface_row, msg, msg_len);
}
