/* The start page's demos: one dataset per family, generated at build time by the project's own
 * simulators (data/demo/), and what opening each one sets up. */
#pragma once

#include <gtk/gtk.h>

#include "window.h"

G_BEGIN_DECLS

typedef struct {
    const char *id;      /* "lsi", "flim", "dce", "oct", "mcml" */
    const char *title;   /* card title */
    const char *what;    /* one line on the data and what to try */
    const char *file;    /* in the demo folder, or NULL (MCML runs from a preset) */
} fm_demo;

/* The demos, in start-page order; *n_demos gets their number. */
const fm_demo *fm_demos(gsize *n_demos);

/* The folder with the demo files: $FLUXMAP_DEMO_DIR, else the build tree's data/demo when this
 * is an uninstalled build, else the installed one. Free it. */
char *fm_demo_dir(void);

/* TRUE when the demo's file exists (always for MCML). */
gboolean fm_demo_available(const fm_demo *demo);

/* Opens the demo in win, as a newcomer would want it: the dataset, and its IRF, ROIs or preset.
 * FALSE (and a message in the window) when the demo files are missing. */
gboolean fm_demo_open(FmWindow *win, const char *id);

G_END_DECLS
