/* `fluxmap-cli live`: a method on frames from a camera (or a replayed file) as they arrive,
 * headless: a status line per second, the recording and the maps in OUTDIR, the catalogue. */
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/cli/cli-method-args.h"
#include "app/cli/cli-roi.h"
#include "app/cli/cli.h"
#include "app/core/error.h"
#include "app/core/live.h"

static const fm_cli_option options[] = {
    {"output", TRUE},     {"backend", TRUE},       {"camera", TRUE},      {"frames", TRUE},
    {"seconds", TRUE},    {"record", FALSE},       {"replay", TRUE},      {"fps", TRUE},
    {"roi", TRUE},        {"save_maps", TRUE},     {"exposure_us", TRUE}, {"gain_db", TRUE},
    {"frame_rate", TRUE}, {"no_catalogue", FALSE}, {"help", FALSE},
};

static void print_help(void)
{
    printf("%s",
           _("Usage: fluxmap-cli live METHOD --camera ID | --replay FILE [--fps F]\n"
             "          [--frames N | --seconds S] -o OUTDIR [--record]\n"
             "          [--backend=auto|cpu|cuda] [--roi FILE] [--save-maps all|summary]\n"
             "          [--exposure_us E] [--gain_db G] [--frame_rate F] [--no-catalogue]\n"
             "          [--PARAM=VALUE...]\n"
             "Runs METHOD on each frame of a GenICam camera ('fluxmap-cli cameras' lists\n"
             "them) as it arrives, or on FILE replayed at its frame rate (--fps F: another\n"
             "rate, < 0 as fast as processed), until N frames, S seconds, the end of the\n"
             "replay or Ctrl-C. A status line per second on a terminal gives the camera's,\n"
             "processed and displayed frames/s and dropped frames.\n"
             "--record writes every raw frame to OUTDIR/recording.tif (BigTIFF; while\n"
             "recording every frame is processed, otherwise the newest frame waiting is).\n"
             "OUTDIR/<output>.tif gets each output map: every frame's map (--save-maps all,\n"
             "the default, as 'fluxmap-cli run' writes it) or <output>_mean and\n"
             "<output>_last (summary; 'all' keeps every frame's maps in memory until the end,\n"
             "about 11 MB a frame for 1392x1040 speckle maps: take summary for long runs).\n"
             "--roi FILE (JSON shapes): OUTDIR/roi_time_course.csv,\n"
             "the mean of the method's primary map in each ROI per processed frame.\n"
             "The recording, the maps and the time course are recorded in the catalogue\n"
             "unless --no-catalogue. A camera lost mid-run keeps what was recorded (exit 3).\n"));
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int signal_number)
{
    interrupted = 1;
}

static int parse_save(const fm_cli_args *args, fm_live_save *save)
{
    const char *text = fm_cli_get(args, "save_maps");
    *save = FM_LIVE_SAVE_ALL;
    if (!text || strcmp(text, "all") == 0)
        return FM_EXIT_OK;
    if (strcmp(text, "summary") == 0) {
        *save = FM_LIVE_SAVE_SUMMARY;
        return FM_EXIT_OK;
    }
    return fm_cli_fail(FM_EXIT_USAGE, _("--save-maps: '%s' is not one of all, summary"), text);
}

/* The source and its settings from --camera / --replay and the camera options. */
static int open_source(const fm_cli_args *args, fm_frame_source **out)
{
    const char *camera = fm_cli_get(args, "camera"), *replay = fm_cli_get(args, "replay");
    if (!camera == !replay)
        return fm_cli_fail(FM_EXIT_USAGE, _("live: give one of --camera ID or --replay FILE"));
    g_autofree char *message = NULL;
    double fps = 0;
    if (!fm_cli_get_double(args, "fps", &fps, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "%s", message);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_frame_source) source = camera ? fm_frame_source_open_camera(camera, &error)
                                               : fm_frame_source_open_replay(replay, fps, &error);
    if (!source)
        return fm_cli_fail(FM_EXIT_INPUT, "%s", error->message);
    static const struct {
        const char *name;
        gboolean (*set)(fm_frame_source *, double, GError **);
    } settings[] = {
        {"exposure_us", fm_frame_source_set_exposure_us},
        {"gain_db", fm_frame_source_set_gain_db},
        {"frame_rate", fm_frame_source_set_frame_rate},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(settings); i++) {
        double value = 0;
        if (!fm_cli_get_double(args, settings[i].name, &value, &message))
            return fm_cli_fail(FM_EXIT_USAGE, "%s", message);
        if (fm_cli_get(args, settings[i].name) && !settings[i].set(source, value, &error))
            return fm_cli_fail(FM_EXIT_USAGE, "--%s: %s", settings[i].name, error->message);
    }
    *out = g_steal_pointer(&source);
    return FM_EXIT_OK;
}

static void print_status(const fm_live_stats *st)
{
    fprintf(
        stderr,
        _("\rcamera %5.1f frames/s  processed %5.1f  displayed %5.1f  recorded %" G_GUINT64_FORMAT
          "  dropped %" G_GUINT64_FORMAT " by the camera, %" G_GUINT64_FORMAT
          " by the link  not processed %" G_GUINT64_FORMAT "   "),
        st->camera_fps, st->processed_fps, st->displayed_fps, st->recorded, st->dropped_by_camera,
        st->dropped_by_link, st->skipped_processing);
    fflush(stderr);
}

