/* MCML output files (.mco): the text layout MCML 1.2 writes, and a reader of its totals. */
#pragma once

#include <glib.h>

#include "app/core/io/mci.h"
#include "kernels/mcml/mcml.h"

G_BEGIN_DECLS

/* The .mco text for one run: header, InParm (the input as read), RAT, A_l, A_z, Rd_r, Rd_a,
 * Tt_r, Tt_a, A_rz, Rd_ra, Tt_ra, with MCML's comments, units and number formats (%12.4E, five
 * per line in the 2-D arrays). NULL arrays are written as zeros. user_time_s goes into the
 * "# User time" line. g_free it. */
char *fm_mco_to_string(const fm_mci_run *run, const fm_mcml_result *result, double user_time_s);
gboolean fm_mco_write(const char *path, const fm_mci_run *run, const fm_mcml_result *result,
                      double user_time_s, GError **error);

typedef struct {
    long long n_photons; /* from InParm */
    int nz, nr, na, n_layers;
    double rsp, rd, a, tt; /* RAT */
} fm_mco_totals;

/* Reads InParm and RAT of a .mco (MCML's or ours); FM_ERROR_BAD_INPUT with the line number. */
gboolean fm_mco_read_totals(const char *path, fm_mco_totals *totals, GError **error);

G_END_DECLS
