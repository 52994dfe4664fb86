/* `fluxmap-cli catalogue list|show`: earlier runs from the SQLite catalogue. */
#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>

#include "app/cli/cli.h"
#include "app/core/catalogue.h"
#include "app/core/catalogue_batch.h"

static const fm_cli_option options[] = {{"json", FALSE}, {"limit", TRUE}, {"help", FALSE}};

static void print_help(void)
{
    printf("%s", _("Usage: fluxmap-cli catalogue list [--limit=N] [--json]\n"
                   "       fluxmap-cli catalogue show ID [--json]\n"
                   "Lists earlier runs (newest first) or shows one run with its output maps.\n"
                   "The catalogue lives in $FLUXMAP_DATA_DIR, else $XDG_DATA_HOME/fluxmap.\n"));
}

static void member_string(JsonBuilder *b, const char *name, const char *value)
{
    json_builder_set_member_name(b, name);
    if (value)
        json_builder_add_string_value(b, value);
    else
        json_builder_add_null_value(b);
}

/* The batch the run is an item of: "batch 3e6c1a2b/item 4" (the id's first 8 characters, as
 * unique among a user's batches as a git short hash), or NULL when it is not a batch's. */
static char *batch_label(fm_catalogue *cat, gint64 run_id, char **batch_id, int *item)
{
    g_autofree char *id = NULL;
    int index = -1;
    if (!fm_catalogue_get_run_batch(cat, run_id, &id, &index, NULL) || id == NULL)
        return NULL;
    /* TRANSLATORS: a run's place in a batch: "batch 3e6c1a2b/item 4" */
    char *label = g_strdup_printf(_("batch %.8s/item %d"), id, index);
    if (item)
        *item = index;
    if (batch_id)
        *batch_id = g_steal_pointer(&id);
    return label;
}

static void add_run_json(JsonBuilder *b, fm_catalogue *cat, const fm_catalogue_run *run)
{
    json_builder_begin_object(b);
    fm_cli_json_member_int(b, "id", run->id);
    g_autofree char *batch_id = NULL;
    int item = -1;
    g_autofree char *label = batch_label(cat, run->id, &batch_id, &item);
    json_builder_set_member_name(b, "batch"); /* null, or the batch's id and the run's item */
    if (label) {
        json_builder_begin_object(b);
        member_string(b, "id", batch_id);
        fm_cli_json_member_int(b, "item", item);
        json_builder_end_object(b);
    } else {
        json_builder_add_null_value(b);
    }
    member_string(b, "status", fm_run_status_name(run->status));
    member_string(b, "method", run->method_id);
    json_builder_set_member_name(b, "params");
    fm_cli_json_add_parsed(b, run->params_json);
    member_string(b, "backend", run->backend);
    member_string(b, "device", run->device);
    member_string(b, "dataset", run->dataset_path);
    member_string(b, "dataset_sha256", run->dataset_sha256);
    fm_cli_json_member_number(b, "elapsed_ms", run->elapsed_ms);
    fm_cli_json_member_int(b, "started_unix", run->started_unix);
    fm_cli_json_member_int(b, "finished_unix", run->finished_unix);
    member_string(b, "error", run->error_message);
    json_builder_set_member_name(b, "outputs");
    json_builder_begin_array(b);
    for (guint i = 0; run->outputs && i < run->outputs->len; i++) {
        const fm_catalogue_output *o = run->outputs->pdata[i];
        json_builder_begin_object(b);
        member_string(b, "name", o->name);
        member_string(b, "unit", o->unit);
        fm_cli_json_add_stats(b, &o->stats);
        member_string(b, "file", o->file);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "exports"); /* files sent out of the catalogue (DICOM) */
    json_builder_begin_array(b);
    for (guint i = 0; run->exports && i < run->exports->len; i++) {
        const fm_catalogue_export *e = run->exports->pdata[i];
        json_builder_begin_object(b);
        member_string(b, "file", e->file);
        member_string(b, "format", e->format);
        member_string(b, "sop_class_uid", e->sop_class_uid);
        member_string(b, "series_uid", e->series_uid);
        fm_cli_json_member_int(b, "exported_unix", e->exported_unix);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
}

/* An exported DICOM object's SOP class in words. */
static const char *sop_class_name(const char *uid)
{
    if (g_strcmp0(uid, "1.2.840.10008.5.1.4.1.1.30") == 0)
        return _("Parametric Map");
    if (g_strcmp0(uid, "1.2.840.10008.5.1.4.1.1.66.4") == 0)
        return _("Segmentation");
    return uid ? uid : "-";
}

static char *format_time(gint64 unix_time)
{
    if (unix_time <= 0)
        return g_strdup("-");
    g_autoptr(GDateTime) t = g_date_time_new_from_unix_local(unix_time);
    return t ? g_date_time_format(t, "%Y-%m-%d %H:%M:%S") : g_strdup("-");
}

static int list_runs(fm_catalogue *cat, const fm_cli_args *args)
{
    gint64 limit = 0;
    const char *limit_text = fm_cli_get(args, "limit");
    if (limit_text && !g_ascii_string_to_signed(limit_text, 10, 0, G_MAXINT, &limit, NULL))
        return fm_cli_fail(FM_EXIT_USAGE, _("--limit: '%s' is not a count"), limit_text);
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) runs = fm_catalogue_list_runs(cat, (int)limit, &error);
    if (!runs)
        return fm_cli_fail(FM_EXIT_INPUT, _("catalogue: %s"), error->message);
    if (fm_cli_has(args, "json")) {
        g_autoptr(JsonBuilder) b = json_builder_new();
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "runs");
        json_builder_begin_array(b);
        for (guint i = 0; i < runs->len; i++)
            add_run_json(b, cat, runs->pdata[i]);
        json_builder_end_array(b);
        json_builder_end_object(b);
        fm_cli_json_print(b);
        return FM_EXIT_OK;
    }
    printf("%6s  %-11s  %-19s  %-20s  %-5s  %s\n", "id", _("status"), _("started"), _("method"),
           _("backend"), _("dataset"));
    for (guint i = 0; i < runs->len; i++) {
        const fm_catalogue_run *r = runs->pdata[i];
        g_autofree char *started = format_time(r->started_unix);
        g_autofree char *batch = batch_label(cat, r->id, NULL, NULL);
        /* a batch's runs say so after the dataset: the groups show in a plain list */
        printf("%6" G_GINT64_FORMAT "  %-11s  %-19s  %-20s  %-5s  %s%s%s%s\n", r->id,
               fm_run_status_name(r->status), started, r->method_id, r->backend ? r->backend : "-",
               r->dataset_path ? r->dataset_path : "-", batch ? "  [" : "", batch ? batch : "",
               batch ? "]" : "");
    }
    return FM_EXIT_OK;
}

