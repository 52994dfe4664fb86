/* Pharmacokinetic fits (CPU twin) on OSIPI's DCE model reference cases (Apache-2.0, copied from
 * OSIPI/DCE-DSC-MRI_CodeCollection test/DCEmodels at commit 40984f7): every 2CXM, 2CUM and Patlak
 * case with and without delay, and the extended-Tofts DRO, as is and delayed by 5 frames as
 * OSIPI's test code does. A case passes when every reference parameter is within OSIPI's
 * tolerance |x - ref| <= a_tol + r_tol |ref| (test/DCEmodels/DCEmodels_data.py). TAP. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/dce/pk.h"
#include "osipi_csv.h"
#include "tap.h"

typedef struct {
    const char *column; /* reference column */
    int output;         /* FM_PK_OUT_* compared */
    double a_tol, r_tol;
} tolerance;

/* OSIPI's tolerances: Ktrans/PS 0.005 /min + 10 %, ve 0.05, vp 0.025, Fp 5 ml/100ml/min + 10 %,
 * delay 1 s. */
static const tolerance tol_vp = {"vp", FM_PK_OUT_VP, 0.025, 0};
static const tolerance tol_ve = {"ve", FM_PK_OUT_VE, 0.05, 0};
static const tolerance tol_fp = {"fp", FM_PK_OUT_FP, 5, 0.1};
static const tolerance tol_ps = {"ps", FM_PK_OUT_PS, 0.005, 0.1};
static const tolerance tol_ktrans = {"Ktrans", FM_PK_OUT_KTRANS, 0.005, 0.1};

typedef struct {
    int cases, passed, below_reference;
    double worst; /* largest |x - ref| / (a_tol + r_tol |ref|) */
} tally;

/* Fits one case and checks it; shift > 0 delays the tissue curve by that many frames (zeros
 * before), which adds t[shift] to the reference delay. */
static void run_case(const osipi_csv *csv, fm_pk_model model, int fit_delay, const char *curve_col,
                     const char *input_col, const tolerance *tols, int n_tols,
                     const char *delay_col, int shift, tally *t)
{
    static double times[OSIPI_MAX_SERIES], cp[OSIPI_MAX_SERIES], c[OSIPI_MAX_SERIES];
    static float tissue[OSIPI_MAX_SERIES];
    const int nt = osipi_series(csv, "t", times);
    const int nc = osipi_series(csv, curve_col, c), na = osipi_series(csv, input_col, cp);
    char label[96];
    snprintf(label, sizeof label, "%s%s", osipi_cell(csv, "label"), shift ? "_delayed" : "");
    if (nt < 4 || nc != nt || na != nt) {
        tap_ok(0, "%s: %d times, %d tissue and %d input values", label, nt, nc, na);
        return;
    }
    for (int i = 0; i < nt; i++)
        tissue[i] = (float)(i < shift ? 0 : c[i - shift]);
    fm_pk_params p;
    fm_pk_params_defaults(&p, model);
    p.n_times = nt;
    p.times_s = times;
    p.cp = cp;
    p.fit_delay = fit_delay;
    double maps[FM_PK_OUT_COUNT];
    fm_pk_outputs out;
    for (int o = 0; o < FM_PK_OUT_COUNT; o++) {
        maps[o] = NAN;
        out.map[o] = &maps[o];
    }
    char msg[FM_MSG_LEN] = "";
    const fm_status st =
        fm_pk_fit(&p, tissue, 1, &out, FM_BACKEND_CPU, NULL, NULL, NULL, msg, sizeof msg);
    int ok = st == FM_OK;
    double worst = 0;
    char detail[512] = "";
    size_t len = 0;
    for (int k = 0; k <= n_tols; k++) {
        tolerance tl;
        if (k < n_tols)
            tl = tols[k];
        else if (fit_delay)
            tl = (tolerance){delay_col, FM_PK_OUT_DELAY, 1, 0};
        else
            break;
        double ref = osipi_number(csv, tl.column);
        if (tl.output == FM_PK_OUT_DELAY && shift)
            ref += times[shift];
        const double x = maps[tl.output], err = fabs(x - ref) / (tl.a_tol + tl.r_tol * fabs(ref));
        worst = fmax(worst, isnan(err) ? INFINITY : err);
        ok &= err <= 1;
        len +=
            snprintf(detail + len, sizeof detail - len, " %s %.4g (ref %.4g)", tl.column, x, ref);
    }
    t->cases++;
    t->passed += ok;
    t->worst = fmax(t->worst, worst);
    /* A miss where the fit's cost is below the cost of the reference parameters is the
     * least-squares estimate itself lying outside the tolerance on this noise draw, not the
     * optimiser stopping short: reported as a TAP TODO (a known deviation), not as a pass. */
    double theta[FM_PK_N_PARAMS] = {0}, model_curve[OSIPI_MAX_SERIES], ss_ref = 0;
    const char *const ref_cols[FM_PK_N_PARAMS] = {"Ktrans", "ve", "vp", "fp", "ps", NULL};
    for (int s = 0; s < FM_PK_DELAY; s++)
        theta[s] = fm_pk_model_uses(&p, s) ? osipi_number(csv, ref_cols[s]) : 0;
    if (model == FM_PK_PATLAK)
        theta[FM_PK_KTRANS] = osipi_number(csv, "ps");
    theta[FM_PK_DELAY] = fit_delay ? osipi_number(csv, delay_col) + (shift ? times[shift] : 0) : 0;
    fm_pk_model_curve(&p, theta, model_curve, msg, sizeof msg);
    for (int i = 0; i < nt; i++)
        ss_ref += (tissue[i] - model_curve[i]) * (tissue[i] - model_curve[i]);
    const double rmse_ref = sqrt(ss_ref / nt);
    if (!ok && st == FM_OK && maps[FM_PK_OUT_RMSE] < rmse_ref) {
        tap_count++;
        printf("not ok %d - %s %s%s:%s; worst error/tolerance %.2f # TODO the fit's rmse %.6g is "
               "below the reference parameters' %.6g: the least-squares minimum of this noise "
               "draw lies outside the tolerance\n",
               tap_count, fm_pk_model_name(model), label, fit_delay ? " (delay fitted)" : "",
               detail, worst, maps[FM_PK_OUT_RMSE], rmse_ref);
        t->below_reference++;
        return;
    }
    tap_ok(ok, "%s %s%s:%s; worst error/tolerance %.2f (rmse %.6g, reference parameters %.6g)%s%s",
           fm_pk_model_name(model), label, fit_delay ? " (delay fitted)" : "", detail, worst,
           maps[FM_PK_OUT_RMSE], rmse_ref, st == FM_OK ? "" : " ", msg);
}

