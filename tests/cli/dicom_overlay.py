#!/usr/bin/env python3
"""The overlay a DICOM viewer (3D Slicer, OHIF) draws, worked out with pydicom for
test-cli-dicom-out: does a Parametric Map or Segmentation that Fluxmap wrote land on the right
voxels of its source series?

usage:
  dicom_overlay.py source PHANTOM.nii SERIES_DIR TRUTH.json ROIS.json
      Writes the DCE phantom (`fluxmap-cli simulate dce --model=tofts`, NIfTI-1 float32 x, y, z,
      t) as a classic MR series with an oblique orientation, unequal pixel spacing, an origin off
      zero, slices stacked against their normal and files in shuffled order. Region 4 (the
      highest Ktrans) is kept only as an L-shaped lesion on one slice; its other voxels take
      region 1's curve. TRUTH.json: the lesion's and the ROIs' voxels as (SOP instance of the
      slice, row, column); ROIS.json: the artery and a 'tumour' rectangle over the lesion's bar,
      in the slice numbering Fluxmap shows (slices ordered along the normal).
  dicom_overlay.py check OBJECT.dcm SERIES_DIR TRUTH.json [KTRANS_MIN]
      Maps every pixel of every frame to patient coordinates through the object's functional
      groups (per-frame before shared), then into the source through each source file's own
      ImagePositionPatient, ImageOrientationPatient and PixelSpacing, as a viewer does. A
      Parametric Map: the pixels above KTRANS_MIN must be the lesion's voxels; a Segmentation:
      each segment's pixels must be its ROI's voxels. Both: the study, frame of reference and
      referenced series are the source's. Exit 1 with the first difference; on success prints
      one JSON object of what was matched.
"""
import json
import os
import random
import struct
import sys

import numpy as np
import pydicom
from pydicom.dataset import Dataset, FileDataset, FileMetaDataset
from pydicom.uid import ExplicitVRLittleEndian, generate_uid

MR_IMAGE = "1.2.840.10008.5.1.4.1.1.4"
ROW_SPACING, COL_SPACING, SLICE_STEP = 0.7, 1.3, 3.2  # mm: between rows, columns, slices
ORIGIN = np.array([-40.5, 22.25, 13.0])
LESION_SLICE = 0  # phantom z of the lesion: the last slice as shown
LESION = [(x, y) for x in range(15, 20) for y in (13, 14)] + [
    (x, y) for x in (15, 16) for y in (15, 16, 17)
]
TUMOUR_RECT = (15, 13, 20, 15)  # x0, y0, x1, y1: the lesion's bar
ARTERY_RECT = (1, 1, 4, 3)
REGION_1, REGION_4 = (8, 7), (16, 16)  # a voxel of each (x, y), away from the lesion


def fail(message):
    sys.stderr.write("dicom_overlay.py: %s\n" % message)
    sys.exit(1)


def read_nifti(path):
    with open(path, "rb") as f:
        raw = f.read()
    if struct.unpack("<i", raw[:4])[0] != 348:
        fail("%s: not a NIfTI-1 file" % path)
    dims = struct.unpack("<8h", raw[40:56])
    if struct.unpack("<h", raw[70:72])[0] != 16 or dims[0] != 4:
        fail("%s: expected float32 x, y, z, t" % path)
    offset = int(struct.unpack("<f", raw[108:112])[0])
    nx, ny, nz, nt = dims[1:5]
    return np.frombuffer(raw, "<f4", nx * ny * nz * nt, offset).reshape(nt, nz, ny, nx)


def rotation():
    """An oblique frame: rotations about z, x and y, so that no axis is along the patient's."""
    a, b, c = np.radians([25.0, -17.0, 11.0])
    rz = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
    rx = np.array([[1, 0, 0], [0, np.cos(b), -np.sin(b)], [0, np.sin(b), np.cos(b)]])
    ry = np.array([[np.cos(c), 0, np.sin(c)], [0, 1, 0], [-np.sin(c), 0, np.cos(c)]])
    return ry @ rx @ rz


def ds_text(v):
    return ("%.10g" % v)[:16]


