/* SD-OCT spectra simulator: Gaussian source, spectrometer linear in lambda, reflectors at known
 * depths, shot noise and a fixed-pattern background. */
#include "app/core/oct/oct_sim.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/oct_raw.h"

/* A-lines are simulated in parallel. */
#ifdef _OPENMP
#define FM_SIM_OMP(directive) _Pragma(directive)
#else
#define FM_SIM_OMP(directive)
#endif

/* Counter-based random numbers (splitmix64 finaliser), as in lsi_sim.c: each value depends only
 * on its coordinates, so a seed gives the same spectra whatever the loop order or thread. */
static inline guint64 mix64(guint64 z)
{
    z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static inline guint64 rand_at(guint64 seed, guint64 stream, guint64 index)
{
    return mix64(seed ^ mix64(stream * G_GUINT64_CONSTANT(0x9e3779b97f4a7c15) + index));
}

static inline double unit_open(guint32 bits)
{
    return ((double)bits + 0.5) * (1.0 / 4294967296.0);
}

static inline double normal_at(guint64 seed, guint64 stream, guint64 index)
{
    guint64 r = rand_at(seed, stream, index);
    return sqrt(-2.0 * log(unit_open((guint32)(r >> 32)))) *
           cos(2.0 * G_PI * unit_open((guint32)r));
}

enum { STREAM_PHASE = 1, STREAM_NOISE, STREAM_PATTERN, STREAM_AMPLITUDE, STREAM_REFERENCE };

void fm_oct_sim_defaults(fm_oct_sim_params *p)
{
    /* 770-910 nm puts the 45 nm FWHM source 3.7 sigma inside each edge (0.1 % of the peak), so
     * truncation barely shapes the PSF; the depth range is then pi/(2 dk) = 2.56 mm in 1024
     * bins of 2.50 um. Reference at 2000 of 4095 counts leaves room for the fringes. */
    *p = (fm_oct_sim_params){
        .sample = FM_OCT_SIM_LAYERS,
        .pixels_per_aline = 2048,
        .alines_per_bscan = 400,
        .n_bscans = 8,
        .center_nm = 840.0,
        .fwhm_nm = 45.0,
        .lambda_first_nm = 770.0,
        .lambda_last_nm = 910.0,
        .scan_width_um = 6000.0, /* 6 x 6 mm: a retinal or skin volume scan */
        .scan_length_um = 6000.0,
        .mirror_depth_um = 800.0,
        .mirror_reflectivity = 0.01,
        .peak_counts = 2000.0,
        .bits = 12,
        .shot_noise = TRUE,
        .fixed_pattern = TRUE,
        .seed = 6,
    };
}

static const char *const sample_names[] = {"mirror", "layers"};

gboolean fm_oct_sim_sample_parse(const char *text, fm_oct_sim_sample *sample)
{
    for (gsize i = 0; i < G_N_ELEMENTS(sample_names); i++)
        if (g_strcmp0(text, sample_names[i]) == 0) {
            *sample = (fm_oct_sim_sample)i;
            return TRUE;
        }
    return FALSE;
}

const char *fm_oct_sim_sample_name(fm_oct_sim_sample sample)
{
    return (unsigned)sample < G_N_ELEMENTS(sample_names) ? sample_names[sample] : "?";
}

void fm_oct_sim_wavelengths(const fm_oct_sim_params *p, double *lambda_nm)
{
    int n = p->pixels_per_aline;
    for (int i = 0; i < n; i++)
        lambda_nm[i] = p->lambda_first_nm + (p->lambda_last_nm - p->lambda_first_nm) * i / (n - 1);
}

double fm_oct_sim_coherence_length_um(const fm_oct_sim_params *p)
{
    return 2.0 * G_LN2 / G_PI * p->center_nm * p->center_nm / p->fwhm_nm * 1e-3;
}

/* Lateral position of A-line a and B-scan b, each -0.5..0.5 across the scan. */
static void lateral(const fm_oct_sim_params *p, int bscan, int aline, double *u, double *v)
{
    *u = (aline + 0.5) / p->alines_per_bscan - 0.5;
    *v = (bscan + 0.5) / p->n_bscans - 0.5;
}

static double surface_um(double u, double v)
{
    return 300.0 + 1200.0 * (u * u + v * v);
}

double fm_oct_sim_aline_spacing_um(const fm_oct_sim_params *p)
{
    return p->scan_width_um / MAX(p->alines_per_bscan, 1);
}

double fm_oct_sim_bscan_spacing_um(const fm_oct_sim_params *p)
{
    return p->scan_length_um / MAX(p->n_bscans, 1);
}

gboolean fm_oct_sim_inclusion_at(const fm_oct_sim_params *p, int bscan, int aline, double *top_um,
                                 double *bottom_um)
{
    double u, v;
    lateral(p, bscan, aline, &u, &v);
    /* a circle in the scan's plane when the scan is square */
    double du = (u - FM_OCT_SIM_INCLUSION_U) / FM_OCT_SIM_INCLUSION_RADIUS;
    double dv = (v - FM_OCT_SIM_INCLUSION_V) / FM_OCT_SIM_INCLUSION_RADIUS *
                (p->scan_length_um / MAX(p->scan_width_um, 1e-9));
    double rho2 = du * du + dv * dv;
    if (rho2 >= 1.0)
        return FALSE;
    double centre = surface_um(u, v) + FM_OCT_SIM_INCLUSION_DEPTH_UM;
    double half = FM_OCT_SIM_INCLUSION_HALF_UM * sqrt(1.0 - rho2);
    *top_um = centre - half;
    *bottom_um = centre + half;
    return TRUE;
}

void fm_oct_sim_layers_at(const fm_oct_sim_params *p, int bscan, int aline,
                          double depth_um[FM_OCT_SIM_N_LAYERS],
                          double reflectivity[FM_OCT_SIM_N_LAYERS])
{
    /* A bowl-shaped surface (cornea-like) that deepens away from the volume's centre, with three
     * layers below it at fixed thickness: B-scans and en-face slices both show structure. */
    static const double offsets_um[FM_OCT_SIM_N_LAYERS] = {0.0, 60.0, 180.0, 320.0};
    static const double r[FM_OCT_SIM_N_LAYERS] = {2e-3, 5e-4, 1e-3, 3e-4};
    double u, v, top, bottom;
    lateral(p, bscan, aline, &u, &v);
    gboolean shadowed = fm_oct_sim_inclusion_at(p, bscan, aline, &top, &bottom);
    double surface = surface_um(u, v);
    for (int i = 0; i < FM_OCT_SIM_N_LAYERS; i++) {
        depth_um[i] = surface + offsets_um[i];
        reflectivity[i] = r[i] * (shadowed && depth_um[i] > top ? FM_OCT_SIM_SHADOW : 1.0);
    }
}

static gboolean check(const fm_oct_sim_params *p, GError **error)
{
    if (p->pixels_per_aline < 16 || p->alines_per_bscan < 1 || p->n_bscans < 1 ||
        !(p->fwhm_nm > 0.0) || !(p->center_nm > 0.0) || !(p->lambda_first_nm > 0.0) ||
        !(p->lambda_last_nm > 0.0) || p->lambda_first_nm == p->lambda_last_nm ||
        !(p->peak_counts > 0.0) || (p->bits != 8 && p->bits != 12 && p->bits != 16) ||
        p->mirror_reflectivity < 0.0 || p->mirror_depth_um < 0.0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("simulate oct: needs >= 16 pixels, >= 1 A-line and B-scan, positive "
                      "wavelengths and width, bits 8, 12 or 16 (got %d pixels, %d A-lines, %d "
                      "B-scans, %d bits)"),
                    p->pixels_per_aline, p->alines_per_bscan, p->n_bscans, p->bits);
        return FALSE;
    }
    return TRUE;
}

