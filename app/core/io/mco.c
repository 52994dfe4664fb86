/* MCML .mco output: written byte for byte in MCML 1.2's layout (WriteResult in mcmlio.c) so that
 * CONV and other readers of MCML output take it; a reader of the InParm and RAT sections. */
#include "mco.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>

#include "app/core/error.h"

/* printf-style number in the C locale: MCML files always use a decimal point. */
static void put(GString *s, const char *format, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append(s, g_ascii_formatd(buf, sizeof buf, format, v));
}

static double at(const double *array, gsize i)
{
    return array ? array[i] : 0.0;
}

static void write_inparm(GString *s, const fm_mci_run *run)
{
    const fm_mcml_params *p = &run->params;
    g_string_append(s, "InParm \t\t\t# Input parameters. cm is used.\n");
    g_string_append_printf(s, "%s \tA\t\t# output file name, ASCII.\n", run->output_name);
    g_string_append_printf(s, "%lld \t\t\t# No. of photons\n", p->n_photons);
    put(s, "%G", p->dz_cm);
    g_string_append_c(s, '\t');
    put(s, "%G", p->dr_cm);
    g_string_append(s, "\t\t# dz, dr [cm]\n");
    g_string_append_printf(s, "%d\t%d\t%d\t# No. of dz, dr, da.\n\n", p->nz, p->nr, p->na);
    g_string_append_printf(s, "%d\t\t\t\t\t# Number of layers\n", p->n_layers);
    g_string_append(s, "#n\tmua\tmus\tg\td\t# One line for each layer\n");
    put(s, "%G", p->n_above);
    g_string_append(s, "\t\t\t\t\t# n for medium above\n");
    for (int k = 0; k < p->n_layers; k++) {
        const fm_mcml_layer *l = &p->layers[k];
        const double v[5] = {l->n, l->mua_per_cm, l->mus_per_cm, l->g, l->thickness_cm};
        for (int j = 0; j < 5; j++) {
            put(s, "%G", v[j]);
            g_string_append_c(s, '\t');
        }
        g_string_append_printf(s, "# layer %d\n", k + 1);
    }
    put(s, "%G", p->n_below);
    g_string_append(s, "\t\t\t\t\t# n for medium below\n\n");
}

static void write_column(GString *s, const char *header, const double *v, int n, const char *format)
{
    g_string_append(s, header);
    g_string_append_c(s, '\n');
    for (int i = 0; i < n; i++) {
        put(s, format, at(v, (gsize)i));
        g_string_append_c(s, '\n');
    }
    g_string_append_c(s, '\n');
}

/* MCML prints "%12.4E " and a newline after every fifth value, then one more newline; the
 * reference file carries no trailing blanks, so the separator goes between values only. */
static void write_grid(GString *s, const char *const comments[5], const char *name, const double *v,
                       gsize n)
{
    for (int i = 0; i < 5; i++) {
        g_string_append(s, comments[i]);
        g_string_append_c(s, '\n');
    }
    g_string_append(s, name);
    g_string_append_c(s, '\n');
    for (gsize i = 0; i < n; i++) {
        if (i % 5 != 0)
            g_string_append_c(s, ' ');
        put(s, "%12.4E", at(v, i));
        if (i % 5 == 4)
            g_string_append_c(s, '\n');
    }
    g_string_append_c(s, '\n');
}

