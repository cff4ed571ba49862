#ifndef TRACEFS_COMMON_FILES_H
#define TRACEFS_COMMON_FILES_H
struct trace;
/* Adds /info.json, /README, /errors and /.tracefs/stats after the index pass. */
void common_files_add(struct trace *trace);
#endif
