/* DICOM files and series via DCMTK (the project's one C++ file) behind a C API; test writer.
 * Compressed transfer syntaxes are decoded by DCMTK's codecs (JPEG, JPEG-LS, RLE) and, for
 * JPEG 2000, by OpenJPEG (dicom_j2k.c); stored samples become floats in dicom_pixels.c. */

#include "dcmtk/config/osconfig.h"
#include "dcmtk/dcmdata/dctk.h"
#include "dcmtk/dcmdata/dccodec.h"
#include "dcmtk/dcmdata/dcpixseq.h"
#include "dcmtk/dcmdata/dcpxitem.h"
#include "dcmtk/oflog/oflog.h"

#include "app/core/fm_dce_io_config.h"
#if FM_HAVE_DCMTK_CODECS
#include "dcmtk/dcmdata/dcrledrg.h"
#include "dcmtk/dcmdata/dcrleerg.h"
#include "dcmtk/dcmjpeg/djdecode.h"
#include "dcmtk/dcmjpeg/djencode.h"
#include "dcmtk/dcmjpeg/djrplol.h"
#include "dcmtk/dcmjpls/djdecode.h"
#include "dcmtk/dcmjpls/djencode.h"
#include "dcmtk/dcmjpls/djrparam.h"
#endif

#include <memory>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <glib/gi18n.h>
#include <glib/gstdio.h>

extern "C" {
#include "dicom.h"
#include "app/core/error.h"
#include "app/core/io/dicom_j2k.h"
#include "app/core/io/dicom_times.h"
#include "app/core/io/dicom_pixels.h"
}

