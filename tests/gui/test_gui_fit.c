/* A window that fits: on every family page the window's minimum size fits a 1280 x 720 screen
 * (usable there, and so on a 1366 x 768 laptop with the window maximised). Run at GDK_SCALE 1
 * and 2 (meson runs it twice): sizes are logical pixels, so they must not grow with the scale. */
#include <stdio.h>

#include "gui-test-util.h"

#define FIT_WIDTH 1280
#define FIT_HEIGHT 720

static FmWindow *win;

static void check_page(gconstpointer data)
{
    const char *family = data;
    fm_window_set_family(win, family);
    fm_gui_test_drain(0.3);
    g_assert_cmpstr(fm_window_get_family(win), ==, family);
    GtkRequisition min, natural;
    gtk_widget_get_preferred_size(GTK_WIDGET(win), &min, &natural);
    g_test_message("%s page: minimum %d x %d, natural %d x %d (scale %d)", family, min.width,
                   min.height, natural.width, natural.height,
                   gtk_widget_get_scale_factor(GTK_WIDGET(win)));
    g_assert_cmpint(min.width, <=, FIT_WIDTH);
    g_assert_cmpint(min.height, <=, FIT_HEIGHT);
}

int main(int argc, char **argv)
{
    char *dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-fit-XXXXXX");
    if (dir == NULL)
        return 0;
    FmApplication *app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);
    fm_gui_test_drain(0.5);
    static const char *const families[] = {"lsi", "flim", "dce", "oct", "mcml"};
    for (size_t i = 0; i < G_N_ELEMENTS(families); i++) {
        char *path = g_strdup_printf("/gui-fit/%s", families[i]);
        g_test_add_data_func(path, families[i], check_page);
        g_free(path);
    }
    int status = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), dir);
    return status;
}
