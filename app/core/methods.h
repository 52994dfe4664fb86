/* Registry entries defined by the family method files; app/core/method.c lists them. */
#pragma once

#include "app/core/method.h"

G_BEGIN_DECLS

extern const fm_method fm_method_lsi_spatial;
extern const fm_method fm_method_lsi_temporal;
extern const fm_method fm_method_lsi_spatiotemporal;
extern const fm_method fm_method_mcml_run;
extern const fm_method fm_method_flim_iem;
extern const fm_method fm_method_flim_cmm;
extern const fm_method fm_method_flim_rld;
extern const fm_method fm_method_flim_phasor;
extern const fm_method fm_method_flim_bcmm1;
extern const fm_method fm_method_flim_bcmm2;
extern const fm_method fm_method_flim_lsm;
extern const fm_method fm_method_flim_mle;
extern const fm_method fm_method_flim_ga;
extern const fm_method fm_method_dce_dual_input;
extern const fm_method fm_method_dce_tofts, fm_method_dce_extended_tofts, fm_method_dce_patlak,
    fm_method_dce_2cxm, fm_method_dce_2cum; /* app/core/dce/pk_methods.c */
extern const fm_method fm_method_dce_t1_vfa;
extern const fm_method fm_method_oct_bscan;

G_END_DECLS
