/* Display names of the formats the readers name in metadata ("format", "format_variant"). */
#include "format_info.h"

#include <glib/gi18n.h>

#include "app/core/io/oct_raw.h"

typedef struct {
    const char *id;
    const char *title; /* N_() */
} format_title;

static const format_title titles[] = {
    {"tiff", N_("TIFF")},         {"sdt", N_("Becker & Hickl SPC (.sdt)")},
    {"ptu", N_("PicoQuant PTU")}, {"pt3", N_("PicoQuant PT3 (PicoHarp)")},
    {"nifti", N_("NIfTI")},       {"dicom", N_("DICOM series")},
    {"oct_raw", N_("OCT raw")},   {"mci", N_("MCML input (.mci)")},
};

const char *fm_format_title(const char *format)
{
    if (!format)
        return NULL;
    for (gsize i = 0; i < G_N_ELEMENTS(titles); i++)
        if (g_strcmp0(format, titles[i].id) == 0)
            return _(titles[i].title);
    return format;
}

char *fm_format_describe(const fm_dataset *ds)
{
    const char *title = fm_format_title(fm_dataset_get_meta(ds, FM_META_FORMAT));
    const char *variant = fm_dataset_get_meta(ds, FM_META_FORMAT_VARIANT);
    if (!title)
        return NULL;
    /* "OCT raw u12packed" reads better than "OCT raw, u12packed"; the others are lists */
    fm_oct_raw_format sample_format;
    if (variant && fm_oct_raw_format_parse(variant, &sample_format))
        return g_strdup_printf("%s %s", title, variant);
    if (variant && *variant)
        return g_strdup_printf("%s, %s", title, variant);
    return g_strdup(title);
}

const char *fm_ptu_record_type_name(guint32 record_type)
{
    /* PicoQuant's TTResultFormat_TTTRRecType values (their PTU demo readers list them) */
    switch (record_type) {
    case 0x00010303:
        return "PicoHarp T3";
    case 0x00010203:
        return "PicoHarp T2";
    case 0x00010304:
        return "HydraHarp v1 T3";
    case 0x00010204:
        return "HydraHarp v1 T2";
    case 0x01010304:
        return "HydraHarp v2 T3";
    case 0x01010204:
        return "HydraHarp v2 T2";
    case 0x00010305:
        return "TimeHarp 260N T3";
    case 0x00010205:
        return "TimeHarp 260N T2";
    case 0x00010306:
        return "TimeHarp 260P T3";
    case 0x00010206:
        return "TimeHarp 260P T2";
    case 0x00010307:
        return "generic T3 (MultiHarp, PicoHarp 330)";
    case 0x00010207:
        return "generic T2 (MultiHarp, PicoHarp 330)";
    }
    static GPrivate buffer = G_PRIVATE_INIT(g_free);
    char *text = g_strdup_printf("record type 0x%08x", record_type);
    g_private_replace(&buffer, text);
    return text;
}
