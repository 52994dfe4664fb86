/* A bounded queue between the stages of a batch task. */
#include "batch_queue.h"

struct fm_batch_queue {
    GMutex lock;
    GCond changed;
    GQueue items;
    guint capacity;
    gboolean closed;
};

fm_batch_queue *fm_batch_queue_new(guint capacity)
{
    fm_batch_queue *q = g_new0(fm_batch_queue, 1);
    g_mutex_init(&q->lock);
    g_cond_init(&q->changed);
    g_queue_init(&q->items);
    q->capacity = MAX(capacity, 1);
    return q;
}

void fm_batch_queue_free(fm_batch_queue *q)
{
    if (q == NULL)
        return;
    g_queue_clear(&q->items);
    g_cond_clear(&q->changed);
    g_mutex_clear(&q->lock);
    g_free(q);
}

void fm_batch_queue_push(fm_batch_queue *q, gpointer item)
{
    g_mutex_lock(&q->lock);
    while (q->items.length >= q->capacity)
        g_cond_wait(&q->changed, &q->lock);
    g_queue_push_tail(&q->items, item);
    g_cond_broadcast(&q->changed);
    g_mutex_unlock(&q->lock);
}

void fm_batch_queue_close(fm_batch_queue *q)
{
    g_mutex_lock(&q->lock);
    q->closed = TRUE;
    g_cond_broadcast(&q->changed);
    g_mutex_unlock(&q->lock);
}

gpointer fm_batch_queue_pop(fm_batch_queue *q)
{
    g_mutex_lock(&q->lock);
    while (q->items.length == 0 && !q->closed)
        g_cond_wait(&q->changed, &q->lock);
    gpointer item = g_queue_pop_head(&q->items);
    g_cond_broadcast(&q->changed);
    g_mutex_unlock(&q->lock);
    return item;
}
