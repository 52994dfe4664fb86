/* Time you can trust: DICOM series whose time tags are malformed, missing or repeated in some
 * files are read with the times of another tag or of the uniform spacing of the consistent
 * frames, equal to the truth, and `info`, the metadata and dce.dual_input's note say which. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/dicom.h"
#include "app/core/io/dicom_times.h"
#include "app/core/io/open.h"
#include "app/core/method.h"
#include "app/core/params.h"
#include "app/core/result.h"
#include "tests/test-tree.h"

/* ---- strict parsing ---- */

static void test_parse(void)
{
    double s = 0;
    g_assert_cmpint(fm_dicom_parse_tm("103015.5", &s), ==, FM_DICOM_TIME_OK);
    g_assert_cmpfloat(s, ==, 10 * 3600 + 30 * 60 + 15.5);
    g_assert_cmpint(fm_dicom_parse_tm(" 10:30:15.25 ", &s), ==, FM_DICOM_TIME_OK);
    g_assert_cmpfloat(s, ==, 10 * 3600 + 30 * 60 + 15.25);
    g_assert_cmpint(fm_dicom_parse_tm("1030", &s), ==, FM_DICOM_TIME_OK);
    g_assert_cmpfloat(s, ==, 10 * 3600 + 30 * 60);
    /* What the lenient parser read silently wrong: a letter O for a zero, a minute of 75,
     * an odd digit count, seven fraction digits, a fraction without seconds, garbage. */
    const char *bad[] = {"1O3015", "107515", "10301", "103015.1234567", "1030.5", "abc", "2500"};
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++)
        g_assert_cmpint(fm_dicom_parse_tm(bad[i], &s), ==, FM_DICOM_TIME_MALFORMED);
    g_assert_cmpint(fm_dicom_parse_tm("  ", &s), ==, FM_DICOM_TIME_MISSING);
    g_assert_cmpint(fm_dicom_parse_tm(NULL, &s), ==, FM_DICOM_TIME_MISSING);

    double d1 = 0, d2 = 0;
    g_assert_cmpint(fm_dicom_parse_da("20261123", &d1), ==, FM_DICOM_TIME_OK);
    g_assert_cmpint(fm_dicom_parse_da("2026.11.24", &d2), ==, FM_DICOM_TIME_OK);
    g_assert_cmpfloat(d2 - d1, ==, 86400.0);
    g_assert_cmpint(fm_dicom_parse_da("20261332", &d1), ==, FM_DICOM_TIME_MALFORMED);
    /* Across midnight the date keeps the order. */
    g_assert_cmpint(fm_dicom_parse_date_time("20261123", "235959", &d1), ==, FM_DICOM_TIME_OK);
    g_assert_cmpint(fm_dicom_parse_date_time("20261124", "000001", &d2), ==, FM_DICOM_TIME_OK);
    g_assert_cmpfloat(d2 - d1, ==, 2.0);
    g_assert_cmpint(fm_dicom_parse_date_time("2026112", "000001", &d2), ==,
                    FM_DICOM_TIME_MALFORMED);
    g_assert_cmpint(fm_dicom_parse_date_time("20261123", "", &d2), ==, FM_DICOM_TIME_MISSING);

    g_assert_cmpint(fm_dicom_parse_dt("20261123103015.5+0100", &d1), ==, FM_DICOM_TIME_OK);
    g_assert_cmpint(fm_dicom_parse_date_time("20261123", "103015.5", &d2), ==, FM_DICOM_TIME_OK);
    g_assert_cmpfloat(d1, ==, d2);
    g_assert_cmpint(fm_dicom_parse_dt("20261123", &d1), ==, FM_DICOM_TIME_MALFORMED);
    g_assert_cmpint(fm_dicom_parse_dt("2026112310x015", &d1), ==, FM_DICOM_TIME_MALFORMED);

    g_assert_cmpint(fm_dicom_parse_ds(" 1250.5 ", &s), ==, FM_DICOM_TIME_OK);
    g_assert_cmpfloat(s, ==, 1250.5);
    g_assert_cmpint(fm_dicom_parse_ds("12x", &s), ==, FM_DICOM_TIME_MALFORMED);
    g_assert_cmpint(fm_dicom_parse_ds("", &s), ==, FM_DICOM_TIME_MISSING);
}

