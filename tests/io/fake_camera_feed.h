/* Aravis's in-process fake camera (Fake_1, no network) as a Fluxmap frame source, sending
 * Fluxmap's own frames: frame k of the stream is frame k mod n of a uint16 stack. For tests of
 * anything that takes an fm_frame_source (live runs, the GUI's camera source). */
#pragma once

#include "app/core/io/frame_source.h"

G_BEGIN_DECLS

typedef struct fm_fake_camera_feed fm_fake_camera_feed;

/* Sets FLUXMAP_FAKE_CAMERA=1, opens Fake_1 as a camera source (*source, owned by the caller or
 * by the live session it is given to), sets its region to width x height at (0, 0), its frame
 * rate and its pixel format (Mono12 and Mono12Packed are written to the PixelFormat register
 * directly: the fake camera's XML offers Mono8 and Mono16 only), and fills every frame the
 * camera sends with frames[(k mod n_frames) * width * height ...], width * height uint16
 * samples each, in the camera's format (Mono8 takes the low 8 bits, Mono12 and Mono12Packed
 * the low 12). The frames are copied. The feed and the source may be freed in either order. */
fm_fake_camera_feed *fm_fake_camera_feed_open(const guint16 *frames, int n_frames, int width,
                                              int height, fm_pixfmt format, double frames_per_s,
                                              fm_frame_source **source, GError **error);

/* After n more frames the camera stops sending, as an unplugged camera does: its stream thread
 * is held (in the fill callback) until the acquisition stops. With control_lost, the device
 * also emits Aravis's "control-lost" signal then (what a GigE Vision camera's heartbeat does);
 * without it the source notices the silence by its timeout. */
void fm_fake_camera_feed_disappear_after(fm_fake_camera_feed *feed, guint64 n,
                                         gboolean control_lost);

/* Frames the camera has sent so far. */
guint64 fm_fake_camera_feed_sent(fm_fake_camera_feed *feed);

/* Writes a raw GenICam PixelFormat value (an ArvPixelFormat: RGB8 0x02180014, BayerRG8
 * 0x01080009) to the register, for formats Fluxmap refuses. Before start. */
gboolean fm_fake_camera_feed_set_raw_format(fm_fake_camera_feed *feed, guint32 pfnc_value,
                                            GError **error);

void fm_fake_camera_feed_free(fm_fake_camera_feed *feed);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fm_fake_camera_feed, fm_fake_camera_feed_free)

G_END_DECLS
