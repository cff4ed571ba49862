/* Command-line and -o option parsing. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chunk_cache.h"
#include "format.h"
#include "options.h"
#include "paths.h"
#include "tracefs_limits.h"

enum {
    KEY_HELP, KEY_VERSION, KEY_FOREGROUND, KEY_DEBUG, KEY_SINGLE, KEY_CACHE_SIZE, KEY_INDEX_MAX, KEY_NOINDEX,
    KEY_FSNAME, KEY_SUBTYPE, KEY_THREADS, KEY_READ_AHEAD,
};

#define TRACEFS_OPT(t, p) { t, offsetof(struct command_line, p), 1 }

static const struct fuse_opt option_spec[] = {
    { "format=%s", offsetof(struct command_line, trace.format_name), 0 },
    { "xray_binary=%s", offsetof(struct command_line, trace.xray_binary), 0 },
    { "index_dir=%s", offsetof(struct command_line, trace.index_dir), 0 },
    FUSE_OPT_KEY("cache_size=", KEY_CACHE_SIZE),
    FUSE_OPT_KEY("index_max=", KEY_INDEX_MAX),
    FUSE_OPT_KEY("noindex", KEY_NOINDEX),
    FUSE_OPT_KEY("fsname=", KEY_FSNAME),
    FUSE_OPT_KEY("subtype=", KEY_SUBTYPE),
    FUSE_OPT_KEY("threads=", KEY_THREADS),
    FUSE_OPT_KEY("read_ahead=", KEY_READ_AHEAD),
    FUSE_OPT_KEY("-h", KEY_HELP),
    FUSE_OPT_KEY("--help", KEY_HELP),
    FUSE_OPT_KEY("-V", KEY_VERSION),
    FUSE_OPT_KEY("--version", KEY_VERSION),
    FUSE_OPT_KEY("-f", KEY_FOREGROUND),
    FUSE_OPT_KEY("-d", KEY_DEBUG),
    FUSE_OPT_KEY("debug", KEY_DEBUG),
    FUSE_OPT_KEY("-s", KEY_SINGLE),
    FUSE_OPT_END
};

gboolean options_parse_size(const char *text, uint64_t *bytes)
{
    char *end = NULL;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (end == text || errno || text[0] == '-')
        return FALSE;
    unsigned shift = 0;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: return FALSE;
    }
    if (*end == 'i' || *end == 'B')
        end++;
    if (*end == 'B')
        end++;
    if (*end != '\0' || (shift && value > (UINT64_MAX >> shift)))
        return FALSE;
    *bytes = (uint64_t)value << shift;
    return TRUE;
}

gboolean options_parse_threads(const char *text, unsigned *threads)
{
    char *end = NULL;
    errno = 0;
    unsigned long value = strtoul(text, &end, 10);
    if (end == text || *end != '\0' || errno || text[0] == '-' || value == 0 || value > LIMIT_WORKER_THREADS)
        return FALSE;
    *threads = (unsigned)value;
    return TRUE;
}

static int option_found(void *data, const char *arg, int key, struct fuse_args *args)
{
    (void)args;
    struct command_line *command = data;
    switch (key) {
    case FUSE_OPT_KEY_NONOPT:
        if (!command->trace_path) {
            command->trace_path = g_strdup(arg);
            return 0;
        }
        if (command->offline) {
            g_ptr_array_add(command->paths, g_strdup(arg));
            return 0;
        }
        if (!command->mountpoint) {
            command->mountpoint = g_strdup(arg);
            return 0;
        }
        command->unexpected = g_strdup(arg);
        return -1;
    case KEY_CACHE_SIZE:
        if (!options_parse_size(arg + strlen("cache_size="), &command->trace.cache_bytes) ||
            command->trace.cache_bytes == 0) {
            command->bad_option = g_strdup(arg);
            return -1;
        }
        return 0;
    case KEY_INDEX_MAX:
        if (!options_parse_size(arg + strlen("index_max="), &command->trace.index_max) ||
            command->trace.index_max == 0) {
            command->bad_option = g_strdup(arg);
            return -1;
        }
        return 0;
    case KEY_THREADS:
        if (!options_parse_threads(arg + strlen("threads="), &command->trace.threads)) {
            command->bad_option = g_strdup(arg);
            return -1;
        }
        return 0;
    case KEY_READ_AHEAD:
        if (!options_parse_size(arg + strlen("read_ahead="), &command->read_ahead_bytes) ||
            command->read_ahead_bytes > LIMIT_READ_AHEAD_BYTES ||
            (command->read_ahead_bytes && command->read_ahead_bytes < 4096)) {
            command->bad_option = g_strdup(arg);
            return -1;
        }
        return 0;
    case KEY_NOINDEX: command->trace.no_index = TRUE; return 0;
    case KEY_FSNAME: command->has_fsname = TRUE; return 1;
    case KEY_SUBTYPE: command->has_subtype = TRUE; return 1;
    case KEY_HELP: command->show_help = 1; return 0;
    case KEY_VERSION: command->show_version = 1; return 0;
    case KEY_FOREGROUND: command->foreground = 1; return 0;
    case KEY_DEBUG: command->debug = 1; command->foreground = 1; return 1;  /* FUSE wants -d too */
    case KEY_SINGLE: command->single_thread = 1; return 0;
    default:
        /* Options the mount helper passes that mean nothing here. */
        if (strcmp(arg, "ro") == 0 || strcmp(arg, "rw") == 0 || strcmp(arg, "dev") == 0 ||
            strcmp(arg, "suid") == 0 || strcmp(arg, "nodev") == 0 || strcmp(arg, "nosuid") == 0 ||
            strcmp(arg, "exec") == 0 || strcmp(arg, "noexec") == 0 || strcmp(arg, "auto") == 0 ||
            strcmp(arg, "noauto") == 0 || strcmp(arg, "user") == 0 || strcmp(arg, "nouser") == 0 ||
            strcmp(arg, "_netdev") == 0 || strncmp(arg, "x-", 2) == 0 || strcmp(arg, "defaults") == 0)
            return 0;
        return 1;
    }
}

