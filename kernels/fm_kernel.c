/* Small shared helpers of every kernels family: pixel sizes and names for statuses and types. */
#include "fm_kernel.h"

#include <stdint.h>

size_t fm_pixel_size(fm_pixel_type type)
{
    switch (type) {
    case FM_PIXEL_U8: return sizeof(uint8_t);
    case FM_PIXEL_U16: return sizeof(uint16_t);
    case FM_PIXEL_F32: return sizeof(float);
    }
    return 0;
}

const char *fm_pixel_type_name(fm_pixel_type type)
{
    switch (type) {
    case FM_PIXEL_U8: return "uint8";
    case FM_PIXEL_U16: return "uint16";
    case FM_PIXEL_F32: return "float32";
    }
    return "unknown";
}

const char *fm_status_name(fm_status status)
{
    switch (status) {
    case FM_OK: return "ok";
    case FM_ERR_INVALID_ARG: return "invalid argument";
    case FM_ERR_NO_MEMORY: return "out of memory";
    case FM_ERR_DEVICE: return "device error";
    case FM_ERR_NO_DEVICE: return "no CUDA device";
    case FM_ERR_CANCELLED: return "cancelled";
    }
    return "unknown status";
}
