/* A float's IEEE-754 bits and back, without aliasing tricks (memcpy compiles to one move). */
#pragma once

#include <glib.h>
#include <string.h>

static inline guint32 fm_float_bits(float value)
{
    guint32 bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static inline float fm_bits_float(guint32 bits)
{
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}
