/* Reads OSIPI's DCE model reference CSVs (tests/data/osipi/DCEmodels/data): a header row of column
 * names, then one case per row; a cell holds one number or a space-separated series. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OSIPI_MAX_COLS 16
#define OSIPI_MAX_SERIES 1024

typedef struct {
    int n_cols;
    char names[OSIPI_MAX_COLS][32];
    FILE *file;
    char *line;
    size_t cap;
    char *cells[OSIPI_MAX_COLS];
} osipi_csv;

static int osipi_split(char *line, char **cells)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *s = line; n < OSIPI_MAX_COLS;) {
        cells[n++] = s;
        char *comma = strchr(s, ',');
        if (!comma)
            break;
        *comma = '\0';
        s = comma + 1;
    }
    return n;
}

static int osipi_open(osipi_csv *csv, const char *path)
{
    memset(csv, 0, sizeof *csv);
    csv->file = fopen(path, "r");
    if (!csv->file || getline(&csv->line, &csv->cap, csv->file) < 0)
        return 0;
    char *cells[OSIPI_MAX_COLS];
    csv->n_cols = osipi_split(csv->line, cells);
    for (int i = 0; i < csv->n_cols; i++)
        snprintf(csv->names[i], sizeof csv->names[i], "%s", cells[i]);
    return 1;
}

/* Next case; 0 at the end of the file. */
static int osipi_next(osipi_csv *csv)
{
    if (getline(&csv->line, &csv->cap, csv->file) < 0)
        return 0;
    return osipi_split(csv->line, csv->cells) == csv->n_cols;
}

static const char *osipi_cell(const osipi_csv *csv, const char *name)
{
    for (int i = 0; i < csv->n_cols; i++)
        if (strcmp(csv->names[i], name) == 0)
            return csv->cells[i];
    return NULL;
}

static double osipi_number(const osipi_csv *csv, const char *name)
{
    const char *cell = osipi_cell(csv, name);
    return cell ? strtod(cell, NULL) : NAN;
}

/* The series of column name into v (at most OSIPI_MAX_SERIES values); returns its length. */
static int osipi_series(const osipi_csv *csv, const char *name, double *v)
{
    const char *s = osipi_cell(csv, name);
    int n = 0;
    while (s && n < OSIPI_MAX_SERIES) {
        char *end;
        const double x = strtod(s, &end);
        if (end == s)
            break;
        v[n++] = x;
        s = end;
    }
    return n;
}

static void osipi_close(osipi_csv *csv)
{
    if (csv->file)
        fclose(csv->file);
    free(csv->line);
}
