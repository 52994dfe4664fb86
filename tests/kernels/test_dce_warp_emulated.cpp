/* The CUDA DCE warp kernel (dce_cuda_warp.cuh with its r128 FFT and lane-parallel Nelder-Mead)
 * compiled as host C++ and run as one emulated warp of 32 lanes, each a ucontext coroutine:
 * shuffles, ballots and warp syncs exchange values through double buffers, and every sync point
 * checks that all 32 lanes reached the same one (a divergent lane aborts). The records must equal
 * the CPU twin's fm_dce_fit_voxel bit for bit. This checks the kernel's logic and its order of
 * floating-point operations on machines without a GPU (CI); nvcc's code generation is checked by
 * test-kernels-dce-cuda on a device. */
#include <ucontext.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

/* ---- the CUDA vocabulary the kernel uses, for one warp on the host ---- */
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(a, b)
#define __shared__
struct double2 {
    double x, y;
};
static inline double2 make_double2(double a, double b)
{
    return {a, b};
}
struct emu_dim {
    unsigned x;
};

static ucontext_t sched, lane_ctx[32];
static int cur, gen[32], finished[32], kind[32];
static double dbuf[2][32];
static long long ibuf[2][32];
static emu_dim emu_tid()
{
    return emu_dim{(unsigned)cur};
}
#define threadIdx (emu_tid())
#define blockDim (emu_dim{32})
/* Every lane stops at each collective; the scheduler runs the lanes round by round. */
static void emu_yield(int k)
{
    kind[cur] = k;
    swapcontext(&lane_ctx[cur], &sched);
}
static double __shfl_sync(unsigned, double x, int src)
{
    const int l = cur, g = gen[l]++;
    dbuf[g & 1][l] = x;
    emu_yield(1);
    return dbuf[g & 1][src & 31];
}
static int __shfl_sync(unsigned, int x, int src)
{
    const int l = cur, g = gen[l]++;
    ibuf[g & 1][l] = x;
    emu_yield(2);
    return (int)ibuf[g & 1][src & 31];
}
static double __shfl_down_sync(unsigned, double x, int d)
{
    const int l = cur, g = gen[l]++;
    dbuf[g & 1][l] = x;
    emu_yield(3);
    return l + d < 32 ? dbuf[g & 1][l + d] : x;
}
static int __shfl_down_sync(unsigned, int x, int d)
{
    const int l = cur, g = gen[l]++;
    ibuf[g & 1][l] = x;
    emu_yield(7);
    return l + d < 32 ? (int)ibuf[g & 1][l + d] : x;
}
static unsigned __ballot_sync(unsigned, int pred)
{
    const int l = cur, g = gen[l]++;
    ibuf[g & 1][l] = pred != 0;
    emu_yield(4);
    unsigned m = 0;
    for (int k = 0; k < 32; k++)
        m |= (unsigned)ibuf[g & 1][k] << k;
    return m;
}
static void __syncwarp()
{
    gen[cur]++;
    emu_yield(5);
}
static void __syncthreads()
{
    gen[cur]++;
    emu_yield(6);
}
static int __popc(unsigned m)
{
    return __builtin_popcount(m);
}
static unsigned __brev(unsigned x)
{
    unsigned r = 0;
    for (int b = 0; b < 32; b++)
        r |= ((x >> b) & 1u) << (31 - b);
    return r;
}
static int atomicAdd(int *p, int v) /* one warp: nothing races */
{
    const int o = *p;
    *p += v;
    return o;
}
double smem[1 << 16];

#include "kernels/dce/dce_cuda_warp.cuh"

/* ---- one warp over a chunk of voxels ---- */
static fm_dce_plan g_plan;
static nm_settings g_nm;
static warp_layout g_lay;
static const float *g_tissue;
static int g_nv, g_next;
static double *g_records;

static void lane_main(int)
{
    if (g_plan.n_fft == 128)
        dce_fit_warp<5, true>(g_plan, g_nm, g_lay, g_tissue, g_nv, g_records, &g_next);
    else
        dce_fit_warp<5, false>(g_plan, g_nm, g_lay, g_tissue, g_nv, g_records, &g_next);
    finished[cur] = 1;
}

static char stacks[32][512 * 1024];

/* 0 when the warp ran to the end in lockstep, else the first lane that diverged + 1. */
static int run_warp(void)
{
    for (int l = 0; l < 32; l++) {
        getcontext(&lane_ctx[l]);
        lane_ctx[l].uc_stack.ss_sp = stacks[l];
        lane_ctx[l].uc_stack.ss_size = sizeof stacks[l];
        lane_ctx[l].uc_link = &sched;
        makecontext(&lane_ctx[l], (void (*)())lane_main, 1, l);
        gen[l] = 0;
        finished[l] = 0;
    }
    for (;;) {
        int all = 1;
        for (int l = 0; l < 32; l++) {
            cur = l;
            kind[l] = 0;
            swapcontext(&sched, &lane_ctx[l]);
        }
        for (int l = 0; l < 32; l++) {
            if (finished[l] != finished[0] || gen[l] != gen[0] || kind[l] != kind[0])
                return l + 1;
            all &= finished[l];
        }
        if (all)
            return 0;
    }
}

/* ---- workloads: noisy curves from known parameters, as the CUDA test's ---- */
static uint64_t rng_state = 88172645463325252ull;
static double uniform()
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return ((rng_state >> 11) + 0.5) / 9007199254740992.0;
}
static double gaussian()
{
    return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}