/* Gaussian source power at lambda, peak 1: FWHM = 2 sqrt(2 ln 2) sigma. */
static double source(const fm_oct_sim_params *p, double lambda_nm)
{
    double sigma = p->fwhm_nm / (2.0 * sqrt(2.0 * G_LN2));
    double d = (lambda_nm - p->center_nm) / sigma;
    return exp(-0.5 * d * d);
}

/* Fixed-pattern dark offset of pixel n: a slow ripple plus a frozen per-pixel offset, the same
 * in every A-line, so background subtraction must remove it. */
static double pattern(const fm_oct_sim_params *p, int n)
{
    if (!p->fixed_pattern)
        return 0.0;
    return 100.0 + 20.0 * sin(2.0 * G_PI * n / 37.0) + 5.0 * normal_at(p->seed, STREAM_PATTERN, n);
}

/* What every A-line shares, per spectrometer pixel: wavenumber, source power and the fixed
 * pattern, computed once instead of in every A-line (the pattern's sin, log and cos were a
 * third of the libm calls per pixel). */
typedef struct {
    double *k_per_um, *source, *pattern;
} spectrometer;

static void spectrometer_init(spectrometer *sp, const fm_oct_sim_params *p)
{
    int n = p->pixels_per_aline;
    sp->k_per_um = g_new(double, n);
    sp->source = g_new(double, n);
    sp->pattern = g_new(double, n);
    fm_oct_sim_wavelengths(p, sp->k_per_um);
    for (int x = 0; x < n; x++) {
        sp->source[x] = source(p, sp->k_per_um[x]);
        sp->k_per_um[x] = 2.0 * G_PI / (sp->k_per_um[x] * 1e-3); /* rad/um */
        sp->pattern[x] = pattern(p, x);
    }
}

