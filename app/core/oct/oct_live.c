/* Live SD-OCT step: each camera frame (one B-scan) through the kernels' live context
 * (kernels/oct/oct_live.h): the B-scan in dB, depth down, and the en-face image so far, equal
 * to the offline oct.bscan run's B-scan k and en-face rows 0..k. Pipelined (fm_live_ops.flush):
 * on CUDA frame k+1 is submitted before frame k's B-scan is collected and returned, so that the
 * device works while the session handles frame k; the CPU twin returns each frame's own. */
#include "app/core/oct/oct_live.h"

#include <glib/gi18n.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/method.h"
#include "app/core/oct/oct_stages.h"
#include "kernels/host_memory.h"
#include "kernels/oct/oct_live.h"

#define MAX_DEPTH 4

struct fm_live_step {
    fm_oct_live *live;
    fm_run_info info;
    int n_pixels, n_alines;
    fm_pixfmt format;
    int depth;                            /* frames in flight (the context's) */
    const fm_frame *in_flight[MAX_DEPTH]; /* submitted, not collected; oldest at first */
    int first, n_in_flight;
    long long submitted;
    guint16 *unpacked[MAX_DEPTH]; /* Mono12Packed frames widened here, one per frame in flight
                                     (pinned for CUDA) */
    gsize unpacked_bytes;
    gboolean unpacked_pinned[MAX_DEPTH];
    float *enface; /* FM_OCT_LIVE_ENFACE_ROWS x n_alines */
    int enface_rows, next_row;
    fm_map maps[2]; /* bscan_db (borrowed from the context) and enface */
    const fm_map *map_list[2];
};

static void step_end(fm_live_step *step)
{
    if (!step)
        return;
    fm_oct_live_destroy(step->live); /* waits for what is in flight */
    for (int i = 0; i < MAX_DEPTH; i++) {
        if (step->unpacked_pinned[i])
            fm_host_staging_put(step->unpacked[i], step->unpacked_bytes);
        else
            g_free(step->unpacked[i]);
    }
    g_free(step->enface);
    g_free(step);
}

static fm_live_step *step_begin(const fm_method *method, const fm_params *params, int width,
                                int height, fm_pixfmt format, fm_backend backend, GError **error)
{
    if (format >= FM_PIXFMT_UNKNOWN) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: the camera's pixel format is not one Fluxmap reads (Mono8, Mono12, "
                      "Mono12Packed, Mono16)"),
                    method->id);
        return NULL;
    }
    if (g_strcmp0(fm_params_get_choice(params, "background"), "file") == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: background 'file' (the mean of a whole file) does not exist for a "
                      "live camera; choose bscan, reference (with reference_file) or none"),
                    method->id);
        return NULL;
    }
    /* The setup reads the calibration and the background from the parameters alone: the
     * frames' shape is all it is given (pixels per A-line, A-lines per B-scan). */
    gsize sizes[3] = {(gsize)MAX(width, 1), (gsize)MAX(height, 1), 1};
    g_autoptr(fm_dataset) shape =
        fm_dataset_new(FM_PIXEL_U16, 3, sizes, (const char *const[]){"pixel", "aline", "bscan"});
    shape->source_path = g_strdup(_("live frames"));
    g_autoptr(fm_oct_setup) setup = fm_oct_setup_new(shape, params, error);
    if (!setup)
        return NULL;
    const int n_depth = width / 2;
    int first = 0, last = 0;
    if (!fm_oct_enface_range(params, setup->um_per_bin, n_depth, &first, &last, error))
        return NULL;

    fm_live_step *step = g_new0(fm_live_step, 1);
    step->n_pixels = width;
    step->n_alines = height;
    step->format = format;
    char msg[FM_MSG_LEN] = "";
    fm_status status =
        fm_oct_live_create(&setup->kernel, height, fm_pixfmt_kernel_type(format), first, last,
                           backend, &step->live, &step->info, msg, sizeof msg);
    if (status != FM_OK) {
        if (status == FM_ERR_INVALID_ARG)
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, "%s: %s", method->id, msg);
        else
            fm_method_set_kernel_error(error, status, msg);
        step_end(step);
        return NULL;
    }
    step->depth = CLAMP(fm_oct_live_depth(step->live), 1, MAX_DEPTH);
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
    step->enface = g_new(float, (gsize)FM_OCT_LIVE_ENFACE_ROWS *height);
    step->maps[0] = (fm_map){
        .name = "bscan_db", .unit = "dB", .width = height, .height = n_depth, .n_frames = 1};
    step->maps[1] =
        (fm_map){.name = "enface", .unit = "dB", .width = height, .height = 0, .n_frames = 1};
    step->maps[1].data = step->enface;
    step->map_list[0] = &step->maps[0];
    step->map_list[1] = &step->maps[1];
    return step;
}

/* The oldest frame in flight collected: its B-scan, and its en-face row into the image. */
static gboolean collect(fm_live_step *step, fm_live_output *out, GError **error)
{
    const fm_frame *frame = step->in_flight[step->first];
    step->first = (step->first + 1) % MAX_DEPTH;
    step->n_in_flight--;
    const float *bscan = NULL, *row = NULL;
    char msg[FM_MSG_LEN] = "";
    fm_status status = fm_oct_live_collect(step->live, &bscan, &row, msg, sizeof msg);
    if (status != FM_OK) {
        fm_method_set_kernel_error(error, status, msg);
        return FALSE;
    }
    memcpy(step->enface + (gsize)step->next_row * step->n_alines, row,
           sizeof(float) * step->n_alines);
    step->next_row = (step->next_row + 1) % FM_OCT_LIVE_ENFACE_ROWS;
    step->enface_rows = MIN(step->enface_rows + 1, FM_OCT_LIVE_ENFACE_ROWS);
    step->maps[0].data = (float *)bscan;
    step->maps[1].height = step->enface_rows;
    out->ready = TRUE;
    out->maps = step->map_list;
    out->n_maps = 2;
    out->primary = 0;          /* the B-scan */
    out->cumulative = 1u << 1; /* the en-face image built so far: kept once, as it ends */
    out->of_frame = frame;
    return TRUE;
}

static gboolean step_frame(fm_live_step *step, const fm_frame *frame, fm_live_output *out,
                           GError **error)
{
    memset(out, 0, sizeof *out);
    if (frame->width != step->n_pixels || frame->height != step->n_alines ||
        frame->format != step->format ||
        frame->size < fm_pixfmt_frame_bytes(step->format, step->n_pixels, step->n_alines)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("frame %" G_GUINT64_FORMAT ": %dx%d %s in %" G_GSIZE_FORMAT
                      " bytes, but the run started with %d pixels x %d A-lines %s"),
                    frame->id, frame->width, frame->height, fm_pixfmt_name(frame->format),
                    frame->size, step->n_pixels, step->n_alines, fm_pixfmt_name(step->format));
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
    fm_status status = fm_oct_live_submit(step->live, data, msg, sizeof msg);
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

/* As lsi_live.c: registered while the step lives (user: the step), unregistered without it. */
static void step_register(void *data, gsize size, gpointer user)
{
    fm_live_step *step = user;
    if (step)
        fm_oct_live_register_host(step->live, data, size);
}

static void step_unregister(void *data, gsize size, gpointer user)
{
    (void)size;
    (void)user;
    fm_oct_live_unregister_host(data);
}

const fm_live_ops fm_oct_live_bscan_ops = {
    .begin = step_begin,
    .frame = step_frame,
    .describe = step_describe,
    .end = step_end,
    .register_buffer = step_register,
    .unregister_buffer = step_unregister,
    .flush = step_flush,
};
