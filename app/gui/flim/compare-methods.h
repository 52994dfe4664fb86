/* FmCompareMethods: runs several FLIM methods on one dataset as jobs and shows their lifetime
 * maps side by side on one colour range and the main view's lifetime scale, with run times,
 * backends, the parameters each used and (on simulated data with FILE.truth.json beside it) bias
 * and precision against the truth. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/catalogue.h"
#include "app/core/dataset.h"
#include "app/core/method.h"

G_BEGIN_DECLS

#define FM_TYPE_COMPARE_METHODS (fm_compare_methods_get_type())
G_DECLARE_FINAL_TYPE(FmCompareMethods, fm_compare_methods, FM, COMPARE_METHODS, GtkWindow)

/* Parameters of a method from the caller's form (keys it lacks keep their defaults). */
typedef fm_params *(*FmCompareParamsFn)(gpointer form_owner, const fm_method *method,
                                        GError **error);

/* dataset is referenced; catalogue (may be NULL) must outlive the window's jobs; rois (copied by
 * the jobs, may be NULL) restricts every run to the drawn ROIs. */
FmCompareMethods *fm_compare_methods_new(GtkWindow *parent, fm_dataset *dataset,
                                         fm_catalogue *catalogue, FmCompareParamsFn params_fn,
                                         gpointer form_owner, fm_backend backend, GPtrArray *rois);
/* Ticks exactly these methods (NULL-terminated ids) and starts them; FALSE when one is unknown. */
gboolean fm_compare_methods_run(FmCompareMethods *cm, const char *const *method_ids);
int fm_compare_methods_running(FmCompareMethods *cm);
/* Finished runs of the last start, in the order started: result (NULL when it failed) of i. */
int fm_compare_methods_n_results(FmCompareMethods *cm);
const fm_result *fm_compare_methods_get_result(FmCompareMethods *cm, int i);
/* The map view of card i (NULL while it has no lifetime map) and the texts of card i (title,
 * times, statistics, the parameters it used and where they differ from the main map). */
GtkWidget *fm_compare_methods_get_map_view(FmCompareMethods *cm, int i);
const char *fm_compare_methods_get_card_text(FmCompareMethods *cm, int i);
/* Truth per pixel was found beside the dataset. */
gboolean fm_compare_methods_has_truth(FmCompareMethods *cm);
/* Relative bias and precision (sd of the relative error) of result i against truth; FALSE when
 * there is no truth or no fitted pixel. */
gboolean fm_compare_methods_get_accuracy(FmCompareMethods *cm, int i, double *bias,
                                         double *precision);

G_END_DECLS