/* ---- series written through DCMTK with spoiled time tags ---- */

enum { NZ = 2, NT = 8 };

/* The truth: a faster baseline then slower frames (non-uniform), or a uniform 2.5 s. */
static const double varied_times[NT] = {0, 2.5, 5, 7.5, 12, 16.5, 21, 25.5};
static const double uniform_times[NT] = {0, 2.5, 5, 7.5, 10, 12.5, 15, 17.5};

typedef enum {
    SPOIL_MALFORMED_WITH_TRIGGER,  /* AcquisitionTime "1O..." in 3 files; TriggerTime in all */
    SPOIL_MALFORMED_UNIFORM,       /* AcquisitionTime malformed in 2 files; only the index */
    SPOIL_MISSING_WITH_RESOLUTION, /* AcquisitionTime missing in 2 files; TemporalResolution */
    SPOIL_MISSING_NO_INDEX,        /* AcquisitionTime missing, nothing else: an error */
    SPOIL_REPEATED_UNIFORM,        /* frame 4 repeats frame 3's time in every slice; the index */
    SPOIL_REPEATED_WITH_CONTENT,   /* the same, ContentTime right */
    SPOIL_MALFORMED_VARIED,        /* non-uniform times, one malformed, the index: an error */
} spoil_kind;

typedef struct {
    spoil_kind kind;
    const double *truth;
} spoil;

static void spoil_times(int z, int t, fm_dicom_test_times *v, gpointer user)
{
    const spoil *sp = user;
    const int file = t * NZ + z; /* each (z, t) is one file */
    switch (sp->kind) {
    case SPOIL_MALFORMED_WITH_TRIGGER:
        g_snprintf(v->trigger_time, sizeof v->trigger_time, "%.3f", sp->truth[t] * 1e3);
        if (file == 3 || file == 8 || file == 13)
            v->acquisition_time[2] = 'O'; /* "10O0..." as a damaged export writes it */
        break;
    case SPOIL_MALFORMED_UNIFORM:
    case SPOIL_MALFORMED_VARIED:
        if (file == 5 || (sp->kind == SPOIL_MALFORMED_UNIFORM && file == 10))
            g_strlcpy(v->acquisition_time, "10:00:7.5", sizeof v->acquisition_time);
        break;
    case SPOIL_MISSING_WITH_RESOLUTION:
        g_strlcpy(v->temporal_resolution, "2500", sizeof v->temporal_resolution);
        /* fall through */
    case SPOIL_MISSING_NO_INDEX:
        if (file == 6 || file == 11)
            v->acquisition_time[0] = '\0';
        break;
    case SPOIL_REPEATED_WITH_CONTENT:
    case SPOIL_REPEATED_UNIFORM:
        if (t == 4) {
            int hh = 10, mm = 0;
            double ss = sp->truth[3];
            g_snprintf(v->acquisition_time, sizeof v->acquisition_time, "%02d%02d%09.6f", hh, mm,
                       ss);
        }
        break;
    }
}

static fm_dataset *read_spoiled(spoil_kind kind, const double *truth, char **dir_out,
                                GError **error)
{
    spoil sp = {kind, truth};
    gboolean with_index = kind != SPOIL_MISSING_NO_INDEX && kind != SPOIL_MALFORMED_WITH_TRIGGER &&
                          kind != SPOIL_REPEATED_WITH_CONTENT;
    fm_dicom_test_series spec = {.nx = 4,
                                 .ny = 3,
                                 .nz = NZ,
                                 .nt = NT,
                                 .frame_times_s = truth,
                                 .slope = 1,
                                 .shuffle_seed = 5 + kind,
                                 .temporal_index = with_index,
                                 .time_tag = kind == SPOIL_REPEATED_WITH_CONTENT
                                                 ? FM_DICOM_TEST_TIME_ACQUISITION_AND_CONTENT
                                                 : FM_DICOM_TEST_TIME_ACQUISITION_TIME,
                                 .edit_times = spoil_times,
                                 .edit_times_user = &sp};
    char *dir = g_dir_make_tmp("fm-dicom-times-XXXXXX", NULL);
    g_assert_true(fm_dicom_write_test_series(dir, &spec, NULL));
    *dir_out = dir;
    return fm_dataset_open(dir, NULL, NULL, NULL, error);
}

