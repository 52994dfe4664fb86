/* The backend a one-shot run deserves: a run whose expected CPU time is below the device's start
 * runs on the CPU. Batches and the GUI keep the device warm and do not ask. */
#pragma once

#include <glib.h>
#include "method.h"

G_BEGIN_DECLS

/* What a first CUDA call costs a fresh process (0.24-0.33 s on the H100, issue 26). */
#define FM_DEVICE_START_MS 300.0

/* The method's expected CPU milliseconds on work_units (input samples; photons for mcml.run)
 * with threads CPU threads, from per-method constants measured on a 2-core machine; a negative
 * value when the method has no constant (it then keeps the device). */
double fm_expected_cpu_ms(const fm_method *method, double work_units, int threads);

/* The run's work units before its input is read: at most the input file's size in bytes for
 * formats stored uncompressed (a sample takes at least a byte), the photons asked for by
 * mcml.run; a negative value when that says nothing (compressed or photon-list files, folders,
 * an .mci file's own photon count). */
double fm_work_units_bound(const fm_method *method, const fm_params *params, const char *input);

/* The work units of a read dataset (its samples; mcml.run: the photons asked for, or negative). */
double fm_work_units(const fm_method *method, const fm_params *params, const fm_dataset *dataset);

/* TRUE when work_units of method are expected to take less CPU time than the device's start;
 * then *note (may be NULL) says so: "CPU: expected 40 ms of compute, less than the GPU's start
 * (~300 ms)". */
gboolean fm_one_shot_prefers_cpu(const fm_method *method, double work_units, int threads,
                                 char **note);

G_END_DECLS
