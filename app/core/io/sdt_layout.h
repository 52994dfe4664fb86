/* Byte offsets of the .sdt structures (packed, little-endian), shared by reader and writer.
 * Source: B&H's SPC_data_file_structure.h (SPCM v9.66 and later; it also documents which parts
 * older software versions wrote) and the SPC/SPCM manual's "data file structure" chapter. */
#pragma once

/* File header (bhfile_header, 42 bytes). */
#define SDT_FILE_HEADER_LEN 42
#define SDT_HDR_REVISION                                                                           \
    0                              /* i16: bits 0-3 software revision, 4-11 (4-15 from rev 14)     \
                                      module type */
#define SDT_HDR_INFO_OFFS 2        /* i32 */
#define SDT_HDR_INFO_LEN 6         /* i16 */
#define SDT_HDR_SETUP_OFFS 8       /* i32 */
#define SDT_HDR_SETUP_LEN 12       /* i16 (read as u16: setups reach 40 kB) */
#define SDT_HDR_DATA_BLOCK_OFFS 14 /* i32: first data block header */
#define SDT_HDR_N_DATA_BLOCKS 18   /* i16: 0x7fff means "see reserved1" */
#define SDT_HDR_DATA_BLOCK_LEN 20  /* u32: bytes of the longest block, uncompressed */
#define SDT_HDR_MEAS_DESC_OFFS 24  /* i32 */
#define SDT_HDR_N_MEAS_DESC 28     /* i16 */
#define SDT_HDR_MEAS_DESC_LEN 30   /* i16: bytes per measurement description */
#define SDT_HDR_HEADER_VALID 32    /* u16 */
#define SDT_HDR_RESERVED1 34       /* u32: number of data blocks in large files */
#define SDT_HDR_RESERVED2 38       /* u16 */
#define SDT_HDR_CHKSUM 40          /* u16: makes the 21 header words sum to 0x55aa */
#define SDT_HEADER_VALID 0x5555
#define SDT_HEADER_CHKSUM_SUM 0x55aa
/* Software revision 15 and later: block headers carry offset bits 32-39 (files > 4 GiB). */
#define SDT_REV_40BIT_OFFSETS 15

/* Measurement description (MeasureInfo). Its length is the header's meas_desc_block_length:
 * SPCM wrote the parts below in turn over the versions, so a field exists only where the
 * length reaches past it (the SPC-730 era wrote 203 bytes, v7.9 added the stop info, v8.1 the
 * FCS info, later versions the image size for FIFO imaging, up to 512 bytes today). */
#define SDT_MD_TIME 0       /* char[9] */
#define SDT_MD_DATE 9       /* char[11] */
#define SDT_MD_MOD_SER 20   /* char[16] */
#define SDT_MD_MEAS_MODE 36 /* i16: SPCM's measurement mode (13: FIFO imaging) */
#define SDT_MD_SYN_FD 58    /* i16: sync frequency divider */
#define SDT_MD_TAC_R 64     /* f32: TAC range, s */
#define SDT_MD_TAC_G 68     /* i16: TAC gain */
#define SDT_MD_ADC_RE 82    /* i16: ADC resolution = time bins; 0 means 65536 */
#define SDT_MD_MOD_TYPE 117 /* char[16] */
#define SDT_MD_SCAN_X 173   /* i32: scan modes' pixels per line */
#define SDT_MD_SCAN_Y 177   /* i32: lines */
#define SDT_MD_SCAN_RX 181  /* i32: routing channels in x */
#define SDT_MD_SCAN_RY 185  /* i32: routing channels in y */
#define SDT_MD_MIN_LEN 84   /* through adc_re: the image size may then come from the setup */
#define SDT_MD_INFO_LEN 211 /* the whole MeasureInfo part */
/* MeasStopInfo (60 bytes, from v7.9) */
#define SDT_MD_STOP_FLAGS 213    /* u16: bit 15 - rates were read */
#define SDT_MD_MIN_SYNC_RATE 231 /* f32, Hz; -1 when not set */
#define SDT_MD_MAX_SYNC_RATE 247 /* f32 */
#define SDT_MD_STOP_INFO_END 271 /* then MeasFCSInfo, 38 bytes */
#define SDT_MD_IMAGE_X 309       /* i32: FIFO imaging and camera modes */
#define SDT_MD_IMAGE_Y 313       /* i32 */
#define SDT_MD_IMAGE_RX 317      /* i32 */
#define SDT_MD_IMAGE_RY 321      /* i32 */
#define SDT_MD_EXT_END 335       /* then MeasHISTInfo */
#define SDT_MD_FULL_LEN 512      /* SPCM 9.x */
#define SDT_MEAS_MODE_FIFO_IMAGE 13

/* Data block header (BHFileBlockHeader, 22 bytes). */
#define SDT_BLOCK_HEADER_LEN 22
#define SDT_BLK_NO 0               /* i16 before revision 15; then u8 data_offs_ext, u8 next_ext */
#define SDT_BLK_DATA_OFFS_EXT 0    /* u8: bits 32-39 of data_offs (revision >= 15) */
#define SDT_BLK_NEXT_OFFS_EXT 1    /* u8: bits 32-39 of next_block_offs */
#define SDT_BLK_DATA_OFFS 2        /* u32 */
#define SDT_BLK_NEXT_OFFS 6        /* u32 */
#define SDT_BLK_TYPE 10            /* u16 */
#define SDT_BLK_MEAS_DESC_NO 12    /* i16 */
#define SDT_BLK_LONG_NO 14         /* u32 */
#define SDT_BLK_LENGTH 18          /* u32: bytes of data, NOT compressed */
#define SDT_BLOCK_MODE_MASK 0x000f /* 1 measured, 8 FIFO, ... */
#define SDT_BLOCK_MEAS_DATA 0x0001
#define SDT_BLOCK_FIFO_DATA 0x0008
#define SDT_BLOCK_CONTENT_MASK 0x00f0 /* 0 decay, 0x10 page, 0x60 FIFO image, ... */
#define SDT_BLOCK_DECAY 0x0000
#define SDT_BLOCK_PAGE 0x0010
#define SDT_BLOCK_IMG 0x0060
#define SDT_BLOCK_DTYPE_MASK 0x0f00 /* 0: uint16, 1: uint32, 2: double */
#define SDT_BLOCK_ZIPPED 0x1000
#define SDT_BLOCK_LZ4 0x4000
