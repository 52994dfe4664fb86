/* NIfTI-1 / NIfTI-2 reading into float32 x,y,z,t datasets and float map writing (nifticlib). */
#include "nifti.h"
#include "nifti_private.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/fm_dce_io_config.h"

char *fm_nifti_sidecar_path(const char *path)
{
    g_autofree char *lower = g_ascii_strdown(path, -1);
    gsize len = strlen(path);
    static const char *const exts[] = {".nii.gz", ".nii", ".hdr.gz", ".hdr", ".img.gz", ".img"};
    for (gsize i = 0; i < G_N_ELEMENTS(exts); i++) {
        if (g_str_has_suffix(lower, exts[i])) {
            g_autofree char *base = g_strndup(path, len - strlen(exts[i]));
            return g_strconcat(base, ".json", NULL);
        }
    }
    return g_strconcat(path, ".json", NULL);
}

#if FM_HAVE_NIFTI

#include <json-glib/json-glib.h>
#include <nifti/nifti2_io.h>

static void quiet_library(void)
{
    static gsize done = 0;
    if (g_once_init_enter(&done)) {
        nifti_set_debug_level(0); /* our GError says what went wrong; no stderr chatter */
        g_once_init_leave(&done, 1);
    }
}

/* Seconds per unit of the header's time field; 0 when it is not a time (Hz, ppm, unknown). */
static double seconds_per_time_unit(int unit)
{
    switch (unit) {
    case NIFTI_UNITS_MSEC:
        return 1e-3;
    case NIFTI_UNITS_USEC:
        return 1e-6;
    case NIFTI_UNITS_SEC:
    case NIFTI_UNITS_UNKNOWN: /* many writers leave it unset and mean seconds */
        return 1.0;
    default:
        return 0.0;
    }
}

static double mm_per_space_unit(int unit)
{
    switch (unit) {
    case NIFTI_UNITS_METER:
        return 1e3;
    case NIFTI_UNITS_MICRON:
        return 1e-3;
    default:
        return 1.0;
    }
}

/* Reads "FrameTimes" from a BIDS-like sidecar. Returns 0 when there is no sidecar or it has
 * no FrameTimes, 1 when times were read, -1 on an error (set). */
static int read_sidecar(const char *path, int nt, double *times, GError **error)
{
    g_autofree char *bids = fm_nifti_sidecar_path(path);
    g_autofree char *plain = g_strconcat(path, ".json", NULL);
    const char *sidecar = g_file_test(bids, G_FILE_TEST_IS_REGULAR)    ? bids
                          : g_file_test(plain, G_FILE_TEST_IS_REGULAR) ? plain
                                                                       : NULL;
    if (sidecar == NULL)
        return 0;
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) local = NULL;
    if (!json_parser_load_from_file(parser, sidecar, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: unreadable JSON sidecar: %s"),
                    sidecar, local->message);
        return -1;
    }
    JsonNode *root = json_parser_get_root(parser);
    if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root))
        return 0;
    JsonObject *obj = json_node_get_object(root);
    if (!json_object_has_member(obj, "FrameTimes"))
        return 0;
    JsonNode *node = json_object_get_member(obj, "FrameTimes");
    if (!JSON_NODE_HOLDS_ARRAY(node)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: FrameTimes must be an array of seconds"), sidecar);
        return -1;
    }
    JsonArray *arr = json_node_get_array(node);
    guint n = json_array_get_length(arr);
    if ((int)n != nt) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: FrameTimes has %u values but the image has %d frames"), sidecar, n, nt);
        return -1;
    }
    for (guint i = 0; i < n; i++) {
        JsonNode *e = json_array_get_element(arr, i);
        if (!JSON_NODE_HOLDS_VALUE(e) || (json_node_get_value_type(e) != G_TYPE_DOUBLE &&
                                          json_node_get_value_type(e) != G_TYPE_INT64)) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: FrameTimes[%u] is not a number"), sidecar, i);
            return -1;
        }
        times[i] = json_node_get_double(e);
        if (i > 0 && !(times[i] > times[i - 1])) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: non-monotonic FrameTimes: frame %u at %g s follows %g s"), sidecar,
                        i, times[i], times[i - 1]);
            return -1;
        }
    }
    return 1;
}

