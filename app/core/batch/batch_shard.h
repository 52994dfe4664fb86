/* A task's shard: RUN/shards/task-K-of-N/ (a catalogue of its own with its maps, and shard.json)
 * once complete, RUN/shards/.task-K-of-N.partial/ while the task writes it. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* RUN/shards/task-K-of-N or, partial, RUN/shards/.task-K-of-N.partial (K 0-based). */
char *fm_batch_shard_path(const char *run_dir, int task, int ntasks, gboolean partial);
/* The shard of retry r >= 1 of a task's failed items: task-K-of-N.rR (.task-K-of-N.rR.partial);
 * r 0 is fm_batch_shard_path's. */
char *fm_batch_shard_retry_path(const char *run_dir, int task, int ntasks, int retry,
                                gboolean partial);

typedef struct {
    char *dir;
    char *batch_id;
    int task, ntasks;
    int retry; /* 0: the task's first shard; r: its r-th retry of failed items */
    int done, failed;
    GArray *items;        /* of int: the plan's item indices the task ran */
    GArray *failed_items; /* of int: those that failed */
} fm_batch_shard;

void fm_batch_shard_free(fm_batch_shard *shard);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fm_batch_shard, fm_batch_shard_free)

/* Writes dir/shard.json from shard (shard->dir is not used). */
gboolean fm_batch_shard_write_info(const fm_batch_shard *shard, const char *dir, GError **error);
/* The complete shard at dir (its shard.json read), or NULL with error. */
fm_batch_shard *fm_batch_shard_read(const char *dir, GError **error);
/* The complete shards under RUN/shards/ (of fm_batch_shard*, by task count, task, then retry);
 * partial folders are not shards and are left out. */
GPtrArray *fm_batch_shards_list(const char *run_dir, GError **error);

/* Removes path and everything under it (a task's leftover .partial folder). */
gboolean fm_batch_remove_tree(const char *path, GError **error);

G_END_DECLS
