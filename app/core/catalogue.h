/* The run catalogue: SQLite (WAL, versioned schema) plus float32 TIFF maps beside it. */
#pragma once

#include <glib.h>
#include "dataset.h"
#include "result.h"
#include "roi.h"

G_BEGIN_DECLS

#define FM_CATALOGUE_SCHEMA_VERSION 4

typedef struct fm_catalogue fm_catalogue;

/* Directory: FLUXMAP_DATA_DIR if set, else $XDG_DATA_HOME/fluxmap. g_free it. */
char *fm_catalogue_default_dir(void);
/* Opens or creates dir/catalogue.db, migrating older schemas forward. Runs left "running" by a
 * process that has ended (killed, crashed, the machine rebooted) become "interrupted" and their
 * files are removed (fm_catalogue_recover_interrupted); runs of live processes stay running. */
fm_catalogue *fm_catalogue_open(const char *dir, GError **error);
void fm_catalogue_close(fm_catalogue *cat);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fm_catalogue, fm_catalogue_close)
const char *fm_catalogue_dir(const fm_catalogue *cat);
int fm_catalogue_schema_version(fm_catalogue *cat);

typedef enum {
    FM_RUN_RUNNING = 0,
    FM_RUN_DONE,
    FM_RUN_FAILED,
    FM_RUN_CANCELLED,
    FM_RUN_INTERRUPTED, /* its process ended before it did (found when a catalogue is opened) */
} fm_run_status;
/* "running", "done", "failed", "cancelled", "interrupted" */
const char *fm_run_status_name(fm_run_status status);

/* Records the dataset (by path and sha256, reused when known), the ROIs and a run in state
 * running, owned by this process (fm_process_owner). Returns the run id (> 0) or 0 with error.
 * Thread-safe: one connection per call. */
gint64 fm_catalogue_begin_run(fm_catalogue *cat, const fm_dataset *dataset, const char *method_id,
                              const char *params_json, GPtrArray *rois, GError **error);
/* Writes every map as runs/<id>/<name>.tif (to a temporary name, renamed on success) and the
 * outputs rows in one transaction; on any failure removes the files and marks the run failed. */
gboolean fm_catalogue_finish_run(fm_catalogue *cat, gint64 run_id, const fm_result *result,
                                 GError **error);
/* The same for a caller that has written each map already (files[i], as fm_export_tiff writes
 * it) and computed its statistics (stats[i]): the files are copied, not encoded again. Either
 * array may be NULL, and then that part is done here as fm_catalogue_finish_run does it. */
gboolean fm_catalogue_finish_run_with(fm_catalogue *cat, gint64 run_id, const fm_result *result,
                                      const char *const *files, const fm_map_stats *stats,
                                      GError **error);
/* Marks a run failed or cancelled with a message; removes any files it had. */
gboolean fm_catalogue_abort_run(fm_catalogue *cat, gint64 run_id, fm_run_status status,
                                const char *message, GError **error);

/* Marks every running run whose owning process has ended as interrupted, with no outputs: its
 * runs/<id>/ folder (finished maps and .part files) is removed, then its row changed. Runs of
 * live processes, of other hosts and of runs recorded before owners were (schema 1) are left
 * running. *n_interrupted (may be NULL) counts them. fm_catalogue_open calls it. */
gboolean fm_catalogue_recover_interrupted(fm_catalogue *cat, int *n_interrupted, GError **error);

typedef struct {
    char *name, *unit, *file; /* file is absolute */
    fm_map_stats stats;
} fm_catalogue_output;

/* A file written from a run's results outside the catalogue's folder (a DICOM export), so that
 * the user finds it again from the run. */
typedef struct {
    char *file;          /* absolute */
    char *format;        /* "dicom" */
    char *sop_class_uid; /* DICOM: the object's SOP class (Parametric Map, Segmentation) */
    char *series_uid;    /* DICOM: its SeriesInstanceUID */
    gint64 exported_unix;
} fm_catalogue_export;

void fm_catalogue_export_free(fm_catalogue_export *export);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fm_catalogue_export, fm_catalogue_export_free)

typedef struct {
    gint64 id;
    char *method_id, *params_json, *backend, *device, *error_message;
    char *dataset_path, *dataset_sha256;
    fm_run_status status;
    double elapsed_ms;
    gint64 started_unix, finished_unix;
    GPtrArray *outputs; /* of fm_catalogue_output* */
    GPtrArray *exports; /* of fm_catalogue_export*, oldest first */
} fm_catalogue_run;

void fm_catalogue_run_free(fm_catalogue_run *run);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fm_catalogue_run, fm_catalogue_run_free)

/* Records exports (of fm_catalogue_export*; exported_unix 0 means now) with run run_id in one
 * transaction; a file recorded before for the run is replaced (exported again). */
gboolean fm_catalogue_add_exports(fm_catalogue *cat, gint64 run_id, GPtrArray *exports,
                                  GError **error);

/* Newest first; limit <= 0 means all. GPtrArray of fm_catalogue_run* (outputs and exports
 * filled). */
GPtrArray *fm_catalogue_list_runs(fm_catalogue *cat, int limit, GError **error);
fm_catalogue_run *fm_catalogue_get_run(fm_catalogue *cat, gint64 run_id, GError **error);
/* The ROIs a run was given (fm_roi*, each with its name, role and slice, in the order given;
 * empty when it had none), so that a reopened run shows the regions it ran with. */
GPtrArray *fm_catalogue_get_run_rois(fm_catalogue *cat, gint64 run_id, GError **error);
/* A number that grows whenever a run is added or changes, by this process or another, so a view
 * can poll it cheaply to refresh itself. FALSE (stamp untouched) while a writer holds the
 * catalogue: the poll never waits. */
gboolean fm_catalogue_peek_change_stamp(fm_catalogue *cat, gint64 *stamp);
/* Reads back one output map of a run. */
fm_map *fm_catalogue_load_map(fm_catalogue *cat, gint64 run_id, const char *name, GError **error);

G_END_DECLS
