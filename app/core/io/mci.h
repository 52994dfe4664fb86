/* MCML input files (.mci): reading with line-numbered errors, writing, and the built-in presets. */
#pragma once

#include <glib.h>

#include "app/core/dataset.h"
#include "kernels/mcml/mcml.h"

G_BEGIN_DECLS

/* One run of a .mci file: where MCML would write its output, and the simulation input. */
typedef struct {
    char *output_name; /* "sample.mco" */
    char format;       /* 'A' (ASCII); MCML's binary format is refused when reading */
    fm_mcml_params params;
    int line; /* line of the output-name field in the file (1-based), 0 if built */
} fm_mci_run;

typedef struct {
    char *version; /* "1.0" */
    int n_runs;
    fm_mci_run *runs;
} fm_mci_file;

void fm_mci_file_free(fm_mci_file *file);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fm_mci_file, fm_mci_file_free)

/* Parses .mci text as MCML 1.x reads it: '#' starts a comment, blank lines are skipped, fields
 * are whitespace separated. label names the file in messages ("skin.mci:14: layer 2: g = 1.2
 * is outside (-1, 1)"); errors are FM_ERROR_BAD_INPUT. */
fm_mci_file *fm_mci_parse(const char *text, const char *label, GError **error);
fm_mci_file *fm_mci_read(const char *path, GError **error);

/* A one-run file around params (copied). */
fm_mci_file *fm_mci_file_new_single(const fm_mcml_params *params, const char *output_name);
/* The file as MCML's template writes it (comments included); g_free it. */
char *fm_mci_to_string(const fm_mci_file *file);
gboolean fm_mci_write(const char *path, const fm_mci_file *file, GError **error);

/* Built-in presets, same content as data/mcml/<name>.mci: "skin7_600nm", "intralipid10",
 * "mcml_sample". NULL-terminated. */
const char *const *fm_mci_preset_names(void);
const char *fm_mci_preset_title(const char *name); /* "Seven-layer skin, 600 nm", N_() */
const char *fm_mci_preset_text(const char *name);  /* .mci text, or NULL if unknown */
fm_mci_file *fm_mci_preset(const char *name, GError **error);

/* A 1-element placeholder dataset that stands for an .mci file in jobs and the catalogue:
 * source_path is the file, sha256 its digest, metadata "mcml_input" = path. */
fm_dataset *fm_mci_dataset_new(const char *path, GError **error);

G_END_DECLS
