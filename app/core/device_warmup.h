/* Starts the CUDA runtime on a worker thread, so that reading a file or building the window
 * hides the ~0.3 s a first CUDA call costs. */
#pragma once

#include <glib.h>
#include "kernels/device.h"

G_BEGIN_DECLS

typedef struct fm_device_warmup fm_device_warmup;

/* Starts at once. done (may be NULL) runs on the calling thread's main context when the device
 * is ready or known to be absent; read the outcome there with fm_device_warmup_wait (no wait).
 * pin_maps: a process that will run on the device (the GUI, a CUDA CLI run) makes its maps in
 * page-locked memory once a device is up (fm_host_memory_enable_pinned). */
fm_device_warmup *fm_device_warmup_start(GSourceFunc done, gpointer done_data, gboolean pin_maps);

/* Blocks until the start has finished; returns the milliseconds this call waited. n_devices,
 * gpu (valid when *n_devices > 0), total_ms (the start's own duration) and why (no device)
 * may each be NULL. */
double fm_device_warmup_wait(fm_device_warmup *warmup, int *n_devices, fm_gpu_info *gpu,
                             double *total_ms, const char **why);

/* Waits if needed, then frees. */
void fm_device_warmup_free(fm_device_warmup *warmup);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fm_device_warmup, fm_device_warmup_free)

G_END_DECLS
