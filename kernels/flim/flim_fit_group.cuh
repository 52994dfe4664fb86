/* The group-per-pixel CUDA kernel of LSM and MLE without an IRF (the default): 32 / L pixels
 * per warp, each pixel's fit range in L segments, its state machine and launch helpers. Included
 * by flim_fit_kernels.cuh after warp_sum. */
#pragma once

/* Shared-memory slot of one pixel in the group kernel: lane l of the group keeps its segment's
 * bin q at q L + l, so a group reads consecutive words; the strides are padded so that the
 * groups of a warp fall on different banks (8-byte weights: 16 per 128-byte phase; 4-byte
 * counts: 32). */
template <int L> __host__ __device__ inline int group_w_stride(int n_fit)
{
    const int n = ((n_fit + L - 1) / L * L + 15) / 16 * 16;
    return L < 16 ? n + L : n;
}

template <int L> __host__ __device__ inline int group_y_stride(int n_fit)
{
    const int n = ((n_fit + L - 1) / L * L + 31) / 32 * 32;
    return L < 32 ? n + L : n;
}

#define GROUP_ST_DOUBLES ((sizeof(fm_lm_state) + 7) / 8)

template <int L> static size_t group_shared_bytes(int n_fit)
{
    return (size_t)(GROUP_BLOCK / 32) * (32 / L) *
           ((group_w_stride<L>(n_fit) + GROUP_ST_DOUBLES) * sizeof(double) +
            group_y_stride<L>(n_fit) * sizeof(float));
}

enum { GRP_NEED = 0, GRP_INIT, GRP_FIT, GRP_IDLE };

/* Group per pixel: G = 32 / L pixels per warp, L lanes each. Lane l of a group owns segment
 * bitrev(l) of the L canonical segments (FM_FIT_SEGS = L gives the CPU twin's bits): its counts
 * and LSM weights sit in shared memory (fm_fit_bin reads them back every evaluation), the group's
 * sums meet through log2(L) butterfly levels, and the group's first lane takes the LM decision
 * on the pixel's state in shared memory (in registers it spilled). So the shuffles and the
 * serial double-precision LM step are shared by G pixels, where the warp-per-pixel kernel paid
 * them for one pixel with 8 bins of work per lane between.
 * Each group fetches its next pixel from the counter *next as soon as its pixel is done (a state
 * per group, the same in all its lanes: NEED a pixel, INIT its amplitude, FIT pass 0/1, IDLE when
 * none is left), so a warp never waits for the slowest of its G pixels; the loop runs while any
 * group has work. Counts and weights: each lane touches only its own words; the LM state:
 * written by the group's first lane, read by all after __syncwarp. */
