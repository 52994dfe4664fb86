/* B − A of two maps and its mean, sd and RMS (in double, two passes so that sd does not lose
 * its digits to a large mean). */
#include "map_difference.h"

#include <math.h>

fm_map *fm_map_difference(const fm_map *a, const fm_map *b, fm_difference_stats *stats)
{
    if (a == NULL || b == NULL || a->width != b->width || a->height != b->height)
        return NULL;
    gsize n_px = (gsize)a->width * a->height;
    fm_map *d = fm_map_new("difference", a->unit, a->width, a->height, 1);
    double sum = 0, sum_sq = 0, max_abs = 0;
    gsize n = 0;
    for (gsize i = 0; i < n_px; i++) {
        double va = a->data[i], vb = b->data[i];
        if (!isfinite(va) || !isfinite(vb)) {
            d->data[i] = NAN;
            continue;
        }
        double v = vb - va;
        d->data[i] = (float)v;
        sum += v;
        sum_sq += v * v;
        max_abs = MAX(max_abs, fabs(v));
        n++;
    }
    if (stats != NULL) {
        stats->n = n;
        stats->mean = n > 0 ? sum / n : NAN;
        stats->rms = n > 0 ? sqrt(sum_sq / n) : NAN;
        stats->max_abs = n > 0 ? max_abs : NAN;
        double dev = 0;
        for (gsize i = 0; n > 1 && i < n_px; i++) {
            double va = a->data[i], vb = b->data[i];
            if (isfinite(va) && isfinite(vb))
                dev += (vb - va - stats->mean) * (vb - va - stats->mean);
        }
        stats->sd = n > 1 ? sqrt(dev / (n - 1)) : NAN;
    }
    return d;
}
