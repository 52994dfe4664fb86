/* FmMcmlView internals shared by mcml-view.c (logic) and mcml-view-ui.c (widgets). */
#pragma once

#include "app/core/catalogue.h"
#include "app/core/job.h"
#include "mcml-view.h"
#include "kernels/mcml/mcml.h"

G_BEGIN_DECLS

enum { COL_N, COL_MUA, COL_MUS, COL_G, COL_D, N_COLS };
enum {
    SPIN_DZ,
    SPIN_DR,
    SPIN_NZ,
    SPIN_NR,
    SPIN_NA,
    SPIN_PHOTONS,
    SPIN_N_ABOVE,
    SPIN_N_BELOW,
    N_SPINS
};

struct _FmMcmlView {
    GtkBox parent_instance; /* the fluence map and plots: the page's centre view */
    GtkWidget *panel;       /* the editor, run and totals: the page's side panel (owned) */
    GtkListStore *layers;
    GtkWidget *tree, *preset, *mode, *backend, *run, *cancel, *progress, *status;
    GtkWidget *spins[N_SPINS];
    GtkWidget *area, *rd_plot, *tt_plot, *rda_plot, *totals[4];
    char *status_text;
    char *model_name;  /* file stem of the model: preset id or the .mci's name */
    char *model_title; /* what the user calls it: the preset's title or the .mci's file name */
    fm_catalogue *catalogue;
    gboolean owns_catalogue; /* opened here (no window's catalogue was given) */
    fm_job *job;
    fm_mcml_params last_params; /* of the run on display */
    char *last_output_name;
    fm_result *last_result; /* copy of the maps needed for .mco and the views */
    float *log_fluence;     /* nr x nz, log10 */
    double bounds[FM_MCML_MAX_LAYERS];
    double shown_totals[4];
};

/* Builds the widgets into self (mcml-view-ui.c). */
void fm_mcml_view_build(FmMcmlView *self);
void fm_mcml_view_set_status(FmMcmlView *self, const char *text);

G_END_DECLS
