/* Small files of every format Fluxmap reads, written by the project's own writers with known
 * content, and what a reader must find in each (for `info` and the readers' fuzz test). */
#pragma once

#include <glib.h>

typedef struct {
    char *path;          /* the file to open (a DICOM series: one file of its folder) */
    char *label;         /* "ptu-picoharp" */
    const char *format;  /* expected metadata "format" */
    const char *variant; /* expected "format_variant", or NULL when the reader sets none */
    int n_dims;
    gsize sizes[4];
    const char *units[4];   /* NULL: not checked */
    const char *pixel_type; /* "uint16", "float32", NULL for .mci */
    int bits_per_sample;
    double pixel_sum;                  /* computed from the values written, not from any reader */
    double sum_tolerance;              /* absolute */
    double bin_width_ps, rep_rate_mhz; /* NAN when the format has none */
    double times_s[8];
    int n_times;         /* 0: no frame times */
    double lambda_nm[2]; /* NAN when none */
    /* the raw layout for an OCT file without sidecar (0 when it has one or is not raw) */
    int pixels_per_aline, alines_per_bscan;
    const char *raw_format;
} reader_fixture;

void reader_fixture_free(reader_fixture *f);

/* Inflates the one member of a ZIP archive (as shared/refdata keeps tcspc.sdt) into path. */
gboolean reader_fixture_unzip(const char *zip_path, const char *path);

/* Writes every fixture into dir (each in its own subfolder, so that a DICOM series or a file
 * with its sidecar stands alone) and returns them (free with g_ptr_array_unref). DICOM is left
 * out when this build has no DCMTK. */
GPtrArray *reader_fixtures_write(const char *dir);
