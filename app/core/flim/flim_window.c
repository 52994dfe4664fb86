/* The fit window a FLIM run uses, resolved from its parameters and the data in one place, so
 * that the run and the GUI's decay plot of that run agree on it. */
#include "app/core/flim/flim_window.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/flim/flim_irf.h"
#include "app/core/flim/flim_prep.h"
#include "app/core/method.h"

gboolean fm_flim_params_window(fm_dataset *ds, const fm_params *params, double bin_width_ns,
                               const float *irf, fm_flim_window *window, GError **error)
{
    g_autofree float *loaded = NULL;
    fm_flim_window_kind kind = FM_FLIM_WINDOW_TAIL;
    if (fm_params_has(params, "irf_file")) {
        const char *file = fm_params_get_string(params, "irf_file");
        if (irf == NULL && file && *file)
            irf = loaded = fm_flim_load_decay_resampled(file, fm_dataset_frames(ds), bin_width_ns,
                                                        _("IRF"), NULL, NULL);
        if (irf != NULL)
            kind = FM_FLIM_WINDOW_IRF;
    }
    if (fm_params_has(params, "cal_tau_ns") && fm_params_get_double(params, "cal_tau_ns") > 0.0)
        kind = FM_FLIM_WINDOW_PERIOD;
    /* a fitted background needs the bins where the tail has sunk into it; the phasor's
     * transform runs over the laser period: both take the window to the period's end */
    gboolean to_period_end =
        (fm_params_has(params, "fit_background") && fm_params_get_bool(params, "fit_background")) ||
        fm_params_has(params, "harmonic");
    double rep =
        fm_params_has(params, "rep_rate_mhz") ? fm_params_get_double(params, "rep_rate_mhz") : 0;
    return fm_flim_window_choose(ds, fm_params_get_double(params, "fit_start_ns"),
                                 fm_params_get_double(params, "fit_end_ns"), bin_width_ns,
                                 fm_flim_period_ns(ds, rep), kind, to_period_end, irf, window,
                                 error);
}

gboolean fm_flim_run_window(fm_dataset *ds, const char *method_id, const char *params_json,
                            int *start, int *end)
{
    const fm_method *method = method_id ? fm_method_find(method_id) : NULL;
    if (ds == NULL || method == NULL || g_strcmp0(method->family, "flim") != 0)
        return FALSE;
    g_autoptr(fm_params) params = fm_method_default_params(method);
    if (params_json && !fm_params_set_from_json(params, params_json, NULL))
        return FALSE;
    double bw = 0.0;
    if (!fm_flim_prep_check(ds, 1, NULL) ||
        !fm_flim_prep_bin_width(ds, fm_params_get_double(params, "bin_width_ps"), &bw, NULL))
        return FALSE;
    fm_flim_window w;
    if (!fm_flim_params_window(ds, params, bw, NULL, &w, NULL))
        return FALSE;
    *start = w.start;
    *end = w.end;
    return TRUE;
}

char *fm_flim_window_describe(const fm_flim_window *w, double bin_width_ns)
{
    const char *from = !w->start_auto                     ? _("as given")
                       : w->kind == FM_FLIM_WINDOW_IRF    ? _("from the IRF's onset")
                       : w->kind == FM_FLIM_WINDOW_PERIOD ? _("from the period's start")
                                                          : _("from the decay's peak");
    const char *to = !w->end_auto       ? _("to the end given")
                     : w->to_background ? _("to where the tail meets the background")
                                        : _("to the end of the period");
    return g_strdup_printf(_("fit window %.3g–%.3g ns (bins %d–%d; %s %s)"),
                           w->start * bin_width_ns, w->end * bin_width_ns, w->start, w->end - 1,
                           from, to);
}
