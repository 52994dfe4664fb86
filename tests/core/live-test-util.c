/* Shared by the live-session tests: a session run to its end, its catalogue run read back. */
#include "tests/core/live-test-util.h"

fm_live_summary *live_test_run_to_end(fm_live_session *session, int timeout_s)
{
    gint64 deadline = g_get_monotonic_time() + timeout_s * G_USEC_PER_SEC;
    while (!fm_live_finished(session) && g_get_monotonic_time() < deadline)
        g_usleep(2000);
    g_assert_true(fm_live_finished(session));
    g_autoptr(GError) error = NULL;
    fm_live_summary *summary = fm_live_stop(session, &error);
    g_assert_no_error(error);
    g_assert_nonnull(summary);
    return summary;
}

fm_live_summary *live_test_run(fm_frame_source *source, const fm_live_request *request,
                               int timeout_s)
{
    g_autoptr(GError) error = NULL;
    fm_live_session *session = fm_live_start(source, request, &error);
    g_assert_no_error(error);
    return live_test_run_to_end(session, timeout_s);
}

fm_catalogue_run *live_test_catalogue_run(gint64 run_id, fm_catalogue **cat)
{
    g_assert_cmpint(run_id, >, 0);
    g_autoptr(GError) error = NULL;
    *cat = fm_catalogue_open(g_getenv("FLUXMAP_DATA_DIR"), &error);
    g_assert_no_error(error);
    fm_catalogue_run *run = fm_catalogue_get_run(*cat, run_id, &error);
    g_assert_no_error(error);
    g_assert_nonnull(run);
    return run;
}
