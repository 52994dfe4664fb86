/* PicoQuant .ptu reader: the tag header, read into the layout the T3 histogram needs. */
#include "ptu.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/flim_bytes.h"
#include "app/core/io/map_input.h"
#include "app/core/io/format_info.h"
#include "app/core/io/tttr.h"

#define PTU_TAG_LEN 48      /* Ident[32], Idx i32, Typ u32, Value 8 bytes */
#define PTU_PREAMBLE_LEN 16 /* "PQTTTR\0\0" and an 8-byte version string */

typedef struct {
    guint32 type;
    guint64 raw; /* the 8-byte value field: integer, double bits, or a length */
} ptu_tag;

typedef struct {
    const char *path;
    const guint8 *bytes;
    gsize len;
    GHashTable *tags; /* "Ident" or "Ident(idx)" -> ptu_tag */
    gsize records_at;
} ptu_file;

static gboolean parse_header(ptu_file *f, GError **error)
{
    if (f->len < 8 || memcmp(f->bytes, "PQTTTR\0\0", 8) != 0)
        return fm_error_bad_input(error, f->path, "%s",
                                  f->len == 0 ? _("empty file, not a PicoQuant .ptu file")
                                              : _("not a PicoQuant .ptu file (no PQTTTR magic)"));
    gsize at = PTU_PREAMBLE_LEN;
    for (;;) {
        if (at + PTU_TAG_LEN > f->len)
            return fm_error_bad_input(
                error, f->path,
                _("truncated: the tag header ends at byte %" G_GSIZE_FORMAT " before Header_End"),
                f->len);
        const guint8 *t = f->bytes + at;
        g_autofree char *ident = g_strndup((const char *)t, 32);
        gint32 idx = (gint32)fm_le32(t + 32);
        ptu_tag tag = {fm_le32(t + 36), fm_le64(t + 40)};
        at += PTU_TAG_LEN;
        switch (tag.type) {
        case FM_PTU_EMPTY8:
        case FM_PTU_BOOL8:
        case FM_PTU_INT8:
        case FM_PTU_BITSET64:
        case FM_PTU_COLOR8:
        case FM_PTU_FLOAT8:
        case FM_PTU_TDATETIME:
            break;
        case FM_PTU_FLOAT8ARRAY:
        case FM_PTU_ANSISTRING:
        case FM_PTU_WIDESTRING:
        case FM_PTU_BINARYBLOB:
            /* the value is the byte length of the data that follow the tag */
            if (tag.raw > f->len - at)
                return fm_error_bad_input(error, f->path,
                                          _("truncated: tag %s declares %" G_GUINT64_FORMAT
                                            " bytes of data, %" G_GSIZE_FORMAT " remain"),
                                          ident, tag.raw, f->len - at);
            at += (gsize)tag.raw;
            break;
        default:
            return fm_error_bad_input(error, f->path,
                                      _("tag %s has unknown type 0x%08x (corrupted header?)"),
                                      ident, tag.type);
        }
        if (strcmp(ident, "Header_End") == 0)
            break;
        char *key = idx == -1 ? g_strdup(ident) : g_strdup_printf("%s(%d)", ident, idx);
        g_hash_table_insert(f->tags, key, g_memdup2(&tag, sizeof tag));
    }
    f->records_at = at;
    return TRUE;
}

static const ptu_tag *find_tag(const ptu_file *f, const char *name)
{
    return g_hash_table_lookup(f->tags, name);
}

static gboolean tag_int(const ptu_file *f, const char *name, gint64 *value)
{
    const ptu_tag *t = find_tag(f, name);
    if (!t || (t->type != FM_PTU_INT8 && t->type != FM_PTU_BOOL8 && t->type != FM_PTU_BITSET64 &&
               t->type != FM_PTU_COLOR8))
        return FALSE;
    *value = (gint64)t->raw;
    return TRUE;
}

static gboolean tag_double(const ptu_file *f, const char *name, double *value)
{
    const ptu_tag *t = find_tag(f, name);
    if (!t || (t->type != FM_PTU_FLOAT8 && t->type != FM_PTU_TDATETIME))
        return FALSE;
    memcpy(value, &t->raw, sizeof *value);
    return isfinite(*value);
}

static gboolean require_int(const ptu_file *f, const char *name, gint64 lo, gint64 hi,
                            gint64 *value, GError **error)
{
    if (!tag_int(f, name, value))
        return fm_error_bad_input(error, f->path, _("no integer tag %s: not a T3 measurement"),
                                  name);
    if (*value < lo || *value > hi)
        return fm_error_bad_input(
            error, f->path,
            _("tag %s is %" G_GINT64_FORMAT ", expected %" G_GINT64_FORMAT "..%" G_GINT64_FORMAT),
            name, *value, lo, hi);
    return TRUE;
}

