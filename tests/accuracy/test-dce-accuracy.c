/* Accuracy of dce.dual_input on the liver phantom: noise-free truth, bias at CNR 100 over 1000
 * realisations, and the fitted cost against scipy's Nelder-Mead (test-dce-scipy.py). */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "app/core/dce/dce_prep.h"
#include "app/core/error.h"
#include "app/core/method.h"
#include "app/core/dce/dce_sim.h"
#include "kernels/dce/dce.h"
#include "scipy-check.h"

static const char *const names[FM_DCE_N_PARAMS] = {"ka", "kp", "kl", "tau_a", "tau_p"};

/* The paper's acquisition: 48 frames every 2.37 s (Wang & Cao 2012, simulation section). */
static void paper_phantom(fm_dce_sim_params *p)
{
    fm_dce_sim_defaults(p);
    p->nx = 32;
    p->ny = 32;
    p->nz = 1;
}

static void test_noise_free(void)
{
    fm_dce_sim_params p;
    paper_phantom(&p);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_dce_simulate(&p, &error);
    g_assert_no_error(error);
    g_autoptr(GPtrArray) rois = fm_dce_sim_rois(&p);
    const fm_method *m = fm_method_find("dce.dual_input");
    fm_job_context ctx = {.backend = FM_BACKEND_CPU};
    g_autoptr(fm_result) r = fm_method_run(m, ds, NULL, rois, &ctx, &error);
    g_assert_no_error(error);
    /* The brief's tolerances: rates within 0.5 % and delays within 0.05 s of the truth that
     * generated the curves with the same model, for the liver and both lesions. */
    static const fm_dce_sim_label labels[] = {FM_DCE_SIM_LIVER, FM_DCE_SIM_LESION_HYPER,
                                              FM_DCE_SIM_LESION_HYPO};
    GString *misses = g_string_new(NULL);
    for (gsize k = 0; k < G_N_ELEMENTS(labels); k++) {
        double truth[FM_DCE_N_PARAMS];
        fm_dce_sim_truth(&p, labels[k], truth);
        double worst[FM_DCE_N_PARAMS] = {0};
        for (int y = 0; y < p.ny; y++)
            for (int x = 0; x < p.nx; x++) {
                if (fm_dce_sim_label_at(&p, x, y, 0) != labels[k])
                    continue;
                for (int i = 0; i < FM_DCE_N_PARAMS; i++) {
                    double v = fm_result_get_map(r, names[i])->data[y * p.nx + x];
                    double err = i < FM_DCE_TAU_A ? fabs(v / truth[i] - 1) : fabs(v - truth[i]);
                    worst[i] = MAX(worst[i], isnan(v) ? INFINITY : err);
                }
            }
        for (int i = 0; i < FM_DCE_N_PARAMS; i++) {
            double limit = i < FM_DCE_TAU_A ? 0.005 : 0.05;
            g_test_message("label %d %s: worst error %.3g (limit %g)", labels[k], names[i],
                           worst[i], limit);
            if (!(worst[i] <= limit))
                g_string_append_printf(misses, " label %d %s %.3g;", labels[k], names[i], worst[i]);
        }
    }
    /* Passes with the defaults (relative tolerance 1e-11, 4 restarts, <= 2000 iterations); the
     * paper's absolute 1e-8 and 600 iterations left ka 22 % off and tau_a at its bound. */
    g_assert_cmpstr(misses->str, ==, "");
    g_string_free(misses, TRUE);
}

/* Standard normal by Box-Muller from a seeded GRand. */
static double gaussian(GRand *rng)
{
    double u1 = g_rand_double(rng), u2 = g_rand_double(rng);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * G_PI * u2);
}

typedef struct {
    double times[512], ca[512], cp[512], clean[512];
    int nt;
} curves;

static void liver_curves(const fm_dce_sim_params *p, curves *c)
{
    c->nt = p->n_times;
    fm_dce_sim_inputs(p, c->times, c->ca, c->cp);
    g_assert_true(fm_dce_sim_tissue(p, p->liver, c->clean, NULL));
}

