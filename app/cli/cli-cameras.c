/* `fluxmap-cli cameras [--details ID]`: the GenICam cameras Aravis finds, and one camera's
 * current settings with their ranges and the pixel formats it offers. */
#include <glib/gi18n.h>
#include <stdio.h>

#include "app/cli/cli.h"
#include "app/core/io/frame_source.h"

static const fm_cli_option options[] = {
    {"details", TRUE},
    {"help", FALSE},
};

static void print_help(void)
{
    printf("%s", _("Usage: fluxmap-cli cameras [--details ID]\n"
                   "Lists the GenICam cameras (GigE Vision, USB3 Vision) Aravis finds: id,\n"
                   "vendor, model, serial number and protocol. The id is what --camera takes.\n"
                   "--details ID prints that camera's region, pixel format, exposure, gain and\n"
                   "frame rate with their ranges, and the pixel formats it offers.\n"
                   "FLUXMAP_FAKE_CAMERA=1 adds Aravis's in-process demo camera Fake_1.\n"));
}

static void print_setting(const char *name, const char *unit, const fm_source_setting *s)
{
    if (!s->available)
        printf("  %-14s %s\n", name, _("(not offered)"));
    else
        printf("  %-14s %g %s (%g to %g)\n", name, s->value, unit, s->min, s->max);
}

static int print_details(const char *id)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_frame_source) source = fm_frame_source_open_camera(id, &error);
    if (!source)
        return fm_cli_fail(FM_EXIT_INPUT, "%s", error->message);
    fm_source_settings s = {0};
    if (!fm_frame_source_get_settings(source, &s, &error))
        return fm_cli_fail(FM_EXIT_INPUT, "%s", error->message);
    printf("%s\n", s.description);
    printf("  %-14s %dx%d at (%d, %d), sensor %dx%d\n", _("region"), s.width, s.height, s.x_offset,
           s.y_offset, s.sensor_width, s.sensor_height);
    printf("  %-14s %s%s\n", _("pixel format"), s.format_name,
           s.format == FM_PIXFMT_UNKNOWN ? _(" (not read by Fluxmap)") : "");
    print_setting(_("exposure"), "us", &s.exposure_us);
    print_setting(_("gain"), "dB", &s.gain_db);
    print_setting(_("frame rate"), _("frames/s"), &s.frame_rate_hz);
    GString *read = g_string_new(NULL);
    for (int f = 0; f < FM_PIXFMT_UNKNOWN; f++)
        if (s.formats_offered & (1u << f))
            g_string_append_printf(read, "%s%s", read->len ? ", " : "",
                                   fm_pixfmt_name((fm_pixfmt)f));
    printf("  %-14s %s\n", _("formats read"), read->len ? read->str : _("none"));
    if (s.other_formats && s.other_formats[0]) {
        g_autofree char *other = g_strjoinv(", ", s.other_formats);
        printf("  %-14s %s\n", _("also offered"), other);
    }
    g_string_free(read, TRUE);
    fm_source_settings_clear(&s);
    return FM_EXIT_OK;
}

static int cameras_body(const fm_cli_args *args)
{
    if (fm_cli_has(args, "details"))
        return print_details(fm_cli_get(args, "details"));
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) list = fm_cameras_list(&error);
    if (!list)
        return fm_cli_fail(FM_EXIT_INPUT, "%s", error->message);
    if (list->len == 0) {
        /* not an error: a machine without a camera is the usual case */
        printf("%s", _("No camera found. Set FLUXMAP_FAKE_CAMERA=1 to list Aravis's demo "
                       "camera Fake_1.\n"));
        return FM_EXIT_OK;
    }
    printf("%-24s %-16s %-20s %-14s %s\n", _("ID"), _("VENDOR"), _("MODEL"), _("SERIAL"),
           _("PROTOCOL"));
    for (guint i = 0; i < list->len; i++) {
        const fm_camera_info *c = list->pdata[i];
        printf("%-24s %-16s %-20s %-14s %s\n", c->id, c->vendor ? c->vendor : "",
               c->model ? c->model : "", c->serial ? c->serial : "",
               c->protocol ? c->protocol : "");
    }
    return FM_EXIT_OK;
}

int fm_cli_cameras(int argc, char **argv)
{
    return fm_cli_parse_and_run_options(argc, argv, "cameras", options, G_N_ELEMENTS(options),
                                        print_help, cameras_body);
}
