/* fluxmap-bench-write: float32 maps written into a fresh folder by fm_export_tiff (as fluxmap-cli
 * run writes them) against a plain write() of the same bytes and an O_DIRECT write that skips the
 * page cache, interleaved round by round so that every writer meets the same machine state. */
#define _GNU_SOURCE /* O_DIRECT */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "app/core/export.h"
#include "app/core/result.h"

enum { WRITER_PLAIN, WRITER_FLUXMAP, WRITER_DIRECT, N_WRITERS };

static const char *const writer_names[N_WRITERS] = {"write() per page", "fm_export_tiff",
                                                    "O_DIRECT (no page cache)"};

/* One write per page of contiguous floats: what tifffile does with a C-ordered array, and the
 * least any uncompressed writer can do. */
static gboolean write_plain(const char *path, const fm_map *map, GError **error)
{
    int fd = g_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    gsize page = (gsize)map->width * map->height * sizeof(float);
    gboolean ok = fd >= 0;
    for (int f = 0; ok && f < map->n_frames; f++)
        for (gsize at = 0; ok && at < page;) {
            ssize_t n =
                write(fd, (const char *)(map->data + (gsize)f * map->width * map->height) + at,
                      page - at);
            ok = n > 0;
            at += ok ? (gsize)n : 0;
        }
    if (!ok)
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: %s", path,
                    g_strerror(errno));
    return (fd < 0 || close(fd) == 0) && ok;
}

/* The disk's own rate: 8 MiB aligned pieces through a bounce buffer (maps are not aligned). */
static gboolean write_direct(const char *path, const fm_map *map, guint8 *bounce, gsize piece,
                             GError **error)
{
    int fd = g_open(path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0644);
    gsize total = (gsize)map->width * map->height * map->n_frames * sizeof(float);
    gboolean ok = fd >= 0;
    for (gsize at = 0; ok && at < total; at += piece) {
        gsize n = MIN(piece, total - at), aligned = (n + 4095) & ~(gsize)4095;
        memcpy(bounce, (const guint8 *)map->data + at, n);
        memset(bounce + n, 0, aligned - n);
        ok = write(fd, bounce, aligned) == (ssize_t)aligned;
    }
    ok = ok && ftruncate(fd, (off_t)total) == 0;
    if (!ok)
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                    "%s: %s (O_DIRECT unsupported here? try --no-direct)", path, g_strerror(errno));
    return (fd < 0 || close(fd) == 0) && ok;
}

static fm_map *make_map(const char *name, int width, int height, int frames, float scale)
{
    fm_map *map = fm_map_new_uninit(name, "", width, height, frames);
    gsize n = (gsize)width * height * frames;
    for (gsize i = 0; i < n; i++)
        map->data[i] = scale * (float)(i % 100003) + 0.25f; /* no zero pages, no repeats */
    return map;
}

static void print_row(const char *name, double *ms, int rounds, double bytes, double plain_ms)
{
    double lo = ms[0], hi = ms[0];
    for (int r = 1; r < rounds; r++)
        lo = MIN(lo, ms[r]), hi = MAX(hi, ms[r]);
    double median = fm_bench_median(ms, rounds);
    printf("%-26s %9.1f %9.1f %9.1f %8.2f %8.2fx\n", name, median, lo, hi, bytes / median / 1e6,
           median / plain_ms);
}

