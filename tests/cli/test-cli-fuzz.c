/* Mutation fuzzing of every reader through `fluxmap-cli info` ($FLUXMAP_CLI): seed files of each
 * format (our writers' fixtures, and the real files in shared/refdata where present) get seeded
 * mutations (bit flips, bytes set to 0/0xff/random, truncation, duplicated or deleted chunks,
 * huge length fields in the header); every mutant must end within the time limit with exit 0, 2,
 * 3 or 4 (never a signal), and a failure must say something on stderr.
 * FLUXMAP_FUZZ_SEED, FLUXMAP_FUZZ_COUNT (mutants), FLUXMAP_FUZZ_TIMEOUT_S (per mutant),
 * FLUXMAP_FUZZ_CASE (run that case alone), FLUXMAP_FUZZ_JOBS (cases at a time; default one per
 * core) and FLUXMAP_FUZZ_KEEP (a folder that receives every failing mutant) make longer or
 * narrower runs. */
#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/cli/cli-test-util.h"
#include "tests/cli/reader-fixtures.h"
#include "tests/test-tree.h"

#define DEFAULT_SEED 20261127u
#define DEFAULT_COUNT 320
#define DEFAULT_TIMEOUT_S 20

typedef struct {
    char *label;
    char *dir;     /* copied whole into each case's folder (sidecars, the rest of a series) */
    char *name;    /* the file mutated and opened, inside dir */
    char *sidecar; /* a sidecar beside it that mutations may hit instead, or NULL */
    char **layout; /* extra `info` options (the raw layout), NULL-terminated, may be NULL */
} fuzz_seed;

static void fuzz_seed_free(fuzz_seed *s)
{
    g_free(s->label);
    g_free(s->dir);
    g_free(s->name);
    g_free(s->sidecar);
    g_strfreev(s->layout);
    g_free(s);
}

static guint64 env_number(const char *name, guint64 fallback)
{
    const char *text = g_getenv(name);
    guint64 v = fallback;
    if (text && *text && !g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT64, &v, NULL))
        g_error("%s: '%s' is not an unsigned integer", name, text);
    return v;
}

static fuzz_seed *seed_from_fixture(const reader_fixture *f)
{
    fuzz_seed *s = g_new0(fuzz_seed, 1);
    s->label = g_strdup(f->label);
    s->dir = g_path_get_dirname(f->path);
    s->name = g_path_get_basename(f->path);
    const char *const sidecars[] = {".json", NULL};
    for (int i = 0; sidecars[i]; i++) {
        g_autofree char *oct = g_strconcat(f->path, sidecars[i], NULL);
        if (g_file_test(oct, G_FILE_TEST_EXISTS))
            s->sidecar = g_path_get_basename(oct);
    }
    g_autofree char *nifti = g_build_filename(s->dir, "dce.json", NULL); /* NIfTI FrameTimes */
    if (!s->sidecar && g_file_test(nifti, G_FILE_TEST_EXISTS))
        s->sidecar = g_strdup("dce.json");
    if (f->pixels_per_aline) {
        s->layout = g_new0(char *, 4);
        s->layout[0] = g_strdup_printf("--pixels_per_aline=%d", f->pixels_per_aline);
        s->layout[1] = g_strdup_printf("--alines_per_bscan=%d", f->alines_per_bscan);
        s->layout[2] = g_strdup_printf("--raw_format=%s", f->raw_format);
    }
    return s;
}

/* The real instrument files beside the repository (see tests/io/meson.build), when present. */
static void add_refdata(GPtrArray *seeds, const char *dir)
{
    static const struct {
        const char *label, *source, *name;
        gboolean zipped;
    } real[] = {
        {"real-ptu", "flim-real/Example_PTU_PicoHarp.ptu", "Example_PTU_PicoHarp.ptu", FALSE},
        {"real-sdt", "flim-real/tcspc.sdt.zip", "tcspc.sdt", TRUE},
        {"real-mci", "mcml/sample.mci", "sample.mci", FALSE},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(real); i++) {
        g_autofree char *source = g_build_filename(FM_REFDATA_DIR, real[i].source, NULL);
        if (!g_file_test(source, G_FILE_TEST_EXISTS))
            continue;
        fuzz_seed *s = g_new0(fuzz_seed, 1);
        s->label = g_strdup(real[i].label);
        s->dir = g_build_filename(dir, real[i].label, NULL);
        s->name = g_strdup(real[i].name);
        g_assert_cmpint(g_mkdir_with_parents(s->dir, 0755), ==, 0);
        g_autofree char *path = g_build_filename(s->dir, s->name, NULL);
        g_autofree char *bytes = NULL;
        gsize len = 0;
        gboolean ok = real[i].zipped ? reader_fixture_unzip(source, path)
                                     : g_file_get_contents(source, &bytes, &len, NULL) &&
                                           g_file_set_contents(path, bytes, (gssize)len, NULL);
        if (ok)
            g_ptr_array_add(seeds, s);
        else
            fuzz_seed_free(s);
    }
}

