/* Frame sources: a GenICam camera (Aravis) or a file replayed at its frame rate, behind one
 * interface, so that live processing, the GUI, the CLI, demos and tests take one path. */
#pragma once

#include <gio/gio.h>
#include "kernels/fm_kernel.h"

G_BEGIN_DECLS

/* Pixel formats Fluxmap reads (GenICam PFNC names). Mono12 is 12 bits in 16-bit words;
 * Mono12Packed is two pixels in three bytes (GigE Vision layout). */
typedef enum {
    FM_PIXFMT_MONO8 = 0,
    FM_PIXFMT_MONO12,
    FM_PIXFMT_MONO12_PACKED,
    FM_PIXFMT_MONO16,
    FM_PIXFMT_UNKNOWN,
} fm_pixfmt;

const char *fm_pixfmt_name(fm_pixfmt format);    /* "Mono12Packed" */
fm_pixfmt fm_pixfmt_from_name(const char *name); /* FM_PIXFMT_UNKNOWN when not read */
int fm_pixfmt_bits(fm_pixfmt format);            /* significant bits: 8, 12, 12, 16 */
/* Bytes of one frame of width x height in this format. */
gsize fm_pixfmt_frame_bytes(fm_pixfmt format, int width, int height);
/* The type kernels take for frames of this format without conversion: U8 for Mono8, U16 for
 * Mono12 and Mono16; Mono12Packed must be unpacked first (fm_frame_unpack_u16). */
fm_pixel_type fm_pixfmt_kernel_type(fm_pixfmt format);

/* One frame as the source delivered it. data points into the source's buffer pool (registered
 * with the device when fm_frame_source_set_buffer_hooks asked for it); valid until released. */
typedef struct {
    guint64 id;          /* the camera's frame id, unwrapped to 64 bits (GigE Vision 1.x ids
                            are 16-bit and skip 0), or the file's frame index */
    gint64 timestamp_ns; /* the camera's timestamp, or the replay clock */
    int width, height;
    fm_pixfmt format;
    const void *data;
    gsize size;      /* bytes in data */
    gpointer opaque; /* the source's handle for release */
} fm_frame;

/* Unpacks or widens any supported frame into width*height uint16 samples. */
gboolean fm_frame_unpack_u16(const fm_frame *frame, guint16 *out, GError **error);

typedef struct {
    char *id; /* what --camera takes: Aravis device id ("Fake_1", "Basler-123456") */
    char *vendor, *model, *serial, *protocol; /* protocol: "GigEVision", "USB3Vision", "Fake" */
} fm_camera_info;

void fm_camera_info_free(fm_camera_info *info);
/* Cameras Aravis finds now (GPtrArray of fm_camera_info*, owning). An empty array is not an
 * error. The in-process fake camera is listed only when FLUXMAP_FAKE_CAMERA=1 (tests, demos). */
GPtrArray *fm_cameras_list(GError **error);

/* A setting's current value and range as the camera reports them (available FALSE when the
 * camera has no such feature). */
typedef struct {
    gboolean available;
    double value, min, max;
} fm_source_setting;

typedef struct {
    char *description; /* "Aravis Fake_1 (Aravis Fake GV01)", "replay scan.tif" */
    int width, height, x_offset, y_offset, sensor_width, sensor_height;
    fm_pixfmt format;
    guint formats_offered; /* bit (1 << fm_pixfmt) for each format the camera offers and we read */
    char **other_formats;  /* offered formats Fluxmap does not read ("RGB8"), NULL-terminated
                              (may be NULL) */
    char *format_name;     /* the current format's name, also when format is UNKNOWN */
    fm_source_setting exposure_us, gain_db, frame_rate_hz;
    gboolean is_camera; /* FALSE for a file replay */
    gint64 n_frames;    /* replay: frames in the file; camera: -1 (unbounded) */
    char *path;         /* replay: the file replayed; camera: NULL */
} fm_source_settings;

void fm_source_settings_clear(fm_source_settings *settings);

/* Counters since start. dropped_by_camera: frame ids that never arrived; dropped_by_link:
 * buffers Aravis reported incomplete, missing packets or with no free buffer (underruns: the
 * consumer kept every pool buffer, so frames the camera took were not received). A replay
 * never drops: a late consumer gets the next frames at once until it is back on schedule. */
