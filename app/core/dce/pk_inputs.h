/* Inputs of the standard pharmacokinetic models: the plasma input (artery or aorta ROI, CSV, or a
 * population curve placed at the bolus arrival), the voxels to fit and their curves. */
#pragma once

#include <glib.h>

#include "app/core/dataset.h"
#include "app/core/dce/dce_aif.h"
#include "app/core/dce/dce_prep.h"

G_BEGIN_DECLS

/* The arterial input's ROI role; the liver model's "aorta" is the same input and is accepted
 * where no ROI has this role. */
#define FM_PK_ROLE_ARTERY "artery"
/* Voxels to fit (a tumour, an organ); without one, a threshold picks the enhancing voxels. */
#define FM_PK_ROLE_TISSUE "tissue"

typedef enum {
    FM_PK_AIF_ROI = 0,  /* mean curve of the artery (or aorta) ROI */
    FM_PK_AIF_CSV,      /* t_s,ca,cp file (dce.dual_input's format): ca is the plasma input */
    FM_PK_AIF_PARKER,   /* population blood curve at the bolus arrival found in the data */
    FM_PK_AIF_GEORGIOU, /* idem */
} fm_pk_aif_kind;

/* "roi", "csv", "parker", "georgiou" (the method's aif parameter) to the kind. */
gboolean fm_pk_aif_parse(const char *text, fm_pk_aif_kind *kind);

/* SPGR's TR and flip angle from the dataset's headers where c has none (0 or auto); *tr_header
 * and *flip_header say which came from there. FALSE with error when the headers give several
 * flip angles (a VFA series, not a DCE one). */
gboolean fm_pk_conversion_headers(const fm_dataset *ds, fm_dce_conversion *c, gboolean *tr_header,
                                  gboolean *flip_header, GError **error);

/* FALSE with FM_ERROR_BAD_PARAM when the input's units cannot be those of the tissue curves:
 * a population curve (mM) beside tissue curves in relative enhancement or HU, which would
 * scale Ktrans, ve, vp and Fp by an unknown factor. The message says what to give instead. */
gboolean fm_pk_inputs_check_units(const fm_dataset *ds, const fm_dce_conversion *conv,
                                  fm_pk_aif_kind kind, GError **error);

typedef struct {
    fm_pk_aif_kind kind;
    const char *csv_path; /* FM_PK_AIF_CSV */
    double hematocrit;    /* blood curves (ROI, population) / (1 - hematocrit) */
    double t10_blood_s;   /* SPGR, ROI input: the blood's T10; <= 0: the map's mean over the
                             ROI when a T10 map is given, else the conversion's t10_s */
    double fit_threshold; /* without a tissue ROI: see fm_pk_fit_voxels */
} fm_pk_input_request;

/* What a fit needs, and what the run's note says about it. */
typedef struct {
    int n_times;
    double *times_s; /* frame times */
    double *cp;      /* plasma input at the frame times (mM for SPGR, CSV and population) */
    gsize n_fit;
    float *tissue;    /* n_fit curves, voxel-major */
    gsize *index;     /* voxel index (z ny nx + y nx + x) of each curve */
    char *input_note; /* "artery ROI (24 voxels, T10 blood 1.44 s)", "Parker population curve
                         at 12.4 s (bolus arrival in the mean of 812 fitted voxels)" */
    char *voxel_note; /* "812 voxels of the tissue ROI", "812 enhancing voxels (...)" */
} fm_pk_inputs;

void fm_pk_inputs_clear(fm_pk_inputs *in);

/* Everything above from a 4-D (or x, y, t) series: conv converts signals (t10_map: nx ny nz T10
 * values in s, or NULL), rois may be NULL. FM_ERROR_BAD_PARAM says what to give when the input
 * is missing: "draw an ROI with the role artery, or give --aif=parker". */
gboolean fm_pk_inputs_prepare(const fm_dataset *ds, GPtrArray *rois, const fm_dce_conversion *conv,
                              const float *t10_map, const fm_pk_input_request *req,
                              fm_pk_inputs *out, GError **error);

G_END_DECLS