template <int MODEL, int BG, int MLE, int L>
__global__ void __launch_bounds__(GROUP_BLOCK, GROUP_MIN_BLOCKS)
    fit_group_kernel(fm_fit_setup su, const float *__restrict__ y, int nc,
                     const unsigned char *__restrict__ mask, fm_fit_result *res, int *next)
{
    constexpr int G = 32 / L, NP = (MODEL == 1 ? 2 : 4) + BG, SLOTS = GROUP_BLOCK / 32 * G;
    constexpr int LOG_L = L == 32 ? 5 : (L == 16 ? 4 : (L == 8 ? 3 : (L == 4 ? 2 : 1)));
    constexpr int NEWTON = MODEL == 2 && !MLE; /* fm_fit_newton without an IRF */
    extern __shared__ double dyn[];
    const int lane = threadIdx.x & 31, grp = lane / L, sub = lane % L, lead = sub == 0;
    const int slot = (threadIdx.x >> 5) * G + grp;
    fm_fit_setup s = su;
    s.model = MODEL;
    s.fit_bg = BG;
    s.mle = MLE;
    s.has_irf = 0;
    s.n_params = NP;
    const int n_fit = s.fit_end - s.fit_start, sw = group_w_stride<L>(n_fit);
    double *wsh = dyn + (size_t)slot * sw + sub;
    fm_lm_state *st = (fm_lm_state *)(dyn + (size_t)SLOTS * sw + (size_t)slot * GROUP_ST_DOUBLES);
    float *ysh = (float *)(dyn + (size_t)SLOTS * (sw + GROUP_ST_DOUBLES)) +
                 (size_t)slot * group_y_stride<L>(n_fit) + sub;
    int j0, j1;
    fm_fit_seg_range_n(&s, (int)(__brev((unsigned)sub) >> (32 - LOG_L)), L, &j0, &j1);
    const int nq = j1 - j0;
    unsigned char role[FM_FIT_MAXP];
    double p[FM_FIT_MAXP] = {0};
    fm_fit_start(&s, p, role); /* the roles are the same for every pixel */
    double photons = 0;
    int k = 0, phase = GRP_NEED, pass = 0, iter = 0, used = 0;
    for (;;) {
        if (__any_sync(FULL_MASK, phase == GRP_NEED)) {
            int kk = 0;
            if (phase == GRP_NEED && lead)
                kk = atomicAdd(next, 1);
            kk = __shfl_sync(FULL_MASK, kk, grp * L);
            const int load = phase == GRP_NEED && kk < nc;
            if (phase == GRP_NEED)
                phase = load ? GRP_INIT : GRP_IDLE;
            double ph = 0, s1 = 0; /* photons and sum j y_j (fm_fit_photons) */
            if (load) {
                k = kk;
#pragma unroll 4
                for (int q = 0; q < nq; q++) {
                    const float v = y[(size_t)(s.fit_start + j0 + q) * nc + k];
                    ysh[q * L] = v;
                    if (!MLE)
                        wsh[q * L] = fm_fit_weight(v); /* Neyman weights of the first pass */
                    ph = ph + v;
                    s1 = s1 + FM_FIT_MUL((double)(j0 + q), (double)v);
                }
            }
#pragma unroll
            for (int off = L / 2; off > 0; off >>= 1) {
                ph += __shfl_xor_sync(FULL_MASK, ph, off);
                s1 += __shfl_xor_sync(FULL_MASK, s1, off);
            }
            if (load) {
                photons = ph;
                used = mask[k];
                if (used && ph > 0 && ph >= s.min_photons) {
                    fm_fit_start(&s, p, role);
                    fm_fit_start_data(&s, ph, s1, p);
                    if (lead)
                        fm_lm_init(st, NP, role, p); /* INIT evaluates at trial = the start */
                } else {
                    fm_fit_result r;
                    fm_fit_result_skip(&r, photons, used);
                    if (lead)
                        res[k] = r;
                    phase = GRP_NEED;
                }
            }
            continue;
        }
        if (__all_sync(FULL_MASK, phase == GRP_IDLE))
            break;

        /* This lane's segment at the trial point, then the group's totals. */
        __syncwarp();
        double t[FM_FIT_MAXP];
#pragma unroll
        for (int q = 0; q < FM_FIT_MAXP; q++)
            t[q] = q < NP && phase != GRP_IDLE ? st->trial[q] : 0.0;
        fm_fit_decay c;
        fm_fit_sums sums;
        fm_fit_sums_zero(&sums);
        if (phase != GRP_IDLE && nq > 0) {
            fm_fit_decay_init(&s, t, &c);
            double e0 = fm_fit_seg_exp(&s, j0, c.inv0);
            double e1 = MODEL == 2 ? fm_fit_seg_exp(&s, j0, c.inv1) : 0;
            for (int q = 0; q < nq; q++) {
                fm_fit_bin(&s, t, &c, j0 + q, e0, e1, (double)ysh[q * L], MLE ? 0.0 : wsh[q * L],
                           &sums);
                e0 = FM_FIT_MUL(e0, c.q0);
                e1 = FM_FIT_MUL(e1, c.q1);
            }
        }
        warp_sum<NP, NEWTON, L>(&sums);
        fm_fit_finish(&s, t, &sums);

        int finish = 0, fitted = 0, restart = 0;
        if (phase == GRP_INIT) {
            if (sums.msum > 0) {
                t[0] = photons / sums.msum;
                if (lead)
                    fm_lm_init(st, NP, role, t);
                pass = 0;
                iter = 0;
                phase = GRP_FIT;
            } else {
                finish = 1;
            }
        } else if (phase == GRP_FIT && lead) {
            fm_lm_update(st, &sums, NP, fm_fit_pass_tol(&s, pass), s.max_iter);
        }
        __syncwarp();
        if (phase == GRP_FIT && st->done) {
            iter += st->iter;
            if (!st->have) {
                finish = 1;
            } else if (pass == 0 && !MLE) {
                /* weights of the second pass: the first pass's model */
                fm_fit_decay cw;
#pragma unroll
                for (int q = 0; q < FM_FIT_MAXP; q++)
                    p[q] = st->p[q];
                fm_fit_decay_init(&s, p, &cw);
                double f0 = nq > 0 ? fm_fit_seg_exp(&s, j0, cw.inv0) : 0;
                double f1 = nq > 0 && MODEL == 2 ? fm_fit_seg_exp(&s, j0, cw.inv1) : 0;
                for (int q = 0; q < nq; q++) {
                    wsh[q * L] = fm_fit_weight(fm_fit_model_value(&s, p, f0, f1));
                    f0 = FM_FIT_MUL(f0, cw.q0);
                    f1 = FM_FIT_MUL(f1, cw.q1);
                }
                pass = restart = 1;
            } else {
                finish = fitted = 1;
            }
        }
        __syncwarp();
        if (restart && lead)
            fm_lm_init(st, NP, role, p); /* pass 1 starts at the pass-0 optimum */
        if (finish) {
            if (lead) {
                fm_fit_result r;
                fm_fit_result_skip(&r, photons, used);
                if (fitted)
                    fm_fit_result_set(&s, st, iter, &r);
                res[k] = r;
            }
            phase = GRP_NEED;
        }
    }
}

