/* Live rates: events per second over the last second, from a ring of their times. */
#include "app/core/live_private.h"

/* Enough for 8000 frames/s; above that the rate reads as the ring's span. */
#define FM_LIVE_RATE_CAPACITY 8192

void fm_live_rate_init(fm_live_rate *rate)
{
    rate->capacity = FM_LIVE_RATE_CAPACITY;
    rate->times = g_new(gint64, rate->capacity);
    rate->head = rate->count = 0;
}

void fm_live_rate_clear(fm_live_rate *rate)
{
    g_clear_pointer(&rate->times, g_free);
    rate->count = 0;
}

void fm_live_rate_add(fm_live_rate *rate, gint64 now_us)
{
    rate->times[rate->head] = now_us;
    rate->head = (rate->head + 1) % rate->capacity;
    if (rate->count < rate->capacity)
        rate->count++;
}

double fm_live_rate_per_s(const fm_live_rate *rate, gint64 now_us)
{
    int n = 0;
    gint64 oldest = now_us;
    for (int i = 0; i < rate->count; i++) {
        gint64 t = rate->times[(rate->head - 1 - i + rate->capacity) % rate->capacity];
        if (t <= now_us - G_USEC_PER_SEC)
            break;
        oldest = t;
        n++;
    }
    if (n == rate->capacity && now_us > oldest) /* the ring is shorter than a second */
        return n * (double)G_USEC_PER_SEC / (double)(now_us - oldest);
    return n;
}