static void spectrometer_clear(spectrometer *sp)
{
    g_free(sp->k_per_um);
    g_free(sp->source);
    g_free(sp->pattern);
}

/* One A-line: I(k) = P S(k) [1 + sum R_i + 2 sum sqrt(R_i) cos(2 k z_i + phi_i)] with the
 * reference arm as unit reflector (sample-sample cross terms left out: they sit near DC), then
 * Gaussian-approximated Poisson noise on the photo-electrons (means of 10^2..10^3 counts). */
#define MAX_REFLECTORS (FM_OCT_SIM_N_LAYERS + 2) /* the layers, an inclusion's top and bottom */

static void aline(const fm_oct_sim_params *p, const spectrometer *sp, const double *depth,
                  const double *refl, const double *phase, int n_refl, guint64 index,
                  guint64 stream, guint16 *out)
{
    int n = p->pixels_per_aline;
    double dc = 1.0, amplitude[MAX_REFLECTORS];
    for (int i = 0; i < n_refl; i++) {
        dc += refl[i];
        amplitude[i] = 2.0 * sqrt(refl[i]);
    }
    double max_value = ldexp(1.0, p->bits) - 1.0;
    for (int x = 0; x < n; x++) {
        double k = sp->k_per_um[x];
        double fringe = dc;
        for (int i = 0; i < n_refl; i++)
            fringe += amplitude[i] * cos(2.0 * k * depth[i] + phase[i]);
        double signal = p->peak_counts * sp->source[x] * fringe;
        if (p->shot_noise)
            signal += sqrt(MAX(signal, 0.0)) * normal_at(p->seed, stream, index * n + x);
        double v = round(signal + sp->pattern[x]);
        out[x] = (guint16)CLAMP(v, 0.0, max_value);
    }
}

static fm_dataset *new_spectra(int n_pixels, int n_alines, int n_bscans, int bits)
{
    gsize sizes[3] = {(gsize)n_pixels, (gsize)n_alines, (gsize)n_bscans};
    static const char *const names[] = {"pixel", "aline", "bscan"};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, names);
    ds->dims[0].unit = g_strdup("px");
    ds->dims[1].unit = g_strdup("aline");
    ds->dims[2].unit = g_strdup("bscan");
    ds->bits_per_sample = bits;
    return ds;
}