namespace
{

/* Slice positions closer than this (mm) are one slice: positions are decimal strings of at
 * most 16 characters, so rounding differs by ~1e-6 mm while real slices are >= 0.1 mm apart. */
const double kSameSliceMm = 0.01;

/* Elements longer than this stay on disk while the headers of a folder are scanned. */
const Uint32 kHeaderReadLimit = 4096;

/* The most samples one dataset may hold (8 GiB of float32) and frames one file may declare: a
 * damaged NumberOfFrames or Rows must fail with a message, not exhaust memory. */
const double kMaxSamples = 2147483648.0;
const Sint32 kMaxFramesPerFile = 1000000;

/* One 2-D frame: a classic single-frame file, or one frame of a multi-frame object. */
struct Frame {
    std::string file;
    int frame_in_file = 0;
    int frames_in_file = 1;
    bool per_frame_groups = false; /* an enhanced object: positions and times per frame */
    std::string series;
    std::string sop;
    std::string modality;
    std::string study, frame_of_reference, sop_class; /* for results written back (dicom_write) */
    int rows = 0, cols = 0;
    int samples_per_pixel = 1;
    bool has_pos = false;
    double pos[3] = {0, 0, 0};
    double iop[6] = {1, 0, 0, 0, 1, 0};
    bool has_spacing = false;
    double spacing[2] = {1, 1}; /* PixelSpacing: between rows (y), between columns (x) */
    double slice_step = 0;      /* SpacingBetweenSlices, else SliceThickness */
    double slope = 1, intercept = 0;
    double flip_deg = NAN, tr_ms = NAN; /* FlipAngle, RepetitionTime (MR), when present */
    /* Every candidate time, parsed strictly (dicom_times.c chooses); file set when chosen. */
    fm_dicom_frame_time times = {};
    double d = 0; /* position along the slice normal */
};

/* Once per process: DCMTK's log goes quiet (errors reach the user as GErrors) and its decoders
 * are registered. Registration is global in DCMTK and must happen before any thread decodes. */
void init_dcmtk()
{
    static gsize done = 0;
    if (g_once_init_enter(&done)) {
        OFLog::configure(OFLogger::FATAL_LOG_LEVEL);
        /* Files some writers produce (pydicom's RLE and JPEG test images among them) encode
         * their dataset in implicit VR under an explicit-VR transfer syntax; DCMTK then reads
         * the VRs from its dictionary, as dcmdump's +ui and +uc options do. */
        dcmAcceptUnexpectedImplicitEncoding.set(OFTrue);
        dcmEnableUnknownVRConversion.set(OFTrue);
#if FM_HAVE_DCMTK_CODECS
        /* YCbCr JPEG comes back as RGB (the photometric interpretation says which). */
        DJDecoderRegistration::registerCodecs(EDC_photometricInterpretation);
        DJLSDecoderRegistration::registerCodecs();
        DcmRLEDecoderRegistration::registerCodecs();
#endif
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

/* Attributes valid for every frame of a file: top level, overridden by the shared functional
 * groups of enhanced objects, overridden again per frame. */
void read_geometry(DcmItem *level, Frame *f)
{
    DcmItem *sub = nullptr;
    f->has_pos = get_f64(level, DCM_ImagePositionPatient, f->pos, 3) || f->has_pos;
    get_f64(level, DCM_ImageOrientationPatient, f->iop, 6);
    f->has_spacing = get_f64(level, DCM_PixelSpacing, f->spacing, 2) || f->has_spacing;
    double step;
    if (get_f64(level, DCM_SpacingBetweenSlices, &step, 1) ||
        (f->slice_step == 0 && get_f64(level, DCM_SliceThickness, &step, 1)))
        f->slice_step = std::fabs(step);
    get_f64(level, DCM_RescaleSlope, &f->slope, 1);
    get_f64(level, DCM_RescaleIntercept, &f->intercept, 1);
    /* RT Dose stores its rescale as DoseGridScaling (Gy per stored unit). */
    if (!level->tagExists(DCM_RescaleSlope))
        get_f64(level, DCM_DoseGridScaling, &f->slope, 1);
    if (level->findAndGetSequenceItem(DCM_PlanePositionSequence, sub).good())
        f->has_pos = get_f64(sub, DCM_ImagePositionPatient, f->pos, 3) || f->has_pos;
    if (level->findAndGetSequenceItem(DCM_PlaneOrientationSequence, sub).good())
        get_f64(sub, DCM_ImageOrientationPatient, f->iop, 6);
    if (level->findAndGetSequenceItem(DCM_PixelMeasuresSequence, sub).good()) {
        f->has_spacing = get_f64(sub, DCM_PixelSpacing, f->spacing, 2) || f->has_spacing;
        if (get_f64(sub, DCM_SpacingBetweenSlices, &step, 1) ||
            get_f64(sub, DCM_SliceThickness, &step, 1))
            f->slice_step = std::fabs(step);
    }
    if (level->findAndGetSequenceItem(DCM_PixelValueTransformationSequence, sub).good()) {
        get_f64(sub, DCM_RescaleSlope, &f->slope, 1);
        get_f64(sub, DCM_RescaleIntercept, &f->intercept, 1);
    }
}

/* A DS in milliseconds as seconds, parsed strictly from the text (DCMTK's own conversion
 * reads "12x" as 12). */
fm_dicom_time_state get_ms(DcmItem *item, const DcmTagKey &key, double *seconds)
{
    double ms = 0;
    fm_dicom_time_state st = fm_dicom_parse_ds(get_str(item, key).c_str(), &ms);
    *seconds = ms * 1e-3;
    return st;
}

/* Classic images carry their time in one of several attributes, depending on the scanner and
 * on who wrote the file (QIBA's DCE reference objects, for instance, vary AcquisitionTime);
 * all are kept, parsed strictly, and fm_dicom_times_choose picks the one to trust. */
void read_classic_times(DcmItem *ds, Frame *f)
{
    fm_dicom_frame_time &t = f->times;
    t.temporal_index = -1;
    t.state[FM_DICOM_TIME_ACQUISITION_DATETIME] =
        fm_dicom_parse_dt(get_str(ds, DCM_AcquisitionDateTime).c_str(),
                          &t.seconds[FM_DICOM_TIME_ACQUISITION_DATETIME]);
    t.state[FM_DICOM_TIME_ACQUISITION] = fm_dicom_parse_date_time(
        get_str(ds, DCM_AcquisitionDate).c_str(), get_str(ds, DCM_AcquisitionTime).c_str(),
        &t.seconds[FM_DICOM_TIME_ACQUISITION]);
    t.state[FM_DICOM_TIME_TRIGGER] = get_ms(ds, DCM_TriggerTime, &t.seconds[FM_DICOM_TIME_TRIGGER]);
    t.state[FM_DICOM_TIME_CONTENT] = fm_dicom_parse_date_time(get_str(ds, DCM_ContentDate).c_str(),
                                                              get_str(ds, DCM_ContentTime).c_str(),
                                                              &t.seconds[FM_DICOM_TIME_CONTENT]);
    double index = 0, resolution_s = 0;
    fm_dicom_time_state has_index =
        fm_dicom_parse_ds(get_str(ds, DCM_TemporalPositionIdentifier).c_str(), &index);
    if (has_index == FM_DICOM_TIME_OK && index >= 0 && index == std::floor(index))
        t.temporal_index = (long)index;
    fm_dicom_time_state &tp = t.state[FM_DICOM_TIME_TEMPORAL_POSITION];
    tp = get_ms(ds, DCM_TemporalResolution, &resolution_s);
    if (tp == FM_DICOM_TIME_OK && (t.temporal_index < 1 || !(resolution_s > 0)))
        tp = t.temporal_index < 0 && has_index == FM_DICOM_TIME_MISSING ? FM_DICOM_TIME_MISSING
                                                                        : FM_DICOM_TIME_MALFORMED;
    if (tp == FM_DICOM_TIME_OK)
        t.seconds[FM_DICOM_TIME_TEMPORAL_POSITION] = (t.temporal_index - 1) * resolution_s;
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

/* Loads a file (header_only: long values such as the pixels stay on disk); a failed parse
 * that already reached PixelData is a truncated pixel block. */
bool load(DcmFileFormat &ff, const std::string &path, bool header_only, GError **error)
{
    OFCondition st = header_only
                         ? ff.loadFile(path.c_str(), EXS_Unknown, EGL_noChange, kHeaderReadLimit)
                         : ff.loadFile(path.c_str());
    if (st.good())
        return true;
    if (ff.getDataset()->tagExists(DCM_PixelData))
        return fail(error, _("%s: truncated pixel data"), path.c_str());
    return fail(error, _("%s: damaged DICOM file (%s)"), path.c_str(), st.text());
}

/* Reads one file's frames (header only; pixels are read in the second pass). A file without
 * pixel data (presentation state, report, ...) adds no frame. */
bool scan_file(const std::string &path, std::vector<Frame> &frames, GError **error)
{
    DcmFileFormat ff;
    if (!load(ff, path, true, error))
        return false;
    DcmDataset *ds = ff.getDataset();
    Frame base;
    base.file = path;
    base.series = get_str(ds, DCM_SeriesInstanceUID);
    base.sop = get_str(ds, DCM_SOPInstanceUID);
    base.modality = get_str(ds, DCM_Modality);
    base.study = get_str(ds, DCM_StudyInstanceUID);
    base.frame_of_reference = get_str(ds, DCM_FrameOfReferenceUID);
    base.sop_class = get_str(ds, DCM_SOPClassUID);
    Uint16 rows = 0, cols = 0, spp = 1;
    ds->findAndGetUint16(DCM_Rows, rows);
    ds->findAndGetUint16(DCM_Columns, cols);
    ds->findAndGetUint16(DCM_SamplesPerPixel, spp);
    base.rows = rows;
    base.cols = cols;
    base.samples_per_pixel = spp;
    if (!ds->tagExists(DCM_PixelData))
        return true;
    if (rows == 0 || cols == 0)
        return fail(error, _("%s: image without Rows/Columns"), path.c_str());
    read_geometry(ds, &base);
    get_f64(ds, DCM_FlipAngle, &base.flip_deg, 1);
    get_f64(ds, DCM_RepetitionTime, &base.tr_ms, 1);
    read_classic_times(ds, &base);
    Sint32 n_frames = 1;
    if (ds->findAndGetSint32(DCM_NumberOfFrames, n_frames).bad())
        n_frames = 1;
    if (n_frames < 1 || n_frames > kMaxFramesPerFile ||
        (double)rows * cols * spp * n_frames > kMaxSamples)
        return fail(error, _("%s: NumberOfFrames %d of %ux%u pixels is beyond what Fluxmap reads"),
                    path.c_str(), (int)n_frames, cols, rows);
    base.frames_in_file = n_frames;
    DcmItem *shared = nullptr;
    ds->findAndGetSequenceItem(DCM_SharedFunctionalGroupsSequence, shared);
    if (shared != nullptr)
        read_geometry(shared, &base);
    DcmSequenceOfItems *per_frame = nullptr;
    ds->findAndGetSequence(DCM_PerFrameFunctionalGroupsSequence, per_frame);
    if (per_frame == nullptr) {
        /* A classic single- or multi-frame object (RT dose, NM, US cine): one stack. */
        for (Sint32 i = 0; i < n_frames; i++) {
            Frame f = base;
            f.frame_in_file = i;
            frames.push_back(f);
        }
        return true;
    }
    if ((Sint32)per_frame->card() != n_frames)
        return fail(error,
                    _("%s: %d frames but %lu per-frame functional groups (positions unknown)"),
                    path.c_str(), (int)n_frames, per_frame->card());
    for (Sint32 i = 0; i < n_frames; i++) {
        Frame f = base;
        f.frame_in_file = i;
        f.per_frame_groups = true;
        f.times = fm_dicom_frame_time{};
        f.times.temporal_index = -1;
        DcmItem *group = per_frame->getItem((unsigned long)i);
        read_geometry(group, &f);
        DcmItem *content = nullptr;
        if (group->findAndGetSequenceItem(DCM_FrameContentSequence, content).good()) {
            fm_dicom_frame_time &t = f.times;
            t.state[FM_DICOM_TIME_ACQUISITION_DATETIME] =
                fm_dicom_parse_dt(get_str(content, DCM_FrameAcquisitionDateTime).c_str(),
                                  &t.seconds[FM_DICOM_TIME_ACQUISITION_DATETIME]);
            t.state[FM_DICOM_TIME_CONTENT] =
                fm_dicom_parse_dt(get_str(content, DCM_FrameReferenceDateTime).c_str(),
                                  &t.seconds[FM_DICOM_TIME_CONTENT]);
            Uint32 idx;
            if (content->findAndGetUint32(DCM_TemporalPositionIndex, idx).good())
                t.temporal_index = (long)idx;
        }
        DcmItem *cardiac = nullptr;
        if (group->findAndGetSequenceItem(DCM_CardiacSynchronizationSequence, cardiac).good())
            f.times.state[FM_DICOM_TIME_TRIGGER] =
                get_ms(cardiac, DCM_NominalCardiacTriggerDelayTime,
                       &f.times.seconds[FM_DICOM_TIME_TRIGGER]);
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

struct Scan {
    std::vector<Frame> frames;
    int skipped = 0; /* files that are not DICOM (or, for one file's series, unreadable) */
    int n_files = 0;
};

/* Collects the frames of every DICOM file in folder. With only_series set (the series of a
 * file the user picked), files of other series are left out and a file that cannot be read is
 * skipped unless its header names that series: the user asked for one series, not for the
 * folder (picked_sop: a damaged copy of the picked instance is skipped too). Without it, every
 * DICOM file must read. */
bool scan_folder(const char *folder, const char *only_series, const std::string &picked_sop,
                 Scan &scan, const Progress &progress, GError **error)
{
    init_dcmtk();
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
            ++scan.skipped;
            continue;
        }
        std::vector<Frame> found;
        GError *why = nullptr;
        if (!scan_file(p, found, &why)) {
            if (only_series == nullptr) {
                g_propagate_error(error, why);
                return false;
            }
            /* A damaged copy of the picked instance is a duplicate the user did not ask for;
             * any other damaged file of the series is part of what was asked for. */
            DcmFileFormat partial;
            partial.loadFile(p.c_str(), EXS_Unknown, EGL_noChange, kHeaderReadLimit);
            if (get_str(partial.getDataset(), DCM_SeriesInstanceUID) == only_series &&
                get_str(partial.getDataset(), DCM_SOPInstanceUID) != picked_sop) {
                g_propagate_error(error, why);
                return false;
            }
            g_error_free(why);
            ++scan.skipped;
            continue;
        }
        if (only_series != nullptr && (found.empty() || found[0].series != only_series))
            continue;
        scan.frames.insert(scan.frames.end(), found.begin(), found.end());
        ++scan.n_files;
    }
    if (scan.frames.empty())
        return fail(error, _("%s: no DICOM images in this folder (%d other files)"), folder,
                    scan.skipped);
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

/* One SOP instance saved twice (an archive's export next to a re-compressed copy, or
 * pydicom's test files: one image in every transfer syntax) is one image: the copy in
 * preferred_file (the file the user picked) is kept, else the first by name. Copies that are
 * not the same image (another size or frame count) are an error. */
bool drop_duplicates(const char *folder, std::vector<Frame> &frames, const char *preferred_file,
                     int *duplicates, GError **error)
{
    std::map<std::string, const Frame *> keep; /* SOP -> the frame 0 of the copy kept */
    for (const Frame &f : frames) {
        if (f.sop.empty() || f.frame_in_file != 0)
            continue;
        auto it = keep.find(f.sop);
        if (it == keep.end() ||
            (preferred_file != nullptr && f.file == preferred_file && it->second->file != f.file))
            keep[f.sop] = &f;
    }
    std::set<std::string> kept_files, dropped_files;
    for (const Frame &f : frames) {
        if (f.sop.empty() || f.frame_in_file != 0)
            continue;
        const Frame *k = keep[f.sop];
        if (k->file == f.file) {
            kept_files.insert(f.file);
            continue;
        }
        if (f.rows != k->rows || f.cols != k->cols || f.frames_in_file != k->frames_in_file ||
            f.samples_per_pixel != k->samples_per_pixel)
            return fail(error,
                        _("%s: %s and %s have one SOPInstanceUID but differ (%dx%d, %d frames "
                          "vs %dx%d, %d frames)"),
                        folder, k->file.c_str(), f.file.c_str(), k->cols, k->rows,
                        k->frames_in_file, f.cols, f.rows, f.frames_in_file);
        dropped_files.insert(f.file);
    }
    *duplicates = (int)dropped_files.size();
    if (dropped_files.empty())
        return true;
    std::vector<Frame> out;
    for (const Frame &f : frames)
        if (dropped_files.count(f.file) == 0)
            out.push_back(f);
    frames.swap(out);
    return true;
}

void cross(const double *a, const double *b, double *out)
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

bool is_jpeg2000(E_TransferSyntax xfer)
{
    return xfer == EXS_JPEG2000LosslessOnly || xfer == EXS_JPEG2000;
}

/* The transfer syntax as the user can look it up: name and UID. */
std::string xfer_label(DcmFileFormat &ff)
{
    std::string uid = get_str(ff.getMetaInfo(), DCM_TransferSyntaxUID);
    E_TransferSyntax xfer = ff.getDataset()->getOriginalXfer();
    std::string name = xfer == EXS_Unknown ? std::string("unknown") : DcmXfer(xfer).getXferName();
    return uid.empty() ? name : name + " (" + uid + ")";
}

/* The compressed frames of an encapsulated pixel sequence (PS3.5 A.4): one fragment per frame,
 * several fragments of one frame, or, for JPEG 2000, frames that start where a fragment starts
 * with a codestream's SOC marker. */
bool j2k_frames(DcmDataset *ds, const std::string &file, int n_frames,
                std::vector<std::vector<Uint8>> &out, GError **error)
{
    DcmElement *el = nullptr;
    DcmPixelSequence *seq = nullptr;
    if (ds->findAndGetElement(DCM_PixelData, el).bad() ||
        static_cast<DcmPixelData *>(el)
            ->getEncapsulatedRepresentation(ds->getOriginalXfer(), nullptr, seq)
            .bad() ||
        seq == nullptr || seq->card() < 2)
        return fail(error, _("%s: the JPEG 2000 pixel data holds no fragments"), file.c_str());
    std::vector<std::pair<const Uint8 *, Uint32>> fragments;
    for (unsigned long i = 1; i < seq->card(); i++) { /* item 0: the basic offset table */
        DcmPixelItem *item = nullptr;
        Uint8 *bytes = nullptr;
        if (seq->getItem(item, i).bad() || item->getUint8Array(bytes).bad())
            return fail(error, _("%s: JPEG 2000 fragment %lu cannot be read"), file.c_str(), i);
        if (item->getLength() > 0 && bytes != nullptr)
            fragments.push_back({bytes, item->getLength()});
    }
    bool one_per_frame = (int)fragments.size() == n_frames;
    for (const auto &frag : fragments) {
        bool soc = frag.second >= 2 && frag.first[0] == 0xff && frag.first[1] == 0x4f;
        bool jp2 = frag.second >= 8 && memcmp(frag.first + 4, "jP  ", 4) == 0;
        if (out.empty() || one_per_frame || ((soc || jp2) && (int)out.size() < n_frames))
            out.emplace_back();
        out.back().insert(out.back().end(), frag.first, frag.first + frag.second);
    }
    if ((int)out.size() != n_frames)
        return fail(error, _("%s: %d frames but %zu JPEG 2000 codestreams"), file.c_str(), n_frames,
                    out.size());
    return true;
}

/* The pixel layout of a loaded dataset as it is now (after any decompression). */
fm_dicom_pixel_layout pixel_layout(DcmDataset *ds)
{
    Uint16 rows = 0, cols = 0, spp = 1, bits = 16, stored = 0, pixrep = 0, planar = 0;
    ds->findAndGetUint16(DCM_Rows, rows);
    ds->findAndGetUint16(DCM_Columns, cols);
    ds->findAndGetUint16(DCM_SamplesPerPixel, spp);
    ds->findAndGetUint16(DCM_BitsAllocated, bits);
    if (ds->findAndGetUint16(DCM_BitsStored, stored).bad())
        stored = bits;
    ds->findAndGetUint16(DCM_PixelRepresentation, pixrep);
    ds->findAndGetUint16(DCM_PlanarConfiguration, planar);
    std::string photometric = get_str(ds, DCM_PhotometricInterpretation);
    fm_dicom_pixel_layout l = {};
    l.rows = rows;
    l.cols = cols;
    l.samples_per_pixel = spp;
    l.bits_allocated = bits;
    l.bits_stored = stored;
    l.is_signed = pixrep != 0;
    l.by_plane = planar == 1;
    l.ybr_full = photometric == "YBR_FULL";
    l.ybr_full_422 = photometric == "YBR_FULL_422";
    l.slope = 1.0;
    l.intercept = 0.0;
    return l;
}

/* Every frame of a loaded file as stored values (no rescale), frame after frame, each
 * samples_per_pixel planes of cols x rows floats. Decompresses what is compressed. */
bool decode_file(DcmFileFormat &ff, const std::string &file, int n_frames, std::vector<float> &out,
                 GError **error)
{
    DcmDataset *ds = ff.getDataset();
    E_TransferSyntax xfer = ds->getOriginalXfer();
    fm_dicom_pixel_layout layout = pixel_layout(ds);
    std::string photometric = get_str(ds, DCM_PhotometricInterpretation);
    if (photometric == "PALETTE COLOR")
        return fail(error,
                    _("%s: PALETTE COLOR images (indices into a colour table) are not "
                      "supported"),
                    file.c_str());
    if (is_jpeg2000(xfer)) {
        /* OpenJPEG undoes the codestream's own colour transform (YBR_RCT / YBR_ICT). */
        layout.ybr_full = layout.ybr_full_422 = FALSE;
        if (const char *problem = fm_dicom_layout_problem(&layout))
            return fail(error, "%s: %s", file.c_str(), problem);
        if (!fm_j2k_available())
            return fail(error,
                        _("%s: transfer syntax %s needs JPEG 2000, and this Fluxmap was built "
                          "without OpenJPEG"),
                        file.c_str(), xfer_label(ff).c_str());
        std::vector<std::vector<Uint8>> codestreams;
        if (!j2k_frames(ds, file, n_frames, codestreams, error))
            return false;
        gsize plane = (gsize)layout.rows * layout.cols * layout.samples_per_pixel;
        out.assign(plane * n_frames, 0.0f);
        std::vector<guint8> frame(fm_dicom_frame_bytes(&layout));
        for (int k = 0; k < n_frames; k++) {
            fm_dicom_pixel_layout l = layout;
            char *why = nullptr;
            if (!fm_j2k_decode_frame(codestreams[k].data(), codestreams[k].size(), &l, frame.data(),
                                     &why)) {
                fail(error, _("%s: frame %d: %s"), file.c_str(), k + 1, why);
                g_free(why);
                return false;
            }
            fm_dicom_frame_to_float(&l, frame.data(), out.data() + plane * k);
        }
        return true;
    }
    if (DcmXfer(xfer).isEncapsulated() || xfer == EXS_Unknown) {
        if (xfer != EXS_Unknown && DcmCodecList::canChangeCoding(xfer, EXS_LittleEndianExplicit)) {
            OFCondition st = ds->chooseRepresentation(EXS_LittleEndianExplicit, nullptr);
            if (st.bad() || !ds->canWriteXfer(EXS_LittleEndianExplicit))
                return fail(error, _("%s: DCMTK cannot decode its %s pixel data (%s)"),
                            file.c_str(), xfer_label(ff).c_str(), st.text());
        } else {
            return fail(error,
                        _("%s: no decoder for transfer syntax %s: DCMTK's codecs read JPEG "
                          "(baseline, extended, lossless), JPEG-LS and RLE, OpenJPEG reads "
                          "JPEG 2000, and neither reads this one%s"),
                        file.c_str(), xfer_label(ff).c_str(),
                        FM_HAVE_DCMTK_CODECS ? ""
                                             : _(" (this Fluxmap was built without DCMTK's "
                                                 "codecs)"));
        }
        layout = pixel_layout(ds); /* a decoder may change colour model and planes */
    }
    if (const char *problem = fm_dicom_layout_problem(&layout))
        return fail(error, "%s: %s", file.c_str(), problem);
    DcmElement *el = nullptr;
    Uint8 *bytes = nullptr;
    gsize frame_bytes = fm_dicom_frame_bytes(&layout);
    gsize need = frame_bytes * (gsize)n_frames;
    unsigned long have = 0;
    if (ds->findAndGetElement(DCM_PixelData, el).good() && el->getUint8Array(bytes).good() &&
        bytes != nullptr)
        have = el->getLength();
    if (have < need)
        return fail(error, _("%s: truncated pixel data (%lu of %lu bytes)"), file.c_str(), have,
                    (unsigned long)need);
    std::vector<guint8> copy;
    const guint8 *src = bytes;
    if (layout.bits_allocated == 32 && DcmXfer(xfer).isBigEndian()) {
        /* DCMTK swaps OW pixel data in 16-bit words; a 32-bit sample's two halves then sit in
         * file order and must be exchanged. */
        copy.assign(bytes, bytes + need);
        for (gsize i = 0; i + 3 < need; i += 4) {
            std::swap(copy[i], copy[i + 2]);
            std::swap(copy[i + 1], copy[i + 3]);
        }
        src = copy.data();
    }
    gsize plane = (gsize)layout.rows * layout.cols * layout.samples_per_pixel;
    out.assign(plane * n_frames, 0.0f);
    for (int k = 0; k < n_frames; k++)
        fm_dicom_frame_to_float(&layout, src + frame_bytes * k, out.data() + plane * k);
    return true;
}

/* Lossy when the image says it was ever compressed lossily, or its syntax only holds lossy
 * data (JPEG baseline/extended, JPEG-LS near-lossless, JPEG 2000 .91 in DCMTK's table). */
bool is_lossy(DcmDataset *ds)
{
    E_TransferSyntax xfer = ds->getOriginalXfer();
    return get_str(ds, DCM_LossyImageCompression) == "01" ||
           (xfer != EXS_Unknown && DcmXfer(xfer).isLossy());
}

void set_common_meta(fm_dataset *out, const Frame &first, const Scan &scan, int duplicates,
                     const std::string &xfer)
{
    fm_dataset_set_meta(out, "format", "dicom");
    fm_dataset_set_meta(out, "dicom_series_uid", first.series.c_str());
    char buf[32];
    g_snprintf(buf, sizeof buf, "%d", scan.n_files - duplicates);
    fm_dataset_set_meta(out, "dicom_files", buf);
    g_snprintf(buf, sizeof buf, "%d", scan.skipped);
    fm_dataset_set_meta(out, "dicom_skipped_files", buf);
    g_snprintf(buf, sizeof buf, "%d", duplicates);
    fm_dataset_set_meta(out, "dicom_duplicate_files", buf);
    if (!first.modality.empty())
        fm_dataset_set_meta(out, "modality", first.modality.c_str());
    if (!xfer.empty()) {
        fm_dataset_set_meta(out, "dicom_transfer_syntax", xfer.c_str());
        fm_dataset_set_meta(out, "format_variant", xfer.c_str());
    }
}

/* What results written back beside the series (dicom_write.cc) reference: the study, frame of
 * reference and SOP class, a file to take the patient and study from, and per slice z (its first
 * time frame) the SOP instance, frame number in its file and ImagePositionPatient (LPS mm), as
 * comma-separated lists. */
void set_reference_meta(fm_dataset *out, const std::vector<Frame> &frames,
                        const std::vector<size_t> &starts, int nz)
{
    const Frame &first = frames[starts[0]];
    std::string sops;
    std::vector<double> numbers, positions;
    for (int z = 0; z < nz; z++) {
        const Frame &f = frames[starts[z]];
        sops += (z ? "," : "") + f.sop;
        numbers.push_back(f.frame_in_file + 1);
        positions.insert(positions.end(), f.pos, f.pos + 3);
    }
    fm_dataset_set_meta(out, "dicom_study_uid", first.study.c_str());
    if (!first.frame_of_reference.empty())
        fm_dataset_set_meta(out, "dicom_frame_of_reference_uid", first.frame_of_reference.c_str());
    fm_dataset_set_meta(out, "dicom_sop_class_uid", first.sop_class.c_str());
    g_autofree char *reference_file = g_canonicalize_filename(first.file.c_str(), nullptr);
    fm_dataset_set_meta(out, "dicom_reference_file", reference_file);
    fm_dataset_set_meta(out, "dicom_slice_sop_uids", sops.c_str());
    g_autofree char *number_list = fm_format_number_list(numbers.data(), nz);
    g_autofree char *position_list = fm_format_number_list(positions.data(), 3 * nz);
    g_autofree char *orientation = fm_format_number_list(first.iop, 6);
    fm_dataset_set_meta(out, "dicom_slice_frame_numbers", number_list);
    fm_dataset_set_meta(out, "dicom_slice_positions", position_list);
    fm_dataset_set_meta(out, "dicom_orientation", orientation);
}

void set_acquisition_meta(fm_dataset *out, const std::vector<Frame> &frames, int nz, int nt);

/* One file that is the whole series: a 2-D image x, y; a multi-frame object without
 * per-frame positions as a stack x, y, frame (z for RT dose grids, t for cine with a
 * FrameTime); colour adds a dimension c (R, G, B) after y. */
fm_dataset *read_single(const std::vector<Frame> &frames, const Scan &scan, int duplicates,
                        GError **error)
{
    const Frame &first = frames[0];
    DcmFileFormat ff;
    if (!load(ff, first.file, false, error))
        return nullptr;
    DcmDataset *ds = ff.getDataset();
    int n = first.frames_in_file;
    std::vector<float> samples;
    if (!decode_file(ff, first.file, n, samples, error))
        return nullptr;
    int spp = first.samples_per_pixel;
    gsize sizes[4] = {(gsize)first.cols, (gsize)first.rows, 0, 0};
    const char *names[4] = {"x", "y", nullptr, nullptr};
    int n_dims = 2;
    if (spp > 1) {
        sizes[n_dims] = (gsize)spp;
        names[n_dims++] = "c";
    }
    std::vector<double> offsets(n, 0.0);
    double frame_time_ms = 0;
    const char *frame_dim = "frame";
    if (n > 1) {
        if (get_f64(ds, DCM_GridFrameOffsetVector, offsets.data(), n))
            frame_dim = "z";
        else if (get_f64(ds, DCM_FrameTime, &frame_time_ms, 1) && frame_time_ms > 0)
            frame_dim = "t";
        sizes[n_dims] = (gsize)n;
        names[n_dims++] = frame_dim;
    }
    g_autoptr(fm_dataset) out = fm_dataset_new(FM_PIXEL_F32, n_dims, sizes, names);
    float *dst = (float *)out->data;
    for (gsize i = 0; i < samples.size(); i++)
        dst[i] = (float)(samples[i] * first.slope + first.intercept);
    const char *unit = first.has_spacing ? "mm" : "px";
    out->dims[0].spacing = first.has_spacing ? first.spacing[1] : 1.0;
    out->dims[1].spacing = first.has_spacing ? first.spacing[0] : 1.0;
    out->dims[0].unit = g_strdup(unit);
    out->dims[1].unit = g_strdup(unit);
    if (spp > 1)
        out->dims[2].unit = g_strdup(first.samples_per_pixel == 3 ? "RGB" : "sample");
    if (n > 1) {
        fm_dim *d = &out->dims[n_dims - 1];
        if (strcmp(frame_dim, "z") == 0) {
            d->unit = g_strdup("mm");
            d->spacing = std::fabs(offsets[n - 1] - offsets[0]) / (n - 1);
        } else if (strcmp(frame_dim, "t") == 0) {
            d->unit = g_strdup("s");
            d->spacing = frame_time_ms * 1e-3;
        } else {
            d->unit = g_strdup("frame");
        }
    }
    set_common_meta(out, first, scan, duplicates, xfer_label(ff));
    char buf[32];
    g_snprintf(buf, sizeof buf, "%d", n);
    fm_dataset_set_meta(out, "dicom_frames", buf);
    fm_dataset_set_meta(out, "dicom_lossy", is_lossy(ds) ? "yes" : "no");
    if (n == 1) /* one slice of a series per flip angle (VFA) still says its angle and TR */
        set_acquisition_meta(out, frames, 1, 1);
    out->source_path = g_canonicalize_filename(first.file.c_str(), nullptr);
    return (fm_dataset *)g_steal_pointer(&out);
}

/* FlipAngle per frame k (equal over slices) and one RepetitionTime, when every frame says them:
 * a variable-flip-angle series needs them, and DCE's SPGR conversion can take them. */
void set_acquisition_meta(fm_dataset *out, const std::vector<Frame> &frames, int nz, int nt)
{
    std::vector<double> flips(nt);
    bool flips_ok = true, tr_ok = true;
    for (int k = 0; k < nt; k++) {
        flips[k] = frames[k].flip_deg; /* slice 0's frame k (frames are z-major, then time) */
        for (int z = 0; z < nz; z++) {
            const Frame &f = frames[(size_t)z * nt + k];
            flips_ok = flips_ok && std::isfinite(f.flip_deg) && f.flip_deg == flips[k];
            tr_ok = tr_ok && std::isfinite(f.tr_ms) && f.tr_ms == frames[0].tr_ms;
        }
    }
    if (flips_ok) {
        char *list = fm_format_number_list(flips.data(), nt);
        fm_dataset_set_meta(out, FM_META_FLIP_ANGLES, list);
        g_free(list);
    }
    if (tr_ok) {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        fm_dataset_set_meta(out, FM_META_REPETITION_TIME,
                            g_ascii_formatd(buf, sizeof buf, "%.10g", frames[0].tr_ms));
    }
}

/* The 4-D DCE path: frames of one series ordered by slice position and time. */
fm_dataset *read_series(const char *folder, std::vector<Frame> &frames, const Scan &scan,
                        int duplicates, const Progress &prog, GError **error)
{
    const Frame &first = frames[0];
    for (const Frame &f : frames) {
        if (f.rows != first.rows || f.cols != first.cols) {
            fail(error, _("%s: mixed image sizes: %s is %dx%d, %s is %dx%d"), folder,
                 f.file.c_str(), f.cols, f.rows, first.file.c_str(), first.cols, first.rows);
            return nullptr;
        }
        if (f.samples_per_pixel != 1) {
            fail(error,
                 _("%s: %s is a colour image; a series of several files is read as grey "
                   "DCE volumes only"),
                 folder, f.file.c_str());
            return nullptr;
        }
        if (f.frames_in_file > 1 && !f.per_frame_groups) {
            fail(error,
                 _("%s: %s holds %d frames without per-frame positions inside a series of "
                   "several files; open it on its own"),
                 folder, f.file.c_str(), f.frames_in_file);
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
    /* Which attribute (or rule) times the frames: dicom_times.c, which says why in a note. */
    std::vector<fm_dicom_frame_time> candidates(frames.size());
    for (size_t i = 0; i < frames.size(); i++) {
        candidates[i] = frames[i].times;
        candidates[i].file = frames[i].file.c_str();
    }
    fm_dicom_times chosen;
    char *why = nullptr;
    if (!fm_dicom_times_choose(candidates.data(), nz, nt, folder, &chosen, &why)) {
        g_set_error_literal(error, FM_ERROR, FM_ERROR_BAD_INPUT, why);
        g_free(why);
        return nullptr;
    }
    {
        std::vector<Frame> ordered;
        ordered.reserve(frames.size());
        for (int i = 0; i < nz * nt; i++)
            ordered.push_back(frames[chosen.order[i]]);
        std::copy(ordered.begin(), ordered.end(), frames.begin()); /* `first` stays valid */
    }
    std::vector<double> times(chosen.times_s, chosen.times_s + nt);
    const std::string time_source = chosen.source;
    const std::string time_note = chosen.note ? chosen.note : "";
    fm_dicom_times_clear(&chosen);

    int nx = first.cols, ny = first.rows;
    if ((double)nx * ny * nz * nt > kMaxSamples) {
        fail(error, _("%s: %dx%dx%dx%d samples are beyond what Fluxmap reads"), folder, nx, ny, nz,
             nt);
        return nullptr;
    }
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
    std::string xfer;
    bool lossy = false;
    for (const auto &entry : by_file) {
        if (files_read++ % 16 == 0 &&
            !prog.tick(0.3 + 0.7 * (double)files_read / by_file.size(), error))
            return nullptr;
        DcmFileFormat ff;
        if (!load(ff, entry.first, false, error))
            return nullptr;
        if (xfer.empty())
            xfer = xfer_label(ff);
        lossy = lossy || is_lossy(ff.getDataset());
        const Frame &any = frames[entry.second[0].first];
        std::vector<float> samples;
        if (!decode_file(ff, entry.first, any.frames_in_file, samples, error))
            return nullptr;
        for (const auto &job : entry.second) {
            const Frame &f = frames[job.first];
            const float *src = samples.data() + plane * f.frame_in_file;
            float *dst = (float *)out->data + plane * job.second;
            for (gsize i = 0; i < plane; i++)
                dst[i] = (float)(src[i] * f.slope + f.intercept);
        }
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
    set_common_meta(out, first, scan, duplicates, xfer);
    fm_dataset_set_meta(out, "dicom_time_source", time_source.c_str());
    fm_dataset_set_meta(out, FM_META_FRAME_TIMES_SOURCE, time_source.c_str());
    if (!time_note.empty())
        fm_dataset_set_meta(out, FM_META_FRAME_TIMES_NOTE, time_note.c_str());
    set_reference_meta(out, frames, starts, nz);
    fm_dataset_set_meta(out, "dicom_lossy", lossy ? "yes" : "no");
    set_acquisition_meta(out, frames, nz, nt);
    out->source_path = g_canonicalize_filename(folder, nullptr);
    return (fm_dataset *)g_steal_pointer(&out);
}

/* One series' frames to a dataset: duplicates dropped, then a lone file (not an enhanced
 * multi-frame volume) is an image or stack of its own, anything else a 4-D series. */
fm_dataset *read_frames(const char *folder, std::vector<Frame> &frames, const Scan &scan,
                        const char *preferred_file, const Progress &prog, GError **error)
{
    int duplicates = 0;
    if (!drop_duplicates(folder, frames, preferred_file, &duplicates, error))
        return nullptr;
    bool one_file = true;
    for (const Frame &f : frames)
        one_file = one_file && f.file == frames[0].file;
    /* An enhanced object of one frame is one image too, not a 1x1 volume series. */
    if (one_file && (!frames[0].per_frame_groups || frames.size() == 1))
        return read_single(frames, scan, duplicates, error);
    return read_series(folder, frames, scan, duplicates, prog, error);
}

} // namespace

extern "C" fm_dataset *fm_dicom_read(const char *folder, const char *series_uid, GError **error)
{
    return fm_dicom_read_progress(folder, series_uid, nullptr, nullptr, nullptr, error);
}

namespace
{

/* No C++ exception crosses into C: a header that asks for more memory than there is (a damaged
 * or hostile file) becomes a GError like any other bad input. */
template <typename Body> fm_dataset *guarded(const char *path, GError **error, Body body)
{
    try {
        return body();
    } catch (const std::bad_alloc &) {
        fail(error, _("%s: not enough memory for the images its header declares"), path);
    } catch (const std::exception &e) {
        fail(error, "%s: %s", path, e.what());
    }
    return nullptr;
}

fm_dataset *read_folder(const char *folder, const char *series_uid, const Progress &prog,
                        GError **error)
{
    Scan scan;
    if (!scan_folder(folder, nullptr, std::string(), scan, prog, error))
        return nullptr;
    std::vector<std::string> uids = series_of(scan.frames);
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
    for (const Frame &f : scan.frames)
        if (f.series == uid)
            frames.push_back(f);
    return read_frames(folder, frames, scan, nullptr, prog, error);
}

fm_dataset *read_file_series(const char *file, const Progress &prog, GError **error)
{
    init_dcmtk();
    Scan own;
    if (!scan_file(file, own.frames, error))
        return nullptr;
    if (own.frames.empty()) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: this DICOM file holds no image (no PixelData)"), file);
        return nullptr;
    }
    own.n_files = 1;
    g_autofree char *folder = g_path_get_dirname(file);
    const Frame &f = own.frames[0];
    /* Colour images and files without a series UID are never part of a DCE series. */
    if (f.series.empty() || f.samples_per_pixel != 1)
        return read_frames(folder, own.frames, own, nullptr, prog, error);
    Scan scan;
    if (!scan_folder(folder, f.series.c_str(), f.sop, scan, prog, error))
        return nullptr;
    /* The file itself may have been named through another path than the folder listing. */
    g_autofree char *base = g_path_get_basename(file);
    g_autofree char *listed = g_build_filename(folder, base, nullptr);
    return read_frames(folder, scan.frames, scan, listed, prog, error);
}

} // namespace

extern "C" fm_dataset *fm_dicom_read_progress(const char *folder, const char *series_uid,
                                              void (*progress)(double fraction, gpointer user),
                                              gpointer user, GCancellable *cancellable,
                                              GError **error)
{
    const Progress prog{progress, user, cancellable};
    return guarded(folder, error, [&] { return read_folder(folder, series_uid, prog, error); });
}

extern "C" fm_dataset *fm_dicom_read_file_series(const char *file,
                                                 void (*progress)(double fraction, gpointer user),
                                                 gpointer user, GCancellable *cancellable,
                                                 GError **error)
{
    const Progress prog{progress, user, cancellable};
    return guarded(file, error, [&] { return read_file_series(file, prog, error); });
}

extern "C" char **fm_dicom_list_series(const char *folder, GError **error)
{
    Scan scan;
    std::vector<std::string> uids;
    try {
        if (!scan_folder(folder, nullptr, std::string(), scan, Progress{nullptr, nullptr, nullptr},
                         error))
            return nullptr;
        uids = series_of(scan.frames);
    } catch (const std::exception &e) {
        fail(error, "%s: %s", folder, e.what());
        return nullptr;
    }
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
    ds->putAndInsertString(DCM_FrameOfReferenceUID, "1.2.826.0.1.3680043.10.1234.3");
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

/* The test writer's encoders, registered on first use only (readers need none). */
void init_encoders()
{
    static gsize done = 0;
    if (g_once_init_enter(&done)) {
#if FM_HAVE_DCMTK_CODECS
        DJEncoderRegistration::registerCodecs();
        DJLSEncoderRegistration::registerCodecs();
        DcmRLEEncoderRegistration::registerCodecs();
#endif
        g_once_init_leave(&done, 1);
    }
}

bool save_as(DcmFileFormat &ff, const std::string &path, E_TransferSyntax xfer, GError **error)
{
    OFCondition st = ff.saveFile(path.c_str(), xfer);
    if (st.good())
        return true;
    g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write: %s"), path.c_str(), st.text());
    return false;
}

/* JPEG 2000 (DCMTK has no encoder): each frame through OpenJPEG, then encapsulated as PS3.5 A.4
 * allows, an empty offset table and each codestream in j2k_fragments even-sized fragments (at
 * least one), so that the reader's frame splitting is exercised. */
bool encapsulate_j2k(DcmFileFormat &ff, const std::string &path, const fm_dicom_test_series *spec,
                     GError **error)
{
    DcmDataset *ds = ff.getDataset();
    const Uint16 *pixels = nullptr;
    unsigned long count = 0;
    ds->findAndGetUint16Array(DCM_PixelData, pixels, &count);
    gsize plane = (gsize)spec->nx * spec->ny;
    DcmPixelSequence *seq = new DcmPixelSequence(DCM_PixelSequenceTag);
    seq->insert(new DcmPixelItem(DCM_PixelItemTag));
    for (gsize f = 0; f * plane < count; f++) {
        char *why = nullptr;
        GBytes *code = fm_j2k_encode_test_frame(pixels + f * plane, spec->nx, spec->ny, &why);
        if (code == nullptr) {
            g_set_error(error, FM_ERROR, FM_ERROR_IO, "%s: %s", path.c_str(), why);
            g_free(why);
            delete seq;
            return false;
        }
        gsize n = 0;
        const Uint8 *bytes = (const Uint8 *)g_bytes_get_data(code, &n);
        std::vector<Uint8> padded(bytes, bytes + n);
        if (padded.size() % 2)
            padded.push_back(0); /* fragments have even lengths (PS3.5 A.4) */
        int pieces = std::max(1, spec->j2k_fragments);
        gsize step = ((padded.size() / pieces) + 1) & ~(gsize)1;
        for (gsize at = 0; at < padded.size(); at += step) {
            DcmPixelItem *item = new DcmPixelItem(DCM_PixelItemTag);
            item->putUint8Array(padded.data() + at, (Uint32)std::min(step, padded.size() - at));
            seq->insert(item);
        }
        g_bytes_unref(code);
    }
    DcmPixelData *pd = new DcmPixelData(DCM_PixelData);
    E_TransferSyntax xfer = DcmXfer(spec->transfer_syntax_uid).getXfer();
    pd->putOriginalRepresentation(xfer, nullptr, seq);
    ds->insert(pd, true);
    return true;
}

/* Saves in spec's transfer syntax, compressing through DCMTK's encoders where it names one. */
bool save(DcmFileFormat &ff, const std::string &path, const fm_dicom_test_series *spec,
          GError **error)
{
    E_TransferSyntax xfer = EXS_LittleEndianExplicit;
    OFCondition st = EC_Normal;
    if (spec->transfer_syntax_uid != nullptr) {
        init_encoders();
        xfer = DcmXfer(spec->transfer_syntax_uid).getXfer();
        std::unique_ptr<DcmRepresentationParameter> param;
#if FM_HAVE_DCMTK_CODECS
        if (xfer == EXS_JPEGLSLossy)
            param.reset(new DJLSRepresentationParameter((Uint16)spec->near_lossless, OFFalse));
        else if (xfer == EXS_JPEGProcess14)
            param.reset(new DJ_RPLossless(6, 0)); /* a predictor other than SV1's */
        else if (xfer == EXS_JPEGProcess14SV1)
            param.reset(new DJ_RPLossless(1, 0));
#endif
        if (xfer == EXS_Unknown)
            st = EC_UnsupportedEncoding;
        else if (is_jpeg2000(xfer))
            return encapsulate_j2k(ff, path, spec, error) && save_as(ff, path, xfer, error);
        else if (DcmXfer(xfer).isEncapsulated())
            st = ff.getDataset()->chooseRepresentation(xfer, param.get());
        if (st.good() && !ff.getDataset()->canWriteXfer(xfer))
            st = EC_CannotChangeRepresentation;
    }
    if (st.good())
        st = ff.saveFile(path.c_str(), xfer);
    if (st.good())
        return true;
    g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write: %s"), path.c_str(), st.text());
    return false;
}

/* A classic file's time attributes: time_tag's, then the test's edits. */
void put_test_times(DcmDataset *ds, const fm_dicom_test_series *spec, int z, int t)
{
    fm_dicom_test_times v = {};
    std::string tm = tm_string(spec->frame_times_s[t]);
    switch (spec->time_tag) {
    case FM_DICOM_TEST_TIME_ACQUISITION_AND_CONTENT:
        g_strlcpy(v.acquisition_date, "20261123", sizeof v.acquisition_date);
        g_strlcpy(v.acquisition_time, tm.c_str(), sizeof v.acquisition_time);
        g_strlcpy(v.content_date, "20261123", sizeof v.content_date);
        g_strlcpy(v.content_time, tm.c_str(), sizeof v.content_time);
        break;
    case FM_DICOM_TEST_TIME_ACQUISITION_DATETIME:
        g_strlcpy(v.acquisition_datetime, ("20261123" + tm).c_str(), sizeof v.acquisition_datetime);
        break;
    case FM_DICOM_TEST_TIME_ACQUISITION_TIME:
        g_strlcpy(v.acquisition_time, tm.c_str(), sizeof v.acquisition_time);
        break;
    case FM_DICOM_TEST_TIME_TRIGGER:
        g_snprintf(v.trigger_time, sizeof v.trigger_time, "%.3f", spec->frame_times_s[t] * 1e3);
        break;
    case FM_DICOM_TEST_TIME_CONTENT:
        g_strlcpy(v.content_date, "20261123", sizeof v.content_date);
        g_strlcpy(v.content_time, tm.c_str(), sizeof v.content_time);
        break;
    }
    if (spec->temporal_index)
        g_snprintf(v.temporal_position, sizeof v.temporal_position, "%d", t + 1);
    if (spec->edit_times != nullptr)
        spec->edit_times(z, t, &v, spec->edit_times_user);
    const std::pair<DcmTagKey, const char *> tags[] = {
        {DCM_AcquisitionDateTime, v.acquisition_datetime},
        {DCM_AcquisitionDate, v.acquisition_date},
        {DCM_AcquisitionTime, v.acquisition_time},
        {DCM_ContentDate, v.content_date},
        {DCM_ContentTime, v.content_time},
        {DCM_TriggerTime, v.trigger_time},
        {DCM_TemporalPositionIdentifier, v.temporal_position},
        {DCM_TemporalResolution, v.temporal_resolution}};
    for (const auto &tag : tags)
        if (tag.second[0] != '\0')
            ds->putAndInsertString(tag.first, tag.second);
}

} // namespace

extern "C" gboolean fm_dicom_write_test_series(const char *dir, const fm_dicom_test_series *spec,
                                               GError **error)
{
    init_dcmtk();
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
        bool ok = save(ff, path, spec, error);
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
        put_test_times(ds, spec, z, t);
        if (spec->flip_angles_deg != nullptr) {
            ds->putAndInsertString(DCM_FlipAngle, ds_list(&spec->flip_angles_deg[t], 1).c_str());
            ds->putAndInsertString(DCM_RepetitionTime, ds_list(&spec->tr_ms, 1).c_str());
        }
        char buf[16];
        g_snprintf(buf, sizeof buf, "%d", perm[i] + 1);
        ds->putAndInsertString(DCM_InstanceNumber, buf);
        fill_frame(spec, z, t, pixels.data());
        ds->putAndInsertUint16Array(DCM_PixelData, pixels.data(), (unsigned long)plane);
        char *path = g_strdup_printf("%s/%s%04d", dir, prefix, perm[i]);
        bool ok = save(ff, path, spec, error);
        g_free(path);
        if (!ok)
            return FALSE;
    }
    return TRUE;
}
