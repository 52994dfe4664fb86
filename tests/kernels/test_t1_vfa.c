/* VFA T1 mapping (kernels/dce/t1_vfa.h) against OSIPI's in-vivo references (brain and prostate,
 * tests/data/osipi/T1_mapping) with OSIPI's tolerance on R1 (|R1 - ref| <= 0.05 /s + 0.05 |ref|,
 * test/T1_mapping/t1_data.py at commit 40984f7), and against noise-free SPGR signals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dce/t1_vfa.h"
#include "tap.h"

#ifndef OSIPI_T1_DIR
#error "OSIPI_T1_DIR must name tests/data/osipi/T1_mapping/data"
#endif

enum { MAX_ROWS = 128, MAX_FIELDS = 16, MAX_VALUES = 16 };

typedef struct {
    char label[64];
    int n_fields;
    int n_values[MAX_FIELDS];
    double values[MAX_FIELDS][MAX_VALUES]; /* a cell holds numbers separated by spaces */
} csv_row;

/* Reads OSIPI's CSV (one header line; cells of space-separated numbers after the label). */
static int read_csv(const char *name, csv_row *rows, int max_rows)
{
    char path[512], line[4096];
    snprintf(path, sizeof path, "%s/%s", OSIPI_T1_DIR, name);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return -1;
    int n = 0;
    if (!fgets(line, sizeof line, fp)) {
        fclose(fp);
        return -1;
    }
    while (n < max_rows && fgets(line, sizeof line, fp)) {
        csv_row *r = &rows[n];
        memset(r, 0, sizeof *r);
        char *save = NULL, *cell = strtok_r(line, ",", &save);
        if (!cell)
            continue;
        snprintf(r->label, sizeof r->label, "%s", cell);
        while ((cell = strtok_r(NULL, ",", &save)) && r->n_fields < MAX_FIELDS) {
            char *p = cell, *end = NULL;
            int k = 0;
            for (double v = strtod(p, &end); end != p && k < MAX_VALUES; v = strtod(p, &end)) {
                r->values[r->n_fields][k++] = v;
                p = end;
            }
            r->n_values[r->n_fields++] = k;
        }
        n++;
    }
    fclose(fp);
    return n;
}

static int within_osipi(double r1, double ref)
{
    return isfinite(r1) && fabs(r1 - ref) <= 0.05 + 0.05 * fabs(ref);
}

/* One voxel through the batch entry point (the path the method takes). */
static int fit_one(fm_t1_vfa_fit_kind kind, const double *fa_deg, int n, const double *s,
                   double tr_s, double b1, double *t1_s, double *m0)
{
    float sig[MAX_VALUES], k = (float)b1;
    for (int i = 0; i < n; i++)
        sig[i] = (float)s[i];
    fm_t1_vfa_params p = {.n_angles = n, .flip_deg = fa_deg, .tr_s = tr_s, .kind = kind};
    fm_t1_vfa_outputs out = {.t1_s = t1_s, .m0 = m0, .rmse = NULL};
    char msg[FM_MSG_LEN];
    fm_status st = fm_t1_vfa_fit(&p, sig, &k, 1, &out, NULL, NULL, NULL, msg, sizeof msg);
    return st == FM_OK && isfinite(*t1_s);
}

/* Brain (Edinburgh, 3 T, 3 angles): R1 reference from their HIFI code, not B1-corrected. */
static void test_brain(void)
{
    static csv_row rows[MAX_ROWS];
    int n = read_csv("t1_brain_data.csv", rows, MAX_ROWS);
    tap_ok(n == 76, "t1_brain_data.csv: %d voxels", n);
    for (int kind = 0; kind < 2; kind++) {
        int pass = 0, worst = -1;
        double worst_err = 0;
        for (int r = 0; r < n; r++) {
            const csv_row *row = &rows[r]; /* FA, TR (s), s, R1, s0 */
            double t1 = NAN, m0 = NAN;
            fit_one(kind, row->values[0], row->n_values[0], row->values[2], row->values[1][0], 1.0,
                    &t1, &m0);
            double ref = row->values[3][0], err = fabs(1.0 / t1 - ref) / (0.05 + 0.05 * ref);
            pass += within_osipi(1.0 / t1, ref);
            if (!(err <= worst_err)) {
                worst_err = err;
                worst = r;
            }
        }
        tap_ok(pass == n,
               "brain %s: %d of %d voxels within OSIPI's R1 tolerance (worst %s at "
               "%.2f of the tolerance)",
               kind ? "nonlinear" : "linear", pass, n, worst >= 0 ? rows[worst].label : "-",
               worst_err);
    }
}