/* Converts one voxel of any supported type to double before scaling. */
static double voxel_value(const nifti_image *nim, gsize i)
{
    switch (nim->datatype) {
    case DT_UINT8:
        return ((const guint8 *)nim->data)[i];
    case DT_INT8:
        return ((const gint8 *)nim->data)[i];
    case DT_INT16:
        return ((const gint16 *)nim->data)[i];
    case DT_UINT16:
        return ((const guint16 *)nim->data)[i];
    case DT_INT32:
        return ((const gint32 *)nim->data)[i];
    case DT_UINT32:
        return ((const guint32 *)nim->data)[i];
    case DT_FLOAT32:
        return ((const float *)nim->data)[i];
    case DT_FLOAT64:
        return ((const double *)nim->data)[i];
    default:
        return NAN;
    }
}

static gboolean supported_type(int datatype)
{
    return datatype == DT_UINT8 || datatype == DT_INT8 || datatype == DT_INT16 ||
           datatype == DT_UINT16 || datatype == DT_INT32 || datatype == DT_UINT32 ||
           datatype == DT_FLOAT32 || datatype == DT_FLOAT64;
}

/* For single uncompressed files the size check gives a precise message; nifticlib only says
 * that loading failed. */
static gboolean check_file_size(const char *path, const nifti_image *nim, GError **error)
{
    g_autofree char *lower = g_ascii_strdown(nim->iname ? nim->iname : path, -1);
    if (g_str_has_suffix(lower, ".gz"))
        return TRUE;
    GStatBuf st;
    if (g_stat(nim->iname ? nim->iname : path, &st) != 0)
        return TRUE; /* nifti_image_load will report it */
    gint64 need = (gint64)nim->iname_offset + (gint64)nim->nvox * nim->nbyper;
    if ((gint64)st.st_size < need) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: truncated voxel data: the header declares %" G_GINT64_FORMAT
                      " bytes of voxels at offset %" G_GINT64_FORMAT
                      ", the file holds %" G_GINT64_FORMAT " bytes"),
                    path, (gint64)nim->nvox * nim->nbyper, (gint64)nim->iname_offset,
                    (gint64)st.st_size);
        return FALSE;
    }
    return TRUE;
}

/* A damaged header can declare more voxels than 64 bits count or memory holds; before anything
 * is allocated, the voxels must fit the file: byte for byte, or at deflate's largest ratio
 * (about 1032:1) for a .gz. */
static gboolean check_voxel_count(const char *path, const nifti_image *nim, const gint64 *n,
                                  GError **error)
{
    GStatBuf st;
    if (g_stat(path, &st) != 0)
        return TRUE; /* nifti_image_load will report it */
    g_autofree char *lower = g_ascii_strdown(nim->iname ? nim->iname : path, -1);
    guint64 room = (guint64)st.st_size * (g_str_has_suffix(lower, ".gz") ? 1032 : 1);
    guint64 voxels = 1, bytes = 0;
    gboolean fits = TRUE;
    for (int d = 1; d <= 4; d++)
        fits = fits && g_uint64_checked_mul(&voxels, voxels, (guint64)n[d]);
    fits = fits && g_uint64_checked_mul(&bytes, voxels, (guint64)MAX(nim->nbyper, 1)) &&
           bytes <= room && voxels <= G_MAXSIZE / sizeof(float);
    if (!fits) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: the header declares %lld x %lld x %lld x %lld voxels of %d bytes, more "
                      "than the file's %lld bytes can hold"),
                    path, (long long)n[1], (long long)n[2], (long long)n[3], (long long)n[4],
                    nim->nbyper, (long long)st.st_size);
        return FALSE;
    }
    return TRUE;
}

