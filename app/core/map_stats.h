/* Summary statistics of float maps and of value streams too large for one buffer. */
#pragma once

#include <glib.h>

#include "app/core/result.h"

G_BEGIN_DECLS

/* fm_map_statistics(), declared in result.h beside fm_map_stats, is implemented in map_stats.c
 * with the same two passes as fm_stats_from_source(), reading the map's buffer in place. Both
 * give count, min, max, mean and the exact median of the finite values (NaN and ±Inf skipped),
 * all NaN with valid_pixels = 0 when there is none. The median equals the one a sort gives;
 * the mean does not depend on the number of threads. */

/* Writes values start .. start + count - 1 of a stream to out. It is called from several
 * threads at once on disjoint ranges, and once per pass for every value (twice in all), so it
 * must be thread-safe and give the same values each time. */
typedef void (*fm_value_source)(void *user, gsize start, gsize count, float *out);

/* Statistics of the n_values values source gives, read in chunks of 1 Mi values per thread. */
fm_map_stats fm_stats_from_source(fm_value_source source, void *user, gsize n_values);

G_END_DECLS
