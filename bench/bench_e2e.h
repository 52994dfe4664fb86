/* fluxmap-bench e2e: the workloads it times through core and the input files they read. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* One method of a workload with the parameters the table names ("window=5"); the
 * others keep the schema's defaults. */
typedef struct {
    const char *id;
    const char *const *params; /* "key=value", NULL-terminated, or NULL */
} fm_bench_e2e_method;

/* The file(s) a workload reads, in the inputs folder. */
typedef struct {
    char *input;   /* what fm_dataset_open reads */
    char *rois;    /* ROI file (--roi of fluxmap-cli run), or NULL */
    char *summary; /* "30 frames 1392x1040 uint16 12-bit TIFF" */
} fm_bench_e2e_input;

typedef struct {
    const char *family; /* "lsi": what --family names */
    const fm_bench_e2e_method *methods;
    int n_methods;
    /* Fills input with paths in dir; writes the files with the project's simulators unless an
     * earlier run completed them there (*generated says which). small: tiny sizes for CI. */
    gboolean (*prepare)(const char *dir, gboolean small, fm_bench_e2e_input *input,
                        gboolean *generated, GError **error);
} fm_bench_e2e_workload;

/* LSI, FLIM, OCT, DCE in the order the tables are printed. */
const fm_bench_e2e_workload *fm_bench_e2e_workloads(int *n_workloads);

void fm_bench_e2e_input_clear(fm_bench_e2e_input *input);

G_END_DECLS
