/* Camera buffers page-locked for live contexts (cudaHostRegister), tracked so that freeing a
 * pool unregisters exactly what was registered, whichever context or thread asks. */
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 0 when ptr..ptr+bytes is now page-locked; -1 without CUDA or when the runtime refused. */
int fm_live_host_register(void *ptr, size_t bytes);
/* Unregisters ptr if fm_live_host_register registered it; else nothing. */
void fm_live_host_unregister(void *ptr);
/* How many buffers are registered now (tests). */
int fm_live_host_registered(void);

#ifdef __cplusplus
}
#endif
