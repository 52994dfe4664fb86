/* What the frame source implementations (Aravis camera, file replay) share with the common part
 * in frame_source.c: their operations, the buffer hooks, page-aligned pool memory and the
 * delivered-frames counter. Not for consumers: they use frame_source.h. */
#pragma once

#include "app/core/io/frame_source.h"

G_BEGIN_DECLS

typedef struct {
    gboolean (*get_settings)(fm_frame_source *source, fm_source_settings *out, GError **error);
    gboolean (*set_exposure_us)(fm_frame_source *source, double value, GError **error);
    gboolean (*set_gain_db)(fm_frame_source *source, double value, GError **error);
    gboolean (*set_frame_rate)(fm_frame_source *source, double value, GError **error);
    gboolean (*set_region)(fm_frame_source *source, int x, int y, int width, int height,
                           GError **error);
    gboolean (*set_format)(fm_frame_source *source, fm_pixfmt format, GError **error);
    gboolean (*start)(fm_frame_source *source, int n_buffers, GError **error);
    fm_source_status (*next)(fm_frame_source *source, gint64 timeout_us, fm_frame **frame,
                             GError **error);
    void (*release)(fm_frame_source *source, fm_frame *frame);
    /* dropped_by_camera and dropped_by_link; the common part fills the rest */
    void (*dropped)(fm_frame_source *source, guint64 *by_camera, guint64 *by_link);
    void (*stop)(fm_frame_source *source);
    void (*destroy)(fm_frame_source *source); /* frees the implementation's own state */
} fm_frame_source_ops;

/* The common head of every implementation's struct (first member). */
struct fm_frame_source {
    const fm_frame_source_ops *ops;
    char *name; /* for messages: the camera id or the file's base name */
    fm_buffer_hook on_alloc, on_free;
    gpointer hook_user;
    GMutex stats_lock; /* delivered and the per-second window; stats may be read from any thread */
    guint64 delivered;
    gint64 window_start_us;
    guint64 window_count;
    double frames_per_s;
};

void fm_frame_source_init_base(fm_frame_source *source, const fm_frame_source_ops *ops,
                               const char *name);
/* Page-aligned memory of at least size bytes, rounded up to whole pages so that no two buffers
 * share a page (cudaHostRegister registers whole pages); the alloc hook is called on it. */
void *fm_frame_source_pool_alloc(fm_frame_source *source, gsize size, GError **error);
/* Calls the free hook with the size given to pool_alloc, then frees. */
void fm_frame_source_pool_free(fm_frame_source *source, void *data, gsize size);
/* Counts one delivered frame (for stats and frames_per_s). */
void fm_frame_source_count_delivered(fm_frame_source *source);
/* "Mono8, Mono12, Mono12Packed, Mono16" for messages. */
const char *fm_pixfmt_names_read(void);

G_END_DECLS
