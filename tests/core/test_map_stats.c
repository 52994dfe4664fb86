/* Map statistics: against a sort on random maps, thread-count independence, and a 2.4 GB source
 * whose count, min, max, mean and median follow from its formula. */
#include <float.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "app/core/map_stats.h"
#include "app/core/result.h"

static int compare_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The definition: copy the finite values, sort them, pick. The sum is in long double so that
 * the reference mean is more accurate than the code under test, not merely as accurate. */
static fm_map_stats reference_stats(const float *values, gsize n, double *mean_abs)
{
    fm_map_stats s = {NAN, NAN, NAN, NAN, 0};
    float *finite = g_new(float, MAX(n, 1));
    gsize k = 0;
    long double sum = 0.0L, sum_abs = 0.0L;
    for (gsize i = 0; i < n; i++) {
        if (!isfinite(values[i]))
            continue;
        finite[k++] = values[i];
        sum += values[i];
        sum_abs += fabsf(values[i]);
    }
    *mean_abs = NAN;
    if (k > 0) {
        qsort(finite, k, sizeof(float), compare_float);
        s.min = finite[0];
        s.max = finite[k - 1];
        s.mean = (double)(sum / (long double)k);
        s.median = (k % 2) ? finite[k / 2] : 0.5 * ((double)finite[k / 2 - 1] + finite[k / 2]);
        s.valid_pixels = k;
        *mean_abs = (double)(sum_abs / (long double)k);
    }
    g_free(finite);
    return s;
}

static gboolean same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static void assert_identical(const fm_map_stats *a, const fm_map_stats *b)
{
    g_assert_cmpuint(a->valid_pixels, ==, b->valid_pixels);
    g_assert_true(same_bits(a->min, b->min));
    g_assert_true(same_bits(a->max, b->max));
    g_assert_true(same_bits(a->mean, b->mean));
    g_assert_true(same_bits(a->median, b->median));
}

/* A source reading a buffer, to run the streaming form on the same values as a map. */
static void buffer_source(void *user, gsize start, gsize count, float *out)
{
    memcpy(out, (const float *)user + start, count * sizeof(float));
}

/* Exact min, max, median and count (-0.0 == +0.0, as a sort sees them); the mean within 1e-12
 * of the larger of |mean| and mean |value|: summation error scales with the sum of magnitudes,
 * so a mean near zero from values far from zero can only be held to the latter. The streaming
 * form must give the map's result bit for bit. */
static void check_map(const fm_map *map)
{
    gsize n = fm_map_n_values(map);
    double mean_abs;
    fm_map_stats want = reference_stats(map->data, n, &mean_abs);
    fm_map_stats got = fm_map_statistics(map);
    g_assert_cmpuint(got.valid_pixels, ==, want.valid_pixels);
    if (want.valid_pixels == 0) {
        g_assert_true(isnan(got.min) && isnan(got.max) && isnan(got.mean) && isnan(got.median));
    } else {
        g_assert_true(got.min == want.min);
        g_assert_true(got.max == want.max);
        g_assert_true(got.median == want.median);
        g_assert_cmpfloat(fabs(got.mean - want.mean), <=, 1e-12 * MAX(fabs(want.mean), mean_abs));
    }
    fm_map_stats streamed = fm_stats_from_source(buffer_source, map->data, n);
    assert_identical(&streamed, &got);
}

typedef enum {
    VALUES_MIXED, /* moderate values with every special case mixed in */
    VALUES_WILD,  /* random bit patterns: every exponent, denormals, NaN payloads */
} value_mix;

static float random_value(GRand *rng, value_mix mix)
{
    static const float ties[] = {1.0f, 2.5f, -3.0f, 0.1f, 1e-3f};
    if (mix == VALUES_WILD) {
        guint32 bits = g_rand_int(rng);
        float v;
        memcpy(&v, &bits, sizeof v);
        return v;
    }
    int pick = g_rand_int_range(rng, 0, 100);
    if (pick < 5)
        return NAN;
    if (pick < 7)
        return INFINITY;
    if (pick < 9)
        return -INFINITY;
    if (pick < 13)
        return -0.0f;
    if (pick < 17)
        return 0.0f;
    if (pick < 22) {
        /* Denormal, either sign. */
        guint32 bits = (guint32)g_rand_int_range(rng, 1, 0x800000) | (pick % 2 ? 0x80000000u : 0);
        float v;
        memcpy(&v, &bits, sizeof v);
        return v;
    }
    if (pick < 45)
        return ties[g_rand_int_range(rng, 0, G_N_ELEMENTS(ties))];
    return (float)g_rand_double_range(rng, -500.0, 1000.0);
}

