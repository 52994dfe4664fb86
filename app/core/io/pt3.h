/* PicoQuant .pt3 reader: PicoHarp 300 T3 files with the old binary header (format 2.0). */
#pragma once

#include <gio/gio.h>
#include "app/core/dataset.h"

G_BEGIN_DECLS

/* Byte layout of the file header, format version 2.0 (PicoQuant's PicoHarp 300 file demos):
 * an ASCII part, a binary part, one board part, a T3 part, then ImgHdrSize int32 words of
 * imaging header and the 32-bit PicoHarp T3 records (the .ptu record type 0x00010303). */
#define FM_PT3_IDENT "PicoHarp 300" /* char[16] at 0, NUL-padded */
#define FM_PT3_FORMAT_VERSION 16    /* char[6]: "2.0" */
#define FM_PT3_CREATOR_NAME 22      /* char[18] */
#define FM_PT3_CREATOR_VERSION 40   /* char[12] */
#define FM_PT3_FILE_TIME 52         /* char[18] */
#define FM_PT3_COMMENT 72           /* char[256], after a CR LF at 70 */
#define FM_PT3_CURVES 328           /* int32s of the binary part from here */
#define FM_PT3_BITS_PER_RECORD 332
#define FM_PT3_ROUTING_CHANNELS 336
#define FM_PT3_NUMBER_OF_BOARDS 340
#define FM_PT3_MEAS_MODE 348 /* 2 = T2, 3 = T3 */
#define FM_PT3_SUB_MODE 352
#define FM_PT3_ACQUISITION_MS 364
#define FM_PT3_BOARD 536 /* the board part: HardwareIdent char[16] ... */
#define FM_PT3_SYNC_DIVIDER 564
#define FM_PT3_RESOLUTION_NS 584 /* float32: the dtime bin width */
#define FM_PT3_ROUTER_ENABLED 592
#define FM_PT3_T3 692           /* the T3 part: ExtDevices, 2 reserved, ... */
#define FM_PT3_SYNC_RATE_HZ 704 /* int32 CntRate0 */
#define FM_PT3_RECORDS 720      /* uint32 */
#define FM_PT3_IMG_HDR_SIZE 724 /* int32 words of imaging header that follow */
#define FM_PT3_IMG_HDR 728
/* Imaging header words of a laser scanning microscope (ident 3), as SymPhoTime writes them;
 * marker numbers as in the .ptu tags ImgHdr_Frame/LineStart/LineStop. */
#define FM_PT3_IMG_DIMENSIONS 0 /* 1 point, 2 line, 3 image */
#define FM_PT3_IMG_IDENT 1      /* 1 PI E710 piezo stage, 3 LSM */
#define FM_PT3_IMG_FRAME 2
#define FM_PT3_IMG_LINE_START 3
#define FM_PT3_IMG_LINE_STOP 4
#define FM_PT3_IMG_PATTERN 5 /* low byte: 0 monodirectional, 1 bidirectional */
#define FM_PT3_IMG_PIX_X 6
#define FM_PT3_IMG_PIX_Y 7
#define FM_PT3_IMG_LSM 3

/* TRUE when the bytes start like a .pt3 file (its "PicoHarp 300" ident). */
gboolean fm_pt3_sniff(const guint8 *head, gsize n);

/* Reads a .pt3 as fm_ptu_read_channel reads a .ptu (channel 0: all; the routing channel
 * 1..4 otherwise) with the same image rules and metadata, "format" = "pt3". The sync period is
 * 1 / CntRate0; a file without imaging header (ImgHdrSize 0) or with dimensions 1 is a point
 * measurement: one decay. Imaging headers of other scanners than an LSM (ident 3), whose
 * pixels are timed rather than marked, are FM_ERROR_BAD_INPUT naming the ident. */
fm_dataset *fm_pt3_read(const char *path, int channel, int max_bins,
                        void (*progress)(double fraction, gpointer user), gpointer progress_user,
                        GCancellable *cancellable, GError **error);

G_END_DECLS
