/* A batch's plan: items from a manifest or from files, kept as RUN/plan.tsv and RUN/batch.json. */
#include "batch_plan.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/json_text.h"

void fm_batch_item_free(fm_batch_item *item)
{
    if (item == NULL)
        return;
    g_free(item->input);
    g_free(item->method);
    g_free(item->params_json);
    g_free(item->roi);
    g_free(item->output);
    g_free(item);
}

fm_batch_plan *fm_batch_plan_new(void)
{
    fm_batch_plan *plan = g_new0(fm_batch_plan, 1);
    plan->batch_id = g_uuid_string_random();
    plan->items = g_ptr_array_new_with_free_func((GDestroyNotify)fm_batch_item_free);
    return plan;
}

void fm_batch_plan_free(fm_batch_plan *plan)
{
    if (plan == NULL)
        return;
    g_free(plan->batch_id);
    g_ptr_array_unref(plan->items);
    g_free(plan);
}

void fm_batch_problem_free(fm_batch_problem *problem)
{
    if (problem == NULL)
        return;
    g_free(problem->where);
    g_free(problem->reason);
    g_free(problem);
}

static void add_problem(GPtrArray *problems, const char *where, char *reason)
{
    fm_batch_problem *p = g_new0(fm_batch_problem, 1);
    p->where = g_strdup(where);
    p->reason = reason;
    g_ptr_array_add(problems, p);
}

/* The output name an input gets by default: its file name without the extension(s). */
static char *default_output(const char *input)
{
    g_autofree char *base = g_path_get_basename(input);
    g_autofree char *lower = g_ascii_strdown(base, -1);
    if (g_str_has_suffix(lower, ".nii.gz"))
        base[strlen(base) - 7] = '\0';
    else if (strrchr(base, '.') && strrchr(base, '.') != base)
        *strrchr(base, '.') = '\0';
    return g_strdup(base);
}

static gboolean output_taken(const fm_batch_plan *plan, const char *output)
{
    for (guint i = 0; i < plan->items->len; i++)
        if (g_strcmp0(((fm_batch_item *)plan->items->pdata[i])->output, output) == 0)
            return TRUE;
    return FALSE;
}

/* Checks item and adds it to the plan, or reports it (and frees it). An output name used
 * already is a problem when given, and made unique ("name-2") when it was a default. */
static void add_checked(fm_batch_plan *plan, fm_batch_item *item, const char *params_text,
                        gboolean output_given, const char *where, GPtrArray *problems)
{
    char *reason = fm_batch_check_item(item, params_text);
    if (reason == NULL && output_given && output_taken(plan, item->output))
        reason = g_strdup_printf(_("output name '%s' is used by another row"), item->output);
    for (int k = 2; reason == NULL && output_taken(plan, item->output); k++) {
        g_autofree char *stem = default_output(item->input);
        g_free(item->output);
        item->output = g_strdup_printf("%s-%d", stem, k);
    }
    if (reason) {
        add_problem(problems, where, reason);
        fm_batch_item_free(item);
        return;
    }
    item->index = (int)plan->items->len;
    g_ptr_array_add(plan->items, item);
}

/* Splits a CSV (RFC 4180 quotes, "" inside quotes) or TSV text into rows of cells; line[i] is
 * the line each row starts on. */
