/* Aravis specifics of camera frame sources, for tests that drive Aravis's fake camera behind a
 * source (tests/io/fake_camera_feed.c). Consumers use frame_source.h alone. */
#pragma once

#include "app/core/io/frame_source.h"

G_BEGIN_DECLS

/* The camera source's ArvDevice (borrowed), or NULL for a replay. */
gpointer fm_frame_source_arv_device(fm_frame_source *source);
/* The GenICam PFNC value of a format (ArvPixelFormat), 0 for FM_PIXFMT_UNKNOWN. */
guint32 fm_pixfmt_to_arv(fm_pixfmt format);

G_END_DECLS