/* n noisy copies of the liver curve, voxel-major; sd = peak / cnr (the paper's CNR). */
static float *noisy(const curves *c, int n, double cnr, guint32 seed)
{
    double peak = 0;
    for (int i = 0; i < c->nt; i++)
        peak = MAX(peak, c->clean[i]);
    GRand *rng = g_rand_new_with_seed(seed);
    float *t = g_new(float, (gsize)n * c->nt);
    for (int v = 0; v < n; v++)
        for (int i = 0; i < c->nt; i++)
            t[(gsize)v * c->nt + i] = (float)(c->clean[i] + peak / cnr * gaussian(rng));
    g_rand_free(rng);
    return t;
}

static void kernel_params(const curves *c, fm_dce_params *kp)
{
    fm_dce_params_defaults(kp);
    kp->n_times = c->nt;
    kp->times_s = c->times;
    kp->ca = c->ca;
    kp->cp = c->cp;
}

static void test_cnr100_bias(void)
{
    /* 1000 realisations at CNR 100 and 128 frames (2.37 s apart), the default start and stopping
     * rule. Mean bias below 2 % for ka, kp, kl. The mean's own statistical error (sd / sqrt(1000))
     * is printed beside it so a pass is not luck. */
    enum { N = 1000 };
    fm_dce_sim_params p;
    paper_phantom(&p);
    p.n_times = 128;
    curves c;
    liver_curves(&p, &c);
    g_autofree float *tissue = noisy(&c, N, 100.0, 20261123);
    fm_dce_params kp;
    kernel_params(&c, &kp);
    g_autofree double *maps = g_new(double, (gsize)FM_DCE_OUT_COUNT *N);
    fm_dce_outputs out;
    for (int o = 0; o < FM_DCE_OUT_COUNT; o++)
        out.map[o] = maps + (gsize)o * N;
    char msg[FM_MSG_LEN] = "";
    fm_run_info info;
    gint64 t0 = g_get_monotonic_time();
    g_assert_cmpint(
        fm_dce_fit(&kp, tissue, N, &out, FM_BACKEND_CPU, NULL, NULL, &info, msg, sizeof msg), ==,
        FM_OK);
    double seconds = (g_get_monotonic_time() - t0) / 1e6;
    g_test_message("%d voxels x 128 frames on the CPU twin: %.2f s (%s)", N, seconds,
                   info.device_name);
    GString *misses = g_string_new(NULL);
    for (int i = 0; i < FM_DCE_N_PARAMS; i++) {
        double sum = 0, sum2 = 0;
        for (int v = 0; v < N; v++) {
            sum += out.map[i][v];
            sum2 += out.map[i][v] * out.map[i][v];
        }
        double mean = sum / N, sd = sqrt(MAX(sum2 / N - mean * mean, 0));
        double bias = i < FM_DCE_TAU_A ? mean / p.liver[i] - 1 : mean - p.liver[i];
        double se = i < FM_DCE_TAU_A ? sd / sqrt(N) / p.liver[i] : sd / sqrt(N);
        g_test_message("%s: mean %.5g (truth %g), bias %+.3g%s, standard error %.2g", names[i],
                       mean, p.liver[i], i < FM_DCE_TAU_A ? 100 * bias : bias,
                       i < FM_DCE_TAU_A ? " %" : " s", i < FM_DCE_TAU_A ? 100 * se : se);
        if (i < FM_DCE_TAU_A && !(fabs(bias) < 0.02))
            g_string_append_printf(misses, " %s bias %+.2f %%;", names[i], 100 * bias);
    }
    /* With the defaults (grid start) ka's bias is -0.1 % (standard error 0.5 %); from the
     * paper's fixed start it was -1.8 %, a pass with little margin: tau_a = 0 (its bound) is a
     * real local minimum that some noisy curves fell into on the way. */
    g_assert_cmpstr(misses->str, ==, "");
    g_string_free(misses, TRUE);
}

static void append_number(GString *s, const char *name, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_printf(s, "\"%s\":%s,", name, g_ascii_formatd(buf, sizeof buf, "%.17g", v));
}

