/* Timing, median and PCIe-ceiling helpers shared by every fluxmap-bench family. */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/device.h"

#if FM_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

double fm_bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int fm_bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double fm_bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, fm_bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int fm_bench_print_gpus(void)
{
    char why[FM_MSG_LEN] = "";
    int have_gpu = 0;
    const int n_gpu = fm_device_count(why, sizeof why);
    for (int d = 0; d < n_gpu; d++) {
        fm_gpu_info gpu;
        if (fm_device_info(d, &gpu, why, sizeof why) == FM_OK) {
            have_gpu = 1;
            printf("GPU %d: %s, %.1f GiB, %d SMs, sm_%d%d\n", d, gpu.name,
                   gpu.total_memory_bytes / 1073741824.0, gpu.multiprocessors, gpu.compute_major,
                   gpu.compute_minor);
        }
    }
    if (!have_gpu)
        printf("No CUDA device (%s): CPU columns only\n", why);
    return have_gpu;
}

#if FM_HAVE_CUDA
int fm_bench_pcie_ceilings(size_t bytes, double *h2d_gbs, double *d2h_gbs)
{
    void *h = NULL, *d = NULL;
    double up[5], down[5];
    int ok = cudaHostAlloc(&h, bytes, cudaHostAllocDefault) == cudaSuccess &&
             cudaMalloc(&d, bytes) == cudaSuccess;
    if (ok) {
        memset(h, 1, bytes);
        for (int r = -1; r < 5; r++) {
            double t0 = fm_bench_now_ms();
            cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
            double t1 = fm_bench_now_ms();
            cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost);
            double t2 = fm_bench_now_ms();
            if (r >= 0) {
                up[r] = bytes / ((t1 - t0) * 1e6);
                down[r] = bytes / ((t2 - t1) * 1e6);
            }
        }
        *h2d_gbs = fm_bench_median(up, 5);
        *d2h_gbs = fm_bench_median(down, 5);
    }
    cudaFree(d);
    cudaFreeHost(h);
    return ok;
}
#endif
