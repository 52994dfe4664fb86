/* CPU twin against CUDA on fresh random frames, every mode, type and border (TAP; skips
 * without a device). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "kernels/lsi/lsi_impl.h"
#include "lsi_ref.h"
#include "tap.h"

#define TOL 1e-6

static void compare(fm_lsi_mode mode, fm_pixel_type type, fm_lsi_border border,
                    fm_lsi_host_mode host, int W, int H, int nf)
{
    static const char *mode_names[] = {"spatial", "temporal", "spatio-temporal"};
    static const char *host_names[] = {"default", "staged", "registered"};
    fm_lsi_params p = {.window = 5, .frames = 3, .exposure_ms = 7.5, .border = border};
    int n_out = mode == FM_LSI_MODE_SPATIAL ? nf : nf - p.frames + 1;
    size_t plane = (size_t)W * H, total = plane * n_out;
    void *frames = ref_random_frames(type, plane * nf);
    float *kc = malloc(total * 4), *sc = malloc(total * 4), *kg = malloc(total * 4),
          *sg = malloc(total * 4);
    char msg_c[FM_MSG_LEN] = "", msg_g[FM_MSG_LEN] = "";
    fm_run_info ic, ig;
    fm_lsi_job job = {.params = p, .mode = mode, .frames = frames, .type = type, .width = W,
                      .height = H, .n_frames = nf, .contrast = kc, .sfi = sc,
                      .host_mode = host};
    fm_status st_c = fm_lsi_run_job(&job, FM_BACKEND_CPU, &ic, msg_c, sizeof msg_c);
    job.contrast = kg;
    job.sfi = sg;
    fm_status st_g = fm_lsi_run_job(&job, FM_BACKEND_CUDA, &ig, msg_g, sizeof msg_g);
    double ek = ref_max_rel_f(kg, kc, total), es = ref_max_rel_f(sg, sc, total);
    printf("# %s %s %s: max relative error K %.3e SFI %.3e\n", mode_names[mode],
           fm_pixel_type_name(type), border == FM_LSI_BORDER_VALID ? "valid" : "zero", ek, es);
    tap_ok(st_c == FM_OK && st_g == FM_OK && ig.backend_used == FM_BACKEND_CUDA && ek <= TOL &&
               es <= TOL && ic.invalid_values == ig.invalid_values,
           "%s %s border %s %dx%dx%d (%s host buffers): CUDA = CPU, K %.2e SFI %.2e (<= %.0e), "
           "invalid %lld/%lld", mode_names[mode], fm_pixel_type_name(type),
           border == FM_LSI_BORDER_VALID ? "valid" : "zero", W, H, nf, host_names[host], ek, es,
           TOL, ic.invalid_values, ig.invalid_values);
    if (st_g != FM_OK)
        printf("# CUDA: %s\n", msg_g);
    free(frames);
    free(kc);
    free(sc);
    free(kg);
    free(sg);
}

int main(void)
{
    char why[FM_MSG_LEN] = "";
    if (fm_device_count(why, sizeof why) == 0) {
        printf("1..0 # SKIP no CUDA device (%s)\n", why);
        return 0;
    }
    const fm_pixel_type types[] = {FM_PIXEL_U8, FM_PIXEL_U16, FM_PIXEL_F32};
    const fm_lsi_border borders[] = {FM_LSI_BORDER_VALID, FM_LSI_BORDER_ZERO};
    for (int m = 0; m < 3; m++)
        for (int t = 0; t < 3; t++)
            for (int b = 0; b < 2; b++)
                compare((fm_lsi_mode)m, types[t], borders[b], FM_LSI_HOST_DEFAULT, 333, 217, 7);
    /* Both ways of reaching pageable buffers, and a tile-unaligned odd size. */
    compare(FM_LSI_MODE_SPATIAL, FM_PIXEL_U16, FM_LSI_BORDER_ZERO, FM_LSI_HOST_STAGE, 1392, 1040,
            5);
    compare(FM_LSI_MODE_SPATIAL, FM_PIXEL_U16, FM_LSI_BORDER_VALID, FM_LSI_HOST_REGISTER, 1392,
            1040, 5);
    compare(FM_LSI_MODE_SPATIAL, FM_PIXEL_F32, FM_LSI_BORDER_VALID, FM_LSI_HOST_DEFAULT, 31, 15,
            1);

    /* Cancellation on the device path. */
    {
        fm_lsi_params p = {.window = 5, .frames = 3, .exposure_ms = 10};
        void *frames = ref_random_frames(FM_PIXEL_U16, 64 * 64 * 8);
        float *k = malloc(64 * 64 * 8 * 4);
        int calls = 0;
        char msg[FM_MSG_LEN];
        int stop_now(void *user, double f);
        fm_status st = fm_lsi_spatial(&p, frames, FM_PIXEL_U16, 64, 64, 8, k, NULL,
                                      FM_BACKEND_CUDA, stop_now, &calls, NULL, msg, sizeof msg);
        tap_ok(st == FM_ERR_CANCELLED && calls == 1, "CUDA spatial stack is cancellable");
        calls = 0;
        st = fm_lsi_temporal(&p, frames, FM_PIXEL_U16, 64, 64, 8, k, NULL, FM_BACKEND_CUDA,
                             stop_now, &calls, NULL, msg, sizeof msg);
        tap_ok(st == FM_ERR_CANCELLED && calls == 1, "CUDA temporal is cancellable");
        free(frames);
        free(k);
    }
    return tap_done();
}

int stop_now(void *user, double f)
{
    (void)f;
    (*(int *)user)++;
    return 1;
}
