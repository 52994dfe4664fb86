/* MCML .mci input files: line-numbered parsing, writing in MCML's template layout, and the
 * placeholder dataset that stands for an .mci file in jobs and the catalogue. */
#include "mci.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"

/* Upper bounds that keep the output arrays addressable and a typo from eating all memory. */
#define MAX_GRID 100000
#define MAX_CELLS 200000000LL

typedef struct {
    char **lines;
    int n_lines;
    int next; /* index of the next raw line to look at */
    const char *label;
    int line;      /* 1-based number of the line last returned */
    char **fields; /* fields of that line */
    int n_fields;
} reader;

/* Next line with content: comments after '#' and blank lines are skipped as MCML does. */
static gboolean next_fields(reader *r)
{
    g_clear_pointer(&r->fields, g_strfreev);
    r->n_fields = 0;
    while (r->next < r->n_lines) {
        char *raw = r->lines[r->next++];
        char *hash = strchr(raw, '#');
        g_autofree char *content = hash ? g_strndup(raw, (gsize)(hash - raw)) : g_strdup(raw);
        g_strstrip(content);
        if (*content == '\0')
            continue;
        r->line = r->next;
        /* not GRegex: it gives up (NULL) on bytes that are not UTF-8 */
        g_auto(GStrv) parts = g_strsplit_set(content, " \t\r", -1);
        GPtrArray *kept = g_ptr_array_new();
        for (int i = 0; parts[i]; i++)
            if (*parts[i])
                g_ptr_array_add(kept, g_strdup(parts[i]));
        r->n_fields = (int)kept->len;
        g_ptr_array_add(kept, NULL);
        r->fields = (char **)g_ptr_array_free(kept, FALSE);
        return TRUE;
    }
    /* at the end, point just past the last line: that is where the field was expected */
    gboolean ends_in_newline = r->n_lines > 0 && r->lines[r->n_lines - 1][0] == '\0';
    r->line = r->n_lines + (ends_in_newline ? 0 : 1);
    return FALSE;
}

G_GNUC_PRINTF(3, 4)
static gboolean fail(reader *r, GError **error, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *what = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, "%s:%d: %s", r->label, r->line, what);
    return FALSE;
}

/* Reads the next content line and checks it holds exactly n fields named by `what`. */
static gboolean expect_line(reader *r, int n, const char *what, GError **error)
{
    if (!next_fields(r))
        return fail(r, error, _("unexpected end of file, expected %s"), what);
    if (r->n_fields < n)
        return fail(r, error, _("missing field: expected %s (%d values), found %d"), what, n,
                    r->n_fields);
    if (r->n_fields > n)
        return fail(r, error, _("expected %s (%d values), found %d"), what, n, r->n_fields);
    return TRUE;
}

static gboolean field_double(reader *r, int i, const char *name, double *out, GError **error)
{
    char *end = NULL;
    errno = 0;
    double v = g_ascii_strtod(r->fields[i], &end);
    if (end == r->fields[i] || *end != '\0' || errno != 0 || !isfinite(v))
        return fail(r, error, _("%s: '%s' is not a number"), name, r->fields[i]);
    *out = v;
    return TRUE;
}

static gboolean field_int(reader *r, int i, const char *name, long long min, long long max,
                          long long *out, GError **error)
{
    char *end = NULL;
    errno = 0;
    double as_double = g_ascii_strtod(r->fields[i], &end);
    /* MCML reads photon counts with %ld, but files in the wild say "1e6"; accept exact ones */
    if (end == r->fields[i] || *end != '\0' || errno != 0 || !isfinite(as_double) ||
        as_double != floor(as_double))
        return fail(r, error, _("%s: '%s' is not a whole number"), name, r->fields[i]);
    if (as_double < (double)min || as_double > (double)max)
        return fail(r, error, _("%s = %s is outside %lld..%lld"), name, r->fields[i], min, max);
    *out = (long long)as_double;
    return TRUE;
}

static gboolean check_index(reader *r, double n, const char *name, GError **error)
{
    if (n < 1.0)
        return fail(r, error, _("%s: refractive index %g is below 1"), name, n);
    return TRUE;
}

static gboolean parse_layer(reader *r, int k, fm_mcml_layer *layer, GError **error)
{
    g_autofree char *what = g_strdup_printf(_("layer %d (n mua mus g d)"), k + 1);
    if (!expect_line(r, 5, what, error))
        return FALSE;
    g_autofree char *name = g_strdup_printf(_("layer %d"), k + 1);
    if (!field_double(r, 0, name, &layer->n, error) ||
        !field_double(r, 1, name, &layer->mua_per_cm, error) ||
        !field_double(r, 2, name, &layer->mus_per_cm, error) ||
        !field_double(r, 3, name, &layer->g, error) ||
        !field_double(r, 4, name, &layer->thickness_cm, error))
        return FALSE;
    if (!check_index(r, layer->n, name, error))
        return FALSE;
    if (layer->mua_per_cm < 0)
        return fail(r, error, _("%s: mua = %g /cm is negative"), name, layer->mua_per_cm);
    if (layer->mus_per_cm < 0)
        return fail(r, error, _("%s: mus = %g /cm is negative"), name, layer->mus_per_cm);
    if (!(layer->g > -1.0 && layer->g < 1.0))
        return fail(r, error, _("%s: g = %g is outside (-1, 1)"), name, layer->g);
    if (layer->thickness_cm <= 0)
        return fail(r, error, _("%s: thickness d = %g cm must be positive"), name,
                    layer->thickness_cm);
    return TRUE;
}

