/* MCML entry point: validation, layer tables, backend choice with CUDA-to-CPU fallback, and
 * the normalisation of raw tallies into MCML's units with standard errors over photon batches. */
#include "mcml.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../device.h"
#include "../device_private.h"
#include "fm_config.h"
#include "mcml_impl.h"
#include "mcml_mwc_table.h"

#define FM_MCML_MAX_BINS 100000
#define FM_PI 3.14159265358979323846

static int bad_real(double v)
{
    return !isfinite(v);
}

fm_status fm_mcml_check(const fm_mcml_params *p, char *msg, size_t msg_len)
{
    if (!p)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "parameters are missing");
    if (p->n_photons <= 0)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "n_photons must be > 0 (got %lld)",
                       p->n_photons);
    if (!(p->dz_cm > 0.0) || bad_real(p->dz_cm) || !(p->dr_cm > 0.0) || bad_real(p->dr_cm))
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "dz_cm and dr_cm must be finite and > 0 (got %g, %g)", p->dz_cm, p->dr_cm);
    if (p->nz < 1 || p->nr < 1 || p->na < 1 || p->nz > FM_MCML_MAX_BINS ||
        p->nr > FM_MCML_MAX_BINS || p->na > FM_MCML_MAX_BINS || (double)p->nz * p->nr > 1e8 ||
        (double)p->nr * p->na > 1e8)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "grid nz %d, nr %d, na %d: each must be 1..%d and nz*nr, nr*na <= 1e8",
                       p->nz, p->nr, p->na, FM_MCML_MAX_BINS);
    if (p->n_layers < 1 || p->n_layers > FM_MCML_MAX_LAYERS)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "n_layers must be 1..%d (got %d)",
                       FM_MCML_MAX_LAYERS, p->n_layers);
    if (!(p->n_above > 0.0) || bad_real(p->n_above) || !(p->n_below > 0.0) || bad_real(p->n_below))
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "n_above and n_below must be finite and > 0 (got %g, %g)", p->n_above,
                       p->n_below);
    for (int i = 0; i < p->n_layers; i++) {
        const fm_mcml_layer *l = &p->layers[i];
        if (!(l->n > 0.0) || bad_real(l->n))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "layer %d: n must be finite and > 0 (got %g)", i + 1, l->n);
        if (!(l->mua_per_cm >= 0.0) || bad_real(l->mua_per_cm) || !(l->mus_per_cm >= 0.0) ||
            bad_real(l->mus_per_cm))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "layer %d: mua_per_cm and mus_per_cm must be finite and >= 0 "
                           "(got %g, %g)",
                           i + 1, l->mua_per_cm, l->mus_per_cm);
        if (!(l->g > -1.0 && l->g < 1.0))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "layer %d: g must be in (-1, 1) (got %g)", i + 1, l->g);
        if (!(l->thickness_cm > 0.0) || bad_real(l->thickness_cm))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "layer %d: thickness_cm must be finite and > 0 (got %g)", i + 1,
                           l->thickness_cm);
    }
    if (p->n_devices < 0)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "n_devices must be >= 0 (got %d)",
                       p->n_devices);
    return FM_OK;
}

static double layer_n(const fm_mcml_params *p, int i)
{
    return i == 0 ? p->n_above : i == p->n_layers + 1 ? p->n_below : p->layers[i - 1].n;
}

const uint32_t fm_mcml_mwc_a[FM_MCML_MWC_COUNT] = FM_MCML_MWC_MULTIPLIERS;

