/* Registry entries defined by the family method files; app/core/method.c lists them. */
#pragma once

#include "app/core/method.h"

G_BEGIN_DECLS

extern const fm_method fm_method_lsi_spatial;
extern const fm_method fm_method_lsi_temporal;
extern const fm_method fm_method_lsi_spatiotemporal;

G_END_DECLS
