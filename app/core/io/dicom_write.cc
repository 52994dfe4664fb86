/* Results back to the archive through DCMTK: maps as Parametric Maps (dcmpmap), ROIs as a
 * Segmentation (dcmseg), both over the source series' frame of reference. */

#include "dcmtk/config/osconfig.h"
#include "dcmtk/dcmdata/dctk.h"
#include "dcmtk/dcmfg/fgderimg.h"
#include "dcmtk/dcmfg/fgframeanatomy.h"
#include "dcmtk/dcmfg/fgfracon.h"
#include "dcmtk/dcmfg/fgparametricmapframetype.h"
#include "dcmtk/dcmfg/fgpixmsr.h"
#include "dcmtk/dcmfg/fgplanor.h"
#include "dcmtk/dcmfg/fgpixeltransform.h"
#include "dcmtk/dcmfg/fgplanpo.h"
#include "dcmtk/dcmfg/fgrealworldvaluemapping.h"
#include "dcmtk/dcmiod/modcommoninstanceref.h"
#include "dcmtk/dcmpmap/dpmparametricmapiod.h"
#include "dcmtk/dcmseg/segdoc.h"
#include "dcmtk/dcmseg/segment.h"
#include "dcmtk/oflog/oflog.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <glib/gi18n.h>
#include <glib/gstdio.h>

extern "C" {
#include "fm_config.h"
#include "app/core/error.h"
#include "app/core/io/dicom_write.h"
#include "app/core/io/frame_times.h"
#include "app/core/roi.h"
}

struct fm_dicom_out {
    int nx = 0, ny = 0, nz = 1;
    bool from_dicom = false; /* a DICOM series: its UIDs and SOP instances are referenced */
    std::string modality, study_uid, frame_of_reference_uid, source_series_uid, sop_class;
    std::string reference_file; /* patient and study modules come from it */
    std::vector<std::string> slice_sops;
    std::vector<Uint16> slice_frames; /* frame number (1-based) of each slice in its file */
    std::vector<double> positions;    /* 3 per slice, LPS mm */
    double orientation[6] = {1, 0, 0, 0, 1, 0};
    double spacing_rc[2] = {1, 1}; /* PixelSpacing: between rows, between columns (mm) */
    double slice_step = 1;
    std::string map_series_uid, seg_series_uid, description, note;
    std::string created_date, created_time; /* one date for every object of the export */
};

