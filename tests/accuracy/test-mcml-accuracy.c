/* MCML CPU twin against independent truths: the matched slab of the MCML paper (van de Hulst's
 * adding-doubling values) and an exactly solvable index-mismatched, non-scattering slab;
 * energy conservation in every run. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "kernels/mcml/mcml.h"

typedef struct {
    double rsp, rd, a, tt, rd_se, tt_se;
} totals;

static totals simulate(double n_slab, double mua, double mus, double g, double d, long long photons)
{
    fm_mcml_params p;
    memset(&p, 0, sizeof p);
    p.n_photons = photons;
    p.dz_cm = d / 10;
    p.dr_cm = 0.01;
    p.nz = 10;
    p.nr = 20;
    p.na = 5;
    p.n_layers = 1;
    p.layers[0] = (fm_mcml_layer){n_slab, mua, mus, g, d};
    p.n_above = 1.0;
    p.n_below = 1.0;
    p.record_absorption = 1;
    p.seed = 12345;
    p.shared_cache = 1;
    fm_mcml_result r;
    memset(&r, 0, sizeof r);
    fm_run_info info;
    char msg[FM_MSG_LEN] = "";
    fm_status st = fm_mcml_run(&p, &r, FM_BACKEND_CPU, NULL, NULL, &info, msg, sizeof msg);
    if (st != FM_OK)
        g_error("fm_mcml_run: %s", msg);
    g_assert_cmpint(r.photons_done, ==, photons);
    /* Rsp + Rd + A + Tt = 1: every launched weight ends in exactly one of the four tallies
     * (roulette is normalised out by the kernel), so only rounding remains. */
    g_assert_cmpfloat(fabs(r.rsp + r.rd + r.a + r.tt - 1.0), <, 1e-6);
    g_assert_cmpfloat(r.rd_se, >, 0.0);
    g_assert_cmpfloat(r.tt_se, >, 0.0);
    g_test_message("Rsp %.6f Rd %.6f +- %.6f A %.6f Tt %.6f +- %.6f", r.rsp, r.rd, r.rd_se, r.a,
                   r.tt, r.tt_se);
    return (totals){r.rsp, r.rd, r.a, r.tt, r.rd_se, r.tt_se};
}

/* Wang, Jacques & Zheng, Comput. Methods Programs Biomed. 47, 131 (1995), Table 2: slab with
 * n = 1, mua = 10 /cm, mus = 90 /cm, g = 0.75, d = 0.02 cm; van de Hulst's (1980) values
 * Rd = 0.09739, Tt = 0.66096 (also Prahl et al. 1989 adding-doubling). Within 3 standard
 * errors of the simulation (a 0.3 % chance of a false alarm per total, fixed seed). */
static void test_matched_slab(void)
{
    totals t = simulate(1.0, 10.0, 90.0, 0.75, 0.02, 200000);
    g_assert_cmpfloat(t.rsp, ==, 0.0);
    g_assert_cmpfloat(fabs(t.rd - 0.09739), <, 3 * t.rd_se);
    g_assert_cmpfloat(fabs(t.tt - 0.66096), <, 3 * t.tt_se);
}

/* Index-mismatched slab without scattering (n = 1.5 in air, mua = 10 /cm, d = 0.1 cm): light
 * stays on the axis, so with the normal-incidence Fresnel reflectance R = ((n-1)/(n+1))^2 = 0.04
 * and single-pass transmission q = exp(-mua d), the multiple-reflection series gives exactly
 *   Rsp = R,  Tt = (1-R)^2 q / (1 - R^2 q^2),  Rd = (1-R)^2 R q^2 / (1 - R^2 q^2).
 * This exercises specular reflection and the stochastic Fresnel reflection at both faces.
 * (The mismatched-slab rows of the MCML paper's table could not be located to cite, so this
 * exact case stands in for them.) */
static void test_mismatched_clear_slab(void)
{
    const double n = 1.5, mua = 10.0, d = 0.1;
    const double R = pow((n - 1) / (n + 1), 2), q = exp(-mua * d);
    const double tt = (1 - R) * (1 - R) * q / (1 - R * R * q * q);
    const double rd = (1 - R) * (1 - R) * R * q * q / (1 - R * R * q * q);
    totals t = simulate(n, mua, 0.0, 0.0, d, 200000);
    g_assert_cmpfloat(fabs(t.rsp - R), <, 1e-12);
    g_assert_cmpfloat(fabs(t.rd - rd), <, 3 * t.rd_se);
    g_assert_cmpfloat(fabs(t.tt - tt), <, 3 * t.tt_se);
}

/* Same slab with scattering and n = 1.37 (MCML's sample layer values): the totals still add up
 * and Rsp is Fresnel's. */
static void test_mismatched_energy(void)
{
    totals t = simulate(1.37, 1.0, 100.0, 0.9, 0.1, 50000);
    g_assert_cmpfloat(fabs(t.rsp - pow(0.37 / 2.37, 2)), <, 1e-12);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/mcml/matched-slab", test_matched_slab);
    g_test_add_func("/mcml/mismatched-clear-slab", test_mismatched_clear_slab);
    g_test_add_func("/mcml/mismatched-energy", test_mismatched_energy);
    return g_test_run();
}
