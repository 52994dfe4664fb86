/* SD-OCT one B-scan at a time, for line-scan cameras: one camera frame holds n_alines spectra
 * of n_pixels. The context builds the calibration tables once (and, on CUDA, the device buffers
 * and cuFFT plans), so that a stream of frames sets nothing up per frame. Each B-scan equals
 * the offline fm_oct_bscans_depth_down's B-scan on the same spectra: the CPU twin runs the
 * offline CPU code, the CUDA context the offline CUDA pipeline. */
#pragma once

#include "oct.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fm_oct_live fm_oct_live;

/* params as for fm_oct_bscans (its k_source and background_spectrum are copied); type U8 or
 * U16. The en-face value of each A-line is its mean power over depth bins
 * [enface_first, enface_last). */
fm_status fm_oct_live_create(const fm_oct_params *params, int n_alines, fm_pixel_type type,
                             int enface_first, int enface_last, fm_backend backend,
                             fm_oct_live **out, fm_run_info *info, char *msg, size_t msg_len);
void fm_oct_live_destroy(fm_oct_live *live);

/* Page-locks a camera pool buffer (cudaHostRegister) so that frames go to the device by DMA;
 * 0 on success, a no-op on the CPU. Unregistered by fm_live_host_unregister (../live_host.h). */
int fm_oct_live_register_host(fm_oct_live *live, void *ptr, size_t bytes);

/* B-scans that may be in flight: submit up to this many before collecting (1 on the CPU, 2 on
 * CUDA, where B-scan k+1 uploads and computes on its own stream while the host handles k). */
int fm_oct_live_depth(const fm_oct_live *live);
/* Queues one B-scan (n_alines spectra of n_pixels, the context's type). The spectra's memory
 * must stay untouched until its B-scan is collected (a registered camera buffer is read by DMA
 * while the host goes on). */
fm_status fm_oct_live_submit(fm_oct_live *live, const void *spectra, char *msg, size_t msg_len);
/* The oldest submitted B-scan, waiting for it: *bscan_db gets (n_pixels/2) x n_alines dB values,
 * depth down, and *enface_row its n_alines en-face values; both owned by the context, valid
 * until B-scan k + depth is submitted (the next call on the CPU). */
fm_status fm_oct_live_collect(fm_oct_live *live, const float **bscan_db, const float **enface_row,
                              char *msg, size_t msg_len);
/* submit + collect: one B-scan, waited for. */
fm_status fm_oct_live_process(fm_oct_live *live, const void *spectra, const float **bscan_db,
                              const float **enface_row, char *msg, size_t msg_len);

#ifdef __cplusplus
}
#endif
