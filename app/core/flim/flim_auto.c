/* FLIM defaults read from the data: where the decay starts and ends, its background, and the
 * photon threshold, so that an instrument's file gives a lifetime map without hand tuning. */
#include "app/core/flim/flim_auto.h"

#include <math.h>
#include <string.h>

#define DECAY_SUM_KEY "flim.decay-sum"

GBytes *fm_flim_decay_sum(fm_dataset *ds)
{
    GBytes *sum = fm_dataset_derived_lookup(ds, DECAY_SUM_KEY);
    if (sum)
        return sum;
    const int n_bins = fm_dataset_frames(ds);
    const gsize n_px = (gsize)fm_dataset_width(ds) * fm_dataset_height(ds);
    double *decay = g_new0(double, MAX(n_bins, 1));
    /* one bin per iteration, summed in pixel order: the same bits on any thread count */
#pragma omp parallel for schedule(static)
    for (int b = 0; b < n_bins; b++) {
        const gsize at = (gsize)b * n_px;
        double s = 0.0;
        /* TCSPC histograms are uint16: read them directly, not value by value */
        if (ds->type == FM_PIXEL_U16) {
            const guint16 *row = (const guint16 *)ds->data + at;
            for (gsize p = 0; p < n_px; p++)
                s += row[p];
        } else {
            for (gsize p = 0; p < n_px; p++)
                s += fm_dataset_value(ds, at + p);
        }
        decay[b] = s;
    }
    sum = g_bytes_new_take(decay, sizeof(double) * (gsize)MAX(n_bins, 1));
    fm_dataset_derived_store(ds, DECAY_SUM_KEY, sum);
    return sum;
}

static double select_kth(double *v, int n, int k);

/* Mean of decay over [b - half, b + half], clipped to [lo, hi). */
static double local_mean(const double *decay, int lo, int hi, int b, int half)
{
    double s = 0.0;
    int n = 0;
    for (int i = MAX(lo, b - half); i <= MIN(hi - 1, b + half); i++) {
        s += decay[i];
        n++;
    }
    return n ? s / n : 0.0;
}

/* Trailing bins whose counts fall to less than half of the bins before them belong to a
 * period cut short (the last bin of a PicoHarp period is partial, the next one nearly empty).
 * Only judged where the bins before hold enough counts for a halving not to be noise. */
static int trim_drop_off(const double *decay, int start, int end)
{
    while (end - start > FM_FLIM_MIN_BINS) {
        double before = 0.0;
        for (int i = end - 6; i < end - 1; i++)
            before += decay[i] / 5.0;
        if (before < 100.0 || decay[end - 1] >= 0.5 * before)
            break;
        end--;
    }
    return end;
}

void fm_flim_decay_shape_of(const double *decay, int n_bins, int n_pixels, double bin_width_ns,
                            double period_ns, fm_flim_decay_shape *shape)
{
    memset(shape, 0, sizeof *shape);
    shape->background = NAN;
    int end = n_bins;
    if (period_ns > 0.0 && bin_width_ns > 0.0) {
        /* only whole bins of the period: the one it cuts holds part of a period */
        int period_bins = (int)floor(period_ns / bin_width_ns + 1e-6);
        if (period_bins >= FM_FLIM_MIN_BINS)
            end = MIN(end, period_bins);
    }
    int peak = 0;
    for (int b = 1; b < end; b++)
        if (decay[b] > decay[peak])
            peak = b;
    shape->peak = peak;
    shape->period_end = trim_drop_off(decay, peak, end);
    shape->background_end = shape->period_end;

    /* Bins before the first with any count lie outside what the TAC measured (a B&H ADC
     * range starting late): they are neither background nor decay. */
    int lit = 0;
    while (lit < peak && !(decay[lit] > 0.0))
        lit++;
    shape->background_first = lit;
    /* The rise begins after the last bin before the peak that is still near the floor (5 % of
     * the way from the lowest level before the peak to the peak, smoothed over 3 bins so that
     * one noisy bin neither starts nor hides it). The bins before it are background (and what
     * the previous period's tail left). */
    double floor_level = INFINITY;
    for (int b = lit; b <= peak; b++)
        floor_level = MIN(floor_level, local_mean(decay, lit, end, b, 1));
    const double near_floor = floor_level + 0.05 * (decay[peak] - floor_level);
    int rise = lit;
    for (int b = peak - 1; b >= lit; b--)
        if (local_mean(decay, lit, end, b, 1) <= near_floor) {
            rise = b + 1;
            break;
        }
    shape->rise = rise;
    /* A rise shaped by the IRF leaks into the bins before it about as far as it takes to
     * climb: those are left out too (at least one). The median of the rest, so that a ramp at
     * the TAC's start or a stray bin does not move it. */
    const int bg_end = rise - MAX(1, peak - rise);
    if (bg_end - lit < 3 || n_pixels < 1)
        return;
    g_autofree double *pre = g_memdup2(decay + lit, sizeof(double) * (gsize)(bg_end - lit));
    const int n_pre = bg_end - lit;
    double bg = select_kth(pre, n_pre, n_pre / 2);
    if (n_pre % 2 == 0) /* the mean of the two middle values */
        bg = 0.5 * (bg + select_kth(pre, n_pre, n_pre / 2 - 1));
    shape->background = bg / n_pixels;
    shape->background_bins = n_pre;
    if (!(bg > 0.0))
        return;
    /* Past the bin where the tail (less background) falls to the background itself, a bin
     * holds as much background as decay: a fit without a background term would take it for
     * a longer lifetime. Smoothed over 5 bins so that noise does not end it early. */
    for (int b = peak + 1; b < shape->period_end; b++)
        if (local_mean(decay, peak, shape->period_end, b, 2) <= 2.0 * bg) {
            shape->background_end = b;
            break;
        }
}

