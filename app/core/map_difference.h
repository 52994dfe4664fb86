/* The difference of two maps (B − A) and its statistics, for comparing two runs. */
#pragma once

#include <glib.h>
#include "result.h"

G_BEGIN_DECLS

typedef struct {
    gsize n;        /* pixels finite in both maps */
    double mean;    /* of B − A */
    double sd;      /* sample standard deviation (n − 1) of B − A */
    double rms;     /* root mean square of B − A */
    double max_abs; /* largest |B − A| */
} fm_difference_stats;

/* B − A over the first frame, pixel by pixel, NaN where either is not finite; NULL when the two
 * differ in width or height. stats (may be NULL) receives its statistics (n = 0 and NaN when
 * no pixel is finite in both). The map is named "difference" with a's unit. */
fm_map *fm_map_difference(const fm_map *a, const fm_map *b, fm_difference_stats *stats);

G_END_DECLS