static void append_array(GString *s, const char *name, const double *v, int n)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_printf(s, "\"%s\":[", name);
    for (int i = 0; i < n; i++)
        g_string_append_printf(s, "%s%s", i ? "," : "",
                               g_ascii_formatd(buf, sizeof buf, "%.17g", v[i]));
    g_string_append(s, "],");
}

/* Writes the JSON test-dce-scipy.py reads: inputs, bounds, stopping rule, and per voxel the noisy
 * curve with Fluxmap's start (the grid start), fitted parameters and cost (rmse^2 n_times). */
static gboolean dump_for_scipy(const char *path, int n_voxels)
{
    fm_dce_sim_params p;
    paper_phantom(&p);
    curves c;
    liver_curves(&p, &c);
    g_autofree float *tissue = noisy(&c, n_voxels, 20.0, 7);
    fm_dce_params kp;
    kernel_params(&c, &kp);
    g_autofree double *maps = g_new(double, (gsize)FM_DCE_OUT_COUNT *n_voxels);
    fm_dce_outputs out;
    for (int o = 0; o < FM_DCE_OUT_COUNT; o++)
        out.map[o] = maps + (gsize)o * n_voxels;
    char msg[FM_MSG_LEN] = "";
    g_autofree double *starts = g_new(double, (gsize)FM_DCE_N_PARAMS *n_voxels);
    if (fm_dce_fit(&kp, tissue, n_voxels, &out, FM_BACKEND_CPU, NULL, NULL, NULL, msg,
                   sizeof msg) != FM_OK ||
        fm_dce_start_points(&kp, tissue, n_voxels, starts, msg, sizeof msg) != FM_OK)
        return FALSE;
    /* Written by hand with %.17g: json-glib prints 1e-08 as "1e-08.0", which is not JSON. */
    GString *s = g_string_new("{");
    append_array(s, "times_s", c.times, c.nt);
    append_array(s, "ca", c.ca, c.nt);
    append_array(s, "cp", c.cp, c.nt);
    append_array(s, "initial", kp.initial, FM_DCE_N_PARAMS);
    append_array(s, "lower", kp.lower, FM_DCE_N_PARAMS);
    append_array(s, "upper", kp.upper, FM_DCE_N_PARAMS);
    append_number(s, "model_dt_s", kp.model_dt_s);
    append_number(s, "max_iterations", kp.max_iterations);
    append_number(s, "tolerance", kp.tolerance);
    g_string_append(s, "\"voxels\":[");
    for (int v = 0; v < n_voxels; v++) {
        double curve[512], theta[FM_DCE_N_PARAMS];
        for (int i = 0; i < c.nt; i++)
            curve[i] = tissue[(gsize)v * c.nt + i];
        for (int i = 0; i < FM_DCE_N_PARAMS; i++)
            theta[i] = out.map[i][v];
        double rmse = out.map[FM_DCE_OUT_RMSE][v];
        g_string_append(s, v ? ",{" : "{");
        append_array(s, "tissue", curve, c.nt);
        append_array(s, "theta", theta, FM_DCE_N_PARAMS);
        append_array(s, "start", starts + (gsize)v * FM_DCE_N_PARAMS, FM_DCE_N_PARAMS);
        append_number(s, "cost", rmse * rmse * c.nt);
        g_string_truncate(s, s->len - 1); /* the last comma */
        g_string_append(s, "}");
    }
    g_string_append(s, "]}\n");
    gboolean ok = g_file_set_contents(path, s->str, (gssize)s->len, NULL);
    g_string_free(s, TRUE);
    return ok;
}

static gboolean dump_eight_voxels(const char *path)
{
    return dump_for_scipy(path, 8);
}

static void test_scipy(void)
{
    fm_test_scipy_script("DCE_SCIPY_SCRIPT", dump_eight_voxels);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--dump-scipy") == 0) /* helper mode for manual runs */
        return dump_for_scipy(argv[2], 8) ? 0 : 1;
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/dce-accuracy/noise-free", test_noise_free);
    g_test_add_func("/dce-accuracy/cnr100-bias", test_cnr100_bias);
    g_test_add_func("/dce-accuracy/scipy", test_scipy);
    return g_test_run();
}