static fm_map *random_map(GRand *rng, int width, int height, int n_frames, value_mix mix)
{
    fm_map *map = fm_map_new("m", "1", width, height, n_frames);
    gsize n = fm_map_n_values(map);
    for (gsize i = 0; i < n; i++)
        map->data[i] = random_value(rng, mix);
    return map;
}

static void test_random_maps(void)
{
    /* Sizes 0, 1, 2, 3, odd and even, small and spanning several 1 Mi chunks with a partial
     * last one; several shapes of the same size. */
    static const int shapes[][3] = {
        {0, 0, 0},    {0, 5, 3},   {1, 1, 1},    {2, 1, 1},       {1, 3, 1},
        {1, 1, 3},    {7, 5, 3},   {8, 5, 3},    {3, 5, 8},       {37, 29, 11},
        {29, 37, 11}, {64, 64, 1}, {1, 1, 4097}, {1392, 1040, 1}, {1000, 1049, 3},
    };
    GRand *rng = g_rand_new_with_seed(20240611);
    for (gsize s = 0; s < G_N_ELEMENTS(shapes); s++) {
        gsize n = (gsize)shapes[s][0] * (gsize)shapes[s][1] * (gsize)shapes[s][2];
        /* Tiny maps are cheap and where the even/odd and special-value corners are densest. */
        int repeats = n < 100 ? 20 : 1;
        for (int mix = VALUES_MIXED; mix <= VALUES_WILD; mix++) {
            for (int repeat = 0; repeat < repeats; repeat++) {
                fm_map *map = random_map(rng, shapes[s][0], shapes[s][1], shapes[s][2], mix);
                check_map(map);
                fm_map_free(map);
            }
        }
    }
    g_rand_free(rng);
}

static void test_special_maps(void)
{
    fm_map *map = fm_map_new("m", "1", 5, 4, 3);
    gsize n = fm_map_n_values(map);

    /* All NaN, then all ±Inf: nothing valid. */
    for (gsize i = 0; i < n; i++)
        map->data[i] = NAN;
    check_map(map);
    for (gsize i = 0; i < n; i++)
        map->data[i] = i % 2 ? INFINITY : -INFINITY;
    check_map(map);

    /* All equal, with and without NaN among them. */
    for (gsize i = 0; i < n; i++)
        map->data[i] = 0.75f;
    check_map(map);
    g_assert_cmpfloat(fm_map_statistics(map).median, ==, 0.75);
    map->data[7] = NAN;
    check_map(map);

    /* Zeros of both signs compare equal: every statistic is zero. */
    for (gsize i = 0; i < n; i++)
        map->data[i] = i % 3 ? 0.0f : -0.0f;
    check_map(map);
    fm_map_stats s = fm_map_statistics(map);
    g_assert_true(s.min == 0.0 && s.max == 0.0 && s.median == 0.0 && s.mean == 0.0);

    /* The two middle values fall in different top-16-bit buckets (of opposite signs here). */
    for (gsize i = 0; i < n; i++)
        map->data[i] = i < n / 2 ? -1.0f - (float)i : 1e-30f * (float)i;
    check_map(map);

    /* Largest and smallest finite floats and the smallest denormals. */
    const float extremes[] = {FLT_MAX, -FLT_MAX, 1.4e-45f, -1.4e-45f, FLT_MIN, -FLT_MIN};
    for (gsize i = 0; i < n; i++)
        map->data[i] = extremes[i % G_N_ELEMENTS(extremes)];
    check_map(map);
    fm_map_free(map);

    /* One finite value among NaN: it is min, max, mean and median. */
    map = fm_map_new("m", "1", 3, 3, 1);
    for (gsize i = 0; i < 9; i++)
        map->data[i] = i == 4 ? -2.5f : NAN;
    s = fm_map_statistics(map);
    g_assert_cmpuint(s.valid_pixels, ==, 1);
    g_assert_true(s.min == -2.5 && s.max == -2.5 && s.mean == -2.5 && s.median == -2.5);
    fm_map_free(map);
}