typedef void (*fit_group_fn)(fm_fit_setup, const float *, int, const unsigned char *,
                             fm_fit_result *, int *);

typedef struct {
    fit_group_fn fn;
    int lanes;
    size_t shared;
} group_launch;

template <int MODEL, int BG, int L> static group_launch group_kernel_l(int mle, int n_fit)
{
    group_launch g;
    g.fn = mle ? fit_group_kernel<MODEL, BG, 1, L> : fit_group_kernel<MODEL, BG, 0, L>;
    g.lanes = L;
    g.shared = group_shared_bytes<L>(n_fit);
    return g;
}

/* The group kernel for this setup; fn NULL when it does not apply (IRF: the recursion runs
 * serially from bin 0; a fit range whose counts and weights overflow shared memory). */
/* FM_FIT_SEGS lanes per pixel: the CPU twin's canonical segments, so the same bits. Widths 4, 16
 * and 32 were timed on an H100 and were slower for lsm bi and not bit-identical (bench/RESULTS.md,
 * fourth session of 2026-11-23); the kernel stays generic in L for the emulated test. */
static group_launch group_kernel(const fm_fit_setup *su)
{
    const int n_fit = su->fit_end - su->fit_start;
    group_launch g;
    if (su->model == 1)
        g = su->fit_bg ? group_kernel_l<1, 1, FM_FIT_SEGS>(su->mle, n_fit)
                       : group_kernel_l<1, 0, FM_FIT_SEGS>(su->mle, n_fit);
    else
        g = su->fit_bg ? group_kernel_l<2, 1, FM_FIT_SEGS>(su->mle, n_fit)
                       : group_kernel_l<2, 0, FM_FIT_SEGS>(su->mle, n_fit);
    if (su->has_irf || g.shared > GROUP_SHARED_MAX)
        g.fn = NULL;
    return g;
}
