/* Frame times of a DICOM series that can be trusted: strict parsing of the time attributes
 * (DA, TM, DT, DS as PS3.5 6.2 defines them) and the choice of the attribute, or of a rule,
 * that gives every frame its time, with a note of what was wrong with the others. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Where a frame's time comes from, in the order of preference. Enhanced objects carry the
 * first, third and fourth in their per-frame functional groups (FrameAcquisitionDateTime,
 * NominalCardiacTriggerDelayTime, FrameReferenceDateTime). */
typedef enum {
    FM_DICOM_TIME_ACQUISITION_DATETIME, /* AcquisitionDateTime (0008,002A) */
    FM_DICOM_TIME_ACQUISITION,          /* AcquisitionDate + AcquisitionTime (0008,0022/0032) */
    FM_DICOM_TIME_TRIGGER,              /* TriggerTime (0018,1060), ms */
    FM_DICOM_TIME_CONTENT,              /* ContentDate + ContentTime (0008,0023/0033) */
    /* (TemporalPositionIdentifier - 1) x TemporalResolution (0020,0100 and 0020,0110, ms): the
     * "time delay between images in a dynamic set" as PS3.3 C.7.6.1 defines it. */
    FM_DICOM_TIME_TEMPORAL_POSITION,
    FM_DICOM_N_TIME_SOURCES
} fm_dicom_time_source;

typedef enum {
    FM_DICOM_TIME_MISSING = 0, /* the attribute is absent or empty */
    FM_DICOM_TIME_MALFORMED,   /* present, but not a valid value of its VR */
    FM_DICOM_TIME_OK,
} fm_dicom_time_state;

/* One frame's candidate times (seconds on each source's own clock) and its temporal index. */
typedef struct {
    fm_dicom_time_state state[FM_DICOM_N_TIME_SOURCES];
    double seconds[FM_DICOM_N_TIME_SOURCES];
    long temporal_index; /* TemporalPositionIdentifier / TemporalPositionIndex; -1: none */
    const char *file;    /* for messages */
} fm_dicom_frame_time;

/* The attribute's name as users look it up ("AcquisitionTime"). */
const char *fm_dicom_time_source_name(fm_dicom_time_source source);

/* Strict parsers: FM_DICOM_TIME_MISSING for NULL or blank text, MALFORMED for anything that
 * is not a valid value. TM "HH[MM[SS[.F{1,6}]]]" (and the retired "HH:MM:SS.F"), DA
 * "YYYYMMDD" (blank: no date, 0), DT "YYYYMMDD[HH[MM[SS[.F]]]][+/-ZZXX]" (offset ignored: one
 * scanner clock), DS a decimal number. Times in seconds; dates in seconds since an epoch. */
fm_dicom_time_state fm_dicom_parse_tm(const char *text, double *seconds);
fm_dicom_time_state fm_dicom_parse_da(const char *text, double *seconds);
fm_dicom_time_state fm_dicom_parse_dt(const char *text, double *seconds);
fm_dicom_time_state fm_dicom_parse_ds(const char *text, double *value);
/* DA and TM together: malformed when either is, missing when the time is. */
fm_dicom_time_state fm_dicom_parse_date_time(const char *da, const char *tm, double *seconds);

/* What fm_dicom_times_choose decided. */
typedef struct {
    int *order;            /* nz * nt: slice z's k-th frame in time is frames[order[z nt + k]] */
    double *times_s;       /* nt: frame k's time (mean over slices), the first 0 */
    char *source;          /* "TriggerTime", "uniform 2.5 s spacing of AcquisitionTime", ... */
    char *note;            /* NULL when the preferred attribute served every frame; else one
                              sentence: "frame times from TriggerTime: AcquisitionTime
                              malformed in 3 files" */
    int source_id;         /* the fm_dicom_time_source whose values (or spacing) were used */
    gboolean uniform_rule; /* the times are the uniform spacing of the consistent frames */
} fm_dicom_times;

void fm_dicom_times_clear(fm_dicom_times *t);

/* frames holds nz slices of nt frames each, slice z at [z nt, (z + 1) nt), in any time order.
 * The first source (in the order above) that every frame has, that varies and that is strictly
 * increasing in each slice (frames ordered by temporal index where every frame has one, else
 * by that time) gives the times. When none does and every frame has a temporal index, the
 * first source whose valid values lie on one uniform grid (a spacing common to all slices,
 * at least 3 frames on it, every increasing value within max(1 ms, 2 % of the spacing) of it)
 * gives the times of the grid to all frames, including those whose value was missing,
 * malformed, repeated or going back. Otherwise FALSE with a message (folder: the message's
 * first word) that says what is wrong with each attribute; a series whose complete attribute
 * goes back says "non-monotonic times". */
gboolean fm_dicom_times_choose(const fm_dicom_frame_time *frames, int nz, int nt,
                               const char *folder, fm_dicom_times *out, char **message);

G_END_DECLS
