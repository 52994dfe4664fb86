/* FmApplication: the GtkApplication of Fluxmap (actions, settings, opening files). */
#pragma once

#include <gtk/gtk.h>

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

G_END_DECLS
