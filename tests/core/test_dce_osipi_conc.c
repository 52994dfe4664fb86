/* SPGR signal to concentration (dce_prep.c's fm_dce_convert_curve) against OSIPI's reference
 * curves (tests/data/osipi/SI_to_Conc/data/SI2Conc_data.csv) within OSIPI's tolerance
 * 1e-5 mM + 1e-5 relative, with OSIPI's conventions (test/SI_to_Conc, commit 40984f7): the
 * baseline is the mean of signal points 1 .. numbaselinepts - 1 (the first point is left out)
 * and the first concentration is not assessed. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "app/core/dce/dce_prep.h"

#ifndef OSIPI_CONC_CSV
#error "OSIPI_CONC_CSV must name SI2Conc_data.csv"
#endif

static double *numbers(const char *cell, int *n)
{
    g_auto(GStrv) parts = g_strsplit_set(cell, " ", -1);
    GArray *a = g_array_new(FALSE, FALSE, sizeof(double));
    for (char **p = parts; *p; p++) {
        if (!**p)
            continue;
        char *end = NULL;
        double v = g_ascii_strtod(*p, &end);
        g_assert_true(end != *p && *end == '\0');
        g_array_append_val(a, v);
    }
    *n = (int)a->len;
    return (double *)g_array_free(a, FALSE);
}

static void test_si_to_conc(void)
{
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(OSIPI_CONC_CSV, &text, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    /* label, FA (deg), TR (s), T1base (s), numbaselinepts, r1 (/mM/s), s, conc (mM) */
    g_assert_nonnull(strstr(lines[0], "label,FA,TR,T1base,numbaselinepts,r1,s,conc"));
    int curves = 0;
    for (char **line = lines + 1; *line; line++) {
        g_strstrip(*line);
        if (!**line)
            continue;
        g_auto(GStrv) cells = g_strsplit(*line, ",", -1);
        g_assert_cmpuint(g_strv_length(cells), ==, 8);
        fm_dce_conversion conv = {.kind = FM_DCE_CONV_SPGR,
                                  .baseline_frames = atoi(cells[4]) - 1,
                                  .t10_s = g_ascii_strtod(cells[3], NULL),
                                  .r1_per_mm_s = g_ascii_strtod(cells[5], NULL),
                                  .tr_ms = g_ascii_strtod(cells[2], NULL) * 1e3,
                                  .flip_deg = g_ascii_strtod(cells[1], NULL)};
        int n = 0, n_ref = 0;
        g_autofree double *curve = numbers(cells[6], &n);
        g_autofree double *ref = numbers(cells[7], &n_ref);
        g_assert_cmpint(n, ==, n_ref);
        g_assert_true(fm_dce_conversion_check(&conv, n - 1, NULL));
        fm_dce_convert_curve(&conv, conv.t10_s, curve + 1, n - 1);
        double worst = 0;
        for (int i = 1; i < n; i++) {
            double err = fabs(curve[i] - ref[i]), tol = 1e-5 + 1e-5 * fabs(ref[i]);
            worst = MAX(worst, err / tol);
            if (!(err <= tol))
                g_error("%s point %d: %.9g mM, OSIPI %.9g mM", cells[0], i, curve[i], ref[i]);
        }
        g_test_message("%s: %d points, worst %.3g of the tolerance", cells[0], n - 1, worst);
        curves++;
    }
    g_assert_cmpint(curves, ==, 5);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/core/dce/osipi-si-to-conc", test_si_to_conc);
    return g_test_run();
}
