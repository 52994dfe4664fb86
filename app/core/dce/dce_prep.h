/* DCE input preparation: signal to concentration, input curves from ROIs or CSV, fit masks and
 * voxel-major tissue curves for kernels/dce. */
#pragma once

#include <glib.h>

#include "app/core/dataset.h"

G_BEGIN_DECLS

/* Roles of the ROIs the DCE method reads. Several ROIs may share a role (one per slice, see
 * fm_roi.slice): their voxels pool into one volume of interest. */
#define FM_DCE_ROLE_AORTA "aorta"
#define FM_DCE_ROLE_PORTAL_VEIN "portal_vein"
#define FM_DCE_ROLE_LIVER "liver"

/* The roles dce.dual_input needs when no input CSV is given, NULL-terminated (the GUI's
 * checklist: "draw the portal-vein ROI"). */
const char *const *fm_dce_required_roles(void);

typedef enum {
    FM_DCE_CONV_ENHANCEMENT = 0, /* C = S / S0 - 1 (relative enhancement) */
    FM_DCE_CONV_SPGR,            /* spoiled gradient echo: S / S0 -> R1 -> (R1 - R10) / r1 */
    FM_DCE_CONV_CT,              /* C = HU - HU0 */
    FM_DCE_CONV_NONE,            /* the data are concentrations already */
} fm_dce_conversion_kind;

typedef struct {
    fm_dce_conversion_kind kind;
    int baseline_frames; /* S0 (HU0) = mean of the first baseline_frames frames */
    double t10_s;        /* SPGR: precontrast T1 where no map is given */
    double r1_per_mm_s;  /* SPGR: relaxivity r1 in 1/(mM s) */
    double tr_ms;        /* SPGR: repetition time */
    double flip_deg;     /* SPGR: flip angle */
} fm_dce_conversion;

const char *fm_dce_conversion_name(fm_dce_conversion_kind kind); /* "enhancement", "spgr", … */
gboolean fm_dce_conversion_parse(const char *text, fm_dce_conversion_kind *kind);
/* Checks the fields the kind uses against n_times frames; FM_ERROR_BAD_PARAM names the field. */
gboolean fm_dce_conversion_check(const fm_dce_conversion *conv, int n_times, GError **error);

/* Converts one signal curve of n values in place. t10_s: the voxel's T10 (SPGR only). Values
 * that have no concentration (S0 <= 0, or an SPGR signal at or beyond the fully relaxed limit)
 * become NaN. Returns the baseline S0 (HU0) it used. */
double fm_dce_convert_curve(const fm_dce_conversion *conv, double t10_s, double *curve, int n);

/* Geometry of a DCE dataset: x, y, z, t (4-D) or x, y, t (3-D, one slice). Element
 * (x, y, z, t) lies at ((t nz + z) ny + y) nx + x. FM_ERROR_BAD_INPUT for other shapes. */
typedef struct {
    int nx, ny, nz, nt;
} fm_dce_geometry;
gboolean fm_dce_geometry_of(const fm_dataset *ds, fm_dce_geometry *g, GError **error);

/* Frame times in s (g_free): the "frame_times_s" metadata, else index × the t spacing. Errors
 * (FM_ERROR_BAD_INPUT) when they are malformed, the wrong count or not strictly increasing. */
double *fm_dce_frame_times(const fm_dataset *ds, const fm_dce_geometry *g, GError **error);

/* Union voxel mask (nx ny nz bytes) of the ROIs with this role; an ROI with slice -1 covers
 * every slice, one with slice >= nz nothing. NULL when no ROI has the role. *n_voxels (may be
 * NULL) counts the voxels inside. g_free the result. */
guint8 *fm_dce_role_mask(GPtrArray *rois, const char *role, const fm_dce_geometry *g,
                         gsize *n_voxels);

/* Input curves: frame times and Ca, Cp as plasma concentrations. */
typedef struct {
    int n_times;
    double *times_s, *ca, *cp;
} fm_dce_inputs;
void fm_dce_inputs_clear(fm_dce_inputs *in);

/* Mean signal over the aorta and portal_vein VOIs, converted (T10: mean of t10_map over the VOI
 * when given, else conv->t10_s), divided by (1 - hematocrit) when hematocrit > 0 (blood to
 * plasma). A missing or empty role is FM_ERROR_BAD_PARAM saying what to draw: "draw the
 * portal-vein ROI (role portal_vein)". t10_map: nx ny nz values in s, or NULL. */
gboolean fm_dce_inputs_from_rois(const fm_dataset *ds, GPtrArray *rois,
                                 const fm_dce_conversion *conv, const float *t10_map,
                                 double hematocrit, fm_dce_inputs *out, GError **error);

/* CSV "t_s,ca,cp" with a header line; '#' comments and blank lines skipped. Times must be
 * strictly increasing; errors name the file and the line. */
gboolean fm_dce_inputs_load_csv(const char *path, fm_dce_inputs *out, GError **error);
gboolean fm_dce_inputs_save_csv(const char *path, const fm_dce_inputs *in, GError **error);

/* Voxels to fit (nx ny nz bytes): the liver VOI when an ROI has role "liver"; otherwise, stated
 * plainly, every voxel whose baseline signal is at least threshold × the largest baseline in the
 * volume (enhancement and SPGR only: this drops air, whose S/S0 is noise over noise) and whose
 * peak concentration is at least threshold × the peak of ca. *n_voxels counts them. */
guint8 *fm_dce_fit_mask(const fm_dataset *ds, GPtrArray *rois, const fm_dce_conversion *conv,
                        const float *t10_map, const double *ca, double threshold, gsize *n_voxels,
                        GError **error);

/* Concentration curves of the masked voxels, voxel-major (curve v at [v nt, (v + 1) nt)), in
 * x-fastest voxel order; *index (g_free) receives each curve's voxel index z ny nx + y nx + x.
 * g_free the result. */
float *fm_dce_tissue_curves(const fm_dataset *ds, const guint8 *mask, gsize n_voxels,
                            const fm_dce_conversion *conv, const float *t10_map, gsize **index);

G_END_DECLS
