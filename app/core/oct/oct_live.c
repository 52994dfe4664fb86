/* Live SD-OCT step: each camera frame (one B-scan) through the kernels' live context
 * (kernels/oct/oct_live.h): the B-scan in dB, depth down, and the en-face image so far, equal
 * to the offline oct.bscan run's B-scan k and en-face rows 0..k. Pipelined (fm_live_ops.flush):
 * on CUDA frame k+1 is submitted before frame k's B-scan is collected and returned, so that the
 * device works while the session handles frame k; the CPU twin returns each frame's own. */
#include "app/core/oct/oct_live.h"

#include <glib/gi18n.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/live_step_util.h"
#include "app/core/oct/oct_stages.h"
#include "kernels/oct/oct_live.h"

struct fm_live_step {
    fm_oct_live *live;
    fm_run_info info;
    int n_pixels, n_alines;
    fm_pixfmt format;
    fm_live_pipe pipe;
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
    fm_live_pipe_clear(&step->pipe);
    g_free(step->enface);
    g_free(step);
}

static fm_live_step *step_begin(const fm_method *method, const fm_params *params, int width,
                                int height, fm_pixfmt format, fm_backend backend, GError **error)
{
    if (!fm_live_check_format(method, format, error))
        return NULL;
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
        fm_live_set_create_error(error, method, status, msg);
        step_end(step);
        return NULL;
    }
    fm_live_pipe_init(&step->pipe, fm_oct_live_depth(step->live), format, width, height,
                      &step->info);
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
    const fm_frame *frame = fm_live_pipe_pop(&step->pipe);
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
    if (!fm_live_frame_fits(frame, step->n_pixels, step->n_alines, step->format)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("frame %" G_GUINT64_FORMAT ": %dx%d %s in %" G_GSIZE_FORMAT
                      " bytes, but the run started with %d pixels x %d A-lines %s"),
                    frame->id, frame->width, frame->height, fm_pixfmt_name(frame->format),
                    frame->size, step->n_pixels, step->n_alines, fm_pixfmt_name(step->format));
        return FALSE;
    }
    const void *data = NULL;
    if (!fm_live_pipe_data(&step->pipe, frame, &data, error))
        return FALSE;
    char msg[FM_MSG_LEN] = "";
    fm_status status = fm_oct_live_submit(step->live, data, msg, sizeof msg);
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

/* As lsi_live.c: registered while the step lives (user: the step), unregistered without it. */
static void step_register(void *data, gsize size, gpointer user)
{
    fm_live_step *step = user;
    if (step)
        fm_oct_live_register_host(step->live, data, size);
}

const fm_live_ops fm_oct_live_bscan_ops = {
    .begin = step_begin,
    .frame = step_frame,
    .describe = step_describe,
    .end = step_end,
    .register_buffer = step_register,
    .unregister_buffer = fm_live_step_unregister_buffer,
    .flush = step_flush,
};
