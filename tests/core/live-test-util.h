/* Shared by the live-session tests (core-live, core-live-camera, core-live-pipelined): a
 * session run to its end, and its run read back from the catalogue. */
#pragma once

#include "app/core/catalogue.h"
#include "app/core/live.h"

/* Waits (at most timeout_s) for session to finish by itself, then stops it: its summary,
 * asserting that it stopped without an error. */
fm_live_summary *live_test_run_to_end(fm_live_session *session, int timeout_s);

/* fm_live_start of source with request, asserting that it started, then live_test_run_to_end. */
fm_live_summary *live_test_run(fm_frame_source *source, const fm_live_request *request,
                               int timeout_s);

/* The catalogue run run_id (> 0) of the catalogue in $FLUXMAP_DATA_DIR, which *cat then holds
 * open; asserts that both were read. */
fm_catalogue_run *live_test_catalogue_run(gint64 run_id, fm_catalogue **cat);
