/* FmApplication: app-level actions (open, quit, about), settings, CSS and the main window. */
#include "application.h"
#include "wheel-guard.h"

#include <glib/gi18n.h>

#include "fm_config.h"
#include "window.h"

struct _FmApplication {
    GtkApplication parent_instance;
    GSettings *settings;      /* NULL when the schema is not installed */
    fm_device_warmup *warmup; /* the CUDA start, from startup until shutdown */
    gboolean device_known;    /* the warmup has finished */
};

G_DEFINE_TYPE(FmApplication, fm_application, GTK_TYPE_APPLICATION)

static FmWindow *get_window(FmApplication *self)
{
    GtkWindow *win = gtk_application_get_active_window(GTK_APPLICATION(self));
    if (win == NULL) {
        GList *windows = gtk_application_get_windows(GTK_APPLICATION(self));
        win = windows != NULL ? windows->data : NULL;
    }
    if (win == NULL || !FM_IS_WINDOW(win))
        win = GTK_WINDOW(fm_window_new(self));
    return FM_WINDOW(win);
}

/* app.open: a path opens that file; the empty string asks with a file chooser. */
static void open_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    FmApplication *self = user;
    FmWindow *win = get_window(self);
    const char *path = parameter != NULL ? g_variant_get_string(parameter, NULL) : "";
    gtk_window_present(GTK_WINDOW(win));
    if (path[0] == '\0')
        fm_window_choose_file(win);
    else
        fm_window_open_file(win, path);
}

static void quit_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    GList *windows;
    /* Destroying a window cancels its jobs; the application then ends on its own. */
    while ((windows = gtk_application_get_windows(GTK_APPLICATION(user))) != NULL)
        gtk_widget_destroy(GTK_WIDGET(windows->data));
    g_application_quit(G_APPLICATION(user));
}

static void about_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    static const char *authors[] = {"The Fluxmap developers", NULL};
    GtkWindow *parent = gtk_application_get_active_window(GTK_APPLICATION(user));
    gtk_show_about_dialog(parent, "program-name", _("Fluxmap"), "version", FM_VERSION, "comments",
                          _("Quantitative maps from imaging data, computed on the GPU "
                            "with a CPU twin that gives the same numbers."),
                          "license-type", GTK_LICENSE_GPL_3_0, "authors", authors, "logo-icon-name",
                          FM_APPLICATION_ID, "website", "https://github.com/fluxmap/fluxmap", NULL);
}

/* app.mcml: the main window on its MCML page (which needs no dataset). */
static void mcml_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    FmWindow *win = get_window(FM_APPLICATION(user));
    fm_window_set_family(win, "mcml");
    gtk_window_present(GTK_WINDOW(win));
}

static const GActionEntry app_entries[] = {
    {"open", open_activated, "s", NULL, NULL, {0}},
    {"quit", quit_activated, NULL, NULL, NULL, {0}},
    {"about", about_activated, NULL, NULL, NULL, {0}},
    {"mcml", mcml_activated, NULL, NULL, NULL, {0}},
};

/* Uninstalled runs have no compiled schema; g_settings_new would abort, so look it up first. */
static GSettings *settings_if_installed(void)
{
    GSettingsSchemaSource *source = g_settings_schema_source_get_default();
    if (source == NULL)
        return NULL;
    g_autoptr(GSettingsSchema) schema =
        g_settings_schema_source_lookup(source, FM_APPLICATION_ID, TRUE);
    if (schema == NULL)
        return NULL;
    return g_settings_new_full(schema, NULL, NULL);
}

/* Main loop, once the device start has finished: every window names the device of its next job. */
static gboolean device_ready(gpointer data)
{
    FmApplication *self = data;
    self->device_known = TRUE;
    for (GList *l = gtk_application_get_windows(GTK_APPLICATION(self)); l != NULL; l = l->next)
        if (FM_IS_WINDOW(l->data))
            fm_window_device_changed(FM_WINDOW(l->data));
    return G_SOURCE_REMOVE;
}

