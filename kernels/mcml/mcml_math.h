/* MCML photon physics written once for the CPU twin and the CUDA kernels: Philox RNG, launch,
 * hop/drop/spin, Fresnel boundaries and roulette (Wang, Jacques, Zheng 1995, sections 3-4). */
#pragma once

#include <math.h>
#include <stdint.h>

#include "../fm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FM_MCML_WEIGHT_MIN 1e-4f /* MCML's WEIGHT: roulette threshold */
#define FM_MCML_CHANCE 0.1f      /* MCML's CHANCE: roulette survival probability */
/* Single precision (as GPU-MCML): MCML's 1 - 1e-12 would round to 1. */
#define FM_MCML_COSZERO (1.0f - 1.0e-6f)
#define FM_MCML_COS90D 1.0e-6f
/* Tallies are 64-bit fixed point, 2^32 per unit weight (GPU-MCML's integer accumulators): the
 * sums are exact and independent of the order of addition, so a fixed seed gives the same CPU
 * result with any thread count, and one voxel holds up to 2^31 photons of full weight. */
#define FM_MCML_QSCALE 4294967296.0f
#define FM_MCML_BATCHES 16 /* photon batches (photon index mod 16) for standard errors */
enum { FM_MCML_B_COUNT, FM_MCML_B_RD, FM_MCML_B_A, FM_MCML_B_TT, FM_MCML_B_ROUL, FM_MCML_B_N };

/* FM_MCML_FAST_MATH=1 (a build option for timing it: -Dcuda_args=-DFM_MCML_FAST_MATH=1) turns
 * the hot path's IEEE divisions and square roots into the approximate hardware ones on the GPU,
 * as GPU-MCML's -use_fast_math does; the CPU twin keeps IEEE. Off until a device run shows it
 * pays and keeps the statistics (test-kernels-mcml-cuda). */
