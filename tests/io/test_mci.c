/* MCML files: .mci parsing against MCML's own sample, write/read round trip, presets matching
 * data/mcml, line-numbered errors for bad input (also as CLI exit 3), and .mco output compared
 * byte for byte with MCML's sample.mco rebuilt from its own numbers. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "app/core/error.h"
#include "app/core/io/mci.h"
#include "app/core/io/mco.h"

static char *data_path(const char *name)
{
    return g_build_filename(MCML_TEST_DATA, name, NULL);
}

static void test_sample(void)
{
    g_autofree char *path = data_path("sample.mci");
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_mci_file) f = fm_mci_read(path, &error);
    g_assert_no_error(error);
    g_assert_cmpint(f->n_runs, ==, 2);
    const fm_mcml_params *p = &f->runs[0].params;
    g_assert_cmpstr(f->runs[0].output_name, ==, "sample.mco");
    g_assert_cmpint(f->runs[0].line, ==, 16);
    g_assert_cmpint(p->n_photons, ==, 1000000);
    g_assert_cmpfloat(p->dz_cm, ==, 0.01);
    g_assert_cmpint(p->nz, ==, 40);
    g_assert_cmpint(p->nr, ==, 50);
    g_assert_cmpint(p->na, ==, 1);
    g_assert_cmpint(p->n_layers, ==, 3);
    g_assert_cmpfloat(p->n_above, ==, 1.0);
    g_assert_cmpfloat(p->layers[0].mus_per_cm, ==, 100.0);
    g_assert_cmpfloat(p->layers[2].mua_per_cm, ==, 2.0);
    g_assert_cmpfloat(p->layers[2].thickness_cm, ==, 0.2);
    g_assert_cmpfloat(f->runs[1].params.layers[2].mus_per_cm, ==, 100.0);
}

static void assert_same_params(const fm_mcml_params *a, const fm_mcml_params *b)
{
    g_assert_cmpint(a->n_photons, ==, b->n_photons);
    g_assert_cmpfloat(a->dz_cm, ==, b->dz_cm);
    g_assert_cmpfloat(a->dr_cm, ==, b->dr_cm);
    g_assert_cmpint(a->nz, ==, b->nz);
    g_assert_cmpint(a->nr, ==, b->nr);
    g_assert_cmpint(a->na, ==, b->na);
    g_assert_cmpint(a->n_layers, ==, b->n_layers);
    g_assert_cmpfloat(a->n_above, ==, b->n_above);
    g_assert_cmpfloat(a->n_below, ==, b->n_below);
    for (int k = 0; k < a->n_layers; k++) {
        g_assert_cmpfloat(a->layers[k].n, ==, b->layers[k].n);
        g_assert_cmpfloat(a->layers[k].mua_per_cm, ==, b->layers[k].mua_per_cm);
        g_assert_cmpfloat(a->layers[k].mus_per_cm, ==, b->layers[k].mus_per_cm);
        g_assert_cmpfloat(a->layers[k].g, ==, b->layers[k].g);
        g_assert_cmpfloat(a->layers[k].thickness_cm, ==, b->layers[k].thickness_cm);
    }
}

/* Every preset written and read back gives the same numbers (the values are short decimals,
 * which %G reproduces exactly). */
static void test_round_trip(void)
{
    g_autofree char *dir = g_dir_make_tmp("fm-mci-XXXXXX", NULL);
    for (const char *const *name = fm_mci_preset_names(); *name; name++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_mci_file) a = fm_mci_preset(*name, &error);
        g_assert_no_error(error);
        g_autofree char *file = g_strconcat(*name, ".mci", NULL);
        g_autofree char *path = g_build_filename(dir, file, NULL);
        g_assert_true(fm_mci_write(path, a, &error));
        g_autoptr(fm_mci_file) b = fm_mci_read(path, &error);
        g_assert_no_error(error);
        g_assert_cmpint(a->n_runs, ==, b->n_runs);
        for (int i = 0; i < a->n_runs; i++) {
            g_assert_cmpstr(a->runs[i].output_name, ==, b->runs[i].output_name);
            assert_same_params(&a->runs[i].params, &b->runs[i].params);
        }
        g_unlink(path);
    }
    g_rmdir(dir);
}