char *fm_mco_to_string(const fm_mci_run *run, const fm_mcml_result *r, double user_time_s)
{
    const fm_mcml_params *p = &run->params;
    GString *s = g_string_new(NULL);
    g_string_append(s, "A1 \t# Version number of the file format.\n\n"
                       "####\n# Data categories include:\n# InParm, RAT,\n"
                       "# A_l, A_z, Rd_r, Rd_a, Tt_r, Tt_a,\n# A_rz, Rd_ra, Tt_ra\n####\n\n");
    g_string_append(s, "# User time: ");
    put(s, "%8.2f", user_time_s);
    g_string_append(s, " sec = ");
    put(s, "%8.2f", user_time_s / 3600.0);
    g_string_append(s, " hr.   Simulation time of this run.\n\n");
    write_inparm(s, run);

    g_string_append(s, "RAT #Reflectance, absorption, transmission.\n");
    const double rat[4] = {r->rsp, r->rd, r->a, r->tt};
    const char *const rat_names[4] = {"#Specular reflectance [-]", "#Diffuse reflectance [-]",
                                      "#Absorbed fraction [-]", "#Transmittance [-]"};
    for (int i = 0; i < 4; i++) {
        put(s, "%-14.6G", rat[i]);
        g_string_append_printf(s, " \t%s\n", rat_names[i]);
    }
    g_string_append_c(s, '\n');

    write_column(s, "A_l #Absorption as a function of layer. [-]", r->a_layer, p->n_layers,
                 "%12.4G");
    write_column(s, "A_z #A[0], [1],..A[nz-1]. [1/cm]", r->a_z, p->nz, "%12.4E");
    write_column(s, "Rd_r #Rd[0], [1],..Rd[nr-1]. [1/cm2]", r->rd_r, p->nr, "%12.4E");
    write_column(s, "Rd_a #Rd[0], [1],..Rd[na-1]. [sr-1]", r->rd_a, p->na, "%12.4E");
    write_column(s, "Tt_r #Tt[0], [1],..Tt[nr-1]. [1/cm2]", r->tt_r, p->nr, "%12.4E");
    write_column(s, "Tt_a #Tt[0], [1],..Tt[na-1]. [sr-1]", r->tt_a, p->na, "%12.4E");

    static const char *const a_rz[5] = {"# A[r][z]. [1/cm3]", "# A[0][0], [0][1],..[0][nz-1]",
                                        "# A[1][0], [1][1],..[1][nz-1]", "# ...",
                                        "# A[nr-1][0], [nr-1][1],..[nr-1][nz-1]"};
    static const char *const rd_ra[5] = {
        "# Rd[r][angle]. [1/(cm2sr)].", "# Rd[0][0], [0][1],..[0][na-1]",
        "# Rd[1][0], [1][1],..[1][na-1]", "# ...", "# Rd[nr-1][0], [nr-1][1],..[nr-1][na-1]"};
    static const char *const tt_ra[5] = {
        "# Tt[r][angle]. [1/(cm2sr)].", "# Tt[0][0], [0][1],..[0][na-1]",
        "# Tt[1][0], [1][1],..[1][na-1]", "# ...", "# Tt[nr-1][0], [nr-1][1],..[nr-1][na-1]"};
    write_grid(s, a_rz, "A_rz", r->a_rz, (gsize)p->nr * (gsize)p->nz);
    write_grid(s, rd_ra, "Rd_ra", r->rd_ra, (gsize)p->nr * (gsize)p->na);
    write_grid(s, tt_ra, "Tt_ra", r->tt_ra, (gsize)p->nr * (gsize)p->na);
    /* the reference file ends with the last row: no blank line after the final section */
    if (s->len >= 2 && s->str[s->len - 1] == '\n' && s->str[s->len - 2] == '\n')
        g_string_truncate(s, s->len - 1);
    return g_string_free(s, FALSE);
}

gboolean fm_mco_write(const char *path, const fm_mci_run *run, const fm_mcml_result *result,
                      double user_time_s, GError **error)
{
    g_autofree char *text = fm_mco_to_string(run, result, user_time_s);
    g_autoptr(GError) local = NULL;
    if (!g_file_set_contents(path, text, -1, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write: %s"), path, local->message);
        return FALSE;
    }
    return TRUE;
}

/* The first number on a line, or FALSE. */
static gboolean leading_number(const char *line, double *value)
{
    char *end = NULL;
    errno = 0;
    *value = g_ascii_strtod(line, &end);
    return end != line && errno == 0;
}

gboolean fm_mco_read_totals(const char *path, fm_mco_totals *totals, GError **error)
{
    g_autofree char *text = NULL;
    g_autoptr(GError) local = NULL;
    g_autofree char *label = g_path_get_basename(path);
    if (!g_file_get_contents(path, &text, NULL, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot read: %s"), path,
                    local->message);
        return FALSE;
    }
    memset(totals, 0, sizeof *totals);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    int n = (int)g_strv_length(lines), inparm = -1, rat = -1;
    for (int i = 0; i < n; i++) {
        if (inparm < 0 && g_str_has_prefix(lines[i], "InParm"))
            inparm = i;
        if (rat < 0 && g_str_has_prefix(lines[i], "RAT"))
            rat = i;
    }
    if (inparm < 0 || rat < 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: no %s section"), label,
                    inparm < 0 ? "InParm" : "RAT");
        return FALSE;
    }
    /* InParm: name, photons, dz dr, nz nr na, layers (blank line before the layer count) */
    double v[4];
    int got = 0;
    if (inparm + 4 < n && leading_number(lines[inparm + 2], &v[0]) &&
        sscanf(lines[inparm + 4], "%d %d %d", &totals->nz, &totals->nr, &totals->na) == 3)
        got = 1;
    if (got && inparm + 6 < n && sscanf(lines[inparm + 6], "%d", &totals->n_layers) == 1)
        totals->n_photons = (long long)v[0];
    else {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s:%d: malformed InParm section"),
                    label, inparm + 1);
        return FALSE;
    }
    for (int k = 0; k < 4; k++) {
        if (rat + 1 + k >= n || !leading_number(lines[rat + 1 + k], &v[k])) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s:%d: expected a number in the RAT section"), label, rat + 2 + k);
            return FALSE;
        }
    }
    totals->rsp = v[0];
    totals->rd = v[1];
    totals->a = v[2];
    totals->tt = v[3];
    return TRUE;
}
