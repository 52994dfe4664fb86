/* The CUDA start on its own thread: the CLI overlaps it with the read, the GUI with start-up. */
#include "device_warmup.h"

#include "stages.h"
#include "kernels/host_memory.h"

struct fm_device_warmup {
    GThread *thread;
    gboolean pin_maps;
    GSource *done; /* idle source to attach when finished, or NULL */
    GMainContext *context;
    int n_devices;
    fm_gpu_info gpu;
    double total_ms;
    char why[FM_MSG_LEN];
};

static gpointer warm(gpointer data)
{
    fm_device_warmup *w = data;
    double t0 = fm_stage_now_ms();
    w->n_devices = fm_device_warm_up(&w->gpu, w->why, sizeof w->why);
    if (w->n_devices > 0 && w->pin_maps)
        fm_host_memory_enable_pinned();
    w->total_ms = fm_stage_now_ms() - t0;
    if (w->done)
        g_source_attach(w->done, w->context);
    return NULL;
}

fm_device_warmup *fm_device_warmup_start(GSourceFunc done, gpointer done_data, gboolean pin_maps)
{
    fm_device_warmup *w = g_new0(fm_device_warmup, 1);
    w->pin_maps = pin_maps;
    if (done) {
        w->context = g_main_context_ref_thread_default();
        w->done = g_idle_source_new();
        g_source_set_callback(w->done, done, done_data, NULL);
        g_source_set_static_name(w->done, "fluxmap device ready");
    }
    w->thread = g_thread_new("fluxmap-device", warm, w);
    return w;
}

double fm_device_warmup_wait(fm_device_warmup *w, int *n_devices, fm_gpu_info *gpu,
                             double *total_ms, const char **why)
{
    double t0 = fm_stage_now_ms();
    if (w->thread)
        g_thread_join(g_steal_pointer(&w->thread));
    double waited = fm_stage_now_ms() - t0;
    if (n_devices)
        *n_devices = w->n_devices;
    if (gpu)
        *gpu = w->gpu;
    if (total_ms)
        *total_ms = w->total_ms;
    if (why)
        *why = w->why;
    return waited;
}

void fm_device_warmup_free(fm_device_warmup *w)
{
    if (!w)
        return;
    fm_device_warmup_wait(w, NULL, NULL, NULL, NULL);
    if (w->done) {
        g_source_destroy(w->done);
        g_source_unref(w->done);
    }
    if (w->context)
        g_main_context_unref(w->context);
    g_free(w);
}