static void print_summary(const fm_live_summary *summary, double seconds)
{
    const fm_live_stats *st = &summary->stats;
    double s = seconds > 0 ? seconds : 1;
    printf(_("frames: camera %" G_GUINT64_FORMAT " (%.1f/s), processed %" G_GUINT64_FORMAT
             " (%.1f/s), recorded %" G_GUINT64_FORMAT ", displayed %" G_GUINT64_FORMAT "\n"),
           st->camera_frames, st->camera_frames / s, st->processed, st->processed / s, st->recorded,
           st->displayed);
    if (st->processed > 1 && st->last_processed_s > st->first_processed_s)
        printf(_("steady: %.1f frames/s processed from the first frame (%.3f s after start) to "
                 "the last\n"),
               (double)(st->processed - 1) / (st->last_processed_s - st->first_processed_s),
               st->first_processed_s);
    printf(_("dropped: %" G_GUINT64_FORMAT " by the camera, %" G_GUINT64_FORMAT
             " by the link; not processed (newest frame first) %" G_GUINT64_FORMAT
             "; not shown %" G_GUINT64_FORMAT "\n"),
           st->dropped_by_camera, st->dropped_by_link, st->skipped_processing, st->skipped_display);
    if (summary->record_path)
        printf(_("recording: %s\n"), summary->record_path);
    for (int i = 0; summary->map_paths && summary->map_paths[i]; i++)
        printf("  %s\n", summary->map_paths[i]);
    if (summary->maps_run_id > 0)
        printf(_("catalogue run %lld\n"), (long long)summary->maps_run_id);
}

static int execute(const fm_method *method, const fm_params *params, fm_backend backend,
                   const fm_cli_args *args)
{
    const char *outdir = fm_cli_get(args, "output");
    if (!outdir || !*outdir)
        return fm_cli_fail(FM_EXIT_USAGE, _("live: missing -o OUTDIR"));
    if (args->positional->len > 0)
        return fm_cli_fail(FM_EXIT_USAGE, _("live: unexpected argument '%s'"),
                           (const char *)args->positional->pdata[0]);
    if (!method->live)
        return fm_cli_fail(FM_EXIT_USAGE,
                           _("%s has no live path: it runs on files only ('fluxmap-cli run')"),
                           method->id);
    int frames = 0;
    double seconds = 0;
    g_autofree char *message = NULL;
    if (!fm_cli_get_positive_int(args, "frames", &frames, &message) ||
        !fm_cli_get_double(args, "seconds", &seconds, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "%s", message);
    if (seconds < 0)
        return fm_cli_fail(FM_EXIT_USAGE, _("--seconds: give a duration > 0"));
    fm_live_save save;
    int code = parse_save(args, &save);
    if (code != FM_EXIT_OK)
        return code;
    g_autoptr(GPtrArray) rois = NULL;
    if ((code = fm_cli_load_rois(args, NULL, FALSE, &rois)) != FM_EXIT_OK)
        return code;
    if (g_mkdir_with_parents(outdir, 0755) != 0)
        return fm_cli_fail(FM_EXIT_INPUT, _("%s: cannot create directory: %s"), outdir,
                           g_strerror(errno));
    fm_frame_source *source = NULL;
    if ((code = open_source(args, &source)) != FM_EXIT_OK)
        return code;
    g_autofree char *record_path =
        fm_cli_has(args, "record") ? g_build_filename(outdir, "recording.tif", NULL) : NULL;
    fm_live_request request = {
        .method = method,
        .params = params,
        .rois = rois,
        .backend = backend,
        .max_frames = (guint64)frames,
        .max_seconds = seconds,
        .record_path = record_path,
        .maps_dir = outdir,
        .save_maps = save,
        .catalogue = !fm_cli_has(args, "no_catalogue"),
    };
    g_autoptr(GError) error = NULL;
    fm_live_session *session = fm_live_start(source, &request, &error);
    if (!session) {
        fm_frame_source_free(source);
        return fm_cli_fail_error(error);
    }
    struct sigaction action = {.sa_handler = on_interrupt}, previous;
    sigaction(SIGINT, &action, &previous);
    gboolean terminal = isatty(STDERR_FILENO);
    gint64 start = g_get_monotonic_time(), next_status = start + G_USEC_PER_SEC;
    while (!fm_live_finished(session) && !interrupted) {
        g_usleep(20000);
        if (terminal && g_get_monotonic_time() >= next_status) {
            fm_live_stats st;
            fm_live_get_stats(session, &st);
            print_status(&st);
            next_status += G_USEC_PER_SEC;
        }
    }
    sigaction(SIGINT, &previous, NULL);
    double elapsed = (g_get_monotonic_time() - start) / (double)G_USEC_PER_SEC;
    g_autoptr(fm_live_summary) summary = fm_live_stop(session, &error);
    if (terminal && elapsed >= 1)
        fprintf(stderr, "\n");
    if (!summary)
        return fm_cli_fail_error(error);
    print_summary(summary, elapsed);
    switch (summary->end) {
    case FM_LIVE_END_ASKED:
        if (summary->message) /* frames dropped: the run completed, the user is told */
            fprintf(stderr, _("fluxmap-cli: warning: %s\n"), summary->message);
        return FM_EXIT_OK;
    case FM_LIVE_END_PROCESS_FAILED:
        return fm_cli_fail(FM_EXIT_COMPUTE, "%s", summary->message);
    default: /* camera lost or failed, recording failed: what was recorded is kept */
        return fm_cli_fail(FM_EXIT_INPUT, "%s", summary->message);
    }
}

static int parse_command(int argc, char **argv, fm_cli_args *args, const fm_method **method,
                         fm_params **params, fm_backend *backend)
{
    int code = fm_cli_parse_method_args(argc, argv, "live", options, G_N_ELEMENTS(options),
                                        print_help, args, method, params, backend);
    return code == FM_EXIT_OK ? fm_cli_check_roi_options(args) : code;
}

int fm_cli_live(int argc, char **argv)
{
    return fm_cli_method_command(argc, argv, parse_command, execute);
}
