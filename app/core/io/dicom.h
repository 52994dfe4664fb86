/* DICOM files and series folders (DCMTK and OpenJPEG, through the C++ shim dicom.cc) read into
 * float32 datasets: a lone image as x, y; a series as x, y, z, t. */
#pragma once

#include <gio/gio.h>
#include <glib.h>
#include "app/core/dataset.h"
#include "app/core/io/frame_times.h"

G_BEGIN_DECLS

/* Pixel data in any transfer syntax a PACS commonly sends is read: implicit and explicit VR
 * little endian, explicit big endian, deflated, RLE, JPEG baseline/extended/lossless (process 14
 * and SV1), JPEG-LS lossless and near-lossless (DCMTK's codecs) and JPEG 2000 lossless and lossy
 * (OpenJPEG). Others (MPEG, HTJ2K, retired JPEG processes) fail with a message naming the
 * syntax. Samples of 8, 16 or 32 bits; colour (RGB, YBR_FULL, YBR_FULL_422; JPEG's YCbCr is
 * converted by its decoder) comes back as RGB planes in a dim "c".
 *
 * What a folder or file becomes: when the series is one file (after copies of one SOP instance
 * are dropped, the file the user picked kept, "dicom_duplicate_files"), a 2-D image x, y (mm,
 * else px), or, for a multi-frame object without per-frame functional groups, a stack x, y, N
 * where N is "z" (RT dose GridFrameOffsetVector, mm), "t" (cine FrameTime, s) or "frame";
 * colour adds c (3) after y. Metadata "dicom_frames", "dicom_lossy", "dicom_transfer_syntax".
 * Several files (or an enhanced multi-frame object of several frames) are a 4-D series:
 *
 * every file in folder (not its subfolders) is read as one 4-D DCE series x, y, z, t, float32
 * after RescaleSlope/Intercept (or the enhanced objects' Pixel Value Transformation).
 * Files without the Part-10 "DICM" preamble are skipped silently and counted in metadata
 * "dicom_skipped_files". series_uid picks one SeriesInstanceUID when the folder holds several
 * (NULL: the folder must hold exactly one). Frames (one per classic file, or each frame of an
 * enhanced multi-frame object with its Per-Frame Functional Groups) are ordered by slice
 * position — ImagePositionPatient projected on the normal of ImageOrientationPatient — and in
 * time by TemporalPositionIdentifier/Index where every frame has one, else by their time;
 * times come from AcquisitionDateTime (FrameAcquisitionDateTime), AcquisitionDate+Time,
 * TriggerTime, ContentDate+Time or TemporalPositionIdentifier x TemporalResolution, the first
 * of these that every frame has, valid, varying and increasing; else from the uniform spacing
 * of the consistent frames (dicom_times.h says the rules): never from a malformed value. In
 * seconds from the first frame (frame k's time = mean over slices). Sets FM_META_FRAME_TIMES,
 * FM_META_FRAME_TIMES_SOURCE (and FM_META_FRAME_TIMES_NOTE when it fell back), FM_META_AFFINE
 * (RAS+ mm; DICOM's LPS converted), dims spacing in mm and s, and metadata "dicom_series_uid",
 * "dicom_files", "dicom_skipped_files", "dicom_time_source" (= the source), "modality", and
 * FM_META_FLIP_ANGLES / FM_META_REPETITION_TIME where every frame has FlipAngle (the same at
 * every slice) / one RepetitionTime.
 * Errors (FM_ERROR_BAD_INPUT) name the file or the problem: "<folder>/IM0007: truncated pixel
 * data", "folder holds 3 series; choose one", unequal frame counts per slice position,
 * non-monotonic times, mixed image sizes, a syntax neither DCMTK nor OpenJPEG decodes ("no
 * decoder for transfer syntax <name> (<UID>)"), a decoder's failure with its reason. Built
 * without DCMTK, it fails with a message saying so. */
fm_dataset *fm_dicom_read(const char *folder, const char *series_uid, GError **error);
/* The same with progress (0..1, on the calling thread) and cancel (G_IO_ERROR_CANCELLED); both
 * may be NULL. */
fm_dataset *fm_dicom_read_progress(const char *folder, const char *series_uid,
                                   void (*progress)(double fraction, gpointer user), gpointer user,
                                   GCancellable *cancellable, GError **error);