static gboolean parse_run(reader *r, int index, fm_mci_run *run, GError **error)
{
    fm_mcml_params *p = &run->params;
    memset(p, 0, sizeof *p);
    p->record_absorption = 1;
    p->shared_cache = 1;
    p->seed = 1;

    g_autofree char *what =
        g_strdup_printf(_("run %d: output file name and format (A)"), index + 1);
    if (!expect_line(r, 2, what, error))
        return FALSE;
    run->line = r->line;
    run->output_name = g_strdup(r->fields[0]);
    if (g_ascii_toupper(r->fields[1][0]) != 'A' || r->fields[1][1] != '\0')
        return fail(r, error, _("output format '%s' is not supported (only A, ASCII)"),
                    r->fields[1]);
    run->format = 'A';

    long long photons = 0, nz = 0, nr = 0, na = 0, n_layers = 0;
    if (!expect_line(r, 1, _("number of photons"), error) ||
        !field_int(r, 0, _("number of photons"), 1, G_MAXINT64 / 2, &photons, error))
        return FALSE;
    p->n_photons = photons;

    if (!expect_line(r, 2, _("dz dr [cm]"), error) || !field_double(r, 0, "dz", &p->dz_cm, error) ||
        !field_double(r, 1, "dr", &p->dr_cm, error))
        return FALSE;
    if (p->dz_cm <= 0 || p->dr_cm <= 0)
        return fail(r, error, _("dz and dr must be positive (got %g, %g cm)"), p->dz_cm, p->dr_cm);

    if (!expect_line(r, 3, _("nz nr na"), error) ||
        !field_int(r, 0, "nz", 1, MAX_GRID, &nz, error) ||
        !field_int(r, 1, "nr", 1, MAX_GRID, &nr, error) ||
        !field_int(r, 2, "na", 1, MAX_GRID, &na, error))
        return FALSE;
    if (nz * nr > MAX_CELLS || nr * na > MAX_CELLS)
        return fail(r, error, _("grid of %lld x %lld x %lld cells is too large"), nz, nr, na);
    p->nz = (int)nz;
    p->nr = (int)nr;
    p->na = (int)na;

    if (!expect_line(r, 1, _("number of layers"), error) ||
        !field_int(r, 0, _("number of layers"), 1, FM_MCML_MAX_LAYERS, &n_layers, error))
        return FALSE;
    p->n_layers = (int)n_layers;

    if (!expect_line(r, 1, _("n for medium above"), error) ||
        !field_double(r, 0, _("medium above"), &p->n_above, error) ||
        !check_index(r, p->n_above, _("medium above"), error))
        return FALSE;
    for (int k = 0; k < p->n_layers; k++)
        if (!parse_layer(r, k, &p->layers[k], error))
            return FALSE;
    if (!expect_line(r, 1, _("n for medium below"), error) ||
        !field_double(r, 0, _("medium below"), &p->n_below, error) ||
        !check_index(r, p->n_below, _("medium below"), error))
        return FALSE;
    return TRUE;
}

void fm_mci_file_free(fm_mci_file *file)
{
    if (file == NULL)
        return;
    for (int i = 0; i < file->n_runs; i++)
        g_free(file->runs[i].output_name);
    g_free(file->runs);
    g_free(file->version);
    g_free(file);
}

fm_mci_file *fm_mci_parse(const char *text, const char *label, GError **error)
{
    g_return_val_if_fail(text != NULL, NULL);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    reader r = {.lines = lines, .n_lines = (int)g_strv_length(lines), .label = label};
    g_autoptr(fm_mci_file) file = g_new0(fm_mci_file, 1);
    gboolean ok = FALSE;
    long long n_runs = 0;

    if (!expect_line(&r, 1, _("file version (1.0)"), error))
        goto out;
    if (strcmp(r.fields[0], "1.0") != 0 && strcmp(r.fields[0], "1") != 0) {
        fail(&r, error, _("file version '%s' is not supported (expected 1.0)"), r.fields[0]);
        goto out;
    }
    file->version = g_strdup("1.0");
    if (!expect_line(&r, 1, _("number of runs"), error) ||
        !field_int(&r, 0, _("number of runs"), 1, 10000, &n_runs, error))
        goto out;
    file->runs = g_new0(fm_mci_run, n_runs);
    for (int i = 0; i < n_runs; i++) {
        file->n_runs = i + 1; /* so that a failure frees what was read */
        if (!parse_run(&r, i, &file->runs[i], error))
            goto out;
    }
    if (next_fields(&r)) {
        fail(&r, error, _("unexpected text after the last of %lld runs: '%s'"), n_runs,
             r.fields[0]);
        goto out;
    }
    ok = TRUE;
out:
    g_clear_pointer(&r.fields, g_strfreev);
    return ok ? g_steal_pointer(&file) : NULL;
}

