/* fluxmap-cli entry point: dispatches to the sub-command groups (methods, run, simulate,
 * catalogue) and prints the overall help and version. */
#include <glib/gi18n.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/cli/cli-batch.h"
#include "app/cli/cli.h"
#include "fm_config.h"

static void print_help(FILE *out)
{
    fprintf(out, "%s",
            _("Usage: fluxmap-cli COMMAND [OPTIONS]\n"
              "\n"
              "Commands:\n"
              "  methods [--json]                       list methods, parameters and outputs\n"
              "  run METHOD [--PARAM=VALUE...] [INPUT] -o OUTDIR [--backend=auto|cpu|cuda]\n"
              "      [--json] [--no-catalogue] [--roi FILE]\n"
              "                                         run a method, one TIFF per output map\n"
              "  simulate lsi [OPTIONS] -o FILE.tif     write a synthetic speckle stack\n"
              "  simulate flim [OPTIONS] -o FILE.tif|.sdt|.ptu  write synthetic FLIM decays\n"
              "  simulate dce [OPTIONS] -o FILE.nii|.tif  write a DCE liver phantom\n"
              "  simulate oct [OPTIONS] -o FILE.raw|.tif  write SD-OCT spectra\n"
              "  catalogue list|show ID [--json]        browse earlier runs\n"
              "  roi export INPUT --roi FILE [--roi-labels MAP] -o LABELS.nii.gz|.tif\n"
              "                                         ROIs as a label map over INPUT\n"
              "  info FILE [--json]                     what Fluxmap reads in FILE\n"
              "  mcml run FILE.mci|--preset NAME -o OUT.mco [--photons N] [--rt-only]\n"
              "                                         MCML light transport, .mco + TIFFs\n"
              "  cameras [--details ID]                 GenICam cameras Aravis finds\n"
              "  live METHOD --camera ID|--replay FILE -o OUTDIR [--frames N|--seconds S]\n"
              "      [--record]                         a method on frames as they arrive\n"
              "  batch -o RUN/ METHOD FILES... [--slurm]  one method over many files, planned,\n"
              "                                         run and merged into the catalogue\n"
              "  batch plan|run|merge|submit RUN/ ...   the same step by step, as tasks\n"
              "\n"
              "'fluxmap-cli COMMAND --help' describes each command.\n"
              "Exit status: 0 success, 2 bad usage or parameters, 3 unreadable or invalid\n"
              "input, 4 compute or device failure.\n"));
}

int fm_cli_mcml(int argc, char **argv); /* app/cli/cli-mcml.c */
int fm_cli_roi(int argc, char **argv);  /* app/cli/cli-roi.c */
int fm_cli_cameras(int argc, char **argv);
int fm_cli_live(int argc, char **argv); /* app/cli/cli-live.c */

/* `batch run` (and the one-command `batch`) lets idle OpenMP threads sleep
 * (OMP_WAIT_POLICY=passive) unless the user chose a policy. A batch computes one item while other
 * threads read and write the next ones; OpenMP's default keeps the compute stage's idle threads
 * spinning for milliseconds after every parallel loop, on the cores the readers need: on the H100
 * machine (16 cores, 200 FLIM .sdt files) the batch took 17.7 s that way and 10.0 s with the
 * policy passive (bench/RESULTS.md). libgomp reads its environment once, before main(), so the
 * process starts itself again with it set; should that fail, the batch runs as it is. */
static void batch_run_with_sleeping_omp_threads(int argc, char **argv)
{
    if (argc < 3 || strcmp(argv[1], "batch") != 0 || getenv("OMP_WAIT_POLICY") != NULL)
        return;
    static const char *const not_running[] = {"plan", "merge", "submit", "--help", "-h"};
    for (gsize i = 0; i < G_N_ELEMENTS(not_running); i++)
        if (strcmp(argv[2], not_running[i]) == 0)
            return; /* run and the one-command form run items */
    /* only where the running file is this program (not a loader or a tool running it) */
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return;
    self[n] = '\0';
    const char *self_name = strrchr(self, '/'), *arg_name = strrchr(argv[0], '/');
    if (strcmp(self_name ? self_name + 1 : self, arg_name ? arg_name + 1 : argv[0]) != 0)
        return;
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv(self, argv);
    unsetenv("OMP_WAIT_POLICY"); /* not restarted: as the user started it */
}

int main(int argc, char **argv)
{
    batch_run_with_sleeping_omp_threads(argc, argv);
    setlocale(LC_ALL, "");
    bindtextdomain(GETTEXT_PACKAGE, FM_LOCALEDIR);
    bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
    textdomain(GETTEXT_PACKAGE);

    if (argc < 2) {
        fm_cli_fail(FM_EXIT_USAGE, _("missing COMMAND"));
        print_help(stderr);
        return FM_EXIT_USAGE;
    }
    const char *command = argv[1];
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 ||
        strcmp(command, "help") == 0) {
        print_help(stdout);
        return FM_EXIT_OK;
    }
    if (strcmp(command, "--version") == 0) {
        printf("fluxmap-cli %s\n", FM_VERSION);
        return FM_EXIT_OK;
    }
    /* each sub-command sees its own arguments only */
    if (strcmp(command, "methods") == 0)
        return fm_cli_methods(argc - 2, argv + 2);
    if (strcmp(command, "run") == 0)
        return fm_cli_run(argc - 2, argv + 2);
    if (strcmp(command, "simulate") == 0)
        return fm_cli_simulate(argc - 2, argv + 2);
    if (strcmp(command, "catalogue") == 0)
        return fm_cli_catalogue(argc - 2, argv + 2);
    if (strcmp(command, "info") == 0)
        return fm_cli_info(argc - 2, argv + 2); /* app/cli/cli-info.c */
    if (strcmp(command, "mcml") == 0)
        return fm_cli_mcml(argc - 2, argv + 2); /* app/cli/cli-mcml.c */
    if (strcmp(command, "roi") == 0)
        return fm_cli_roi(argc - 2, argv + 2);
    if (strcmp(command, "cameras") == 0)
        return fm_cli_cameras(argc - 2, argv + 2); /* app/cli/cli-cameras.c */
    if (strcmp(command, "live") == 0)
        return fm_cli_live(argc - 2, argv + 2); /* app/cli/cli-live.c */
    if (strcmp(command, "batch") == 0)
        return fm_cli_batch(argc - 2, argv + 2); /* app/cli/cli-batch.c */
    return fm_cli_fail(FM_EXIT_USAGE, _("unknown command '%s' (see 'fluxmap-cli --help')"),
                       command);
}
