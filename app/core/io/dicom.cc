/* DICOM series folders via DCMTK (the project's one C++ file) behind a C API; test series writer.
 */

#include "dcmtk/config/osconfig.h"
#include "dcmtk/dcmdata/dctk.h"
#include "dcmtk/oflog/oflog.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <glib/gi18n.h>
#include <glib/gstdio.h>

extern "C" {
#include "dicom.h"
#include "app/core/error.h"
}

namespace
{

/* Slice positions closer than this (mm) are one slice: positions are decimal strings of at
 * most 16 characters, so rounding differs by ~1e-6 mm while real slices are >= 0.1 mm apart. */
const double kSameSliceMm = 0.01;

enum TimeSource { TIME_ACQUISITION, TIME_TRIGGER, TIME_CONTENT, N_TIME_SOURCES };
const char *const kTimeSourceNames[N_TIME_SOURCES] = {"AcquisitionTime", "TriggerTime",
                                                      "ContentTime"};

/* One 2-D frame: a classic single-frame file, or one frame of an enhanced object. */
struct Frame {
    std::string file;
    int frame_in_file = 0;
    std::string series;
    std::string modality;
    int rows = 0, cols = 0;
    double pos[3] = {0, 0, 0};
    double iop[6] = {1, 0, 0, 0, 1, 0};
    double spacing[2] = {1, 1}; /* PixelSpacing: between rows (y), between columns (x) */
    double slice_step = 0;      /* SpacingBetweenSlices, else SliceThickness */
    double slope = 1, intercept = 0;
    bool has_time[N_TIME_SOURCES] = {false, false, false};
    double time[N_TIME_SOURCES] = {0, 0, 0};
    long temporal_index = -1;
    double d = 0; /* position along the slice normal */
};

void quiet_dcmtk()
{
    static gsize done = 0;
    if (g_once_init_enter(&done)) {
        OFLog::configure(OFLogger::FATAL_LOG_LEVEL); /* errors reach the user as GErrors */
        g_once_init_leave(&done, 1);
    }
}

bool get_f64(DcmItem *item, const DcmTagKey &key, double *out, int n)
{
    if (item == nullptr)
        return false;
    for (int i = 0; i < n; i++) {
        Float64 v;
        if (item->findAndGetFloat64(key, v, i).bad() || !std::isfinite(v))
            return false;
        out[i] = v;
    }
    return true;
}

std::string get_str(DcmItem *item, const DcmTagKey &key)
{
    OFString s;
    if (item != nullptr && item->findAndGetOFString(key, s).good())
        return std::string(s.c_str());
    return std::string();
}

/* Seconds since an arbitrary epoch from DA "YYYYMMDD" (may be empty) and TM "HHMMSS.frac"
 * (or the retired "HH:MM:SS.frac"); a date keeps series across midnight in order. */
bool parse_date_time(const std::string &da, const std::string &tm, double *seconds)
{
    std::string t;
    for (char c : tm)
        if (c != ':' && c != ' ')
            t += c;
    if (t.size() < 2)
        return false;
    double hh = g_ascii_strtod(t.substr(0, 2).c_str(), nullptr);
    double mm = t.size() >= 4 ? g_ascii_strtod(t.substr(2, 2).c_str(), nullptr) : 0;
    double ss = t.size() >= 6 ? g_ascii_strtod(t.substr(4).c_str(), nullptr) : 0;
    double day = 0;
    if (da.size() >= 8) {
        int y = atoi(da.substr(0, 4).c_str()), m = atoi(da.substr(4, 2).c_str()),
            dd = atoi(da.substr(6, 2).c_str());
        if (g_date_valid_dmy((GDateDay)dd, (GDateMonth)m, (GDateYear)y)) {
            GDate *g = g_date_new_dmy((GDateDay)dd, (GDateMonth)m, (GDateYear)y);
            day = g_date_get_julian(g);
            g_date_free(g);
        }
    }
    *seconds = day * 86400.0 + hh * 3600.0 + mm * 60.0 + ss;
    return std::isfinite(*seconds);
}

/* DT "YYYYMMDDHHMMSS.frac[&ZZXX]"; the offset is ignored (one series, one scanner clock). */
bool parse_dt(const std::string &dt, double *seconds)
{
    if (dt.size() < 10)
        return false;
    std::string v = dt.substr(0, dt.find_first_of("+-&"));
    return parse_date_time(v.substr(0, 8), v.substr(8), seconds);
}

/* Attributes valid for every frame of a file: top level, overridden by the shared functional
 * groups of enhanced objects, overridden again per frame. */
void read_geometry(DcmItem *level, Frame *f)
{
    DcmItem *sub = nullptr;
    get_f64(level, DCM_ImagePositionPatient, f->pos, 3);
    get_f64(level, DCM_ImageOrientationPatient, f->iop, 6);
    get_f64(level, DCM_PixelSpacing, f->spacing, 2);
    double step;
    if (get_f64(level, DCM_SpacingBetweenSlices, &step, 1) ||
        (f->slice_step == 0 && get_f64(level, DCM_SliceThickness, &step, 1)))
        f->slice_step = std::fabs(step);
    get_f64(level, DCM_RescaleSlope, &f->slope, 1);
    get_f64(level, DCM_RescaleIntercept, &f->intercept, 1);
    if (level->findAndGetSequenceItem(DCM_PlanePositionSequence, sub).good())
        get_f64(sub, DCM_ImagePositionPatient, f->pos, 3);
    if (level->findAndGetSequenceItem(DCM_PlaneOrientationSequence, sub).good())
        get_f64(sub, DCM_ImageOrientationPatient, f->iop, 6);
    if (level->findAndGetSequenceItem(DCM_PixelMeasuresSequence, sub).good()) {
        get_f64(sub, DCM_PixelSpacing, f->spacing, 2);
        if (get_f64(sub, DCM_SpacingBetweenSlices, &step, 1) ||
            get_f64(sub, DCM_SliceThickness, &step, 1))
            f->slice_step = std::fabs(step);
    }
    if (level->findAndGetSequenceItem(DCM_PixelValueTransformationSequence, sub).good()) {
        get_f64(sub, DCM_RescaleSlope, &f->slope, 1);
        get_f64(sub, DCM_RescaleIntercept, &f->intercept, 1);
    }
}

void read_classic_times(DcmItem *ds, Frame *f)
{
    double s;
    std::string adt = get_str(ds, DCM_AcquisitionDateTime);
    if (!adt.empty() && parse_dt(adt, &s))
        f->time[TIME_ACQUISITION] = s, f->has_time[TIME_ACQUISITION] = true;
    else if (parse_date_time(get_str(ds, DCM_AcquisitionDate), get_str(ds, DCM_AcquisitionTime),
                             &s))
        f->time[TIME_ACQUISITION] = s, f->has_time[TIME_ACQUISITION] = true;
    double trigger_ms;
    if (get_f64(ds, DCM_TriggerTime, &trigger_ms, 1))
        f->time[TIME_TRIGGER] = trigger_ms * 1e-3, f->has_time[TIME_TRIGGER] = true;
    if (parse_date_time(get_str(ds, DCM_ContentDate), get_str(ds, DCM_ContentTime), &s))
        f->time[TIME_CONTENT] = s, f->has_time[TIME_CONTENT] = true;
    Sint32 v;
    if (ds->findAndGetSint32(DCM_TemporalPositionIdentifier, v).good())
        f->temporal_index = v;
}

/* Files without the Part-10 preamble are not ours to guess at (text, images, DICOMDIR-less
 * raw streams): they are skipped and counted. */
bool has_dicm_magic(const char *path)
{
    FILE *fp = g_fopen(path, "rb");
    if (fp == nullptr)
        return false;
    char buf[132];
    size_t n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    return n == sizeof buf && memcmp(buf + 128, "DICM", 4) == 0;
}

bool fail(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
bool fail(GError **error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error_literal(error, FM_ERROR, FM_ERROR_BAD_INPUT, msg);
    g_free(msg);
    return false;
}

/* Loads a file; a failed parse that already reached PixelData is a truncated pixel block. */
bool load(DcmFileFormat &ff, const std::string &path, GError **error)
{
    OFCondition st = ff.loadFile(path.c_str());
    if (st.good())
        return true;
    if (ff.getDataset()->tagExists(DCM_PixelData))
        return fail(error, _("%s: truncated pixel data"), path.c_str());
    return fail(error, _("%s: damaged DICOM file (%s)"), path.c_str(), st.text());
}

/* Reads one file's frames (header only; pixels are read in the second pass). */
bool scan_file(const std::string &path, std::vector<Frame> &frames, GError **error)
{
    DcmFileFormat ff;
    if (!load(ff, path, error))
        return false;
    DcmDataset *ds = ff.getDataset();
    Frame base;
    base.file = path;
    base.series = get_str(ds, DCM_SeriesInstanceUID);
    base.modality = get_str(ds, DCM_Modality);
    Uint16 rows = 0, cols = 0;
    ds->findAndGetUint16(DCM_Rows, rows);
    ds->findAndGetUint16(DCM_Columns, cols);
    base.rows = rows;
    base.cols = cols;
    if (!ds->tagExists(DCM_PixelData))
        return true; /* presentation states, reports, ... are not images of the series */
    if (rows == 0 || cols == 0)
        return fail(error, _("%s: image without Rows/Columns"), path.c_str());
    read_geometry(ds, &base);
    read_classic_times(ds, &base);
    Sint32 n_frames = 1;
    ds->findAndGetSint32(DCM_NumberOfFrames, n_frames);
    DcmItem *shared = nullptr;
    ds->findAndGetSequenceItem(DCM_SharedFunctionalGroupsSequence, shared);
    if (shared != nullptr)
        read_geometry(shared, &base);
    DcmSequenceOfItems *per_frame = nullptr;
    ds->findAndGetSequence(DCM_PerFrameFunctionalGroupsSequence, per_frame);
    if (n_frames <= 1 && per_frame == nullptr) {
        frames.push_back(base);
        return true;
    }
    if (per_frame == nullptr || (Sint32)per_frame->card() != n_frames)
        return fail(error,
                    _("%s: %d frames but %lu per-frame functional groups (positions unknown)"),
                    path.c_str(), (int)n_frames, per_frame ? per_frame->card() : 0UL);
    for (Sint32 i = 0; i < n_frames; i++) {
        Frame f = base;
        f.frame_in_file = i;
        for (int s = 0; s < N_TIME_SOURCES; s++)
            f.has_time[s] = false;
        DcmItem *group = per_frame->getItem((unsigned long)i);
        read_geometry(group, &f);
        DcmItem *content = nullptr;
        if (group->findAndGetSequenceItem(DCM_FrameContentSequence, content).good()) {
            double s;
            if (parse_dt(get_str(content, DCM_FrameAcquisitionDateTime), &s))
                f.time[TIME_ACQUISITION] = s, f.has_time[TIME_ACQUISITION] = true;
            else if (parse_dt(get_str(content, DCM_FrameReferenceDateTime), &s))
                f.time[TIME_CONTENT] = s, f.has_time[TIME_CONTENT] = true;
            Uint32 idx;
            if (content->findAndGetUint32(DCM_TemporalPositionIndex, idx).good())
                f.temporal_index = (long)idx;
        }
        DcmItem *cardiac = nullptr;
        double trigger_ms;
        if (group->findAndGetSequenceItem(DCM_CardiacSynchronizationSequence, cardiac).good() &&
            get_f64(cardiac, DCM_NominalCardiacTriggerDelayTime, &trigger_ms, 1))
            f.time[TIME_TRIGGER] = trigger_ms * 1e-3, f.has_time[TIME_TRIGGER] = true;
        frames.push_back(f);
    }
    return true;
}

/* Progress over the two passes (headers: first 30 %, pixels: the rest) and cancel, both
 * optional: a series of thousands of files takes seconds to read. */
struct Progress {
    void (*fn)(double fraction, gpointer user);
    gpointer user;
    GCancellable *cancel;
    bool tick(double fraction, GError **error) const
    {
        if (fn != nullptr)
            fn(fraction, user);
        return !g_cancellable_set_error_if_cancelled(cancel, error);
    }
};

/* Collects the frames of every DICOM file in folder; skipped counts the non-DICOM files. */
bool scan_folder(const char *folder, std::vector<Frame> &frames, int *skipped, int *n_files,
                 const Progress &progress, GError **error)
{
    quiet_dcmtk();
    GError *local = nullptr;
    GDir *dir = g_dir_open(folder, 0, &local);
    if (dir == nullptr) {
        fail(error, _("%s: cannot open folder: %s"), folder, local->message);
        g_error_free(local);
        return false;
    }
    std::vector<std::string> names;
    for (const char *name; (name = g_dir_read_name(dir)) != nullptr;)
        names.push_back(name);
    g_dir_close(dir);
    std::sort(names.begin(), names.end()); /* deterministic messages whatever readdir says */
    *skipped = 0;
    *n_files = 0;
    size_t done = 0;
    for (const std::string &name : names) {
        if (done++ % 64 == 0 && !progress.tick(0.3 * (double)done / names.size(), error))
            return false;
        char *path = g_build_filename(folder, name.c_str(), nullptr);
        std::string p(path);
        g_free(path);
        if (!g_file_test(p.c_str(), G_FILE_TEST_IS_REGULAR))
            continue;
        if (!has_dicm_magic(p.c_str())) {
            ++*skipped;
            continue;
        }
        if (!scan_file(p, frames, error))
            return false;
        ++*n_files;
    }
    if (frames.empty())
        return fail(error, _("%s: no DICOM images in this folder (%d other files)"), folder,
                    *skipped);
    return true;
}

std::vector<std::string> series_of(const std::vector<Frame> &frames)
{
    std::vector<std::string> uids;
    for (const Frame &f : frames)
        if (std::find(uids.begin(), uids.end(), f.series) == uids.end())
            uids.push_back(f.series);
    std::sort(uids.begin(), uids.end());
    return uids;
}

void cross(const double *a, const double *b, double *out)
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* Picks the first time source every frame has and whose values differ between frames. */
int choose_time_source(const std::vector<Frame> &frames)
{
    for (int s = 0; s < N_TIME_SOURCES; s++) {
        bool all = true, varies = false;
        for (const Frame &f : frames) {
            all = all && f.has_time[s];
            varies = varies || (f.has_time[s] && f.time[s] != frames[0].time[s]);
        }
        if (all && varies)
            return s;
    }
    return -1;
}

/* Copies one frame's stored values, scaled, into dst (cols x rows floats). */
bool copy_pixels(DcmDataset *ds, const Frame &f, float *dst, GError **error)
{
    E_TransferSyntax xfer = ds->getOriginalXfer();
    if (DcmXfer(xfer).isEncapsulated())
        return fail(error,
                    _("%s: compressed transfer syntax %s is not supported (decompress "
                      "it first, e.g. with dcmdjpeg)"),
                    f.file.c_str(), DcmXfer(xfer).getXferName());
    Uint16 bits = 16, stored = 16, signed_px = 0, spp = 1;
    ds->findAndGetUint16(DCM_BitsAllocated, bits);
    ds->findAndGetUint16(DCM_BitsStored, stored);
    ds->findAndGetUint16(DCM_PixelRepresentation, signed_px);
    ds->findAndGetUint16(DCM_SamplesPerPixel, spp);
    if (spp != 1 || (bits != 8 && bits != 16))
        return fail(error,
                    _("%s: %u samples of %u bits per pixel; only single-channel 8 or "
                      "16-bit images are supported"),
                    f.file.c_str(), spp, bits);
    gsize plane = (gsize)f.rows * f.cols;
    gsize need = plane * (f.frame_in_file + 1);
    unsigned long count = 0;
    const Uint8 *p8 = nullptr;
    const Uint16 *p16 = nullptr;
    OFCondition st = bits == 8 ? ds->findAndGetUint8Array(DCM_PixelData, p8, &count)
                               : ds->findAndGetUint16Array(DCM_PixelData, p16, &count);
    if (st.bad() || count < need)
        return fail(error, _("%s: truncated pixel data (%lu of %lu samples)"), f.file.c_str(),
                    st.bad() ? 0UL : count, (unsigned long)need);
    gsize off = plane * f.frame_in_file;
    int shift = bits - std::min<int>(stored, bits);
    for (gsize i = 0; i < plane; i++) {
        unsigned raw = bits == 8 ? p8[off + i] : p16[off + i];
        double v;
        /* Stored bits sit at the bottom; sign-extend them for signed pixels (PS3.5 8.1.1). */
        if (signed_px)
            v = bits == 8 ? (double)((Sint8)(raw << shift) >> shift)
                          : (double)((Sint16)(raw << shift) >> shift);
        else
            v = (double)(raw & ((1u << (bits - shift)) - 1u));
        dst[i] = (float)(v * f.slope + f.intercept);
    }
    return true;
}

} // namespace

extern "C" fm_dataset *fm_dicom_read(const char *folder, const char *series_uid, GError **error)
{
    return fm_dicom_read_progress(folder, series_uid, nullptr, nullptr, nullptr, error);
}

extern "C" fm_dataset *fm_dicom_read_progress(const char *folder, const char *series_uid,
                                              void (*progress)(double fraction, gpointer user),
                                              gpointer user, GCancellable *cancellable,
                                              GError **error)
{
    const Progress prog{progress, user, cancellable};
    std::vector<Frame> all;
    int skipped = 0, n_files = 0;
    if (!scan_folder(folder, all, &skipped, &n_files, prog, error))
        return nullptr;
    std::vector<std::string> uids = series_of(all);
    std::string uid;
    if (series_uid != nullptr && *series_uid != '\0') {
        if (std::find(uids.begin(), uids.end(), series_uid) == uids.end()) {
            fail(error, _("%s: no series %s in this folder (it holds %zu)"), folder, series_uid,
                 uids.size());
            return nullptr;
        }
        uid = series_uid;
    } else if (uids.size() > 1) {
        std::string list;
        for (const std::string &u : uids)
            list += (list.empty() ? "" : ", ") + u;
        fail(error, _("%s: folder holds %zu series; choose one (%s)"), folder, uids.size(),
             list.c_str());
        return nullptr;
    } else {
        uid = uids[0];
    }
    std::vector<Frame> frames;
    for (const Frame &f : all)
        if (f.series == uid)
            frames.push_back(f);

    const Frame &first = frames[0];
    for (const Frame &f : frames) {
        if (f.rows != first.rows || f.cols != first.cols) {
            fail(error, _("%s: mixed image sizes: %s is %dx%d, %s is %dx%d"), folder,
                 f.file.c_str(), f.cols, f.rows, first.file.c_str(), first.cols, first.rows);
            return nullptr;
        }
        for (int i = 0; i < 6; i++) {
            if (std::fabs(f.iop[i] - first.iop[i]) > 1e-3) {
                fail(error, _("%s: mixed slice orientations: %s differs from %s"), folder,
                     f.file.c_str(), first.file.c_str());
                return nullptr;
            }
        }
    }
    double normal[3];
    cross(first.iop, first.iop + 3, normal);
    for (Frame &f : frames)
        f.d = f.pos[0] * normal[0] + f.pos[1] * normal[1] + f.pos[2] * normal[2];
    std::stable_sort(frames.begin(), frames.end(),
                     [](const Frame &a, const Frame &b) { return a.d < b.d; });
    /* Slices: runs of frames at one position along the normal. */
    std::vector<size_t> starts = {0};
    for (size_t i = 1; i < frames.size(); i++)
        if (frames[i].d - frames[starts.back()].d > kSameSliceMm)
            starts.push_back(i);
    int nz = (int)starts.size();
    starts.push_back(frames.size());
    int nt = (int)(starts[1] - starts[0]);
    for (int z = 1; z < nz; z++) {
        int count = (int)(starts[z + 1] - starts[z]);
        if (count != nt) {
            fail(error,
                 _("%s: unequal frame counts per slice position: %d at %.3f mm, %d at "
                   "%.3f mm"),
                 folder, nt, frames[starts[0]].d, count, frames[starts[z]].d);
            return nullptr;
        }
    }
    int source = nt > 1 ? choose_time_source(frames) : TIME_ACQUISITION;
    if (nt > 1 && source < 0) {
        fail(error,
             _("%s: %d frames per slice but no frame times (AcquisitionTime, TriggerTime "
               "and ContentTime are missing or all equal)"),
             folder, nt);
        return nullptr;
    }
    bool by_index = true;
    for (const Frame &f : frames)
        by_index = by_index && f.temporal_index >= 0;
    auto time_of = [source](const Frame &f) { return f.has_time[source] ? f.time[source] : 0.0; };
    for (int z = 0; z < nz && nt > 1; z++) {
        auto b = frames.begin() + (long)starts[z], e = frames.begin() + (long)starts[z + 1];
        if (by_index)
            std::stable_sort(b, e, [](const Frame &p, const Frame &q) {
                return p.temporal_index < q.temporal_index;
            });
        else
            std::stable_sort(
                b, e, [&](const Frame &p, const Frame &q) { return time_of(p) < time_of(q); });
        for (auto it = b + 1; it != e; ++it) {
            if (!(time_of(*it) > time_of(*(it - 1)))) {
                fail(error,
                     _("%s: non-monotonic times at slice %d: %s (%s %.3f s) does not "
                       "follow %s (%.3f s)"),
                     folder, z + 1, it->file.c_str(), kTimeSourceNames[source],
                     time_of(*it) - time_of(frames[0]), (it - 1)->file.c_str(),
                     time_of(*(it - 1)) - time_of(frames[0]));
                return nullptr;
            }
        }
    }
    /* Frame k's time is the mean over slices; the phases must not overlap in time. */
    std::vector<double> times(nt, 0.0);
    for (int k = 0; k < nt; k++) {
        for (int z = 0; z < nz; z++)
            times[k] += time_of(frames[starts[z] + k]);
        times[k] /= nz;
    }
    for (int k = 1; k < nt; k++) {
        if (!(times[k] > times[k - 1])) {
            fail(error, _("%s: non-monotonic times: frame %d (%.3f s) is not after frame %d"),
                 folder, k + 1, times[k] - times[0], k);
            return nullptr;
        }
    }
    double t0 = times[0];
    for (double &t : times)
        t -= t0;

    int nx = first.cols, ny = first.rows;
    gsize sizes[4] = {(gsize)nx, (gsize)ny, (gsize)nz, (gsize)nt};
    const char *const names[4] = {"x", "y", "z", "t"};
    g_autoptr(fm_dataset) out = fm_dataset_new(FM_PIXEL_F32, 4, sizes, names);
    /* Pixels: each file once, all of its frames of this series. */
    std::map<std::string, std::vector<std::pair<size_t, int>>> by_file; /* file -> (frame, z*,t) */
    for (int z = 0; z < nz; z++)
        for (int k = 0; k < nt; k++)
            by_file[frames[starts[z] + k].file].push_back({starts[z] + k, k * nz + z});
    gsize plane = (gsize)nx * ny;
    size_t files_read = 0;
    for (const auto &entry : by_file) {
        if (files_read++ % 16 == 0 &&
            !prog.tick(0.3 + 0.7 * (double)files_read / by_file.size(), error))
            return nullptr;
        DcmFileFormat ff;
        if (!load(ff, entry.first, error))
            return nullptr;
        for (const auto &job : entry.second)
            if (!copy_pixels(ff.getDataset(), frames[job.first],
                             (float *)out->data + plane * job.second, error))
                return nullptr;
    }

    /* Affine, DICOM LPS -> NIfTI RAS (negate the first two rows). */
    const double *row = first.iop, *col = first.iop + 3;
    double dz_vec[3];
    const Frame &last = frames[starts[nz - 1]];
    double z_step = first.slice_step > 0 ? first.slice_step : 1.0;
    for (int i = 0; i < 3; i++)
        dz_vec[i] = nz > 1 ? (last.pos[i] - frames[0].pos[i]) / (nz - 1) : normal[i] * z_step;
    if (nz > 1)
        z_step = (last.d - frames[0].d) / (nz - 1);
    double affine[16] = {0};
    for (int i = 0; i < 3; i++) {
        double sign = i < 2 ? -1.0 : 1.0;
        affine[i * 4 + 0] = sign * row[i] * first.spacing[1];
        affine[i * 4 + 1] = sign * col[i] * first.spacing[0];
        affine[i * 4 + 2] = sign * dz_vec[i];
        affine[i * 4 + 3] = sign * frames[0].pos[i];
    }
    affine[15] = 1.0;
    double spacing[3] = {first.spacing[1], first.spacing[0], z_step};
    for (int d = 0; d < 3; d++) {
        out->dims[d].spacing = spacing[d];
        out->dims[d].unit = g_strdup("mm");
    }
    out->dims[3].unit = g_strdup("s");
    fm_dataset_set_frame_times(out, times.data(), nt);
    fm_dataset_set_affine(out, affine);
    fm_dataset_set_meta(out, "format", "dicom");
    fm_dataset_set_meta(out, "dicom_series_uid", uid.c_str());
    char buf[32];
    g_snprintf(buf, sizeof buf, "%d", n_files);
    fm_dataset_set_meta(out, "dicom_files", buf);
    g_snprintf(buf, sizeof buf, "%d", skipped);
    fm_dataset_set_meta(out, "dicom_skipped_files", buf);
    if (!first.modality.empty())
        fm_dataset_set_meta(out, "modality", first.modality.c_str());
    fm_dataset_set_meta(out, "dicom_time_source", nt > 1 ? kTimeSourceNames[source] : "none");
    out->source_path = g_canonicalize_filename(folder, nullptr);
    return (fm_dataset *)g_steal_pointer(&out);
}

extern "C" fm_dataset *fm_dicom_read_file_series(const char *file,
                                                 void (*progress)(double fraction, gpointer user),
                                                 gpointer user, GCancellable *cancellable,
                                                 GError **error)
{
    quiet_dcmtk();
    DcmFileFormat ff;
    /* the header is enough: the series UID comes long before the pixels */
    if (!ff.loadFile(file, EXS_Unknown, EGL_noChange, 4096).good() &&
        !ff.getDataset()->tagExists(DCM_SeriesInstanceUID)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: damaged DICOM file"), file);
        return nullptr;
    }
    std::string uid = get_str(ff.getDataset(), DCM_SeriesInstanceUID);
    g_autofree char *folder = g_path_get_dirname(file);
    return fm_dicom_read_progress(folder, uid.empty() ? nullptr : uid.c_str(), progress, user,
                                  cancellable, error);
}

extern "C" char **fm_dicom_list_series(const char *folder, GError **error)
{
    std::vector<Frame> all;
    int skipped = 0, n_files = 0;
    if (!scan_folder(folder, all, &skipped, &n_files, Progress{nullptr, nullptr, nullptr}, error))
        return nullptr;
    std::vector<std::string> uids = series_of(all);
    char **out = g_new0(char *, uids.size() + 1);
    for (size_t i = 0; i < uids.size(); i++)
        out[i] = g_strdup(uids[i].c_str());
    return out;
}

extern "C" gboolean fm_dicom_available(void)
{
    return TRUE;
}

/* ---- Test support: a synthetic series with known geometry, times and values. ---- */

extern "C" guint16 fm_dicom_test_stored_value(int x, int y, int z, int t)
{
    return (guint16)((x + 7 * y + 131 * z + 1009 * t) % 30000);
}

namespace
{

std::string ds_list(const double *v, int n)
{
    std::string s;
    for (int i = 0; i < n; i++) {
        char buf[32];
        g_snprintf(buf, sizeof buf, "%.8g", v[i]); /* DS values hold at most 16 characters */
        s += (i ? "\\" : "") + std::string(buf);
    }
    return s;
}

std::string tm_string(double seconds_after_10am)
{
    double s = 36000.0 + seconds_after_10am;
    int hh = (int)(s / 3600), mm = (int)((s - hh * 3600) / 60);
    char buf[32];
    g_snprintf(buf, sizeof buf, "%02d%02d%09.6f", hh, mm, s - hh * 3600 - mm * 60);
    return buf;
}

struct TestGeometry {
    double row[3], col[3], normal[3], origin[3], spacing[2], slice;
};

void test_position(const TestGeometry &g, int z, double *pos)
{
    for (int i = 0; i < 3; i++)
        pos[i] = g.origin[i] + z * g.slice * g.normal[i];
}

void put_image_module(DcmDataset *ds, const fm_dicom_test_series *spec, const char *sop_class,
                      const char *series_uid)
{
    char uid[100];
    ds->putAndInsertString(DCM_SOPClassUID, sop_class);
    ds->putAndInsertString(DCM_SOPInstanceUID, dcmGenerateUniqueIdentifier(uid));
    ds->putAndInsertString(DCM_StudyInstanceUID, "1.2.826.0.1.3680043.10.1234.1");
    ds->putAndInsertString(DCM_SeriesInstanceUID, series_uid);
    ds->putAndInsertString(DCM_Modality, "MR");
    ds->putAndInsertString(DCM_PatientName, "Phantom^DCE");
    ds->putAndInsertUint16(DCM_Rows, (Uint16)spec->ny);
    ds->putAndInsertUint16(DCM_Columns, (Uint16)spec->nx);
    ds->putAndInsertUint16(DCM_SamplesPerPixel, 1);
    ds->putAndInsertString(DCM_PhotometricInterpretation, "MONOCHROME2");
    ds->putAndInsertUint16(DCM_BitsAllocated, 16);
    ds->putAndInsertUint16(DCM_BitsStored, 16);
    ds->putAndInsertUint16(DCM_HighBit, 15);
    ds->putAndInsertUint16(DCM_PixelRepresentation, 0);
}

void fill_frame(const fm_dicom_test_series *spec, int z, int t, Uint16 *dst)
{
    for (int y = 0; y < spec->ny; y++)
        for (int x = 0; x < spec->nx; x++)
            dst[y * spec->nx + x] = fm_dicom_test_stored_value(x, y, z, t);
}

bool save(DcmFileFormat &ff, const std::string &path, GError **error)
{
    OFCondition st = ff.saveFile(path.c_str(), EXS_LittleEndianExplicit);
    if (st.good())
        return true;
    g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write: %s"), path.c_str(), st.text());
    return false;
}

} // namespace

extern "C" gboolean fm_dicom_write_test_series(const char *dir, const fm_dicom_test_series *spec,
                                               GError **error)
{
    quiet_dcmtk();
    if (g_mkdir_with_parents(dir, 0755) != 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot create folder"), dir);
        return FALSE;
    }
    const double a = spec->tilt_deg * G_PI / 180.0;
    TestGeometry g = {{1, 0, 0},
                      {0, std::cos(a), std::sin(a)},
                      {0, -std::sin(a), std::cos(a)},
                      {-10.5, -20.25, 30.0},
                      {spec->pixel_spacing_mm[0] > 0 ? spec->pixel_spacing_mm[0] : 1.0,
                       spec->pixel_spacing_mm[1] > 0 ? spec->pixel_spacing_mm[1] : 1.0},
                      spec->slice_spacing_mm > 0 ? spec->slice_spacing_mm : 1.0};
    const char *series = spec->series_uid ? spec->series_uid : "1.2.826.0.1.3680043.10.1234.2";
    const char *prefix = spec->file_prefix ? spec->file_prefix : "IM";
    int n = spec->nz * spec->nt;
    std::vector<int> perm(n);
    for (int i = 0; i < n; i++)
        perm[i] = i;
    GRand *rng = g_rand_new_with_seed(spec->shuffle_seed);
    for (int i = n - 1; i > 0; i--)
        std::swap(perm[i], perm[g_rand_int_range(rng, 0, i + 1)]);
    g_rand_free(rng);
    double orient[6] = {g.row[0], g.row[1], g.row[2], g.col[0], g.col[1], g.col[2]};
    double spacing_rc[2] = {g.spacing[1], g.spacing[0]}; /* PixelSpacing is (row, column) */
    double rescale[2] = {spec->slope, spec->intercept};
    gsize plane = (gsize)spec->nx * spec->ny;
    std::vector<Uint16> pixels(plane * (spec->enhanced ? n : 1));

    if (spec->enhanced) {
        DcmFileFormat ff;
        DcmDataset *ds = ff.getDataset();
        put_image_module(ds, spec, UID_EnhancedMRImageStorage, series);
        char buf[16];
        g_snprintf(buf, sizeof buf, "%d", n);
        ds->putAndInsertString(DCM_NumberOfFrames, buf);
        DcmItem *shared = nullptr, *sub = nullptr;
        ds->findOrCreateSequenceItem(DCM_SharedFunctionalGroupsSequence, shared, 0);
        shared->findOrCreateSequenceItem(DCM_PixelMeasuresSequence, sub, 0);
        sub->putAndInsertString(DCM_PixelSpacing, ds_list(spacing_rc, 2).c_str());
        sub->putAndInsertString(DCM_SliceThickness, ds_list(&g.slice, 1).c_str());
        shared->findOrCreateSequenceItem(DCM_PlaneOrientationSequence, sub, 0);
        sub->putAndInsertString(DCM_ImageOrientationPatient, ds_list(orient, 6).c_str());
        shared->findOrCreateSequenceItem(DCM_PixelValueTransformationSequence, sub, 0);
        sub->putAndInsertString(DCM_RescaleSlope, ds_list(&rescale[0], 1).c_str());
        sub->putAndInsertString(DCM_RescaleIntercept, ds_list(&rescale[1], 1).c_str());
        for (int j = 0; j < n; j++) {
            int z = perm[j] % spec->nz, t = perm[j] / spec->nz;
            DcmItem *frame = nullptr;
            ds->findOrCreateSequenceItem(DCM_PerFrameFunctionalGroupsSequence, frame, -2);
            double pos[3];
            test_position(g, z, pos);
            frame->findOrCreateSequenceItem(DCM_PlanePositionSequence, sub, 0);
            sub->putAndInsertString(DCM_ImagePositionPatient, ds_list(pos, 3).c_str());
            frame->findOrCreateSequenceItem(DCM_FrameContentSequence, sub, 0);
            std::string dt = "20261123" + tm_string(spec->frame_times_s[t]);
            sub->putAndInsertString(DCM_FrameAcquisitionDateTime, dt.c_str());
            sub->putAndInsertUint32(DCM_TemporalPositionIndex, (Uint32)(t + 1));
            sub->putAndInsertUint32(DCM_InStackPositionNumber, (Uint32)(z + 1));
            fill_frame(spec, z, t, pixels.data() + plane * j);
        }
        ds->putAndInsertUint16Array(DCM_PixelData, pixels.data(), (unsigned long)pixels.size());
        char *path = g_strdup_printf("%s/%s0000", dir, prefix);
        bool ok = save(ff, path, error);
        g_free(path);
        return ok;
    }
    for (int i = 0; i < n; i++) {
        int z = i % spec->nz, t = i / spec->nz;
        DcmFileFormat ff;
        DcmDataset *ds = ff.getDataset();
        put_image_module(ds, spec, UID_MRImageStorage, series);
        double pos[3];
        test_position(g, z, pos);
        ds->putAndInsertString(DCM_ImagePositionPatient, ds_list(pos, 3).c_str());
        ds->putAndInsertString(DCM_ImageOrientationPatient, ds_list(orient, 6).c_str());
        ds->putAndInsertString(DCM_PixelSpacing, ds_list(spacing_rc, 2).c_str());
        ds->putAndInsertString(DCM_SliceThickness, ds_list(&g.slice, 1).c_str());
        ds->putAndInsertString(DCM_RescaleSlope, ds_list(&rescale[0], 1).c_str());
        ds->putAndInsertString(DCM_RescaleIntercept, ds_list(&rescale[1], 1).c_str());
        std::string tm = tm_string(spec->frame_times_s[t]);
        ds->putAndInsertString(DCM_AcquisitionDate, "20261123");
        ds->putAndInsertString(DCM_AcquisitionTime, tm.c_str());
        ds->putAndInsertString(DCM_ContentDate, "20261123");
        ds->putAndInsertString(DCM_ContentTime, tm.c_str());
        char buf[16];
        g_snprintf(buf, sizeof buf, "%d", perm[i] + 1);
        ds->putAndInsertString(DCM_InstanceNumber, buf);
        if (spec->temporal_index) {
            g_snprintf(buf, sizeof buf, "%d", t + 1);
            ds->putAndInsertString(DCM_TemporalPositionIdentifier, buf);
        }
        fill_frame(spec, z, t, pixels.data());
        ds->putAndInsertUint16Array(DCM_PixelData, pixels.data(), (unsigned long)plane);
        char *path = g_strdup_printf("%s/%s%04d", dir, prefix, perm[i]);
        bool ok = save(ff, path, error);
        g_free(path);
        if (!ok)
            return FALSE;
    }
    return TRUE;
}
