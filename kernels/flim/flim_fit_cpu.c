/* CPU twin of the iterative FLIM fits: LSM and MLE per pixel, GA per segment, OpenMP over pixels
 * or segments in chunks with progress and cancel between chunks; host helpers CUDA shares. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../device.h"
#include "flim_fit_math.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define CPU_CHUNK_PIXELS 4096 /* progress and cancel granularity: a few ms of work on one core */
#define CPU_CHUNK_SEGMENTS 128

void fm_fit_setup_from(const fm_flim_job *job, fm_fit_setup *su)
{
    const fm_flim_params *p = job->params;
    memset(su, 0, sizeof *su);
    su->fit_start = p->fit_start;
    su->fit_end = p->fit_end;
    su->model = p->model == 2 ? 2 : 1;
    su->fit_bg = p->fit_background ? 1 : 0;
    su->mle = job->method == FM_FLIM_MLE;
    su->n_params = (su->model == 1 ? 2 : 4) + su->fit_bg;
    su->n_lin = su->model + su->fit_bg;
    su->has_irf = p->irf != NULL;
    su->max_iter = p->max_iterations;
    su->dt = p->bin_width_ns;
    su->tol = p->tolerance;
    su->min_photons = p->min_photons;
    su->tau0[0] = p->tau_init_ns[0];
    su->tau0[1] = p->tau_init_ns[1];
    su->f0 = p->fraction_init;
}

double *fm_fit_irf_double(const fm_flim_job *job)
{
    const int n = job->params->n_bins;
    if (!job->params->irf)
        return NULL;
    double *irf = malloc((size_t)n * sizeof *irf);
    if (irf)
        for (int i = 0; i < n; i++)
            irf[i] = job->params->irf[i];
    return irf;
}

int fm_fit_segments(const fm_flim_job *job, int **offsets, int **pixels)
{
    const int ns = job->n_segments;
    int *off = calloc((size_t)ns + 1, sizeof *off), *cursor = calloc((size_t)ns + 1, sizeof *off);
    int *pix = NULL;
    if (!off || !cursor)
        goto fail;
    for (int p = 0; p < job->n_pixels; p++) {
        const int s = job->segment ? job->segment[p] : -1;
        if (s >= 0 && s < ns)
            off[s + 1]++;
    }
    for (int s = 0; s < ns; s++)
        off[s + 1] += off[s];
    pix = malloc(((size_t)off[ns] + 1) * sizeof *pix);
    if (!pix)
        goto fail;
    memcpy(cursor, off, ((size_t)ns + 1) * sizeof *off);
    for (int p = 0; p < job->n_pixels; p++) {
        const int s = job->segment ? job->segment[p] : -1;
        if (s >= 0 && s < ns)
            pix[cursor[s]++] = p;
    }
    free(cursor);
    *offsets = off;
    *pixels = pix;
    return 0;
fail:
    free(off);
    free(cursor);
    free(pix);
    return -1;
}

void fm_fit_gather(const fm_flim_job *job, const int *order, long k0, long k1, int n_bins_copy,
                   void *dst, unsigned char *mask_dst)
{
    const long nc = k1 - k0;
    const int u16 = job->counts_type == FM_PIXEL_U16;
    const size_t esize = u16 ? sizeof(uint16_t) : sizeof(float);
#pragma omp parallel for schedule(static)
    for (int b = 0; b < n_bins_copy; b++) {
        const char *row = (const char *)job->counts_data + (size_t)b * job->n_pixels * esize;
        char *d = (char *)dst + (size_t)b * nc * esize;
        if (!order)
            memcpy(d, row + k0 * esize, (size_t)nc * esize);
        else if (u16)
            for (long k = 0; k < nc; k++)
                ((uint16_t *)d)[k] = ((const uint16_t *)row)[order[k0 + k]];
        else
            for (long k = 0; k < nc; k++)
                ((float *)d)[k] = ((const float *)row)[order[k0 + k]];
    }
    if (mask_dst)
        for (long k = 0; k < nc; k++) {
            const long px = order ? order[k0 + k] : k0 + k;
            mask_dst[k] = job->mask ? job->mask[px] != 0 : 1;
        }
}

static inline void put(float *map, long i, double v)
{
    if (map)
        map[i] = (float)v;
}

