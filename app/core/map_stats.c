/* Map statistics in two parallel passes with an exact radix-histogram median: no sort, no copy. */
#include "app/core/map_stats.h"

#include "app/core/float_bits.h"

#include <math.h>
#include <string.h>

/* The unit of work of both passes, and what a thread reads from a source at once (4 MiB). */
#define STATS_CHUNK_VALUES ((gsize)1 << 20)
/* The mean sums blocks of this many values in double, in index order, then adds the block sums
 * in block order: the same additions in the same order whatever the number of threads. */
#define STATS_BLOCK_VALUES ((gsize)1 << 16)
/* Both histogram levels have one bucket per 16-bit half of the 32-bit key. */
#define STATS_BUCKETS ((gsize)1 << 16)

G_STATIC_ASSERT(STATS_CHUNK_VALUES % STATS_BLOCK_VALUES == 0);

/* Where the values come from: a buffer read in place, or a source filling a scratch chunk. */
typedef struct {
    const float *data;
    fm_value_source source;
    void *user;
    gsize n_values;
} stats_input;

/* What a pass needs besides the values: pass 1 writes one sum per block, pass 2 looks for the
 * keys whose top 16 bits are bucket[0] or bucket[1]. */
typedef struct {
    double *block_sums;
    guint32 bucket[2];
} stats_job;

/* One thread's counts, merged into the total when its share of chunks is done. Integer counts
 * and min/max merge to the same result in any order, unlike floating-point sums. */
typedef struct {
    guint64 *hist;
    guint64 valid;
    guint32 min_key, max_key;
} stats_partial;

typedef void (*stats_chunk_pass)(const float *values, gsize start, gsize count,
                                 const stats_job *job, stats_partial *part);

/* Maps a float's bits to an unsigned key with the same order as the values: positives get the
 * sign bit set, negatives have all bits flipped so that larger magnitudes sort lower. -0.0 gets
 * the key just below +0.0, one of the orders a sort may give them since they compare equal. */
