/* Live speckle steps: each camera frame through the kernels' live context (kernels/lsi/
 * lsi_live.h), giving contrast and sfi of that frame, equal to frame k of the offline run.
 * Pipelined (fm_live_ops.flush): on CUDA frame k+1 is submitted before frame k's maps are
 * collected and returned, so that the device works while the session handles frame k; the CPU
 * twin returns each frame's own. */
#include "app/core/lsi/lsi_live.h"

#include <glib/gi18n.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/method.h"
#include "kernels/host_memory.h"
#include "kernels/lsi/lsi_live.h"

#define MAX_DEPTH 4

struct fm_live_step {
    const fm_method *method;
    fm_lsi_live *live;
    fm_run_info info;
    int width, height;
    fm_pixfmt format;
    int depth;                            /* frames in flight (the context's) */
    const fm_frame *in_flight[MAX_DEPTH]; /* submitted, not collected; oldest at first */
    int first, n_in_flight;
    long long submitted;
    guint16 *unpacked[MAX_DEPTH]; /* Mono12Packed frames widened here, one per frame in flight
                                     (pinned for CUDA) */
    gsize unpacked_bytes;
    gboolean unpacked_pinned[MAX_DEPTH];
    fm_map maps[2]; /* data borrowed from the live context */
    const fm_map *map_list[2];
};

static void step_end(fm_live_step *step)
{
    if (!step)
        return;
    fm_lsi_live_destroy(step->live); /* waits for what is in flight */
    for (int i = 0; i < MAX_DEPTH; i++) {
        if (step->unpacked_pinned[i])
            fm_host_staging_put(step->unpacked[i], step->unpacked_bytes);
        else
            g_free(step->unpacked[i]);
    }
    g_free(step);
}

static fm_live_step *step_begin(const fm_method *method, const fm_params *params, int width,
                                int height, fm_pixfmt format, fm_backend backend, int mode,
                                GError **error)
{
    if (format >= FM_PIXFMT_UNKNOWN) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: the camera's pixel format is not one Fluxmap reads (Mono8, Mono12, "
                      "Mono12Packed, Mono16)"),
                    method->id);
        return NULL;
    }
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
        if (status == FM_ERR_INVALID_ARG)
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, "%s: %s", method->id, msg);
        else
            fm_method_set_kernel_error(error, status, msg);
        step_end(step);
        return NULL;
    }
    step->depth = CLAMP(fm_lsi_live_depth(step->live), 1, MAX_DEPTH);
    if (format == FM_PIXFMT_MONO12_PACKED) {
        step->unpacked_bytes = sizeof(guint16) * (gsize)width * height;
        for (int i = 0; i < step->depth; i++) {
            if (step->info.backend_used == FM_BACKEND_CUDA)
                step->unpacked[i] = fm_host_staging_get(step->unpacked_bytes);
            step->unpacked_pinned[i] = step->unpacked[i] != NULL;
            if (!step->unpacked[i])
                step->unpacked[i] = g_malloc(step->unpacked_bytes);
        }
    }
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
    const fm_frame *frame = step->in_flight[step->first];
    step->first = (step->first + 1) % MAX_DEPTH;
    step->n_in_flight--;
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
    if (frame->width != step->width || frame->height != step->height ||
        frame->format != step->format ||
        frame->size < fm_pixfmt_frame_bytes(step->format, step->width, step->height)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("frame %" G_GUINT64_FORMAT ": %dx%d %s in %" G_GSIZE_FORMAT
                      " bytes, but the run started with %dx%d %s"),
                    frame->id, frame->width, frame->height, fm_pixfmt_name(frame->format),
                    frame->size, step->width, step->height, fm_pixfmt_name(step->format));
        return FALSE;
    }
    const void *data = frame->data;
    if (step->unpacked[0]) {
        guint16 *unpacked = step->unpacked[step->submitted % step->depth]; /* not in flight */
        if (!fm_frame_unpack_u16(frame, unpacked, error))
            return FALSE;
        data = unpacked;
    }
    char msg[FM_MSG_LEN] = "";
    fm_status status = fm_lsi_live_submit(step->live, data, msg, sizeof msg);
    if (status != FM_OK) {
        fm_method_set_kernel_error(error, status, msg);
        return FALSE;
    }
    step->submitted++;
    step->in_flight[(step->first + step->n_in_flight++) % MAX_DEPTH] = frame;
    /* full: the oldest is due (on the CPU, depth 1, the frame just given) */
    return step->n_in_flight < step->depth || collect(step, out, error);
}

/* The oldest frame still in flight (none: out->of_frame NULL). */
static gboolean step_flush(fm_live_step *step, fm_live_output *out, GError **error)
{
    memset(out, 0, sizeof *out);
    return step->n_in_flight == 0 || collect(step, out, error);
}

static void step_describe(fm_live_step *step, char **backend, char **device, char **note)
{
    if (backend)
        *backend = g_strdup(step->info.backend_used == FM_BACKEND_CUDA ? "cuda" : "cpu");
    if (device)
        *device = g_strdup(step->info.device_name);
    if (note)
        *note = step->info.fell_back
                    ? g_strdup_printf(_("fell back to the CPU: %s"), step->info.fallback_reason)
                    : NULL;
}

/* Pool buffers are registered with the device when the step runs on CUDA (user: the step, alive
 * while the source allocates its pool at start); unregistering needs no step, as a source may
 * free its pool after the step has ended. */
static void step_register(void *data, gsize size, gpointer user)
{
    fm_live_step *step = user;
    if (step)
        fm_lsi_live_register_host(step->live, data, size);
}

static void step_unregister(void *data, gsize size, gpointer user)
{
    (void)size;
    (void)user;
    fm_lsi_live_unregister_host(data);
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
        .register_buffer = step_register, .unregister_buffer = step_unregister,                    \
        .flush = step_flush,                                                                       \
    }

const fm_live_ops fm_lsi_live_spatial_ops = LSI_LIVE_OPS(begin_spatial);
const fm_live_ops fm_lsi_live_temporal_ops = LSI_LIVE_OPS(begin_temporal);
const fm_live_ops fm_lsi_live_spatiotemporal_ops = LSI_LIVE_OPS(begin_spatiotemporal);