/* What the header says about the records, the image and the time axis. */
static gboolean read_layout(const ptu_file *f, fm_tttr_layout *L, GError **error)
{
    gint64 v;
    memset(L, 0, sizeof *L);
    L->path = f->path;
    if (!require_int(f, "TTResultFormat_TTTRRecType", 0, G_MAXUINT32, &v, error))
        return FALSE;
    L->rec_type = (guint32)v;
    /* An image names its size and line markers; a point measurement (SymPhoTime's
     * ImgHdr_Dimensions 1, or no image tags at all) is one decay. */
    gint64 dimensions = 3;
    L->image = find_tag(f, "ImgHdr_PixX") && find_tag(f, "ImgHdr_LineStart") &&
               !(tag_int(f, "ImgHdr_Dimensions", &dimensions) && dimensions == 1);
    if (L->image) {
        gint64 start, stop, frame = 0, bidirect = 0;
        if (!require_int(f, "ImgHdr_PixX", 1, 65536, &L->pix_x, error) ||
            !require_int(f, "ImgHdr_PixY", 1, 65536, &L->pix_y, error) ||
            !require_int(f, "ImgHdr_LineStart", 1, 15, &start, error) ||
            !require_int(f, "ImgHdr_LineStop", 1, 15, &stop, error))
            return FALSE;
        if (tag_int(f, "ImgHdr_Frame", &frame) && (frame < 1 || frame > 15))
            frame = 0;
        L->line_start = (int)start;
        L->line_stop = (int)stop;
        L->frame = (int)frame;
        L->bidirectional = tag_int(f, "ImgHdr_BiDirect", &bidirect) && bidirect != 0;
    }
    if (!tag_double(f, "MeasDesc_Resolution", &L->resolution_s) || !(L->resolution_s > 0))
        return fm_error_bad_input(error, f->path, "%s",
                                  _("MeasDesc_Resolution (the bin width) is missing"));
    double rate = 0;
    if (!tag_double(f, "MeasDesc_GlobalResolution", &L->sync_period_s) || !(L->sync_period_s > 0)) {
        L->sync_period_s = 0;
        if (tag_int(f, "TTResult_SyncRate", &v) && v > 0)
            L->sync_period_s = 1.0 / (double)v;
        else if (tag_double(f, "TTResult_SyncRate", &rate) && rate > 0)
            L->sync_period_s = 1.0 / rate;
    }
    gsize available = (f->len - f->records_at) / 4;
    if (!tag_int(f, "TTResult_NumberOfRecords", &L->n_records))
        L->n_records = (gint64)available;
    if (L->n_records < 0 || (guint64)L->n_records > available)
        return fm_error_bad_input(error, f->path,
                                  _("truncated: the header declares %" G_GINT64_FORMAT
                                    " records but the file holds %" G_GSIZE_FORMAT),
                                  L->n_records, available);
    L->records = f->bytes + f->records_at;
    return TRUE;
}

fm_dataset *fm_ptu_read_channel(const char *path, int channel, int max_bins,
                                void (*progress)(double fraction, gpointer user),
                                gpointer progress_user, GCancellable *cancellable, GError **error)
{
    g_autoptr(GMappedFile) map = fm_map_input(path, error);
    if (!map)
        return NULL;
    g_autoptr(GHashTable) tags = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    ptu_file f = {path, (const guint8 *)g_mapped_file_get_contents(map),
                  g_mapped_file_get_length(map), tags, 0};
    fm_tttr_layout L;
    if (!parse_header(&f, error) || !read_layout(&f, &L, error))
        return NULL;
    fm_dataset *ds =
        fm_tttr_histogram(&L, channel, max_bins, progress, progress_user, cancellable, error);
    if (!ds)
        return NULL;
    fm_dataset_set_meta(ds, "format", "ptu");
    fm_dataset_set_meta(ds, "format_variant", fm_ptu_record_type_name(L.rec_type));
    /* Resonant scanners move sinusoidally; the columns here are even in time. The metadata
     * says so, for a user who wonders why the image edges look stretched. */
    gint64 sin_percent = 0;
    if (L.image && tag_int(&f, "ImgHdr_SinCorrection", &sin_percent) && sin_percent != 0) {
        g_autofree char *text = g_strdup_printf("%" G_GINT64_FORMAT, sin_percent);
        fm_dataset_set_meta(ds, "ptu_sin_correction_percent", text);
        fm_dataset_set_meta(ds, "ptu_note",
                            "ImgHdr_SinCorrection not applied: columns are even in time");
    }
    return ds;
}

fm_dataset *fm_ptu_read(const char *path, int max_bins,
                        void (*progress)(double fraction, gpointer user), gpointer progress_user,
                        GCancellable *cancellable, GError **error)
{
    return fm_ptu_read_channel(path, 0, max_bins, progress, progress_user, cancellable, error);
}