def write_source(nifti, folder, truth_path, rois_path):
    data = read_nifti(nifti).copy()  # t, z, y, x
    nt, nz, ny, nx = data.shape
    region_1 = data[:, :, REGION_1[1], REGION_1[0]][:, 0].copy()
    region_4 = data[:, :, REGION_4[1], REGION_4[0]][:, 0].copy()
    # region 4 is x 14..20, y 12..17 in the phantom (ph.rois.json): all of it becomes region 1,
    # then the lesion alone takes region 4's curve
    data[:, :, 12:18, 14:21] = region_1[:, None, None, None]
    for x, y in LESION:
        data[:, LESION_SLICE, y, x] = region_4
    rot = rotation()
    row_dir, col_dir, normal = rot[:, 0], rot[:, 1], rot[:, 2]
    slope = float(data.max()) / 60000.0
    study, series, frame_of_reference = generate_uid(), generate_uid(), generate_uid()
    os.makedirs(folder, exist_ok=True)
    names = ["MR%04d" % i for i in range(nz * nt)]
    random.Random(11).shuffle(names)
    slice_sops = {}
    for z in range(nz):
        # phantom slice z sits against the normal: the viewer's (and Fluxmap's) order, along
        # the normal, is the phantom's reversed
        position = ORIGIN - z * SLICE_STEP * normal
        for t in range(nt):
            meta = FileMetaDataset()
            meta.MediaStorageSOPClassUID = MR_IMAGE
            meta.MediaStorageSOPInstanceUID = generate_uid()
            meta.TransferSyntaxUID = ExplicitVRLittleEndian
            path = os.path.join(folder, names[z * nt + t])
            ds = FileDataset(path, Dataset(), file_meta=meta, preamble=b"\0" * 128)
            ds.SOPClassUID = MR_IMAGE
            ds.SOPInstanceUID = meta.MediaStorageSOPInstanceUID
            ds.StudyInstanceUID, ds.SeriesInstanceUID = study, series
            ds.FrameOfReferenceUID = frame_of_reference
            ds.PatientName, ds.PatientID = "Overlay^Phantom", "FM-OVERLAY"
            ds.PatientBirthDate, ds.PatientSex = "", "O"
            ds.StudyDate, ds.StudyTime, ds.StudyID = "20260101", "100000", "1"
            ds.AccessionNumber, ds.ReferringPhysicianName = "", ""
            ds.Modality, ds.SeriesNumber, ds.InstanceNumber = "MR", 5, z * nt + t + 1
            ds.Manufacturer = "test"
            ds.AcquisitionNumber = t + 1
            seconds = 2.0 * t
            ds.AcquisitionTime = "10%02d%02d.%06d" % (
                int(seconds // 60), int(seconds % 60), int(round((seconds % 1) * 1e6)))
            ds.RepetitionTime, ds.FlipAngle, ds.EchoTime = 5, 30, 1.2
            ds.ScanningSequence, ds.SequenceVariant, ds.ScanOptions = "GR", "SP", ""
            ds.MRAcquisitionType = "3D"
            ds.ImageType = ["ORIGINAL", "PRIMARY", "OTHER"]
            ds.ImagePositionPatient = [ds_text(v) for v in position]
            ds.ImageOrientationPatient = [ds_text(v) for v in np.concatenate([row_dir, col_dir])]
            ds.PixelSpacing = [ds_text(ROW_SPACING), ds_text(COL_SPACING)]
            ds.SliceThickness = ds_text(SLICE_STEP)
            ds.SliceLocation = ds_text(float(np.dot(position, normal)))
            ds.Rows, ds.Columns = ny, nx
            ds.SamplesPerPixel, ds.PhotometricInterpretation = 1, "MONOCHROME2"
            ds.BitsAllocated, ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 16, 16, 15, 0
            ds.RescaleSlope, ds.RescaleIntercept, ds.RescaleType = ds_text(slope), "0", "US"
            stored = np.clip(np.rint(data[t, z] / slope), 0, 65535).astype("<u2")
            ds.PixelData = stored.tobytes()  # row y, column x: the phantom's (x, y) as seen
            ds.is_little_endian, ds.is_implicit_VR = True, False
            ds.save_as(path, write_like_original=False)
            if t == 0:
                slice_sops[z] = ds.SOPInstanceUID
    order = sorted(range(nz), key=lambda z: -z)  # along the normal
    shown = {z: order.index(z) for z in range(nz)}  # phantom z -> slice as Fluxmap shows it
    x0, y0, x1, y1 = TUMOUR_RECT
    truth = {
        "study_uid": study, "series_uid": series, "frame_of_reference_uid": frame_of_reference,
        "lesion": sorted([slice_sops[LESION_SLICE], y, x] for x, y in LESION),
        "segments": {
            "tumour": sorted([slice_sops[LESION_SLICE], y, x]
                             for x in range(x0, x1) for y in range(y0, y1)),
            "artery": sorted([slice_sops[z], y, x] for z in range(nz)
                             for x in range(ARTERY_RECT[0], ARTERY_RECT[2])
                             for y in range(ARTERY_RECT[1], ARTERY_RECT[3])),
        },
    }
    with open(truth_path, "w") as f:
        json.dump(truth, f)
    rois = [
        {"kind": "rectangle", "name": "artery", "role": "artery",
         "points": [list(ARTERY_RECT[:2]), list(ARTERY_RECT[2:])]},
        {"kind": "rectangle", "name": "lesion", "role": "tumour",
         "points": [[x0, y0], [x1, y1]], "slice": shown[LESION_SLICE]},
    ]
    with open(rois_path, "w") as f:
        json.dump(rois, f)


class Source:
    """Each slice of the series (one per ImagePositionPatient) with its own geometry."""

    def __init__(self, folder):
        self.slices, self.ids, self.sops = [], set(), set()
        for name in sorted(os.listdir(folder)):
            ds = pydicom.dcmread(os.path.join(folder, name), stop_before_pixels=True)
            self.ids.add((ds.StudyInstanceUID, ds.SeriesInstanceUID, ds.FrameOfReferenceUID))
            self.sops.add(ds.SOPInstanceUID)
            pos = np.array([float(v) for v in ds.ImagePositionPatient])
            iop = np.array([float(v) for v in ds.ImageOrientationPatient])
            for s in self.slices:
                if np.abs(s["position"] - pos).max() < 1e-4:
                    s["sops"].add(ds.SOPInstanceUID)
                    break
            else:
                self.slices.append({
                    "position": pos, "row_dir": iop[:3], "col_dir": iop[3:],
                    "normal": np.cross(iop[:3], iop[3:]),
                    "spacing": [float(v) for v in ds.PixelSpacing],
                    "thickness": float(ds.SliceThickness),
                    "size": (int(ds.Rows), int(ds.Columns)), "sops": {ds.SOPInstanceUID}})
        if len(self.ids) != 1:
            fail("the source folder holds %d series" % len(self.ids))

    def canonical(self, voxels):
        """Truth voxels (any SOP instance of their slice, row, column) as voxel() names them."""
        out = set()
        for sop, r, c in voxels:
            named = [min(s["sops"]) for s in self.slices if sop in s["sops"]]
            if not named:
                fail("the truth names an instance that is not in the source folder")
            out.add((named[0], r, c))
        return out

    def voxel(self, point):
        """(a SOP instance of the slice, row, column) of the source voxel whose centre is point;
        fails when none is within 1e-3 mm (the objects share the source's grid)."""
        for s in self.slices:
            d = point - s["position"]
            if abs(np.dot(d, s["normal"])) > 1e-3:
                continue
            col = np.dot(d, s["row_dir"]) / s["spacing"][1]
            row = np.dot(d, s["col_dir"]) / s["spacing"][0]
            r, c = int(round(row)), int(round(col))
            if max(abs(row - r) * s["spacing"][0], abs(col - c) * s["spacing"][1]) > 1e-3:
                fail("point %s falls between the source's voxels (row %.4f, column %.4f)"
                     % (point.tolist(), row, col))
            if not (0 <= r < s["size"][0] and 0 <= c < s["size"][1]):
                fail("point %s is outside the source slice (row %d, column %d)"
                     % (point.tolist(), r, c))
            return min(s["sops"]), r, c
        fail("point %s lies on no slice of the source" % point.tolist())


def group(ds, frame, name):
    """A functional group's first item for frame: per-frame before shared (PS3.3 C.7.6.16)."""
    per_frame = ds.PerFrameFunctionalGroupsSequence[frame]
    if name in per_frame:
        return per_frame[name][0]
    shared = ds.SharedFunctionalGroupsSequence[0]
    if name in shared:
        return shared[name][0]
    fail("frame %d has no %s, per-frame or shared" % (frame + 1, name))


def frame_points(ds, frame):
    """Patient coordinates (LPS mm) of every pixel centre of frame, rows x columns x 3."""
    position = np.array([float(v) for v in
                         group(ds, frame, "PlanePositionSequence").ImagePositionPatient])
    iop = np.array([float(v) for v in
                    group(ds, frame, "PlaneOrientationSequence").ImageOrientationPatient])
    spacing = [float(v) for v in group(ds, frame, "PixelMeasuresSequence").PixelSpacing]
    rows, cols = np.arange(int(ds.Rows)), np.arange(int(ds.Columns))
    return (position[None, None, :]
            + cols[None, :, None] * spacing[1] * iop[None, None, :3]
            + rows[:, None, None] * spacing[0] * iop[None, None, 3:])


def check_references(ds, source, truth):
    study, series, frame_of_reference = next(iter(source.ids))
    if (study, series, frame_of_reference) != (
            truth["study_uid"], truth["series_uid"], truth["frame_of_reference_uid"]):
        fail("the source folder is not the series the truth was written for")
    if ds.StudyInstanceUID != study:
        fail("StudyInstanceUID %s is not the source's %s" % (ds.StudyInstanceUID, study))
    if ds.get("FrameOfReferenceUID") != frame_of_reference:
        fail("FrameOfReferenceUID %s is not the source's %s"
             % (ds.get("FrameOfReferenceUID"), frame_of_reference))
    if ds.SeriesInstanceUID == series:
        fail("the object is in the source's series")
    referenced = ds.get("ReferencedSeriesSequence", [])
    if [r.SeriesInstanceUID for r in referenced] != [series]:
        fail("ReferencedSeriesSequence names %s, not the source series"
             % [r.SeriesInstanceUID for r in referenced])
    instances = [i.ReferencedSOPInstanceUID for i in referenced[0].ReferencedInstanceSequence]
    if not instances or not set(instances) <= source.sops:
        fail("ReferencedInstanceSequence names instances that are not the source's")


def check(path, folder, truth_path, ktrans_min):
    with open(truth_path) as f:
        truth = json.load(f)
    source = Source(folder)
    ds = pydicom.dcmread(path)
    check_references(ds, source, truth)
    frames = int(ds.get("NumberOfFrames", 1))
    pixels = ds.pixel_array.reshape(frames, int(ds.Rows), int(ds.Columns))
    summary = {"frames": frames, "slices": len(source.slices)}
    if "SegmentSequence" in ds:
        labels = {int(s.SegmentNumber): s.SegmentLabel for s in ds.SegmentSequence}
        found = {label: set() for label in labels.values()}
        for k in range(frames):
            number = int(group(ds, k, "SegmentIdentificationSequence").ReferencedSegmentNumber)
            points = frame_points(ds, k)
            for r, c in zip(*np.nonzero(pixels[k])):
                found[labels[number]].add(source.voxel(points[r, c]))
        for label, voxels in truth["segments"].items():
            want = source.canonical(voxels)
            if found.get(label) != want:
                fail("segment %s covers %d source voxels, %d of them its ROI's; the ROI has %d"
                     % (label, len(found.get(label, ())), len(found.get(label, set()) & want),
                        len(want)))
            summary[label] = len(want)
        return summary
    # the artery's curve fits the tissue model badly and far above any tissue's Ktrans
    artery = source.canonical(truth["segments"]["artery"])
    hot, values = set(), []
    for k in range(frames):
        points = frame_points(ds, k)
        for r in range(int(ds.Rows)):
            for c in range(int(ds.Columns)):
                voxel = source.voxel(points[r, c])
                if (np.isfinite(pixels[k, r, c]) and pixels[k, r, c] > ktrans_min
                        and voxel not in artery):
                    hot.add(voxel)
                    values.append(float(pixels[k, r, c]))
    want = source.canonical(truth["lesion"])
    if hot != want:
        fail("%d map pixels above %g land on %d source voxels, %d of them the lesion's; the "
             "lesion has %d" % (len(values), ktrans_min, len(hot), len(hot & want), len(want)))
    summary["lesion_voxels"] = len(want)
    summary["lesion_ktrans"] = [min(values), max(values)]
    return summary


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "source":
        write_source(*sys.argv[2:6])
    elif len(sys.argv) in (5, 6) and sys.argv[1] == "check":
        ktrans_min = float(sys.argv[5]) if len(sys.argv) == 6 else 0.0
        print(json.dumps(check(sys.argv[2], sys.argv[3], sys.argv[4], ktrans_min)))
    else:
        fail(__doc__)


if __name__ == "__main__":
    main()
