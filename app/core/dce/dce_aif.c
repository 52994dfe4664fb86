/* Population arterial input functions and the bolus arrival detector (see dce_aif.h). */
#include "app/core/dce/dce_aif.h"

#include <math.h>
#include <string.h>

static const char *const population_names[] = {"parker", "georgiou"};

const char *fm_dce_population_name(fm_dce_population which)
{
    return which <= FM_DCE_AIF_GEORGIOU ? population_names[which] : "unknown";
}

gboolean fm_dce_population_parse(const char *text, fm_dce_population *which)
{
    for (int i = 0; i <= FM_DCE_AIF_GEORGIOU; i++)
        if (text && g_ascii_strcasecmp(text, population_names[i]) == 0) {
            *which = (fm_dce_population)i;
            return TRUE;
        }
    return FALSE;
}

/* Parker eq. 1 with Table 1, t in minutes: two Gaussians (first pass, recirculation) and an
 * exponential modulated by a sigmoid (washout). */
static double parker_blood_min(double t)
{
    const double a1 = 0.809, sigma1 = 0.0563, t1 = 0.17046;
    const double a2 = 0.330, sigma2 = 0.132, t2 = 0.365;
    const double alpha = 1.050, beta = 0.1685, s = 38.078, tau = 0.483;
    const double root_2pi = sqrt(2.0 * G_PI);
    double g1 = a1 / (sigma1 * root_2pi) * exp(-(t - t1) * (t - t1) / (2.0 * sigma1 * sigma1));
    double g2 = a2 / (sigma2 * root_2pi) * exp(-(t - t2) * (t - t2) / (2.0 * sigma2 * sigma2));
    return g1 + g2 + alpha * exp(-beta * t) / (1.0 + exp(-s * (t - tau)));
}

/* Georgiou eq. 1 (the Horsfield form), t in minutes: a tri-exponential washout times a train of
 * gamma variates, the j-th pass starting j tau later with shape (j + 1) alpha + j. Table 3 gives
 * the parameters to two decimals, which miss the paper's supplementary curve (its Figure S2
 * data, OSIPI's GeorgiouAIF_ref "original_AIF") by up to 2.5 % on the upslope, more than OSIPI's
 * 1 % tolerance; these are the same parameters to six digits, found by least squares against
 * that supplementary curve (they round to Table 3's values) and reproducing it within 0.4 % of
 * the tolerance. */
static double georgiou_blood_min(double t)
{
    const double a[3] = {0.374322, 0.331184, 10.0612};              /* mM */
    const double m[3] = {0.112701, 1.17465, 16.02};                 /* 1/min */
    const double alpha = 5.26699, beta = 0.0320788, tau = 0.128556; /* -, min, min */
    if (!(t > 0.0))
        return 0.0;
    double passes = 0.0;
    for (int j = 0; j * tau < t; j++) {
        double shape = (j + 1) * alpha + j, x = t - j * tau;
        /* x^shape e^(-x/beta) / (beta^(shape+1) Gamma(shape+1)) in logs: shape reaches hundreds
         * after ten minutes, where the power and the Gamma function overflow alone. */
        passes += exp(shape * log(x) - x / beta - (shape + 1.0) * log(beta) - lgamma(shape + 1.0));
    }
    double washout = 0.0;
    for (int i = 0; i < 3; i++)
        washout += a[i] * exp(-m[i] * t);
    return washout * passes;
}

double fm_dce_population_blood(fm_dce_population which, double t_s)
{
    if (t_s < 0.0)
        return 0.0;
    return which == FM_DCE_AIF_GEORGIOU ? georgiou_blood_min(t_s / 60.0)
                                        : parker_blood_min(t_s / 60.0);
}

void fm_dce_population_curve(fm_dce_population which, const double *times_s, int n,
                             double arrival_s, double *cb)
{
    for (int i = 0; i < n; i++) {
        double t = times_s[i] - arrival_s;
        cb[i] = fm_dce_population_blood(which, t < 0.0 && t > -1e-9 ? 0.0 : t);
    }
}

/* Least squares of c on the columns of basis (n_cols of 1, u, u^2 chosen by use[]), by the
 * normal equations (3 x 3 at most, well conditioned for u in seconds over a minute or so).
 * Returns the residual sum of squares, or INFINITY when a fitted slope is negative or the
 * system is singular. */
