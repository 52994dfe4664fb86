/* Live speckle steps: each camera frame through the kernels' live context (kernels/lsi/
 * lsi_live.h), giving contrast and sfi of that frame, equal to frame k of the offline run.
 * Pipelined (fm_live_ops.flush): on CUDA frame k+1 is submitted before frame k's maps are
 * collected and returned, so that the device works while the session handles frame k; the CPU
 * twin returns each frame's own. */
#include "app/core/lsi/lsi_live.h"

#include <glib/gi18n.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/live_step_util.h"
#include "kernels/lsi/lsi_live.h"

struct fm_live_step {
    const fm_method *method;
    fm_lsi_live *live;
    fm_run_info info;
    int width, height;
    fm_pixfmt format;
    fm_live_pipe pipe;
    fm_map maps[2]; /* data borrowed from the live context */
    const fm_map *map_list[2];
};

static void step_end(fm_live_step *step)
{
    if (!step)
        return;
    fm_lsi_live_destroy(step->live); /* waits for what is in flight */
    fm_live_pipe_clear(&step->pipe);
    g_free(step);
}

static fm_live_step *step_begin(const fm_method *method, const fm_params *params, int width,
                                int height, fm_pixfmt format, fm_backend backend, int mode,
                                GError **error)
{
    if (!fm_live_check_format(method, format, error))
        return NULL;
    fm_lsi_params lp;
    fm_lsi_params_read(params, &lp);
    fm_live_step *step = g_new0(fm_live_step, 1);
    step->method = method;
    step->width = width;
    step->height = height;
    step->format = format;
    char msg[FM_MSG_LEN] = "";
    fm_status status = fm_lsi_live_create(&lp, mode, width, height, fm_pixfmt_kernel_type(format),
                                          backend, &step->live, &step->info, msg, sizeof msg);
    if (status != FM_OK) {
        fm_live_set_create_error(error, method, status, msg);
        step_end(step);
        return NULL;
    }
    fm_live_pipe_init(&step->pipe, fm_lsi_live_depth(step->live), format, width, height,
                      &step->info);
    static const char *const names[2] = {"contrast", "sfi"}, *const units[2] = {"1", "1/s"};
    for (int i = 0; i < 2; i++) {
        step->maps[i] = (fm_map){.name = (char *)names[i],
                                 .unit = (char *)units[i],
                                 .width = width,
                                 .height = height,
                                 .n_frames = 1};
        step->map_list[i] = &step->maps[i];
    }
    return step;
}

/* The oldest frame in flight collected: its maps (none while a temporal window fills). */
static gboolean collect(fm_live_step *step, fm_live_output *out, GError **error)
{
    const fm_frame *frame = fm_live_pipe_pop(&step->pipe);
    fm_lsi_live_result r;
    char msg[FM_MSG_LEN] = "";
    fm_status status = fm_lsi_live_collect(step->live, &r, msg, sizeof msg);
    if (status != FM_OK) {
        fm_method_set_kernel_error(error, status, msg);
        return FALSE;
    }
    out->of_frame = frame;
    out->ready = r.ready;
    if (!r.ready)
        return TRUE; /* the temporal window is still filling: no maps yet */
    step->maps[0].data = (float *)r.contrast;
    step->maps[1].data = (float *)r.sfi;
    out->maps = step->map_list;
    out->n_maps = 2;
    out->primary = 1; /* sfi */
    return TRUE;
}

static gboolean step_frame(fm_live_step *step, const fm_frame *frame, fm_live_output *out,
                           GError **error)
{
    memset(out, 0, sizeof *out);
    if (!fm_live_frame_fits(frame, step->width, step->height, step->format)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("frame %" G_GUINT64_FORMAT ": %dx%d %s in %" G_GSIZE_FORMAT
                      " bytes, but the run started with %dx%d %s"),
                    frame->id, frame->width, frame->height, fm_pixfmt_name(frame->format),
                    frame->size, step->width, step->height, fm_pixfmt_name(step->format));
        return FALSE;
    }
    const void *data = NULL;
    if (!fm_live_pipe_data(&step->pipe, frame, &data, error))
        return FALSE;
    char msg[FM_MSG_LEN] = "";
    fm_status status = fm_lsi_live_submit(step->live, data, msg, sizeof msg);
    if (status != FM_OK) {
        fm_method_set_kernel_error(error, status, msg);
        return FALSE;
    }
    /* full: the oldest is due (on the CPU, depth 1, the frame just given) */
    return !fm_live_pipe_push(&step->pipe, frame) || collect(step, out, error);
}

/* The oldest frame still in flight (none: out->of_frame NULL). */
static gboolean step_flush(fm_live_step *step, fm_live_output *out, GError **error)
{
    memset(out, 0, sizeof *out);
    return step->pipe.n_in_flight == 0 || collect(step, out, error);
}

static void step_describe(fm_live_step *step, char **backend, char **device, char **note)
{
    fm_live_describe_info(&step->info, backend, device, note);
}

/* Pool buffers are registered with the device when the step runs on CUDA (user: the step, alive
 * while the source allocates its pool at start); unregistering needs no step
 * (fm_live_step_unregister_buffer). */
static void step_register(void *data, gsize size, gpointer user)
{
    fm_live_step *step = user;
    if (step)
        fm_lsi_live_register_host(step->live, data, size);
}

static fm_live_step *begin_spatial(const fm_method *method, const fm_params *params, int width,
                                   int height, fm_pixfmt format, fm_backend backend, GError **error)
{
    return step_begin(method, params, width, height, format, backend, 0, error);
}

static fm_live_step *begin_temporal(const fm_method *method, const fm_params *params, int width,
                                    int height, fm_pixfmt format, fm_backend backend,
                                    GError **error)
{
    return step_begin(method, params, width, height, format, backend, 1, error);
}

static fm_live_step *begin_spatiotemporal(const fm_method *method, const fm_params *params,
                                          int width, int height, fm_pixfmt format,
                                          fm_backend backend, GError **error)
{
    return step_begin(method, params, width, height, format, backend, 2, error);
}

#define LSI_LIVE_OPS(BEGIN)                                                                        \
    {                                                                                              \
        .begin = BEGIN, .frame = step_frame, .describe = step_describe, .end = step_end,           \
        .register_buffer = step_register, .unregister_buffer = fm_live_step_unregister_buffer,     \
        .flush = step_flush,                                                                       \
    }

const fm_live_ops fm_lsi_live_spatial_ops = LSI_LIVE_OPS(begin_spatial);
const fm_live_ops fm_lsi_live_temporal_ops = LSI_LIVE_OPS(begin_temporal);
const fm_live_ops fm_lsi_live_spatiotemporal_ops = LSI_LIVE_OPS(begin_spatiotemporal);