static GPtrArray *split_rows(const char *text, char sep, GArray *lines)
{
    GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
    GPtrArray *row = NULL;
    GString *cell = g_string_new(NULL);
    gboolean quoted = FALSE, cell_started = FALSE;
    int line = 1;
    for (const char *c = text;; c++) {
        if (row == NULL) {
            row = g_ptr_array_new_with_free_func(g_free);
            g_array_append_val(lines, line);
        }
        if (*c == '\0' && quoted)
            quoted = FALSE; /* an unclosed quote ends with the text */
        if (quoted) {
            if (*c == '"' && c[1] == '"')
                g_string_append_c(cell, *c++);
            else if (*c == '"')
                quoted = FALSE;
            else {
                line += *c == '\n';
                g_string_append_c(cell, *c);
            }
            continue;
        }
        if (*c == '"' && !cell_started) {
            quoted = cell_started = TRUE;
        } else if (*c == sep) {
            g_ptr_array_add(row, g_string_free(cell, FALSE));
            cell = g_string_new(NULL);
            cell_started = FALSE;
        } else if (*c == '\n' || *c == '\0') {
            if (cell->len && cell->str[cell->len - 1] == '\r')
                g_string_truncate(cell, cell->len - 1);
            g_ptr_array_add(row, g_string_free(cell, FALSE));
            cell = g_string_new(NULL);
            cell_started = FALSE;
            g_ptr_array_add(rows, row);
            row = NULL;
            line++;
            if (*c == '\0')
                break;
        } else {
            g_string_append_c(cell, *c);
            cell_started = TRUE;
        }
    }
    g_string_free(cell, TRUE);
    return rows;
}

enum { COL_INPUT, COL_METHOD, COL_PARAMS, COL_ROI, COL_OUTPUT, N_COLS };
static const char *const col_names[N_COLS] = {"input", "method", "params", "roi", "output"};

static const char *cell_at(GPtrArray *row, int col)
{
    if (col < 0 || (guint)col >= row->len)
        return NULL;
    const char *text = row->pdata[col];
    return text && *text ? text : NULL;
}

static gboolean blank_row(GPtrArray *row)
{
    for (guint i = 0; i < row->len; i++) {
        const char *text = row->pdata[i];
        while (text && g_ascii_isspace(*text))
            text++;
        if (text && *text)
            return i == 0 && *text == '#'; /* a comment line */
    }
    return TRUE;
}

static char *absolute_in(const char *folder, const char *path)
{
    if (path == NULL)
        return NULL;
    g_autofree char *stripped = g_strstrip(g_strdup(path));
    return g_canonicalize_filename(stripped, folder);
}

gboolean fm_batch_plan_add_manifest(fm_batch_plan *plan, const char *manifest, GPtrArray *problems,
                                    GError **error)
{
    g_autofree char *text = NULL;
    if (!g_file_get_contents(manifest, &text, NULL, error))
        return FALSE;
    g_autofree char *lower = g_ascii_strdown(manifest, -1);
    char sep = g_str_has_suffix(lower, ".tsv") ? '\t' : ',';
    g_autoptr(GArray) lines = g_array_new(FALSE, FALSE, sizeof(int));
    g_autoptr(GPtrArray) rows = split_rows(text, sep, lines);
    g_autofree char *abs_manifest = g_canonicalize_filename(manifest, NULL);
    g_autofree char *folder = g_path_get_dirname(abs_manifest);
    g_autofree char *name = g_path_get_basename(manifest);
    int cols[N_COLS] = {COL_INPUT, COL_METHOD, COL_PARAMS, COL_ROI, COL_OUTPUT};
    guint first = 0;
    while (first < rows->len && blank_row(rows->pdata[first]))
        first++;
    /* A header row names the columns; its order wins. */
    if (first < rows->len) {
        GPtrArray *head = rows->pdata[first];
        gboolean is_header = FALSE;
        for (guint i = 0; i < head->len; i++)
            is_header |= g_ascii_strcasecmp(g_strstrip((char *)head->pdata[i]), "input") == 0;
        if (is_header) {
            for (int k = 0; k < N_COLS; k++) {
                cols[k] = -1;
                for (guint i = 0; i < head->len; i++)
                    if (g_ascii_strcasecmp(head->pdata[i], col_names[k]) == 0)
                        cols[k] = (int)i;
            }
            first++;
            if (cols[COL_INPUT] < 0 || cols[COL_METHOD] < 0) {
                g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                            _("%s: the header names no '%s' column"), manifest,
                            cols[COL_INPUT] < 0 ? "input" : "method");
                return FALSE;
            }
        }
    }
    for (guint r = first; r < rows->len; r++) {
        GPtrArray *row = rows->pdata[r];
        if (blank_row(row))
            continue;
        g_autofree char *where = g_strdup_printf("%s:%d", name, g_array_index(lines, int, r));
        const char *input = cell_at(row, cols[COL_INPUT]);
        if (input == NULL) {
            add_problem(problems, where, g_strdup(_("no input")));
            continue;
        }
        fm_batch_item *item = g_new0(fm_batch_item, 1);
        item->input = absolute_in(folder, input);
        item->method = g_strstrip(
            g_strdup(cell_at(row, cols[COL_METHOD]) ? cell_at(row, cols[COL_METHOD]) : ""));
        item->roi = absolute_in(folder, cell_at(row, cols[COL_ROI]));
        const char *output = cell_at(row, cols[COL_OUTPUT]);
        item->output = output ? g_strstrip(g_strdup(output)) : default_output(item->input);
        g_autofree char *where_file = g_strdup_printf("%s (%s)", where, item->input);
        add_checked(plan, item, cell_at(row, cols[COL_PARAMS]), output != NULL, where_file,
                    problems);
    }
    return TRUE;
}

