/* Frames onto the screen: the session's display thread hands its update (a copy of the newest
 * processed frame, valid during the call) to the main loop and waits until the map and the ROI
 * time course took it. The main loop never waits for the session; while it draws, the session
 * goes on processing and counts the frames the display skipped. */
#include "live-private.h"

#include <glib/gi18n.h>

static const fm_map *find_map(const fm_live_output *out, const char *name)
{
    for (int i = 0; name != NULL && i < out->n_maps; i++)
        if (g_strcmp0(out->maps[i]->name, name) == 0)
            return out->maps[i];
    return NULL;
}

/* The colour bar's title of a live map. */
static const char *title_of(const char *name)
{
    static const struct {
        const char *name, *title;
    } titles[] = {{"sfi", N_("SFI")},
                  {"contrast", N_("Contrast K")},
                  {"bscan_db", N_("B-scan")},
                  {"enface", N_("En-face")}};
    for (gsize i = 0; i < G_N_ELEMENTS(titles); i++)
        if (g_strcmp0(titles[i].name, name) == 0)
            return _(titles[i].title);
    return name;
}

static void show_update(FmLive *live, const fm_live_update *u)
{
    FmWindow *win = live->win;
    const fm_live_page *page = live->run_page;
    const fm_live_output *out = u->output;
    if (page == NULL || out == NULL || !out->ready || out->n_maps == 0)
        return;
    if (page->show != NULL) { /* the page draws its own views */
        page->show(win, out->maps, out->n_maps, u->n_processed);
        live->n_drawn++;
        return;
    }
    /* the window's map list chooses among the maps where the page uses the window's view */
    gboolean window_view = page->view == win->map_view;
    const fm_map *map = window_view ? find_map(out, win->map_name) : NULL;
    if (map == NULL) {
        map = out->maps[CLAMP(out->primary, 0, out->n_maps - 1)];
        if (window_view) { /* the map list names the map on show ("SFI", not "Raw frame") */
            g_free(win->map_name);
            win->map_name = g_strdup(map->name);
            win->updating = TRUE;
            gtk_combo_box_set_active_id(GTK_COMBO_BOX(win->map_combo), map->name);
            win->updating = FALSE;
        }
    }
    fm_map_view_set_map(page->view, map->data, map->width, map->height, title_of(map->name),
                        map->unit);
    if (!live->zoomed) {
        fm_map_view_zoom_to_fit(page->view);
        live->zoomed = TRUE;
    }
    if (window_view) { /* the cursor read-out's unit; the toolbar's min/max say the range */
        g_free(win->shown_unit);
        win->shown_unit = g_strdup(map->unit);
        fm_window_update_range_widgets(win); /* Auto follows the frames, a fixed range holds */
    }
    const fm_map *second = page->second_view ? find_map(out, page->second_map) : NULL;
    if (second != NULL && second->width > 0 && second->height > 0) {
        fm_map_view_set_map(page->second_view, second->data, second->width, second->height,
                            title_of(second->name), second->unit);
        fm_map_view_zoom_to_fit(page->second_view); /* it grows a row per frame */
    }
    if (u->n_rois > 0 && u->n_points > 0) {
        if (live->n_drawn == 0) {
            const fm_map *primary = out->maps[CLAMP(out->primary, 0, out->n_maps - 1)];
            g_autofree char *y =
                live->whole_frame
                    ? g_strdup_printf(_("mean %s (%s)"), title_of(primary->name), primary->unit)
                    : g_strdup_printf(_("mean %s, ROI 1 (%s)"), title_of(primary->name),
                                      primary->unit);
            fm_plot_view_set_labels(win->plot_view, _("time (s)"), y);
        }
        fm_plot_view_set_series(win->plot_view, u->t_points, u->roi_series[0], u->n_points);
    }
    live->n_drawn++;
}

static gboolean draw_update(gpointer data)
{
    FmLive *live = data;
    g_mutex_lock(&live->lock);
    live->idle_id = 0;
    const fm_live_update *u = live->closing ? NULL : live->update;
    g_mutex_unlock(&live->lock);
    /* the display thread waits meanwhile: u stays valid */
    if (u != NULL && !live->disposed)
        show_update(live, u);
    g_mutex_lock(&live->lock);
    live->drawn = TRUE;
    g_cond_broadcast(&live->cond);
    g_mutex_unlock(&live->lock);
    return G_SOURCE_REMOVE;
}

void fm_live_display(const fm_live_update *update, gpointer user)
{
    FmLive *live = user;
    g_mutex_lock(&live->lock);
    if (!live->closing) {
        live->update = update;
        live->drawn = FALSE;
        /* after the views' own redraws, so each update is painted before the next comes */
        live->idle_id = g_idle_add_full(G_PRIORITY_DEFAULT_IDLE, draw_update, live, NULL);
        while (!live->drawn && !live->closing)
            g_cond_wait(&live->cond, &live->lock);
        live->update = NULL;
    }
    g_mutex_unlock(&live->lock);
}

void fm_live_display_close(FmLive *live)
{
    g_mutex_lock(&live->lock);
    live->closing = TRUE;
    if (live->idle_id != 0)
        g_source_remove(live->idle_id);
    live->idle_id = 0;
    g_cond_broadcast(&live->cond);
    g_mutex_unlock(&live->lock);
}
