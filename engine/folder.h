#ifndef TRACEFS_FOLDER_H
#define TRACEFS_FOLDER_H
#include "format.h"
/* A directory that no format claims: one subdirectory per recognised trace
 * in it, each opened (indexed) on first access, and a root traces.json. */
extern const struct format folder_format;
#endif
