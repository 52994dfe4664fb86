/* The arguments every voxelwise DCE fit (the liver model, the standard models) checks alike. */
#pragma once

#include "../device.h"

static inline fm_status fm_dce_fit_args_check(const float *tissue, long long n_voxels,
                                              const void *outputs, char *msg, size_t msg_len)
{
    if (n_voxels < 0)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "n_voxels must be >= 0 (got %lld)",
                       n_voxels);
    if (!tissue && n_voxels > 0)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "tissue curves are NULL");
    if (!outputs)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "outputs are NULL");
    return FM_OK;
}
