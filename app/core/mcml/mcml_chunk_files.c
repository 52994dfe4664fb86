/* MCML chunk files: a fixed header (the run it belongs to, the chunk, a checksum) and the raw
 * tallies in the machine's byte order, renamed into place when complete, and their merge. */
#include "app/core/mcml/mcml_chunk_files.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/core/error.h"

#define CHUNK_MAGIC "FMMCMLC2" /* 2: with the source */
#define BYTE_ORDER_MARK 0x01020304u

/* Every field 8-byte aligned: no padding bytes of undefined value in the file. */
typedef struct {
    char magic[8];
    uint32_t byte_order, header_bytes;
    int64_t chunk, first_photon, n_photons, photons_done;
    double elapsed_ms;
    uint64_t payload_fnv; /* FNV-1a of the tallies: a damaged body is found, not merged */
    char backend[16], device[64];
    char source[256]; /* the .mci file or "preset:NAME" the task read: not compared (paths
                         differ between nodes), kept for the merged run's record */
    fm_mcml_chunk_run run;
} chunk_header;

void fm_mcml_chunk_run_init(fm_mcml_chunk_run *run, const fm_mcml_params *p,
                            const char *output_name, long long n_chunks)
{
    /* field by field into zeroed memory, so that two runs compare equal byte for byte */
    memset(run, 0, sizeof *run);
    fm_mcml_params *c = &run->params;
    c->n_photons = p->n_photons;
    c->dz_cm = p->dz_cm;
    c->dr_cm = p->dr_cm;
    c->nz = p->nz;
    c->nr = p->nr;
    c->na = p->na;
    c->n_layers = p->n_layers;
    for (int i = 0; i < p->n_layers && i < FM_MCML_MAX_LAYERS; i++)
        c->layers[i] = p->layers[i];
    c->n_above = p->n_above;
    c->n_below = p->n_below;
    c->record_absorption = p->record_absorption != 0;
    c->seed = p->seed;
    g_strlcpy(run->output_name, output_name ? output_name : "", sizeof run->output_name);
    run->n_chunks = n_chunks;
}

char *fm_mcml_chunk_path(const char *dir, long long chunk)
{
    g_autofree char *name = g_strdup_printf("chunk-%06lld.mcchunk", chunk);
    return g_build_filename(dir, name, NULL);
}

static gsize n_rz(const fm_mcml_params *p)
{
    return p->record_absorption ? (gsize)p->nr * (gsize)p->nz : 0;
}

static gsize payload_bytes(const fm_mcml_params *p)
{
    return sizeof(((fm_mcml_raw *)0)->batch) +
           sizeof(uint64_t) * (2 * (gsize)p->nr * (gsize)p->na + n_rz(p));
}

static void fnv(uint64_t *h, const void *data, gsize n)
{
    const unsigned char *b = data;
    for (gsize i = 0; i < n; i++)
        *h = (*h ^ b[i]) * 1099511628211ull;
}

/* The tallies in file order: batch, Rd[r][a], Tt[r][a], A[r][z]. */
static void payload_parts(const fm_mcml_raw *raw, const fm_mcml_params *p, const void *part[4],
                          gsize len[4])
{
    const gsize n_ra = (gsize)p->nr * (gsize)p->na;
    part[0] = raw->batch;
    len[0] = sizeof raw->batch;
    part[1] = raw->rd_ra;
    len[1] = n_ra * sizeof(uint64_t);
    part[2] = raw->tt_ra;
    len[2] = n_ra * sizeof(uint64_t);
    part[3] = raw->a_rz;
    len[3] = n_rz(p) * sizeof(uint64_t);
}

gboolean fm_mcml_chunk_write(const char *dir, const fm_mcml_chunk_run *run, long long chunk,
                             const fm_mcml_raw *raw, const char *backend, const char *device,
                             const char *source, double elapsed_ms, GError **error)
{
    chunk_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CHUNK_MAGIC, sizeof h.magic);
    h.byte_order = BYTE_ORDER_MARK;
    h.header_bytes = sizeof h;
    long long first, count;
    fm_mcml_chunk_span(run->params.n_photons, run->n_chunks, chunk, &first, &count);
    h.chunk = chunk;
    h.first_photon = first;
    h.n_photons = count;
    h.photons_done = raw->photons_done;
    h.elapsed_ms = elapsed_ms;
    g_strlcpy(h.backend, backend ? backend : "", sizeof h.backend);
    g_strlcpy(h.device, device ? device : "", sizeof h.device);
    g_strlcpy(h.source, source ? source : "", sizeof h.source);
    h.run = *run;
    const void *part[4];
    gsize len[4];
    payload_parts(raw, &run->params, part, len);
    h.payload_fnv = 14695981039346656037ull;
    for (int k = 0; k < 4; k++)
        fnv(&h.payload_fnv, part[k], len[k]);

    g_autofree char *path = fm_mcml_chunk_path(dir, chunk);
    g_autofree char *name = g_path_get_basename(path);
    g_autofree char *partial_name = g_strdup_printf(".%s.partial-%ld", name, (long)getpid());
    g_autofree char *partial = g_build_filename(dir, partial_name, NULL);
    FILE *f = g_fopen(partial, "wb");
    gboolean ok = f != NULL && fwrite(&h, sizeof h, 1, f) == 1;
    for (int k = 0; ok && k < 4; k++)
        ok = len[k] == 0 || fwrite(part[k], len[k], 1, f) == 1;
    /* synced before the rename: a crash after it leaves a whole file, never a short one */
    ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
    int saved = errno;
    if (f && fclose(f) != 0 && ok) {
        ok = FALSE;
        saved = errno;
    }
    if (ok && g_rename(partial, path) != 0) {
        ok = FALSE;
        saved = errno;
    }
    if (!ok) {
        g_unlink(partial);
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write the chunk: %s"), path,
                    g_strerror(saved));
    }
    return ok;
}

