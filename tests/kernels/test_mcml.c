/* MCML CPU twin against published values and MCML's own outputs (sample, glass-bounded slab),
 * exact accounting, reproducibility, modes and cancel (TAP). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "kernels/mcml/mcml.h"
#include "kernels/mcml/mcml_math.h"
#include "tap.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define PI 3.14159265358979323846

typedef struct {
    double *a_layer, *a_z, *a_rz, *rd_r, *rd_a, *rd_ra, *tt_r, *tt_a, *tt_ra;
} arrays;

static fm_mcml_result result_with(const fm_mcml_params *p, arrays *a)
{
    fm_mcml_result r;
    memset(&r, 0, sizeof r);
    a->a_layer = r.a_layer = calloc((size_t)p->n_layers, sizeof(double));
    a->a_z = r.a_z = calloc((size_t)p->nz, sizeof(double));
    a->a_rz = r.a_rz = calloc((size_t)p->nr * p->nz, sizeof(double));
    a->rd_r = r.rd_r = calloc((size_t)p->nr, sizeof(double));
    a->tt_r = r.tt_r = calloc((size_t)p->nr, sizeof(double));
    a->rd_a = r.rd_a = calloc((size_t)p->na, sizeof(double));
    a->tt_a = r.tt_a = calloc((size_t)p->na, sizeof(double));
    a->rd_ra = r.rd_ra = calloc((size_t)p->nr * p->na, sizeof(double));
    a->tt_ra = r.tt_ra = calloc((size_t)p->nr * p->na, sizeof(double));
    return r;
}

static void arrays_free(arrays *a)
{
    free(a->a_layer);
    free(a->a_z);
    free(a->a_rz);
    free(a->rd_r);
    free(a->rd_a);
    free(a->rd_ra);
    free(a->tt_r);
    free(a->tt_a);
    free(a->tt_ra);
}

/* Run 1 of MCML's sample.mci (three layers, n 1.37, grid 40 x 50 x 1). */
static fm_mcml_params sample_params(long long photons, unsigned long long seed)
{
    fm_mcml_params p = {.n_photons = photons, .dz_cm = 0.01, .dr_cm = 0.01, .nz = 40, .nr = 50,
                        .na = 1, .n_layers = 3, .n_above = 1.0, .n_below = 1.0,
                        .record_absorption = 1, .seed = seed};
    p.layers[0] = (fm_mcml_layer){1.37, 1.0, 100.0, 0.9, 0.1};
    p.layers[1] = (fm_mcml_layer){1.37, 1.0, 10.0, 0.0, 0.1};
    p.layers[2] = (fm_mcml_layer){1.37, 2.0, 10.0, 0.7, 0.2};
    return p;
}

static int tick_stop_at_first(void *user, double fraction)
{
    int *calls = user;
    (*calls)++;
    return fraction > 0.0;
}

static void test_philox(void)
{
    /* Known-answer vectors of Random123's kat_vectors for philox4x32_10. */
    uint32_t c[4] = {0, 0, 0, 0}, d[4] = {~0u, ~0u, ~0u, ~0u};
    fm_mcml_philox(c, 0, 0);
    fm_mcml_philox(d, ~0u, ~0u);
    tap_ok(c[0] == 0x6627e8d5u && c[1] == 0xe169c58du && c[2] == 0xbc57ac4cu &&
               c[3] == 0x9b00dbd8u && d[0] == 0x408f276du && d[1] == 0x41c83b0eu &&
               d[2] == 0xa20bc7c6u && d[3] == 0x6d5451fdu,
           "Philox4x32-10 matches the Random123 known-answer vectors");
    /* Multiply-with-carry with a = 0xFFF442E6 (the table's 1015th multiplier) from x = 1, c = 2:
     * the states are those of z -> a z mod (a 2^32 - 1) from z = 2^32 2 + 1 (Marsaglia's
     * equivalence), worked in Python with big integers: x = 4294197992, 3419663472, 2919486199,
     * and after 10^6 steps pow(a, 10^6, m) z mod 2^32 = 1875684042. */
    fm_mcml_rng g, h;
    fm_mcml_rng_set(&g, 1, 2, 0xFFF442E6u);
    const uint32_t o1 = fm_mcml_next(&g), o2 = fm_mcml_next(&g), o3 = fm_mcml_next(&g);
    fm_mcml_rng_set(&h, 1, 2, 0xFFF442E6u);
    for (int i = 0; i < 1000000; i++)
        fm_mcml_next(&h);
    tap_ok(o1 == 4294197992u && o2 == 3419663472u && o3 == 2919486199u && fm_mcml_rng_x(&h) == 1875684042u,
           "multiply-with-carry from (1, 2): %u %u %u, x after 1e6 steps %u (4294197992 "
           "3419663472 2919486199, 1875684042)",
           o1, o2, o3, fm_mcml_rng_x(&h));
    /* Seeding: the photon's start is Philox(index, seed); draws stay in (0, 1). */
    fm_mcml_rng_init(&g, 7, 42, 0xFFF442E6u);
    uint32_t e[4] = {42, 0, 0, 0};
    fm_mcml_philox(e, 7, 0);
    int in_range = 1;
    double mean = 0;
    for (int i = 0; i < 100000; i++) {
        const float u = fm_mcml_rand(&g);
        in_range &= u > 0.0f && u < 1.0f;
        mean += u;
    }
    mean /= 100000;
    fm_mcml_rng_init(&g, 7, 42, 0xFFF442E6u);
    /* mean of 1e5 uniforms: standard error 0.29 / sqrt(1e5) = 9.1e-4; 5 sigma */
    tap_ok(fm_mcml_rng_x(&g) == e[0] && fm_mcml_rng_c(&g) == (e[1] & 0x7FFFFFFFu) && in_range && mean > 0.5 - 4.6e-3 &&
               mean < 0.5 + 4.6e-3,
           "photon stream started at Philox(index, seed); 1e5 draws in (0, 1), mean %.4f", mean);
}