static void assert_truth(const fm_dataset *ds, const double *truth)
{
    double *got = NULL;
    int n = 0;
    g_assert_true(fm_dataset_get_frame_times(ds, &got, &n));
    g_assert_cmpint(n, ==, NT);
    for (int t = 0; t < NT; t++) /* TM and DS carry microseconds */
        g_assert_cmpfloat_with_epsilon(got[t], truth[t], 1e-5);
    /* The pixels follow the times: frame t holds what the writer put at t. */
    const float *v = ds->data;
    for (int t = 0; t < NT; t++)
        for (int z = 0; z < NZ; z++)
            g_assert_cmpfloat(v[((gsize)t * NZ + z) * 12 + 5], ==,
                              fm_dicom_test_stored_value(1, 1, z, t));
    g_free(got);
}

static void assert_said(const fm_dataset *ds, const char *source, const char *note)
{
    g_test_message("%s | %s", fm_dataset_get_meta(ds, FM_META_FRAME_TIMES_SOURCE),
                   fm_dataset_get_meta(ds, FM_META_FRAME_TIMES_NOTE));
    g_assert_cmpstr(fm_dataset_get_meta(ds, FM_META_FRAME_TIMES_SOURCE), ==, source);
    g_assert_cmpstr(fm_dataset_get_meta(ds, "dicom_time_source"), ==, source);
    g_assert_cmpstr(fm_dataset_get_meta(ds, FM_META_FRAME_TIMES_NOTE), ==, note);
}

static gboolean need_dcmtk(void)
{
    if (fm_dicom_available())
        return TRUE;
    g_test_skip("built without DCMTK");
    return FALSE;
}

/* `fluxmap-cli info DIR` says the source and the note (skipped without FLUXMAP_CLI). */
static void assert_info_says(const char *dir, const char *source, const char *note)
{
    const char *cli = g_getenv("FLUXMAP_CLI");
    if (cli == NULL)
        return;
    const char *argv[] = {cli, "info", dir, NULL};
    g_autofree char *out = NULL;
    int status = 0;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                               &out, NULL, &status, NULL));
    g_assert_true(g_spawn_check_wait_status(status, NULL));
    g_autofree char *want_source = g_strdup_printf("frame times from: %s\n", source);
    g_assert_nonnull(strstr(out, want_source));
    if (note) {
        g_autofree char *want_note = g_strdup_printf("note: %s\n", note);
        g_assert_nonnull(strstr(out, want_note));
    } else {
        g_assert_null(strstr(out, "note: frame times"));
    }
}

typedef struct {
    spoil_kind kind;
    const double *truth;
    const char *source, *note;
} fallback_case;

static void check_fallback(gconstpointer data)
{
    const fallback_case *c = data;
    if (!need_dcmtk())
        return;
    g_autofree char *dir = NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = read_spoiled(c->kind, c->truth, &dir, &error);
    g_assert_no_error(error);
    assert_truth(ds, c->truth);
    assert_said(ds, c->source, c->note);
    assert_info_says(dir, c->source, c->note);
    fm_test_remove_tree(dir);
}

static const fallback_case cases[] = {
    {SPOIL_MALFORMED_WITH_TRIGGER, varied_times, "TriggerTime",
     "frame times from TriggerTime: AcquisitionTime malformed in 3 files"},
    {SPOIL_MALFORMED_UNIFORM, uniform_times, "uniform 2.5 s spacing of AcquisitionTime",
     "frame times from uniform 2.5 s spacing of AcquisitionTime: AcquisitionTime malformed in "
     "2 files"},
    {SPOIL_MISSING_WITH_RESOLUTION, uniform_times,
     "TemporalPositionIdentifier x TemporalResolution",
     "frame times from TemporalPositionIdentifier x TemporalResolution: AcquisitionTime missing "
     "in 2 files"},
    {SPOIL_REPEATED_UNIFORM, uniform_times, "uniform 2.5 s spacing of AcquisitionTime",
     "frame times from uniform 2.5 s spacing of AcquisitionTime: AcquisitionTime repeated or not "
     "increasing in 2 files"},
    {SPOIL_REPEATED_WITH_CONTENT, varied_times, "ContentTime",
     "frame times from ContentTime: AcquisitionTime repeated or not increasing in 2 files"},
};

