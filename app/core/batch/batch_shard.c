/* A task's shard folder: its name, its shard.json, the complete shards of a batch. */
#include "batch_shard.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdio.h>

#include "app/core/error.h"
#include "app/core/json_text.h"

char *fm_batch_shard_path(const char *run_dir, int task, int ntasks, gboolean partial)
{
    g_autofree char *name = partial ? g_strdup_printf(".task-%d-of-%d.partial", task, ntasks)
                                    : g_strdup_printf("task-%d-of-%d", task, ntasks);
    return g_build_filename(run_dir, "shards", name, NULL);
}

char *fm_batch_shard_retry_path(const char *run_dir, int task, int ntasks, int retry,
                                gboolean partial)
{
    if (retry <= 0)
        return fm_batch_shard_path(run_dir, task, ntasks, partial);
    g_autofree char *name = partial
                                ? g_strdup_printf(".task-%d-of-%d.r%d.partial", task, ntasks, retry)
                                : g_strdup_printf("task-%d-of-%d.r%d", task, ntasks, retry);
    return g_build_filename(run_dir, "shards", name, NULL);
}

void fm_batch_shard_free(fm_batch_shard *shard)
{
    if (shard == NULL)
        return;
    g_free(shard->dir);
    g_free(shard->batch_id);
    if (shard->items)
        g_array_unref(shard->items);
    if (shard->failed_items)
        g_array_unref(shard->failed_items);
    g_free(shard);
}

gboolean fm_batch_shard_write_info(const fm_batch_shard *shard, const char *dir, GError **error)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "batch_id");
    json_builder_add_string_value(b, shard->batch_id);
    json_builder_set_member_name(b, "task");
    json_builder_add_int_value(b, shard->task);
    json_builder_set_member_name(b, "ntasks");
    json_builder_add_int_value(b, shard->ntasks);
    json_builder_set_member_name(b, "done");
    json_builder_add_int_value(b, shard->done);
    json_builder_set_member_name(b, "failed");
    json_builder_add_int_value(b, shard->failed);
    json_builder_set_member_name(b, "retry");
    json_builder_add_int_value(b, shard->retry);
    GArray *lists[] = {shard->items, shard->failed_items};
    const char *names[] = {"items", "failed_items"};
    for (int k = 0; k < 2; k++) {
        json_builder_set_member_name(b, names[k]);
        json_builder_begin_array(b);
        for (guint i = 0; lists[k] && i < lists[k]->len; i++)
            json_builder_add_int_value(b, g_array_index(lists[k], int, i));
        json_builder_end_array(b);
    }
    json_builder_end_object(b);
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    g_autofree char *path = g_build_filename(dir, "shard.json", NULL);
    return fm_json_to_file(root, path, error);
}

fm_batch_shard *fm_batch_shard_read(const char *dir, GError **error)
{
    g_autofree char *path = g_build_filename(dir, "shard.json", NULL);
    g_autoptr(JsonParser) parser = json_parser_new();
    if (!json_parser_load_from_file(parser, path, error))
        return NULL;
    JsonNode *root = json_parser_get_root(parser);
    JsonObject *o = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    JsonArray *items =
        o && json_object_has_member(o, "items") ? json_object_get_array_member(o, "items") : NULL;
    if (o == NULL || items == NULL || !json_object_has_member(o, "batch_id")) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: not a shard description"), path);
        return NULL;
    }
    fm_batch_shard *s = g_new0(fm_batch_shard, 1);
    s->dir = g_strdup(dir);
    s->batch_id = g_strdup(json_object_get_string_member(o, "batch_id"));
    s->task = (int)json_object_get_int_member_with_default(o, "task", 0);
    s->ntasks = (int)json_object_get_int_member_with_default(o, "ntasks", 1);
    s->done = (int)json_object_get_int_member_with_default(o, "done", 0);
    s->failed = (int)json_object_get_int_member_with_default(o, "failed", 0);
    s->retry = (int)json_object_get_int_member_with_default(o, "retry", 0);
    s->items = g_array_new(FALSE, FALSE, sizeof(int));
    s->failed_items = g_array_new(FALSE, FALSE, sizeof(int));
    JsonArray *failed = json_object_has_member(o, "failed_items")
                            ? json_object_get_array_member(o, "failed_items")
                            : NULL;
    for (int k = 0; k < 2; k++) {
        JsonArray *from = k ? failed : items;
        for (guint i = 0; from && i < json_array_get_length(from); i++) {
            int index = (int)json_array_get_int_element(from, i);
            g_array_append_val(k ? s->failed_items : s->items, index);
        }
    }
    return s;
}

static int compare_shards(gconstpointer a, gconstpointer b)
{
    const fm_batch_shard *x = *(fm_batch_shard *const *)a, *y = *(fm_batch_shard *const *)b;
    if (x->ntasks != y->ntasks)
        return x->ntasks - y->ntasks;
    return x->task != y->task ? x->task - y->task : x->retry - y->retry;
}

GPtrArray *fm_batch_shards_list(const char *run_dir, GError **error)
{
    GPtrArray *shards = g_ptr_array_new_with_free_func((GDestroyNotify)fm_batch_shard_free);
    g_autofree char *top = g_build_filename(run_dir, "shards", NULL);
    GDir *dir = g_dir_open(top, 0, NULL);
    if (dir == NULL)
        return shards; /* no task has finished yet */
    const char *name;
    while ((name = g_dir_read_name(dir)) != NULL) {
        int task = 0, ntasks = 0, retry = 0, end = 0, end_retry = 0;
        if (sscanf(name, "task-%d-of-%d%n", &task, &ntasks, &end) != 2)
            continue;
        if (name[end] != '\0' && (sscanf(name + end, ".r%d%n", &retry, &end_retry) != 1 ||
                                  name[end + end_retry] != '\0'))
            continue;
        g_autofree char *path = g_build_filename(top, name, NULL);
        fm_batch_shard *s = fm_batch_shard_read(path, error);
        if (s == NULL) {
            g_dir_close(dir);
            g_ptr_array_unref(shards);
            return NULL;
        }
        g_ptr_array_add(shards, s);
    }
    g_dir_close(dir);
    g_ptr_array_sort(shards, compare_shards);
    return shards;
}

gboolean fm_batch_remove_tree(const char *path, GError **error)
{
    if (g_file_test(path, G_FILE_TEST_IS_DIR) && !g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
        GDir *dir = g_dir_open(path, 0, error);
        if (dir == NULL)
            return FALSE;
        const char *name;
        gboolean ok = TRUE;
        while (ok && (name = g_dir_read_name(dir)) != NULL) {
            g_autofree char *child = g_build_filename(path, name, NULL);
            ok = fm_batch_remove_tree(child, error);
        }
        g_dir_close(dir);
        if (!ok)
            return FALSE;
        if (g_rmdir(path) == 0)
            return TRUE;
    } else if (g_unlink(path) == 0 || errno == ENOENT) {
        return TRUE;
    }
    g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot remove: %s"), path, g_strerror(errno));
    return FALSE;
}