static void scatter_one(const fm_flim_job *job, const fm_fit_setup *su, long px,
                        const fm_fit_result *r)
{
    float *const *m = job->out->map;
    double tau = NAN, tf = NAN, ts = NAN, f = NAN, A = NAN, b = NAN, avg_a = NAN, avg_i = NAN;
    if (r->fitted) {
        A = r->p[0];
        if (su->model == 1) {
            tau = avg_a = avg_i = r->p[1];
            b = su->fit_bg ? r->p[2] : NAN;
        } else {
            f = r->p[1];
            tf = r->p[2];
            ts = r->p[3];
            if (tf > ts) { /* the fit may swap the components; report tauF < tauD */
                double t = tf;
                tf = ts;
                ts = t;
                f = 1 - f;
            }
            avg_a = tau = f * ts + (1 - f) * tf;
            avg_i = (f * ts * ts + (1 - f) * tf * tf) / avg_a;
            b = su->fit_bg ? r->p[4] : NAN;
        }
    }
    put(m[FM_FLIM_OUT_TAU], px, tau);
    put(m[FM_FLIM_OUT_TAU_FAST], px, tf);
    put(m[FM_FLIM_OUT_TAU_SLOW], px, ts);
    put(m[FM_FLIM_OUT_FRACTION], px, f);
    put(m[FM_FLIM_OUT_AMPLITUDE], px, A);
    put(m[FM_FLIM_OUT_INTENSITY], px, r->used ? r->photons : NAN);
    put(m[FM_FLIM_OUT_TAU_AVG_AMP], px, avg_a);
    put(m[FM_FLIM_OUT_TAU_AVG_INT], px, avg_i);
    put(m[FM_FLIM_OUT_CHI2], px, r->fitted ? r->chi2 : NAN);
    put(m[FM_FLIM_OUT_ITERATIONS], px, r->iter);
    put(m[FM_FLIM_OUT_CONVERGED], px, r->fitted && r->converged ? 1 : 0);
    put(m[FM_FLIM_OUT_BACKGROUND], px, b);
}

void fm_fit_scatter(const fm_flim_job *job, const fm_fit_setup *su, const int *order, long k0,
                    long k1, const fm_fit_result *res)
{
#pragma omp parallel for schedule(static)
    for (long k = k0; k < k1; k++)
        scatter_one(job, su, order ? order[k] : k, &res[k - k0]);
}

void fm_fit_mark_unsegmented(const fm_flim_job *job, const fm_fit_setup *su)
{
    fm_fit_result skip;
    fm_fit_result_skip(&skip, NAN, 0);
#pragma omp parallel for schedule(static)
    for (long p = 0; p < job->n_pixels; p++) {
        const int s = job->segment ? job->segment[p] : -1;
        if (s < 0 || s >= job->n_segments)
            scatter_one(job, su, p, &skip);
    }
}

static fm_status cancelled(const fm_flim_job *job, double done, char *msg, size_t msg_len)
{
    if (job->tick && job->tick(job->tick_user, done))
        return fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled");
    return FM_OK;
}

/* One count as float (uint16 counts are exact in a float). */
static inline float count_at(const fm_flim_job *job, int bin, int pixel)
{
    const size_t i = (size_t)bin * job->n_pixels + pixel;
    return job->counts ? job->counts[i] : (float)((const uint16_t *)job->counts_data)[i];
}

/* A pixel's decay for the fits: float counts in place (stride n_pixels), uint16 counts gathered
 * into the caller's n_bins floats (stride 1). A widened copy of every count would be a second,
 * twice as large copy of the dataset in the run's peak memory (268 MB at 512 x 512 x 256). */
static const float *decay_of(const fm_flim_job *job, int pixel, float *buf, size_t *stride)
{
    if (job->counts) {
        *stride = (size_t)job->n_pixels;
        return job->counts + pixel;
    }
    for (int i = 0; i < job->params->n_bins; i++)
        buf[i] = count_at(job, i, pixel);
    *stride = 1;
    return buf;
}

static fm_status fit_pixels(const fm_flim_job *job, const fm_fit_setup *su, const double *irf,
                            char *msg, size_t msg_len)
{
    fm_status status = FM_OK;
    const int n = job->n_pixels, threads = fm_cpu_threads();
    fm_fit_result *res = malloc(CPU_CHUNK_PIXELS * sizeof *res);
    float *decays = malloc(sizeof(float) * (size_t)threads * job->params->n_bins);
    if (!res || !decays) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for fit results");
        goto cleanup;
    }
    for (int c0 = 0; c0 < n; c0 += CPU_CHUNK_PIXELS) {
        const int c1 = c0 + CPU_CHUNK_PIXELS < n ? c0 + CPU_CHUNK_PIXELS : n;
#pragma omp parallel for schedule(dynamic, 16)
        for (int k = c0; k < c1; k++) {
            size_t stride;
            const float *y =
                decay_of(job, k, decays + (size_t)fm_thread_index() * job->params->n_bins, &stride);
            fm_fit_pixel(su, y, stride, irf, !job->mask || job->mask[k], &res[k - c0]);
        }
        fm_fit_scatter(job, su, NULL, c0, c1, res);
        if ((status = cancelled(job, (double)c1 / n, msg, msg_len)) != FM_OK)
            goto cleanup;
    }