static void run_file(const char *name, fm_pk_model model, int fit_delay, const char *curve_col,
                     const char *input_col, const tolerance *tols, int n_tols,
                     const char *delay_col, int shift)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/DCEmodels/data/%s", FM_OSIPI_DIR, name);
    osipi_csv csv;
    tally t = {0, 0, 0, 0};
    if (!osipi_open(&csv, path)) {
        tap_ok(0, "%s opens", path);
        osipi_close(&csv);
        return;
    }
    while (osipi_next(&csv))
        run_case(&csv, model, fit_delay, curve_col, input_col, tols, n_tols, delay_col, shift, &t);
    osipi_close(&csv);
    printf(
        "# %s%s: %d of %d cases within OSIPI's tolerance, worst error/tolerance %.3f; %d outside "
        "with a cost below the reference parameters'\n",
        name, shift ? " delayed 5 frames" : "", t.passed, t.cases, t.worst, t.below_reference);
}

int main(void)
{
    const tolerance cxm[] = {tol_vp, tol_ve, tol_fp, tol_ps};
    const tolerance cum[] = {tol_vp, tol_fp, tol_ps};
    const tolerance patlak[] = {tol_vp, tol_ps};
    const tolerance etofts[] = {tol_ve, tol_vp, tol_ktrans};
    /* delay_0 files: delay fixed at 0; delay_5 files: delay fitted (OSIPI's fixed_delay=None). */
    run_file("2cxm_sd_0.001_delay_0.csv", FM_PK_2CXM, 0, "C_t", "cp_aif", cxm, 4, NULL, 0);
    run_file("2cxm_sd_0.001_delay_5.csv", FM_PK_2CXM, 1, "C_t", "cp_aif", cxm, 4, "arterial_delay",
             0);
    run_file("2cum_sd_0.0025_delay_0.csv", FM_PK_2CUM, 0, "C_t", "cp_aif", cum, 3, NULL, 0);
    run_file("2cum_sd_0.0025_delay_5.csv", FM_PK_2CUM, 1, "C_t", "cp_aif", cum, 3, "arterial_delay",
             0);
    run_file("patlak_sd_0.02_delay_0.csv", FM_PK_PATLAK, 0, "C_t", "cp_aif", patlak, 2, NULL, 0);
    run_file("patlak_sd_0.02_delay_5.csv", FM_PK_PATLAK, 1, "C_t", "cp_aif", patlak, 2,
             "arterial_delay", 0);
    /* The DRO's input ca is used as the plasma input, as in every OSIPI extended-Tofts test. */
    run_file("dce_DRO_data_extended_tofts.csv", FM_PK_EXTENDED_TOFTS, 0, "C", "ca", etofts, 3, NULL,
             0);
    run_file("dce_DRO_data_extended_tofts.csv", FM_PK_EXTENDED_TOFTS, 1, "C", "ca", etofts, 3,
             "arterialdelay", 5);
    return tap_done();
}
