/* JPEG 2000 frames of DICOM files (transfer syntaxes 1.2.840.10008.1.2.4.90/.91) via OpenJPEG. */
#include "dicom_j2k.h"

#include <string.h>

#include "app/core/fm_dce_io_config.h"

#if FM_HAVE_OPENJPEG
#include <openjpeg.h>

gboolean fm_j2k_available(void)
{
    return TRUE;
}

typedef struct {
    const guint8 *data;
    gsize size, pos;
} mem_stream;

static OPJ_SIZE_T mem_read(void *buffer, OPJ_SIZE_T n, void *user)
{
    mem_stream *s = user;
    if (s->pos >= s->size)
        return (OPJ_SIZE_T)-1;
    gsize take = MIN((gsize)n, s->size - s->pos);
    memcpy(buffer, s->data + s->pos, take);
    s->pos += take;
    return take;
}

static OPJ_OFF_T mem_skip(OPJ_OFF_T n, void *user)
{
    mem_stream *s = user;
    if (n < 0) {
        gsize back = MIN((gsize)-n, s->pos);
        s->pos -= back;
        return -(OPJ_OFF_T)back;
    }
    gsize ahead = MIN((gsize)n, s->size - s->pos);
    s->pos += ahead;
    return (OPJ_OFF_T)ahead;
}

static OPJ_BOOL mem_seek(OPJ_OFF_T pos, void *user)
{
    mem_stream *s = user;
    if (pos < 0 || (gsize)pos > s->size)
        return OPJ_FALSE;
    s->pos = (gsize)pos;
    return OPJ_TRUE;
}

/* OpenJPEG reports through callbacks; the first error is the cause, later ones follow from it.
 */
static void keep_first_error(const char *msg, void *user)
{
    GString *text = user;
    if (text->len == 0) {
        g_string_append(text, msg);
        while (text->len > 0 && g_ascii_isspace(text->str[text->len - 1]))
            g_string_truncate(text, text->len - 1);
    }
}

static void ignore_message(const char *msg, void *user)
{
    (void)msg;
    (void)user;
}

static gboolean check_image(const opj_image_t *img, const fm_dicom_pixel_layout *l, char **why)
{
    if ((int)img->numcomps != l->samples_per_pixel) {
        *why = g_strdup_printf("the JPEG 2000 codestream has %u components, the header says %d "
                               "samples per pixel",
                               img->numcomps, l->samples_per_pixel);
        return FALSE;
    }
    for (OPJ_UINT32 c = 0; c < img->numcomps; c++) {
        const opj_image_comp_t *comp = &img->comps[c];
        if ((int)comp->w != l->cols || (int)comp->h != l->rows || comp->dx != 1 || comp->dy != 1 ||
            comp->data == NULL) {
            *why = g_strdup_printf("JPEG 2000 component %u is %ux%u (subsampling %ux%u), the "
                                   "header says %dx%d",
                                   c, comp->w, comp->h, comp->dx, comp->dy, l->cols, l->rows);
            return FALSE;
        }
        if ((int)comp->prec > l->bits_allocated) {
            *why = g_strdup_printf("JPEG 2000 component %u has %u bits, more than the %d "
                                   "allocated",
                                   c, comp->prec, l->bits_allocated);
            return FALSE;
        }
    }
    return TRUE;
}

gboolean fm_j2k_decode_frame(const guint8 *bytes, gsize n, fm_dicom_pixel_layout *layout,
                             guint8 *frame, char **why)
{
    static const guint8 jp2_signature[12] = {0,   0,   0,    0x0c, 'j',  'P',
                                             ' ', ' ', 0x0d, 0x0a, 0x87, 0x0a};
    OPJ_CODEC_FORMAT format;
    if (n >= 4 && bytes[0] == 0xff && bytes[1] == 0x4f && bytes[2] == 0xff && bytes[3] == 0x51)
        format = OPJ_CODEC_J2K;
    else if (n >= sizeof jp2_signature && memcmp(bytes, jp2_signature, sizeof jp2_signature) == 0)
        format = OPJ_CODEC_JP2; /* not what PS3.5 A.4.4 allows, but some writers wrap it */
    else {
        *why = g_strdup("the fragment is neither a JPEG 2000 codestream nor a JP2 file");
        return FALSE;
    }
    mem_stream ms = {bytes, n, 0};
    opj_stream_t *stream = opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE);
    opj_stream_set_user_data(stream, &ms, NULL);
    opj_stream_set_user_data_length(stream, n);
    opj_stream_set_read_function(stream, mem_read);
    opj_stream_set_skip_function(stream, mem_skip);
    opj_stream_set_seek_function(stream, mem_seek);
    opj_codec_t *codec = opj_create_decompress(format);
    g_autoptr(GString) errors = g_string_new(NULL);
    opj_set_error_handler(codec, keep_first_error, errors);
    opj_set_warning_handler(codec, ignore_message, NULL);
    opj_set_info_handler(codec, ignore_message, NULL);
    opj_dparameters_t params;
    opj_set_default_decoder_parameters(&params);
    opj_image_t *img = NULL;
    gboolean ok = opj_setup_decoder(codec, &params) && opj_read_header(stream, codec, &img) &&
                  opj_decode(codec, stream, img) && opj_end_decompress(codec, stream);
    if (!ok) {
        *why = g_strdup_printf("OpenJPEG cannot decode the JPEG 2000 data (%s)",
                               errors->len ? errors->str : "no reason given");
    } else if (check_image(img, layout, why)) {
        /* The inverse colour transform (RCT/ICT) has been applied by opj_decode where the
         * codestream asks for it: the components are R, G, B. */
        gsize plane = (gsize)layout->rows * (gsize)layout->cols;
        int bytes_per = layout->bits_allocated / 8;
        int prec = (int)img->comps[0].prec;
        if (prec > layout->bits_stored)
            layout->bits_stored = prec;
        for (int c = 0; c < layout->samples_per_pixel; c++) {
            const OPJ_INT32 *src = img->comps[c].data;
            guint8 *dst = frame + (gsize)c * plane * bytes_per;
            for (gsize i = 0; i < plane; i++) {
                guint32 bits = (guint32)src[i];
                if (bytes_per == 1) {
                    dst[i] = (guint8)bits;
                } else if (bytes_per == 2) {
                    guint16 v = (guint16)bits;
                    memcpy(dst + 2 * i, &v, 2);
                } else {
                    memcpy(dst + 4 * i, &bits, 4);
                }
            }
        }
        layout->by_plane = TRUE;
    } else {
        ok = FALSE;
    }
    opj_image_destroy(img);
    opj_destroy_codec(codec);
    opj_stream_destroy(stream);
    return ok;
}

