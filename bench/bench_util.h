/* Timing, median and PCIe-ceiling helpers shared by every fluxmap-bench family. */
#pragma once

#include <stddef.h>

#include "fm_config.h"

/* Monotonic wall clock in milliseconds. */
double fm_bench_now_ms(void);

/* qsort comparator for doubles, ascending. */
int fm_bench_cmp_double(const void *a, const void *b);

/* Median of v[0..n); sorts v in place. */
double fm_bench_median(double *v, int n);

/* Prints a line per CUDA device ("GPU d: name, memory, SMs, sm_XY") or, with none, why the
 * GPU columns stay empty; returns 1 when a device answered. */
int fm_bench_print_gpus(void);

#if FM_HAVE_CUDA
/* PCIe ceilings: one pinned copy of bytes each way, median of 5 after a warm-up, in GB/s
 * (1e9 bytes). Leaves *h2d_gbs and *d2h_gbs untouched (returns 0) when the buffers cannot be
 * allocated. */
int fm_bench_pcie_ceilings(size_t bytes, double *h2d_gbs, double *d2h_gbs);
#endif
