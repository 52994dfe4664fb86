/* The maps a live run keeps, written as they come: every frame's maps appended to their stacks
 * on disk (what the offline run writes, without a run's worth of frames in memory), or a
 * running mean and the last frame; cumulative maps (the OCT en-face) once, as they ended.
 * The stacks are written on a thread of their own from a few frames' copies, so that the disk
 * stalling for a moment (the kernel holding writers back while it flushes) does not hold up the
 * processing; only a disk slower than the maps for longer than those frames does. */
#include "app/core/live_private.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "app/core/error.h"
#include "app/core/export.h"
#include "app/core/io/tiff_record.h"
#include "app/core/map_stats.h"

typedef struct {
    char *name, *unit, *path;
    int width, height;
    gboolean cumulative;
    /* SAVE_ALL: the stack on disk, a page per frame */
    fm_tiff_record *stack;
    /* SUMMARY: per pixel, the finite values summed in float over a block of frames, then
     * into double (half the memory traffic of a double sum per frame, the precision of one
     * per block), the count of frames where it was not finite */
    float *block;
    double *sum;
    guint32 *n_nonfinite;
    int block_frames;
    /* SUMMARY and cumulative maps: the last frame's map, the step's own (borrowed until its
     * next call, which never comes after the last frame) */
    const fm_map *last;
} live_map;

/* Frames summed in float before they go into the double sum. */
#define FM_LIVE_SUM_BLOCK 32

struct fm_live_maps {
    fm_live_save mode;
    char *dir, *method_id;
    guint64 expected_frames;
    GPtrArray *maps; /* of live_map* */
    guint64 n_frames;
    gboolean failed;
    /* SAVE_ALL: the writer thread and its frames (each every stack map's floats, end to end) */
    GThread *writer;
    GAsyncQueue *to_write, *free_frames;
    int n_frame_buffers;
    gsize frame_bytes;
    gint write_failed; /* atomic; write_error set before it */
    char *write_error;
};

/* Frames in flight to the writer: at 1392x1040, two maps, 46 MiB. */
#define FM_LIVE_WRITE_FRAMES 4

static guint8 quit_marker;

static void live_map_free(gpointer data)
{
    live_map *m = data;
    fm_tiff_record_close(m->stack, NULL);
    g_free(m->name);
    g_free(m->unit);
    g_free(m->path);
    g_free(m->block);
    g_free(m->sum);
    g_free(m->n_nonfinite);
    g_free(m);
}

void fm_live_map_file_free(fm_live_map_file *file)
{
    if (!file)
        return;
    g_free(file->name);
    g_free(file->unit);
    g_free(file->path);
    g_free(file);
}

fm_live_maps *fm_live_maps_new(fm_live_save mode, const char *dir, const char *method_id,
                               guint64 expected_frames)
{
    fm_live_maps *maps = g_new0(fm_live_maps, 1);
    maps->mode = mode;
    maps->dir = g_strdup(dir);
    maps->method_id = g_strdup(method_id);
    maps->expected_frames = expected_frames;
    maps->maps = g_ptr_array_new_with_free_func(live_map_free);
    return maps;
}

static void stop_writer(fm_live_maps *maps)
{
    if (!maps->writer)
        return;
    g_async_queue_push(maps->to_write, &quit_marker);
    g_thread_join(g_steal_pointer(&maps->writer));
}

void fm_live_maps_free(fm_live_maps *maps)
{
    if (!maps)
        return;
    stop_writer(maps);
    if (maps->to_write)
        g_async_queue_unref(maps->to_write);
    if (maps->free_frames)
        g_async_queue_unref(maps->free_frames);
    g_free(maps->write_error);
    g_ptr_array_unref(maps->maps);
    g_free(maps->dir);
    g_free(maps->method_id);
    g_free(maps);
}

guint64 fm_live_maps_frames(const fm_live_maps *maps)
{
    return maps->n_frames;
}

/* The path of a map file in the run's folder, absolute; an earlier file of the name goes (the
 * catalogue may hold it as a hard link: never rewritten in place). */