/* The built-in presets are the installed data files, byte for byte. */
static void test_presets_match_data(void)
{
    for (const char *const *name = fm_mci_preset_names(); *name; name++) {
        g_autofree char *file = g_strconcat(*name, ".mci", NULL);
        g_autofree char *path = g_build_filename(MCML_PRESET_DIR, file, NULL);
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        g_assert_cmpstr(text, ==, fm_mci_preset_text(*name));
    }
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_mci_file) skin = fm_mci_preset("skin7_600nm", &error);
    g_assert_no_error(error);
    g_assert_cmpint(skin->runs[0].params.n_layers, ==, 7);
    g_assert_cmpint(skin->runs[0].params.nz, ==, 500);
    g_assert_null(fm_mci_preset("nope", &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
}

/* A valid one-run file; each bad case replaces one line. */
static const char *const good_lines[] = {
    "1.0 # version",    "1",   "out.mco A",  "1000", "0.01 0.01",
    "10 10 5",          "",    "2 # layers", "1.0",  "1.4 1 100 0.9 0.1",
    "1.4 2 50 0.5 0.2", "1.0", NULL,
};

static char *with_line(int index, const char *replacement)
{
    GString *s = g_string_new(NULL);
    for (int i = 0; good_lines[i]; i++) {
        if (i == index && replacement == NULL)
            continue;
        g_string_append(s, i == index ? replacement : good_lines[i]);
        g_string_append_c(s, '\n');
    }
    return g_string_free(s, FALSE);
}

typedef struct {
    int index;               /* line index into good_lines (0-based) */
    const char *replacement; /* NULL removes the line */
    const char *expect;      /* "bad.mci:LINE: ...substring" */
} bad_case;

static const bad_case bad_cases[] = {
    {3, "0", "bad.mci:4: number of photons = 0 is outside"},
    {3, "-5", "bad.mci:4: number of photons = -5 is outside"},
    {9, "1.4 1 100 0.9 -0.1", "bad.mci:10: layer 1: thickness d = -0.1 cm must be positive"},
    {10, "1.4 2 50 1.2 0.2", "bad.mci:11: layer 2: g = 1.2 is outside (-1, 1)"},
    {10, "1.4 2 50 -1 0.2", "bad.mci:11: layer 2: g = -1 is outside (-1, 1)"},
    {9, "0.9 1 100 0.9 0.1", "bad.mci:10: layer 1: refractive index 0.9 is below 1"},
    {8, "0.5", "bad.mci:9: medium above: refractive index 0.5 is below 1"},
    {9, "1.4 1 100 0.9", "bad.mci:10: missing field: expected layer 1 (n mua mus g d)"},
    {4, "0.01", "bad.mci:5: missing field: expected dz dr [cm]"},
    {9, "1.4 x 100 0.9 0.1", "bad.mci:10: layer 1: 'x' is not a number"},
    {0, "2.0", "bad.mci:1: file version '2.0' is not supported"},
    {2, "out.mco B", "bad.mci:3: output format 'B' is not supported"},
    {5, "10 0 5", "bad.mci:6: nr = 0 is outside"},
    {11, NULL, "bad.mci:12: unexpected end of file, expected n for medium below"},
    /* a byte that is not UTF-8 (a corrupted file): an error, not a crash in the splitter */
    {3, "1000\xf6", "bad.mci:4: number of photons: '1000\xf6' is not a whole number"},
};

static void test_bad_input(void)
{
    for (gsize i = 0; i < G_N_ELEMENTS(bad_cases); i++) {
        g_autofree char *text = with_line(bad_cases[i].index, bad_cases[i].replacement);
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_mci_file) f = fm_mci_parse(text, "bad.mci", &error);
        g_assert_null(f);
        g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
        if (!g_str_has_prefix(error->message, bad_cases[i].expect))
            g_error("case %zu: '%s' does not start with '%s'", i, error->message,
                    bad_cases[i].expect);
    }
    g_autofree char *good = with_line(-1, NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_mci_file) f = fm_mci_parse(good, "good.mci", &error);
    g_assert_no_error(error);
}

/* Bad .mci through the real CLI: exit 3 and the line number on stderr. */
static void test_cli_exit_code(void)
{
    const char *cli = g_getenv("FLUXMAP_CLI");
    if (cli == NULL) {
        g_test_skip("FLUXMAP_CLI not set");
        return;
    }
    g_autofree char *dir = g_dir_make_tmp("fm-mci-XXXXXX", NULL);
    g_autofree char *mci = g_build_filename(dir, "bad.mci", NULL);
    g_autofree char *mco = g_build_filename(dir, "bad.mco", NULL);
    g_autofree char *text = with_line(10, "1.4 2 50 1.2 0.2");
    g_assert_true(g_file_set_contents(mci, text, -1, NULL));
    const char *argv[] = {cli, "mcml", "run", mci, "-o", mco, NULL};
    g_autofree char *out = NULL, *err = NULL;
    int status = 0;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                               &status, NULL));
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 3);
    g_assert_nonnull(strstr(err, "bad.mci:11: layer 2: g = 1.2"));
    g_assert_false(g_file_test(mco, G_FILE_TEST_EXISTS));
    g_unlink(mci);
    g_rmdir(dir);
}