namespace
{

const char *const kManufacturer = "Fluxmap";
const char *const kCreator = "Fluxmap^"; /* PN: a family name alone */
/* A local coding scheme for units UCUM has no code for in Fluxmap's table (DICOM reserves
 * designators starting with 99 for private schemes). */
const char *const kLocalScheme = "99FLUXMAP";

std::string new_uid()
{
    char uid[100];
    return dcmGenerateUniqueIdentifier(uid);
}

/* A DS value: at most 16 characters, as precise as they allow. */
std::string ds(double v)
{
    char buf[32];
    for (int digits = 12; digits > 4; digits--) {
        g_snprintf(buf, sizeof buf, "%.*g", digits, std::fabs(v) < 1e-9 ? 0.0 : v);
        if (strlen(buf) <= 16)
            break;
    }
    return buf;
}

bool fail(GError **error, int code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
bool fail(GError **error, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error_literal(error, FM_ERROR, code, msg);
    g_free(msg);
    return false;
}

bool check(OFCondition st, const char *path, const char *what, GError **error)
{
    if (st.good())
        return true;
    return fail(error, FM_ERROR_IO, _("%s: %s: %s"), path, what, st.text());
}

std::vector<std::string> split(const char *text)
{
    std::vector<std::string> out;
    if (text == nullptr || *text == '\0')
        return out;
    gchar **parts = g_strsplit(text, ",", -1);
    for (gchar **p = parts; *p; p++)
        out.push_back(*p);
    g_strfreev(parts);
    return out;
}

/* The source's metadata from fm_dicom_read: FALSE when any per-slice list is missing or of the
 * wrong length (a single image, a reader without it), and the geometry is then the affine's. */
bool read_dicom_geometry(const fm_dataset *src, fm_dicom_out *o)
{
    const char *study = fm_dataset_get_meta(src, "dicom_study_uid");
    const char *series = fm_dataset_get_meta(src, "dicom_series_uid");
    std::vector<std::string> sops = split(fm_dataset_get_meta(src, "dicom_slice_sop_uids"));
    int n_frames = 0, n_pos = 0, n_iop = 0;
    g_autofree double *frames =
        fm_parse_number_list(fm_dataset_get_meta(src, "dicom_slice_frame_numbers"), &n_frames);
    g_autofree double *pos =
        fm_parse_number_list(fm_dataset_get_meta(src, "dicom_slice_positions"), &n_pos);
    g_autofree double *iop =
        fm_parse_number_list(fm_dataset_get_meta(src, "dicom_orientation"), &n_iop);
    if (!study || !*study || !series || !*series || (int)sops.size() != o->nz || !frames ||
        n_frames != o->nz || !pos || n_pos != 3 * o->nz || !iop || n_iop != 6)
        return false;
    o->from_dicom = true;
    o->study_uid = study;
    o->source_series_uid = series;
    const char *value = fm_dataset_get_meta(src, "dicom_frame_of_reference_uid");
    o->frame_of_reference_uid = value ? value : "";
    value = fm_dataset_get_meta(src, "dicom_sop_class_uid");
    o->sop_class = value ? value : "";
    value = fm_dataset_get_meta(src, "dicom_reference_file");
    o->reference_file = value ? value : "";
    o->slice_sops = sops;
    for (int z = 0; z < o->nz; z++)
        o->slice_frames.push_back((Uint16)CLAMP(frames[z], 1, 65535));
    o->positions.assign(pos, pos + n_pos);
    std::memcpy(o->orientation, iop, sizeof o->orientation);
    o->spacing_rc[0] = src->dims[1].spacing > 0 ? src->dims[1].spacing : 1.0;
    o->spacing_rc[1] = src->dims[0].spacing > 0 ? src->dims[0].spacing : 1.0;
    if (o->nz > 1 && src->n_dims > 2 && src->dims[2].spacing > 0)
        o->slice_step = src->dims[2].spacing;
    return true;
}

/* Any other source: its affine (RAS+, voxel index to mm) back to DICOM's LPS. */
void affine_geometry(const fm_dataset *src, fm_dicom_out *o)
{
    double a[16];
    fm_dataset_get_affine(src, a);
    double step[3][3]; /* step[axis][coordinate], LPS */
    for (int axis = 0; axis < 3; axis++)
        for (int i = 0; i < 3; i++)
            step[axis][i] = (i < 2 ? -1.0 : 1.0) * a[i * 4 + axis];
    double length[3];
    for (int axis = 0; axis < 3; axis++) {
        length[axis] = std::sqrt(step[axis][0] * step[axis][0] + step[axis][1] * step[axis][1] +
                                 step[axis][2] * step[axis][2]);
        if (!(length[axis] > 0))
            length[axis] = 1.0;
    }
    for (int i = 0; i < 3; i++) {
        o->orientation[i] = step[0][i] / length[0];
        o->orientation[3 + i] = step[1][i] / length[1];
    }
    o->spacing_rc[0] = length[1];
    o->spacing_rc[1] = length[0];
    o->slice_step = length[2];
    for (int z = 0; z < o->nz; z++)
        for (int i = 0; i < 3; i++)
            o->positions.push_back((i < 2 ? -1.0 : 1.0) * a[i * 4 + 3] + z * step[2][i]);
}

/* Fluxmap's unit names to UCUM (code value, meaning); NULL when UCUM has none in this table. */
struct UnitCode {
    const char *fluxmap, *ucum, *meaning;
};
const UnitCode kUnits[] = {
    {"1", "1", "no units"},
    {"", "1", "no units"},
    {"s", "s", "second"},
    {"ms", "ms", "millisecond"},
    {"min", "min", "minute"},
    {"1/s", "/s", "per second"},
    {"1/min", "/min", "per minute"},
    {"ml/100g/min", "ml/(100.g)/min", "milliliter per 100 gram per minute"},
    {"ml/100ml/min", "ml/(100.ml)/min", "milliliter per 100 milliliter per minute"},
    {"ml/100g", "ml/(100.g)", "milliliter per 100 gram"},
    {"ml/100ml", "ml/(100.ml)", "milliliter per 100 milliliter"},
    {"mM", "mmol/l", "millimole per liter"},
    {"%", "%", "percent"},
    {"deg", "deg", "degree"},
    {"mm", "mm", "millimeter"},
    {"ns", "ns", "nanosecond"},
    {"ps", "ps", "picosecond"},
};

void unit_code(const char *unit, CodeSequenceMacro &code)
{
    std::string text = unit ? unit : "";
    for (const UnitCode &u : kUnits)
        if (text == u.fluxmap) {
            code.set(u.ucum, "UCUM", u.meaning);
            return;
        }
    code.set(text.substr(0, 16).c_str(), kLocalScheme, text.substr(0, 64).c_str());
}

/* A CS value of at most 16 characters (upper case, digits, space, underscore) from a name. */
std::string cs_label(const char *name)
{
    std::string s;
    for (const char *p = name; p && *p && s.size() < 16; p++)
        s += g_ascii_isalnum(*p) ? g_ascii_toupper(*p) : '_';
    return s.empty() ? "MAP" : s;
}

/* The per-frame derivation group: slice z of the source series (DICOM sources only), derived
 * by image processing (a map) or segmentation (an ROI). */
bool add_derivation(const fm_dicom_out *o, int z, bool segmentation, FGDerivationImage &derivation)
{
    DerivationImageItem *item = nullptr;
    CodeSequenceMacro code = segmentation ? CodeSequenceMacro("113076", "DCM", "Segmentation")
                                          : CodeSequenceMacro("110001", "DCM", "Image Processing");
    if (derivation.addDerivationImageItem(code, "", item).bad())
        return false;
    SourceImageItem *source = new SourceImageItem();
    source->getPurposeOfReferenceCode().set("121322", "DCM",
                                            "Source image for image processing operation");
    ImageSOPInstanceReferenceMacro &ref = source->getImageSOPInstanceReference();
    ref.setReferencedSOPClassUID(o->sop_class.c_str());
    ref.setReferencedSOPInstanceUID(o->slice_sops[z].c_str());
    if (o->sop_class == UID_EnhancedMRImageStorage || o->sop_class == UID_EnhancedCTImageStorage ||
        o->sop_class == UID_EnhancedPETImageStorage || o->slice_frames[z] > 1)
        ref.addReferencedFrameNumber(o->slice_frames[z]);
    item->getSourceImageItems().push_back(source);
    return true;
}

/* Referenced Series Sequence of the Common Instance Reference module: every slice's instance. */
void add_common_references(const fm_dicom_out *o, IODCommonInstanceReferenceModule &module)
{
    auto *series = new IODSeriesAndInstanceReferenceMacro::ReferencedSeriesItem();
    series->setSeriesInstanceUID(o->source_series_uid.c_str());
    std::vector<std::string> seen;
    for (const std::string &sop : o->slice_sops) {
        bool again = false;
        for (const std::string &s : seen)
            again = again || s == sop;
        if (!again) {
            series->addReference(o->sop_class.c_str(), sop.c_str());
            seen.push_back(sop);
        }
    }
    module.getReferencedSeriesItems().push_back(series);
}

/* Groups every frame of both objects shares: pixel measures and plane orientation. */
bool add_shared_geometry(const fm_dicom_out *o, FGInterface &groups)
{
    FGPixelMeasures measures;
    measures.setPixelSpacing((ds(o->spacing_rc[0]) + "\\" + ds(o->spacing_rc[1])).c_str());
    measures.setSliceThickness(ds(o->slice_step).c_str());
    measures.setSpacingBetweenSlices(ds(o->slice_step).c_str());
    FGPlaneOrientationPatient orientation;
    const double *v = o->orientation;
    orientation.setImageOrientationPatient(ds(v[0]).c_str(), ds(v[1]).c_str(), ds(v[2]).c_str(),
                                           ds(v[3]).c_str(), ds(v[4]).c_str(), ds(v[5]).c_str());
    return groups.addShared(measures).good() && groups.addShared(orientation).good();
}

bool set_series(const fm_dicom_out *o, IODGeneralSeriesModule &series, IODFoRModule &frame,
                const std::string &series_uid, const char *number, const char *suffix)
{
    std::string description = o->description + suffix;
    return series.setSeriesInstanceUID(series_uid.c_str()).good() &&
           series.setSeriesNumber(number).good() &&
           series.setSeriesDescription(description.substr(0, 64).c_str()).good() &&
           frame.setFrameOfReferenceUID(o->frame_of_reference_uid.c_str()).good();
}

/* DCMTK writes nothing on failure halfway, but a file of a failed attempt must not stay. */
bool save(DcmFileFormat &ff, const char *path, GError **error)
{
    g_unlink(path);
    OFCondition st = ff.saveFile(path, EXS_LittleEndianExplicit);
    if (st.good())
        return true;
    g_unlink(path);
    return fail(error, FM_ERROR_IO, _("%s: cannot write: %s"), path, st.text());
}

std::string today(bool time)
{
    OFString s;
    if (time)
        DcmTime::getCurrentTime(s);
    else
        DcmDate::getCurrentDate(s);
    return s.c_str();
}

/* A study made for a source that is not DICOM: dated when it was written. */
void set_new_study(const fm_dicom_out *o, IODGeneralStudyModule &study)
{
    if (o->from_dicom)
        return;
    study.setStudyDate(o->created_date.c_str());
    study.setStudyTime(o->created_time.c_str());
    study.setStudyID("1");
}

} // namespace

extern "C" gboolean fm_dicom_write_available(void)
{
    return TRUE;
}

extern "C" fm_dicom_out *fm_dicom_out_new(const fm_dataset *source, const char *series_description,
                                          GError **error)
{
    static gsize quiet = 0;
    if (g_once_init_enter(&quiet)) {
        OFLog::configure(OFLogger::FATAL_LOG_LEVEL); /* errors reach the user as GErrors */
        g_once_init_leave(&quiet, 1);
    }
    const char *name = source && source->source_path ? source->source_path : "dataset";
    if (!source || source->n_dims < 2) {
        fail(error, FM_ERROR_BAD_INPUT, _("%s: DICOM export needs an image or a volume"), name);
        return nullptr;
    }
    auto o = std::make_unique<fm_dicom_out>();
    o->nx = (int)source->dims[0].size;
    o->ny = (int)source->dims[1].size;
    o->nz = source->n_dims > 2 && g_strcmp0(source->dims[2].name, "z") == 0
                ? (int)source->dims[2].size
                : 1;
    if (o->nx > 65535 || o->ny > 65535) {
        fail(error, FM_ERROR_BAD_INPUT,
             _("%s: %dx%d pixels is beyond a DICOM image (65535 rows and columns)"), name, o->nx,
             o->ny);
        return nullptr;
    }
    const char *modality = fm_dataset_get_meta(source, "modality");
    o->modality = modality && *modality ? modality : "OT";
    o->description = series_description ? series_description : "Fluxmap";
    if (!read_dicom_geometry(source, o.get())) {
        affine_geometry(source, o.get());
        o->study_uid = new_uid();
        o->frame_of_reference_uid = new_uid();
        o->note = _("the source is not a DICOM series: the DICOM maps and segmentation have a "
                    "new study and frame of reference (its geometry from the source's affine)");
    } else if (o->frame_of_reference_uid.empty()) {
        o->frame_of_reference_uid = new_uid();
        o->note = _("the source series has no FrameOfReferenceUID: the DICOM maps and "
                    "segmentation have a new frame of reference");
    }
    o->created_date = today(false);
    o->created_time = today(true);
    o->map_series_uid = new_uid();
    o->seg_series_uid = new_uid();
    return o.release();
}

extern "C" void fm_dicom_out_free(fm_dicom_out *out)
{
    delete out;
}

extern "C" const char *fm_dicom_out_note(const fm_dicom_out *out)
{
    return out && !out->note.empty() ? out->note.c_str() : nullptr;
}

extern "C" const char *fm_dicom_out_series_uid(const fm_dicom_out *out, gboolean segmentation)
{
    return segmentation ? out->seg_series_uid.c_str() : out->map_series_uid.c_str();
}

extern "C" gboolean fm_dicom_out_write_map(fm_dicom_out *o, const char *path, const fm_map *map,
                                           int instance_number, GError **error)
{
    if (map->width != o->nx || map->height != o->ny || map->n_frames != o->nz)
        return fail(error, FM_ERROR_BAD_INPUT,
                    _("%s: map '%s' is %dx%dx%d but the source is %dx%dx%d"), path, map->name,
                    map->width, map->height, map->n_frames, o->nx, o->ny, o->nz);
    std::string instance = std::to_string(instance_number);
    IODEnhGeneralEquipmentModule::EquipmentInfo equipment(kManufacturer, "fluxmap", "1",
                                                          FM_VERSION);
    ContentIdentificationMacro content(instance.c_str(), cs_label(map->name).c_str(), map->name,
                                       kCreator);
    OFvariant<OFCondition, DPMParametricMapIOD> made =
        DPMParametricMapIOD::create<IODFloatingPointImagePixelModule>(
            o->modality.c_str(), "900", instance.c_str(), (Uint16)o->ny, (Uint16)o->nx, equipment,
            content, "VOLUME", "NONE", DPMTypes::CQ_RESEARCH);
    if (OFCondition *bad = OFget<OFCondition>(&made))
        return check(*bad, path, "Parametric Map", error);
    DPMParametricMapIOD *pm = OFget<DPMParametricMapIOD>(&made);
    if (o->from_dicom && !o->reference_file.empty() &&
        g_file_test(o->reference_file.c_str(), G_FILE_TEST_IS_REGULAR))
        pm->importHierarchy(o->reference_file.c_str(), OFTrue, OFTrue, OFFalse, OFFalse);
    pm->getStudy().setStudyInstanceUID(o->study_uid.c_str());
    set_new_study(o, pm->getStudy());
    if (!set_series(o, pm->getSeries(), pm->getFrameOfReference(), o->map_series_uid, "900", ""))
        return fail(error, FM_ERROR_IO, _("%s: cannot set the series"), path);
    const std::string &date = o->created_date, &time = o->created_time;
    pm->getSeries().setSeriesDate(date.c_str());
    pm->getSeries().setSeriesTime(time.c_str());
    pm->getGeneralImage().setContentDate(date.c_str());
    pm->getGeneralImage().setContentTime(time.c_str());

    std::string dim_uid = new_uid();
    if (!check(pm->getIODMultiframeDimensionModule().addDimensionIndex(
                   DCM_ImagePositionPatient, dim_uid.c_str(), DCM_PlanePositionSequence,
                   "Slice position"),
               path, "dimension", error) ||
        !add_shared_geometry(o, pm->getFunctionalGroups()))
        return fail(error, FM_ERROR_IO, _("%s: cannot describe the geometry"), path);

    FGFrameAnatomy anatomy;
    anatomy.setLaterality(FGFrameAnatomy::LATERALITY_UNPAIRED);
    anatomy.getAnatomy().getAnatomicRegion().set("38266002", "SCT", "Entire body");
    FGParametricMapFrameType frame_type;
    frame_type.setFrameType("DERIVED\\PRIMARY\\VOLUME\\NONE");
    FGPixelValueTransformation identity;
    identity.setFGType(FGPixelValueTransformation::E_PixelValTrans_Identity);
    /* Float pixels are the values themselves: the mapping is the identity, with the unit. */
    double lo = INFINITY, hi = -INFINITY;
    gsize n = fm_map_n_values(map);
    for (gsize i = 0; i < n; i++)
        if (std::isfinite(map->data[i])) {
            lo = MIN(lo, (double)map->data[i]);
            hi = MAX(hi, (double)map->data[i]);
        }
    if (!(lo <= hi))
        lo = hi = 0;
    FGRealWorldValueMapping mapping;
    auto *item = new FGRealWorldValueMapping::RWVMItem();
    item->setRealWorldValueSlope(1.0);
    item->setRealWorldValueIntercept(0.0);
    item->setDoubleFloatRealWorldValueFirstValueMapped(lo);
    item->setDoubleFloatRealWorldValueLastValueMapped(hi);
    item->setLUTLabel(std::string(map->name).substr(0, 16).c_str());
    std::string explanation = std::string(map->name) + " [" + (map->unit ? map->unit : "") + "]";
    item->setLUTExplanation(explanation.substr(0, 64).c_str());
    unit_code(map->unit, item->getMeasurementUnitsCode());
    mapping.getRealWorldValueMapping().push_back(item);
    if (!check(pm->addForAllFrames(anatomy), path, "frame anatomy", error) ||
        !check(pm->addForAllFrames(frame_type), path, "frame type", error) ||
        !check(pm->addForAllFrames(identity), path, "pixel value transformation", error) ||
        !check(pm->addForAllFrames(mapping), path, "real world value mapping", error))
        return FALSE;

    DPMParametricMapIOD::FramesType frames_variant = pm->getFrames();
    auto *frames = OFget<DPMParametricMapIOD::Frames<Float32>>(&frames_variant);
    if (!frames)
        return fail(error, FM_ERROR_IO, _("%s: no float frames"), path);
    gsize plane = (gsize)o->nx * o->ny;
    for (int z = 0; z < o->nz; z++) {
        FGPlanePosPatient position;
        const double *p = &o->positions[3 * z];
        position.setImagePositionPatient(ds(p[0]).c_str(), ds(p[1]).c_str(), ds(p[2]).c_str());
        FGFrameContent content_fg;
        content_fg.setDimensionIndexValues((Uint32)(z + 1), 0);
        FGDerivationImage derivation;
        OFVector<FGBase *> per_frame;
        per_frame.push_back(&position);
        per_frame.push_back(&content_fg);
        if (o->from_dicom && add_derivation(o, z, false, derivation))
            per_frame.push_back(&derivation);
        std::vector<Float32> pixels(map->data + plane * z, map->data + plane * (z + 1));
        if (!check(frames->addFrame(pixels.data(), plane, per_frame), path, "frame", error))
            return FALSE;
    }
    if (o->from_dicom)
        add_common_references(o, pm->getIODCommonInstanceReferenceModule());
    DcmFileFormat ff;
    if (!check(pm->write(*ff.getDataset()), path, "Parametric Map", error))
        return FALSE;
    return save(ff, path, error);
}

namespace
{

/* Segment codes (SNOMED CT) for the roles Fluxmap's methods ask for; anything else is tissue. */
struct RoleCode {
    const char *role, *code, *meaning;
};
const RoleCode kRoles[] = {
    {"aorta", "15825003", "Aorta"},
    {"artery", "51114001", "Artery"},
    {"portal_vein", "32764006", "Portal vein"},
    {"liver", "10200004", "Liver"},
    {"tumour", "108369006", "Neoplasm"},
    {"tumor", "108369006", "Neoplasm"},
};

std::string segment_key(const fm_roi *roi)
{
    return roi->role && *roi->role ? roi->role : (roi->name ? roi->name : "roi");
}

} // namespace

extern "C" gboolean fm_dicom_out_write_segmentation(fm_dicom_out *o, const char *path,
                                                    GPtrArray *rois, GError **error)
{
    if (!rois || rois->len == 0)
        return fail(error, FM_ERROR_BAD_INPUT, _("%s: there are no ROIs to write"), path);
    std::vector<std::string> keys;
    for (guint i = 0; i < rois->len; i++) {
        std::string key = segment_key((const fm_roi *)rois->pdata[i]);
        bool seen = false;
        for (const std::string &k : keys)
            seen = seen || k == key;
        if (!seen)
            keys.push_back(key);
    }
    if (keys.size() > 65535)
        return fail(error, FM_ERROR_BAD_INPUT, _("%s: too many segments"), path);
    IODGeneralEquipmentModule::EquipmentInfo equipment(kManufacturer, "fluxmap", "1", FM_VERSION);
    ContentIdentificationMacro content("1", "ROIS", "Fluxmap ROIs", kCreator);
    DcmSegmentation *raw = nullptr;
    if (!check(DcmSegmentation::createBinarySegmentation(raw, (Uint16)o->ny, (Uint16)o->nx,
                                                         equipment, content),
               path, "Segmentation", error))
        return FALSE;
    std::unique_ptr<DcmSegmentation> seg(raw);
    if (o->from_dicom && !o->reference_file.empty() &&
        g_file_test(o->reference_file.c_str(), G_FILE_TEST_IS_REGULAR))
        seg->importFromSourceImage(o->reference_file.c_str());
    seg->getStudy().setStudyInstanceUID(o->study_uid.c_str());
    set_new_study(o, seg->getStudy());
    if (!set_series(o, seg->getSeries(), seg->getFrameOfReference(), o->seg_series_uid, "901",
                    " ROIs"))
        return fail(error, FM_ERROR_IO, _("%s: cannot set the series"), path);
    const std::string &date = o->created_date, &time = o->created_time;
    seg->getSeries().setSeriesDate(date.c_str());
    seg->getSeries().setSeriesTime(time.c_str());
    seg->getGeneralImage().setContentDate(date.c_str());
    seg->getGeneralImage().setContentTime(time.c_str());

    std::string dim_uid = new_uid();
    IODMultiframeDimensionModule &dims = seg->getDimensions();
    if (!check(dims.addDimensionIndex(DCM_ReferencedSegmentNumber, dim_uid.c_str(),
                                      DCM_SegmentIdentificationSequence, "Segment"),
               path, "dimension", error) ||
        !check(dims.addDimensionIndex(DCM_ImagePositionPatient, dim_uid.c_str(),
                                      DCM_PlanePositionSequence, "Slice position"),
               path, "dimension", error) ||
        !add_shared_geometry(o, seg->getFunctionalGroups()))
        return fail(error, FM_ERROR_IO, _("%s: cannot describe the geometry"), path);

    gsize plane = (gsize)o->nx * o->ny;
    std::vector<Uint8> mask(plane);
    for (size_t s = 0; s < keys.size(); s++) {
        const char *meaning = "Tissue", *code = "85756007";
        for (const RoleCode &r : kRoles)
            if (keys[s] == r.role)
                code = r.code, meaning = r.meaning;
        DcmSegment *segment = nullptr;
        if (!check(DcmSegment::create(segment, keys[s].substr(0, 64).c_str(),
                                      CodeSequenceMacro("91723000", "SCT", "Anatomical Structure"),
                                      CodeSequenceMacro(code, "SCT", meaning),
                                      DcmSegTypes::SAT_MANUAL),
                   path, "segment", error))
            return FALSE;
        Uint16 number = 0;
        if (!check(seg->addSegment(segment, number), path, "segment", error)) {
            delete segment;
            return FALSE;
        }
        for (int z = 0; z < o->nz; z++) {
            std::fill(mask.begin(), mask.end(), 0);
            for (guint i = 0; i < rois->len; i++) {
                const fm_roi *roi = (const fm_roi *)rois->pdata[i];
                if (segment_key(roi) != keys[s] || (roi->slice >= 0 && roi->slice != z))
                    continue;
                g_autofree guint8 *m = fm_roi_rasterise(roi, o->nx, o->ny);
                for (gsize p = 0; p < plane; p++)
                    mask[p] = mask[p] || m[p];
            }
            FGPlanePosPatient position;
            const double *p = &o->positions[3 * z];
            position.setImagePositionPatient(ds(p[0]).c_str(), ds(p[1]).c_str(), ds(p[2]).c_str());
            FGFrameContent content_fg;
            content_fg.setDimensionIndexValues(number, 0);
            content_fg.setDimensionIndexValues((Uint32)(z + 1), 1);
            FGDerivationImage derivation;
            OFVector<FGBase *> per_frame;
            per_frame.push_back(&position);
            per_frame.push_back(&content_fg);
            if (o->from_dicom && add_derivation(o, z, true, derivation))
                per_frame.push_back(&derivation);
            if (!check(seg->addFrame(mask.data(), number, per_frame), path, "frame", error))
                return FALSE;
        }
    }
    if (o->from_dicom)
        add_common_references(o, seg->getCommonInstanceReference());
    DcmFileFormat ff;
    if (!check(seg->writeDataset(*ff.getDataset()), path, "Segmentation", error))
        return FALSE;
    return save(ff, path, error);
}