void fm_mcml_job_prepare(fm_mcml_job *job)
{
    const fm_mcml_params *p = &job->params;
    fm_mcml_medium *m = &job->medium;
    memset(m, 0, sizeof *m);
    m->n_layers = p->n_layers;
    m->nz = p->nz;
    m->nr = p->nr;
    m->na = p->na;
    m->grid.inv_dz = (float)(1.0 / p->dz_cm);
    m->grid.inv_dr = (float)(1.0 / p->dr_cm);
    m->grid.inv_da = (float)(p->na / (0.5 * FM_PI));
    m->grid.nz_max = (float)(p->nz - 1);
    m->grid.nr_max = (float)(p->nr - 1);
    m->grid.na_max = (float)(p->na - 1);
    double z = 0.0;
    for (int i = 0; i <= p->n_layers + 1; i++) {
        fm_mcml_layer_f *L = &m->layer[i];
        if (i >= 1 && i <= p->n_layers) {
            const fm_mcml_layer *l = &p->layers[i - 1];
            const double mut = l->mua_per_cm + l->mus_per_cm, g = l->g;
            L->z0 = (float)z;
            z += l->thickness_cm;
            L->z1 = (float)z;
            /* A clear layer: flights of at least 3e37 * 2^-22 cm always reach a face. */
            L->step_scale = mut > 0.0 ? (float)(-log(2.0) / mut) : -3e37f;
            const double f = mut > 0.0 ? l->mua_per_cm / mut * 4294967296.0 : 0.0;
            L->mua_mut_q = f >= 4294967295.0 ? 0xFFFFFFFFu : (uint32_t)llround(f);
            /* SpinTheta: 1 - g + 2 g xi = hg_b - hg_c f with f = 2 - xi */
            L->hg_b = (float)(1.0 + 3.0 * g);
            L->hg_c = (float)(2.0 * g);
            L->hg_p = g != 0.0 ? (float)((1.0 + g * g) / (2.0 * g)) : 3.0f;
            L->hg_q = g != 0.0 ? (float)(-(1.0 - g * g) * (1.0 - g * g) / (2.0 * g)) : 0.0f;
            L->hg_r = g != 0.0 ? 0.0f : -2.0f;
            L->eta_up = (float)(layer_n(p, i) / layer_n(p, i - 1));
            L->eta_dn = (float)(layer_n(p, i) / layer_n(p, i + 1));
        }
    }
    const fm_mcml_layer *l1 = &p->layers[0];
    int clear1 = l1->mua_per_cm == 0.0 && l1->mus_per_cm == 0.0;
    job->rsp = fm_mcml_rspecular(p->n_above, l1->n, layer_n(p, 2), clear1);
    m->w0_q = (uint32_t)llround((1.0 - job->rsp) * FM_MCML_QSCALE);
    /* MCML's LaunchPhoton: a clear first layer is already accounted for in Rsp. */
    m->start_layer = clear1 && p->n_layers > 1 ? 2 : 1;
    m->start_z = m->start_layer == 2 ? m->layer[2].z0 : 0.0f;
}

void fm_mcml_count_batches(fm_mcml_raw *raw, long long lo, long long hi)
{
    if (hi <= lo)
        return;
    for (int b = 0; b < FM_MCML_BATCHES; b++) {
        /* indices i in [lo, hi) with i mod B = b: those below hi minus those below lo */
        long long below_hi = (hi - b + FM_MCML_BATCHES - 1) / FM_MCML_BATCHES;
        long long below_lo = (lo - b + FM_MCML_BATCHES - 1) / FM_MCML_BATCHES;
        if (hi <= b)
            below_hi = 0;
        if (lo <= b)
            below_lo = 0;
        raw->batch[b][FM_MCML_B_COUNT] += (unsigned long long)(below_hi - below_lo);
    }
}

typedef unsigned __int128 u128;

/* A tally with its carries (merged sums); hi is NULL for a single run. */
static u128 tally(const unsigned long long *lo, const unsigned long long *hi, size_t i)
{
    return (hi ? (u128)hi[i] << 64 : 0) | lo[i];
}

static u128 batch_tally(const fm_mcml_raw *raw, int b, int k)
{
    return (u128)raw->batch_hi[b][k] << 64 | raw->batch[b][k];
}

/* Absorbed weight of a batch, fixed point: every launched unit that did not escape, roulette's
 * net included (exact in integers). */
static double batch_absorbed(const fm_mcml_job *job, const fm_mcml_raw *raw, int b)
{
    __int128 a = (__int128)(batch_tally(raw, b, FM_MCML_B_COUNT) * job->medium.w0_q) +
                 (long long)raw->batch[b][FM_MCML_B_ROUL] -
                 (__int128)batch_tally(raw, b, FM_MCML_B_RD) -
                 (__int128)batch_tally(raw, b, FM_MCML_B_TT);
    return (double)a;
}

