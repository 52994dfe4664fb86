/* Pharmacokinetic model entry points: defaults, validation, the start tables, backend choice,
 * CUDA-to-CPU fallback and the run report. */
#include "pk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../device.h"
#include "../device_private.h"
#include "fm_config.h"
#include "pk_impl.h"
#include "fit_args.h"

static const char *const model_names[FM_PK_N_MODELS] = {"tofts", "extended_tofts", "patlak", "2cxm",
                                                        "2cum"};
static const char *const slot_names[FM_PK_N_PARAMS] = {"ktrans", "ve", "vp", "fp", "ps", "delay"};

const char *fm_pk_model_name(fm_pk_model model)
{
    return model >= 0 && model < FM_PK_N_MODELS ? model_names[model] : "unknown";
}

int fm_pk_model_uses(const fm_pk_params *params, int slot)
{
    const fm_pk_model m = params->model;
    switch (slot) {
    case FM_PK_KTRANS:
        return m == FM_PK_TOFTS || m == FM_PK_EXTENDED_TOFTS || m == FM_PK_PATLAK;
    case FM_PK_VE:
        return m == FM_PK_TOFTS || m == FM_PK_EXTENDED_TOFTS || m == FM_PK_2CXM;
    case FM_PK_VP:
        return m != FM_PK_TOFTS;
    case FM_PK_FP:
    case FM_PK_PS:
        return m == FM_PK_2CXM || m == FM_PK_2CUM;
    case FM_PK_DELAY:
        return params->fit_delay != 0;
    default:
        return 0;
    }
}

int fm_pk_n_fitted(const fm_pk_params *params)
{
    int n = 0;
    for (int s = 0; s < FM_PK_N_PARAMS; s++)
        n += fm_pk_model_uses(params, s);
    return n;
}

int fm_pk_output_written(const fm_pk_params *params, int output)
{
    const fm_pk_model m = params->model;
    switch (output) {
    case FM_PK_OUT_KTRANS:
        return fm_pk_model_uses(params, FM_PK_KTRANS);
    case FM_PK_OUT_VE:
        return fm_pk_model_uses(params, FM_PK_VE);
    case FM_PK_OUT_VP:
        return fm_pk_model_uses(params, FM_PK_VP);
    case FM_PK_OUT_FP:
        return fm_pk_model_uses(params, FM_PK_FP);
    case FM_PK_OUT_PS:
        return fm_pk_model_uses(params, FM_PK_PS) || m == FM_PK_PATLAK;
    case FM_PK_OUT_KEP:
        return fm_pk_model_uses(params, FM_PK_VE);
    case FM_PK_OUT_DELAY:
        return params->fit_delay != 0;
    default:
        return output >= 0 && output < FM_PK_OUT_COUNT;
    }
}

void fm_pk_params_defaults(fm_pk_params *p, fm_pk_model model)
{
    /* OSIPI's bounds (test/DCEmodels/DCEmodels_data.py of its code collection). */
    static const double lower[FM_PK_N_PARAMS] = {0, 0, 0, 0, 0, -10};
    static const double upper[FM_PK_N_PARAMS] = {5, 1, 1, 200, 5, 10};
    memset(p, 0, sizeof *p);
    p->model = model;
    for (int i = 0; i < FM_PK_N_PARAMS; i++) {
        p->lower[i] = lower[i];
        p->upper[i] = upper[i];
    }
    p->fit_delay = 0;
    /* OSIPI's cases converge in 3-53 Levenberg-Marquardt steps from their linear start; 2CXM
     * case 8 with a fitted delay (low Fp, slow valley) took 187 from the grid's: 300 leaves room
     * without letting a hopeless voxel run on. */
    p->max_iterations = 300;
    p->tolerance = 1e-8;
    p->n_devices = 0;
}

