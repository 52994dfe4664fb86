/* Merging a batch's complete shards into a catalogue, and which tasks are still missing. */
#include "batch_merge.h"

#include <glib/gi18n.h>

#include "app/core/catalogue_batch.h"
#include "app/core/error.h"
#include "batch_plan.h"
#include "batch_shard.h"

void fm_batch_merge_report_clear(fm_batch_merge_report *report)
{
    g_clear_pointer(&report->missing_tasks, g_array_unref);
    g_clear_pointer(&report->failed_items, g_array_unref);
}

static int compare_int(gconstpointer a, gconstpointer b)
{
    return *(const int *)a - *(const int *)b;
}

char *fm_batch_array_ranges(GArray *indices)
{
    g_autoptr(GArray) sorted = g_array_copy(indices);
    g_array_sort(sorted, compare_int);
    GString *out = g_string_new(NULL);
    for (guint i = 0; i < sorted->len;) {
        int first = g_array_index(sorted, int, i), last = first;
        while (++i < sorted->len && g_array_index(sorted, int, i) <= last + 1)
            last = g_array_index(sorted, int, i);
        g_string_append_printf(out, out->len ? ",%d" : "%d", first);
        if (last > first)
            g_string_append_printf(out, "-%d", last);
    }
    return g_string_free(out, FALSE);
}

/* The task count most of the batch's shards were run with. */
static int shards_ntasks(GPtrArray *shards)
{
    int best = 1, best_count = 0;
    for (guint i = 0; i < shards->len; i++) {
        int n = ((fm_batch_shard *)shards->pdata[i])->ntasks, count = 0;
        for (guint j = 0; j < shards->len; j++)
            count += ((fm_batch_shard *)shards->pdata[j])->ntasks == n;
        if (count > best_count) {
            best = n;
            best_count = count;
        }
    }
    return best;
}

gboolean fm_batch_merge(const char *run_dir, fm_catalogue *cat, int ntasks,
                        fm_batch_merge_report *report, GError **error)
{
    *report = (fm_batch_merge_report){0};
    report->missing_tasks = g_array_new(FALSE, FALSE, sizeof(int));
    report->failed_items = g_array_new(FALSE, FALSE, sizeof(int));
    g_autoptr(fm_batch_plan) plan = fm_batch_plan_load(run_dir, error);
    g_autoptr(GPtrArray) shards = plan ? fm_batch_shards_list(run_dir, error) : NULL;
    if (shards == NULL)
        return FALSE;
    guint n_items = plan->items->len;
    g_autofree gboolean *covered = g_new0(gboolean, MAX(n_items, 1));
    for (guint i = 0; i < shards->len; i++) {
        fm_batch_shard *s = shards->pdata[i];
        if (g_strcmp0(s->batch_id, plan->batch_id) != 0)
            continue; /* a shard copied in from another batch is not this batch's */
        fm_catalogue_merge_counts counts = {0};
        if (!fm_catalogue_merge_shard(cat, s->dir, plan->batch_id, &counts, error)) {
            g_prefix_error(error, _("merging %s: "), s->dir);
            return FALSE;
        }
        report->shards++;
        report->added += counts.added;
        report->replaced += counts.replaced;
        report->kept += counts.kept;
        for (guint k = 0; k < s->items->len; k++) {
            int index = g_array_index(s->items, int, k);
            if (index >= 0 && (guint)index < n_items)
                covered[index] = TRUE;
        }
    }
    report->ntasks = ntasks > 0 ? ntasks : shards_ntasks(shards);
    g_autofree gboolean *missing = g_new0(gboolean, report->ntasks);
    for (guint i = 0; i < n_items; i++)
        if (!covered[i]) {
            missing[i % (guint)report->ntasks] = TRUE;
            report->missing_items++;
        }
    for (int t = 0; t < report->ntasks; t++)
        if (missing[t])
            g_array_append_val(report->missing_tasks, t);
    g_autoptr(GArray) items = fm_catalogue_batch_items(cat, plan->batch_id, error);
    if (items == NULL)
        return FALSE;
    for (guint i = 0; i < items->len; i++) {
        const fm_catalogue_batch_item *it = &g_array_index(items, fm_catalogue_batch_item, i);
        if (it->status != FM_RUN_DONE)
            g_array_append_val(report->failed_items, it->item);
    }
    return TRUE;
}