/* MCML's ScaleRdTt and ScaleA (mcmlio.c), with the effective photon count n_eff in place of N. */
static void normalise(const fm_mcml_job *job, const fm_mcml_raw *raw, fm_mcml_result *r)
{
    const fm_mcml_params *p = &job->params;
    const int nr = p->nr, nz = p->nz, na = p->na, nl = p->n_layers;
    const double dr = p->dr_cm, dz = p->dz_cm, da = 0.5 * FM_PI / na, q = FM_MCML_QSCALE;
    const double w0q = (double)job->medium.w0_q / q, w0 = 1.0 - job->rsp;
    double sum[FM_MCML_B_N] = {0}, sum_a = 0;
    long long roul = 0;
    for (int b = 0; b < FM_MCML_BATCHES; b++) {
        for (int k = 0; k < FM_MCML_B_N; k++)
            sum[k] += (double)batch_tally(raw, b, k);
        roul += (long long)raw->batch[b][FM_MCML_B_ROUL];
        sum_a += batch_absorbed(job, raw, b);
    }
    const double n = (double)raw->photons_done;
    /* Entered weight from the exact accounting; n_eff = N when roulette's net is zero. */
    const double entered = n * w0q + (double)roul / q;
    const double n_eff = w0 > 0.0 && entered > 0.0 ? entered / w0 : n;
    r->rsp = job->rsp;
    r->photons_done = raw->photons_done;
    r->roulette_net = n > 0 ? (double)roul / q / n : 0.0;
    r->rd = n_eff > 0 ? sum[FM_MCML_B_RD] / q / n_eff : 0.0;
    r->a = n_eff > 0 ? sum_a / q / n_eff : 0.0;
    r->tt = n_eff > 0 ? sum[FM_MCML_B_TT] / q / n_eff : 0.0;

    /* Standard errors: spread of the batch estimates (each normalised the same way). */
    double se[3] = {0}, mean[3] = {0}, x[FM_MCML_BATCHES][3];
    int nb = 0;
    for (int b = 0; b < FM_MCML_BATCHES; b++) {
        double cnt = (double)batch_tally(raw, b, FM_MCML_B_COUNT);
        if (cnt <= 0)
            continue;
        double e = cnt * w0q + (double)(long long)raw->batch[b][FM_MCML_B_ROUL] / q;
        double ne = w0 > 0.0 && e > 0.0 ? e / w0 : cnt;
        x[nb][0] = (double)batch_tally(raw, b, FM_MCML_B_RD) / q / ne;
        x[nb][1] = batch_absorbed(job, raw, b) / q / ne;
        x[nb][2] = (double)batch_tally(raw, b, FM_MCML_B_TT) / q / ne;
        for (int k = 0; k < 3; k++)
            mean[k] += x[nb][k];
        nb++;
    }
    if (nb >= 2) {
        for (int k = 0; k < 3; k++)
            mean[k] /= nb;
        for (int b = 0; b < nb; b++)
            for (int k = 0; k < 3; k++)
                se[k] += (x[b][k] - mean[k]) * (x[b][k] - mean[k]);
        for (int k = 0; k < 3; k++)
            se[k] = sqrt(se[k] / ((double)nb * (nb - 1)));
    }
    r->rd_se = se[0];
    r->a_se = se[1];
    r->tt_se = se[2];

    const double inv = n_eff > 0 ? 1.0 / (q * n_eff) : 0.0;
    if (r->a_layer) {
        /* MCML's IzToLayer: bin iz belongs to the first layer whose bottom lies below its
         * centre (bins below the tissue to the last layer). */
        memset(r->a_layer, 0, sizeof(double) * nl);
        for (int iz = 0, l = 0; raw->a_rz && iz < nz; iz++) {
            while (l < nl - 1 && (iz + 0.5) * dz >= job->medium.layer[l + 1].z1)
                l++;
            u128 row = 0;
            for (int ir = 0; ir < nr; ir++)
                row += tally(raw->a_rz, raw->a_rz_hi, (size_t)ir * nz + iz);
            r->a_layer[l] += (double)row * inv;
        }
    }
    if (r->a_rz)
        memset(r->a_rz, 0, sizeof(double) * nr * nz);
    if (r->a_z)
        memset(r->a_z, 0, sizeof(double) * nz);
    if (raw->a_rz) {
        for (int ir = 0; ir < nr; ir++) {
            const double s_rz = inv / ((ir + 0.5) * 2.0 * FM_PI * dr * dr * dz);
            for (int iz = 0; iz < nz; iz++) {
                double v = (double)tally(raw->a_rz, raw->a_rz_hi, (size_t)ir * nz + iz);
                if (r->a_rz)
                    r->a_rz[(size_t)ir * nz + iz] = v * s_rz;
                if (r->a_z)
                    r->a_z[iz] += v * inv / dz;
            }
        }
    }
    double *ra[2] = {r->rd_r, r->tt_r}, *aa[2] = {r->rd_a, r->tt_a}, *rra[2] = {r->rd_ra, r->tt_ra};
    const unsigned long long *src[2] = {raw->rd_ra, raw->tt_ra};
    const unsigned long long *src_hi[2] = {raw->rd_ra_hi, raw->tt_ra_hi};
    for (int k = 0; k < 2; k++) {
        if (ra[k])
            memset(ra[k], 0, sizeof(double) * nr);
        if (aa[k])
            memset(aa[k], 0, sizeof(double) * na);
        const double s_ra = inv / (4.0 * FM_PI * FM_PI * dr * sin(da / 2) * dr);
        for (int ir = 0; ir < nr; ir++) {
            for (int ia = 0; ia < na; ia++) {
                double v = (double)tally(src[k], src_hi[k], (size_t)ir * na + ia);
                if (rra[k])
                    rra[k][(size_t)ir * na + ia] =
                        v * s_ra / ((ir + 0.5) * sin(2.0 * (ia + 0.5) * da));
                if (ra[k])
                    ra[k][ir] += v * inv / ((ir + 0.5) * 2.0 * FM_PI * dr * dr);
                if (aa[k])
                    aa[k][ia] += v * inv / (sin((ia + 0.5) * da) * 2.0 * FM_PI * da);
            }
        }
    }
}