/* Compressed DICOM as archives send it (Debian's python3-pydicom test images), when present:
 * the codecs' decoders get mutated streams too. */
static void add_pydicom(GPtrArray *seeds, const char *dir)
{
    static const char *const names[] = {"MR_small_jpeg_ls_lossless.dcm", "MR_small_RLE.dcm",
                                        "SC_rgb_jpeg_dcmtk.dcm", "MR_small_jp2klossless.dcm",
                                        "JPEG2000.dcm", "MR_small_bigendian.dcm"};
    const char *base = "/usr/lib/python3/dist-packages/pydicom/data/test_files";
    for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *source = g_build_filename(base, names[i], NULL);
        g_autofree char *bytes = NULL;
        gsize len = 0;
        if (!g_file_get_contents(source, &bytes, &len, NULL))
            continue;
        fuzz_seed *s = g_new0(fuzz_seed, 1);
        s->label = g_strdup_printf("pydicom-%s", names[i]);
        s->dir = g_build_filename(dir, s->label, NULL);
        s->name = g_strdup(names[i]);
        g_assert_cmpint(g_mkdir_with_parents(s->dir, 0755), ==, 0);
        g_autofree char *path = g_build_filename(s->dir, s->name, NULL);
        g_assert_true(g_file_set_contents(path, bytes, (gssize)len, NULL));
        g_ptr_array_add(seeds, s);
    }
}

/* --- mutations --- */

typedef struct {
    GByteArray *bytes;
    GString *log; /* what was done, to reproduce a failure by hand */
} mutant;

static gsize pick(GRand *rand, gsize n)
{
    return n ? (gsize)g_rand_double_range(rand, 0, (double)n) % n : 0;
}

/* Positions mostly in the header, where the structure is: half the picks fall in the first
 * 1 KiB. */
static gsize pick_offset(GRand *rand, gsize len)
{
    if (g_rand_boolean(rand))
        return pick(rand, MIN(len, 1024));
    return pick(rand, len);
}

static void flip_bits(GRand *rand, mutant *m)
{
    int n = g_rand_int_range(rand, 1, 9);
    for (int i = 0; i < n && m->bytes->len; i++) {
        gsize at = pick_offset(rand, m->bytes->len);
        int bit = g_rand_int_range(rand, 0, 8);
        m->bytes->data[at] ^= (guint8)(1u << bit);
        g_string_append_printf(m->log, " flip@%" G_GSIZE_FORMAT ":%d", at, bit);
    }
}

static void set_bytes(GRand *rand, mutant *m)
{
    int n = g_rand_int_range(rand, 1, 9);
    for (int i = 0; i < n && m->bytes->len; i++) {
        gsize at = pick_offset(rand, m->bytes->len);
        int kind = g_rand_int_range(rand, 0, 3);
        guint8 v = kind == 0 ? 0 : kind == 1 ? 0xff : (guint8)g_rand_int_range(rand, 0, 256);
        m->bytes->data[at] = v;
        g_string_append_printf(m->log, " set@%" G_GSIZE_FORMAT "=%u", at, v);
    }
}

static void truncate_at(GRand *rand, mutant *m)
{
    gsize at = pick(rand, m->bytes->len);
    g_byte_array_set_size(m->bytes, (guint)at);
    g_string_append_printf(m->log, " truncate@%" G_GSIZE_FORMAT, at);
}

