/* Trustworthy DICOM frame times: strict DA/TM/DT/DS parsing and the choice of the attribute
 * (or the uniform spacing of the consistent frames) that times every frame, with its note. */
#include "dicom_times.h"

#include <glib/gi18n.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const source_names[FM_DICOM_N_TIME_SOURCES] = {
    "AcquisitionDateTime", "AcquisitionTime", "TriggerTime", "ContentTime",
    "TemporalPositionIdentifier x TemporalResolution"};

const char *fm_dicom_time_source_name(fm_dicom_time_source source)
{
    return source >= 0 && source < FM_DICOM_N_TIME_SOURCES ? source_names[source] : "none";
}

/* The text between leading and trailing spaces (DICOM pads values to even lengths). */
static char *trimmed(const char *text)
{
    return text ? g_strstrip(g_strdup(text)) : g_strdup("");
}

static gboolean all_digits(const char *s, gsize n)
{
    for (gsize i = 0; i < n; i++)
        if (!g_ascii_isdigit(s[i]))
            return FALSE;
    return TRUE;
}

/* "HH[MM[SS[.F{1,6}]]]": two-digit fields in range, a fraction only after the seconds. */
static gboolean parse_tm_digits(const char *s, double *seconds)
{
    const char *dot = strchr(s, '.');
    gsize head = dot ? (gsize)(dot - s) : strlen(s);
    if ((head != 2 && head != 4 && head != 6) || !all_digits(s, head))
        return FALSE;
    int hh = (s[0] - '0') * 10 + (s[1] - '0');
    int mm = head >= 4 ? (s[2] - '0') * 10 + (s[3] - '0') : 0;
    int ss = head >= 6 ? (s[4] - '0') * 10 + (s[5] - '0') : 0;
    double frac = 0;
    if (dot) {
        gsize n = strlen(dot + 1);
        if (head != 6 || n < 1 || n > 6 || !all_digits(dot + 1, n))
            return FALSE;
        frac = g_ascii_strtod(dot, NULL);
    }
    if (hh > 23 || mm > 59 || ss > 60) /* 60: a leap second */
        return FALSE;
    *seconds = hh * 3600.0 + mm * 60.0 + ss + frac;
    return TRUE;
}

fm_dicom_time_state fm_dicom_parse_tm(const char *text, double *seconds)
{
    g_autofree char *s = trimmed(text);
    if (!*s)
        return FM_DICOM_TIME_MISSING;
    if (strchr(s, ':')) { /* the retired ACR-NEMA form HH:MM:SS.frac */
        g_auto(GStrv) parts = g_strsplit(s, ":", -1);
        if (g_strv_length(parts) != 3 || strlen(parts[0]) != 2 || strlen(parts[1]) != 2)
            return FM_DICOM_TIME_MALFORMED;
        g_autofree char *joined = g_strconcat(parts[0], parts[1], parts[2], NULL);
        return parse_tm_digits(joined, seconds) ? FM_DICOM_TIME_OK : FM_DICOM_TIME_MALFORMED;
    }
    return parse_tm_digits(s, seconds) ? FM_DICOM_TIME_OK : FM_DICOM_TIME_MALFORMED;
}

static gboolean parse_date8(const char *s, double *seconds)
{
    if (strlen(s) != 8 || !all_digits(s, 8))
        return FALSE;
    int y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    int m = (s[4] - '0') * 10 + (s[5] - '0'), d = (s[6] - '0') * 10 + (s[7] - '0');
    if (!g_date_valid_dmy((GDateDay)d, (GDateMonth)m, (GDateYear)y))
        return FALSE;
    GDate *g = g_date_new_dmy((GDateDay)d, (GDateMonth)m, (GDateYear)y);
    *seconds = g_date_get_julian(g) * 86400.0;
    g_date_free(g);
    return TRUE;
}

fm_dicom_time_state fm_dicom_parse_da(const char *text, double *seconds)
{
    g_autofree char *s = trimmed(text);
    if (!*s)
        return FM_DICOM_TIME_MISSING;
    if (strlen(s) == 10 && s[4] == '.' && s[7] == '.') { /* the retired YYYY.MM.DD */
        memmove(s + 4, s + 5, 2);
        memmove(s + 6, s + 8, 3);
    }
    return parse_date8(s, seconds) ? FM_DICOM_TIME_OK : FM_DICOM_TIME_MALFORMED;
}

