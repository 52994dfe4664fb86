/* Types shared by every kernels family: status codes, backends, progress callback, run report. */
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* FM_HD marks per-element math shared by the CPU twin and the CUDA kernels. */
#ifdef __CUDACC__
#define FM_HD __host__ __device__
#else
#define FM_HD
#endif

typedef enum {
    FM_OK = 0,
    FM_ERR_INVALID_ARG, /* a parameter or buffer is unusable; msg says which */
    FM_ERR_NO_MEMORY,
    FM_ERR_DEVICE,      /* a CUDA call failed; msg holds the CUDA error text */
    FM_ERR_NO_DEVICE,   /* CUDA was asked for but no device (or no CUDA build) */
    FM_ERR_CANCELLED,   /* the tick callback asked to stop */
} fm_status;

typedef enum {
    FM_BACKEND_AUTO = 0, /* CUDA when a device is present, else CPU; fallback is reported */
    FM_BACKEND_CPU,
    FM_BACKEND_CUDA,
} fm_backend;

typedef enum {
    FM_PIXEL_U8 = 0,
    FM_PIXEL_U16,
    FM_PIXEL_F32,
} fm_pixel_type;

/* Progress and cancellation: called between chunks with fraction in [0,1];
 * a non-zero return stops the work with FM_ERR_CANCELLED. May be NULL. */
typedef int (*fm_tick_fn)(void *user, double fraction);

#define FM_NAME_LEN 128
#define FM_MSG_LEN 512

/* What actually ran, filled by every kernels entry point (may be NULL). */
typedef struct {
    fm_backend backend_used;             /* FM_BACKEND_CPU or FM_BACKEND_CUDA */
    char device_name[FM_NAME_LEN];       /* GPU name, or "CPU, n threads" */
    int fell_back;                       /* 1 when AUTO tried CUDA and fell back to the CPU */
    char fallback_reason[FM_MSG_LEN];    /* why, when fell_back */
    double elapsed_ms;                   /* wall time host to host, transfers included */
    long long invalid_values;            /* output values set to NaN (zero mean, K = 0, …) */
    /* Parts of elapsed_ms the host waited on transfers alone: input not yet on the device before
     * the first kernel, maps still coming back after the last one (overlapped transfers count as
     * compute). 0 on the CPU and where a CUDA path does not separate them. */
    double upload_ms, download_ms;
    int resident;                        /* 1 when the input was already on the device */
} fm_run_info;

size_t fm_pixel_size(fm_pixel_type type);
const char *fm_pixel_type_name(fm_pixel_type type);
const char *fm_status_name(fm_status status);

#ifdef __cplusplus
}
#endif