static void duplicate_chunk(GRand *rand, mutant *m)
{
    if (m->bytes->len < 2)
        return;
    gsize from = pick_offset(rand, m->bytes->len);
    gsize n = 1 + pick(rand, MIN(m->bytes->len - from, 4096));
    gsize to = pick_offset(rand, m->bytes->len);
    g_autofree guint8 *chunk = g_memdup2(m->bytes->data + from, n);
    GByteArray *out = g_byte_array_sized_new(m->bytes->len + (guint)n);
    g_byte_array_append(out, m->bytes->data, (guint)to);
    g_byte_array_append(out, chunk, (guint)n);
    g_byte_array_append(out, m->bytes->data + to, m->bytes->len - (guint)to);
    g_byte_array_unref(m->bytes);
    m->bytes = out;
    g_string_append_printf(m->log, " dup[%" G_GSIZE_FORMAT "+%" G_GSIZE_FORMAT "]@%" G_GSIZE_FORMAT,
                           from, n, to);
}

static void delete_chunk(GRand *rand, mutant *m)
{
    if (m->bytes->len < 2)
        return;
    gsize from = pick_offset(rand, m->bytes->len);
    gsize n = 1 + pick(rand, MIN(m->bytes->len - from, 4096));
    g_byte_array_remove_range(m->bytes, (guint)from, (guint)n);
    g_string_append_printf(m->log, " del[%" G_GSIZE_FORMAT "+%" G_GSIZE_FORMAT "]", from, n);
}

/* A 2-, 4- or 8-byte field in either byte order set to a huge, negative or boundary value: the
 * sizes, counts and offsets of every header. */
static void huge_field(GRand *rand, mutant *m)
{
    static const guint64 values[] = {0xffffffffffffffffull,
                                     0x7fffffffffffffffull,
                                     0x80000000ull,
                                     0x7fffffffull,
                                     0xffffffffull,
                                     0xffffull,
                                     0x7fffull,
                                     0x8000ull,
                                     0x40000000ull,
                                     0x10000ull,
                                     0,
                                     1};
    static const int widths[] = {2, 4, 4, 4, 8};
    int width = widths[g_rand_int_range(rand, 0, G_N_ELEMENTS(widths))];
    if (m->bytes->len < (guint)width)
        return;
    gsize at = pick(rand, MIN(m->bytes->len, 1024) - width + 1);
    if (g_rand_boolean(rand))
        at &= ~(gsize)(width - 1); /* aligned, as most fields are */
    guint64 v = values[g_rand_int_range(rand, 0, G_N_ELEMENTS(values))];
    gboolean big = g_rand_int_range(rand, 0, 4) == 0;
    for (int i = 0; i < width; i++)
        m->bytes->data[at + i] = (guint8)(v >> (8 * (big ? width - 1 - i : i)));
    g_string_append_printf(m->log, " field%d%s@%" G_GSIZE_FORMAT "=0x%" G_GINT64_MODIFIER "x",
                           width * 8, big ? "be" : "le", at, v);
}

static void mutate(GRand *rand, mutant *m)
{
    typedef void (*mutation)(GRand *, mutant *);
    static const mutation all[] = {flip_bits,    set_bytes,  truncate_at, duplicate_chunk,
                                   delete_chunk, huge_field, huge_field,  set_bytes};
    int n = g_rand_int_range(rand, 1, 4);
    for (int i = 0; i < n; i++)
        all[g_rand_int_range(rand, 0, G_N_ELEMENTS(all))](rand, m);
}

/* --- running the cases, several at a time --- */

/* The seed's folder in the case's: hard links (the mutated file is then replaced, not written
 * through the link), copies where links are refused. */
static void link_dir(const char *from, const char *to)
{
    g_assert_cmpint(g_mkdir_with_parents(to, 0755), ==, 0);
    g_autoptr(GDir) dir = g_dir_open(from, 0, NULL);
    g_assert_nonnull(dir);
    for (const char *name; (name = g_dir_read_name(dir));) {
        g_autofree char *a = g_build_filename(from, name, NULL);
        g_autofree char *b = g_build_filename(to, name, NULL);
        if (link(a, b) == 0)
            continue;
        g_autofree char *bytes = NULL;
        gsize len = 0;
        g_assert_true(g_file_get_contents(a, &bytes, &len, NULL));
        g_assert_true(g_file_set_contents(b, bytes, (gssize)len, NULL));
    }
}

typedef enum { CASE_OK, CASE_CRASH, CASE_HANG, CASE_BAD_EXIT, CASE_SILENT } case_outcome;

static const char *const outcome_names[] = {"ok", "crash (signal)", "hang", "bad exit code",
                                            "failed without a message"};

typedef struct {
    guint64 seed, first, end;
    double timeout_s;
    const char *keep; /* FLUXMAP_FUZZ_KEEP, or NULL */
    int failures, exits[5];
    double slowest;
} fuzz_run;

