/* FmApplication: the GtkApplication of Fluxmap (actions, settings, opening files). */
#pragma once

#include <gtk/gtk.h>
#include "app/core/device_warmup.h"

G_BEGIN_DECLS

#define FM_APPLICATION_ID "io.github.fluxmap.Fluxmap"

#define FM_TYPE_APPLICATION (fm_application_get_type())
G_DECLARE_FINAL_TYPE(FmApplication, fm_application, FM, APPLICATION, GtkApplication)

FmApplication *fm_application_new(void);
/* The io.github.fluxmap.Fluxmap settings, or NULL when the schema is not installed
 * (uninstalled runs and tests). */
GSettings *fm_application_get_settings(FmApplication *app);
/* A string key of the settings, or fallback when there are no settings or no such key. */
char *fm_application_get_setting(FmApplication *app, const char *key, const char *fallback);
void fm_application_set_setting(FmApplication *app, const char *key, const char *value);
/* The device that start-up found (the CUDA start runs on a worker thread from startup on): FALSE
 * while it is still starting, else TRUE with the device count, device 0 (valid when
 * *n_devices > 0) and why there is none; each out argument may be NULL. Windows hear of the
 * outcome through fm_window_device_changed. */
gboolean fm_application_get_device(FmApplication *app, int *n_devices, fm_gpu_info *gpu,
                                   const char **why);

G_END_DECLS
