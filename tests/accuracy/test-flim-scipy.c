/* FLIM LSM against an independent implementation: sampled pixels of the simulated bars (mono,
 * 2000 photons) and of the bi-exponential pattern (20000 photons, fD >= 0.5) are fitted by
 * flim.lsm on the CPU twin and refitted by scipy's curve_fit in test-flim-scipy.py (Debian's
 * /usr/bin/python3 with python3-scipy); the bound is 1e-4 relative. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "app/core/method.h"
#include "app/core/flim/flim_sim.h"
#include "scipy-check.h"

static fm_result *fit(const char *model, fm_dataset *ds)
{
    const fm_method *method = fm_method_find("flim.lsm");
    g_assert_nonnull(method);
    g_autoptr(fm_params) params = fm_method_default_params(method);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_params_set_from_string(params, "model", model, &error));
    fm_job_context context = {.backend = FM_BACKEND_CPU};
    fm_result *result = fm_method_run(method, ds, params, NULL, &context, &error);
    g_assert_no_error(error);
    return result;
}

static const float *map_of(const fm_result *result, const char *name)
{
    fm_map *map = fm_result_get_map(result, name);
    g_assert_nonnull(map);
    return map->data;
}

static fm_dataset *simulate(fm_flim_sim_pattern pattern, int width, int height, double photons,
                            guint64 seed, fm_flim_sim_params *p)
{
    fm_flim_sim_defaults(p);
    p->pattern = pattern;
    p->width = width;
    p->height = height;
    p->photons = photons;
    p->seed = seed;
    g_autoptr(GError) error = NULL;
    fm_dataset *ds = fm_flim_simulate(p, &error);
    g_assert_no_error(error);
    return ds;
}

/* One case of the dump: counts of the whole decay (the fit range is every bin) and the
 * parameters in Fluxmap's order, [A, tau] or [A, fD, tauF, tauD]. */
static void dump_case(GString *s, const char *model, const fm_dataset *ds, const fm_result *r,
                      const int *pixels, int n, gboolean first)
{
    const int bi = strcmp(model, "bi") == 0, n_px = (int)(ds->dims[0].size * ds->dims[1].size);
    const guint16 *counts = ds->data;
    const float *amp = map_of(r, "amplitude");
    const float *t1 = map_of(r, bi ? "fraction_d" : "tau");
    const float *t2 = bi ? map_of(r, "tau_fast") : NULL, *t3 = bi ? map_of(r, "tau_slow") : NULL;
    g_string_append_printf(s, "%s{\"model\": \"%s\", \"pixels\": [", first ? "" : ", ",
                           model);
    for (int k = 0; k < n; k++) {
        const int i = pixels[k];
        g_assert_true(isfinite(t1[i]));
        g_string_append_printf(s, "%s{\"params\": [%.9g, %.9g", k ? ", " : "", amp[i], t1[i]);
        if (bi)
            g_string_append_printf(s, ", %.9g, %.9g", t2[i], t3[i]);
        g_string_append(s, "], \"counts\": [");
        for (int b = 0; b < (int)ds->dims[2].size; b++)
            g_string_append_printf(s, "%s%u", b ? ", " : "", counts[(gsize)b * n_px + i]);
        g_string_append(s, "]}");
    }
    g_string_append(s, "]}");
}

static void write_dump(const char *path)
{
    fm_flim_sim_params p;
    GString *s = g_string_new(NULL);
    /* mono: 24 pixels spread over the four bars (tau 2, 2.5, 3, 4 ns) */
    g_autoptr(fm_dataset) bars = simulate(FM_FLIM_SIM_BARS, 64, 16, 2000, 11, &p);
    g_string_append_printf(s, "{\"bin_width_ns\": %.17g, \"cases\": [", p.bin_width_ps * 1e-3);
    g_autoptr(fm_result) mono = fit("mono", bars);
    int pixels[24];
    for (int k = 0; k < 24; k++)
        pixels[k] = k * 43 % (64 * 16);
    dump_case(s, "mono", bars, mono, pixels, 24, TRUE);
    /* bi: 16 pixels in the left half, where fD >= 0.5 and per-pixel fits are well posed */
    g_autoptr(fm_dataset) two = simulate(FM_FLIM_SIM_BIEXP, 32, 16, 20000, 5, &p);
    g_autoptr(fm_result) bi = fit("bi", two);
    for (int k = 0; k < 16; k++)
        pixels[k] = (k % 8) * 2 + 32 * (k / 8 * 7 + 1);
    dump_case(s, "bi", two, bi, pixels, 16, FALSE);
    g_string_append(s, "]}\n");
    g_assert_true(g_file_set_contents(path, s->str, (gssize)s->len, NULL));
    g_string_free(s, TRUE);
}

static gboolean write_dump_ok(const char *path)
{
    write_dump(path);
    return TRUE;
}

static void test_scipy(void)
{
    fm_test_scipy_script("FLIM_SCIPY_SCRIPT", write_dump_ok);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--dump") == 0) { /* for running the script by hand */
        write_dump(argv[2]);
        return 0;
    }
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/flim-accuracy/lsm-vs-scipy", test_scipy);
    return g_test_run();
}
