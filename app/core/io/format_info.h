/* Which file format and variant a reader read: the metadata keys and the formats' display names. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"

G_BEGIN_DECLS

/* Set by every reader: the format's id ("tiff", "sdt", "ptu", "pt3", "nifti", "dicom", "oct_raw",
 * "mci") and, where the file says more, its variant ("PicoHarp T3", "NIfTI-1", "u12packed",
 * a DICOM transfer syntax). */
#define FM_META_FORMAT "format"
#define FM_META_FORMAT_VARIANT "format_variant"

/* The display name of a format id ("Becker & Hickl SPC (.sdt)"), or the id itself when it is
 * not one of ours; NULL for NULL. */
const char *fm_format_title(const char *format);
/* "PicoQuant PTU, PicoHarp T3": the title and the variant of a dataset's metadata, or NULL when
 * the dataset names no format (g_free it). */
char *fm_format_describe(const fm_dataset *ds);
/* The instrument a PicoQuant record type names ("PicoHarp T3", "HydraHarp v2 T3", ...), or
 * "record type 0x........" for one that is not documented (a static or per-thread buffer). */
const char *fm_ptu_record_type_name(guint32 record_type);

G_END_DECLS