static char *map_path(const fm_live_maps *maps, const char *name, GError **error)
{
    g_autofree char *file = g_strconcat(name, ".tif", NULL);
    g_autofree char *path = g_build_filename(maps->dir, file, NULL);
    char *absolute = g_canonicalize_filename(path, NULL);
    if (g_unlink(absolute) != 0 && errno != ENOENT) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot replace: %s"), absolute,
                    g_strerror(errno));
        g_free(absolute);
        return NULL;
    }
    return absolute;
}

static char *map_description(const fm_live_maps *maps, const live_map *m)
{
    /* fm_export_tiff's */
    return g_strdup_printf("method=%s; map=%s; unit=%s", maps->method_id ? maps->method_id : "",
                           m->name, m->unit ? m->unit : "");
}

static live_map *live_map_new(fm_live_maps *maps, const fm_map *src, gboolean cumulative,
                              GError **error)
{
    live_map *m = g_new0(live_map, 1);
    m->name = g_strdup(src->name);
    m->unit = g_strdup(src->unit);
    m->width = src->width;
    m->height = src->height;
    m->cumulative = cumulative;
    if (cumulative)
        return m;
    gsize n = (gsize)src->width * src->height;
    if (maps->mode == FM_LIVE_SAVE_ALL) {
        m->path = map_path(maps, m->name, error);
        g_autofree char *description = map_description(maps, m);
        if (m->path)
            m->stack = fm_tiff_record_open_stack(m->path, m->width, m->height, description,
                                                 maps->expected_frames, error);
        if (!m->stack) {
            live_map_free(m);
            return NULL;
        }
    } else {
        m->block = g_new0(float, n);
        m->sum = g_new0(double, n);
        m->n_nonfinite = g_new0(guint32, n);
    }
    return m;
}

static void fold_block(live_map *m, gsize n)
{
#pragma omp parallel for schedule(static) if (n >= 65536)
    for (gsize p = 0; p < n; p++) {
        m->sum[p] += m->block[p];
        m->block[p] = 0;
    }
    m->block_frames = 0;
}

static void add_to_sum(live_map *m, const float *in)
{
    gsize n = (gsize)m->width * m->height;
    float *block = m->block;
    guint32 *nonfinite = m->n_nonfinite;
    /* per pixel, independent: all cores, so that a GPU's 1000+ frames/s are not held up here */
#pragma omp parallel for schedule(static) if (n >= 65536)
    for (gsize p = 0; p < n; p++) {
        float v = in[p];
        if (G_LIKELY(isfinite(v)))
            block[p] += v;
        else
            nonfinite[p]++;
    }
    if (++m->block_frames == FM_LIVE_SUM_BLOCK)
        fold_block(m, n);
}

static gpointer writer_main(gpointer data)
{
    fm_live_maps *maps = data;
    for (;;) {
        guint8 *frame = g_async_queue_pop(maps->to_write);
        if (frame == &quit_marker)
            break;
        gsize at = 0;
        for (guint i = 0; i < maps->maps->len && !g_atomic_int_get(&maps->write_failed); i++) {
            live_map *m = maps->maps->pdata[i];
            if (!m->stack)
                continue;
            GError *error = NULL;
            if (!fm_tiff_record_append(m->stack, frame + at, &error)) {
                maps->write_error = g_strdup(error->message);
                g_error_free(error);
                g_atomic_int_set(&maps->write_failed, TRUE);
            }
            at += (gsize)m->width * m->height * sizeof(float);
        }
        g_async_queue_push(maps->free_frames, frame);
    }
    return NULL;
}

/* A frame's stack maps copied for the writer: a free buffer, or a new one while fewer than
 * FM_LIVE_WRITE_FRAMES exist, else the next one the writer gives back. */
