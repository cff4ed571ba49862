#ifndef TRACEFS_OPTIONS_H
#define TRACEFS_OPTIONS_H
#include <fuse_lowlevel.h>
#include "trace.h"

/* Exit status of a usage error (unknown option, missing argument). */
#define EXIT_USAGE 2

struct command_line {
    char *trace_path;
    char *mountpoint;
    GPtrArray *paths;            /* offline commands: the tree paths after TRACE */
    struct trace_options trace;
    int foreground, debug, single_thread, show_help, show_version;
    gboolean offline;            /* ls/cat/stat: every argument after TRACE is a path */
    gboolean has_fsname, has_subtype;
    uint64_t read_ahead_bytes;   /* -o read_ahead=: the mount's kernel read-ahead, 0 to leave it */
    char *bad_option;            /* a malformed value, for the error line */
    char *unexpected;            /* a surplus argument, for the error line */
};

/* Parses argv, leaving in *args what FUSE itself takes.  Returns 0 or -1
 * (then prints nothing: see options_report_parse_error). */
int options_parse(struct fuse_args *args, struct command_line *command, gboolean offline);
/* Prints why options_parse failed, with the usage hint; returns EXIT_USAGE. */
int options_report_parse_error(const struct command_line *command);
/* Checks what options_parse left for FUSE the way the FUSE session will
 * (without mounting anything).  FALSE, after printing tracefs's usage
 * error, when FUSE would refuse an option. */
gboolean options_check_fuse(const struct fuse_args *args);
/* Prints "tracefs: <what>" and the --help hint; returns EXIT_USAGE. */
int options_usage_error(const char *format, ...) G_GNUC_PRINTF(1, 2);
/* The trace, mount point, index_dir= and xray_binary= made absolute. */
void options_make_paths_absolute(struct command_line *command);
/* "256M", "1G", "4096" -> bytes; FALSE when malformed. */
gboolean options_parse_size(const char *text, uint64_t *bytes);
/* "1".."16" (LIMIT_WORKER_THREADS); FALSE otherwise. */
gboolean options_parse_threads(const char *text, unsigned *threads);
/* Frees what options_parse allocated. */
void command_line_clear(struct command_line *command);
void options_print_help(const char *program);
void options_print_version(void);
#endif