/* One mutant being read: its folder, what was done to it, the process reading it. */
typedef struct {
    guint64 c;
    const fuzz_seed *seed;
    char *case_dir, *err_path;
    const char *target;
    mutant m;
    GPid pid; /* 0: the slot is free */
    gint64 start_us;
} fuzz_case;

/* Makes case c's mutant and starts `fluxmap-cli info --json FILE [layout]` on it, stdout
 * discarded, stderr kept for the report. */
static void case_start(fuzz_case *fc, const fuzz_run *run, guint64 c, const fuzz_seed *s)
{
    fc->c = c;
    fc->seed = s;
    /* each case has its own generator, so FLUXMAP_FUZZ_CASE replays it alone */
    g_autoptr(GRand) rand = g_rand_new_with_seed_array(
        (const guint32[]){(guint32)run->seed, (guint32)(run->seed >> 32), (guint32)c}, 3);
    fc->case_dir = g_strdup_printf("%s/case%" G_GUINT64_FORMAT, tmp_dir, c);
    fc->err_path = g_strdup_printf("%s.stderr", fc->case_dir);
    link_dir(s->dir, fc->case_dir);
    /* one mutant in eight hits the sidecar that describes the file, where there is one */
    fc->target = s->sidecar && g_rand_int_range(rand, 0, 8) == 0 ? s->sidecar : s->name;
    g_autofree char *target_path = g_build_filename(fc->case_dir, fc->target, NULL);
    g_autofree char *file = g_build_filename(fc->case_dir, s->name, NULL);
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(target_path, &bytes, &len, NULL));
    fc->m = (mutant){g_byte_array_new(), g_string_new(NULL)};
    g_byte_array_append(fc->m.bytes, (const guint8 *)bytes, (guint)len);
    mutate(rand, &fc->m);
    g_assert_cmpint(g_unlink(target_path), ==, 0); /* a link to the seed: never write through */
    g_assert_true(
        g_file_set_contents(target_path, (const char *)fc->m.bytes->data, fc->m.bytes->len, NULL));

    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)cli_path);
    g_ptr_array_add(argv, "info");
    g_ptr_array_add(argv, "--json");
    g_ptr_array_add(argv, file);
    for (int i = 0; s->layout && s->layout[i]; i++)
        g_ptr_array_add(argv, s->layout[i]);
    g_ptr_array_add(argv, NULL);
    int out_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    int err_fd = open(fc->err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    g_assert_cmpint(out_fd, >=, 0);
    g_assert_cmpint(err_fd, >=, 0);
    g_autoptr(GError) error = NULL;
    fc->start_us = g_get_monotonic_time();
    gboolean ok =
        g_spawn_async_with_fds(NULL, (char **)argv->pdata, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL,
                               NULL, &fc->pid, -1, out_fd, err_fd, &error);
    close(out_fd);
    close(err_fd);
    g_assert_no_error(error);
    g_assert_true(ok);
}

static case_outcome judge(const fuzz_case *fc, int status)
{
    if (!WIFEXITED(status))
        return CASE_CRASH;
    int code = WEXITSTATUS(status);
    if (code != 0 && code != 2 && code != 3 && code != 4)
        return CASE_BAD_EXIT;
    GStatBuf st;
    if (code != 0 && (g_stat(fc->err_path, &st) != 0 || st.st_size == 0))
        return CASE_SILENT;
    return CASE_OK;
}

/* TRUE when the case's process ended (or was killed for running past the limit) and the case
 * was judged, reported and cleaned up; its slot is then free. */
