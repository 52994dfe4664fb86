/* What the live steps of the kernels' live contexts share: format check, create error, frames in
 * flight with their Mono12Packed buffers, backend description (live_step_util.h). */
#include "app/core/live_step_util.h"

#include <glib/gi18n.h>

#include "app/core/error.h"
#include "kernels/host_memory.h"
#include "kernels/live_host.h"

gboolean fm_live_check_format(const fm_method *method, fm_pixfmt format, GError **error)
{
    if (format < FM_PIXFMT_UNKNOWN)
        return TRUE;
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                _("%s: the camera's pixel format is not one Fluxmap reads (Mono8, Mono12, "
                  "Mono12Packed, Mono16)"),
                method->id);
    return FALSE;
}

void fm_live_set_create_error(GError **error, const fm_method *method, fm_status status,
                              const char *msg)
{
    if (status == FM_ERR_INVALID_ARG)
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, "%s: %s", method->id, msg);
    else
        fm_method_set_kernel_error(error, status, msg);
}

gboolean fm_live_frame_fits(const fm_frame *frame, int width, int height, fm_pixfmt format)
{
    return frame->width == width && frame->height == height && frame->format == format &&
           frame->size >= fm_pixfmt_frame_bytes(format, width, height);
}

void fm_live_pipe_init(fm_live_pipe *pipe, int context_depth, fm_pixfmt format, int width,
                       int height, const fm_run_info *info)
{
    pipe->depth = CLAMP(context_depth, 1, FM_LIVE_PIPE_MAX_DEPTH);
    if (format != FM_PIXFMT_MONO12_PACKED)
        return;
    pipe->unpacked_bytes = sizeof(guint16) * (gsize)width * height;
    for (int i = 0; i < pipe->depth; i++) {
        if (info->backend_used == FM_BACKEND_CUDA)
            pipe->unpacked[i] = fm_host_staging_get(pipe->unpacked_bytes);
        pipe->unpacked_pinned[i] = pipe->unpacked[i] != NULL;
        if (!pipe->unpacked[i])
            pipe->unpacked[i] = g_malloc(pipe->unpacked_bytes);
    }
}

void fm_live_pipe_clear(fm_live_pipe *pipe)
{
    for (int i = 0; i < FM_LIVE_PIPE_MAX_DEPTH; i++) {
        if (pipe->unpacked_pinned[i])
            fm_host_staging_put(pipe->unpacked[i], pipe->unpacked_bytes);
        else
            g_free(pipe->unpacked[i]);
        pipe->unpacked[i] = NULL;
        pipe->unpacked_pinned[i] = FALSE;
    }
}

gboolean fm_live_pipe_data(fm_live_pipe *pipe, const fm_frame *frame, const void **data,
                           GError **error)
{
    *data = frame->data;
    if (!pipe->unpacked[0])
        return TRUE;
    guint16 *unpacked = pipe->unpacked[pipe->submitted % pipe->depth]; /* not in flight */
    if (!fm_frame_unpack_u16(frame, unpacked, error))
        return FALSE;
    *data = unpacked;
    return TRUE;
}

gboolean fm_live_pipe_push(fm_live_pipe *pipe, const fm_frame *frame)
{
    pipe->submitted++;
    pipe->in_flight[(pipe->first + pipe->n_in_flight++) % FM_LIVE_PIPE_MAX_DEPTH] = frame;
    return pipe->n_in_flight >= pipe->depth;
}

const fm_frame *fm_live_pipe_pop(fm_live_pipe *pipe)
{
    const fm_frame *frame = pipe->in_flight[pipe->first];
    pipe->first = (pipe->first + 1) % FM_LIVE_PIPE_MAX_DEPTH;
    pipe->n_in_flight--;
    return frame;
}

void fm_live_describe_info(const fm_run_info *info, char **backend, char **device, char **note)
{
    if (backend)
        *backend = g_strdup(info->backend_used == FM_BACKEND_CUDA ? "cuda" : "cpu");
    if (device)
        *device = g_strdup(info->device_name);
    if (note)
        *note = info->fell_back
                    ? g_strdup_printf(_("fell back to the CPU: %s"), info->fallback_reason)
                    : NULL;
}

void fm_live_step_unregister_buffer(void *data, gsize size, gpointer user)
{
    (void)size;
    (void)user;
    fm_live_host_unregister(data);
}