static gboolean queue_for_writer(fm_live_maps *maps, const fm_live_output *output, GError **error)
{
    if (!maps->writer) {
        for (guint i = 0; i < maps->maps->len; i++) {
            const live_map *m = maps->maps->pdata[i];
            if (m->stack)
                maps->frame_bytes += (gsize)m->width * m->height * sizeof(float);
        }
        if (maps->frame_bytes == 0)
            return TRUE;
        maps->to_write = g_async_queue_new();
        maps->free_frames = g_async_queue_new_full(g_free);
        maps->writer = g_thread_new("fm-live-maps", writer_main, maps);
    }
    if (g_atomic_int_get(&maps->write_failed)) {
        g_set_error_literal(error, FM_ERROR, FM_ERROR_IO, maps->write_error);
        maps->failed = TRUE;
        return FALSE;
    }
    guint8 *frame = g_async_queue_try_pop(maps->free_frames);
    if (!frame && maps->n_frame_buffers < FM_LIVE_WRITE_FRAMES) {
        frame = g_malloc(maps->frame_bytes);
        maps->n_frame_buffers++;
    }
    if (!frame)
        frame = g_async_queue_pop(maps->free_frames);
    gsize at = 0;
    for (guint i = 0; i < maps->maps->len && i < (guint)output->n_maps; i++) {
        const live_map *m = maps->maps->pdata[i];
        if (!m->stack)
            continue;
        gsize bytes = (gsize)m->width * m->height * sizeof(float);
        memcpy(frame + at, output->maps[i]->data, bytes);
        at += bytes;
    }
    g_async_queue_push(maps->to_write, frame);
    return TRUE;
}

gboolean fm_live_maps_add(fm_live_maps *maps, const fm_live_output *output, GError **error)
{
    if (!maps->dir || maps->failed)
        return TRUE;
    if (maps->maps->len == 0) {
        if (maps->mode == FM_LIVE_SAVE_ALL && g_mkdir_with_parents(maps->dir, 0755) != 0) {
            g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot create directory: %s"),
                        maps->dir, g_strerror(errno));
            maps->failed = TRUE;
            return FALSE;
        }
        for (int i = 0; i < output->n_maps; i++) {
            gboolean cumulative = i < 32 && (output->cumulative >> i) & 1u;
            live_map *m = live_map_new(maps, output->maps[i], cumulative, error);
            if (!m) {
                maps->failed = TRUE;
                return FALSE;
            }
            g_ptr_array_add(maps->maps, m);
        }
    }
    for (guint i = 0; i < maps->maps->len && i < (guint)output->n_maps; i++) {
        live_map *m = maps->maps->pdata[i];
        const fm_map *src = output->maps[i];
        m->last = src;
        if (!m->cumulative && !m->stack)
            add_to_sum(m, src->data);
    }
    if (maps->mode == FM_LIVE_SAVE_ALL && !queue_for_writer(maps, output, error))
        return FALSE;
    maps->n_frames++;
    return TRUE;
}

/* ---- the statistics of a stack on disk, read back page by page (fm_stats_from_source) ---- */

/* libtiff writes the pages in the machine's byte order: they are read back as they lie. */

typedef struct {
    int fd;
    gsize page_values;
    GArray *offsets; /* gint64 per page */
    gboolean failed; /* atomic */
} stack_reader;

static void read_stack_values(void *user, gsize start, gsize count, float *out)
{
    stack_reader *r = user;
    while (count > 0) {
        gsize page = start / r->page_values, within = start % r->page_values;
        gsize n = MIN(count, r->page_values - within);
        gint64 base = g_array_index(r->offsets, gint64, page);
        gsize bytes = n * sizeof(float), done = 0;
        while (done < bytes) {
            ssize_t got = pread(r->fd, (guint8 *)out + done, bytes - done,
                                (off_t)(base + (gint64)(within * sizeof(float) + done)));
            if (got <= 0) {
                g_atomic_int_set(&r->failed, TRUE);
                memset((guint8 *)out + done, 0xff, bytes - done); /* NaN, not counted */
                break;
            }
            done += (gsize)got;
        }
        out += n;
        start += n;
        count -= n;
    }
}

/* Exact statistics of the stack's pages, as fm_map_statistics gives them for the stack in
 * memory; all NaN when a page cannot be read back. */