cleanup:
    free(res);
    free(decays);
    return status;
}

/* Sum over the segment's pixels of their GA contributions at the basis in e0..d1, in the order
 * of the CUDA kernel: thread t of `threads` takes pixels t, t + threads, ... in turn, each warp
 * reduces by the xor butterfly, then the warps' totals are added in order. */
static void ga_segment_sums(const fm_flim_job *job, const fm_fit_setup *su, const int *pix, int np,
                            const double *basis, const double *ybar, double mean_photons,
                            const fm_fit_result *res, int threads, float *decay,
                            fm_fit_sums *part, fm_fit_sums *acc)
{
    const int n_fit = su->fit_end - su->fit_start;
    const double *e0 = basis, *d0 = basis + n_fit, *e1 = basis + 2 * n_fit, *d1 = basis + 3 * n_fit;
    double a[3];
    int free_set;
    fm_ga_sums s;
    for (int t = 0; t < threads; t++) {
        fm_fit_sums_zero(&part[t]);
        for (int k = t; k < np; k += threads) {
            if (res[k].fitted != 2)
                continue;
            size_t stride;
            const float *y = decay_of(job, pix[k], decay, &stride);
            fm_ga_pixel_sums(su, e0, d0, e1, d1, ybar, res[k].photons / mean_photons, y, stride,
                             &s);
            double cost = fm_ga_nnls(su->n_lin, &s, a, &free_set);
            fm_ga_contrib(su, &s, a, free_set, cost, &part[t]);
        }
    }
    fm_fit_sums_zero(acc);
    for (int w = 0; w < threads / 32; w++) {
        fm_fit_warp_tree(part + 32 * w);
        fm_fit_sums_add(acc, &part[32 * w]);
    }
}

/* One segment: LM on the shared lifetimes, amplitudes by NNLS per pixel at every evaluation,
 * then a last pass at the accepted lifetimes for the per-pixel answers. */
static void ga_segment(const fm_flim_job *job, const fm_fit_setup *su, const double *irf,
                       const int *pix, int np, double *basis, float *decay, int threads,
                       fm_fit_sums *part, fm_fit_result *res)
{
    size_t stride;
    const int n_fit = su->fit_end - su->fit_start;
    double *e0 = basis, *d0 = basis + n_fit, *e1 = basis + 2 * n_fit, *d1 = basis + 3 * n_fit;
    double *ybar = basis + 4 * n_fit, tau[2], a[3], mean_photons = 0;
    unsigned char role[2];
    int usable = 0, free_set;
    fm_lm_state st;
    fm_fit_sums acc;
    fm_ga_sums s;

    for (int k = 0; k < np; k++) {
        double photons = 0;
        const int used = !job->mask || job->mask[pix[k]];
        for (int i = su->fit_start; i < su->fit_end; i++)
            photons = photons + count_at(job, i, pix[k]);
        fm_fit_result_skip(&res[k], photons, used);
        if (used && photons > 0 && photons >= su->min_photons) {
            res[k].fitted = 2; /* to fit */
            usable++;
        }
    }
    if (!usable)
        return;
    for (int i = 0; i < n_fit; i++)
        ybar[i] = 0;
    for (int k = 0; k < np; k++) {
        if (res[k].fitted != 2)
            continue;
        mean_photons += res[k].photons / usable;
        for (int i = 0; i < n_fit; i++)
            ybar[i] += count_at(job, i + su->fit_start, pix[k]) / usable;
    }
    fm_ga_start(su, tau, role);
    fm_lm_init(&st, su->model, role, tau);
    while (!st.done) {
        fm_fit_basis_fill(su, irf, st.trial[0], st.trial[su->model - 1], e0, d0, e1, d1);
        ga_segment_sums(job, su, pix, np, basis, ybar, mean_photons, res, threads, decay, part,
                        &acc);
        fm_lm_update(&st, &acc, su->model, su->tol, su->max_iter);
    }
    fm_fit_basis_fill(su, irf, st.p[0], st.p[su->model - 1], e0, d0, e1, d1);
    for (int k = 0; k < np; k++) {
        if (res[k].fitted != 2)
            continue;
        if (!st.have) {
            res[k].fitted = 0;
            continue;
        }
        const float *y = decay_of(job, pix[k], decay, &stride);
        fm_ga_pixel_sums(su, e0, d0, e1, d1, ybar, res[k].photons / mean_photons, y, stride, &s);
        double cost = fm_ga_nnls(su->n_lin, &s, a, &free_set);
        fm_ga_result(su, a, st.p, cost, st.iter, st.converged, &res[k]);
    }
}

