#ifndef TRACEFS_COMMON_FILES_H
#define TRACEFS_COMMON_FILES_H
#include <stdint.h>
struct trace;
/* Adds /info.json, /README, /errors and /.tracefs/stats after the index pass. */
void common_files_add(struct trace *trace);
/* What .tracefs/stats says of the mount's kernel read-ahead: `bytes` when
 * why_unset is NULL, else left as it was for that (static) reason. */
void common_files_set_read_ahead(uint64_t bytes, const char *why_unset);
#endif