/* A growable output buffer with a position: the encoder may skip and seek while writing. */
typedef struct {
    GByteArray *bytes;
    gsize pos;
} out_stream;

static OPJ_SIZE_T out_write(void *buffer, OPJ_SIZE_T n, void *user)
{
    out_stream *s = user;
    if (s->pos + n > s->bytes->len)
        g_byte_array_set_size(s->bytes, (guint)(s->pos + n));
    memcpy(s->bytes->data + s->pos, buffer, n);
    s->pos += n;
    return n;
}

static OPJ_OFF_T out_skip(OPJ_OFF_T n, void *user)
{
    out_stream *s = user;
    if (n < 0 && (gsize)-n > s->pos)
        return -1;
    s->pos = (gsize)((OPJ_OFF_T)s->pos + n);
    if (s->pos > s->bytes->len)
        g_byte_array_set_size(s->bytes, (guint)s->pos);
    return n;
}

static OPJ_BOOL out_seek(OPJ_OFF_T pos, void *user)
{
    out_stream *s = user;
    if (pos < 0)
        return OPJ_FALSE;
    s->pos = (gsize)pos;
    if (s->pos > s->bytes->len)
        g_byte_array_set_size(s->bytes, (guint)s->pos);
    return OPJ_TRUE;
}

GBytes *fm_j2k_encode_test_frame(const guint16 *samples, int cols, int rows, char **why)
{
    opj_image_cmptparm_t comp = {0};
    comp.dx = comp.dy = 1;
    comp.w = (OPJ_UINT32)cols;
    comp.h = (OPJ_UINT32)rows;
    comp.prec = 16;
    comp.sgnd = 0;
    opj_image_t *img = opj_image_create(1, &comp, OPJ_CLRSPC_GRAY);
    img->x1 = (OPJ_UINT32)cols;
    img->y1 = (OPJ_UINT32)rows;
    for (gsize i = 0; i < (gsize)cols * (gsize)rows; i++)
        img->comps[0].data[i] = samples[i];
    opj_cparameters_t params;
    opj_set_default_encoder_parameters(&params); /* reversible wavelet, one lossless layer */
    params.tcp_numlayers = 1;
    params.tcp_rates[0] = 0;
    params.cp_disto_alloc = 1;
    params.numresolution = 2; /* small test frames: fewer levels than the default 6 */
    opj_codec_t *codec = opj_create_compress(OPJ_CODEC_J2K);
    g_autoptr(GString) errors = g_string_new(NULL);
    opj_set_error_handler(codec, keep_first_error, errors);
    opj_set_warning_handler(codec, ignore_message, NULL);
    opj_set_info_handler(codec, ignore_message, NULL);
    out_stream out = {g_byte_array_new(), 0};
    opj_stream_t *stream = opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_FALSE);
    opj_stream_set_user_data(stream, &out, NULL);
    opj_stream_set_write_function(stream, out_write);
    opj_stream_set_skip_function(stream, out_skip);
    opj_stream_set_seek_function(stream, out_seek);
    gboolean ok = opj_setup_encoder(codec, &params, img) &&
                  opj_start_compress(codec, img, stream) && opj_encode(codec, stream) &&
                  opj_end_compress(codec, stream);
    opj_stream_destroy(stream);
    opj_destroy_codec(codec);
    opj_image_destroy(img);
    if (!ok) {
        *why = g_strdup_printf("OpenJPEG cannot encode (%s)",
                               errors->len ? errors->str : "no reason given");
        g_byte_array_unref(out.bytes);
        return NULL;
    }
    return g_byte_array_free_to_bytes(out.bytes);
}

#else

GBytes *fm_j2k_encode_test_frame(const guint16 *samples, int cols, int rows, char **why)
{
    (void)samples, (void)cols, (void)rows;
    *why = g_strdup("this Fluxmap was built without OpenJPEG");
    return NULL;
}

gboolean fm_j2k_available(void)
{
    return FALSE;
}

gboolean fm_j2k_decode_frame(const guint8 *bytes, gsize n, fm_dicom_pixel_layout *layout,
                             guint8 *frame, char **why)
{
    (void)bytes, (void)n, (void)layout, (void)frame;
    *why = g_strdup("this Fluxmap was built without OpenJPEG, which decodes JPEG 2000");
    return FALSE;
}

#endif