static double gamma_variate(double t, double t0, double a, double al, double be)
{
    return t > t0 ? a * pow(t - t0, al) * exp(-(t - t0) / be) : 0;
}

typedef struct {
    const char *name;
    int nt;
    double dt;
    int paper_rule; /* absolute 1e-8, 600 iterations, no restart: the cap ends many fits */
    int non_uniform;
} mode;

static int check_mode(int index, const mode *md, int nv)
{
    static double times[512], ca[512], cp[512], curve[512], work[65536];
    for (int i = 0; i < md->nt; i++) {
        times[i] = md->non_uniform && i >= 60 ? 59 + (i - 59) * 2.5 : i * md->dt;
        ca[i] = 0.02 + gamma_variate(times[i], 10, 1.2, 3, 1.5) +
                gamma_variate(times[i], 22, 0.03, 3, 3);
        cp[i] = 0.02 + gamma_variate(times[i], 15, 0.3, 3, 4);
    }
    fm_dce_params prm;
    fm_dce_params_defaults(&prm);
    prm.n_times = md->nt;
    prm.times_s = times;
    prm.ca = ca;
    prm.cp = cp;
    if (md->paper_rule) {
        prm.tolerance = 1e-8;
        prm.tolerance_mode = FM_DCE_TOL_ABSOLUTE;
        prm.max_iterations = 600;
        prm.restarts = 0;
        prm.start = FM_DCE_START_INITIAL;
    }
    fm_dce_tables tab;
    char msg[256];
    if (fm_dce_tables_build(&prm, &tab, msg, sizeof msg) != FM_OK) {
        printf("not ok %d - %s: tables: %s\n", index, md->name, msg);
        return 1;
    }
    g_plan = tab.plan;
    for (int i = 0; i < FM_DCE_N_PARAMS; i++)
        g_nm.initial[i] = prm.initial[i];
    g_nm.tolerance = prm.tolerance;
    g_nm.tolerance_mode = prm.tolerance_mode;
    g_nm.max_iterations = prm.max_iterations;
    g_nm.restarts = prm.restarts;
    g_lay = warp_layout_of(&g_plan);
    float *tissue = (float *)malloc(sizeof(float) * md->nt * nv);
    for (int v = 0; v < nv; v++) {
        const double th[5] = {5 + 55 * uniform(), 40 + 160 * uniform(), 150 + 650 * uniform(),
                              4 * uniform(), 6 * uniform()};
        fm_dce_model(&prm, th, curve, msg, sizeof msg);
        double peak = 0;
        for (int i = 0; i < md->nt; i++)
            peak = fmax(peak, curve[i]);
        const double cnr = v % 3 == 0 ? 20 : 50;
        for (int i = 0; i < md->nt; i++)
            tissue[v * md->nt + i] = (float)(curve[i] + peak / cnr * gaussian());
        if (v == 1) /* an all-zero curve: absolute tolerance */
            for (int i = 0; i < md->nt; i++)
                tissue[v * md->nt + i] = 0;
        if (v == 2) /* a NaN sample: the invalid record */
            tissue[v * md->nt + 5] = NAN;
    }
    g_records = (double *)malloc(sizeof(double) * FM_DCE_OUT_COUNT * nv);
    g_tissue = tissue;
    g_nv = nv;
    g_next = 0;
    const int diverged = run_warp();
    int differ = 0;
    double iterations = 0;
    for (int v = 0; v < nv && !diverged; v++) {
        double rec[FM_DCE_OUT_COUNT];
        fm_dce_fit_voxel(&tab.plan, &prm, tissue + v * md->nt, work, rec);
        int same = 1;
        for (int o = 0; o < FM_DCE_OUT_COUNT; o++) {
            const double g = g_records[(size_t)o * nv + v];
            same &= memcmp(&rec[o], &g, sizeof g) == 0 || (std::isnan(rec[o]) && std::isnan(g));
        }
        differ += !same;
        iterations += rec[FM_DCE_OUT_ITERATIONS] / nv;
    }
    const int ok = !diverged && differ == 0;
    printf("%s %d - %s (FFT %d, %s path): %d voxels, %d differ bitwise from the CPU twin%s; "
           "mean iterations %.1f\n",
           ok ? "ok" : "not ok", index, md->name, tab.plan.n_fft,
           tab.plan.n_fft == 128 ? "r128" : "generic", nv, differ,
           diverged ? ", lanes diverged" : "", iterations);
    free(tissue);
    free(g_records);
    fm_dce_tables_free(&tab);
    return !ok;
}

int main(void)
{
    static const mode modes[] = {
        {"Nt 48, defaults", 48, 2.37, 0, 0},
        {"Nt 48, the paper's stopping rule", 48, 2.37, 1, 0},
        {"Nt 120, non-uniform frames", 120, 1.0, 0, 1},
        {"Nt 24", 24, 2.0, 0, 0},
        {"Nt 12", 12, 4.0, 0, 0},
        {"Nt 64", 64, 1.7775, 0, 0},
    };
    const int n = (int)(sizeof modes / sizeof modes[0]);
    printf("1..%d\n", n);
    int failed = 0;
    for (int m = 0; m < n; m++)
        failed += check_mode(m + 1, &modes[m], 6); /* 6 voxels: the zero and NaN curves, 4 fits */
    return failed != 0;
}
