/* .sdt counts into a dataset: each pixel's decay is contiguous in the file, each time bin's
 * plane in the dataset, so every sample moves; threaded, in tiles. */
#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib/gi18n.h>
#include <string.h>
#include <unistd.h>

#include "app/core/error.h"
#include "app/core/io/flim_bytes.h"
#include "app/core/io/io_threads.h"
#include "app/core/io/sdt_private.h"

/* Block data are y, x, t with t fastest (one decay after another along each line); the dataset
 * is x fastest, then y, then t, so every sample moves. */
typedef struct {
    const guint8 *data; /* the block's counts in memory (an inflated copy), or NULL: read from fd */
    int fd;
    goffset offset; /* of the counts in the file, when read from fd */
    guint16 *out;
    int bytes_per_count, bins;
    gsize plane;                          /* pixels */
    guint64 saturated[FM_IO_MAX_THREADS]; /* per part: 32-bit counts clipped to 65535 */
    gboolean failed[FM_IO_MAX_THREADS];   /* per part: the file could not be read */
} transpose_job;

/* Pixels per tile of the transpose: the tile's decays (64 x bins counts) are read in order and
 * each time bin's plane gets 64 neighbouring values, where one pixel at a time would write to
 * `bins` distant pages per pixel. */
#define TRANSPOSE_TILE 64
/* Below this many pixels per thread a thread costs more than it saves. */
#define TRANSPOSE_MIN_PIXELS 4096

/* Reads len bytes at offset, retrying short reads; FALSE on an error or the end of the file. */
static gboolean read_at(int fd, guint8 *buf, gsize len, goffset offset)
{
    while (len > 0) {
        ssize_t n = pread(fd, buf, len, offset);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return FALSE;
        }
        buf += n;
        len -= (gsize)n;
        offset += n;
    }
    return TRUE;
}

/* Counts from the file come in through a tile-sized buffer per part rather than the file's
 * mapping: on the H100 machine a mapping touched by 16 threads held 26 MB more at the peak than
 * one thread's, whatever was released behind them (large page-cache folios are mapped whole). */
static void transpose_pixels(int part, gsize first, gsize end, gpointer user)
{
    transpose_job *job = user;
    int bins = job->bins, bpc = job->bytes_per_count;
    const gsize decay_bytes = (gsize)bins * bpc;
    g_autofree guint8 *buf = job->data ? NULL : g_malloc(TRANSPOSE_TILE * decay_bytes);
    guint64 saturated = 0;
    for (gsize tile = first; tile < end; tile += TRANSPOSE_TILE) {
        gsize n = MIN((gsize)TRANSPOSE_TILE, end - tile);
        const guint8 *decays = job->data ? job->data + tile * decay_bytes : buf;
        if (!job->data &&
            !read_at(job->fd, buf, n * decay_bytes, job->offset + (goffset)(tile * decay_bytes))) {
            job->failed[part] = TRUE;
            return;
        }
        for (int t = 0; t < bins; t++) {
            guint16 *out = job->out + (gsize)t * job->plane + tile;
            const guint8 *in = decays + (gsize)t * bpc;
            if (bpc == 2) {
                for (gsize p = 0; p < n; p++)
                    out[p] = fm_le16(in + p * decay_bytes);
                continue;
            }
            for (gsize p = 0; p < n; p++) {
                guint32 v = fm_le32(in + p * decay_bytes);
                if (v > G_MAXUINT16) {
                    v = G_MAXUINT16;
                    saturated++;
                }
                out[p] = (guint16)v;
            }
        }
    }
    job->saturated[part] = saturated;
}

/* The dataset of the file's counts, with source_path and the file's hash, which is taken while
 * the counts are transposed. */
fm_dataset *sdt_to_dataset(const sdt_file *f, const guint8 *data, int bytes_per_count, gint64 w,
                           gint64 h, gint64 line, int bins, guint64 *saturated, GError **error)
{
    /* Padded lines (rare: FIFO images) are packed into a copy first, so the transpose below
     * sees consecutive decays either way. */
    g_autofree guint8 *packed = NULL;
    if (line != w) {
        gsize decay_bytes = (gsize)bins * bytes_per_count;
        packed = g_malloc((gsize)w * (gsize)h * decay_bytes);
        for (gint64 y = 0; y < h; y++)
            memcpy(packed + (gsize)y * (gsize)w * decay_bytes,
                   data + (gsize)y * (gsize)line * decay_bytes, (gsize)w * decay_bytes);
        data = packed;
    }
    gsize sizes[3] = {(gsize)w, (gsize)h, (gsize)bins};
    g_autoptr(fm_dataset) ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    ds->source_path = g_canonicalize_filename(f->path, NULL);
    const gboolean in_file = data >= f->bytes && data < f->bytes + f->len;
    transpose_job job = {in_file ? NULL : data,
                         -1,
                         in_file ? data - f->bytes : 0,
                         ds->data,
                         bytes_per_count,
                         bins,
                         (gsize)w * (gsize)h,
                         {0},
                         {0}};
    if (in_file && (job.fd = open(f->path, O_RDONLY | O_CLOEXEC)) < 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot open: %s"), f->path,
                    g_strerror(errno));
        return NULL;
    }
    fm_io_hash *hash = fm_io_hash_begin(ds);
    /* Parts own disjoint pixel ranges, so they write disjoint samples. */
    fm_io_parallel_ranges(job.plane, fm_io_threads_for(job.plane, TRANSPOSE_MIN_PIXELS),
                          transpose_pixels, &job);
    if (job.fd >= 0)
        close(job.fd);
    *saturated = 0;
    gboolean failed = FALSE;
    for (int p = 0; p < FM_IO_MAX_THREADS; p++) {
        *saturated += job.saturated[p];
        failed |= job.failed[p];
    }
    if (!fm_io_hash_end(hash, error))
        return NULL;
    if (failed) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: read error in the FLIM data (the file changed while it was read?)"),
                    f->path);
        return NULL;
    }
    return g_steal_pointer(&ds);
}
