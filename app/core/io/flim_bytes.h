/* Little-endian field access for the FLIM file readers and writers (.sdt and .ptu are LE). */
#pragma once

#include <glib.h>
#include <string.h>

/* Both formats are little-endian on disk whatever the host; assembling bytes by hand keeps
 * the readers correct on big-endian hosts and free of unaligned loads. */
static inline guint16 fm_le16(const guint8 *p)
{
    return (guint16)(p[0] | (p[1] << 8));
}

static inline guint32 fm_le32(const guint8 *p)
{
    return (guint32)p[0] | ((guint32)p[1] << 8) | ((guint32)p[2] << 16) | ((guint32)p[3] << 24);
}

static inline guint64 fm_le64(const guint8 *p)
{
    return (guint64)fm_le32(p) | ((guint64)fm_le32(p + 4) << 32);
}

static inline float fm_le_float(const guint8 *p)
{
    guint32 bits = fm_le32(p);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline double fm_le_double(const guint8 *p)
{
    guint64 bits = fm_le64(p);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static inline void fm_put_le16(guint8 *p, guint16 v)
{
    p[0] = (guint8)v;
    p[1] = (guint8)(v >> 8);
}

static inline void fm_put_le32(guint8 *p, guint32 v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (guint8)(v >> (8 * i));
}

static inline void fm_put_le64(guint8 *p, guint64 v)
{
    fm_put_le32(p, (guint32)v);
    fm_put_le32(p + 4, (guint32)(v >> 32));
}

static inline void fm_put_le_float(guint8 *p, float f)
{
    guint32 bits;
    memcpy(&bits, &f, sizeof bits);
    fm_put_le32(p, bits);
}

static inline void fm_put_le_double(guint8 *p, double d)
{
    guint64 bits;
    memcpy(&bits, &d, sizeof bits);
    fm_put_le64(p, bits);
}

/* Readers refuse to allocate more than this for one dataset: a corrupted size field must give
 * a message, not an out-of-memory abort. */
#define FM_FLIM_MAX_BYTES ((guint64)4 << 30)
