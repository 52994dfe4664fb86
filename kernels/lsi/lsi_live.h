/* LSI one frame at a time, for live cameras: a context made once per run holds every buffer
 * (on the device for CUDA, with the temporal window's last frames kept there as a ring), so
 * that a stream of frames allocates nothing per frame. Frame k's maps equal frame k of the
 * offline entry points (lsi.h) on the same frames: bit for bit on the CPU twin, which runs the
 * offline CPU code; the CUDA context launches the offline CUDA kernels. */
#pragma once

#include "lsi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fm_lsi_live fm_lsi_live;

/* mode: 0 spatial, 1 temporal, 2 spatio-temporal (as fm_lsi_check's `temporal`). type: U8 or
 * U16 (camera frames). backend AUTO takes CUDA when a device answers, else the CPU; info gets
 * what was chosen (backend_used, device_name, fell_back and why). */
fm_status fm_lsi_live_create(const fm_lsi_params *params, int mode, int width, int height,
                             fm_pixel_type type, fm_backend backend, fm_lsi_live **out,
                             fm_run_info *info, char *msg, size_t msg_len);
void fm_lsi_live_destroy(fm_lsi_live *live);

/* Page-locks a camera pool buffer so that frames in it go to the device by DMA, with no host
 * copy (cudaHostRegister); 0 on success. A no-op returning 0 on the CPU. Unregistered by
 * fm_live_host_unregister (../live_host.h), whichever context registered it. */
int fm_lsi_live_register_host(fm_lsi_live *live, void *ptr, size_t bytes);

/* One frame's maps, owned by the context: valid until `fm_lsi_live_depth` more frames have been
 * submitted (1 on the CPU, 2 on CUDA spatial). ready is 0 while a temporal window fills (the
 * first frames - 1 frames); the maps are then not computed. */
typedef struct {
    int ready;
    const float *contrast, *sfi; /* width * height each */
    long long invalid;           /* pixels whose SFI is NaN */
    double device_ms;            /* CUDA: upload + kernel + download of this frame (events) */
} fm_lsi_live_result;

/* Frames that may be in flight: submit up to this many before collecting. The CUDA spatial
 * context uploads frame k+1 while frame k computes and downloads, on its own stream. */
int fm_lsi_live_depth(const fm_lsi_live *live);
/* Queues a frame (width * height pixels of the context's type). The frame's memory must stay
 * untouched until its result is collected. */
fm_status fm_lsi_live_submit(fm_lsi_live *live, const void *frame, char *msg, size_t msg_len);
/* The oldest submitted frame's maps, waiting for them. */
fm_status fm_lsi_live_collect(fm_lsi_live *live, fm_lsi_live_result *out, char *msg,
                              size_t msg_len);
/* submit + collect. */
fm_status fm_lsi_live_process(fm_lsi_live *live, const void *frame, fm_lsi_live_result *out,
                              char *msg, size_t msg_len);

#ifdef __cplusplus
}
#endif
