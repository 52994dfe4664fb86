/* FmLiveParams: live parameters. After a parameter change on a page, recomputes the page's map by
 * itself when the method's last run on the open dataset was fast (FM_LIVE_MAX_MS): debounced, the
 * previous computation cancelled, shown as the current map, and the time of the redraw kept (for
 * tests and the benchmark). One per page, owned by the window. */
#pragma once

#include "app/core/dataset.h"
#include "app/core/method.h"
#include "window.h"

G_BEGIN_DECLS

/* A method whose last run on the open dataset took at most this long recomputes by itself. */
#define FM_LIVE_MAX_MS 150.0
/* A computation starts FM_LIVE_DEBOUNCE_MS after the last change (a burst of changes is one
 * computation, soon after it ends), or FM_LIVE_DRAG_MS after the first change waiting when
 * changes keep coming (a drag), or when the running one should have ended if it takes longer. */
#define FM_LIVE_DEBOUNCE_MS 4
#define FM_LIVE_DRAG_MS 30

/* What a page computes live, filled by its request function. */
typedef struct {
    const fm_method *method;
    fm_dataset *dataset; /* a reference, dropped by the live object: the open dataset or a part */
    fm_params *params;   /* taken */
    GPtrArray *rois;     /* borrowed (the job copies them); NULL: the whole image */
    fm_backend backend;
    /* The part of a whole run on the open dataset that this computation is (1: all of it; one
     * frame of a stack of N: 1/N), so that a whole run's time says what this one will take. */
    double share;
} fm_live_params_request;

/* FALSE when nothing is to be computed now (page not on show, a value out of range). */
typedef gboolean (*fm_live_params_request_fn)(fm_live_params_request *request, gpointer user);
/* Puts a live result on show (the callee copies what it keeps). */
typedef void (*fm_live_show_fn)(const fm_result *result, gpointer user);

typedef struct {
    guint changes;     /* parameter changes seen */
    guint started;     /* live computations started */
    guint cancelled;   /* of those, cancelled or superseded before their map was shown */
    guint shown;       /* maps put on show */
    guint painted;     /* redraws of the window after a map was put on show */
    guint skipped;     /* computations not started: no fast run of the method on this dataset */
    double compute_ms; /* the last shown map's method time */
    double start_to_result_ms; /* its computation's start to its maps on the main loop */
    double show_ms;            /* putting them on show (views, colours, ranges) */
    double start_to_paint_ms;  /* its computation's start (the debounce over) to the redraw */
    double change_to_paint_ms; /* the last change it answers to, to the redraw (debounce in) */
} fm_live_params_stats;

typedef struct _FmLiveParams FmLiveParams;

/* A live object for the page page_id of win, kept (and freed) by the window. */
FmLiveParams *fm_live_params_new(FmWindow *win, const char *page_id,
                                 fm_live_params_request_fn request, fm_live_show_fn show,
                                 gpointer user);
/* The live object of a page, or NULL. */
FmLiveParams *fm_live_params_of(FmWindow *win, const char *page_id);
/* A parameter changed: recompute after the debounce when the method is fast on this dataset. */
void fm_live_params_changed(FmLiveParams *live);
/* The user's Run, another method: drop the pending and the running live computation. */
void fm_live_params_cancel(FmLiveParams *live);
void fm_live_params_get_stats(FmLiveParams *live, fm_live_params_stats *stats);
/* The time of method's last run on the open dataset, as for the whole of it; < 0 when unknown. */
double fm_live_params_last_ms(FmLiveParams *live, const char *method_id);

G_END_DECLS