int fm_flim_irf_onset(const float *irf, int n_bins)
{
    float top = 0.0f;
    for (int b = 0; b < n_bins; b++)
        top = MAX(top, irf[b]);
    for (int b = 0; b < n_bins; b++)
        if (irf[b] >= 0.01f * top)
            return b;
    return 0;
}

double fm_flim_period_ns(const fm_dataset *ds, double rep_rate_mhz)
{
    if (rep_rate_mhz > 0.0 && isfinite(rep_rate_mhz))
        return 1e3 / rep_rate_mhz;
    const char *meta = fm_dataset_get_meta(ds, "rep_rate_mhz");
    if (meta) {
        char *end = NULL;
        double v = g_ascii_strtod(meta, &end);
        if (end != meta && isfinite(v) && v > 0.0)
            return 1e3 / v;
    }
    return 0.0;
}

/* Keeps [start, end) at least FM_FLIM_MIN_BINS long inside [0, n_bins), moving the edge that
 * was chosen rather than given. */
static void widen(int n_bins, gboolean start_auto, int *start, int *end)
{
    if (*end - *start >= FM_FLIM_MIN_BINS)
        return;
    if (start_auto)
        *start = MAX(0, *end - FM_FLIM_MIN_BINS);
    *end = MIN(n_bins, MAX(*end, *start + FM_FLIM_MIN_BINS));
    *start = MAX(0, MIN(*start, *end - FM_FLIM_MIN_BINS));
}

gboolean fm_flim_window_choose(fm_dataset *ds, double start_ns, double end_ns, double bin_width_ns,
                               double period_ns, fm_flim_window_kind kind, gboolean to_period_end,
                               const float *irf, fm_flim_window *window, GError **error)
{
    memset(window, 0, sizeof *window);
    const int n_bins = fm_dataset_frames(ds);
    window->start_auto = start_ns < 0.0;
    window->end_auto = end_ns < 0.0;
    /* the given edges as fm_flim_prep_fit_range reads them (and rejects them) */
    int given_start = 0, given_end = n_bins;
    if (!fm_flim_prep_fit_range(window->start_auto ? 0.0 : start_ns,
                                window->end_auto ? 0.0 : end_ns, n_bins, bin_width_ns, &given_start,
                                &given_end, error))
        return FALSE;
    g_autoptr(GBytes) sum = fm_flim_decay_sum(ds);
    const double *decay = g_bytes_get_data(sum, NULL);
    const int n_px = fm_dataset_width(ds) * fm_dataset_height(ds);
    fm_flim_decay_shape_of(decay, n_bins, n_px, bin_width_ns, period_ns, &window->shape);
    const fm_flim_decay_shape *sh = &window->shape;
    int start = given_start, end = given_end;
    if (window->start_auto) {
        if (kind == FM_FLIM_WINDOW_IRF && irf != NULL)
            start = fm_flim_irf_onset(irf, n_bins);
        else if (kind == FM_FLIM_WINDOW_PERIOD)
            start = 0;
        else
            start = sh->peak;
    }
    window->kind = kind == FM_FLIM_WINDOW_IRF && irf == NULL ? FM_FLIM_WINDOW_TAIL : kind;
    window->to_background = window->kind == FM_FLIM_WINDOW_TAIL && !to_period_end &&
                            sh->background_end < sh->period_end;
    if (window->end_auto)
        end = window->to_background ? sh->background_end : sh->period_end;
    if (window->end_auto && end <= start)
        end = n_bins;
    if (window->start_auto && start >= end)
        start = 0;
    widen(n_bins, window->start_auto, &start, &end);
    window->start = start;
    window->end = end;
    return TRUE;
}

/* k-th smallest of v[0..n) (v reordered), Hoare's selection: O(n) on average. */
static double select_kth(double *v, int n, int k)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = v[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break;
    }
    return v[k];
}

/* Quantile q of the photons of the pixels with any photon; 0 when there is none. */
static double lit_quantile(const double *photons, int n_pixels, double q)
{
    g_autofree double *lit = g_new(double, MAX(n_pixels, 1));
    int n = 0;
    for (int p = 0; p < n_pixels; p++)
        if (photons[p] > 0.0)
            lit[n++] = photons[p];
    if (n == 0)
        return 0.0;
    return select_kth(lit, n, CLAMP((int)floor(q * (n - 1) + 0.5), 0, n - 1));
}

double fm_flim_auto_min_photons(const double *photons, int n_pixels)
{
    double bright = lit_quantile(photons, n_pixels, 0.99);
    return MAX(FM_FLIM_AUTO_MIN_PHOTONS_FLOOR, floor(FM_FLIM_AUTO_MIN_PHOTONS_SHARE * bright));
}

int fm_flim_suggest_binning(const double *photons, int n_pixels, double min_photons)
{
    double median = lit_quantile(photons, n_pixels, 0.5);
    if (!(median > 0.0))
        return 0;
    for (int k = 2; k <= FM_FLIM_MAX_BINNING; k++)
        if (median * k * k >= min_photons)
            return k;
    return 0;
}
