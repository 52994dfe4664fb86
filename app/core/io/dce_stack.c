/* TIFF stacks as 4-D DCE series: page reordering into x, y, z, t float32 with frame times. */
#include "dce_stack.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/error.h"
#include "app/core/io/tiff.h"

fm_dataset *fm_dce_stack_reshape(const fm_dataset *stack, int nz, int nt, fm_dce_page_order order,
                                 double frame_interval_s, const double *frame_times_s,
                                 GError **error)
{
    const char *name = stack->source_path ? stack->source_path : _("stack");
    if (nz < 1 || nt < 1) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: nz and nt must be at least 1 (got nz %d, nt %d)"), name, nz, nt);
        return NULL;
    }
    int pages = fm_dataset_frames(stack);
    if ((gint64)nz * nt != pages) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: %d pages are not nz %d x nt %d"),
                    name, pages, nz, nt);
        return NULL;
    }
    g_autofree double *times = g_new(double, nt);
    for (int t = 0; t < nt; t++) {
        times[t] = frame_times_s ? frame_times_s[t] : t * frame_interval_s;
        if (!isfinite(times[t]) || (t > 0 && !(times[t] > times[t - 1]))) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                        frame_times_s ? _("%s: non-monotonic frame times: frame %d at %g s "
                                          "follows %g s")
                                      : _("%s: the frame interval must be > 0 s (frame %d at "
                                          "%g s, previous %g s)"),
                        name, t, times[t], t > 0 ? times[t - 1] : 0.0);
            return NULL;
        }
    }
    int nx = fm_dataset_width(stack), ny = fm_dataset_height(stack);
    gsize sizes[4] = {(gsize)nx, (gsize)ny, (gsize)nz, (gsize)nt};
    static const char *const names[4] = {"x", "y", "z", "t"};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_F32, 4, sizes, names);
    float *dst = ds->data;
    gsize plane = (gsize)nx * ny;
    for (int t = 0; t < nt; t++) {
        for (int z = 0; z < nz; z++) {
            gsize page = order == FM_DCE_PAGES_Z_FASTEST ? (gsize)t * nz + z : (gsize)z * nt + t;
            float *out = dst + ((gsize)t * nz + z) * plane;
            for (gsize i = 0; i < plane; i++)
                out[i] = (float)fm_dataset_value(stack, page * plane + i);
        }
    }
    for (int d = 0; d < 3; d++)
        ds->dims[d].unit = g_strdup("px");
    ds->dims[3].unit = g_strdup("s");
    fm_dataset_set_frame_times(ds, times, nt);
    double identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    fm_dataset_set_affine(ds, identity);
    ds->source_path = g_strdup(stack->source_path);
    ds->sha256 = g_strdup(stack->sha256);
    return ds;
}

fm_dataset *fm_dce_stack_read(const char *path, int nz, int nt, fm_dce_page_order order,
                              double frame_interval_s, const double *frame_times_s, GError **error)
{
    g_autoptr(fm_dataset) stack = fm_tiff_read(path, error);
    if (stack == NULL)
        return NULL;
    if (stack->source_path == NULL)
        stack->source_path = g_canonicalize_filename(path, NULL);
    return fm_dce_stack_reshape(stack, nz, nt, order, frame_interval_s, frame_times_s, error);
}
