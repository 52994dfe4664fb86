/* Byte offsets of the .sdt structures (packed, little-endian), shared by reader and writer. */
#pragma once

/* File header (bhfile_header, 42 bytes). */
#define SDT_FILE_HEADER_LEN 42
#define SDT_HDR_REVISION 0         /* i16: software revision and module type */
#define SDT_HDR_INFO_OFFS 2        /* i32 */
#define SDT_HDR_INFO_LEN 6         /* i16 */
#define SDT_HDR_SETUP_OFFS 8       /* i32 */
#define SDT_HDR_SETUP_LEN 12       /* i16 */
#define SDT_HDR_DATA_BLOCK_OFFS 14 /* i32: first data block header */
#define SDT_HDR_N_DATA_BLOCKS 18   /* i16: 0x7fff means "see reserved1" */
#define SDT_HDR_DATA_BLOCK_LEN 20  /* i32: bytes of data per block */
#define SDT_HDR_MEAS_DESC_OFFS 24  /* i32 */
#define SDT_HDR_N_MEAS_DESC 28     /* i16 */
#define SDT_HDR_MEAS_DESC_LEN 30   /* i16: bytes per measurement description */
#define SDT_HDR_HEADER_VALID 32    /* u16 */
#define SDT_HDR_RESERVED1 34       /* u32: number of data blocks in large files */
#define SDT_HDR_RESERVED2 38       /* u16 */
#define SDT_HDR_CHKSUM 40          /* u16: makes the 21 header words sum to 0x55aa */
#define SDT_HEADER_VALID 0x5555
#define SDT_HEADER_CHKSUM_SUM 0x55aa

/* Measurement description (MeasureInfo, then stop, FCS and extended image parts). */
#define SDT_MD_TIME 0       /* char[9] */
#define SDT_MD_DATE 9       /* char[11] */
#define SDT_MD_MOD_SER 20   /* char[16] */
#define SDT_MD_MEAS_MODE 36 /* i16 */
#define SDT_MD_SYN_FQ 60    /* f32: sync frequency, Hz */
#define SDT_MD_TAC_R 68     /* f32: TAC range, s */
#define SDT_MD_TAC_G 72     /* i16: TAC gain */
#define SDT_MD_ADC_RE 86    /* i16: ADC resolution = time bins */
#define SDT_MD_MOD_TYPE 121 /* char[16] */
#define SDT_MD_SCAN_X 177   /* i32 */
#define SDT_MD_SCAN_Y 181   /* i32 */
#define SDT_MD_MIN_LEN 185  /* up to and including scan_y */
#define SDT_MD_INFO_LEN 215 /* the whole MeasureInfo part */
#define SDT_MD_IMAGE_X 313  /* i32, extended part (after the 60-byte stop and 38-byte FCS info) */
#define SDT_MD_IMAGE_Y 317  /* i32 */

/* Data block header (BHFileBlockHeader, 22 bytes). */
#define SDT_BLOCK_HEADER_LEN 22
#define SDT_BLK_NO 0            /* i16 */
#define SDT_BLK_DATA_OFFS 2     /* i32 */
#define SDT_BLK_NEXT_OFFS 6     /* i32 */
#define SDT_BLK_TYPE 10         /* u16 */
#define SDT_BLK_MEAS_DESC_NO 12 /* i16 */
#define SDT_BLK_LONG_NO 14      /* u32 */
#define SDT_BLK_LENGTH 18       /* u32: bytes of data (compressed size when zipped) */
#define SDT_BLOCK_MEAS_DATA 0x0001
#define SDT_BLOCK_DTYPE_MASK 0x0f00 /* 0: uint16, 1: uint32, 2: double */
#define SDT_BLOCK_ZIPPED 0x1000