/* Reads path's header, and the tallies into raw when raw is not NULL (allocated here). FALSE
 * with why when the file is short, damaged or not a chunk file. */
static gboolean read_chunk(const char *path, chunk_header *h, fm_mcml_raw *raw, char **why)
{
    g_autofree char *data = NULL;
    gsize size = 0;
    g_autoptr(GError) read_error = NULL;
    if (!g_file_get_contents(path, &data, &size, &read_error)) {
        *why = g_strdup(read_error->message);
        return FALSE;
    }
    if (size < sizeof *h || memcmp(data, CHUNK_MAGIC, 8) != 0) {
        *why = g_strdup_printf(_("%s: not a Fluxmap MCML chunk file"), path);
        return FALSE;
    }
    memcpy(h, data, sizeof *h);
    if (h->byte_order != BYTE_ORDER_MARK || h->header_bytes != sizeof *h) {
        *why = g_strdup_printf(_("%s: written by another kind of machine or version"), path);
        return FALSE;
    }
    const fm_mcml_params *p = &h->run.params;
    char msg[FM_MSG_LEN] = "";
    if (fm_mcml_check(p, msg, sizeof msg) != FM_OK || h->run.n_chunks < 1) {
        *why = g_strdup_printf(_("%s: bad header: %s"), path, msg);
        return FALSE;
    }
    if (size != sizeof *h + payload_bytes(p)) {
        *why = g_strdup_printf(
            _("%s: %" G_GSIZE_FORMAT " bytes where a complete chunk has %" G_GSIZE_FORMAT), path,
            size, sizeof *h + payload_bytes(p));
        return FALSE;
    }
    uint64_t sum = 14695981039346656037ull;
    fnv(&sum, data + sizeof *h, size - sizeof *h);
    if (sum != h->payload_fnv) {
        *why = g_strdup_printf(_("%s: the tallies do not match their checksum"), path);
        return FALSE;
    }
    if (raw) {
        if (fm_mcml_raw_alloc(raw, p, 0, msg, sizeof msg) != FM_OK) {
            *why = g_strdup(msg);
            return FALSE;
        }
        const void *part[4];
        gsize len[4], off = sizeof *h;
        payload_parts(raw, p, part, len);
        for (int k = 0; k < 4; k++) {
            memcpy((void *)part[k], data + off, len[k]);
            off += len[k];
        }
        raw->photons_done = h->photons_done;
    }
    return TRUE;
}

/* FALSE when h belongs to another run than run, or to another chunk than `chunk`. */
static gboolean same_run(const chunk_header *h, const fm_mcml_chunk_run *run, long long chunk,
                         const char *path, GError **error)
{
    if (memcmp(&h->run, run, sizeof *run) != 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s belongs to another run (%lld photons in %lld chunks, seed %llu, "
                      "%d layers): use another folder"),
                    path, (long long)h->run.params.n_photons, (long long)h->run.n_chunks,
                    (unsigned long long)h->run.params.seed, h->run.params.n_layers);
        return FALSE;
    }
    long long first, count;
    fm_mcml_chunk_span(run->params.n_photons, run->n_chunks, chunk, &first, &count);
    if (h->chunk != chunk || h->first_photon != first || h->n_photons != count ||
        h->photons_done != count) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s holds chunk %lld (photons %lld + %lld), not chunk %lld"), path,
                    (long long)h->chunk, (long long)h->first_photon, (long long)h->photons_done,
                    chunk);
        return FALSE;
    }
    return TRUE;
}