static int compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b); /* pointers to the elements */
}

/* Files a folder holds whose first bytes a reader takes (the check says so), sorted. */
static void add_folder(fm_batch_plan *plan, const fm_method *method, const char *params_json,
                       const char *roi, const char *folder, GPtrArray *problems, int *skipped)
{
    g_autoptr(GError) error = NULL;
    GDir *dir = g_dir_open(folder, 0, &error);
    if (dir == NULL) {
        add_problem(problems, folder, g_strdup(error->message));
        return;
    }
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while ((name = g_dir_read_name(dir)) != NULL)
        if (name[0] != '.')
            g_ptr_array_add(names, g_build_filename(folder, name, NULL));
    g_dir_close(dir);
    g_ptr_array_sort(names, compare_names);
    for (guint i = 0; i < names->len; i++) {
        fm_batch_item *item = g_new0(fm_batch_item, 1);
        item->input = g_strdup(names->pdata[i]);
        item->method = g_strdup(method->id);
        item->roi = g_strdup(roi);
        item->output = default_output(item->input);
        char *reason = fm_batch_check_item(item, params_json);
        if (reason) { /* a sidecar, a note: not the folder's data */
            g_free(reason);
            fm_batch_item_free(item);
            if (skipped)
                (*skipped)++;
            continue;
        }
        add_checked(plan, item, params_json, FALSE, item->input, problems);
    }
}

void fm_batch_plan_add_files(fm_batch_plan *plan, const fm_method *method, const char *params_json,
                             const char *roi, const char *const *paths, int n_paths,
                             GPtrArray *problems, int *skipped)
{
    g_autofree char *abs_roi = roi ? g_canonicalize_filename(roi, NULL) : NULL;
    for (int i = 0; i < n_paths; i++) {
        g_autofree char *path = g_canonicalize_filename(paths[i], NULL);
        /* A folder is a DICOM series for DCE methods, else a folder of files */
        if (g_file_test(path, G_FILE_TEST_IS_DIR) && g_strcmp0(method->family, "dce") != 0) {
            add_folder(plan, method, params_json, abs_roi, path, problems, skipped);
            continue;
        }
        fm_batch_item *item = g_new0(fm_batch_item, 1);
        item->input = g_strdup(path);
        item->method = g_strdup(method->id);
        item->roi = g_strdup(abs_roi);
        item->output = default_output(path);
        add_checked(plan, item, params_json, FALSE, path, problems);
    }
}

/* Tabs, newlines and backslashes of a cell escaped as \t, \n, \\. */
static void append_cell(GString *out, const char *text)
{
    for (const char *c = text ? text : ""; *c; c++) {
        if (*c == '\t')
            g_string_append(out, "\\t");
        else if (*c == '\n')
            g_string_append(out, "\\n");
        else if (*c == '\\')
            g_string_append(out, "\\\\");
        else
            g_string_append_c(out, *c);
    }
}

