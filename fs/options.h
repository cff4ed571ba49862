#ifndef TRACEFS_OPTIONS_H
#define TRACEFS_OPTIONS_H
#include <fuse_lowlevel.h>
#include "trace.h"

struct command_line {
    char *trace_path;
    char *mountpoint;
    struct trace_options trace;
    int foreground, debug, single_thread, show_help, show_version;
    char *bad_option;            /* a malformed value, for the error line */
};

/* Parses argv, leaving in *args what FUSE itself takes.  Returns 0 or -1. */
int options_parse(struct fuse_args *args, struct command_line *command);
/* "256M", "1G", "4096" -> bytes; FALSE when malformed. */
gboolean options_parse_size(const char *text, uint64_t *bytes);
/* "1".."16" (LIMIT_WORKER_THREADS); FALSE otherwise. */
gboolean options_parse_threads(const char *text, unsigned *threads);
/* Frees what options_parse allocated. */
void command_line_clear(struct command_line *command);
void options_print_help(const char *program);
void options_print_version(void);
#endif
