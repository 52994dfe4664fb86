/* Registered camera buffers: a short list under a lock (pools hold 8 to 128 buffers). */
#include "live_host.h"

#include <pthread.h>
#include <stdlib.h>

#include "fm_config.h"
#include "host_memory.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
#if FM_HAVE_CUDA
static void **registered; /* only CUDA builds register anything */
static int cap_registered;
#endif
static int n_registered;

int fm_live_host_register(void *ptr, size_t bytes)
{
#if FM_HAVE_CUDA
    if (!ptr || !bytes)
        return -1;
    pthread_mutex_lock(&lock);
    int ok = 0;
    if (n_registered == cap_registered) {
        int cap = cap_registered ? 2 * cap_registered : 64;
        void **grown = realloc(registered, sizeof *grown * (size_t)cap);
        if (grown) {
            registered = grown;
            cap_registered = cap;
        }
    }
    if (n_registered < cap_registered && fm_host_register(ptr, bytes) == 0) {
        registered[n_registered++] = ptr;
        ok = 1;
    }
    pthread_mutex_unlock(&lock);
    return ok ? 0 : -1;
#else
    (void)ptr;
    (void)bytes;
    return -1;
#endif
}

void fm_live_host_unregister(void *ptr)
{
#if FM_HAVE_CUDA
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n_registered; i++)
        if (registered[i] == ptr) {
            fm_host_unregister(ptr);
            registered[i] = registered[--n_registered];
            break;
        }
    pthread_mutex_unlock(&lock);
#else
    (void)ptr;
#endif
}

int fm_live_host_registered(void)
{
    pthread_mutex_lock(&lock);
    int n = n_registered;
    pthread_mutex_unlock(&lock);
    return n;
}