fm_mci_file *fm_mci_read(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    g_autoptr(GError) local = NULL;
    if (!g_file_get_contents(path, &text, NULL, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot read: %s"), path,
                    local->message);
        return NULL;
    }
    g_autofree char *label = g_path_get_basename(path);
    return fm_mci_parse(text, label, error);
}

fm_mci_file *fm_mci_file_new_single(const fm_mcml_params *params, const char *output_name)
{
    fm_mci_file *file = g_new0(fm_mci_file, 1);
    file->version = g_strdup("1.0");
    file->n_runs = 1;
    file->runs = g_new0(fm_mci_run, 1);
    file->runs[0].output_name = g_strdup(output_name ? output_name : "fluxmap.mco");
    file->runs[0].format = 'A';
    file->runs[0].params = *params;
    return file;
}

/* %G as MCML prints its input parameters, independent of the locale's decimal mark. */
static const char *num(char buf[G_ASCII_DTOSTR_BUF_SIZE], double v)
{
    return g_ascii_formatd(buf, G_ASCII_DTOSTR_BUF_SIZE, "%G", v);
}

char *fm_mci_to_string(const fm_mci_file *file)
{
    GString *s = g_string_new(NULL);
    char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE], c[G_ASCII_DTOSTR_BUF_SIZE];
    char d[G_ASCII_DTOSTR_BUF_SIZE], e[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append(s, "##########################################\n"
                       "# MCML input file written by Fluxmap.\n"
                       "# Anything after a # is a comment; blank lines are ignored.\n"
                       "# Lengths are in cm, mua and mus in 1/cm.\n"
                       "##########################################\n\n");
    g_string_append_printf(s, "1.0\t\t\t# file version\n%d\t\t\t# number of runs\n\n",
                           file->n_runs);
    for (int i = 0; i < file->n_runs; i++) {
        const fm_mci_run *run = &file->runs[i];
        const fm_mcml_params *p = &run->params;
        g_string_append_printf(s,
                               "#### SPECIFY DATA FOR RUN %d\n#InParm\t\t\t# Input parameters. "
                               "cm is used.\n",
                               i + 1);
        g_string_append_printf(s, "%s\tA\t\t# output file name, ASCII.\n", run->output_name);
        g_string_append_printf(s, "%lld\t\t\t# No. of photons\n", p->n_photons);
        g_string_append_printf(s, "%s\t%s\t\t# dz, dr [cm]\n", num(a, p->dz_cm), num(b, p->dr_cm));
        g_string_append_printf(s, "%d\t%d\t%d\t# No. of dz, dr, da.\n\n", p->nz, p->nr, p->na);
        g_string_append_printf(s, "%d\t\t\t# Number of layers\n", p->n_layers);
        g_string_append(s, "#n\tmua\tmus\tg\td\t# One line for each layer\n");
        g_string_append_printf(s, "%s\t\t\t# n for medium above\n", num(a, p->n_above));
        for (int k = 0; k < p->n_layers; k++) {
            const fm_mcml_layer *l = &p->layers[k];
            g_string_append_printf(s, "%s\t%s\t%s\t%s\t%s\t# layer %d\n", num(a, l->n),
                                   num(b, l->mua_per_cm), num(c, l->mus_per_cm), num(d, l->g),
                                   num(e, l->thickness_cm), k + 1);
        }
        g_string_append_printf(s, "%s\t\t\t# n for medium below\n\n", num(a, p->n_below));
    }
    return g_string_free(s, FALSE);
}

gboolean fm_mci_write(const char *path, const fm_mci_file *file, GError **error)
{
    g_autofree char *text = fm_mci_to_string(file);
    g_autoptr(GError) local = NULL;
    if (!g_file_set_contents(path, text, -1, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write: %s"), path, local->message);
        return FALSE;
    }
    return TRUE;
}

fm_dataset *fm_mci_dataset_new(const char *path, GError **error)
{
    g_autoptr(fm_mci_file) check = fm_mci_read(path, error);
    if (check == NULL)
        return NULL;
    gsize sizes[2] = {1, 1};
    g_autoptr(fm_dataset) ds = fm_dataset_new(FM_PIXEL_F32, 2, sizes, NULL);
    ds->source_path = g_canonicalize_filename(path, NULL);
    if (!fm_dataset_hash_file(ds, error))
        return NULL;
    fm_dataset_set_meta(ds, "mcml_input", ds->source_path);
    fm_dataset_set_meta(ds, "format", "mci");
    return g_steal_pointer(&ds);
}
