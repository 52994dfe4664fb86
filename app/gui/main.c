/* Entry point of the fluxmap GTK application. */
#include <glib/gi18n.h>
#include <locale.h>

#include "application.h"
#include "fm_config.h"

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    bindtextdomain(GETTEXT_PACKAGE, FM_LOCALEDIR);
    bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
    textdomain(GETTEXT_PACKAGE);

    g_autoptr(FmApplication) app = fm_application_new();
    return g_application_run(G_APPLICATION(app), argc, argv);
}