fm_dicom_time_state fm_dicom_parse_dt(const char *text, double *seconds)
{
    g_autofree char *s = trimmed(text);
    if (!*s)
        return FM_DICOM_TIME_MISSING;
    char *offset = strpbrk(s, "+-");
    if (offset) {
        if (strlen(offset) != 5 || !all_digits(offset + 1, 4))
            return FM_DICOM_TIME_MALFORMED;
        *offset = '\0';
    }
    /* Frame times need the time of day: a DT of a date alone times no frame. */
    double day = 0, tod = 0;
    if (strlen(s) < 10)
        return FM_DICOM_TIME_MALFORMED;
    char date[9];
    memcpy(date, s, 8);
    date[8] = '\0';
    if (!parse_date8(date, &day) || !parse_tm_digits(s + 8, &tod))
        return FM_DICOM_TIME_MALFORMED;
    *seconds = day + tod;
    return FM_DICOM_TIME_OK;
}

fm_dicom_time_state fm_dicom_parse_ds(const char *text, double *value)
{
    g_autofree char *s = trimmed(text);
    if (!*s)
        return FM_DICOM_TIME_MISSING;
    char *end = NULL;
    double v = g_ascii_strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v) || strlen(s) > 16)
        return FM_DICOM_TIME_MALFORMED;
    *value = v;
    return FM_DICOM_TIME_OK;
}

fm_dicom_time_state fm_dicom_parse_date_time(const char *da, const char *tm, double *seconds)
{
    double day = 0, tod = 0;
    fm_dicom_time_state d = fm_dicom_parse_da(da, &day);
    fm_dicom_time_state t = fm_dicom_parse_tm(tm, &tod);
    if (d == FM_DICOM_TIME_MALFORMED || t == FM_DICOM_TIME_MALFORMED)
        return FM_DICOM_TIME_MALFORMED;
    if (t == FM_DICOM_TIME_MISSING)
        return FM_DICOM_TIME_MISSING;
    *seconds = day + tod; /* a date keeps a series across midnight in order */
    return FM_DICOM_TIME_OK;
}

void fm_dicom_times_clear(fm_dicom_times *t)
{
    g_clear_pointer(&t->order, g_free);
    g_clear_pointer(&t->times_s, g_free);
    g_clear_pointer(&t->source, g_free);
    g_clear_pointer(&t->note, g_free);
}

/* ---- the choice ---- */

typedef struct {
    const fm_dicom_frame_time *frames;
    int source;
    gboolean by_index;
} sort_context;

static gint compare_frames(gconstpointer a, gconstpointer b, gpointer user)
{
    const sort_context *c = user;
    const fm_dicom_frame_time *p = &c->frames[*(const int *)a], *q = &c->frames[*(const int *)b];
    if (c->by_index)
        return (p->temporal_index > q->temporal_index) - (p->temporal_index < q->temporal_index);
    double s = p->seconds[c->source], t = q->seconds[c->source];
    return (s > t) - (s < t); /* equal times keep their order (the sort is stable) */
}

/* Each slice's frames in time order: by temporal index, or by source's values. */
static void order_slices(const fm_dicom_frame_time *frames, int nz, int nt, int source,
                         gboolean by_index, int *order)
{
    sort_context c = {frames, source, by_index};
    for (int i = 0; i < nz * nt; i++)
        order[i] = i;
    for (int z = 0; z < nz; z++)
        g_qsort_with_data(order + (gsize)z * nt, nt, sizeof(int), compare_frames, &c);
}

/* Every frame has a temporal index and no slice has one twice: an order no time value gives. */
static gboolean index_orders(const fm_dicom_frame_time *frames, int nz, int nt)
{
    g_autofree int *order = g_new(int, (gsize)nz *nt);
    for (int i = 0; i < nz * nt; i++)
        if (frames[i].temporal_index < 0)
            return FALSE;
    order_slices(frames, nz, nt, 0, TRUE, order);
    for (int z = 0; z < nz; z++)
        for (int k = 1; k < nt; k++)
            if (frames[order[z * nt + k]].temporal_index ==
                frames[order[z * nt + k - 1]].temporal_index)
                return FALSE;
    return TRUE;
}