typedef struct {
    guint64 delivered;
    guint64 dropped_by_camera;
    guint64 dropped_by_link;
    double frames_per_s; /* delivered over the last second */
} fm_source_stats;

typedef struct fm_frame_source fm_frame_source;

/* Opens camera id (NULL: the first camera found). Errors name the camera and the reason. */
fm_frame_source *fm_frame_source_open_camera(const char *id, GError **error);
/* Replays an image stack (any file fm_open reads into x,y,frames: TIFF stacks, raw speckle,
 * OCT raw spectra) at frames_per_s (0: the file's own rate, or 10 when it has none; < 0: as
 * fast as the consumer takes frames). The stack is read into the source's registered pool. */
fm_frame_source *fm_frame_source_open_replay(const char *path, double frames_per_s, GError **error);

/* Settings take effect before start (region, format) or at once (exposure, gain, rate).
 * Values outside the camera's range are an error naming the range. */
gboolean fm_frame_source_get_settings(fm_frame_source *source, fm_source_settings *out,
                                      GError **error);
gboolean fm_frame_source_set_exposure_us(fm_frame_source *source, double exposure_us,
                                         GError **error);
gboolean fm_frame_source_set_gain_db(fm_frame_source *source, double gain_db, GError **error);
gboolean fm_frame_source_set_frame_rate(fm_frame_source *source, double frames_per_s,
                                        GError **error);
gboolean fm_frame_source_set_region(fm_frame_source *source, int x, int y, int width, int height,
                                    GError **error);
gboolean fm_frame_source_set_format(fm_frame_source *source, fm_pixfmt format, GError **error);

/* Called once per pool buffer when it is allocated / freed, so that a CUDA consumer can
 * register the memory (cudaHostRegister) and read camera buffers with no host copy. Buffers
 * are page-aligned and never share a page. A replay's pool is one buffer holding the whole
 * stack (allocated at start). Set before start. */
typedef void (*fm_buffer_hook)(void *data, gsize size, gpointer user);
void fm_frame_source_set_buffer_hooks(fm_frame_source *source, fm_buffer_hook on_alloc,
                                      fm_buffer_hook on_free, gpointer user);

/* Starts streaming into a pool of n_buffers (0: a default sized for about 1 s of frames, 8 to
 * 128). A camera whose current pixel format Fluxmap does not read is refused here, naming it. */
gboolean fm_frame_source_start(fm_frame_source *source, int n_buffers, GError **error);
typedef enum {
    FM_SOURCE_FRAME = 0, /* *frame holds the next frame */
    FM_SOURCE_TIMEOUT,   /* nothing within timeout_us; try again */
    FM_SOURCE_END,       /* a replay reached its last frame, or the source was stopped */
    FM_SOURCE_LOST,      /* the camera stopped answering or vanished; error says which and
                            after how many frames ("Fake_1: camera disconnected after 312
                            frames"); frames already delivered stay valid until released */
    FM_SOURCE_FAILED,    /* anything else; error set */
} fm_source_status;

/* The next frame, waiting at most timeout_us. Called from one consumer thread. A camera is
 * lost when Aravis reports its control lost (GigE heartbeat) or when no frame came for
 * max(3 s, 10 frame periods + exposure). */
fm_source_status fm_frame_source_next(fm_frame_source *source, gint64 timeout_us, fm_frame **frame,
                                      GError **error);
/* Gives the frame's buffer back to the pool (every frame from next() must be released, before
 * fm_frame_source_free; releasing after stop is fine). */
void fm_frame_source_release(fm_frame_source *source, fm_frame *frame);
/* May be called from any thread (a GUI's status line) while the consumer runs. */
void fm_frame_source_stats(fm_frame_source *source, fm_source_stats *out);
/* Stops streaming; may be called from another thread while the consumer waits in next(). Frames
 * held stay valid until released. start() again streams into a fresh pool. */
void fm_frame_source_stop(fm_frame_source *source);
void fm_frame_source_free(fm_frame_source *source); /* stops first */
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fm_frame_source, fm_frame_source_free)

G_END_DECLS
