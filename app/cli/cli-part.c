/* --block N and --channel N: which dataset of a file that holds several is read (an .sdt file's
 * blocks, a .ptu/.pt3 file's detector channels), shared by run and info. */
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/pt3.h"
#include "app/core/io/sdt.h"
#include "cli.h"

/* The file's first bytes, to tell an option that does not apply to it (n 0: unreadable, which
 * the reader reports). */
static gsize read_head(const char *path, guint8 *head, gsize size)
{
    FILE *f = g_fopen(path, "rb");
    if (!f)
        return 0;
    gsize n = fread(head, 1, size, f);
    fclose(f);
    return n;
}

int fm_cli_input_part(const fm_cli_args *args, const char *input, int *part)
{
    *part = 0;
    int block = 0, channel = 0;
    g_autofree char *message = NULL;
    if (!fm_cli_get_positive_int(args, "block", &block, &message) ||
        !fm_cli_get_positive_int(args, "channel", &channel, &message))
        return fm_cli_fail(FM_EXIT_USAGE, "%s", message);
    if (block > 0 && channel > 0)
        return fm_cli_fail(FM_EXIT_USAGE, "%s", _("--block and --channel exclude each other"));
    if (block == 0 && channel == 0)
        return FM_EXIT_OK;
    guint8 head[64] = {0};
    gsize n = read_head(input, head, sizeof head);
    gboolean is_sdt = fm_sdt_sniff(head, n);
    gboolean is_tttr = (n >= 6 && memcmp(head, "PQTTTR", 6) == 0) || fm_pt3_sniff(head, n);
    if (n > 0 && block > 0 && !is_sdt)
        return fm_cli_fail(FM_EXIT_USAGE, _("%s: --block applies to Becker & Hickl .sdt files only"),
                           input);
    if (n > 0 && channel > 0 && !is_tttr)
        return fm_cli_fail(FM_EXIT_USAGE,
                           _("%s: --channel applies to PicoQuant .ptu and .pt3 files only"), input);
    *part = block > 0 ? block : channel;
    return FM_EXIT_OK;
}