int options_parse(struct fuse_args *args, struct command_line *command, gboolean offline)
{
    memset(command, 0, sizeof *command);
    command->offline = offline;
    command->paths = g_ptr_array_new_with_free_func(g_free);
    command->read_ahead_bytes = LIMIT_DEFAULT_READ_AHEAD_BYTES;
    if (fuse_opt_parse(args, command, option_spec, option_found) < 0)
        return -1;
    return 0;
}

int options_usage_error(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *what = g_strdup_vprintf(format, args);
    va_end(args);
    fprintf(stderr, "tracefs: %s\nTry 'tracefs --help' for more information.\n", what);
    g_free(what);
    return EXIT_USAGE;
}

int options_report_parse_error(const struct command_line *command)
{
    if (command->bad_option)
        return options_usage_error("bad option value '%s'", command->bad_option);
    if (command->unexpected)
        return options_usage_error("unexpected argument '%s'", command->unexpected);
    /* fuse_opt_parse itself printed why (e.g. "fuse: missing argument after `-o'"). */
    return options_usage_error("cannot parse the command line");
}

/* What FUSE logs while options are checked, kept to be reworded. */
static GString *fuse_complaint;

static void keep_fuse_log(enum fuse_log_level level, const char *format, va_list args)
{
    (void)level;
    g_string_append_vprintf(fuse_complaint, format, args);
}

gboolean options_check_fuse(const struct fuse_args *args)
{
    /* A session is made and dropped, as the mount will make it: it parses
     * the same options with the same libfuse and opens nothing.  Done
     * before the trace is indexed, so a typo costs no indexing. */
    struct fuse_args copy = FUSE_ARGS_INIT(0, NULL);
    for (int i = 0; i < args->argc; i++)
        fuse_opt_add_arg(&copy, args->argv[i]);
    static const struct fuse_lowlevel_ops no_operations;
    fuse_complaint = g_string_new(NULL);
    fuse_set_log_func(keep_fuse_log);
    struct fuse_session *session = fuse_session_new(&copy, &no_operations, sizeof no_operations, NULL);
    fuse_set_log_func(NULL);
    if (session)
        fuse_session_destroy(session);
    fuse_opt_free_args(&copy);
    g_strchomp(fuse_complaint->str);
    const char *what = fuse_complaint->str;
    if (g_str_has_prefix(what, "fuse: "))
        what += strlen("fuse: ");
    if (!session)
        options_usage_error("%s", *what ? what : "the FUSE options were refused");
    g_string_free(fuse_complaint, TRUE);
    fuse_complaint = NULL;
    return session != NULL;
}