/* Loads the voxels into the dataset's float buffer and converts them there: types of at most 4
 * bytes are read into its tail and widened forward in place (value i, at byte tail + i*size, is
 * read before float i, at byte 4i, can reach it), so the file's voxels are never held twice.
 * float64 and compressed files use nifticlib's own buffer. nim->data is left NULL. */
static gboolean load_into(nifti_image *nim, fm_dataset *ds)
{
    const gsize n = fm_dataset_n_elements(ds), size = (gsize)nim->nbyper;
    /* nifticlib frees the buffer it reads into when the read comes up short: ours would be freed
     * twice (or, at an offset, not be a heap block at all). Only a compressed file can come up
     * short here (check_file_size vouches for the others), so it reads into nifticlib's own. */
    g_autofree char *lower = g_ascii_strdown(nim->iname ? nim->iname : "", -1);
    const gboolean in_place = size <= sizeof(float) && !g_str_has_suffix(lower, ".gz");
    nim->data = in_place ? (guint8 *)ds->data + (sizeof(float) - size) * n : NULL;
    if (nifti_image_load(nim) != 0 || nim->data == NULL) {
        if (in_place)
            nim->data = NULL; /* ours, not nifticlib's to free */
        return FALSE;
    }
    float *dst = ds->data;
    /* Slope 0 means "no scaling" in the NIfTI standard (section on scl_slope). */
    gboolean scaled = isfinite(nim->scl_slope) && nim->scl_slope != 0.0;
    double slope = scaled ? nim->scl_slope : 1.0;
    double inter = scaled && isfinite(nim->scl_inter) ? nim->scl_inter : 0.0;
    /* Unscaled float32 read in place is already the dataset: no pass over 800 MB to copy it
     * onto itself (it kept a DCE volume's read a second longer). */
    const gboolean as_is = in_place && nim->datatype == DT_FLOAT32 && slope == 1.0 && inter == 0.0;
    for (gsize i = 0; i < n && !as_is; i++) /* in order: see above */
        dst[i] = (float)(voxel_value(nim, i) * slope + inter);
    if (in_place)
        nim->data = NULL;
    else
        nifti_image_unload(nim);
    return TRUE;
}