/* Numbers of each section of an .mco, by section name (InParm and the header excluded). */
static GHashTable *mco_sections(const char *text)
{
    GHashTable *sections =
        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_array_unref);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    GArray *current = NULL;
    for (int i = 0; lines[i]; i++) {
        char *line = g_strstrip(lines[i]);
        if (*line == '\0') {
            current = NULL;
            continue;
        }
        if (*line == '#')
            continue;
        char *end = NULL;
        double v = g_ascii_strtod(line, &end);
        if (end == line) {
            g_autofree char *name = g_strndup(line, strcspn(line, " \t#"));
            current = g_array_new(FALSE, FALSE, sizeof(double));
            g_hash_table_replace(sections, g_steal_pointer(&name), current);
            continue;
        }
        for (char *p = line; current && *p;) {
            v = g_ascii_strtod(p, &end);
            if (end == p)
                break;
            g_array_append_val(current, v);
            p = end;
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p == '#')
                break;
        }
    }
    return sections;
}

static double *section(GHashTable *sections, const char *name, guint n)
{
    GArray *a = g_hash_table_lookup(sections, name);
    g_assert_nonnull(a);
    g_assert_cmpuint(a->len, ==, n);
    return (double *)a->data;
}

/* MCML's sample.mco, re-written from its own numbers and the sample.mci input, must come out
 * identical: same section names, order, comments, units and number formats. */
static void test_mco_layout(void)
{
    g_autofree char *mco_path = data_path("sample.mco");
    g_autofree char *mci_path = data_path("sample.mci");
    g_autofree char *reference = NULL;
    g_assert_true(g_file_get_contents(mco_path, &reference, NULL, NULL));
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_mci_file) input = fm_mci_read(mci_path, &error);
    g_assert_no_error(error);
    const fm_mcml_params *p = &input->runs[0].params;
    g_autoptr(GHashTable) s = mco_sections(reference);
    double *rat = section(s, "RAT", 4);
    fm_mcml_result r = {
        .rsp = rat[0],
        .rd = rat[1],
        .a = rat[2],
        .tt = rat[3],
        .a_layer = section(s, "A_l", p->n_layers),
        .a_z = section(s, "A_z", p->nz),
        .rd_r = section(s, "Rd_r", p->nr),
        .rd_a = section(s, "Rd_a", p->na),
        .tt_r = section(s, "Tt_r", p->nr),
        .tt_a = section(s, "Tt_a", p->na),
        .a_rz = section(s, "A_rz", p->nr * p->nz),
        .rd_ra = section(s, "Rd_ra", p->nr * p->na),
        .tt_ra = section(s, "Tt_ra", p->nr * p->na),
    };
    g_autofree char *ours = fm_mco_to_string(&input->runs[0], &r, 1488.13);
    if (strcmp(ours, reference) != 0) {
        g_auto(GStrv) a = g_strsplit(ours, "\n", -1), b = g_strsplit(reference, "\n", -1);
        for (int i = 0; a[i] && b[i]; i++)
            if (strcmp(a[i], b[i]) != 0)
                g_error("line %d differs:\n ours '%s'\n mcml '%s'", i + 1, a[i], b[i]);
        g_error("lengths differ: %zu vs %zu bytes", strlen(ours), strlen(reference));
    }

    fm_mco_totals t;
    g_assert_true(fm_mco_read_totals(mco_path, &t, &error));
    g_assert_no_error(error);
    g_assert_cmpint(t.n_photons, ==, 1000000);
    g_assert_cmpint(t.nz, ==, 40);
    g_assert_cmpint(t.nr, ==, 50);
    g_assert_cmpint(t.na, ==, 1);
    g_assert_cmpint(t.n_layers, ==, 3);
    g_assert_cmpfloat(t.rsp, ==, 0.0243729);
    g_assert_cmpfloat(t.rd, ==, 0.237544);
    g_assert_cmpfloat(t.a, ==, 0.641594);
    g_assert_cmpfloat(t.tt, ==, 0.0964896);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/mci/sample", test_sample);
    g_test_add_func("/mci/round-trip", test_round_trip);
    g_test_add_func("/mci/presets-match-data", test_presets_match_data);
    g_test_add_func("/mci/bad-input", test_bad_input);
    g_test_add_func("/mci/cli-exit-code", test_cli_exit_code);
    g_test_add_func("/mco/layout", test_mco_layout);
    return g_test_run();
}