/* fuse_opt_parse malloc()s option values: kept in malloc()'s heap. */
static void make_option_absolute(const char **path)
{
    if (!*path)
        return;
    char *absolute = path_absolute(*path);
    free((char *)*path);
    *path = strdup(absolute);
    g_free(absolute);
}

void options_make_paths_absolute(struct command_line *command)
{
    path_make_absolute(&command->trace_path);
    path_make_absolute(&command->mountpoint);
    make_option_absolute(&command->trace.index_dir);
    make_option_absolute(&command->trace.xray_binary);
}

void command_line_clear(struct command_line *command)
{
    g_free(command->trace_path);
    g_free(command->mountpoint);
    g_free(command->bad_option);
    g_free(command->unexpected);
    if (command->paths)
        g_ptr_array_free(command->paths, TRUE);
    /* fuse_opt_parse strdup()s the %s option values. */
    free((char *)command->trace.format_name);
    free((char *)command->trace.xray_binary);
    free((char *)command->trace.index_dir);
    memset(command, 0, sizeof *command);
}

void options_print_help(const char *program)
{
    char *names = format_names();
    printf("usage: %s [options] TRACE MOUNTPOINT\n"
           "       %s ls [options] TRACE [PATH...]    list directories of the tree without mounting\n"
           "       %s cat [options] TRACE PATH...     print files of the tree without mounting\n"
           "       %s stat [options] TRACE [PATH...]  show nodes' kind and size without mounting\n"
           "       %s index list|clean [--all] [-o index_dir=DIR]   the saved indexes\n"
           "\n"
           "Mounts a trace read-only as a directory tree. Unmount with fusermount3 -u MOUNTPOINT.\n"
           "TRACE is a trace file, an rr trace directory or a folder of traces.\n"
           "Formats: %s (detected from the content).\n"
           "\n"
           "options:\n"
           "    -h, --help             print this help and exit\n"
           "    -V, --version          print the version, formats and codecs, and exit\n"
           "    -f                     stay in the foreground\n"
           "    -d, -o debug           foreground, with FUSE debug output\n"
           "    -s                     single-threaded\n"
           "    -o format=NAME         read the trace as NAME instead of detecting it\n"
           "    -o cache_size=SIZE     chunk cache budget, e.g. 64M, 1G (default 256M)\n"
           "    -o xray_binary=PATH    the XRay-instrumented binary, for function names\n"
           "    -o index_dir=DIR       where saved indexes live (default $XDG_CACHE_HOME/tracefs)\n"
           "    -o index_max=SIZE      cap on the index directory (default 2G or 10%% of free space)\n"
           "    -o noindex             do not save the index\n"
           "    -o fsname=NAME         the mount's source in /proc/mounts (default: the trace's path)\n"
           "    -o read_ahead=SIZE     the kernel's read-ahead for the mount, 4K..64M\n"
           "                           (default 1M; 0 keeps the kernel's; root only)\n"
           "    -o threads=N           threads that serve reads, and workers for sizing\n"
           "                           and read-ahead, 1..16\n"
           "                           (default: the online CPUs, at most 16)\n"
           "    -o allow_other, -o auto_unmount, ...  other FUSE mount options\n"
           "ls, cat and stat take the same -o options; the FUSE ones mean nothing there.\n"
           "Exit status: 0 done, 1 the trace or mount point cannot be used, 2 usage error.\n",
           program, program, program, program, program, names);
    g_free(names);
}

void options_print_version(void)
{
    char *names = format_names();
    printf("tracefs %s\nformats: %s\ncodecs: none, brotli, snappy, zlib, zstd\nlibfuse %d\n",
           TRACEFS_VERSION, names, fuse_version());
    g_free(names);
}
