/* fm_dataset: a typed n-dimensional array with named dims, physical units and metadata. */
#pragma once

#include <glib.h>
#include "kernels/fm_kernel.h"

G_BEGIN_DECLS

#define FM_DATASET_MAX_DIMS 4

typedef struct {
    char *name; /* "x", "y", "t", "z" */
    char *unit; /* "px", "ns", "s", "frame" (may be NULL) */
    gsize size;
    double spacing; /* physical step per index, 1.0 when unknown */
} fm_dim;

typedef struct {
    gint ref_count;
    fm_pixel_type type;
    int n_dims; /* dims[0] varies fastest: x, then y, then frames */
    fm_dim dims[FM_DATASET_MAX_DIMS];
    void *data;           /* tightly packed, owned */
    int bits_per_sample;  /* as stored in the file (12 for 12-bit data in uint16) */
    char *source_path;    /* absolute path of the file it was read from, or NULL */
    char *sha256;         /* hex digest of the file, or NULL */
    GHashTable *metadata; /* string -> string: acquisition parameters */
    /* What methods derive from the samples alone (FLIM photon sums, say), kept for the next run
     * on the open dataset: key -> GBytes, guarded by derived_lock, cleared on a change. */
    GMutex derived_lock;
    GHashTable *derived;
} fm_dataset;

/* Allocates a zeroed dataset of the given type and sizes; names are "x","y","t","z"... */
fm_dataset *fm_dataset_new(fm_pixel_type type, int n_dims, const gsize *sizes,
                           const char *const *names);
fm_dataset *fm_dataset_ref(fm_dataset *ds);
void fm_dataset_unref(fm_dataset *ds);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fm_dataset, fm_dataset_unref)

gsize fm_dataset_n_elements(const fm_dataset *ds);
gsize fm_dataset_n_bytes(const fm_dataset *ds);
/* For image stacks: width = dims[0], height = dims[1], frames = product of the rest. */
int fm_dataset_width(const fm_dataset *ds);
int fm_dataset_height(const fm_dataset *ds);
int fm_dataset_frames(const fm_dataset *ds);
/* Pointer to frame f of an image stack. */
const void *fm_dataset_frame(const fm_dataset *ds, int f);
/* Value of one element as double, whatever the type. */
double fm_dataset_value(const fm_dataset *ds, gsize index);
void fm_dataset_set_meta(fm_dataset *ds, const char *key, const char *value);
const char *fm_dataset_get_meta(const fm_dataset *ds, const char *key);
/* Call after writing into ds->data in place: a device copy kept from an earlier run and every
 * derived value are dropped. */
void fm_dataset_changed(fm_dataset *ds);
/* A value derived from the samples by a pure function named by key, or NULL (a new ref). */
GBytes *fm_dataset_derived_lookup(fm_dataset *ds, const char *key);
/* Keeps bytes under key for later runs (takes a ref); thread-safe. */
void fm_dataset_derived_store(fm_dataset *ds, const char *key, GBytes *bytes);
/* Computes ds->sha256 from the file at ds->source_path. */
gboolean fm_dataset_hash_file(fm_dataset *ds, GError **error);

G_END_DECLS
