/* What the live steps of the kernels' live contexts share (lsi/lsi_live.c, oct/oct_live.c): the
 * camera-format check, the context's create error, the frames in flight of a pipelined step with
 * their Mono12Packed buffers, and the backend they report. */
#pragma once

#include "app/core/live.h"
#include "app/core/method.h"
#include "kernels/device.h"

G_BEGIN_DECLS

#define FM_LIVE_PIPE_MAX_DEPTH 4

/* Frames submitted to a live context and not yet collected, oldest first. */
typedef struct {
    int depth; /* frames in flight (the context's, at most FM_LIVE_PIPE_MAX_DEPTH) */
    const fm_frame *in_flight[FM_LIVE_PIPE_MAX_DEPTH];
    int first, n_in_flight;
    long long submitted;
    /* Mono12Packed frames widened here, one per frame in flight (pinned for CUDA) */
    guint16 *unpacked[FM_LIVE_PIPE_MAX_DEPTH];
    gsize unpacked_bytes;
    gboolean unpacked_pinned[FM_LIVE_PIPE_MAX_DEPTH];
} fm_live_pipe;

/* FALSE (FM_ERROR_BAD_INPUT, naming the method) for a pixel format Fluxmap does not read. */
gboolean fm_live_check_format(const fm_method *method, fm_pixfmt format, GError **error);

/* The error of a live context's create: a bad parameter names the method, the rest as runs. */
void fm_live_set_create_error(GError **error, const fm_method *method, fm_status status,
                              const char *msg);

/* Whether frame has the shape and format the run started with, its pixels all there. */
gboolean fm_live_frame_fits(const fm_frame *frame, int width, int height, fm_pixfmt format);

/* context_depth frames in flight at most (clamped to 1..FM_LIVE_PIPE_MAX_DEPTH); Mono12Packed
 * frames of width x height get a buffer each, page-locked when the context runs on CUDA. */
void fm_live_pipe_init(fm_live_pipe *pipe, int context_depth, fm_pixfmt format, int width,
                       int height, const fm_run_info *info);
void fm_live_pipe_clear(fm_live_pipe *pipe);

/* What to submit of frame: its pixels, or them widened into a buffer not in flight. */
gboolean fm_live_pipe_data(fm_live_pipe *pipe, const fm_frame *frame, const void **data,
                           GError **error);
/* frame was submitted; TRUE when the pipe is full, so that the oldest is due. */
gboolean fm_live_pipe_push(fm_live_pipe *pipe, const fm_frame *frame);
/* The oldest frame in flight, now out of the pipe (one must be in flight). */
const fm_frame *fm_live_pipe_pop(fm_live_pipe *pipe);

/* fm_live_ops.describe of a context's run info: backend, device, and a fall-back's reason. */
void fm_live_describe_info(const fm_run_info *info, char **backend, char **device, char **note);

/* fm_live_ops.unregister_buffer of every step: needs no step, as a source may free its pool
 * after the step has ended. */
void fm_live_step_unregister_buffer(void *data, gsize size, gpointer user);

G_END_DECLS
