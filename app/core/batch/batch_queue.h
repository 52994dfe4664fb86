/* A bounded queue between the stages of a batch task (read -> compute -> write): a stage that
 * runs ahead waits instead of holding more items in memory. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct fm_batch_queue fm_batch_queue;

fm_batch_queue *fm_batch_queue_new(guint capacity);
void fm_batch_queue_free(fm_batch_queue *queue);
/* Waits while the queue holds capacity items. */
void fm_batch_queue_push(fm_batch_queue *queue, gpointer item);
/* No more pushes: pop returns NULL once the queue is empty. */
void fm_batch_queue_close(fm_batch_queue *queue);
/* Waits for an item; NULL when the queue is closed and empty. */
gpointer fm_batch_queue_pop(fm_batch_queue *queue);

G_END_DECLS
