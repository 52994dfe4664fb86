/* Backend choice, GPU discovery and error formatting; the CUDA calls live in device_cuda.cu. */
#include "device.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "device_private.h"
#include "fm_config.h"

#ifdef _OPENMP
#include <omp.h>
#endif

fm_status fm_fail(fm_status status, char *msg, size_t msg_len, const char *fmt, ...)
{
    if (msg && msg_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, msg_len, fmt, ap);
        va_end(ap);
    }
    return status;
}

int fm_device_cuda_built(void)
{
    return FM_HAVE_CUDA;
}

int fm_device_count(char *msg, size_t msg_len)
{
#if FM_HAVE_CUDA
    return fm_cuda_device_count(msg, msg_len);
#else
    fm_fail(FM_ERR_NO_DEVICE, msg, msg_len, "built without CUDA");
    return 0;
#endif
}

fm_status fm_device_info(int index, fm_gpu_info *out, char *msg, size_t msg_len)
{
    if (!out)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "fm_device_info: out is NULL");
#if FM_HAVE_CUDA
    return fm_cuda_device_info(index, out, msg, msg_len);
#else
    (void)index;
    return fm_fail(FM_ERR_NO_DEVICE, msg, msg_len, "built without CUDA");
#endif
}

int fm_device_warm_up(fm_gpu_info *gpu, char *msg, size_t msg_len)
{
    int n = fm_device_count(msg, msg_len);
#if FM_HAVE_CUDA
    if (n > 0 && fm_cuda_start_context(msg, msg_len) != FM_OK)
        return 0;
#endif
    if (n > 0 && gpu && fm_device_info(0, gpu, msg, msg_len) != FM_OK)
        return 0;
    return n;
}

int fm_thread_index(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

int fm_cpu_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

fm_status fm_backend_parse(const char *text, fm_backend *out)
{
    static const struct {
        const char *name;
        fm_backend backend;
    } names[] = {{"auto", FM_BACKEND_AUTO}, {"cpu", FM_BACKEND_CPU}, {"cuda", FM_BACKEND_CUDA}};
    if (!text || !out)
        return FM_ERR_INVALID_ARG;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcasecmp(text, names[i].name) == 0) {
            *out = names[i].backend;
            return FM_OK;
        }
    }
    return FM_ERR_INVALID_ARG;
}

const char *fm_backend_name(fm_backend backend)
{
    switch (backend) {
    case FM_BACKEND_AUTO: return "auto";
    case FM_BACKEND_CPU: return "cpu";
    case FM_BACKEND_CUDA: return "cuda";
    }
    return "unknown";
}

static void use_cpu(fm_run_info *info)
{
    int threads = fm_cpu_threads();
    info->backend_used = FM_BACKEND_CPU;
    snprintf(info->device_name, sizeof info->device_name, "CPU, %d thread%s", threads,
             threads == 1 ? "" : "s");
}

fm_status fm_backend_resolve(fm_backend requested, fm_run_info *info, char *msg, size_t msg_len)
{
    fm_run_info local;
    char why[FM_MSG_LEN] = "";
    if (!info)
        info = &local;
    info->fell_back = 0;
    info->fallback_reason[0] = '\0';

    switch (requested) {
    case FM_BACKEND_CPU:
        use_cpu(info);
        return FM_OK;
    case FM_BACKEND_AUTO:
    case FM_BACKEND_CUDA:
        break;
    default:
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "unknown backend %d", (int)requested);
    }

    if (fm_device_count(why, sizeof why) > 0) {
        fm_gpu_info gpu;
        fm_status status = fm_device_info(0, &gpu, why, sizeof why);
        if (status == FM_OK) {
            info->backend_used = FM_BACKEND_CUDA;
            snprintf(info->device_name, sizeof info->device_name, "%s", gpu.name);
            return FM_OK;
        }
    }
    if (requested == FM_BACKEND_CUDA) {
        use_cpu(info);
        return fm_fail(FM_ERR_NO_DEVICE, msg, msg_len, "CUDA backend requested but no CUDA device: %s",
                       why);
    }
    use_cpu(info);
    info->fell_back = 1;
    snprintf(info->fallback_reason, sizeof info->fallback_reason, "no CUDA device: %s", why);
    return FM_OK;
}

void fm_backend_fall_back(fm_run_info *info, const char *why)
{
    fm_backend_resolve(FM_BACKEND_CPU, info, NULL, 0);
    info->upload_ms = info->download_ms = 0.0; /* the CPU run that follows moves nothing */
    info->resident = 0;
    info->fell_back = 1;
    snprintf(info->fallback_reason, sizeof info->fallback_reason, "%s", why);
}

int fm_backend_cuda_settled(fm_status status, fm_backend requested, fm_run_info *info,
                            const char *why, char *msg, size_t msg_len)
{
    if (status == FM_ERR_DEVICE && requested == FM_BACKEND_AUTO) {
        fm_backend_fall_back(info, why);
        return 0;
    }
    if (status != FM_OK)
        fm_fail(status, msg, msg_len, "%s", why);
    return 1;
}

void fm_parallel_memcpy(void *dst, const void *src, size_t n)
{
    /* Below ~1 MB thread start-up costs more than the copy; above, quarter-MB pieces keep all
     * threads busy on a few-MB staging block. */
    const size_t chunk = (size_t)1 << 18;
    if (n <= ((size_t)1 << 20)) {
        memcpy(dst, src, n);
        return;
    }
    long n_chunks = (long)((n + chunk - 1) / chunk);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n_chunks; i++) {
        size_t off = (size_t)i * chunk;
        size_t len = off + chunk <= n ? chunk : n - off;
        memcpy((char *)dst + off, (const char *)src + off, len);
    }
}

double fm_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