static void test_check(void)
{
    char msg[FM_MSG_LEN];
    fm_mcml_params p = sample_params(10, 1);
    p.layers[1].g = 1.0;
    tap_ok(fm_mcml_check(&p, msg, sizeof msg) == FM_ERR_INVALID_ARG && strstr(msg, "layer 2"),
           "g = 1 rejected, naming the layer (%s)", msg);
    p = sample_params(10, 1);
    p.layers[2].thickness_cm = -0.1;
    tap_ok(fm_mcml_check(&p, msg, sizeof msg) == FM_ERR_INVALID_ARG && strstr(msg, "layer 3"),
           "negative thickness rejected (%s)", msg);
    p = sample_params(0, 1);
    tap_ok(fm_mcml_check(&p, msg, sizeof msg) == FM_ERR_INVALID_ARG, "zero photons rejected");
    p = sample_params(10, 1);
    p.n_layers = 0;
    tap_ok(fm_mcml_check(&p, msg, sizeof msg) == FM_ERR_INVALID_ARG, "zero layers rejected");
    p = sample_params(10, 1);
    tap_ok(fm_mcml_check(&p, msg, sizeof msg) == FM_OK, "sample.mci run 1 accepted");
}

/* |x - ref| within k standard errors (reported for the log). */
static int within(const char *what, double x, double se, double ref, double k)
{
    double z = se > 0 ? fabs(x - ref) / se : INFINITY;
    return tap_ok(z <= k, "%s %.5f +- %.5f vs %.5f: %.2f standard errors (<= %.0f)", what, x, se,
                  ref, z, k);
}

/* Matched slab mua 10, mus 90 /cm, g 0.75, 0.02 cm, n 1: van de Hulst's Rd 0.09739 and
 * Tt 0.66096, as quoted in Wang, Jacques & Zheng (1995), Comput. Methods Programs Biomed. 47,
 * 131, Table 1. Tolerance: 3 standard errors of our estimate (the reference is analytic). */
static void test_matched_slab(void)
{
    fm_mcml_params p = {.n_photons = 300000, .dz_cm = 0.001, .dr_cm = 0.01, .nz = 20, .nr = 50,
                        .na = 10, .n_layers = 1, .n_above = 1.0, .n_below = 1.0,
                        .record_absorption = 1, .seed = 2026};
    p.layers[0] = (fm_mcml_layer){1.0, 10.0, 90.0, 0.75, 0.02};
    arrays a;
    fm_mcml_result r = result_with(&p, &a);
    char msg[FM_MSG_LEN] = "";
    fm_status st = fm_mcml_run(&p, &r, FM_BACKEND_CPU, NULL, NULL, NULL, msg, sizeof msg);
    tap_ok(st == FM_OK && r.photons_done == p.n_photons && r.rsp == 0.0,
           "matched slab ran (%s), Rsp = 0", msg);
    within("matched slab Rd", r.rd, r.rd_se, 0.09739, 3);
    within("matched slab Tt", r.tt, r.tt_se, 0.66096, 3);
    /* Rounding of 3 doubles only: the accounting is exact (roulette included). */
    double sum = r.rsp + r.rd + r.a + r.tt;
    tap_ok(fabs(sum - 1.0) <= 1e-6, "matched slab: Rsp + Rd + A + Tt - 1 = %.2e (<= 1e-6), "
           "roulette net %.2e per photon", sum - 1.0, r.roulette_net);
    arrays_free(&a);
}