/* Checks the header, loads the voxels and converts them; nim stays owned by the caller. */
static fm_dataset *convert_image(const char *path, nifti_image *nim, GError **error)
{
    /* Dims past ndim may hold 0 or garbage; they count as 1. */
    gint64 n[8];
    for (int d = 1; d < 8; d++)
        n[d] = d <= nim->ndim ? nim->dim[d] : 1;
    gint64 extra = n[5] * n[6] * n[7];
    if (nim->ndim < 1 || nim->ndim > 7 || extra != 1 || n[1] < 1 || n[2] < 1 || n[3] < 1 ||
        n[4] < 1) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: dims %lld x %lld x %lld x %lld x %lld: expected x, y, z and time "
                      "only"),
                    path, (long long)n[1], (long long)n[2], (long long)n[3], (long long)n[4],
                    (long long)extra);
        return NULL;
    }
    if (!supported_type(nim->datatype)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: voxel type %s is not supported (u8, i8, i16, u16, i32, u32, f32, "
                      "f64 are)"),
                    path, nifti_datatype_string(nim->datatype));
        return NULL;
    }
    if (!check_voxel_count(path, nim, n, error) || !check_file_size(path, nim, error))
        return NULL;

    int nt = (int)n[4];
    g_autofree double *times = g_new(double, nt);
    int got = read_sidecar(path, nt, times, error);
    if (got < 0)
        return NULL;
    double sec = seconds_per_time_unit(nim->time_units);
    double dt = nim->dt * sec;
    if (got == 0) {
        if (nt > 1 && !(dt > 0.0)) {
            g_autofree char *sidecar = fm_nifti_sidecar_path(path);
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: %d frames but no frame interval (pixdim[4] = %g, time unit code "
                          "%d) and no sidecar %s with FrameTimes"),
                        path, nt, nim->dt, nim->time_units, sidecar);
            return NULL;
        }
        for (int i = 0; i < nt; i++)
            times[i] = nim->toffset * sec + i * dt;
    }

    gsize sizes[4] = {(gsize)n[1], (gsize)n[2], (gsize)n[3], (gsize)n[4]};
    static const char *const names[4] = {"x", "y", "z", "t"};
    g_autoptr(fm_dataset) ds = fm_dataset_new(FM_PIXEL_F32, 4, sizes, names);
    if (!load_into(nim, ds)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: truncated or unreadable voxel data"), path);
        return NULL;
    }

    double mm = mm_per_space_unit(nim->xyz_units);
    double dxyz[3] = {fabs(nim->dx) * mm, fabs(nim->dy) * mm, fabs(nim->dz) * mm};
    for (int d = 0; d < 3; d++) {
        ds->dims[d].spacing = dxyz[d] > 0 ? dxyz[d] : 1.0;
        ds->dims[d].unit = g_strdup("mm");
    }
    ds->dims[3].unit = g_strdup("s");
    fm_dataset_set_frame_times(ds, times, nt);

    double affine[16] = {0};
    const nifti_dmat44 *m = nim->sform_code > 0   ? &nim->sto_xyz
                            : nim->qform_code > 0 ? &nim->qto_xyz
                                                  : NULL;
    if (m != NULL) {
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++)
                affine[r * 4 + c] = m->m[r][c] * (r < 3 ? mm : 1.0);
    } else {
        for (int d = 0; d < 3; d++)
            affine[d * 5] = ds->dims[d].spacing;
        affine[15] = 1.0;
    }
    fm_dataset_set_affine(ds, affine);
    /* nim->nifti_type says how the file was stored, not which header it had: ask again. */
    int version = 1;
    void *hdr = nifti_read_header(path, &version, 0);
    free(hdr);
    fm_dataset_set_meta(ds, "nifti_version", version == 2 ? "2" : "1");
    fm_dataset_set_meta(ds, "format", "nifti");
    fm_dataset_set_meta(ds, "format_variant", version == 2 ? "NIfTI-2" : "NIfTI-1");
    if (nim->descrip[0] != '\0')
        fm_dataset_set_meta(ds, "nifti_descrip", nim->descrip);
    ds->source_path = g_canonicalize_filename(path, NULL);
    return g_steal_pointer(&ds);
}

fm_dataset *fm_nifti_read(const char *path, GError **error)
{
    quiet_library();
    if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot open: %s"), path,
                    g_strerror(ENOENT));
        return NULL;
    }
    nifti_image *nim = nifti_image_read(path, 0);
    if (nim == NULL) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: not a NIfTI-1/NIfTI-2 file (unreadable or damaged header)"), path);
        return NULL;
    }
    fm_dataset *ds = convert_image(path, nim, error);
    nifti_image_free(nim);
    return ds;
}

static gboolean write_sidecar(const char *path, const double *times, int nt, GError **error)
{
    g_autofree char *sidecar = fm_nifti_sidecar_path(path);
    g_autofree char *list = fm_format_number_list(times, nt);
    g_autofree char *text = g_strdup_printf("{\n  \"FrameTimes\": [%s]\n}\n", list);
    g_autoptr(GError) local = NULL;
    if (!g_file_set_contents(sidecar, text, -1, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write: %s"), sidecar,
                    local->message);
        return FALSE;
    }
    return TRUE;
}