static char *unescape_cell(const char *text)
{
    GString *out = g_string_new(NULL);
    for (const char *c = text; *c; c++) {
        if (*c == '\\' && c[1]) {
            c++;
            g_string_append_c(out, *c == 't' ? '\t' : *c == 'n' ? '\n' : *c);
        } else {
            g_string_append_c(out, *c);
        }
    }
    return g_string_free(out, FALSE);
}

gboolean fm_batch_plan_save(const fm_batch_plan *plan, const char *dir, GError **error)
{
    g_autofree char *tsv = g_build_filename(dir, "plan.tsv", NULL);
    g_autofree char *json = g_build_filename(dir, "batch.json", NULL);
    if (g_file_test(tsv, G_FILE_TEST_EXISTS)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: a batch is planned there already (choose a new folder)"), dir);
        return FALSE;
    }
    if (g_mkdir_with_parents(dir, 0755) != 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot create folder: %s"), dir,
                    g_strerror(errno));
        return FALSE;
    }
    GString *out = g_string_new("index\tinput\tmethod\tparams\troi\toutput\n");
    for (guint i = 0; i < plan->items->len; i++) {
        const fm_batch_item *it = plan->items->pdata[i];
        g_string_append_printf(out, "%d\t", it->index);
        const char *cells[] = {it->input, it->method, it->params_json, it->roi, it->output};
        for (gsize k = 0; k < G_N_ELEMENTS(cells); k++) {
            append_cell(out, cells[k]);
            g_string_append_c(out, k + 1 < G_N_ELEMENTS(cells) ? '\t' : '\n');
        }
    }
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "batch_id");
    json_builder_add_string_value(b, plan->batch_id);
    json_builder_set_member_name(b, "items");
    json_builder_add_int_value(b, plan->items->len);
    json_builder_set_member_name(b, "plan");
    json_builder_add_string_value(b, "plan.tsv");
    json_builder_end_object(b);
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    /* batch.json last: a folder with it holds a whole plan */
    gboolean ok = g_file_set_contents(tsv, out->str, (gssize)out->len, error) &&
                  fm_json_to_file(root, json, error);
    g_string_free(out, TRUE);
    return ok;
}

fm_batch_plan *fm_batch_plan_load(const char *dir, GError **error)
{
    g_autofree char *tsv = g_build_filename(dir, "plan.tsv", NULL);
    g_autofree char *json = g_build_filename(dir, "batch.json", NULL);
    g_autoptr(JsonParser) parser = json_parser_new();
    if (!json_parser_load_from_file(parser, json, NULL)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: not a batch folder (no batch.json; see 'fluxmap-cli batch plan')"), dir);
        return NULL;
    }
    JsonNode *root = json_parser_get_root(parser);
    JsonObject *obj = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    const char *id = obj ? json_object_get_string_member_with_default(obj, "batch_id", NULL) : NULL;
    g_autofree char *text = NULL;
    if (id == NULL || !g_file_get_contents(tsv, &text, NULL, NULL)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: the batch's plan is damaged"), dir);
        return NULL;
    }
    g_autoptr(fm_batch_plan) plan = fm_batch_plan_new();
    g_free(plan->batch_id);
    plan->batch_id = g_strdup(id);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (int i = 1; lines[i]; i++) {
        if (*lines[i] == '\0')
            continue;
        g_auto(GStrv) cells = g_strsplit(lines[i], "\t", -1);
        if (g_strv_length(cells) != 6 || atoi(cells[0]) != (int)plan->items->len) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s/plan.tsv: line %d is damaged"),
                        dir, i + 1);
            return NULL;
        }
        fm_batch_item *it = g_new0(fm_batch_item, 1);
        it->index = atoi(cells[0]);
        it->input = unescape_cell(cells[1]);
        it->method = unescape_cell(cells[2]);
        it->params_json = unescape_cell(cells[3]);
        it->roi = *cells[4] ? unescape_cell(cells[4]) : NULL;
        it->output = unescape_cell(cells[5]);
        g_ptr_array_add(plan->items, it);
    }
    return g_steal_pointer(&plan);
}