fm_dataset *fm_oct_simulate(const fm_oct_sim_params *p, GError **error)
{
    if (!check(p, error))
        return NULL;
    int n = p->pixels_per_aline;
    spectrometer sp;
    spectrometer_init(&sp, p);
    fm_dataset *ds = new_spectra(n, p->alines_per_bscan, p->n_bscans, p->bits);
    guint16 *out = ds->data;
    const gint64 n_alines = (gint64)p->n_bscans * p->alines_per_bscan;
    /* A-lines are independent and their random numbers counter-based, so any split between
     * threads gives the same spectra. */
    FM_SIM_OMP("omp parallel for schedule(dynamic, 16)")
    for (gint64 index = 0; index < n_alines; index++) {
        const int b = (int)(index / p->alines_per_bscan), a = (int)(index % p->alines_per_bscan);
        double depth[MAX_REFLECTORS], refl[MAX_REFLECTORS], phase[MAX_REFLECTORS];
        int n_refl;
        /* draws per A-line: as many as it may have reflectors, so no two A-lines share one */
        const guint64 stride = p->sample == FM_OCT_SIM_MIRROR ? 1 : MAX_REFLECTORS;
        if (p->sample == FM_OCT_SIM_MIRROR) {
            n_refl = 1;
            depth[0] = p->mirror_depth_um;
            refl[0] = p->mirror_reflectivity;
        } else {
            n_refl = FM_OCT_SIM_N_LAYERS;
            fm_oct_sim_layers_at(p, b, a, depth, refl);
            if (fm_oct_sim_inclusion_at(p, b, a, &depth[n_refl], &depth[n_refl + 1])) {
                refl[n_refl] = FM_OCT_SIM_INCLUSION_R_TOP;
                refl[n_refl + 1] = FM_OCT_SIM_INCLUSION_R_BOTTOM;
                n_refl += 2;
            }
            /* tissue layers scatter: a speckle-like amplitude per A-line and layer */
            for (int i = 0; i < n_refl; i++) {
                double u = unit_open(
                    (guint32)rand_at(p->seed, STREAM_AMPLITUDE, (guint64)index * stride + i));
                refl[i] *= -log(u); /* exponential intensity, mean 1 */
            }
        }
        /* Random phase per A-line: mirror vibration or tissue motion of a fraction of a
         * wavelength. It also makes the B-scan mean a fair background estimate. */
        for (int i = 0; i < n_refl; i++)
            phase[i] =
                2.0 * G_PI *
                unit_open((guint32)rand_at(p->seed, STREAM_PHASE, (guint64)index * stride + i));
        aline(p, &sp, depth, refl, phase, n_refl, (guint64)index, STREAM_NOISE,
              out + (gsize)index * n);
    }
    spectrometer_clear(&sp);
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    if (p->scan_width_um > 0)
        fm_dataset_set_meta(ds, FM_OCT_META_ALINE_SPACING,
                            g_ascii_dtostr(buf, sizeof buf, fm_oct_sim_aline_spacing_um(p)));
    if (p->scan_length_um > 0)
        fm_dataset_set_meta(ds, FM_OCT_META_BSCAN_SPACING,
                            g_ascii_dtostr(buf, sizeof buf, fm_oct_sim_bscan_spacing_um(p)));
    return ds;
}

fm_dataset *fm_oct_simulate_reference(const fm_oct_sim_params *p, int n_alines, GError **error)
{
    if (!check(p, error))
        return NULL;
    int n = p->pixels_per_aline;
    spectrometer sp;
    spectrometer_init(&sp, p);
    fm_dataset *ds = new_spectra(n, MAX(n_alines, 1), 1, p->bits);
    FM_SIM_OMP("omp parallel for schedule(dynamic, 16)")
    for (int a = 0; a < MAX(n_alines, 1); a++)
        aline(p, &sp, NULL, NULL, NULL, 0, (guint64)a, STREAM_REFERENCE,
              (guint16 *)ds->data + (gsize)a * n);
    spectrometer_clear(&sp);
    return ds;
}
