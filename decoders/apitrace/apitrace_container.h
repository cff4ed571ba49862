/* Container detection shared by the probe and the index pass. */
#ifndef TRACEFS_APITRACE_CONTAINER_H
#define TRACEFS_APITRACE_CONTAINER_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

enum at_container { AT_CONTAINER_SNAPPY, AT_CONTAINER_GZIP, AT_CONTAINER_ZSTD, AT_CONTAINER_OTHER };

enum at_container at_container_of(const uint8_t *head, size_t size);
/* Whether bytes look like the start of an uncompressed call stream. */
gboolean at_plausible_raw(const uint8_t *head, size_t size);

#endif