static fm_status fit_segments(const fm_flim_job *job, const fm_fit_setup *su, const double *irf,
                              char *msg, size_t msg_len)
{
    fm_status status = FM_OK;
    const int ns = job->n_segments, n_fit = su->fit_end - su->fit_start;
    const int threads = fm_cpu_threads();
    int *off = NULL, *pix = NULL, ga_threads, largest = 0;
    double *basis = malloc((size_t)threads * 5 * n_fit * sizeof *basis);
    float *decays = malloc(sizeof(float) * (size_t)threads * job->params->n_bins);
    fm_fit_sums *part = NULL;
    fm_fit_result *res = NULL;
    if (!basis || !decays || fm_fit_segments(job, &off, &pix) != 0) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for %d segments", ns);
        goto cleanup;
    }
    for (int s = 0; s < ns; s++)
        largest = off[s + 1] - off[s] > largest ? off[s + 1] - off[s] : largest;
    ga_threads = fm_fit_ga_threads(largest);
    part = malloc((size_t)threads * ga_threads * sizeof *part);
    if (!part) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for %d segments", ns);
        goto cleanup;
    }
    fm_fit_mark_unsegmented(job, su);
    /* results for one chunk of segments at a time, not for every pixel */
    int chunk_pixels = 0;
    for (int s0 = 0; s0 < ns; s0 += CPU_CHUNK_SEGMENTS) {
        const int s1 = s0 + CPU_CHUNK_SEGMENTS < ns ? s0 + CPU_CHUNK_SEGMENTS : ns;
        chunk_pixels = off[s1] - off[s0] > chunk_pixels ? off[s1] - off[s0] : chunk_pixels;
    }
    res = malloc(((size_t)chunk_pixels + 1) * sizeof *res);
    if (!res) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for fit results");
        goto cleanup;
    }
    for (int s0 = 0; s0 < ns; s0 += CPU_CHUNK_SEGMENTS) {
        const int s1 = s0 + CPU_CHUNK_SEGMENTS < ns ? s0 + CPU_CHUNK_SEGMENTS : ns;
#pragma omp parallel for schedule(dynamic, 1)
        for (int s = s0; s < s1; s++) {
            int t = 0;
#ifdef _OPENMP
            t = omp_get_thread_num();
#endif
            ga_segment(job, su, irf, pix + off[s], off[s + 1] - off[s],
                       basis + (size_t)t * 5 * n_fit, decays + (size_t)t * job->params->n_bins,
                       ga_threads, part + (size_t)t * ga_threads, res + (off[s] - off[s0]));
        }
        fm_fit_scatter(job, su, pix, off[s0], off[s1], res);
        if ((status = cancelled(job, off[ns] ? (double)off[s1] / off[ns] : 1.0, msg, msg_len)) !=
            FM_OK)
            goto cleanup;
    }
cleanup:
    free(basis);
    free(decays);
    free(part);
    free(off);
    free(pix);
    free(res);
    return status;
}

fm_status fm_flim_fit_cpu(const fm_flim_job *job_in, char *msg, size_t msg_len)
{
    fm_status status = FM_OK;
    fm_fit_setup su;
    fm_flim_job job = *job_in;
    double *irf = NULL;
    if (job.method != FM_FLIM_LSM && job.method != FM_FLIM_MLE && job.method != FM_FLIM_GA)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "method %d is not an iterative fit",
                       (int)job.method);
    fm_fit_setup_from(&job, &su);
    if (job.params->irf && !(irf = fm_fit_irf_double(&job)))
        return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for the IRF");
    if (job.method == FM_FLIM_GA)
        status = fit_segments(&job, &su, irf, msg, msg_len);
    else
        status = fit_pixels(&job, &su, irf, msg, msg_len);
    free(irf);
    return status;
}
