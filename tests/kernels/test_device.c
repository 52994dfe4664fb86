/* Device layer: backend names, resolution and fallback, status and pixel helpers (TAP). */
#include <string.h>

#include "fm_config.h"
#include "kernels/device.h"
#include "tap.h"

int main(void)
{
    fm_backend b = FM_BACKEND_CPU;
    char msg[FM_MSG_LEN] = "";
    fm_run_info info;

    tap_ok(fm_backend_parse("auto", &b) == FM_OK && b == FM_BACKEND_AUTO, "parse auto");
    tap_ok(fm_backend_parse("CUDA", &b) == FM_OK && b == FM_BACKEND_CUDA, "parse CUDA (any case)");
    tap_ok(fm_backend_parse("cpu", &b) == FM_OK && b == FM_BACKEND_CPU, "parse cpu");
    tap_ok(fm_backend_parse("gpu", &b) == FM_ERR_INVALID_ARG, "parse gpu -> FM_ERR_INVALID_ARG");
    tap_ok(fm_backend_parse(NULL, &b) == FM_ERR_INVALID_ARG, "parse NULL -> FM_ERR_INVALID_ARG");
    tap_ok(strcmp(fm_backend_name(FM_BACKEND_CUDA), "cuda") == 0 &&
               strcmp(fm_backend_name(FM_BACKEND_AUTO), "auto") == 0 &&
               strcmp(fm_backend_name(FM_BACKEND_CPU), "cpu") == 0,
           "backend names round-trip");
    tap_ok(fm_pixel_size(FM_PIXEL_U8) == 1 && fm_pixel_size(FM_PIXEL_U16) == 2 &&
               fm_pixel_size(FM_PIXEL_F32) == 4,
           "pixel sizes 1, 2, 4");
    tap_ok(strcmp(fm_status_name(FM_ERR_CANCELLED), "cancelled") == 0, "status names");
    tap_ok(fm_device_cuda_built() == FM_HAVE_CUDA, "fm_device_cuda_built() == %d", FM_HAVE_CUDA);
    tap_ok(fm_fail(FM_ERR_DEVICE, msg, sizeof msg, "x=%d", 3) == FM_ERR_DEVICE &&
               strcmp(msg, "x=3") == 0,
           "fm_fail formats and returns the status");
    tap_ok(fm_cpu_threads() >= 1, "fm_cpu_threads() = %d", fm_cpu_threads());

    tap_ok(fm_backend_resolve(FM_BACKEND_CPU, &info, msg, sizeof msg) == FM_OK &&
               info.backend_used == FM_BACKEND_CPU && !info.fell_back &&
               strncmp(info.device_name, "CPU, ", 5) == 0,
           "resolve cpu -> \"%s\"", info.device_name);

    char why[FM_MSG_LEN] = "";
    int count = fm_device_count(why, sizeof why);
    printf("# %d CUDA device(s)%s%s\n", count, count ? "" : ": ", count ? "" : why);
    if (count == 0) {
        tap_ok(why[0] != '\0', "no device: the reason is given (\"%s\")", why);
        fm_gpu_info gpu;
        tap_ok(fm_device_info(0, &gpu, msg, sizeof msg) != FM_OK, "fm_device_info(0) fails");
        fm_status st = fm_backend_resolve(FM_BACKEND_AUTO, &info, msg, sizeof msg);
        tap_ok(st == FM_OK && info.backend_used == FM_BACKEND_CPU && info.fell_back == 1 &&
                   strncmp(info.fallback_reason, "no CUDA device: ", 16) == 0,
               "auto without a device -> CPU, fell_back, \"%s\"", info.fallback_reason);
        msg[0] = '\0';
        st = fm_backend_resolve(FM_BACKEND_CUDA, &info, msg, sizeof msg);
        tap_ok(st == FM_ERR_NO_DEVICE && strstr(msg, why) != NULL,
               "cuda without a device -> FM_ERR_NO_DEVICE: \"%s\"", msg);
    } else {
        fm_gpu_info gpu;
        tap_ok(fm_device_info(0, &gpu, msg, sizeof msg) == FM_OK && gpu.name[0] &&
                   gpu.total_memory_bytes > 0 && gpu.multiprocessors > 0,
               "device 0: %s, %.1f GiB, %d SMs, sm_%d%d", gpu.name,
               gpu.total_memory_bytes / 1073741824.0, gpu.multiprocessors, gpu.compute_major,
               gpu.compute_minor);
        tap_ok(fm_backend_resolve(FM_BACKEND_AUTO, &info, msg, sizeof msg) == FM_OK &&
                   info.backend_used == FM_BACKEND_CUDA && !info.fell_back &&
                   strcmp(info.device_name, gpu.name) == 0,
               "auto with a device -> CUDA on \"%s\"", info.device_name);
        tap_ok(fm_device_info(count, &gpu, msg, sizeof msg) == FM_ERR_DEVICE,
               "device %d does not exist: \"%s\"", count, msg);
    }
    return tap_done();
}