static fm_map_stats stack_statistics(const live_map *m)
{
    fm_map_stats nan_stats = {NAN, NAN, NAN, NAN, 0};
    guint64 pages = fm_tiff_record_pages(m->stack);
    stack_reader r = {.page_values = (gsize)m->width * m->height,
                      .offsets = g_array_new(FALSE, FALSE, sizeof(gint64))};
    for (guint64 p = 0; p < pages; p++) {
        gint64 offset = fm_tiff_record_page_offset(m->stack, p);
        if (offset < 0) {
            g_array_unref(r.offsets);
            return nan_stats;
        }
        g_array_append_val(r.offsets, offset);
    }
    r.fd = g_open(m->path, O_RDONLY, 0);
    fm_map_stats stats = nan_stats;
    if (r.fd >= 0) {
        stats = fm_stats_from_source(read_stack_values, &r, r.page_values * pages);
        close(r.fd);
    }
    g_array_unref(r.offsets);
    return g_atomic_int_get(&r.failed) ? nan_stats : stats;
}

/* One map written whole (summary maps, cumulative maps) as fm_export_tiff writes it. */
static gboolean write_single(fm_live_maps *maps, fm_map *map, GPtrArray *files, GError **error)
{
    fm_live_map_file *file = g_new0(fm_live_map_file, 1);
    file->name = g_strdup(map->name);
    file->unit = g_strdup(map->unit);
    file->stats = fm_map_statistics(map);
    file->path = map_path(maps, map->name, error);
    gboolean ok = file->path && fm_export_tiff(file->path, map, maps->method_id, NULL, error);
    fm_map_free(map);
    if (!ok) {
        fm_live_map_file_free(file);
        return FALSE;
    }
    g_ptr_array_add(files, file);
    return TRUE;
}

gboolean fm_live_maps_finish(fm_live_maps *maps, GPtrArray *files, GError **error)
{
    if (!maps->dir || maps->n_frames == 0)
        return TRUE;
    stop_writer(maps); /* every page written */
    if (maps->write_error) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("writing the maps: %s"), maps->write_error);
        return FALSE;
    }
    if (maps->failed) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("the maps could not be written"));
        return FALSE;
    }
    if (g_mkdir_with_parents(maps->dir, 0755) != 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot create directory: %s"), maps->dir,
                    g_strerror(errno));
        return FALSE;
    }
    for (guint i = 0; i < maps->maps->len; i++) {
        live_map *m = maps->maps->pdata[i];
        gsize n = (gsize)m->width * m->height;
        if (m->cumulative) {
            const fm_map *last = m->last;
            fm_map *copy = fm_map_new_uninit(m->name, m->unit, last->width, last->height, 1);
            memcpy(copy->data, last->data, fm_map_n_values(copy) * sizeof(float));
            if (!write_single(maps, copy, files, error))
                return FALSE;
            continue;
        }
        if (m->stack) {
            fm_live_map_file *file = g_new0(fm_live_map_file, 1);
            file->name = g_strdup(m->name);
            file->unit = g_strdup(m->unit);
            file->path = g_strdup(m->path);
            file->stats = stack_statistics(m);
            gboolean ok = fm_tiff_record_close(g_steal_pointer(&m->stack), error);
            if (!ok) {
                fm_live_map_file_free(file);
                return FALSE;
            }
            g_ptr_array_add(files, file);
            continue;
        }
        g_autofree char *mean_name = g_strconcat(m->name, "_mean", NULL);
        g_autofree char *last_name = g_strconcat(m->name, "_last", NULL);
        fm_map *mean = fm_map_new_uninit(mean_name, m->unit, m->width, m->height, 1);
        fm_map *last = fm_map_new_uninit(last_name, m->unit, m->width, m->height, 1);
        fold_block(m, n);
        for (gsize p = 0; p < n; p++) {
            guint64 finite = maps->n_frames - m->n_nonfinite[p];
            mean->data[p] = finite ? (float)(m->sum[p] / (double)finite) : NAN;
        }
        memcpy(last->data, m->last->data, n * sizeof(float));
        if (!write_single(maps, mean, files, error)) {
            fm_map_free(last);
            return FALSE;
        }
        if (!write_single(maps, last, files, error))
            return FALSE;
    }
    return TRUE;
}