#ifndef FM_MCML_FAST_MATH
#define FM_MCML_FAST_MATH 0
#endif
#if defined(__CUDA_ARCH__) && FM_MCML_FAST_MATH
__device__ static inline float fm_mcml_fast_sqrt(float x)
{
    float y;
    asm("sqrt.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
#define FM_MCML_DIV(a, b) __fdividef(a, b)
#define FM_MCML_SQRT(x) fm_mcml_fast_sqrt(x)
#else
#define FM_MCML_DIV(a, b) ((a) / (b))
#define FM_MCML_SQRT(x) sqrtf(x)
#endif

#if defined(__CUDA_ARCH__)
#define FM_MCML_LOGF(x) __logf(x)
#define FM_MCML_SINCOSF(x, s, c) __sincosf(x, s, c)
#define FM_MCML_Q(w) __float2ull_rn((w) * FM_MCML_QSCALE)
#define FM_MCML_MULHI(a, b) __umulhi(a, b)
#else
#define FM_MCML_LOGF(x) logf(x)
#define FM_MCML_SINCOSF(x, s, c) (*(s) = sinf(x), *(c) = cosf(x))
/* Same rounding as __float2ull_rn (nearest even): the product is exact (power of two). */
#define FM_MCML_Q(w) ((unsigned long long)llrintf((w) * FM_MCML_QSCALE))
#define FM_MCML_MULHI(a, b) ((uint32_t)(((uint64_t)(a) * (uint64_t)(b)) >> 32))
#endif

/* One layer in single precision; index 0 is the medium above, n_layers + 1 the one below. */
typedef struct {
    float z0, z1;                   /* top and bottom depth, cm */
    float n, mua, mut, inv_mut, g;  /* mut = mua + mus; inv_mut 0 for a clear (glass) layer */
    float cos_crit_up, cos_crit_dn; /* cosines of the critical angles (0 when none) */
} fm_mcml_layer_f;

typedef struct {
    int n_layers, nz, nr, na;
    float dz, dr, da, inv_dz, inv_dr, inv_da;
    float w0;          /* launched weight 1 - Rsp */
    int start_layer;   /* 1, or 2 when layer 1 is glass (MCML's LaunchPhoton) */
    float start_z;
    fm_mcml_layer_f layer[34]; /* FM_MCML_MAX_LAYERS + 2 */
} fm_mcml_medium;

/* Philox4x32-10 (Salmon et al., SC'11), the counter-based generator that seeds each photon:
 * counter = (photon index, 0), key = seed, so a run does not depend on which thread or GPU ran
 * which photon. */
FM_HD static inline void fm_mcml_philox(uint32_t c[4], uint32_t k0, uint32_t k1)
{
    for (int r = 0; r < 10; r++) {
        uint32_t lo0 = 0xD2511F53u * c[0], hi0 = FM_MCML_MULHI(0xD2511F53u, c[0]);
        uint32_t lo1 = 0xCD9E8D57u * c[2], hi1 = FM_MCML_MULHI(0xCD9E8D57u, c[2]);
        uint32_t n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
        c[0] = n0;
        c[1] = lo1;
        c[2] = n2;
        c[3] = lo0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
}

/* The photon's own stream: xoshiro128** (Blackman & Vigna, "Scrambled linear pseudorandom number
 * generators", ACM TOMS 47(4), 2021), 128-bit state, period 2^128 - 1, passes BigCrush; its
 * state is Philox's output for the photon. Every draw costs the same dozen 32-bit operations
 * with no branch: drawing Philox blocks four outputs at a time made the lanes of a warp refill at
 * different draws, so the warp ran the 10-round block at nearly every draw. */
typedef struct {
    uint32_t s0, s1, s2, s3;
} fm_mcml_rng;

FM_HD static inline void fm_mcml_rng_init(fm_mcml_rng *g, unsigned long long seed,
                                          unsigned long long photon)
{
    uint32_t c[4] = {(uint32_t)photon, (uint32_t)(photon >> 32), 0, 0};
    fm_mcml_philox(c, (uint32_t)seed, (uint32_t)(seed >> 32));
    g->s0 = c[0] | ((c[0] | c[1] | c[2] | c[3]) == 0); /* the all-zero state is a fixed point */
    g->s1 = c[1];
    g->s2 = c[2];
    g->s3 = c[3];
}

FM_HD static inline uint32_t fm_mcml_rotl(uint32_t x, int k)
{
    return (x << k) | (x >> (32 - k));
}

FM_HD static inline uint32_t fm_mcml_next(fm_mcml_rng *g)
{
    const uint32_t r = fm_mcml_rotl(g->s1 * 5u, 7) * 9u, t = g->s1 << 9;
    g->s2 ^= g->s0;
    g->s3 ^= g->s1;
    g->s1 ^= g->s2;
    g->s0 ^= g->s3;
    g->s2 ^= t;
    g->s3 = fm_mcml_rotl(g->s3, 11);
    return r;
}

/* Uniform in (0, 1]: the top 24 bits, exact in float; never 0, so -log is finite (MCML rejects
 * 0). */
FM_HD static inline float fm_mcml_rand(fm_mcml_rng *g)
{
    return (float)((fm_mcml_next(g) >> 8) + 1u) * (1.0f / 16777216.0f);
}

typedef struct {
    float x, y, z, ux, uy, uz, w, sleft; /* sleft: dimensionless remaining step (MCML) */
    int layer, dead;
    long long roulette_q; /* weight roulette added (+) or removed (-), fixed point */
    fm_mcml_rng rng;
} fm_mcml_photon;

/* What one step scored; the backend adds it to its own tallies. */
typedef struct {
    unsigned long long absorb_q; /* 0: no drop this step */
    int absorb_ir, absorb_iz, absorb_layer;
    int escape; /* 0 none, 1 reflected (Rd), 2 transmitted (Tt) */
    int escape_ir, escape_ia;
    unsigned long long escape_q;
} fm_mcml_event;

/* MCML's Rspecular, including multiple reflection in a clear first layer. */
static inline double fm_mcml_rspecular(double n0, double n1, double n2, int layer1_clear)
{
    double r1 = (n0 - n1) / (n0 + n1);
    r1 *= r1;
    if (layer1_clear) {
        double r2 = (n1 - n2) / (n1 + n2);
        r2 *= r2;
        r1 += (1.0 - r1) * (1.0 - r1) * r2 / (1.0 - r1 * r2);
    }
    return r1;
}

FM_HD static inline void fm_mcml_launch(fm_mcml_photon *p, const fm_mcml_medium *m,
                                        unsigned long long seed, unsigned long long index)
{
    p->x = p->y = 0.0f;
    p->z = m->start_z;
    p->ux = p->uy = 0.0f;
    p->uz = 1.0f;
    p->w = m->w0;
    p->sleft = 0.0f;
    p->layer = m->start_layer;
    p->dead = 0;
    p->roulette_q = 0;
    fm_mcml_rng_init(&p->rng, seed, index);
}

FM_HD static inline int fm_mcml_clamp_bin(float f, int n)
{
    return f <= 0.0f ? 0 : f >= (float)(n - 1) ? n - 1 : (int)f;
}

/* MCML's RFresnel: unpolarised Fresnel reflectance for incidence cosine ca1 (> 0) from n1 into
 * n2; *ca2 gets the cosine of the transmission angle. */
FM_HD static inline float fm_mcml_fresnel(float n1, float n2, float ca1, float *ca2)
{
    if (n1 == n2) {
        *ca2 = ca1;
        return 0.0f;
    }
    if (ca1 > FM_MCML_COSZERO) {
        *ca2 = ca1;
        float r = (n2 - n1) / (n2 + n1);
        return r * r;
    }
    if (ca1 < FM_MCML_COS90D) {
        *ca2 = 0.0f;
        return 1.0f;
    }
    float sa1 = sqrtf(1.0f - ca1 * ca1), sa2 = n1 * sa1 / n2;
    if (sa2 >= 1.0f) {
        *ca2 = 0.0f;
        return 1.0f;
    }
    float c2 = sqrtf(1.0f - sa2 * sa2);
    *ca2 = c2;
    float cap = ca1 * c2 - sa1 * sa2, cam = ca1 * c2 + sa1 * sa2; /* cos(a1 +- a2) */
    float sap = sa1 * c2 + ca1 * sa2, sam = sa1 * c2 - ca1 * sa2; /* sin(a1 +- a2) */
    float r = 0.5f * sam * sam * (cam * cam + cap * cap) / (sap * sap * cam * cam);
    return r > 1.0f ? 1.0f : r;
}

/* MCML's SpinTheta and direction update (eqs. 3.22-3.25 of the MCML manual). */
FM_HD static inline void fm_mcml_spin(fm_mcml_photon *p, float g)
{
    float cost;
    float xi = fm_mcml_rand(&p->rng);
    if (g == 0.0f) {
        cost = 2.0f * xi - 1.0f;
    } else {
        float t = FM_MCML_DIV(1.0f - g * g, 1.0f - g + 2.0f * g * xi);
        cost = FM_MCML_DIV(1.0f + g * g - t * t, 2.0f * g);
        cost = cost < -1.0f ? -1.0f : cost > 1.0f ? 1.0f : cost;
    }
    float sint = FM_MCML_SQRT(1.0f - cost * cost), sinp, cosp;
    /* psi uniform on the circle; [-pi, pi) keeps the fast device sincos in its accurate range. */
    float psi = 3.14159265358979f * (2.0f * fm_mcml_rand(&p->rng) - 1.0f);
    FM_MCML_SINCOSF(psi, &sinp, &cosp);
    float ux = p->ux, uy = p->uy, uz = p->uz;
    if (fabsf(uz) > FM_MCML_COSZERO) {
        p->ux = sint * cosp;
        p->uy = sint * sinp;
        p->uz = uz >= 0.0f ? cost : -cost;
    } else {
        float t = FM_MCML_SQRT(1.0f - uz * uz), it = FM_MCML_DIV(1.0f, t);
        p->ux = sint * (ux * uz * cosp - uy * sinp) * it + ux * cost;
        p->uy = sint * (uy * uz * cosp + ux * sinp) * it + uy * cost;
        p->uz = -sint * cosp * t + uz * cost;
    }
}

/* Escape through the top (reflect = 1, MCML's RecordR) or bottom (RecordT): the whole weight
 * leaves (MCML's statistical partial reflection, PARTIALREFLECTION 0). */
FM_HD static inline void fm_mcml_escape(fm_mcml_photon *p, const fm_mcml_medium *m,
                                        fm_mcml_event *ev, int reflect, float cos_exit)
{
    float r = sqrtf(p->x * p->x + p->y * p->y);
    ev->escape = reflect ? 1 : 2;
    ev->escape_ir = fm_mcml_clamp_bin(r * m->inv_dr, m->nr);
    ev->escape_ia = fm_mcml_clamp_bin(acosf(cos_exit) * m->inv_da, m->na);
    ev->escape_q = FM_MCML_Q(p->w);
    p->dead = 1;
}

/* MCML's CrossUpOrNot / CrossDnOrNot at the boundary the photon has just reached. */
FM_HD static inline void fm_mcml_cross(fm_mcml_photon *p, const fm_mcml_medium *m,
                                       fm_mcml_event *ev)
{
    const fm_mcml_layer_f *L = &m->layer[p->layer];
    float uz = p->uz, uz1 = 0.0f, r;
    if (uz < 0.0f) {
        float ni = L->n, nt = m->layer[p->layer - 1].n;
        r = -uz <= L->cos_crit_up ? 1.0f : fm_mcml_fresnel(ni, nt, -uz, &uz1);
        if (fm_mcml_rand(&p->rng) > r) {
            if (p->layer == 1) {
                p->uz = -uz1;
                fm_mcml_escape(p, m, ev, 1, uz1);
            } else {
                p->layer--;
                p->ux *= ni / nt;
                p->uy *= ni / nt;
                p->uz = -uz1;
            }
        } else {
            p->uz = -uz;
        }
    } else {
        float ni = L->n, nt = m->layer[p->layer + 1].n;
        r = uz <= L->cos_crit_dn ? 1.0f : fm_mcml_fresnel(ni, nt, uz, &uz1);
        if (fm_mcml_rand(&p->rng) > r) {
            if (p->layer == m->n_layers) {
                p->uz = uz1;
                fm_mcml_escape(p, m, ev, 0, uz1);
            } else {
                p->layer++;
                p->ux *= ni / nt;
                p->uy *= ni / nt;
                p->uz = uz1;
            }
        } else {
            p->uz = -uz;
        }
    }
}

FM_HD static inline void fm_mcml_hop(fm_mcml_photon *p, float s)
{
    p->x += s * p->ux;
    p->y += s * p->uy;
    p->z += s * p->uz;
}

/* One MCML step (HopDropSpin): in tissue a step of -ln(xi)/mut, or the remaining dimensionless
 * step of the last boundary hit over the new layer's mut; at a boundary the photon stops there,
 * keeps the rest in sleft and is reflected or refracted; else absorption (Drop) and scattering
 * (Spin). Then roulette. Absorbed weight is scored as the drop of the fixed-point weight, and
 * roulette's gains and losses are kept exactly, so the tallies balance to the last unit. */
FM_HD static inline void fm_mcml_step(fm_mcml_photon *p, const fm_mcml_medium *m,
                                      fm_mcml_event *ev)
{
    const fm_mcml_layer_f *L = &m->layer[p->layer];
    ev->absorb_q = 0;
    ev->escape = 0;
    if (L->inv_mut == 0.0f) { /* clear layer: straight to its boundary (MCML's HopInGlass) */
        if (p->uz == 0.0f) {
            p->roulette_q -= (long long)FM_MCML_Q(p->w); /* travels forever: lost, kept exact */
            p->dead = 1;
            return;
        }
        float s = (p->uz > 0.0f ? L->z1 - p->z : L->z0 - p->z) / p->uz;
        fm_mcml_hop(p, s > 0.0f ? s : 0.0f);
        fm_mcml_cross(p, m, ev);
    } else {
        float s;
        if (p->sleft == 0.0f) {
            s = -FM_MCML_LOGF(fm_mcml_rand(&p->rng)) * L->inv_mut;
        } else {
            s = p->sleft * L->inv_mut;
            p->sleft = 0.0f;
        }
        float db = 3.0e38f;
        if (p->uz > 0.0f)
            db = FM_MCML_DIV(L->z1 - p->z, p->uz);
        else if (p->uz < 0.0f)
            db = FM_MCML_DIV(L->z0 - p->z, p->uz);
        db = db > 0.0f ? db : 0.0f;
        if (s > db) {
            p->sleft = (s - db) * L->mut;
            fm_mcml_hop(p, db);
            fm_mcml_cross(p, m, ev);
        } else {
            fm_mcml_hop(p, s);
            float r = FM_MCML_SQRT(p->x * p->x + p->y * p->y);
            float w1 = p->w - p->w * (L->mua * L->inv_mut);
            ev->absorb_q = FM_MCML_Q(p->w) - FM_MCML_Q(w1);
            ev->absorb_ir = fm_mcml_clamp_bin(r * m->inv_dr, m->nr);
            ev->absorb_iz = fm_mcml_clamp_bin(p->z * m->inv_dz, m->nz);
            ev->absorb_layer = p->layer;
            p->w = w1;
            fm_mcml_spin(p, L->g);
        }
    }
    if (!p->dead && p->w < FM_MCML_WEIGHT_MIN) { /* MCML's Roulette */
        unsigned long long before = FM_MCML_Q(p->w);
        if (fm_mcml_rand(&p->rng) <= FM_MCML_CHANCE) {
            p->w /= FM_MCML_CHANCE;
            p->roulette_q += (long long)(FM_MCML_Q(p->w) - before);
        } else {
            p->roulette_q -= (long long)before;
            p->w = 0.0f;
            p->dead = 1;
        }
    }
}

#ifdef __cplusplus
}
#endif