void fm_nifti_set_affine(nifti_image *nim, const double a[16])
{
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
            nim->sto_xyz.m[r][c] = a[r * 4 + c];
    nim->sform_code = NIFTI_XFORM_SCANNER_ANAT;
    nim->sto_ijk = nifti_dmat44_inverse(nim->sto_xyz);
    /* The qform is the sform's rotation part (nifticlib orthogonalises it) for readers that
     * ignore the sform; voxel sizes are the column lengths of the affine. */
    double qfac = 1.0;
    nifti_dmat44_to_quatern(nim->sto_xyz, &nim->quatern_b, &nim->quatern_c, &nim->quatern_d,
                            &nim->qoffset_x, &nim->qoffset_y, &nim->qoffset_z, NULL, NULL, NULL,
                            &qfac);
    nim->qfac = qfac;
    nim->qform_code = NIFTI_XFORM_SCANNER_ANAT;
    double *d[3] = {&nim->dx, &nim->dy, &nim->dz};
    for (int c = 0; c < 3; c++) {
        double len = sqrt(a[c] * a[c] + a[4 + c] * a[4 + c] + a[8 + c] * a[8 + c]);
        *d[c] = len > 0 ? len : 1.0;
        nim->pixdim[c + 1] = *d[c];
    }
    nim->qto_xyz = nifti_quatern_to_dmat44(nim->quatern_b, nim->quatern_c, nim->quatern_d,
                                           nim->qoffset_x, nim->qoffset_y, nim->qoffset_z, nim->dx,
                                           nim->dy, nim->dz, nim->qfac);
    nim->qto_ijk = nifti_dmat44_inverse(nim->qto_xyz);
    nim->xyz_units = NIFTI_UNITS_MM;
}

gboolean fm_nifti_set_output_path(nifti_image *nim, const char *path, GError **error)
{
    nim->nifti_type = NIFTI_FTYPE_NIFTI1_1;
    if (nifti_set_filenames(nim, path, 0, 1) != 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: a NIfTI file name must end in .nii or .nii.gz"), path);
        return FALSE;
    }
    g_remove(path);
    return TRUE;
}

gboolean fm_nifti_write(const char *path, const float *voxels, int nx, int ny, int nz, int nt,
                        const char *affine, const double *frame_times, int nifti_version,
                        GError **error)
{
    quiet_library();
    g_return_val_if_fail(nx > 0 && ny > 0 && nz > 0, FALSE);
    nt = MAX(nt, 1);
    double a[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    if (affine != NULL) {
        int count = 0;
        g_autofree double *parsed = fm_parse_number_list(affine, &count);
        if (parsed == NULL || count != 16) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                        _("%s: the affine must be 16 comma-separated numbers"), path);
            return FALSE;
        }
        memcpy(a, parsed, sizeof a);
    }
    int64_t dims[8] = {nt > 1 ? 4 : 3, nx, ny, nz, nt, 1, 1, 1};
    nifti_image *nim = nifti_make_new_nim(dims, DT_FLOAT32, 0);
    if (nim == NULL) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: nifticlib cannot make an image"), path);
        return FALSE;
    }
    gsize n = (gsize)nx * ny * nz * nt;
    nim->data = malloc(n * sizeof(float)); /* nifti_image_free() releases it with free() */
    memcpy(nim->data, voxels, n * sizeof(float));
    nim->time_units = NIFTI_UNITS_SEC;
    fm_nifti_set_affine(nim, a);
    gboolean uneven = FALSE;
    if (frame_times != NULL && nt > 1) {
        double step = (frame_times[nt - 1] - frame_times[0]) / (nt - 1);
        nim->dt = nim->pixdim[4] = step;
        nim->toffset = frame_times[0];
        /* pixdim[4] holds one step; anything the step does not reproduce to a part in 1e9
         * needs the sidecar. */
        for (int i = 0; i < nt; i++)
            if (fabs(frame_times[0] + i * step - frame_times[i]) > 1e-9 * MAX(fabs(step), 1e-12))
                uneven = TRUE;
    } else {
        nim->dt = nim->pixdim[4] = 1.0;
    }
    g_strlcpy(nim->descrip, "Fluxmap", sizeof nim->descrip);
    if (!fm_nifti_set_output_path(nim, path, error)) {
        nifti_image_free(nim);
        return FALSE;
    }
    if (nifti_version == 2) {
        /* nifticlib 2.1's nifti_image_write() leaves out the NIfTI-2 header of single files
         * (vox_offset stays 0), so that header is written here: 540 bytes, a 4-byte empty
         * extension flag, then the voxels at 544. */
        nifti_2_header hdr;
        nifti_convert_nim2n2hdr(nim, &hdr);
        hdr.vox_offset = 544;
        memcpy(hdr.magic, "n+2\0\r\n\032\n", 8);
        const char extender[4] = {0, 0, 0, 0};
        g_autofree char *lower = g_ascii_strdown(path, -1);
        znzFile zf = znzopen(path, "wb", g_str_has_suffix(lower, ".gz"));
        gboolean ok = !znz_isnull(zf) && znzwrite(&hdr, sizeof hdr, 1, zf) == 1 &&
                      znzwrite(extender, 4, 1, zf) == 1 &&
                      znzwrite(nim->data, sizeof(float), n, zf) == n;
        if (!znz_isnull(zf))
            znzclose(zf);
        nifti_image_free(nim);
        if (!ok) {
            g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write the NIfTI file"), path);
            return FALSE;
        }
    } else {
        nifti_image_write(nim);
        nifti_image_free(nim);
    }
    GStatBuf st;
    /* A written .nii holds at least its 348-byte header; a .nii.gz of mostly-NaN maps
     * compresses below that, so only its existence can be checked. */
    gboolean gz = g_str_has_suffix(path, ".gz");
    if (g_stat(path, &st) != 0 || (!gz && st.st_size < 348) || st.st_size == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write the NIfTI file"), path);
        return FALSE;
    }
    if (uneven)
        return write_sidecar(path, frame_times, nt, error);
    return TRUE;
}

