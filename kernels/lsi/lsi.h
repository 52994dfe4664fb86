/* Laser speckle contrast imaging: spatial, temporal and spatio-temporal contrast K and SFI.
 * After Yang, Cuccia, Choi, "Real-time blood flow visualization using the graphics
 * processing unit", J. Biomed. Opt. 16(1) 016009 (2011). */
#pragma once

#include "../fm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    FM_LSI_BORDER_VALID = 0, /* windows that leave the image give NaN (default) */
    FM_LSI_BORDER_ZERO,      /* the paper's: pixels outside the image count as 0 */
} fm_lsi_border;

typedef struct {
    int window;          /* side of the square window in pixels: odd, 3..15 (omega = (window-1)/2) */
    int frames;          /* temporal window in frames (temporal / spatio-temporal): 2..1024 */
    double exposure_ms;  /* camera exposure T in ms, > 0 */
    fm_lsi_border border;
} fm_lsi_params;

/* Input: n_frames frames of width x height pixels, frame-major, row-major, tightly packed.
 * K = sigma / mean with the sample standard deviation (N-1);
 * SFI = 1 / (2 T K^2) with T in seconds, so SFI is in 1/s.
 * Where the mean is 0 or K is 0, K and/or SFI are NaN and counted in info->invalid_values.
 * Integer input is summed exactly in integers (32-bit where no overflow is possible, 64-bit for
 * squares of 16-bit data), float input in double. */

/* Spatial contrast per frame: contrast and sfi hold n_frames * width * height floats.
 * Either output pointer may be NULL when not wanted (not both). */
fm_status fm_lsi_spatial(const fm_lsi_params *params, const void *frames, fm_pixel_type type,
                         int width, int height, int n_frames, float *contrast, float *sfi,
                         fm_backend backend, fm_tick_fn tick, void *tick_user,
                         fm_run_info *info, char *msg, size_t msg_len);

/* Temporal contrast: for each pixel, K over params->frames consecutive frames, sliding by one:
 * outputs hold (n_frames - frames + 1) * width * height floats. Border policy unused. */
fm_status fm_lsi_temporal(const fm_lsi_params *params, const void *frames, fm_pixel_type type,
                          int width, int height, int n_frames, float *contrast, float *sfi,
                          fm_backend backend, fm_tick_fn tick, void *tick_user,
                          fm_run_info *info, char *msg, size_t msg_len);

/* Spatio-temporal: K over window x window pixels x frames frames, sliding by one frame:
 * outputs hold (n_frames - frames + 1) * width * height floats. */
fm_status fm_lsi_spatiotemporal(const fm_lsi_params *params, const void *frames,
                                fm_pixel_type type, int width, int height, int n_frames,
                                float *contrast, float *sfi, fm_backend backend,
                                fm_tick_fn tick, void *tick_user, fm_run_info *info,
                                char *msg, size_t msg_len);

/* Checks params against the image size and type; used by all three entry points and by core
 * so that users get the same message before a job starts. */
fm_status fm_lsi_check(const fm_lsi_params *params, int width, int height, int n_frames,
                       int temporal, char *msg, size_t msg_len);

#ifdef __cplusplus
}
#endif