/* The same map and source give the same bits with 1, 2 and 3 threads, the mean included. */
static void test_thread_count(void)
{
#ifdef _OPENMP
    GRand *rng = g_rand_new_with_seed(77);
    fm_map *map = random_map(rng, 1392, 1040, 3, VALUES_MIXED);
    gsize n = fm_map_n_values(map);
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    fm_map_stats one = fm_map_statistics(map);
    for (int threads = 2; threads <= 3; threads++) {
        omp_set_num_threads(threads);
        fm_map_stats many = fm_map_statistics(map);
        assert_identical(&many, &one);
        fm_map_stats streamed = fm_stats_from_source(buffer_source, map->data, n);
        assert_identical(&streamed, &one);
    }
    omp_set_num_threads(saved);
    fm_map_free(map);
    g_rand_free(rng);
#else
    g_test_skip("built without OpenMP");
#endif
}

/* value(i) = NaN for every 7th index, else (i P mod N) mod M as a float. P is coprime with N, so
 * j = i P mod N runs over 0 .. N-1 once, and M divides N, so j mod M takes each value in
 * 0 .. M-1 exactly N/M times. 7 divides N and M and not P, hence i, j and j mod M are multiples
 * of 7 together: the NaNs remove exactly the multiples of 7. M < 2^24 keeps every value exact in
 * a float. N values of 4 bytes are 2.4 GB: more than 2^31 bytes, generated chunk by chunk. */
#define BIG_M ((guint64)7 << 21)
#define BIG_REPEAT ((guint64)41)
#define BIG_N (BIG_M * BIG_REPEAT)
#define BIG_P ((guint64)2654435761u)

static void permuted_source(void *user, gsize start, gsize count, float *out)
{
    for (gsize c = 0; c < count; c++) {
        guint64 i = start + c;
        out[c] = i % 7 == 0 ? NAN : (float)((i * BIG_P) % BIG_N % BIG_M);
    }
}

static guint64 gcd(guint64 a, guint64 b)
{
    while (b != 0) {
        guint64 r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* The value of rank r (0-based) in sorted order: the distinct values are the non-multiples of 7
 * below M, each BIG_REPEAT times; the d-th of them (0-based) is 7 (d / 6) + d % 6 + 1. */
static double big_value_of_rank(guint64 r)
{
    guint64 d = r / BIG_REPEAT;
    return (double)(7 * (d / 6) + d % 6 + 1);
}

static void test_big_source(void)
{
    g_assert_cmpuint(gcd(BIG_P, BIG_N), ==, 1);
    g_assert_cmpuint(BIG_M, <, (guint64)1 << 24);
    g_assert_cmpuint(BIG_N * sizeof(float), >, (guint64)1 << 31);

    guint64 distinct = BIG_M / 7 * 6;
    guint64 valid = distinct * BIG_REPEAT;
    /* Sum of 0 .. M-1 less the multiples of 7 (7 times the sum of 0 .. M/7-1). */
    guint64 sum_distinct = BIG_M * (BIG_M - 1) / 2 - 7 * (BIG_M / 7) * (BIG_M / 7 - 1) / 2;
    double median = valid % 2
                        ? big_value_of_rank(valid / 2)
                        : 0.5 * (big_value_of_rank(valid / 2 - 1) + big_value_of_rank(valid / 2));

    fm_map_stats s = fm_stats_from_source(permuted_source, NULL, BIG_N);
    g_assert_cmpuint(s.valid_pixels, ==, valid);
    g_assert_cmpfloat(s.min, ==, 1.0);
    g_assert_cmpfloat(s.max, ==, (double)(BIG_M - 1));
    g_assert_cmpfloat(s.median, ==, median);
    /* Every value and partial sum is an integer below 2^53, so the sum is exact and the mean is
     * the correctly rounded quotient: equal, not merely close. */
    g_assert_cmpfloat(s.mean, ==, (double)sum_distinct / (double)distinct);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/map-stats/random-maps", test_random_maps);
    g_test_add_func("/map-stats/special-maps", test_special_maps);
    g_test_add_func("/map-stats/thread-count", test_thread_count);
    g_test_add_func("/map-stats/big-source", test_big_source);
    return g_test_run();
}