int main(int argc, char **argv)
{
    int width = 1392, height = 1040, frames = 30, n_maps = 2, rounds = 5;
    gboolean no_direct = FALSE, keep = FALSE, reuse = FALSE;
    g_autofree char *dir = NULL;
    GOptionEntry entries[] = {
        {"width", 0, 0, G_OPTION_ARG_INT, &width, "map width (1392, the e2e LSI input)", "PX"},
        {"height", 0, 0, G_OPTION_ARG_INT, &height, "map height (1040)", "PX"},
        {"frames", 0, 0, G_OPTION_ARG_INT, &frames, "pages per map (30)", "N"},
        {"maps", 0, 0, G_OPTION_ARG_INT, &n_maps, "maps per run (2: lsi.spatial's K and V)", "N"},
        {"rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "rounds, each writer once per round (5)", "N"},
        {"dir", 0, 0, G_OPTION_ARG_FILENAME, &dir, "folder on the file system to test", "DIR"},
        {"no-direct", 0, 0, G_OPTION_ARG_NONE, &no_direct, "leave out the O_DIRECT row", NULL},
        {"reuse", 0, 0, G_OPTION_ARG_NONE, &reuse,
         "rewrite the same folder each round, unlinking the old files first (a re-run)", NULL},
        {"keep", 0, 0, G_OPTION_ARG_NONE, &keep, "keep the written files", NULL},
        {NULL}};
    g_autoptr(GOptionContext) context = g_option_context_new("- time writing float32 maps");
    g_option_context_add_main_entries(context, entries, NULL);
    g_autoptr(GError) error = NULL;
    if (!g_option_context_parse(context, &argc, &argv, &error) || width < 1 || height < 1 ||
        frames < 1 || n_maps < 1 || rounds < 1 || rounds > 1000) {
        fprintf(stderr, "fluxmap-bench-write: %s\n", error ? error->message : "bad sizes");
        return 2;
    }
    g_autofree char *work = dir ? g_build_filename(dir, "fluxmap-bench-write-XXXXXX", NULL)
                                : g_build_filename(g_get_tmp_dir(), "fm-bench-write-XXXXXX", NULL);
    if ((dir && g_mkdir_with_parents(dir, 0755) != 0) || !g_mkdtemp(work)) {
        fprintf(stderr, "fluxmap-bench-write: %s: %s\n", work, g_strerror(errno));
        return 1;
    }
    fm_map **maps = g_new0(fm_map *, n_maps);
    for (int m = 0; m < n_maps; m++)
        maps[m] = make_map(m == 0 ? "K" : "V", width, height, frames, 1.0f / (float)(m + 1));
    const gsize piece = (gsize)8 << 20;
    guint8 *bounce = g_aligned_alloc0(piece, 1, 4096);
    double bytes = (double)width * height * frames * sizeof(float) * n_maps;
    int n_writers = no_direct ? WRITER_DIRECT : N_WRITERS;
    double *ms = g_new0(double, (gsize)N_WRITERS *rounds);

    /* Each round writes into folders never used before (the "fresh folder"); earlier
     * rounds' files stay in the page cache, as a user's earlier results do. New page-cache pages
     * may be memory the guest handed back to its host (virtio-balloon free page reporting), which
     * the host must fault in again: --reuse shows the same writers on pages just freed. The
     * writers' order rotates so that none always follows another's freeing or writeback. */
    gboolean ok = TRUE;
    for (int r = 0; r < rounds && ok; r++)
        for (int k = 0; k < n_writers && ok; k++) {
            int w = (r + k) % n_writers;
            g_autofree char *sub = g_strdup_printf("%s/round-%d-writer-%d", work, reuse ? 0 : r, w);
            ok = g_mkdir(sub, 0755) == 0 || (reuse && errno == EEXIST);
            double t0 = fm_bench_now_ms();
            for (int m = 0; m < n_maps && ok; m++) {
                g_autofree char *path = g_strdup_printf("%s/%s.tif", sub, maps[m]->name);
                g_unlink(path); /* as fluxmap-cli run replaces an earlier run's map */
                ok = w == WRITER_PLAIN ? write_plain(path, maps[m], &error)
                     : w == WRITER_DIRECT
                         ? write_direct(path, maps[m], bounce, piece, &error)
                         : fm_export_tiff(path, maps[m], "lsi.spatial", NULL, &error);
            }
            ms[w * rounds + r] = fm_bench_now_ms() - t0;
        }
    if (ok) {
        printf("fluxmap-bench-write: %d map(s) of %dx%d x %d float32 (%.1f MB in all) per run, "
               "%s, %d rounds in %s\n",
               n_maps, width, height, frames, bytes / 1e6,
               reuse ? "the same folder each round, old files unlinked" : "a fresh folder each",
               rounds, work);
        printf("%-26s %9s %9s %9s %8s %9s\n", "writer", "median ms", "min ms", "max ms", "GB/s",
               "/write()");
        g_autofree double *plain = g_memdup2(ms, sizeof(double) * rounds); /* median sorts */
        double plain_ms = fm_bench_median(plain, rounds);
        for (int w = 0; w < n_writers; w++)
            print_row(writer_names[w], ms + w * rounds, rounds, bytes, plain_ms);
    } else
        fprintf(stderr, "fluxmap-bench-write: %s\n",
                error ? error->message : "cannot make a round's folder");
    if (!keep) {
        for (int r = 0; r < rounds; r++)
            for (int w = 0; w < n_writers; w++) {
                for (int m = 0; m < n_maps; m++) {
                    g_autofree char *path =
                        g_strdup_printf("%s/round-%d-writer-%d/%s.tif", work, r, w, maps[m]->name);
                    g_unlink(path);
                }
                g_autofree char *sub = g_strdup_printf("%s/round-%d-writer-%d", work, r, w);
                g_rmdir(sub);
            }
        g_rmdir(work);
    }
    for (int m = 0; m < n_maps; m++)
        fm_map_free(maps[m]);
    g_free(maps);
    g_aligned_free(bounce);
    g_free(ms);
    return ok ? 0 : 1;
}
