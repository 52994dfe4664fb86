/* A batch's plan: the items one method (or a manifest's methods) runs on, checked before
 * anything runs, kept in RUN/plan.tsv with the batch's id in RUN/batch.json. */
#pragma once

#include <glib.h>
#include "app/core/method.h"

G_BEGIN_DECLS

typedef struct {
    int index;         /* 0-based; item i belongs to task i mod N of N */
    char *input;       /* absolute path of a file or folder */
    char *method;      /* method id */
    char *params_json; /* the method's parameters, all of them, as JSON */
    char *roi;         /* absolute path of an ROI file, or NULL */
    char *output;      /* the item's name among the batch's results ("well-A01") */
} fm_batch_item;

void fm_batch_item_free(fm_batch_item *item);

typedef struct {
    char *batch_id;   /* a random UUID, the same in every shard and catalogue run of the batch */
    GPtrArray *items; /* of fm_batch_item*, by index */
} fm_batch_plan;

fm_batch_plan *fm_batch_plan_new(void); /* a new batch id, no items */
void fm_batch_plan_free(fm_batch_plan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fm_batch_plan, fm_batch_plan_free)

/* A row that cannot run: where it came from ("plan.csv:4" or the file) and why. */
typedef struct {
    char *where;
    char *reason;
} fm_batch_problem;

void fm_batch_problem_free(fm_batch_problem *problem);

/* Checks one item as planned (and fills in its defaults): the method exists, its parameters
 * (key=value;... or a JSON object in params_text, NULL for defaults) are valid against the schema
 * and become params_json, the input is a file or folder a reader takes for the method (its header
 * only: format magic, TIFF directory, .sdt header checksum, a DICOM folder's series), the ROI
 * file reads and has the roles the method needs. NULL when it can run, else the reason (g_free
 * it). */
char *fm_batch_check_item(fm_batch_item *item, const char *params_text);

/* Adds the rows of a manifest (.csv or .tsv: input, method, params, roi, output; a header row of
 * those names sets the order, else that order is assumed; relative paths are the manifest's
 * folder's): each checked, a bad row added to problems (of fm_batch_problem*) instead. FALSE
 * with error when the manifest itself cannot be read. */
gboolean fm_batch_plan_add_manifest(fm_batch_plan *plan, const char *manifest, GPtrArray *problems,
                                    GError **error);
/* Adds one item per file: each of paths, or a folder's files (sorted; those no reader takes are
 * skipped and counted in *skipped, may be NULL), with method and params_json (valid). */
void fm_batch_plan_add_files(fm_batch_plan *plan, const fm_method *method, const char *params_json,
                             const char *roi, const char *const *paths, int n_paths,
                             GPtrArray *problems, int *skipped);

/* Writes dir/plan.tsv and dir/batch.json (the folder made if needed; an existing plan is an
 * error: a batch's items never change under its shards). */
gboolean fm_batch_plan_save(const fm_batch_plan *plan, const char *dir, GError **error);
/* Reads what fm_batch_plan_save wrote. */
fm_batch_plan *fm_batch_plan_load(const char *dir, GError **error);

G_END_DECLS