/* No tag or rule times every frame: an error that names the tag, the problem and a file, never
 * times that are silently wrong. */
static void test_untrustworthy(void)
{
    if (!need_dcmtk())
        return;
    const struct {
        spoil_kind kind;
        const double *truth;
        const char *fragment;
    } errors[] = {
        {SPOIL_MISSING_NO_INDEX, uniform_times, "AcquisitionTime missing in 2 files (first: "},
        /* Non-uniform times are no grid: the index alone cannot place the malformed frame. */
        {SPOIL_MALFORMED_VARIED, varied_times, "AcquisitionTime malformed in 1 file (first: "},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(errors); i++) {
        g_autofree char *dir = NULL;
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_dataset) ds = read_spoiled(errors[i].kind, errors[i].truth, &dir, &error);
        g_assert_null(ds);
        g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
        g_test_message("%s", error->message);
        g_assert_nonnull(strstr(error->message, errors[i].fragment));
        fm_test_remove_tree(dir);
    }
}

/* A series whose preferred tag is sound says where its times came from, and no note. */
static void test_sound_series(void)
{
    if (!need_dcmtk())
        return;
    fm_dicom_test_series spec = {.nx = 4,
                                 .ny = 3,
                                 .nz = NZ,
                                 .nt = NT,
                                 .frame_times_s = varied_times,
                                 .slope = 1,
                                 .shuffle_seed = 3};
    g_autofree char *dir = g_dir_make_tmp("fm-dicom-times-XXXXXX", NULL);
    g_assert_true(fm_dicom_write_test_series(dir, &spec, NULL));
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_dataset_open(dir, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    assert_truth(ds, varied_times);
    assert_said(ds, "AcquisitionTime", NULL);
    assert_info_says(dir, "AcquisitionTime", NULL);
    fm_test_remove_tree(dir);
}

/* The run's note: dce.dual_input on a series read through a fallback says so. */
static void test_run_note(void)
{
    if (!need_dcmtk())
        return;
    g_autofree char *dir = NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds =
        read_spoiled(SPOIL_MALFORMED_WITH_TRIGGER, varied_times, &dir, &error);
    g_assert_no_error(error);
    g_autofree char *csv = g_build_filename(dir, "inputs.csv", NULL);
    GString *text = g_string_new("t_s,ca,cp\n");
    for (int t = 0; t < NT; t++) /* a bolus: the stored values rise with t, so voxels enhance */
        g_string_append_printf(text, "%g,%g,%g\n", varied_times[t], t ? 5.0 / t : 0.0, 1.0 * t);
    g_assert_true(g_file_set_contents(csv, text->str, -1, NULL));
    g_string_free(text, TRUE);
    const fm_method *m = fm_method_find("dce.dual_input");
    g_autoptr(fm_params) p = fm_method_default_params(m);
    g_assert_true(fm_params_set_from_string(p, "input_csv", csv, NULL));
    g_assert_true(fm_params_set_from_string(p, "conversion", "none", NULL));
    g_assert_true(fm_params_set_from_string(p, "fit_threshold", "0", NULL));
    g_assert_true(fm_params_set_from_string(p, "max_iterations", "20", NULL));
    g_autoptr(fm_result) r = fm_method_run(m, ds, p, NULL, NULL, &error);
    g_assert_no_error(error);
    g_test_message("%s", r->note);
    g_assert_nonnull(
        strstr(r->note, "; frame times from TriggerTime: AcquisitionTime malformed in 3 files"));
    fm_test_remove_tree(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/io/dicom-times/parse", test_parse);
    static const char *const names[] = {"malformed-trigger", "malformed-uniform",
                                        "missing-resolution", "repeated-uniform",
                                        "repeated-content"};
    G_STATIC_ASSERT(G_N_ELEMENTS(names) == G_N_ELEMENTS(cases));
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *path = g_strdup_printf("/io/dicom-times/%s", names[i]);
        g_test_add_data_func(path, &cases[i], check_fallback);
    }
    g_test_add_func("/io/dicom-times/untrustworthy", test_untrustworthy);
    g_test_add_func("/io/dicom-times/sound", test_sound_series);
    g_test_add_func("/io/dicom-times/run-note", test_run_note);
    return g_test_run();
}