static double fit_subset(const double *u, const double *c, int n, const gboolean use[3])
{
    int cols[3], k = 0;
    for (int j = 0; j < 3; j++)
        if (use[j])
            cols[k++] = j;
    double a[3][4] = {{0}};
    for (int i = 0; i < n; i++) {
        double f[3] = {1.0, u[i], u[i] * u[i]};
        for (int r = 0; r < k; r++) {
            for (int s = 0; s < k; s++)
                a[r][s] += f[cols[r]] * f[cols[s]];
            a[r][k] += f[cols[r]] * c[i];
        }
    }
    for (int p = 0; p < k; p++) { /* Gauss-Jordan with partial pivoting */
        int best = p;
        for (int r = p + 1; r < k; r++)
            if (fabs(a[r][p]) > fabs(a[best][p]))
                best = r;
        if (!(fabs(a[best][p]) > 1e-300))
            return INFINITY;
        for (int s = 0; s <= k; s++) {
            double tmp = a[p][s];
            a[p][s] = a[best][s];
            a[best][s] = tmp;
        }
        for (int r = 0; r < k; r++) {
            if (r == p)
                continue;
            double f = a[r][p] / a[p][p];
            for (int s = p; s <= k; s++)
                a[r][s] -= f * a[p][s];
        }
    }
    double coef[3] = {0};
    for (int r = 0; r < k; r++) {
        coef[cols[r]] = a[r][k] / a[r][r];
        if (cols[r] > 0 && coef[cols[r]] < 0.0)
            return INFINITY;
    }
    double ss = 0.0;
    for (int i = 0; i < n; i++) {
        double d = c[i] - coef[0] - coef[1] * u[i] - coef[2] * u[i] * u[i];
        ss += d * d;
    }
    return ss;
}

double fm_dce_bolus_arrival(const double *times_s, const double *curve, int n)
{
    int peak = -1;
    for (int i = 0; i < n; i++)
        if (isfinite(curve[i]) && (peak < 0 || curve[i] > curve[peak]))
            peak = i;
    if (peak < 0)
        return n > 0 ? times_s[0] : 0.0;
    /* The fit ends where the curve first reaches 30 % of its peak: a slow tissue curve bends
     * over long before its peak, which no upslope of two terms follows (the knot would run to
     * the first frame); 50 % still let it for kep 0.1/min. */
    double half = 0.3 * curve[peak];
    int end = 0;
    while (end < peak && !(isfinite(curve[end]) && curve[end] >= half))
        end++;
    peak = end;
    if (peak < 3)
        return times_s[0];
    g_autofree double *t = g_new(double, peak + 1);
    g_autofree double *c = g_new(double, peak + 1);
    g_autofree double *u = g_new(double, peak + 1);
    int m = 0;
    double dt_min = INFINITY;
    for (int i = 0; i <= peak; i++) {
        if (i > 0)
            dt_min = MIN(dt_min, times_s[i] - times_s[i - 1]);
        if (!isfinite(curve[i]))
            continue;
        t[m] = times_s[i];
        c[m++] = curve[i];
    }
    /* The subsets a feasible fit may need: both slopes, the quadratic alone, the line alone. */
    static const gboolean subsets[3][3] = {{1, 1, 1}, {1, 0, 1}, {1, 1, 0}};
    double step = dt_min / 20.0, best_t0 = times_s[0], best_ss = INFINITY;
    /* The knot stays before the peak's previous frame: an upslope needs two frames. */
    for (double t0 = times_s[0]; t0 <= times_s[peak - 1]; t0 += step) {
        for (int i = 0; i < m; i++)
            u[i] = t[i] > t0 ? t[i] - t0 : 0.0;
        for (int s = 0; s < 3; s++) {
            double ss = fit_subset(u, c, m, subsets[s]);
            if (ss < best_ss) {
                best_ss = ss;
                best_t0 = t0;
            }
        }
    }
    return best_t0;
}

double fm_dce_population_onset_s(fm_dce_population which)
{
    /* A tissue curve rises as the integral of its input at first, later than the input itself:
     * the reference is a tissue-like curve, the blood curve through a one-minute compartment
     * (kep 1/min, mid-range for tumours), sampled every 0.1 s for two minutes. */
    enum { N = 1201 };
    const double h = 0.1, k = 1.0 / 60.0;
    double t[N], c[N], tissue = 0.0;
    for (int i = 0; i < N; i++) {
        t[i] = h * i;
        /* exact step of dC/dt = Cb - k C for Cb held over the step */
        tissue =
            tissue * exp(-k * h) + fm_dce_population_blood(which, t[i]) * (1.0 - exp(-k * h)) / k;
        c[i] = tissue;
    }
    return fm_dce_bolus_arrival(t, c, N);
}