fm_status fm_pk_check(const fm_pk_params *p, char *msg, size_t msg_len)
{
    if (!p)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "parameters are missing");
    if (p->model < 0 || p->model >= FM_PK_N_MODELS)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "model must be 0..%d (tofts, extended_tofts, patlak, 2cxm, 2cum), got %d",
                       FM_PK_N_MODELS - 1, (int)p->model);
    if (p->n_times < 4)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "n_times must be >= 4 frames (got %d)",
                       p->n_times);
    if (!p->times_s || !p->cp)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "%s is missing",
                       p->times_s ? "the plasma input cp" : "times_s");
    for (int i = 0; i < p->n_times; i++) {
        if (!isfinite(p->times_s[i]) || !isfinite(p->cp[i]))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "frame %d: time %g s and cp %g mM must be finite", i, p->times_s[i],
                           p->cp[i]);
        if (i > 0 && !(p->times_s[i] > p->times_s[i - 1]))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "times_s must be strictly increasing: times_s[%d] = %g s follows "
                           "times_s[%d] = %g s",
                           i, p->times_s[i], i - 1, p->times_s[i - 1]);
    }
    if (p->fit_delay != 0 && p->fit_delay != 1)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "fit_delay must be 0 or 1 (got %d)",
                       p->fit_delay);
    for (int s = 0; s < FM_PK_N_PARAMS; s++) {
        if (!fm_pk_model_uses(p, s))
            continue;
        const double lo = p->lower[s], hi = p->upper[s];
        if (!isfinite(lo) || !isfinite(hi) || !(lo < hi))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "bounds of %s must be finite with lower < upper (got %g, %g)",
                           slot_names[s], lo, hi);
        if (s != FM_PK_DELAY && s != FM_PK_KTRANS && lo < 0)
            /* Volumes and flows below 0 have no meaning (Ktrans may dip below 0 in noise). */
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "lower.%s must be >= 0 (got %g)",
                           slot_names[s], lo);
    }
    if (p->max_iterations < 1)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "max_iterations must be >= 1 (got %d)",
                       p->max_iterations);
    if (!isfinite(p->tolerance) || p->tolerance < 0)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "tolerance must be a finite value >= 0 (got %g)", p->tolerance);
    if (p->n_devices < 0)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "n_devices must be >= 0 (got %d)",
                       p->n_devices);
    return FM_OK;
}

fm_status fm_pk_tables_build(const fm_pk_params *params, fm_pk_tables *t, char *msg, size_t msg_len)
{
    memset(t, 0, sizeof *t);
    fm_pk_plan *p = &t->plan;
    const int nt = params->n_times;
    const int two = params->model == FM_PK_2CXM || params->model == FM_PK_2CUM;
    p->model = params->model;
    p->n_times = nt;
    for (int s = 0; s < FM_PK_N_PARAMS; s++) {
        p->fixed[s] = 0;
        if (fm_pk_model_uses(params, s)) {
            p->slot[p->n_fit] = s;
            p->lower[p->n_fit] = params->lower[s];
            p->upper[p->n_fit] = params->upper[s];
            p->n_fit++;
        }
    }
    p->max_iterations = params->max_iterations;
    p->tolerance = params->tolerance;
    p->n_delays = params->fit_delay ? FM_PK_N_DELAYS : 1;
    p->n_basis = two ? FM_PK_MAX_BASIS : FM_PK_BASIS_INT2;
    const size_t per_delay = (size_t)p->n_basis * (nt + p->n_basis);
    t->n_doubles = 2 * (size_t)nt + p->n_delays + FM_PK_N_RATES + p->n_delays * per_delay;
    t->doubles = calloc(t->n_doubles, sizeof(double));
    if (!t->doubles)
        return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for the model tables (%zu MB)",
                       t->n_doubles * sizeof(double) >> 20);
    double *times = t->doubles, *cp = times + nt, *delays = cp + nt, *rates = delays + p->n_delays;
    double *basis = rates + FM_PK_N_RATES, *gram = basis + (size_t)p->n_delays * p->n_basis * nt;
    memcpy(times, params->times_s, sizeof(double) * nt);
    memcpy(cp, params->cp, sizeof(double) * nt);
    for (int d = 0; d < p->n_delays; d++)
        delays[d] = p->n_delays == 1 ? 0
                                     : params->lower[FM_PK_DELAY] + (params->upper[FM_PK_DELAY] -
                                                                     params->lower[FM_PK_DELAY]) *
                                                                        d / (p->n_delays - 1);
    for (int m = 0; m < FM_PK_N_RATES; m++)
        rates[m] =
            FM_PK_RATE_MAX * pow(FM_PK_RATE_MIN / FM_PK_RATE_MAX, (double)m / (FM_PK_N_RATES - 1));
    /* Basis curves by the same recursion as the fit (pk_math.h): cp(t - d), int cp(t - d),
     * exp(-r t) * cp(t - d); the double integral by the start's integration of the delayed input
     * (pk_start.h integrates the tissue curve alike). */
    for (int d = 0; d < p->n_delays; d++) {
        double *bd = basis + (size_t)d * p->n_basis * nt;
        for (int b = 0; b < p->n_basis; b++) {
            if (b == FM_PK_BASIS_INT2) {
                const double *f = bd + (size_t)FM_PK_BASIS_CP * nt;
                double *i2 = bd + (size_t)b * nt, i1 = 0, acc = 0;
                i2[0] = 0;
                for (int i = 1; i < nt; i++) {
                    fm_pk_integrate_step(times[i] - times[i - 1], f[i - 1], f[i], &i1, &acc);
                    i2[i] = acc;
                }
                continue;
            }
            fm_pk_coefs c = {0, {0, 0}, {0, 0}, delays[d]};
            if (b == FM_PK_BASIS_CP)
                c.direct = 1;
            else
                c.a[0] = 1;
            if (b >= FM_PK_BASIS_RATE0)
                c.k[0] = rates[b - FM_PK_BASIS_RATE0];
            fm_pk_curve(&c, times, cp, nt, bd + (size_t)b * nt);
        }
        double *gd = gram + (size_t)d * p->n_basis * p->n_basis;
        for (int b = 0; b < p->n_basis; b++)
            for (int c = 0; c < p->n_basis; c++) {
                double s = 0;
                for (int i = 0; i < nt; i++)
                    s += bd[(size_t)b * nt + i] * bd[(size_t)c * nt + i];
                gd[b * p->n_basis + c] = s;
            }
    }
    p->times = times;
    p->cp = cp;
    p->delays = delays;
    p->rates = rates;
    p->basis = basis;
    p->gram = gram;
    return FM_OK;
}

