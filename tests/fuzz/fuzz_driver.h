/* Shared by every fuzz target: open a trace from bytes and read every file
 * of its tree, as a user running `cat` on all of it would. */
#ifndef TRACEFS_FUZZ_DRIVER_H
#define TRACEFS_FUZZ_DRIVER_H
#include <stddef.h>
#include <stdint.h>

/* Writes data to a temporary file (or, when `member` is non-NULL, to a file
 * of that name inside a temporary directory, for directory formats), opens
 * it with the format forced, reads every file (families: first 64 entries
 * per directory) and closes it.  Returns 0 always; crashes are the finding. */
int fuzz_trace_bytes(const char *format_name, const char *member, const uint8_t *data, size_t size);
struct trace;
/* Reads every file of an open trace's tree (families: first 64 entries). */
void fuzz_walk_tree(struct trace *trace);
/* Opens an existing path (file or directory) the same way. */
int fuzz_trace_path(const char *format_name, const char *path);
/* A temporary directory (one per process) that is removed with its files
 * when the process exits: the loaders' targets keep their index in it. */
char *fuzz_temporary_directory(const char *template);
#endif