/* MCML's own sample.mco for run 1 of sample.mci (1e6 photons, MCML 1.0): Rsp 0.0243729,
 * Rd 0.237544, A 0.641594, Tt 0.0964896 (/work/shared/refdata/mcml/sample.mco, RAT section).
 * MCML's values carry their own noise, with the per-photon variance of ours at 1e6 photons:
 * combined SE = SE * sqrt(1 + N / 1e6). Tolerance: 3 combined standard errors. */
static void test_sample(void)
{
    fm_mcml_params p = sample_params(300000, 11);
    arrays a;
    fm_mcml_result r = result_with(&p, &a);
    char msg[FM_MSG_LEN] = "";
    fm_run_info info;
    fm_status st = fm_mcml_run(&p, &r, FM_BACKEND_CPU, NULL, NULL, &info, msg, sizeof msg);
    printf("# sample.mci run 1, %lld photons, %s: %.0f ms\n", p.n_photons, info.device_name,
           info.elapsed_ms);
    tap_ok(st == FM_OK, "sample run (%s)", msg);
    double f = sqrt(1.0 + p.n_photons / 1e6);
    /* Rsp is deterministic: ((1 - 1.37) / (1 + 1.37))^2; sample.mco prints 6 digits. */
    tap_ok(fabs(r.rsp - 0.0243729) < 1e-7, "sample Rsp %.7f = 0.0243729", r.rsp);
    within("sample Rd", r.rd, r.rd_se * f, 0.237544, 3);
    within("sample A", r.a, r.a_se * f, 0.641594, 3);
    within("sample Tt", r.tt, r.tt_se * f, 0.0964896, 3);
    double sum = r.rsp + r.rd + r.a + r.tt;
    tap_ok(fabs(sum - 1.0) <= 1e-6, "sample: Rsp + Rd + A + Tt - 1 = %.2e (<= 1e-6)", sum - 1.0);

    /* Internal consistency of MCML's units (exact up to rounding): A_rz integrated over the
     * ring volumes 2 pi (ir + 1/2) dr^2 dz, A_z over dz and A_l all give A; Rd_r over ring
     * areas and Rd_a over 2 pi sin(a) da give Rd. */
    double ia_rz = 0, ia_z = 0, ia_l = 0, ird_r = 0, ird_a = 0;
    for (int ir = 0; ir < p.nr; ir++)
        for (int iz = 0; iz < p.nz; iz++)
            ia_rz += a.a_rz[ir * p.nz + iz] * 2 * PI * (ir + 0.5) * p.dr_cm * p.dr_cm * p.dz_cm;
    for (int iz = 0; iz < p.nz; iz++)
        ia_z += a.a_z[iz] * p.dz_cm;
    for (int l = 0; l < p.n_layers; l++)
        ia_l += a.a_layer[l];
    for (int ir = 0; ir < p.nr; ir++)
        ird_r += a.rd_r[ir] * 2 * PI * (ir + 0.5) * p.dr_cm * p.dr_cm;
    double da = PI / 2 / p.na;
    for (int ia = 0; ia < p.na; ia++)
        ird_a += a.rd_a[ia] * 2 * PI * sin((ia + 0.5) * da) * da;
    tap_ok(fabs(ia_rz - r.a) < 1e-9 && fabs(ia_z - r.a) < 1e-9 && fabs(ia_l - r.a) < 1e-9,
           "A_rz, A_z and A_l integrate to A (%.9f %.9f %.9f vs %.9f)", ia_rz, ia_z, ia_l, r.a);
    tap_ok(fabs(ird_r - r.rd) < 1e-9 && fabs(ird_a - r.rd) < 1e-9,
           "Rd_r and Rd_a integrate to Rd (%.9f %.9f vs %.9f)", ird_r, ird_a, r.rd);
    /* Layers 1..3 are 10, 10 and 20 grid rows exactly, so per-layer absorption compares with
     * MCML's A_l (0.2612, 0.1488, 0.2316); 3 * A's SE each is a loose but honest bound. */
    tap_ok(fabs(a.a_layer[0] - 0.2612) < 3 * r.a_se * f + 5e-5 &&
               fabs(a.a_layer[1] - 0.1488) < 3 * r.a_se * f + 5e-5 &&
               fabs(a.a_layer[2] - 0.2316) < 3 * r.a_se * f + 5e-5,
           "A_l %.4f %.4f %.4f vs sample.mco 0.2612 0.1488 0.2316", a.a_layer[0], a.a_layer[1],
           a.a_layer[2]);
    arrays_free(&a);
}