static gboolean case_poll(fuzz_case *fc, fuzz_run *run)
{
    int status = 0;
    pid_t done = waitpid(fc->pid, &status, WNOHANG);
    g_assert_cmpint(done, >=, 0);
    double seconds = (double)(g_get_monotonic_time() - fc->start_us) / G_USEC_PER_SEC;
    case_outcome outcome;
    if (done == fc->pid) {
        outcome = judge(fc, status);
    } else if (seconds > run->timeout_s) {
        kill(fc->pid, SIGKILL);
        waitpid(fc->pid, &status, 0);
        outcome = CASE_HANG;
    } else {
        return FALSE;
    }
    g_spawn_close_pid(fc->pid);
    run->slowest = MAX(run->slowest, seconds);
    if (outcome != CASE_HANG && WIFEXITED(status) && WEXITSTATUS(status) <= 4)
        run->exits[WEXITSTATUS(status)]++;
    if (outcome != CASE_OK) {
        run->failures++;
        g_autofree char *err = NULL;
        g_file_get_contents(fc->err_path, &err, NULL, NULL);
        g_printerr("fuzz case %" G_GUINT64_FORMAT " (seed %" G_GUINT64_FORMAT
                   ", %s, %s):%s: %s (wait status 0x%x, %.2f s)\n%s\n",
                   fc->c, run->seed, fc->seed->label, fc->target, fc->m.log->str,
                   outcome_names[outcome], status, seconds, err ? err : "");
        if (run->keep) {
            g_autofree char *kept = g_strdup_printf("%s/case%" G_GUINT64_FORMAT "-%s-%s", run->keep,
                                                    fc->c, fc->seed->label, fc->target);
            g_mkdir_with_parents(run->keep, 0755);
            g_file_set_contents(kept, (const char *)fc->m.bytes->data, fc->m.bytes->len, NULL);
        }
    }
    g_byte_array_unref(fc->m.bytes);
    g_string_free(fc->m.log, TRUE);
    fm_test_remove_tree(fc->case_dir);
    g_unlink(fc->err_path);
    g_free(fc->case_dir);
    g_free(fc->err_path);
    *fc = (fuzz_case){0};
    return TRUE;
}

static void test_fuzz(void)
{
    fuzz_run run = {
        .seed = env_number("FLUXMAP_FUZZ_SEED", DEFAULT_SEED),
        .end = env_number("FLUXMAP_FUZZ_COUNT", DEFAULT_COUNT),
        .timeout_s = (double)env_number("FLUXMAP_FUZZ_TIMEOUT_S", DEFAULT_TIMEOUT_S),
        .keep = g_getenv("FLUXMAP_FUZZ_KEEP"),
    };
    const char *only = g_getenv("FLUXMAP_FUZZ_CASE");
    if (only && *only) {
        run.first = env_number("FLUXMAP_FUZZ_CASE", 0);
        run.end = run.first + 1;
    }
    /* one process per core: the readers are mostly single-threaded on files this small */
    int jobs = (int)CLAMP(env_number("FLUXMAP_FUZZ_JOBS", (guint64)g_get_num_processors()), 1, 64);
    g_autofree char *seed_dir = cli_test_tmp_path("seeds");
    g_autoptr(GPtrArray) fixtures = reader_fixtures_write(seed_dir);
    g_autoptr(GPtrArray) seeds = g_ptr_array_new_with_free_func((GDestroyNotify)fuzz_seed_free);
    for (guint i = 0; i < fixtures->len; i++)
        g_ptr_array_add(seeds, seed_from_fixture(fixtures->pdata[i]));
    add_refdata(seeds, seed_dir);
    add_pydicom(seeds, seed_dir);
    g_test_message("fuzz: seed %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " mutants over %u seed "
                   "files, %.0f s per mutant, %d at a time",
                   run.seed, run.end - run.first, seeds->len, run.timeout_s, jobs);

    g_autofree fuzz_case *slots = g_new0(fuzz_case, jobs);
    guint64 next = run.first;
    int running = 0;
    while (next < run.end || running > 0) {
        for (int j = 0; j < jobs && next < run.end; j++)
            if (slots[j].pid == 0) {
                case_start(&slots[j], &run, next, seeds->pdata[next % seeds->len]);
                next++;
                running++;
            }
        gboolean any = FALSE;
        for (int j = 0; j < jobs; j++)
            if (slots[j].pid != 0 && case_poll(&slots[j], &run)) {
                running--;
                any = TRUE;
            }
        if (!any)
            g_usleep(1000);
    }
    g_test_message("fuzz: exit 0: %d, 2: %d, 3: %d, 4: %d; slowest mutant %.2f s; %d failures",
                   run.exits[0], run.exits[2], run.exits[3], run.exits[4], run.slowest,
                   run.failures);
    g_assert_cmpint(run.failures, ==, 0);
    /* the mutants must reach the readers' error paths, not only be refused or all accepted */
    if (run.end - run.first >= 50) {
        g_assert_cmpint(run.exits[0], >, 0);
        g_assert_cmpint(run.exits[3], >, 0);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!cli_test_init("fluxmap-fuzz-XXXXXX")) {
        g_print("1..0 # SKIP FLUXMAP_CLI not set\n");
        return 0;
    }
    g_test_add_func("/fuzz/readers", test_fuzz);
    return cli_test_finish(g_test_run());
}
