/* fm_dataset: allocation, reference counting, element access, metadata and file hashing. */
#include "dataset.h"

#include "kernels/resident.h"

#include <glib/gi18n.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "fm_config.h"
#if FM_HAVE_LIBCRYPTO
#include <openssl/evp.h>
#endif

static const char *const default_names[FM_DATASET_MAX_DIMS] = {"x", "y", "t", "z"};

fm_dataset *fm_dataset_new(fm_pixel_type type, int n_dims, const gsize *sizes,
                           const char *const *names)
{
    g_return_val_if_fail(n_dims >= 1 && n_dims <= FM_DATASET_MAX_DIMS, NULL);
    fm_dataset *ds = g_new0(fm_dataset, 1);
    ds->ref_count = 1;
    ds->type = type;
    ds->n_dims = n_dims;
    for (int i = 0; i < n_dims; i++) {
        ds->dims[i].name = g_strdup(names && names[i] ? names[i] : default_names[i]);
        ds->dims[i].unit = NULL;
        ds->dims[i].size = sizes[i];
        ds->dims[i].spacing = 1.0;
    }
    ds->bits_per_sample = (int)(fm_pixel_size(type) * 8);
    ds->data = g_malloc0(MAX(fm_dataset_n_bytes(ds), 1));
    ds->metadata = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    g_mutex_init(&ds->derived_lock);
    ds->derived =
        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_bytes_unref);
    return ds;
}

fm_dataset *fm_dataset_ref(fm_dataset *ds)
{
    g_return_val_if_fail(ds != NULL, NULL);
    g_atomic_int_inc(&ds->ref_count);
    return ds;
}

void fm_dataset_unref(fm_dataset *ds)
{
    if (ds == NULL || !g_atomic_int_dec_and_test(&ds->ref_count))
        return;
    for (int i = 0; i < ds->n_dims; i++) {
        g_free(ds->dims[i].name);
        g_free(ds->dims[i].unit);
    }
    fm_resident_forget(ds->data); /* its device copy, if a run left one */
    g_free(ds->data);
    g_free(ds->source_path);
    g_free(ds->sha256);
    g_hash_table_unref(ds->metadata);
    g_hash_table_unref(ds->derived);
    g_mutex_clear(&ds->derived_lock);
    g_free(ds);
}

gsize fm_dataset_n_elements(const fm_dataset *ds)
{
    gsize n = 1;
    for (int i = 0; i < ds->n_dims; i++)
        n *= ds->dims[i].size;
    return n;
}

gsize fm_dataset_n_bytes(const fm_dataset *ds)
{
    return fm_dataset_n_elements(ds) * fm_pixel_size(ds->type);
}

int fm_dataset_width(const fm_dataset *ds)
{
    return (int)ds->dims[0].size;
}

int fm_dataset_height(const fm_dataset *ds)
{
    return ds->n_dims >= 2 ? (int)ds->dims[1].size : 1;
}

int fm_dataset_frames(const fm_dataset *ds)
{
    gsize n = 1;
    for (int i = 2; i < ds->n_dims; i++)
        n *= ds->dims[i].size;
    return (int)n;
}

const void *fm_dataset_frame(const fm_dataset *ds, int f)
{
    gsize frame_bytes =
        (gsize)fm_dataset_width(ds) * (gsize)fm_dataset_height(ds) * fm_pixel_size(ds->type);
    return (const guint8 *)ds->data + frame_bytes * (gsize)f;
}

double fm_dataset_value(const fm_dataset *ds, gsize index)
{
    switch (ds->type) {
    case FM_PIXEL_U8:
        return ((const guint8 *)ds->data)[index];
    case FM_PIXEL_U16:
        return ((const guint16 *)ds->data)[index];
    case FM_PIXEL_F32:
        return ((const float *)ds->data)[index];
    }
    return NAN;
}

void fm_dataset_set_meta(fm_dataset *ds, const char *key, const char *value)
{
    if (value == NULL)
        g_hash_table_remove(ds->metadata, key);
    else
        g_hash_table_replace(ds->metadata, g_strdup(key), g_strdup(value));
}

const char *fm_dataset_get_meta(const fm_dataset *ds, const char *key)
{
    return g_hash_table_lookup(ds->metadata, key);
}

gboolean fm_dataset_hash_file(fm_dataset *ds, GError **error)
{
    if (ds->source_path == NULL) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("dataset has no source file to hash"));
        return FALSE;
    }
    FILE *f = fopen(ds->source_path, "rb");
    if (f == NULL) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot open: %s"), ds->source_path,
                    g_strerror(errno));
        return FALSE;
    }
    /* The hash runs beside every read: OpenSSL's SHA-256 (SHA-NI where the CPU has it) is about
     * three times GLib's, so it no longer sets the pace of reading a file. */
    const size_t buf_size = (size_t)1 << 20;
    g_autofree guchar *buf = g_malloc(buf_size);
    size_t n;
#if FM_HAVE_LIBCRYPTO
    EVP_MD_CTX *sum = EVP_MD_CTX_new();
    gboolean failed = sum == NULL || EVP_DigestInit_ex(sum, EVP_sha256(), NULL) != 1;
    while (!failed && (n = fread(buf, 1, buf_size, f)) > 0)
        failed = EVP_DigestUpdate(sum, buf, n) != 1;
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_len = 0;
    failed = failed || ferror(f) != 0 || EVP_DigestFinal_ex(sum, digest, &digest_len) != 1;
    EVP_MD_CTX_free(sum);
    fclose(f);
    char hex[2 * EVP_MAX_MD_SIZE + 1];
    for (unsigned int i = 0; i < digest_len; i++)
        g_snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    hex[2 * digest_len] = '\0';
#else
    g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
    while ((n = fread(buf, 1, buf_size, f)) > 0)
        g_checksum_update(sum, buf, (gssize)n);
    gboolean failed = ferror(f) != 0;
    fclose(f);
    const char *hex = g_checksum_get_string(sum);
#endif
    if (failed) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: read error while hashing"),
                    ds->source_path);
        return FALSE;
    }
    g_free(ds->sha256);
    ds->sha256 = g_strdup(hex);
    return TRUE;
}

void fm_dataset_changed(fm_dataset *ds)
{
    fm_resident_forget(ds->data);
    g_mutex_lock(&ds->derived_lock);
    g_hash_table_remove_all(ds->derived);
    g_mutex_unlock(&ds->derived_lock);
}

GBytes *fm_dataset_derived_lookup(fm_dataset *ds, const char *key)
{
    g_mutex_lock(&ds->derived_lock);
    GBytes *bytes = g_hash_table_lookup(ds->derived, key);
    if (bytes)
        g_bytes_ref(bytes);
    g_mutex_unlock(&ds->derived_lock);
    return bytes;
}

void fm_dataset_derived_store(fm_dataset *ds, const char *key, GBytes *bytes)
{
    g_mutex_lock(&ds->derived_lock);
    g_hash_table_replace(ds->derived, g_strdup(key), g_bytes_ref(bytes));
    g_mutex_unlock(&ds->derived_lock);
}