/* Prostate (NKI, 3 T, 5 angles, TR in ms, B1 in percent): T1 references in ms from their
 * linear and nonlinear fits, with and without B1 correction. OSIPI compares every fit with the
 * nonlinear uncorrected T1 and expects the linear fit of Pat5_voxel5 (low SNR) to fail. */
static void test_prostate(void)
{
    static csv_row rows[MAX_ROWS];
    int n = read_csv("t1_prostate_data.csv", rows, MAX_ROWS);
    tap_ok(n == 50, "t1_prostate_data.csv: %d voxels", n);
    /* columns after the label: 0 FA, 1 TR, 2 s, 3 B1, 4 T1 lin, 5 s0 lin, 6 T1 nonlin,
     * 7 s0 nonlin, 8 T1 lin B1cor, 9 s0 lin B1cor, 10 T1 nonlin B1cor, 11 s0 nonlin B1cor */
    /* expected_fail: OSIPI's xf_labels for its own test; for the B1-corrected linear column
     * (which OSIPI does not test), Pat1_voxel5, whose reference (1057.6 ms) contradicts the
     * same voxel's uncorrected linear T1 (1230.8 ms) at B1 100.5 %: VFA T1 scales as about
     * 1/B1^2, so 1218 ms is expected, and the nonlinear B1-corrected reference (1237.1 ms)
     * agrees. The voxel counts either way; the output says which way it went. */
    const struct {
        fm_t1_vfa_fit_kind kind;
        int b1, ref_col, s0_col;
        const char *what, *expected_fail;
    } cases[] = {
        {FM_T1_VFA_NONLINEAR, 0, 6, 7, "nonlinear vs nonlinear reference (OSIPI's test)", NULL},
        {FM_T1_VFA_LINEAR, 0, 6, 5, "linear vs nonlinear reference (OSIPI's test)",
         "Pat5_voxel5_prostaat"},
        {FM_T1_VFA_LINEAR, 0, 4, 5, "linear vs linear reference", NULL},
        {FM_T1_VFA_NONLINEAR, 1, 10, 11, "nonlinear with B1 vs nonlinear B1-corrected reference",
         NULL},
        {FM_T1_VFA_LINEAR, 1, 8, 9, "linear with B1 vs linear B1-corrected reference",
         "Pat1_voxel5_prostaat"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int pass = 0, expected_fail_ok = 0, s0_close = 0;
        char failed[512] = "";
        for (int r = 0; r < n; r++) {
            const csv_row *row = &rows[r];
            double t1 = NAN, m0 = NAN;
            double b1 = cases[c].b1 ? row->values[3][0] / 100.0 : 1.0;
            fit_one(cases[c].kind, row->values[0], row->n_values[0], row->values[2],
                    row->values[1][0] * 1e-3, b1, &t1, &m0);
            double ref_r1 = 1000.0 / row->values[cases[c].ref_col][0];
            int ok = within_osipi(1.0 / t1, ref_r1);
            s0_close += fabs(m0 - row->values[cases[c].s0_col][0]) <=
                        0.05 * row->values[cases[c].s0_col][0];
            if (cases[c].expected_fail && strcmp(row->label, cases[c].expected_fail) == 0) {
                expected_fail_ok = ok;
                pass++;
                continue;
            }
            pass += ok;
            if (!ok && strlen(failed) < sizeof failed - 80)
                snprintf(failed + strlen(failed), sizeof failed - strlen(failed),
                         " %.40s (T1 %.1f ms, ref %.1f ms)", row->label, t1 * 1e3,
                         row->values[cases[c].ref_col][0]);
        }
        tap_ok(pass == n, "prostate %s: %d of %d within OSIPI's R1 tolerance%s%s%s", cases[c].what,
               pass, n, failed[0] ? "; failed:" : "", failed,
               !cases[c].expected_fail ? ""
               : expected_fail_ok      ? "; the voxel expected to fail passes"
                                       : "; the voxel expected to fail fails");
        printf("# %s: S0 within 5 %% of the reference's in %d of %d voxels\n", cases[c].what,
               s0_close, n);
    }
}

static double spgr(double m0, double t1, double tr, double a)
{
    double e = exp(-tr / t1);
    return m0 * sin(a) * (1 - e) / (1 - cos(a) * e);
}

/* Noise-free signals: both fits return the truth; a B1 map scales the angles; unusable voxels
 * are NaN and counted. */
static void test_synthetic(void)
{
    const double fa[4] = {3, 8, 15, 25}, tr = 0.005, t1s[3] = {0.3, 1.2, 3.5};
    const double b1s[3] = {1.0, 0.8, 1.15};
    enum { NV = 9 + 2 };
    float sig[NV * 4], b1[NV];
    for (int v = 0; v < 9; v++) {
        b1[v] = (float)b1s[v / 3];
        for (int i = 0; i < 4; i++)
            sig[v * 4 + i] = (float)spgr(1000.0, t1s[v % 3], tr, b1s[v / 3] * fa[i] * M_PI / 180);
    }
    for (int i = 0; i < 4; i++) {
        sig[9 * 4 + i] = NAN;   /* a voxel outside the image */
        sig[10 * 4 + i] = 0.0f; /* no signal: no line, no M0 > 0 */
    }
    b1[9] = b1[10] = 1;
    for (int kind = 0; kind < 2; kind++) {
        double t1[NV], m0[NV], rmse[NV];
        fm_t1_vfa_params p = {.n_angles = 4, .flip_deg = fa, .tr_s = tr, .kind = kind};
        fm_t1_vfa_outputs out = {t1, m0, rmse};
        fm_run_info info;
        char msg[FM_MSG_LEN] = "";
        fm_status st = fm_t1_vfa_fit(&p, sig, b1, NV, &out, NULL, NULL, &info, msg, sizeof msg);
        double worst = 0, worst_m0 = 0;
        for (int v = 0; v < 9; v++) {
            worst = fmax(worst, fabs(t1[v] / t1s[v % 3] - 1));
            worst_m0 = fmax(worst_m0, fabs(m0[v] / 1000.0 - 1));
        }
        /* float32 signals carry 6e-8 relative error; T1 amplifies it at most ~100-fold. */
        tap_ok(st == FM_OK && worst < 1e-5 && worst_m0 < 1e-5,
               "synthetic %s: T1 and M0 with B1 0.8..1.15 within %.1e and %.1e of the truth",
               kind ? "nonlinear" : "linear", worst, worst_m0);
        tap_ok(isnan(t1[9]) && isnan(m0[9]) && isnan(t1[10]) && info.invalid_values == 2,
               "synthetic %s: a NaN voxel and one without a T1 are NaN and counted (%lld)",
               kind ? "nonlinear" : "linear", info.invalid_values);
    }
    fm_t1_vfa_params bad = {.n_angles = 2, .flip_deg = fa, .tr_s = 0, .kind = 0};
    double t1, m0;
    fm_t1_vfa_outputs out = {&t1, &m0, NULL};
    char msg[FM_MSG_LEN] = "";
    tap_ok(fm_t1_vfa_fit(&bad, sig, NULL, 1, &out, NULL, NULL, NULL, msg, sizeof msg) ==
               FM_ERR_INVALID_ARG,
           "TR 0 is refused: %s", msg);
}

int main(void)
{
    test_synthetic();
    test_brain();
    test_prostate();
    return tap_done();
}