static void fm_application_startup(GApplication *app)
{
    FmApplication *self = FM_APPLICATION(app);
    G_APPLICATION_CLASS(fm_application_parent_class)->startup(app);
    /* The first CUDA call costs ~0.3 s: pay it while the window is built and the user picks a
     * file, so the first run starts on a warm device. */
    self->warmup = fm_device_warmup_start(device_ready, self, TRUE);

    g_action_map_add_action_entries(G_ACTION_MAP(app), app_entries, G_N_ELEMENTS(app_entries), app);
    static const struct {
        const char *action;
        const char *accels[3];
    } accels[] = {
        {"app.open('')", {"<Primary>o", NULL, NULL}},
        {"app.quit", {"<Primary>q", NULL, NULL}},
        {"win.run", {"<Primary>r", NULL, NULL}},
        {"win.cancel-all", {"<Primary>period", NULL, NULL}},
        {"win.export-png", {"<Primary>e", NULL, NULL}},
        {"win.zoom-fit", {"<Primary>0", NULL, NULL}},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(accels); i++)
        gtk_application_set_accels_for_action(GTK_APPLICATION(app), accels[i].action,
                                              accels[i].accels);

    fm_wheel_guard_install(); /* the wheel scrolls panels; it changes a value only with focus */
    self->settings = settings_if_installed();
    if (self->settings == NULL)
        g_debug("settings schema %s not installed; running without settings", FM_APPLICATION_ID);

    g_autoptr(GtkCssProvider) css = gtk_css_provider_new();
    gtk_css_provider_load_from_resource(css, "/io/github/fluxmap/Fluxmap/style.css");
    gtk_style_context_add_provider_for_screen(gdk_screen_get_default(), GTK_STYLE_PROVIDER(css),
                                              GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
}

static void fm_application_activate(GApplication *app)
{
    gtk_window_present(GTK_WINDOW(get_window(FM_APPLICATION(app))));
}

static void fm_application_open(GApplication *app, GFile **files, gint n_files, const gchar *hint)
{
    FmWindow *win = get_window(FM_APPLICATION(app));
    gtk_window_present(GTK_WINDOW(win));
    /* One dataset at a time: the last file named wins, as when dropping several. */
    if (n_files > 0) {
        g_autofree char *path = g_file_get_path(files[n_files - 1]);
        if (path != NULL)
            fm_window_open_file(win, path);
    }
}

static void fm_application_shutdown(GApplication *app)
{
    /* Waits for a start still under way (it cannot be interrupted) and drops its idle. */
    g_clear_pointer(&FM_APPLICATION(app)->warmup, fm_device_warmup_free);
    G_APPLICATION_CLASS(fm_application_parent_class)->shutdown(app);
}

static void fm_application_dispose(GObject *object)
{
    FmApplication *self = FM_APPLICATION(object);
    g_clear_pointer(&self->warmup, fm_device_warmup_free); /* registered but never run (tests) */
    g_clear_object(&self->settings);
    G_OBJECT_CLASS(fm_application_parent_class)->dispose(object);
}

static void fm_application_class_init(FmApplicationClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = fm_application_dispose;
    G_APPLICATION_CLASS(klass)->startup = fm_application_startup;
    G_APPLICATION_CLASS(klass)->shutdown = fm_application_shutdown;
    G_APPLICATION_CLASS(klass)->activate = fm_application_activate;
    G_APPLICATION_CLASS(klass)->open = fm_application_open;
}

static void fm_application_init(FmApplication *self) {}

FmApplication *fm_application_new(void)
{
    return g_object_new(FM_TYPE_APPLICATION, "application-id", FM_APPLICATION_ID, "flags",
                        G_APPLICATION_HANDLES_OPEN, NULL);
}

GSettings *fm_application_get_settings(FmApplication *app)
{
    return app->settings;
}

static gboolean has_string_key(GSettings *settings, const char *key)
{
    g_autoptr(GSettingsSchema) schema = NULL;
    g_object_get(settings, "settings-schema", &schema, NULL);
    if (schema == NULL || !g_settings_schema_has_key(schema, key))
        return FALSE;
    g_autoptr(GSettingsSchemaKey) skey = g_settings_schema_get_key(schema, key);
    return g_variant_type_equal(g_settings_schema_key_get_value_type(skey), G_VARIANT_TYPE_STRING);
}

char *fm_application_get_setting(FmApplication *app, const char *key, const char *fallback)
{
    if (app == NULL || app->settings == NULL || !has_string_key(app->settings, key))
        return g_strdup(fallback);
    return g_settings_get_string(app->settings, key);
}

void fm_application_set_setting(FmApplication *app, const char *key, const char *value)
{
    if (app == NULL || app->settings == NULL || !has_string_key(app->settings, key))
        return;
    /* An enum key refuses values outside its choices; keep the old value then. */
    if (!g_settings_set_string(app->settings, key, value))
        g_debug("setting %s=%s refused", key, value);
}

gboolean fm_application_get_device(FmApplication *app, int *n_devices, fm_gpu_info *gpu,
                                   const char **why)
{
    if (app == NULL || app->warmup == NULL || !app->device_known)
        return FALSE;
    fm_device_warmup_wait(app->warmup, n_devices, gpu, NULL, why); /* finished: no wait */
    return TRUE;
}
