/* The dce.dual_input model curve for views: the kernels' fm_dce_model behind a GLib API. */
#include "app/core/dce/dce_model.h"

#include "app/core/error.h"
#include "kernels/dce/dce.h"

G_STATIC_ASSERT((int)FM_DCE_MODEL_N_PARAMS == (int)FM_DCE_N_PARAMS);
G_STATIC_ASSERT((int)FM_DCE_MODEL_TAU_P == (int)FM_DCE_TAU_P);

gboolean fm_dce_model_curve(const double *times_s, const double *ca, const double *cp, int n,
                            double model_dt_s, const double theta[FM_DCE_MODEL_N_PARAMS],
                            double *curve, GError **error)
{
    fm_dce_params p;
    fm_dce_params_defaults(&p);
    p.n_times = n;
    p.times_s = times_s;
    p.ca = ca;
    p.cp = cp;
    p.model_dt_s = model_dt_s;
    char msg[FM_MSG_LEN] = "";
    fm_status st = fm_dce_model(&p, theta, curve, msg, sizeof msg);
    if (st != FM_OK) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, "%s", msg);
        return FALSE;
    }
    return TRUE;
}
