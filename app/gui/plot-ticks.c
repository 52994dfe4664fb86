/* Tick values and labels of one plot axis: the candidate tick sets, and one label format per
 * axis (same decimals, k/M/G beyond 1e4, a common exponent below 1e-2, never "-0"). */
#include "app/gui/plot-ticks.h"

#include <math.h>
#include <string.h>

/* Decimals that show multiples of step exactly (step is 1, 2 or 5 times a power of ten). */
static int decimals_for(double step)
{
    int d = 0;
    while (d < 8) {
        double scaled = step * pow(10, d);
        if (fabs(scaled - round(scaled)) <= 1e-6 * MAX(1.0, scaled))
            break;
        d++;
    }
    return d;
}

static void strip_minus_zero(char *buf)
{
    /* "-0", "-0.00", "-0k": a rounding artefact, never a value */
    if (buf[0] != '-')
        return;
    for (const char *c = buf + 1; *c; c++)
        if (*c != '0' && *c != '.')
            return;
    memmove(buf, buf + 1, strlen(buf));
}

/* One value in the compact form of log axes: 1, 10, 100k, 1M, 0.01, 1e-3. */
static void format_compact(double v, char *buf)
{
    static const char *const suffix[] = {"k", "M", "G", "T"};
    double a = fabs(v);
    if (a >= 1e4 && a < 1e15) {
        int k = MIN((int)floor(log10(a) / 3 + 1e-9), 4);
        g_snprintf(buf, FM_PLOT_TICK_CHARS, "%.3g%s", v / pow(10, 3 * k), suffix[k - 1]);
    } else if (a >= 1e15 || (a > 0 && a < 1e-2)) {
        int e = (int)floor(log10(a) + 1e-9);
        g_snprintf(buf, FM_PLOT_TICK_CHARS, "%.3ge%d", v / pow(10, e), e);
    } else {
        g_snprintf(buf, FM_PLOT_TICK_CHARS, "%.4g", v);
    }
    strip_minus_zero(buf);
}

void fm_plot_format_ticks(const double *values, int n, double step, gboolean log_scale,
                          char labels[][FM_PLOT_TICK_CHARS])
{
    if (log_scale) {
        for (int i = 0; i < n; i++)
            format_compact(values[i], labels[i]);
        return;
    }
    double maxabs = 0;
    for (int i = 0; i < n; i++)
        maxabs = MAX(maxabs, fabs(values[i]));
    maxabs = MAX(maxabs, step); /* a lone 0 takes the scale of its axis */
    /* one scale for the whole axis: plain, k/M/G/T, or a common exponent */
    static const char *const suffix[] = {"", "k", "M", "G", "T"};
    int k = 0, exponent = 0;
    gboolean sci = FALSE;
    if (maxabs >= 1e4 && maxabs < 1e15)
        k = MIN((int)floor(log10(maxabs) / 3 + 1e-9), 4);
    else if (maxabs >= 1e15 || (maxabs > 0 && maxabs < 1e-2)) {
        sci = TRUE;
        exponent = (int)floor(log10(maxabs) + 1e-9);
    }
    double scale = sci ? pow(10, exponent) : pow(10, 3 * k);
    int d = decimals_for(step / scale);
    for (int i = 0; i < n; i++) {
        double v = fabs(values[i]) < 1e-9 * step ? 0.0 : values[i];
        if (v == 0 && (sci || k > 0))
            g_strlcpy(labels[i], "0", FM_PLOT_TICK_CHARS);
        else if (sci)
            g_snprintf(labels[i], FM_PLOT_TICK_CHARS, "%.*fe%d", d, v / scale, exponent);
        else
            g_snprintf(labels[i], FM_PLOT_TICK_CHARS, "%.*f%s", d, v / scale, suffix[k]);
        strip_minus_zero(labels[i]);
    }
}

static double nice_step(double span, int target)
{
    double raw = span / MAX(target, 1);
    double mag = pow(10.0, floor(log10(raw)));
    double f = raw / mag;
    return (f < 1.5 ? 1.0 : f < 3.5 ? 2.0 : f < 7.5 ? 5.0 : 10.0) * mag;
}

static gboolean linear_candidate(double lo, double hi, double step, FmPlotTickSet *c)
{
    double first = ceil(lo / step - 1e-9), last = floor(hi / step + 1e-9);
    if (!(step > 0) || last - first + 1 > FM_PLOT_MAX_TICKS)
        return FALSE;
    c->n = 0;
    c->step = step;
    for (double k = first; k <= last; k++) {
        double v = k * step;
        c->values[c->n++] = fabs(v) < 1e-9 * step ? 0.0 : v;
    }
    return TRUE;
}

int fm_plot_tick_candidates(double lo, double hi, gboolean log_scale, int max_ticks,
                            FmPlotTickSet *out, int max_out)
{
    int n = 0;
    double prev_step = 0;
    if (!log_scale || log10(hi / lo) < 1.0) {
        for (int target = max_ticks; target >= 1 && n < max_out; target--) {
            double step = nice_step(hi - lo, target);
            if (step == prev_step)
                continue;
            prev_step = step;
            if (linear_candidate(lo, hi, step, &out[n]) && out[n].n <= max_ticks)
                n++;
        }
        if (!log_scale)
            return n;
    }
    int p0 = (int)ceil(log10(lo) - 1e-9), p1 = (int)floor(log10(hi) + 1e-9);
    if (log10(hi / lo) <= 2.5 && n < max_out) { /* 1, 2, 5 in each decade */
        FmPlotTickSet *c = &out[n];
        c->n = 0;
        c->step = 0;
        for (int p = p0 - 1; p <= p1 && c->n < FM_PLOT_MAX_TICKS; p++)
            for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) {
                double v = m * pow(10, p);
                if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9) && c->n < FM_PLOT_MAX_TICKS)
                    c->values[c->n++] = v;
            }
        if (c->n > 0 && c->n <= max_ticks)
            n++;
    }
    static const int every[] = {1, 2, 3, 5, 10, 20, 50, 100};
    for (gsize e = 0; e < G_N_ELEMENTS(every) && n < max_out; e++) {
        FmPlotTickSet *c = &out[n];
        c->n = 0;
        c->step = 0;
        for (int p = p0; p <= p1 && c->n < FM_PLOT_MAX_TICKS; p++)
            if (((p % every[e]) + every[e]) % every[e] == 0)
                c->values[c->n++] = pow(10, p);
        if (c->n > 0 && c->n <= max_ticks)
            n++;
    }
    return n;
}