/* Glass-bounded slab, the air/glass/tissue/glass/air layout (n 1.0/1.5/1.4/1.5/1.0) of Prahl's
 * thesis tables (omlc.ogi.edu/pubs/prahl-pubs/prahl88/node61.html; the table values themselves
 * could not be retrieved): 1 mm glass layers with mua = mus = 0 (MCML's clear layers: straight
 * flights, Rspecular with multiple reflection in the first) around a 1 cm slab, mua 0.1,
 * mus 9.9 /cm, g 0. Reference: Prahl's adding-doubling, exact for a slab between glass slides
 * (their thickness does not matter without absorption): iadpython (github.com/scottprahl/
 * iadpython, commit dc8c91c) Sample(a=0.99, b=10, g=0, d=1, n=1.4, n_above=1.5, n_below=1.5,
 * quad_pts=32).rt() gives UR1 = Rsp + Rd = 0.623375 and UT1 = Tt = 0.101556; 16 to 64 quadrature
 * points span 0.623227..0.623536 and 0.101491..0.101557, half of which is the reference's own
 * uncertainty (0.00016, 0.00003). MCML 1.x's own run (mc-lost-v1-3.mco in
 * github.com/scottprahl/mcmlpy, 5e6 photons) agrees: Rsp + Rd 0.623436, Tt 0.10159.
 * Tolerance: 3 combined standard errors. */
static void test_glass_bounded_slab(void)
{
    fm_mcml_params p = {.n_photons = 200000, .dz_cm = 0.02, .dr_cm = 0.01, .nz = 60, .nr = 50,
                        .na = 5, .n_layers = 3, .n_above = 1.0, .n_below = 1.0,
                        .record_absorption = 1, .seed = 1989};
    p.layers[0] = (fm_mcml_layer){1.5, 0.0, 0.0, 0.0, 0.1};
    p.layers[1] = (fm_mcml_layer){1.4, 0.1, 9.9, 0.0, 1.0};
    p.layers[2] = (fm_mcml_layer){1.5, 0.0, 0.0, 0.0, 0.1};
    arrays a;
    fm_mcml_result r = result_with(&p, &a);
    char msg[FM_MSG_LEN] = "";
    fm_status st = fm_mcml_run(&p, &r, FM_BACKEND_CPU, NULL, NULL, NULL, msg, sizeof msg);
    tap_ok(st == FM_OK && r.photons_done == p.n_photons, "glass-bounded slab ran (%s)", msg);
    /* Rspecular: 0.04 + 0.96^2 r2 / (1 - 0.04 r2), r2 = (0.1 / 2.9)^2; .mco prints 6 digits. */
    tap_ok(fabs(r.rsp - 0.0410959) < 1e-7, "glass-bounded Rsp %.7f = 0.0410959", r.rsp);
    within("glass-bounded Rsp + Rd", r.rsp + r.rd, hypot(r.rd_se, 0.00016), 0.623375, 3);
    within("glass-bounded A", r.a, hypot(r.a_se, hypot(0.00016, 0.00003)),
           1.0 - 0.623375 - 0.101556, 3);
    within("glass-bounded Tt", r.tt, hypot(r.tt_se, 0.00003), 0.101556, 3);
    /* Nothing is absorbed in the clear layers (A_l 0 0.275 0 in the .mco). */
    tap_ok(a.a_layer[0] == 0.0 && a.a_layer[2] == 0.0 && fabs(a.a_layer[1] - r.a) < 1e-9,
           "A_l %.4f %.4f %.4f: absorption only in the tissue", a.a_layer[0], a.a_layer[1],
           a.a_layer[2]);
    double sum = r.rsp + r.rd + r.a + r.tt;
    tap_ok(fabs(sum - 1.0) <= 1e-6, "glass-bounded: Rsp + Rd + A + Tt - 1 = %.2e (<= 1e-6)",
           sum - 1.0);
    arrays_free(&a);
}

static int same_result(const fm_mcml_result *x, const fm_mcml_result *y, const fm_mcml_params *p)
{
    return x->rd == y->rd && x->a == y->a && x->tt == y->tt && x->rd_se == y->rd_se &&
           memcmp(x->a_rz, y->a_rz, sizeof(double) * p->nr * p->nz) == 0 &&
           memcmp(x->rd_ra, y->rd_ra, sizeof(double) * p->nr * p->na) == 0 &&
           memcmp(x->tt_ra, y->tt_ra, sizeof(double) * p->nr * p->na) == 0;
}