gboolean fm_mcml_chunk_check(const char *dir, const fm_mcml_chunk_run *run, long long chunk,
                             fm_mcml_chunk_state *state, char **why, GError **error)
{
    g_autofree char *path = fm_mcml_chunk_path(dir, chunk);
    g_autofree char *reason = NULL;
    chunk_header h;
    *state = FM_MCML_CHUNK_MISSING;
    if (!g_file_test(path, G_FILE_TEST_EXISTS))
        return TRUE;
    if (!read_chunk(path, &h, NULL, &reason)) {
        *state = FM_MCML_CHUNK_DAMAGED;
        if (why)
            *why = g_steal_pointer(&reason);
        return TRUE;
    }
    if (!same_run(&h, run, chunk, path, error))
        return FALSE;
    *state = FM_MCML_CHUNK_DONE;
    return TRUE;
}

char *fm_mcml_index_list(const long long *v, gsize n)
{
    GString *s = g_string_new(NULL);
    for (gsize i = 0; i < n;) {
        gsize j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1)
            j++;
        g_string_append_printf(s, "%s%lld", s->len ? "," : "", v[i]);
        if (j > i)
            g_string_append_printf(s, "-%lld", v[j]);
        i = j + 1;
    }
    return g_string_free(s, FALSE);
}

void fm_mcml_merge_info_clear(fm_mcml_merge_info *info)
{
    if (info->missing)
        g_array_unref(info->missing);
    info->missing = NULL;
    g_clear_pointer(&info->damaged, g_ptr_array_unref);
}

/* The run of the lowest-numbered readable chunk file in dir. */
static gboolean find_run(const char *dir, fm_mcml_chunk_run *run, GError **error)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, error);
    if (!d)
        return FALSE;
    long long best = -1;
    const char *name;
    while ((name = g_dir_read_name(d))) {
        long long chunk;
        char tail[16];
        if (sscanf(name, "chunk-%lld.%15s", &chunk, tail) != 2 || strcmp(tail, "mcchunk") != 0 ||
            chunk < 0)
            continue;
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_autofree char *why = NULL;
        chunk_header h;
        if ((best < 0 || chunk < best) && read_chunk(path, &h, NULL, &why)) {
            best = chunk;
            *run = h.run;
        }
    }
    if (best < 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s holds no complete MCML chunk file (chunk-NNNNNN.mcchunk)"), dir);
        return FALSE;
    }
    return TRUE;
}

gboolean fm_mcml_chunks_merge(const char *dir, fm_mcml_raw *sum, fm_mcml_merge_info *info,
                              GError **error)
{
    memset(sum, 0, sizeof *sum);
    memset(info, 0, sizeof *info);
    info->missing = g_array_new(FALSE, FALSE, sizeof(long long));
    info->damaged = g_ptr_array_new_with_free_func(g_free);
    if (!find_run(dir, &info->run, error))
        return FALSE;
    const fm_mcml_chunk_run *run = &info->run;
    char msg[FM_MSG_LEN] = "";
    if (fm_mcml_raw_alloc(sum, &run->params, 1, msg, sizeof msg) != FM_OK) {
        g_set_error(error, FM_ERROR, FM_ERROR_COMPUTE, "%s", msg);
        return FALSE;
    }
    /* In chunk order (the sums are exact integers: any order gives the same bits). */
    for (long long c = 0; c < run->n_chunks; c++) {
        g_autofree char *path = fm_mcml_chunk_path(dir, c);
        g_autofree char *why = NULL;
        chunk_header h;
        fm_mcml_raw raw;
        memset(&raw, 0, sizeof raw);
        if (!g_file_test(path, G_FILE_TEST_EXISTS) || !read_chunk(path, &h, &raw, &why)) {
            if (why)
                g_ptr_array_add(info->damaged, g_steal_pointer(&why));
            g_array_append_val(info->missing, c);
            continue;
        }
        if (!same_run(&h, run, c, path, error)) {
            fm_mcml_raw_free(&raw);
            fm_mcml_raw_free(sum);
            return FALSE;
        }
        fm_mcml_raw_add(sum, &raw, &run->params);
        fm_mcml_raw_free(&raw);
        info->elapsed_ms += h.elapsed_ms;
        if (info->backend[0] == '\0') {
            g_strlcpy(info->backend, h.backend, sizeof info->backend);
            g_strlcpy(info->device, h.device, sizeof info->device);
            g_strlcpy(info->source, h.source, sizeof info->source);
        } else if (strcmp(info->backend, h.backend) != 0) {
            g_strlcpy(info->backend, "cpu+cuda", sizeof info->backend);
        }
    }
    if (info->missing->len > 0) {
        g_autofree char *list =
            fm_mcml_index_list((const long long *)(void *)info->missing->data, info->missing->len);
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: %u of %lld chunks missing: %s (run them again, e.g. with "
                      "--chunk-range)"),
                    dir, info->missing->len, run->n_chunks, list);
        fm_mcml_raw_free(sum);
        return FALSE;
    }
    return TRUE;
}