/* The series that one file belongs to, read from the file's folder (what a user who picks any
 * file of a DICOM series in a file dialog means). Files of other series and unreadable files
 * whose header names another series are left out; a colour image or a file without a
 * SeriesInstanceUID is read on its own. */
fm_dataset *fm_dicom_read_file_series(const char *file,
                                      void (*progress)(double fraction, gpointer user),
                                      gpointer user, GCancellable *cancellable, GError **error);

/* The SeriesInstanceUIDs in folder (sorted; g_strfreev), for a "choose a series" list. */
char **fm_dicom_list_series(const char *folder, GError **error);

/* TRUE when this build reads DICOM (DCMTK found at build time). */
gboolean fm_dicom_available(void);

/* --- Test support: writes a synthetic series with known geometry, times and values. --- */
/* Where classic files carry their time (what scanners and QIBA's reference objects do). */
typedef enum {
    FM_DICOM_TEST_TIME_ACQUISITION_AND_CONTENT, /* AcquisitionDate/Time and ContentDate/Time */
    FM_DICOM_TEST_TIME_ACQUISITION_DATETIME,    /* AcquisitionDateTime only */
    FM_DICOM_TEST_TIME_ACQUISITION_TIME,        /* AcquisitionTime only, no date */
    FM_DICOM_TEST_TIME_TRIGGER,                 /* TriggerTime (ms) only */
    FM_DICOM_TEST_TIME_CONTENT,                 /* ContentDate/Time only */
} fm_dicom_test_time_tag;

/* The time attributes of one classic file as the writer will put them (text as stored; an
 * empty string: not written), for a test to spoil before they are written. */
typedef struct {
    char acquisition_datetime[64], acquisition_date[16], acquisition_time[64];
    char content_date[16], content_time[64], trigger_time[64];
    char temporal_position[16], temporal_resolution[64];
} fm_dicom_test_times;

typedef struct {
    int nx, ny, nz, nt;
    const double *frame_times_s;     /* nt times written as acquisition times (from 10:00:00) */
    double slope, intercept;         /* RescaleSlope / RescaleIntercept */
    double pixel_spacing_mm[2];      /* (x, y); 0 = 1 mm */
    double slice_spacing_mm;         /* 0 = 1 mm */
    double tilt_deg;                 /* rotation of the slice plane about the patient x axis */
    const char *series_uid;          /* NULL: a fixed default */
    guint32 shuffle_seed;            /* file names IM0000.. are a shuffle of (z, t) by this seed */
    gboolean enhanced;               /* one enhanced MR multi-frame object instead of nz*nt files */
    gboolean temporal_index;         /* write TemporalPositionIdentifier (index) in classic files */
    const char *file_prefix;         /* NULL: "IM" */
    fm_dicom_test_time_tag time_tag; /* classic files only */
    /* NULL: explicit VR little endian; else the UID of a syntax DCMTK writes (big endian,
     * implicit VR, RLE, JPEG lossless .57/.70, JPEG-LS .80/.81; OpenJPEG: JPEG 2000 .90) */
    const char *transfer_syntax_uid;
    int near_lossless; /* JPEG-LS near-lossless (.81): the NEAR bound in stored units */
    int j2k_fragments; /* JPEG 2000 (.90, through OpenJPEG): fragments per frame (0: 1) */
    /* Classic files: FlipAngle of frame t (a variable-flip-angle series) and RepetitionTime
     * tr_ms in every file; NULL: neither is written. */
    const double *flip_angles_deg;
    double tr_ms;
    /* Classic files: called with each file's slice, frame and time attributes (time_tag's,
     * plus TemporalPositionIdentifier t + 1 when temporal_index is set) before they are
     * written; NULL: written as they are. */
    void (*edit_times)(int z, int t, fm_dicom_test_times *times, gpointer user);
    gpointer edit_times_user;
} fm_dicom_test_series;

/* The stored integer written for voxel (x, y, z, t); the reader must return
 * stored × slope + intercept. */
guint16 fm_dicom_test_stored_value(int x, int y, int z, int t);
/* Writes the series into dir (created if needed). Returns FALSE with an error when DCMTK is
 * not built in or a file cannot be written. */
gboolean fm_dicom_write_test_series(const char *dir, const fm_dicom_test_series *spec,
                                    GError **error);

G_END_DECLS
