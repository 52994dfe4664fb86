#!/usr/bin/env python3
"""Reads a DICOM Parametric Map or Segmentation back with pydicom (independent of DCMTK, which
wrote it) for test-cli-dicom-out: prints one JSON object and writes the frames, in file order,
raw to OUT (float32 for a Parametric Map, one byte 0/1 per pixel for a Segmentation).

usage: dicom_out_read.py OBJECT.dcm OUT.raw [SOURCE_FOLDER]

With SOURCE_FOLDER (the series the object was derived from), each frame's ImagePositionPatient
is matched to the source's slice positions (slices ordered along the normal of the source's
ImageOrientationPatient): "slice" is that slice's index (-1: none within 1e-3 mm), and
"source_ok" says whether the frame's derivation source image is a file of that slice.
"""
import json
import os
import sys

import numpy as np
import pydicom


def source_slices(folder):
    """(study, series, frame of reference, [(position, {sop uids})] ordered along the normal)"""
    slices = []
    ids = None
    for name in sorted(os.listdir(folder)):
        ds = pydicom.dcmread(os.path.join(folder, name), stop_before_pixels=True)
        ids = (ds.StudyInstanceUID, ds.SeriesInstanceUID, ds.get("FrameOfReferenceUID", ""))
        pos = np.array([float(v) for v in ds.ImagePositionPatient])
        iop = [float(v) for v in ds.ImageOrientationPatient]
        normal = np.cross(iop[:3], iop[3:])
        for s in slices:
            if np.abs(s[0] - pos).max() < 1e-3:
                s[1].add(ds.SOPInstanceUID)
                break
        else:
            slices.append((pos, {ds.SOPInstanceUID}, float(np.dot(pos, normal))))
    slices.sort(key=lambda s: s[2])
    return ids, [(s[0], s[1]) for s in slices]


def code(seq):
    if not seq:
        return None
    item = seq[0]
    return [item.CodeValue, item.CodingSchemeDesignator, item.CodeMeaning]


def main():
    path, out = sys.argv[1], sys.argv[2]
    ds = pydicom.dcmread(path)
    info = {
        "sop_class": ds.SOPClassUID,
        "modality": ds.Modality,
        "study_uid": ds.StudyInstanceUID,
        "series_uid": ds.SeriesInstanceUID,
        "frame_of_reference_uid": ds.get("FrameOfReferenceUID", ""),
        "rows": int(ds.Rows),
        "columns": int(ds.Columns),
        "frames": int(ds.get("NumberOfFrames", 1)),
        "image_type": list(ds.ImageType),
        "referenced_series": [s.SeriesInstanceUID for s in ds.get("ReferencedSeriesSequence", [])],
    }
    shared = ds.SharedFunctionalGroupsSequence[0]
    info["pixel_spacing"] = [float(v) for v in shared.PixelMeasuresSequence[0].PixelSpacing]
    info["orientation"] = [
        float(v) for v in shared.PlaneOrientationSequence[0].ImageOrientationPatient
    ]
    if "RealWorldValueMappingSequence" in shared:
        rwvm = shared.RealWorldValueMappingSequence[0]
        info["units"] = code(rwvm.MeasurementUnitsCodeSequence)
        info["lut_label"] = rwvm.LUTLabel
        info["slope"] = float(rwvm.RealWorldValueSlope)
        info["intercept"] = float(rwvm.RealWorldValueIntercept)
    if "SegmentSequence" in ds:
        info["segments"] = [
            {"number": int(s.SegmentNumber), "label": s.SegmentLabel,
             "type": code(s.SegmentedPropertyTypeCodeSequence)}
            for s in ds.SegmentSequence
        ]
    slices = None
    if len(sys.argv) > 3:
        ids, slices = source_slices(sys.argv[3])
        info["source"] = {"study_uid": ids[0], "series_uid": ids[1],
                          "frame_of_reference_uid": ids[2], "slices": len(slices)}
    frames = []
    for group in ds.PerFrameFunctionalGroupsSequence:
        pos = np.array([float(v) for v in group.PlanePositionSequence[0].ImagePositionPatient])
        frame = {"position": pos.tolist()}
        if "SegmentIdentificationSequence" in group:
            frame["segment"] = int(group.SegmentIdentificationSequence[0].ReferencedSegmentNumber)
        if slices is not None:
            frame["slice"] = next(
                (k for k, s in enumerate(slices) if np.abs(s[0] - pos).max() < 1e-3), -1)
            refs = [img.ReferencedSOPInstanceUID
                    for der in group.get("DerivationImageSequence", [])
                    for img in der.SourceImageSequence]
            frame["source_ok"] = bool(refs) and frame["slice"] >= 0 and all(
                r in slices[frame["slice"]][1] for r in refs)
        frames.append(frame)
    info["per_frame"] = frames
    pixels = ds.pixel_array.reshape(info["frames"], info["rows"], info["columns"])
    if "SegmentSequence" in ds:
        pixels.astype(np.uint8).tofile(out)
    else:
        pixels.astype("<f4").tofile(out)
    print(json.dumps(info))


if __name__ == "__main__":
    main()
