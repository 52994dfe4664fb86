/* Backend choice, GPU discovery and CUDA-error reporting for every kernels family. */
#pragma once

#include "fm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int index;
    char name[FM_NAME_LEN];
    size_t total_memory_bytes;
    int multiprocessors;
    int compute_major, compute_minor;
} fm_gpu_info;

/* 1 when this build contains CUDA code (does not mean a device is present). */
int fm_device_cuda_built(void);

/* Number of usable CUDA devices; 0 without a CUDA build, driver or device.
 * When it returns 0, msg (if given) says why. */
int fm_device_count(char *msg, size_t msg_len);

fm_status fm_device_info(int index, fm_gpu_info *out, char *msg, size_t msg_len);

/* Starts the CUDA runtime and device 0's context (the ~0.3 s a first CUDA call pays) and fills
 * gpu when there is a device. Returns the device count (0 without CUDA; msg says why). Safe to
 * call from any thread, and again: later calls return at once. */
int fm_device_warm_up(fm_gpu_info *gpu, char *msg, size_t msg_len);

/* Threads the CPU twin uses (OpenMP max threads). */
int fm_cpu_threads(void);
/* The calling thread's index in its OpenMP team (0 outside one, and without OpenMP). */
int fm_thread_index(void);

/* "auto", "cpu", "cuda" <-> enum. parse returns FM_ERR_INVALID_ARG on anything else. */
fm_status fm_backend_parse(const char *text, fm_backend *out);
const char *fm_backend_name(fm_backend backend);

/* Resolves a request before work starts: AUTO -> CUDA when a device exists, else CPU
 * (info->fell_back set with the reason); CUDA with no device -> FM_ERR_NO_DEVICE.
 * Fills info->backend_used and info->device_name. */
fm_status fm_backend_resolve(fm_backend requested, fm_run_info *info, char *msg, size_t msg_len);

/* Records a run-time fall-back to the CPU: info says CPU, fell_back = 1 and why. */
void fm_backend_fall_back(fm_run_info *info, const char *why);

/* Settles a CUDA attempt that returned status with its reason in why. Returns 1 when that is the
 * final answer (on error msg gets why), 0 when the caller must redo the whole job on the CPU:
 * the GPU failed at run time (FM_ERR_DEVICE) and AUTO promises an answer, so info now records a
 * CPU run that fell back, with why (fm_backend_fall_back). */
int fm_backend_cuda_settled(fm_status status, fm_backend requested, fm_run_info *info,
                            const char *why, char *msg, size_t msg_len);

/* Fills msg like snprintf and returns status; used by every kernel for errors. */
fm_status fm_fail(fm_status status, char *msg, size_t msg_len, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#ifdef __cplusplus
}
#endif
