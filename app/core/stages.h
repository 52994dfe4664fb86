/* The stages of a run as a user waits on them, and the time each one took. */
#pragma once

#include <glib.h>
#include "kernels/fm_kernel.h"

G_BEGIN_DECLS

typedef enum {
    FM_STAGE_READ = 0,     /* the input file (and ROI file) into memory */
    FM_STAGE_DEVICE_START, /* waiting for the CUDA context (started beside the read) */
    FM_STAGE_PREPARE,      /* the method's own work outside the kernels (masks, layouts) */
    FM_STAGE_UPLOAD,       /* input on its way to the device before the first kernel */
    FM_STAGE_COMPUTE,      /* kernels, with the transfers they overlap */
    FM_STAGE_DOWNLOAD,     /* maps still coming back after the last kernel */
    FM_STAGE_STATISTICS,   /* min, max, mean, median of every map */
    FM_STAGE_WRITE,        /* the map files */
    FM_STAGE_CATALOGUE,    /* recording the run */
    FM_N_STAGES
} fm_stage;

typedef struct {
    double ms[FM_N_STAGES];
} fm_stage_times;

/* "read", "device_start", ...: the keys of --profile's JSON. */
const char *fm_stage_key(fm_stage stage);
/* "Reading", "Starting the GPU", ...: translated, for progress displays. */
const char *fm_stage_title(fm_stage stage);
double fm_stage_times_total(const fm_stage_times *times);
/* Adds one kernel call: its upload and download waits, and the rest of its time as compute. */
void fm_stage_times_add_kernel(fm_stage_times *times, const fm_run_info *info);

/* Milliseconds on the monotonic clock, for timing stages. */
double fm_stage_now_ms(void);

G_END_DECLS