static inline guint32 float_key(guint32 bits)
{
    return (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
}

static inline float key_float(guint32 key)
{
    return fm_bits_float((key & 0x80000000u) ? key & 0x7fffffffu : ~key);
}

/* An all-ones exponent is ±Inf or NaN. */
static inline gboolean bits_finite(guint32 bits)
{
    return (bits & 0x7f800000u) != 0x7f800000u;
}

/* Pass 1: valid count, min and max keys, block sums, and the histogram of the keys' top 16 bits
 * (level 1 of the median search) all at once. */
static void pass_summary(const float *values, gsize start, gsize count, const stats_job *job,
                         stats_partial *part)
{
    guint64 valid = 0, *hist = part->hist;
    guint32 min_key = part->min_key, max_key = part->max_key;
    for (gsize block = 0; block < count; block += STATS_BLOCK_VALUES) {
        gsize end = MIN(block + STATS_BLOCK_VALUES, count);
        double sum = 0.0;
        for (gsize i = block; i < end; i++) {
            guint32 bits = fm_float_bits(values[i]);
            if (!bits_finite(bits))
                continue;
            guint32 key = float_key(bits);
            valid++;
            min_key = MIN(min_key, key);
            max_key = MAX(max_key, key);
            hist[key >> 16]++;
            sum += values[i];
        }
        job->block_sums[(start + block) / STATS_BLOCK_VALUES] = sum;
    }
    part->valid += valid;
    part->min_key = min_key;
    part->max_key = max_key;
}

/* Pass 2: histograms of the low 16 bits of the keys in the one or two level-1 buckets that hold
 * the median's ranks. No finiteness test is needed: a finite value's key never shares its top
 * 16 bits (sign, exponent, 7 mantissa bits) with ±Inf or NaN. */
static void pass_refine(const float *values, gsize start, gsize count, const stats_job *job,
                        stats_partial *part)
{
    guint32 lower = job->bucket[0], upper = job->bucket[1];
    guint64 *hist_lower = part->hist, *hist_upper = part->hist + STATS_BUCKETS;
    for (gsize i = 0; i < count; i++) {
        guint32 key = float_key(fm_float_bits(values[i]));
        if (key >> 16 == lower)
            hist_lower[key & 0xffffu]++;
        else if (key >> 16 == upper) /* never when they are one bucket: hist_upper is not there */
            hist_upper[key & 0xffffu]++;
    }
}

/* Runs one pass over all chunks, shared among the threads, and merges the threads' counts. */
static stats_partial run_pass(const stats_input *input, stats_chunk_pass pass, const stats_job *job,
                              gsize n_buckets)
{
    stats_partial total = {g_new0(guint64, n_buckets), 0, G_MAXUINT32, 0};
    gsize n_chunks = (input->n_values + STATS_CHUNK_VALUES - 1) / STATS_CHUNK_VALUES;
    /* One chunk is one thread's work: no team to start for it. */
#pragma omp parallel if (n_chunks > 1)
    {
        stats_partial part = {g_new0(guint64, n_buckets), 0, G_MAXUINT32, 0};
        float *scratch = input->data == NULL ? g_new(float, STATS_CHUNK_VALUES) : NULL;
        /* Dynamic: a source's chunks may cost unequal time (I/O, decompression). */
#pragma omp for schedule(dynamic, 1)
        for (gsize chunk = 0; chunk < n_chunks; chunk++) {
            gsize start = chunk * STATS_CHUNK_VALUES;
            gsize count = MIN(STATS_CHUNK_VALUES, input->n_values - start);
            const float *values = scratch;
            if (input->data != NULL)
                values = input->data + start;
            else
                input->source(input->user, start, count, scratch);
            pass(values, start, count, job, &part);
        }
#pragma omp critical(fm_map_stats_merge)
        {
            for (gsize b = 0; b < n_buckets; b++)
                total.hist[b] += part.hist[b];
            total.valid += part.valid;
            total.min_key = MIN(total.min_key, part.min_key);
            total.max_key = MAX(total.max_key, part.max_key);
        }
        g_free(scratch);
        g_free(part.hist);
    }
    return total;
}

/* The bucket holding the value of rank *rank (0-based, in sorted order); *rank becomes the rank
 * within that bucket. */
static guint32 find_bucket(const guint64 *hist, guint64 *rank)
{
    guint32 b = 0;
    while (*rank >= hist[b]) {
        *rank -= hist[b];
        b++;
    }
    return b;
}

static fm_map_stats statistics(const stats_input *input)
{
    fm_map_stats stats = {NAN, NAN, NAN, NAN, 0};
    gsize n_blocks = (input->n_values + STATS_BLOCK_VALUES - 1) / STATS_BLOCK_VALUES;
    stats_job job = {g_new(double, MAX(n_blocks, 1)), {0, 0}};

    stats_partial summary = run_pass(input, pass_summary, &job, STATS_BUCKETS);
    if (summary.valid > 0) {
        double sum = 0.0;
        for (gsize b = 0; b < n_blocks; b++)
            sum += job.block_sums[b];
        /* The lower median's rank, and the upper one's; equal for an odd count. */
        guint64 rank[2] = {(summary.valid - 1) / 2, summary.valid / 2};
        for (int r = 0; r < 2; r++)
            job.bucket[r] = find_bucket(summary.hist, &rank[r]);

        /* Both ranks in one bucket (the usual case) need one level-2 histogram per thread, not
         * two: 8 MB less at the peak of a 16-thread run. */
        const gsize levels = job.bucket[0] == job.bucket[1] ? 1 : 2;
        stats_partial refined = run_pass(input, pass_refine, &job, levels * STATS_BUCKETS);
        float median[2];
        for (int r = 0; r < 2; r++) {
            const guint64 *hist =
                refined.hist + (job.bucket[r] == job.bucket[0] ? 0 : STATS_BUCKETS);
            median[r] = key_float(job.bucket[r] << 16 | find_bucket(hist, &rank[r]));
        }
        g_free(refined.hist);

        stats.min = key_float(summary.min_key);
        stats.max = key_float(summary.max_key);
        stats.mean = sum / (double)summary.valid;
        stats.median = summary.valid % 2 ? median[1] : 0.5 * ((double)median[0] + median[1]);
        stats.valid_pixels = summary.valid;
    }
    g_free(summary.hist);
    g_free(job.block_sums);
    return stats;
}

fm_map_stats fm_map_statistics(const fm_map *map)
{
    stats_input input = {map->data, NULL, NULL, fm_map_n_values(map)};
    return statistics(&input);
}

fm_map_stats fm_stats_from_source(fm_value_source source, void *user, gsize n_values)
{
    stats_input input = {NULL, source, user, n_values};
    return statistics(&input);
}
