/* MCML photon physics written once for the CPU twin and the CUDA kernel: per-photon generator,
 * launch, hop/drop/spin, Fresnel boundaries and roulette (Wang, Jacques, Zheng 1995, sections
 * 3-4), in the branch-light form of GPU-MCML (Alerstam et al. 2010, section 2). */
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../fm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Weights are 32-bit fixed point, 2^31 per unit weight, in the photon as in the tallies
 * (GPU-MCML's integer accumulators, carried into the photon): a drop removes an integer, so the
 * tallies balance to the last unit and do not depend on the order of addition; a fixed seed gives
 * the same CPU result with any thread count. A photon's weight never exceeds 1 (2^31). */
#define FM_MCML_QSCALE 2147483648.0
#define FM_MCML_WEIGHT_MIN 214748u /* MCML's WEIGHT 1e-4, fixed point: roulette threshold */
#define FM_MCML_CHANCE 0.1f        /* MCML's CHANCE: roulette survival probability */
/* The launch direction's tilt from the normal, radians: 1e-10 moves a photon 1e-10 cm per cm of
 * flight, far below any grid; it gives fm_mcml_spin a defined azimuth reference from the start. */
#define FM_MCML_TILT 1.0e-10f
#define FM_MCML_BATCHES 16 /* photon batches (photon index mod 16) for standard errors */
/* Per batch: photons, Rd and Tt weight, roulette's net weight (two's complement); absorbed is
 * photons * launched weight + roulette net - Rd - Tt, exactly. */
enum { FM_MCML_B_COUNT, FM_MCML_B_RD, FM_MCML_B_TT, FM_MCML_B_ROUL, FM_MCML_B_N };

/* The device uses the hardware's approximate reciprocal, square root, logarithm and sine
 * (GPU-MCML's -use_fast_math), flushing denormals (.ftz: without it each costs three more
 * instructions to rescale tiny inputs, and no input here is tiny enough to matter); the CPU twin
 * keeps IEEE. Both draw the same numbers, so a photon follows the same path on both until a
 * rounding difference flips a decision (a Fresnel draw, a bin edge); from there the two are
 * statistically equal, which test-kernels-mcml-cuda checks. */
#if defined(__CUDA_ARCH__)
#define FM_MCML_PTX_UNARY(name, op)                                                                \
    __device__ static inline float name(float x)                                                   \
    {                                                                                              \
        float y;                                                                                   \
        asm(op " %0, %1;" : "=f"(y) : "f"(x));                                                     \
        return y;                                                                                  \
    }
FM_MCML_PTX_UNARY(fm_mcml_rcp_ftz, "rcp.approx.ftz.f32")
FM_MCML_PTX_UNARY(fm_mcml_sqrt_ftz, "sqrt.approx.ftz.f32")
FM_MCML_PTX_UNARY(fm_mcml_rsqrt_ftz, "rsqrt.approx.ftz.f32")
FM_MCML_PTX_UNARY(fm_mcml_lg2_ftz, "lg2.approx.ftz.f32")
FM_MCML_PTX_UNARY(fm_mcml_sin_ftz, "sin.approx.ftz.f32")
FM_MCML_PTX_UNARY(fm_mcml_cos_ftz, "cos.approx.ftz.f32")
#define FM_MCML_RCP(x) fm_mcml_rcp_ftz(x)
#define FM_MCML_DIV(a, b) ((a)*fm_mcml_rcp_ftz(b))
#define FM_MCML_SQRT(x) fm_mcml_sqrt_ftz(x)
#define FM_MCML_RSQRT(x) fm_mcml_rsqrt_ftz(x)
#define FM_MCML_LOG2F(x) fm_mcml_lg2_ftz(x)
/* psi is in (-pi, pi): the range where sin.approx and cos.approx are accurate */
#define FM_MCML_SINCOSF(x, s, c) (*(s) = fm_mcml_sin_ftz(x), *(c) = fm_mcml_cos_ftz(x))
#else
#define FM_MCML_RCP(x) (1.0f / (x))
#define FM_MCML_DIV(a, b) ((a) / (b))
#define FM_MCML_SQRT(x) sqrtf(x)
#define FM_MCML_RSQRT(x) (1.0f / sqrtf(x))
#define FM_MCML_LOG2F(x) log2f(x)
#define FM_MCML_SINCOSF(x, s, c) (*(s) = sinf(x), *(c) = cosf(x))
#endif
#if defined(__CUDA_ARCH__)
#define FM_MCML_MULHI(a, b) __umulhi(a, b)
#define FM_MCML_AS_FLOAT(u) __uint_as_float(u)
#else
#define FM_MCML_MULHI(a, b) ((uint32_t)(((uint64_t)(a) * (uint64_t)(b)) >> 32))
static inline float fm_mcml_as_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
#define FM_MCML_AS_FLOAT(u) fm_mcml_as_float(u)
#endif

/* One layer in single precision; index 0 is the medium above, n_layers + 1 the one below. The
 * photon carries a copy of its layer's (in registers on the GPU) and refreshes it when it enters
 * another layer. */
typedef struct {
    float z0, z1;       /* top and bottom depth, cm */
    float step_scale;   /* -ln 2 / (mua + mus): log2(xi) times it is the flight in cm;
                         * -3e37 for a clear layer, whose flights always reach a face */
    uint32_t mua_mut_q; /* mua / (mua + mus), 0.32 fixed point: the fraction a drop removes */
    /* Henyey-Greenstein (MCML's SpinTheta) for a draw f in (1, 2), xi = 2 - f:
     * u = 1 / (hg_b - hg_c f) = 1 / (1 - g + 2 g xi), cos(theta) = hg_p + hg_q u^2 + hg_r f;
     * hg_p = (1 + g^2) / 2g, hg_q = -(1 - g^2)^2 / 2g, hg_r = 0, and for g = 0 (isotropic,
     * cos(theta) = 2 xi - 1) hg_b = 1, hg_c = 0, hg_p = 3, hg_q = 0, hg_r = -2: one formula. */
    float hg_b, hg_c, hg_p, hg_q, hg_r;
    float eta_up, eta_dn; /* n / n of the layer above, below */
} fm_mcml_layer_f;

/* The scoring grid: inverse bin widths and the last bins (as floats, for clamping). */
typedef struct {
    float inv_dz, inv_dr, inv_da;
    float nz_max, nr_max, na_max;
} fm_mcml_grid;

typedef struct {
    int n_layers, nz, nr, na;
    fm_mcml_grid grid;
    uint32_t w0_q;   /* launched weight 1 - Rsp, fixed point */
    int start_layer; /* 1, or 2 when layer 1 is clear (MCML's LaunchPhoton) */
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

/* The photon's own stream: multiply-with-carry, z -> a (z mod 2^32) + floor(z / 2^32)
 * (Marsaglia 2003; GPU-MCML's generator), one 32x32+32 -> 64-bit multiply-add per draw. a is the
 * photon's multiplier (its index mod FM_MCML_MWC_COUNT, from mcml_mwc_table.h): a 2^32 - 1 is a
 * safe prime, so the stream has period (a 2^32 - 2) / 2, about 2^62; Philox(index, seed) picks
 * the photon's starting point on it. The state is z = c 2^32 + x, the output x, in one 64-bit
 * variable. */
typedef struct {
    uint64_t z;
    uint32_t a;
} fm_mcml_rng;

FM_HD static inline void fm_mcml_rng_set(fm_mcml_rng *g, uint32_t x, uint32_t c, uint32_t a)
{
    g->z = (uint64_t)c << 32 | x;
    g->a = a;
}

FM_HD static inline uint32_t fm_mcml_rng_x(const fm_mcml_rng *g)
{
    return (uint32_t)g->z;
}

FM_HD static inline uint32_t fm_mcml_rng_c(const fm_mcml_rng *g)
{
    return (uint32_t)(g->z >> 32);
}

FM_HD static inline uint32_t fm_mcml_next(fm_mcml_rng *g)
{
#if defined(__CUDA_ARCH__)
    /* The same multiply-add in PTX: from C, the compiler rebuilt the (c, 0) addend pair with
     * register moves at every draw (five instructions per draw; this is three). */
    asm("{\n\t.reg .b32 lo, hi;\n\t.reg .b64 t;\n\t"
        "mov.b64 {lo, hi}, %0;\n\t"
        "cvt.u64.u32 t, hi;\n\t"
        "mad.wide.u32 %0, lo, %1, t;\n\t}"
        : "+l"(g->z)
        : "r"(g->a));
#else
    g->z = (uint64_t)g->a * (uint32_t)g->z + (g->z >> 32);
#endif
    return (uint32_t)g->z;
}

FM_HD static inline void fm_mcml_rng_init(fm_mcml_rng *g, unsigned long long seed,
                                          unsigned long long photon, uint32_t a)
{
    uint32_t k[4] = {(uint32_t)photon, (uint32_t)(photon >> 32), 0, 0};
    fm_mcml_philox(k, (uint32_t)seed, (uint32_t)(seed >> 32));
    /* A state z = c 2^32 + x in [1, a 2^32 - 2]: c < 2^31 < a - 1, and z = 0 is a fixed point. */
    const uint32_t c = k[1] & 0x7FFFFFFFu;
    fm_mcml_rng_set(g, k[0] | (c == 0 && k[0] == 0), c, a);
}

/* Uniform in (1, 2): 22 bits of the draw (bits 1-22; a multiply-with-carry generator's output is
 * random in all 32 bits) with the lowest mantissa bit set, as a float: two logic operations, no
 * conversion. Callers fold the affine map to what they need into their own multiply-add:
 * xi = 2 - f is uniform in (0, 1), open at both ends. */
FM_HD static inline float fm_mcml_rand12(fm_mcml_rng *g)
{
    return FM_MCML_AS_FLOAT((fm_mcml_next(g) & 0x007FFFFEu) | 0x3F800001u);
}

/* Uniform in (0, 1), open at both ends so that -log(u) is finite and positive. */
FM_HD static inline float fm_mcml_rand(fm_mcml_rng *g)
{
    return 2.0f - fm_mcml_rand12(g);
}

/* x y z direction, weight (0: dead), layer and a copy of its data, generator. */
typedef struct {
    float x, y, z, ux, uy, uz;
    uint32_t w;
    int layer;
    fm_mcml_layer_f L;
    fm_mcml_rng rng;
} fm_mcml_photon;

/* A photon that left the medium at a crossing: through the top (escape 1, Rd) or the bottom
 * (2, Tt), its weight and the cosine of its exit angle. */
typedef struct {
    int escape;
    uint32_t w;
    float cos_exit;
} fm_mcml_escape;

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
                                        unsigned long long seed, unsigned long long index,
                                        uint32_t a)
{
    p->x = p->y = 0.0f;
    p->z = m->start_z;
    p->ux = FM_MCML_TILT;
    p->uy = 0.0f;
    p->uz = 1.0f; /* sqrt(1 - TILT^2) in single precision */
    p->w = m->w0_q;
    p->layer = m->start_layer;
    p->L = m->layer[m->start_layer];
    fm_mcml_rng_init(&p->rng, seed, index, a);
}

/* Bin of a non-negative coordinate already divided by the bin width, clamped to the last bin
 * (as MCML): min, max and one conversion. */
FM_HD static inline int fm_mcml_bin(float f, float last)
{
    return (int)fminf(fmaxf(f, 0.0f), last);
}

/* A[r][z] bin of the photon's position. */
FM_HD static inline void fm_mcml_rz_bin(const fm_mcml_photon *p, const fm_mcml_grid *g, int *ir,
                                        int *iz)
{
    *ir = fm_mcml_bin(FM_MCML_SQRT(p->x * p->x + p->y * p->y) * g->inv_dr, g->nr_max);
    *iz = fm_mcml_bin(p->z * g->inv_dz, g->nz_max);
}

/* R[r][a] or T[r][a] bin of an escaped photon. */
FM_HD static inline void fm_mcml_ra_bin(const fm_mcml_photon *p, const fm_mcml_grid *g,
                                        float cos_exit, int *ir, int *ia)
{
    *ir = fm_mcml_bin(FM_MCML_SQRT(p->x * p->x + p->y * p->y) * g->inv_dr, g->nr_max);
    *ia = fm_mcml_bin(acosf(fminf(cos_exit, 1.0f)) * g->inv_da, g->na_max);
}

/* Moves a photon whose flight reached its layer's face (fm_mcml_fly returned 1) onto it. */
FM_HD static inline void fm_mcml_to_face(fm_mcml_photon *p)
{
    const float zb = p->uz > 0.0f ? p->L.z1 : p->L.z0;
    const float d = FM_MCML_DIV(zb - p->z, p->uz); /* uz != 0: the flight left [z0, z1] */
    p->x += d * p->ux;
    p->y += d * p->uy;
    p->z = zb; /* on the face exactly: the next flight starts inside */
}

/* Boundary (MCML's CrossUpOrNot / CrossDnOrNot, GPU-MCML's FastReflectTransmit) for a photon whose
 * flight reached a face: it moves there, then is reflected or transmitted. Unpolarised Fresnel
 * reflectance for incidence cosine ca1 and index ratio eta = n_i / n_t, as the mean of the s and
 * p reflectances (equal to MCML's RFresnel), total internal reflection when the transmitted sine
 * reaches 1; one draw decides, every time. A transmitted photon has ca2 > 0 (ca2 = 0 only when
 * sa2sq >= 1, where r = 1), so no photon ever moves flat in a layer without scattering, where it
 * would never reach a face. Returns 1 (Rd) or 2 (Tt) with *out filled when the photon left the
 * medium, else 0. */
FM_HD static inline int fm_mcml_cross(fm_mcml_photon *p, const fm_mcml_medium *m,
                                      fm_mcml_escape *out)
{
    fm_mcml_to_face(p);
    const int up = p->uz < 0.0f;
    const float eta = up ? p->L.eta_up : p->L.eta_dn;
    const float ca1 = fabsf(p->uz);
    const float sa2sq = eta * eta * (1.0f - ca1 * ca1);
    const float ca2 = FM_MCML_SQRT(fmaxf(1.0f - sa2sq, 0.0f));
    const float rs = FM_MCML_DIV(eta * ca1 - ca2, eta * ca1 + ca2);
    const float rp = FM_MCML_DIV(eta * ca2 - ca1, eta * ca2 + ca1);
    const float r = sa2sq >= 1.0f ? 1.0f : 0.5f * (rs * rs + rp * rp);
    /* transmitted when xi = 2 - f > r (r is NaN only at grazing: reflected) */
    if (2.0f - fm_mcml_rand12(&p->rng) > r) {
        p->layer += up ? -1 : 1;
        p->ux *= eta;
        p->uy *= eta;
        p->uz = up ? -ca2 : ca2;
        if ((unsigned)(p->layer - 1) >= (unsigned)m->n_layers) { /* layer 0 or n_layers + 1 */
            out->escape = up ? 1 : 2;
            out->w = p->w;
            out->cos_exit = ca2;
            p->w = 0;
            return out->escape;
        }
        p->L = m->layer[p->layer];
        return 0;
    }
    p->uz = -p->uz;
    return 0;
}

/* MCML's SpinTheta and direction update (MCML manual eqs. 3.22-3.24), with the projection of the
 * old direction onto the xy plane, ut = sqrt(ux^2 + uy^2), taken from ux and uy rather than from
 * 1 - uz^2: the azimuth's reference is then well defined and accurate however close to vertical
 * the photon flies, so MCML's separate formula for |uz| > COSZERO is not needed (no branch, no
 * select). Photons start tilted by FM_MCML_TILT so that ux^2 + uy^2 > 0 from the first scattering
 * on. Draws are f in (1, 2) with xi = 2 - f folded into the multiply-adds. */
FM_HD static inline void fm_mcml_spin(fm_mcml_photon *p, const fm_mcml_layer_f *L)
{
    const float f = fm_mcml_rand12(&p->rng);
    const float u = FM_MCML_RCP(L->hg_b - L->hg_c * f);
    const float cost = fminf(fmaxf(L->hg_p + L->hg_q * (u * u) + L->hg_r * f, -1.0f), 1.0f);
    const float sint = FM_MCML_SQRT(1.0f - cost * cost);
    /* psi = pi (2 xi - 1) in (-pi, pi): the range where the fast device sincos is accurate */
    float sinp, cosp;
    const float psi = 3.0f * 3.14159265358979f - 2.0f * 3.14159265358979f * fm_mcml_rand12(&p->rng);
    FM_MCML_SINCOSF(psi, &sinp, &cosp);
    const float ux = p->ux, uy = p->uy, uz = p->uz;
    const float ut2 = fmaxf(ux * ux + uy * uy, 1.0e-30f);
    const float sit = sint * FM_MCML_RSQRT(ut2); /* sin(theta) / ut */
    const float c1 = sit * cosp, q = sit * sinp;
    const float cp = cost + c1 * uz;
    p->ux = ux * cp - uy * q; /* ux cos(theta) + sin(theta) (ux uz cos(psi) - uy sin(psi)) / ut */
    p->uy = uy * cp + ux * q; /* uy cos(theta) + sin(theta) (uy uz cos(psi) + ux sin(psi)) / ut */
    p->uz = uz * cost - c1 * ut2; /* uz cos(theta) - sin(theta) cos(psi) ut */
}

/* One MCML step is fm_mcml_fly, then, unless the flight reached a face, fm_mcml_absorb (Drop),
 * fm_mcml_spin and, for a photon below WEIGHT_MIN, fm_mcml_roulette; a flight that reached a face
 * is followed by fm_mcml_cross before the next flight: at once on the CPU, a few steps later on
 * the GPU, where the lanes at a face wait and cross together (one lane in 25 is at a face after
 * a step, so crossing at once made most warps run the crossing with one lane). */

/* Hop: a flight of -ln(xi)/mut. One that would leave the layer, [z0, z1], leaves the photon
 * where it is and returns 1 (fm_mcml_cross moves it onto the face); the next flight after the
 * crossing is drawn afresh: the rest of an exponential flight is again exponential with the same
 * mean free paths (memoryless), so redrawing is exact in distribution and spares MCML's sleft (as
 * GPU-MCML). In a clear layer the flight is at least 3e37 2^-22 cm (or infinite) and uz is never
 * 0 there (fm_mcml_cross), so it always reaches a face. Else the photon moves; returns 0. */
FM_HD static inline int fm_mcml_fly(fm_mcml_photon *p)
{
    const float s = FM_MCML_LOG2F(fm_mcml_rand(&p->rng)) * p->L.step_scale;
    const float z = p->z + s * p->uz;
    if (!(z >= p->L.z0 && z <= p->L.z1))
        return 1;
    p->x += s * p->ux;
    p->y += s * p->uy;
    p->z = z;
    return 0;
}

/* Drop: the weight times mua/mut, removed as an integer (truncated: on average half a unit,
 * 2^-32 of a photon's weight, stays with the photon at each drop, about 1.4e-7 of it over the
 * skin model's 600 drops; rounding cost the device two instructions per step); returns it. */
FM_HD static inline uint32_t fm_mcml_absorb(fm_mcml_photon *p)
{
    const uint32_t dw = (uint32_t)(((uint64_t)p->w * p->L.mua_mut_q) >> 32);
    p->w -= dw;
    return dw;
}

/* Whether MCML's Roulette applies: 0 < w < WEIGHT_MIN (a drop never takes the last unit: in a
 * purely absorbing layer, mua_mut_q = 2^32 - 1, one unit stays and roulette decides). */
FM_HD static inline int fm_mcml_faint(const fm_mcml_photon *p)
{
    return p->w - 1u < FM_MCML_WEIGHT_MIN - 1u;
}

/* MCML's Roulette: the photon survives with probability CHANCE (xi <= 0.1) and weight w / CHANCE.
 * Returns the weight it added (+9 w) or removed (-w). */
FM_HD static inline int32_t fm_mcml_roulette(fm_mcml_photon *p)
{
    if (fm_mcml_rand12(&p->rng) >= 2.0f - FM_MCML_CHANCE) {
        const int32_t added = (int32_t)(9u * p->w);
        p->w *= 10u;
        return added;
    }
    const int32_t removed = -(int32_t)p->w;
    p->w = 0;
    return removed;
}

#ifdef __cplusplus
}
#endif