void fm_pk_tables_free(fm_pk_tables *t)
{
    free(t->doubles);
    t->doubles = NULL;
}

void fm_pk_store(const fm_pk_params *params, fm_pk_outputs *out, long long v, const double *rec)
{
    for (int o = 0; o < FM_PK_OUT_COUNT; o++)
        if (out->map[o] && fm_pk_output_written(params, o))
            out->map[o][v] = rec[o];
}

fm_status fm_pk_model_curve(const fm_pk_params *params, const double *theta, double *curve,
                            char *msg, size_t msg_len)
{
    fm_status st = fm_pk_check(params, msg, msg_len);
    if (st != FM_OK)
        return st;
    if (!theta || !curve)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "theta or curve is NULL");
    double th[FM_PK_N_PARAMS];
    for (int s = 0; s < FM_PK_N_PARAMS; s++) {
        const int used = fm_pk_model_uses(params, s);
        if (used && !isfinite(theta[s]))
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "theta.%s is not finite (%g)",
                           slot_names[s], theta[s]);
        th[s] = used || (s == FM_PK_DELAY && isfinite(theta[s])) ? theta[s] : 0;
    }
    fm_pk_coefs c;
    fm_pk_coefs_of(params->model, th, &c);
    fm_pk_curve(&c, params->times_s, params->cp, params->n_times, curve);
    return FM_OK;
}

fm_status fm_pk_fit(const fm_pk_params *params, const float *tissue, long long n_voxels,
                    fm_pk_outputs *out, fm_backend backend, fm_tick_fn tick, void *tick_user,
                    fm_run_info *info, char *msg, size_t msg_len)
{
    fm_run_info local;
    fm_pk_tables tables;
    long long invalid = 0;
    const double start = fm_now_ms();
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);
    fm_status status = fm_pk_check(params, msg, msg_len);
    if (status != FM_OK)
        return status;
    if ((status = fm_dce_fit_args_check(tissue, n_voxels, out, msg, msg_len)) != FM_OK)
        return status;
    if ((status = fm_backend_resolve(backend, info, msg, msg_len)) != FM_OK)
        return status;
    if ((status = fm_pk_tables_build(params, &tables, msg, msg_len)) != FM_OK)
        return status;
    fm_pk_job job = {.params = params,
                     .tables = &tables,
                     .tissue = tissue,
                     .n_voxels = n_voxels,
                     .out = out,
                     .tick = tick,
                     .tick_user = tick_user,
                     .invalid = &invalid};
#if FM_HAVE_CUDA
    if (info->backend_used == FM_BACKEND_CUDA) {
        char why[FM_MSG_LEN] = "";
        status = fm_pk_cuda_run(&job, why, sizeof why);
        if (fm_backend_cuda_settled(status, backend, info, why, msg, msg_len))
            goto done;
        invalid = 0; /* the GPU failed at run time under AUTO: redo everything on the CPU */
    }
#endif
    status = fm_pk_cpu_run(&job, msg, msg_len);
#if FM_HAVE_CUDA
done:
#endif
    info->invalid_values = status == FM_OK ? invalid : 0;
    fm_pk_tables_free(&tables);
    info->elapsed_ms = fm_now_ms() - start;
    return status;
}