gboolean fm_nifti_write_dataset(const char *path, const fm_dataset *ds, int nifti_version,
                                GError **error)
{
    int nx = (int)ds->dims[0].size;
    int ny = ds->n_dims > 1 ? (int)ds->dims[1].size : 1;
    int nz = ds->n_dims > 2 ? (int)ds->dims[2].size : 1;
    int nt = ds->n_dims > 3 ? (int)ds->dims[3].size : 1;
    gsize n = fm_dataset_n_elements(ds);
    g_autofree float *buf = NULL;
    const float *voxels = ds->data;
    if (ds->type != FM_PIXEL_F32) {
        buf = g_new(float, n);
        for (gsize i = 0; i < n; i++)
            buf[i] = (float)fm_dataset_value(ds, i);
        voxels = buf;
    }
    double affine[16];
    fm_dataset_get_affine(ds, affine);
    g_autofree char *affine_text = fm_format_number_list(affine, 16);
    g_autofree double *times = NULL;
    int n_times = 0;
    if (nt > 1 && !fm_dataset_get_frame_times(ds, &times, &n_times))
        g_clear_pointer(&times, g_free);
    return fm_nifti_write(path, voxels, nx, ny, nz, nt, affine_text, times, nifti_version, error);
}

#else /* !FM_HAVE_NIFTI */

fm_dataset *fm_nifti_read(const char *path, GError **error)
{
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                _("%s: this Fluxmap was built without nifticlib; NIfTI files cannot be read"),
                path);
    return NULL;
}

gboolean fm_nifti_write(const char *path, const float *voxels, int nx, int ny, int nz, int nt,
                        const char *affine, const double *frame_times, int nifti_version,
                        GError **error)
{
    g_set_error(error, FM_ERROR, FM_ERROR_IO,
                _("%s: this Fluxmap was built without nifticlib; NIfTI files cannot be written"),
                path);
    return FALSE;
}

gboolean fm_nifti_write_dataset(const char *path, const fm_dataset *ds, int nifti_version,
                                GError **error)
{
    return fm_nifti_write(path, NULL, 1, 1, 1, 1, NULL, NULL, nifti_version, error);
}

#endif
