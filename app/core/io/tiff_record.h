/* Recording frames to a BigTIFF as they arrive: one page per frame, appended and flushed page by
 * page, so that whatever happens to the source the file holds every frame written so far and
 * reads as an image stack (fm_open, fm_tiff_read) once closed. */
#pragma once

#include <glib.h>
#include "app/core/io/frame_source.h"
#include "kernels/fm_kernel.h"

G_BEGIN_DECLS

typedef struct fm_tiff_record fm_tiff_record;

/* Creates path (replacing a file of that name) for pages of width x height samples of type
 * (U8, U16 or F32); description goes into every page's ImageDescription. */
fm_tiff_record *fm_tiff_record_open(const char *path, int width, int height, fm_pixel_type type,
                                    const char *description, GError **error);
/* A float32 map stack written page by page the way fm_tiff_write_float32 writes a whole stack
 * (strips of up to 16 MiB, SubFileType page, PageNumber page/total, the same description), so
 * that readers and the catalogue cannot tell the two apart, and a stack of a run's length never
 * sits in memory. expected_pages is what the stack will hold at most (0: unknown): a stack the
 * offline writer would keep in a classic TIFF is one here too, any other a BigTIFF. The totals
 * in PageNumber are set at close to the pages written. */
fm_tiff_record *fm_tiff_record_open_stack(const char *path, int width, int height,
                                          const char *description, guint64 expected_pages,
                                          GError **error);
/* Where page's samples lie in the file (one contiguous run of width * height samples), or -1
 * when libtiff split them; for reading a page back while the stack is still being written. */
gint64 fm_tiff_record_page_offset(const fm_tiff_record *record, guint64 page);

/* One page of width * height samples of the record's type. */
gboolean fm_tiff_record_append(fm_tiff_record *record, const void *samples, GError **error);
/* A camera frame as the source delivered it: Mono8 as 8-bit pages, Mono12, Mono12Packed
 * (unpacked) and Mono16 as 16-bit pages. The record must have been opened with
 * fm_tiff_record_frame_type(frame->format) and the frame's size. */
gboolean fm_tiff_record_append_frame(fm_tiff_record *record, const fm_frame *frame, GError **error);
/* The page type a recording of frames in format takes (U8 or U16). */
fm_pixel_type fm_tiff_record_frame_type(fm_pixfmt format);
guint64 fm_tiff_record_pages(const fm_tiff_record *record);
const char *fm_tiff_record_path(const fm_tiff_record *record);
/* Writes the last directory and closes; frees record (NULL is fine). FALSE when the file could
 * not be completed; the pages before the failure stay readable. */
gboolean fm_tiff_record_close(fm_tiff_record *record, GError **error);

/* The description of a live recording: "fluxmap live recording; source=...; format=Mono12;
 * bits=12; frame_rate_hz=30; frame_interval_s=0.0333333; exposure_us=...; gain_db=..." (settings
 * the source does not have are left out), for the readers and for people. g_free it. */
char *fm_tiff_record_describe(const char *source, fm_pixfmt format, double frame_rate_hz,
                              double exposure_us, double gain_db);

/* The value of key in a description made of "text; key=value; key=value" parts (a live
 * recording's, fm_export_tiff's "method=...; map=...; unit=..."), or NULL when absent. The one
 * parser of these lists, so that readers (a replay's frame rate) agree with the writer. */
char *fm_tiff_description_value(const char *description, const char *key);

G_END_DECLS
