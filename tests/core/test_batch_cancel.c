/* A batch task cancelled from its item callback: it stops after the items in progress, its shard
 * holds those alone, and a rerun runs only the items the shard does not hold. Every item's input
 * is missing (it fails at once, recorded as failed), so the test needs no data and no device. */
#include <glib.h>
#include <glib/gstdio.h>

#include "app/core/batch/batch_plan.h"
#include "app/core/batch/batch_shard.h"
#include "app/core/batch/batch_task.h"

#define N_ITEMS 8

typedef struct {
    GCancellable *cancellable;
    int seen[N_ITEMS];
    int events;
    int computes; /* on_compute calls: each item computed is written */
} state;

static void on_compute(const fm_batch_event *event, gpointer user)
{
    state *s = user;
    g_assert_cmpint(event->total, >, 0); /* the items this run runs */
    g_assert_cmpint(event->total, <=, N_ITEMS);
    g_assert_nonnull(event->input);
    s->computes++;
}

static void on_item(const fm_batch_event *event, gpointer user)
{
    state *s = user;
    g_assert_cmpint(event->index, >=, 0);
    g_assert_cmpint(event->index, <, N_ITEMS);
    s->seen[event->index]++;
    s->events++;
    if (s->cancellable && s->events == 1)
        g_cancellable_cancel(s->cancellable);
}

static char *make_run(const char *tmp)
{
    g_autoptr(fm_batch_plan) plan = fm_batch_plan_new();
    for (int i = 0; i < N_ITEMS; i++) {
        fm_batch_item *item = g_new0(fm_batch_item, 1);
        item->index = i;
        item->input = g_strdup_printf("%s/missing-%d.tif", tmp, i);
        item->method = g_strdup("lsi.spatial");
        item->params_json = g_strdup("{}");
        item->output = g_strdup_printf("item-%d", i);
        g_ptr_array_add(plan->items, item);
    }
    char *run_dir = g_build_filename(tmp, "run", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_batch_plan_save(plan, run_dir, &error));
    g_assert_no_error(error);
    return run_dir;
}

static void check_cancel(gconstpointer data)
{
    gboolean sequential = GPOINTER_TO_INT(data);
    g_autoptr(GError) error = NULL;
    g_autofree char *tmp = g_dir_make_tmp("fm-batch-cancel-XXXXXX", &error);
    g_assert_no_error(error);
    g_autofree char *run_dir = make_run(tmp);

    g_autoptr(GCancellable) cancellable = g_cancellable_new();
    state first = {.cancellable = cancellable};
    fm_batch_task_options o = {.run_dir = run_dir,
                               .task = 0,
                               .ntasks = 1,
                               .backend = FM_BACKEND_CPU,
                               .sequential = sequential,
                               .on_item = on_item,
                               .on_compute = on_compute,
                               .user = &first,
                               .cancellable = cancellable};
    fm_batch_task_summary s = {0};
    g_assert_true(fm_batch_task_run(&o, &s, &error));
    g_assert_no_error(error);
    /* stopped after the items in progress: fewer than all, at least the one that cancelled */
    g_assert_true(s.cancelled);
    g_assert_cmpint(first.events, >=, 1);
    g_assert_cmpint(first.events, <, N_ITEMS);
    g_assert_cmpint(s.done + s.failed, ==, first.events);
    g_assert_cmpint(first.computes, ==, first.events);
    /* the shard is visible, holding the items that ran and no others */
    g_autoptr(fm_batch_shard) shard = fm_batch_shard_read(s.shard_dir, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(shard->items->len, ==, (guint)first.events);
    g_free(s.shard_dir);

    /* the rerun runs exactly the items the first run left out */
    state second = {0};
    o.user = &second;
    o.cancellable = NULL;
    g_assert_true(fm_batch_task_run(&o, &s, &error));
    g_assert_no_error(error);
    g_assert_false(s.cancelled);
    g_assert_false(s.was_complete);
    g_assert_cmpint(s.items, ==, N_ITEMS - first.events);
    g_assert_cmpint(second.computes, ==, N_ITEMS - first.events);
    for (int i = 0; i < N_ITEMS; i++)
        g_assert_cmpint(first.seen[i] + second.seen[i], ==, 1);
    g_free(s.shard_dir);

    /* a third run finds every item in a shard: nothing runs */
    state third = {0};
    o.user = &third;
    g_assert_true(fm_batch_task_run(&o, &s, &error));
    g_assert_true(s.was_complete);
    g_assert_cmpint(third.events, ==, 0);
    g_free(s.shard_dir);

    g_assert_true(fm_batch_remove_tree(tmp, NULL));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_data_func("/core/batch/cancel-sequential", GINT_TO_POINTER(TRUE), check_cancel);
    g_test_add_data_func("/core/batch/cancel-pipelined", GINT_TO_POINTER(FALSE), check_cancel);
    return g_test_run();
}
