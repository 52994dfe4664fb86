/* FmFamilyPage: what a family brings to the window, so that the window can host it without
 * naming it. A page is made by its family's constructor (listed once in pages.c), which puts its
 * panel in the window's family stack and its views in the centre, and connects to the shared
 * services it needs (map view, ROIs, dataset-changed). The window then asks its pages in turn. */
#pragma once

#include <glib-object.h>

#include "app/core/dataset.h"
#include "app/core/method.h"
#include "app/core/result.h"

G_BEGIN_DECLS

/* Which of the window's bars a page uses (the window hides the others while it is on show). */
typedef enum {
    FM_PAGE_BAR_FRAMES = 1 << 0,      /* frame slider and playback */
    FM_PAGE_BAR_ROIS = 1 << 1,        /* ROI tools */
    FM_PAGE_BAR_MAP_TOOLBAR = 1 << 2, /* colour map and range */
    FM_PAGE_BAR_MAP_LIST = 1 << 3,    /* the list of maps */
    FM_PAGE_BAR_PLOT = 1 << 4,        /* the bottom plot */
    FM_PAGE_BAR_ALL = (1 << 5) - 1,
} fm_page_bars;

/* What stack playback (the frame bar) computes on each frame for a page: a method and its
 * parameters, the map shown, and the bottom plot's y axis (its mean over ROI 1, or the frame). */
typedef struct {
    const fm_method *method;
    fm_params *params; /* the caller frees it */
    fm_backend backend;
    const char *map;
    const char *y_label; /* the mapped quantity, short: the axis is ~60 px tall at 1366x768 */
} fm_page_live;

/* How well a page takes a dataset. The window shows the best page for each dataset opened, and
 * the switcher lists every page that takes it, so the user can choose where several do. */
typedef enum {
    FM_PAGE_TAKES_NONE = 0,
    FM_PAGE_TAKES_NO_DATASET = 1, /* needs none (MCML): always listed, never chosen for a file */
    FM_PAGE_TAKES_CAN_RUN = 10,   /* its methods run on it, though it is not the family's kind */
    FM_PAGE_TAKES_OWN = 100,      /* the family's own kind of data */
} fm_page_takes;

#define FM_TYPE_FAMILY_PAGE (fm_family_page_get_type())
G_DECLARE_INTERFACE(FmFamilyPage, fm_family_page, FM, FAMILY_PAGE, GObject)

struct _FmFamilyPageInterface {
    GTypeInterface parent_iface;
    /* The page's family id ("flim", …), the name of its child in the window's family stack. */
    const char *(*get_id)(FmFamilyPage *page);
    /* How well the page takes ds (fm_page_takes; ds is never NULL). */
    int (*takes)(FmFamilyPage *page, const fm_dataset *ds);
    /* A newly opened dataset is on show: the page prepares its views when it takes it. The
     * window has already put the best page on show (fm_window_get_family). */
    void (*dataset_changed)(FmFamilyPage *page);
    /* Shows a result of one of its methods (a finished job, a catalogue entry); FALSE when the
     * result is not its own. */
    gboolean (*show_result)(FmFamilyPage *page, const fm_result *result);
    /* win.run while the page is on show; FALSE leaves it to the window's default. */
    gboolean (*run)(FmFamilyPage *page);
    /* Scripting and tests: selects a method, sets a parameter from text; FALSE when the page
     * has no such method or key. */
    gboolean (*select_method)(FmFamilyPage *page, const char *method_id);
    gboolean (*set_param)(FmFamilyPage *page, const char *key, const char *text);
    /* The user's backend setting ("auto", "cpu", "cuda"), for the page's own selector. */
    void (*set_backend)(FmFamilyPage *page, const char *backend);
    /* The bars it uses (fm_page_bars); none when it has no get_bars. */
    guint (*get_bars)(FmFamilyPage *page);
    /* Stack playback: fills live (FALSE with error when the page cannot, or has no playback). */
    gboolean (*get_live)(FmFamilyPage *page, fm_page_live *live, GError **error);
    /* What the window keeps between sessions: the method the panel shows and its parameters as
     * the user left them (NULL when the page has no method panel or a value is out of range). */
    const fm_method *(*get_method)(FmFamilyPage *page);
    fm_params *(*get_params)(FmFamilyPage *page);
    /* ROIs imported from a file (win.import-rois; fm_roi*, the page copies what it keeps): a
     * page whose ROIs live on slices keeps each on its own; FALSE leaves them to the window,
     * which puts them on the map view. */
    gboolean (*add_rois)(FmFamilyPage *page, GPtrArray *rois);
    /* Every ROI of the page, those of slices not on show included (a container of borrowed
     * pointers; unref it), for win.export-rois; NULL: the map view's are all there are. */
    GPtrArray *(*get_rois)(FmFamilyPage *page);
};

const char *fm_family_page_get_id(FmFamilyPage *page);
/* Every call below is optional for a page: where it has none, it answers FALSE, NULL,
 * FM_PAGE_TAKES_NONE or does nothing. */
int fm_family_page_takes(FmFamilyPage *page, const fm_dataset *ds);
void fm_family_page_dataset_changed(FmFamilyPage *page);
/* FALSE for a page that runs without a dataset (MCML). */
gboolean fm_family_page_needs_dataset(FmFamilyPage *page);
gboolean fm_family_page_show_result(FmFamilyPage *page, const fm_result *result);
gboolean fm_family_page_run(FmFamilyPage *page);
gboolean fm_family_page_select_method(FmFamilyPage *page, const char *method_id);
gboolean fm_family_page_set_param(FmFamilyPage *page, const char *key, const char *text);
void fm_family_page_set_backend(FmFamilyPage *page, const char *backend);
guint fm_family_page_get_bars(FmFamilyPage *page);
gboolean fm_family_page_get_live(FmFamilyPage *page, fm_page_live *live, GError **error);
const fm_method *fm_family_page_get_method(FmFamilyPage *page);
fm_params *fm_family_page_get_params(FmFamilyPage *page);
gboolean fm_family_page_add_rois(FmFamilyPage *page, GPtrArray *rois);
GPtrArray *fm_family_page_get_rois(FmFamilyPage *page);

/* A page from plain functions of the window, for families whose page needs only these. */
typedef struct _FmWindow FmWindow;
typedef struct {
    const char *id;
    guint bars; /* fm_page_bars */
    /* each may be NULL: as the interface's calls of the same names */
    int (*takes)(const fm_dataset *ds);
    void (*dataset_changed)(FmWindow *win);
    gboolean (*run)(FmWindow *win);
    gboolean (*show_result)(FmWindow *win, const fm_result *result);
    gboolean (*select_method)(FmWindow *win, const char *method_id); /* NULL: get_method's */
    gboolean (*set_param)(FmWindow *win, const char *key, const char *text);
    const fm_method *(*get_method)(FmWindow *win);
    fm_params *(*get_params)(FmWindow *win);
    gboolean (*add_rois)(FmWindow *win, GPtrArray *rois);
    GPtrArray *(*get_rois)(FmWindow *win);
} fm_page_funcs;
FmFamilyPage *fm_family_page_from_funcs(FmWindow *win, const fm_page_funcs *funcs);

G_END_DECLS