static int show_run(fm_catalogue *cat, const fm_cli_args *args, const char *id_text)
{
    gint64 id = 0;
    if (!g_ascii_string_to_signed(id_text, 10, 1, G_MAXINT64, &id, NULL))
        return fm_cli_fail(FM_EXIT_USAGE, _("catalogue show: '%s' is not a run id"), id_text);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue_run) run = fm_catalogue_get_run(cat, id, &error);
    if (!run)
        return fm_cli_fail(FM_EXIT_USAGE, _("catalogue show: run %lld: %s"), (long long)id,
                           error ? error->message : _("not found"));
    if (fm_cli_has(args, "json")) {
        g_autoptr(JsonBuilder) b = json_builder_new();
        add_run_json(b, cat, run);
        fm_cli_json_print(b);
        return FM_EXIT_OK;
    }
    g_autofree char *started = format_time(run->started_unix);
    printf(_("run %lld: %s, %s\n"), (long long)run->id, run->method_id,
           fm_run_status_name(run->status));
    printf(_("  dataset  %s\n  sha256   %s\n  params   %s\n  backend  %s (%s)\n"
             "  started  %s, %.1f ms\n"),
           run->dataset_path ? run->dataset_path : "-",
           run->dataset_sha256 ? run->dataset_sha256 : "-",
           run->params_json ? run->params_json : "-", run->backend ? run->backend : "-",
           run->device ? run->device : "-", started, run->elapsed_ms);
    g_autofree char *batch_id = NULL;
    int item = -1;
    g_autofree char *batch = batch_label(cat, run->id, &batch_id, &item);
    if (batch)
        printf(_("  batch    %s, item %d\n"), batch_id, item);
    if (run->error_message)
        printf(run->status == FM_RUN_DONE ? _("  note     %s\n") : _("  error    %s\n"),
               run->error_message);
    for (guint i = 0; run->outputs && i < run->outputs->len; i++) {
        const fm_catalogue_output *o = run->outputs->pdata[i];
        printf("  -> %-10s [%s] mean %.4g median %.4g valid %" G_GSIZE_FORMAT "  %s\n", o->name,
               o->unit, o->stats.mean, o->stats.median, o->stats.valid_pixels, o->file);
    }
    for (guint i = 0; run->exports && i < run->exports->len; i++) {
        const fm_catalogue_export *e = run->exports->pdata[i];
        printf(_("  exported %s %s, series %s  %s\n"), e->format, sop_class_name(e->sop_class_uid),
               e->series_uid ? e->series_uid : "-", e->file);
    }
    return FM_EXIT_OK;
}

static int dispatch(const fm_cli_args *args)
{
    if (fm_cli_has(args, "help")) {
        print_help();
        return FM_EXIT_OK;
    }
    const char *action = args->positional->len ? args->positional->pdata[0] : NULL;
    gboolean list = g_strcmp0(action, "list") == 0, show = g_strcmp0(action, "show") == 0;
    if (!action)
        return fm_cli_fail(FM_EXIT_USAGE, _("catalogue: missing action (list or show)"));
    if (!list && !show)
        return fm_cli_fail(FM_EXIT_USAGE, _("catalogue: unknown action '%s' (list or show)"),
                           action);
    if (args->positional->len != (show ? 2u : 1u))
        return fm_cli_fail(FM_EXIT_USAGE, show ? _("catalogue show: expected one run ID")
                                               : _("catalogue list: unexpected argument"));
    g_autofree char *dir = fm_catalogue_default_dir();
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(dir, &error);
    if (!cat)
        return fm_cli_fail(FM_EXIT_INPUT, _("catalogue %s: %s"), dir, error->message);
    return list ? list_runs(cat, args) : show_run(cat, args, args->positional->pdata[1]);
}

int fm_cli_catalogue(int argc, char **argv)
{
    return fm_cli_parse_and_run(argc, argv, "catalogue", options, G_N_ELEMENTS(options), dispatch);
}
