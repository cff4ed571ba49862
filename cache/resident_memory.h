/* The process's resident memory, as the memory rule counts it (what
 * VmRSS and VmHWM report), for the caches' ceiling (chunk_cache.h). */
#ifndef TRACEFS_RESIDENT_MEMORY_H
#define TRACEFS_RESIDENT_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

/* Resident bytes now, or 0 when they cannot be read. */
uint64_t resident_memory_bytes(void);

/* False in builds whose resident memory is mostly the tool's own (address
 * and thread sanitizers keep shadow memory): a ceiling there would only
 * empty the caches. */
bool resident_memory_is_meaningful(void);

#endif
