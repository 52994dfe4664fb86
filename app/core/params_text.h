/* Parameters in words: one value as a user reads it ("Model: bi", "Window: 7 px") and the
 * parameters that differ between two runs ("Model: mono → bi"). */
#pragma once

#include <glib.h>
#include "params.h"

G_BEGIN_DECLS

/* The value of key as a user reads it, with its unit: "bi", "7 px", "auto", "on", "none".
 * g_free it; NULL when key is not in the schema. */
char *fm_params_value_text(const fm_params *params, const char *key);

/* "Model: bi · Window: 7 px": every key whose value differs from the schema's default, and the
 * keys in always (NULL-terminated, may be NULL; those not in the schema are skipped) even at
 * their default. "" when nothing is to be said. g_free it. */
char *fm_params_describe(const fm_params *params, const char *const *always);

/* Two runs' parameters side by side: method_a/method_b are method ids, json_a/json_b their
 * catalogued params JSON. differ receives "Model: mono → bi", "Window: 5 → 7 px", a key only
 * one method has as "Tile size: 32 px (B only)"; same receives "Fit start: auto" for each key
 * both share with equal values. Both arrays own their strings. FALSE with error when a method
 * is unknown or its JSON does not fit its schema. */
gboolean fm_params_compare_runs(const char *method_a, const char *json_a, const char *method_b,
                                const char *json_b, GPtrArray **differ, GPtrArray **same,
                                GError **error);

G_END_DECLS