/* What is wrong with one source. */
typedef struct {
    int ok, malformed, missing, not_increasing;
    gboolean equal;   /* complete, but one value for every frame: a series time, not a frame's */
    int first_bad;    /* a frame to name in a message, or -1 */
    char *going_back; /* the "non-monotonic times ..." message of a complete source, or NULL */
} source_report;

static double mean_times(const fm_dicom_frame_time *frames, const int *order, int nz, int nt,
                         int source, double *times)
{
    for (int k = 0; k < nt; k++) {
        times[k] = 0;
        for (int z = 0; z < nz; z++)
            times[k] += frames[order[z * nt + k]].seconds[source];
        times[k] /= nz;
    }
    return times[0];
}

/* A complete source: ordered, strictly increasing in every slice and over the mean times. */
static gboolean try_complete(const fm_dicom_frame_time *frames, int nz, int nt, int source,
                             gboolean by_index, const char *folder, int *order, double *times,
                             source_report *r)
{
    order_slices(frames, nz, nt, source, by_index, order);
    gboolean varies = FALSE;
    double first = frames[0].seconds[source]; /* messages count from the earliest value */
    for (int i = 1; i < nz * nt; i++)
        first = MIN(first, frames[i].seconds[source]);
    for (int z = 0; z < nz; z++) {
        for (int k = 1; k < nt; k++) {
            const fm_dicom_frame_time *a = &frames[order[z * nt + k - 1]],
                                      *b = &frames[order[z * nt + k]];
            double ta = a->seconds[source], tb = b->seconds[source];
            varies = varies || ta != frames[0].seconds[source] || tb != frames[0].seconds[source];
            if (!(tb > ta)) {
                if (r->not_increasing++ == 0) {
                    r->first_bad = order[z * nt + k];
                    r->going_back = g_strdup_printf(
                        _("%s: non-monotonic times at slice %d: %s (%s %.3f s) does not follow "
                          "%s (%.3f s)"),
                        folder, z + 1, b->file, source_names[source], tb - first, a->file,
                        ta - first);
                }
            }
        }
    }
    if (!varies) {
        r->equal = TRUE;
        r->not_increasing = 0;
        g_clear_pointer(&r->going_back, g_free);
        return FALSE;
    }
    if (r->not_increasing)
        return FALSE;
    double t0 = mean_times(frames, order, nz, nt, source, times);
    for (int k = 1; k < nt; k++)
        if (!(times[k] > times[k - 1])) {
            r->not_increasing = 1;
            r->going_back = g_strdup_printf(
                _("%s: non-monotonic times: frame %d (%.3f s) is not after frame %d"), folder,
                k + 1, times[k] - t0, k);
            return FALSE;
        }
    for (int k = 0; k < nt; k++)
        times[k] -= t0;
    return TRUE;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The uniform rule (order: the temporal index, already in order[]): the valid values of source
 * that do not take part in a repeat or a step back must lie on one grid t0_z + index dt. */
static gboolean try_uniform(const fm_dicom_frame_time *frames, int nz, int nt, int source,
                            const int *order, double *times, double *dt_out, source_report *r)
{
    const int n = nz * nt;
    g_autofree gboolean *suspect = g_new0(gboolean, n);
    g_autofree double *slopes = g_new(double, n);
    g_autofree double *offsets = g_new(double, n);
    g_autofree double *t0 = g_new(double, nz);
    int n_slopes = 0;
    r->not_increasing = 0;
    /* Frames on either side of a step that does not go forward are suspect. */
    for (int z = 0; z < nz; z++) {
        int prev = -1;
        for (int k = 0; k < nt; k++) {
            int i = order[z * nt + k];
            if (frames[i].state[source] != FM_DICOM_TIME_OK)
                continue;
            if (prev >= 0 && !(frames[i].seconds[source] > frames[prev].seconds[source]))
                suspect[i] = suspect[prev] = TRUE;
            prev = i;
        }
    }
    for (int z = 0; z < nz; z++) {
        int prev = -1;
        for (int k = 0; k < nt; k++) {
            int i = order[z * nt + k];
            if (frames[i].state[source] != FM_DICOM_TIME_OK || suspect[i])
                continue;
            if (prev >= 0)
                slopes[n_slopes++] =
                    (frames[i].seconds[source] - frames[prev].seconds[source]) /
                    (double)(frames[i].temporal_index - frames[prev].temporal_index);
            prev = i;
        }
    }
    if (n_slopes < 2)
        return FALSE;
    const double dt = median(slopes, n_slopes);
    if (!(dt > 0))
        return FALSE;
    const double tol = MAX(1e-3, 0.02 * dt);
    int consistent = 0;
    for (int z = 0; z < nz; z++) {
        int m = 0;
        for (int k = 0; k < nt; k++) {
            int i = order[z * nt + k];
            if (frames[i].state[source] == FM_DICOM_TIME_OK && !suspect[i])
                offsets[m++] = frames[i].seconds[source] - frames[i].temporal_index * dt;
        }
        if (m == 0)
            return FALSE; /* a slice without one consistent frame has no offset */
        t0[z] = median(offsets, m);
        for (int k = 0; k < nt; k++) {
            int i = order[z * nt + k];
            if (frames[i].state[source] != FM_DICOM_TIME_OK)
                continue;
            double off = fabs(frames[i].seconds[source] - (t0[z] + frames[i].temporal_index * dt));
            if (suspect[i] && off > tol) {
                if (r->not_increasing++ == 0 && r->first_bad < 0)
                    r->first_bad = i;
            } else if (off > tol) {
                return FALSE; /* an increasing value off the grid: the spacing is not uniform */
            } else {
                consistent++;
            }
        }
    }
    if (consistent < 3)
        return FALSE;
    for (int k = 0; k < nt; k++) {
        times[k] = 0;
        for (int z = 0; z < nz; z++)
            times[k] += t0[z] + frames[order[z * nt + k]].temporal_index * dt;
        times[k] /= nz;
    }
    double first = times[0];
    for (int k = 0; k < nt; k++)
        times[k] -= first;
    *dt_out = dt;
    return TRUE;
}

/* "AcquisitionTime malformed in 3 files, missing in 1 file" (empty when nothing to say). */
static void describe(GString *s, int source, const source_report *r, const char *unit_one,
                     const char *unit)
{
    int parts = 0;
    const struct {
        int count;
        const char *what;
    } items[] = {{r->malformed, N_("malformed")},
                 {r->missing, N_("missing")},
                 {r->not_increasing, N_("repeated or not increasing")}};
    for (gsize i = 0; i < G_N_ELEMENTS(items); i++) {
        if (items[i].count == 0)
            continue;
        g_string_append(s, parts++ ? ", " : (s->len ? "; " : ""));
        if (parts == 1)
            g_string_append_printf(s, "%s ", source_names[source]);
        g_string_append_printf(s, _("%s in %d %s"), _(items[i].what), items[i].count,
                               items[i].count == 1 ? unit_one : unit);
    }
}

gboolean fm_dicom_times_choose(const fm_dicom_frame_time *frames, int nz, int nt,
                               const char *folder, fm_dicom_times *out, char **message)
{
    memset(out, 0, sizeof *out);
    *message = NULL;
    const int n = nz * nt;
    out->order = g_new(int, n);
    out->times_s = g_new0(double, MAX(nt, 1));
    if (nt < 2) {
        for (int i = 0; i < n; i++)
            out->order[i] = i;
        out->source = g_strdup("none");
        out->source_id = -1;
        return TRUE;
    }
    /* Frames that share a file are frames of an enhanced object, not files. */
    gboolean per_file = TRUE;
    for (int i = 1; i < n && per_file; i++)
        per_file = g_strcmp0(frames[i].file, frames[i - 1].file) != 0;
    const char *unit = per_file ? _("files") : _("frames");
    const char *unit_one = per_file ? _("file") : _("frame");
    const gboolean by_index = index_orders(frames, nz, nt);
    source_report reports[FM_DICOM_N_TIME_SOURCES];
    memset(reports, 0, sizeof reports);
    int chosen = -1;
    for (int s = 0; s < FM_DICOM_N_TIME_SOURCES && chosen < 0; s++) {
        source_report *r = &reports[s];
        r->first_bad = -1;
        for (int i = 0; i < n; i++) {
            r->ok += frames[i].state[s] == FM_DICOM_TIME_OK;
            r->malformed += frames[i].state[s] == FM_DICOM_TIME_MALFORMED;
            r->missing += frames[i].state[s] == FM_DICOM_TIME_MISSING;
            if (frames[i].state[s] != FM_DICOM_TIME_OK && r->first_bad < 0)
                r->first_bad = i;
        }
        if (r->ok == 0 && r->malformed == 0)
            r->missing = 0; /* an attribute this series does not use at all is no problem */
        if (r->ok == n &&
            try_complete(frames, nz, nt, s, by_index, folder, out->order, out->times_s, r))
            chosen = s;
    }
    double dt = 0;
    if (chosen < 0 && by_index) {
        order_slices(frames, nz, nt, 0, TRUE, out->order);
        for (int s = 0; s < FM_DICOM_N_TIME_SOURCES && chosen < 0; s++) {
            source_report trial = reports[s];
            if (reports[s].ok >= 3 && !reports[s].equal &&
                try_uniform(frames, nz, nt, s, out->order, out->times_s, &dt, &trial)) {
                g_free(reports[s].going_back);
                reports[s] = trial;
                reports[s].going_back = NULL;
                chosen = s;
                out->uniform_rule = TRUE;
            }
        }
    }
    GString *problems = g_string_new(NULL);
    int last = chosen < 0 ? FM_DICOM_N_TIME_SOURCES - 1 : chosen;
    for (int s = 0; s <= last; s++)
        if (s < chosen || out->uniform_rule || chosen < 0)
            describe(problems, s, &reports[s], unit_one, unit);
    if (chosen >= 0) {
        out->source_id = chosen;
        out->source = out->uniform_rule ? g_strdup_printf(_("uniform %.6g s spacing of %s"), dt,
                                                          source_names[chosen])
                                        : g_strdup(source_names[chosen]);
        if (problems->len)
            out->note = g_strdup_printf(_("frame times from %s: %s"), out->source, problems->str);
    } else {
        const char *going_back = NULL;
        for (int s = 0; s < FM_DICOM_N_TIME_SOURCES && !going_back; s++)
            going_back = reports[s].going_back;
        int named = -1;
        for (int s = 0; s < FM_DICOM_N_TIME_SOURCES && named < 0; s++)
            if (reports[s].first_bad >= 0 && (reports[s].ok || reports[s].malformed))
                named = reports[s].first_bad;
        if (going_back)
            *message = g_strdup_printf(_("%s (and no other time attribute times every frame%s)"),
                                       going_back,
                                       by_index ? _(", nor a uniform spacing")
                                                : _("; without TemporalPositionIdentifier the "
                                                    "frames cannot be placed by spacing"));
        else if (problems->len == 0)
            *message = g_strdup_printf(_("%s: %d frames per slice but no frame times "
                                         "(AcquisitionDateTime, AcquisitionTime, TriggerTime and "
                                         "ContentTime are missing or all equal)"),
                                       folder, nt);
        else
            *message = g_strdup_printf(
                _("%s: no frame times to trust: %s (first: %s); no other time attribute times "
                  "every frame%s"),
                folder, problems->str, named >= 0 ? frames[named].file : "?",
                by_index ? _(", nor a uniform spacing")
                         : _(", and without TemporalPositionIdentifier the frames cannot be "
                             "placed by spacing"));
        fm_dicom_times_clear(out);
    }
    for (int s = 0; s < FM_DICOM_N_TIME_SOURCES; s++)
        g_free(reports[s].going_back);
    g_string_free(problems, TRUE);
    return chosen >= 0;
}