static void test_reproducible_and_modes(void)
{
    fm_mcml_params p = sample_params(20000, 5);
    p.na = 5;
    arrays a1, a2, a3, a4;
    fm_mcml_result r1 = result_with(&p, &a1), r2 = result_with(&p, &a2);
    char msg[FM_MSG_LEN] = "";
    fm_mcml_run(&p, &r1, FM_BACKEND_CPU, NULL, NULL, NULL, msg, sizeof msg);
#ifdef _OPENMP
    int threads = omp_get_max_threads();
    omp_set_num_threads(1); /* integer tallies and per-photon streams: thread count is moot */
#endif
    fm_mcml_run(&p, &r2, FM_BACKEND_CPU, NULL, NULL, NULL, msg, sizeof msg);
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    tap_ok(same_result(&r1, &r2, &p), "same seed: identical result, bit for bit (all threads "
           "vs one)");

    fm_mcml_params q = p;
    q.seed = 6;
    fm_mcml_result r3 = result_with(&q, &a3);
    fm_mcml_run(&q, &r3, FM_BACKEND_CPU, NULL, NULL, NULL, msg, sizeof msg);
    tap_ok(r3.rd != r1.rd && fabs(r3.rd - r1.rd) < 5 * hypot(r1.rd_se, r3.rd_se),
           "another seed: a different, statistically equal Rd (%.5f vs %.5f)", r3.rd, r1.rd);

    fm_mcml_params t = p;
    t.record_absorption = 0;
    fm_mcml_result r4 = result_with(&t, &a4);
    fm_mcml_run(&t, &r4, FM_BACKEND_CPU, NULL, NULL, NULL, msg, sizeof msg);
    int zero = 1;
    for (int i = 0; i < p.nr * p.nz; i++)
        zero &= r4.a_rz[i] == 0.0;
    tap_ok(r4.rd == r1.rd && r4.tt == r1.tt && r4.a == r1.a &&
               memcmp(r4.rd_ra, r1.rd_ra, sizeof(double) * p.nr * p.na) == 0 &&
               memcmp(r4.tt_ra, r1.tt_ra, sizeof(double) * p.nr * p.na) == 0 && zero,
           "R/T-only mode: the same Rd, Tt, A and Rd_ra, Tt_ra as the full mode; A_rz empty");
    arrays_free(&a1);
    arrays_free(&a2);
    arrays_free(&a3);
    arrays_free(&a4);
}

static void test_cancel_and_auto(void)
{
    fm_mcml_params p = sample_params(50000, 3);
    arrays a;
    fm_mcml_result r = result_with(&p, &a);
    char msg[FM_MSG_LEN] = "";
    int calls = 0;
    fm_status st =
        fm_mcml_run(&p, &r, FM_BACKEND_CPU, tick_stop_at_first, &calls, NULL, msg, sizeof msg);
    double sum = r.rsp + r.rd + r.a + r.tt;
    tap_ok(st == FM_ERR_CANCELLED && r.photons_done > 0 && r.photons_done < p.n_photons &&
               fabs(sum - 1.0) < 1e-6 && fabs(r.rd - 0.2375) < 0.05,
           "cancel: valid partial result, %lld of %lld photons, Rd %.4f, sum - 1 = %.1e (%s)",
           r.photons_done, p.n_photons, r.rd, sum - 1.0, msg);

    char why[FM_MSG_LEN] = "";
    int have_gpu = fm_device_count(why, sizeof why) > 0;
    fm_run_info info;
    p.n_photons = 2000;
    st = fm_mcml_run(&p, &r, FM_BACKEND_AUTO, NULL, NULL, &info, msg, sizeof msg);
    tap_ok(st == FM_OK && (have_gpu ? info.backend_used == FM_BACKEND_CUDA
                                    : info.backend_used == FM_BACKEND_CPU && info.fell_back &&
                                          info.fallback_reason[0]),
           "auto backend: %s on %s%s%s", fm_backend_name(info.backend_used), info.device_name,
           info.fell_back ? ", fell back: " : "", info.fell_back ? info.fallback_reason : "");
    arrays_free(&a);
}

int main(void)
{
    test_philox();
    test_check();
    test_matched_slab();
    test_sample();
    test_glass_bounded_slab();
    test_reproducible_and_modes();
    test_cancel_and_auto();
    return tap_done();
}