fm_status fm_mcml_normalise(const fm_mcml_params *params, const fm_mcml_raw *raw,
                            fm_mcml_result *result, char *msg, size_t msg_len)
{
    fm_status status = fm_mcml_check(params, msg, msg_len);
    if (status != FM_OK)
        return status;
    fm_mcml_job job = {.params = *params};
    fm_mcml_job_prepare(&job);
    normalise(&job, raw, result);
    return FM_OK;
}

fm_status fm_mcml_run(const fm_mcml_params *params, fm_mcml_result *result, fm_backend backend,
                      fm_tick_fn tick, void *tick_user, fm_run_info *info, char *msg,
                      size_t msg_len)
{
    fm_run_info local;
    double start = fm_now_ms();
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);
    fm_status status = fm_mcml_check(params, msg, msg_len);
    if (status != FM_OK)
        return status;
    if (!result)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "result is NULL");

    fm_mcml_job job = {.params = *params, .tick = tick, .tick_user = tick_user};
    fm_mcml_job_prepare(&job);
    fm_mcml_raw raw;
    memset(&raw, 0, sizeof raw);
    size_t n_ra = (size_t)params->nr * params->na;
    raw.rd_ra = calloc(n_ra, sizeof *raw.rd_ra);
    raw.tt_ra = calloc(n_ra, sizeof *raw.tt_ra);
    if (params->record_absorption)
        raw.a_rz = calloc((size_t)params->nr * params->nz, sizeof *raw.a_rz);
    if (!raw.rd_ra || !raw.tt_ra || (params->record_absorption && !raw.a_rz)) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "out of memory for the MCML tallies");
        goto cleanup;
    }

    status = fm_backend_resolve(backend, info, msg, msg_len);
    if (status != FM_OK)
        goto cleanup;
#if FM_HAVE_CUDA
    if (info->backend_used == FM_BACKEND_CUDA) {
        char why[FM_MSG_LEN] = "";
        status = fm_mcml_cuda_run(&job, &raw, why, sizeof why);
        if (fm_backend_cuda_settled(status, backend, info, why, msg, msg_len))
            goto done;
        /* The GPU failed under AUTO: redo the whole run on the CPU from empty tallies. */
        fm_mcml_raw_clear(&raw, params);
    }
#endif
    status = fm_mcml_cpu_run(&job, &raw, msg, msg_len);
#if FM_HAVE_CUDA
done:
#endif
    if (status == FM_OK || status == FM_ERR_CANCELLED) {
        normalise(&job, &raw, result);
        if (status == FM_ERR_CANCELLED)
            fm_fail(status, msg, msg_len, "cancelled after %lld of %lld photons", raw.photons_done,
                    params->n_photons);
    }
cleanup:
    free(raw.a_rz);
    free(raw.rd_ra);
    free(raw.tt_ra);
    info->elapsed_ms = fm_now_ms() - start;
    return status;
}
