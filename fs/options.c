/* Command-line and -o option parsing. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chunk_cache.h"
#include "format.h"
#include "options.h"
#include "tracefs_limits.h"

enum { KEY_HELP, KEY_VERSION, KEY_FOREGROUND, KEY_DEBUG, KEY_SINGLE, KEY_CACHE_SIZE, KEY_NOINDEX, KEY_THREADS };

#define TRACEFS_OPT(t, p) { t, offsetof(struct command_line, p), 1 }

static const struct fuse_opt option_spec[] = {
    { "format=%s", offsetof(struct command_line, trace.format_name), 0 },
    { "xray_binary=%s", offsetof(struct command_line, trace.xray_binary), 0 },
    { "index_dir=%s", offsetof(struct command_line, trace.index_dir), 0 },
    FUSE_OPT_KEY("cache_size=", KEY_CACHE_SIZE),
    FUSE_OPT_KEY("noindex", KEY_NOINDEX),
    FUSE_OPT_KEY("threads=", KEY_THREADS),
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
        if (!command->mountpoint) {
            command->mountpoint = g_strdup(arg);
            return 0;
        }
        fprintf(stderr, "tracefs: unexpected argument '%s'\n", arg);
        return -1;
    case KEY_CACHE_SIZE:
        if (!options_parse_size(arg + strlen("cache_size="), &command->trace.cache_bytes) ||
            command->trace.cache_bytes == 0) {
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
    case KEY_NOINDEX: command->trace.no_index = TRUE; return 0;
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

int options_parse(struct fuse_args *args, struct command_line *command)
{
    memset(command, 0, sizeof *command);
    if (fuse_opt_parse(args, command, option_spec, option_found) < 0)
        return -1;
    return 0;
}

void command_line_clear(struct command_line *command)
{
    g_free(command->trace_path);
    g_free(command->mountpoint);
    g_free(command->bad_option);
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
           "       %s ls TRACE [PATH...]    list directories of the tree without mounting\n"
           "       %s cat TRACE PATH...     print files of the tree without mounting\n"
           "       %s stat TRACE [PATH...]  show nodes' kind and size without mounting\n"
           "\n"
           "Mounts a trace read-only as a directory tree. Unmount with fusermount3 -u MOUNTPOINT.\n"
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
           "    -o noindex             do not save the index\n"
           "    -o threads=N           worker threads for sizing and read-ahead, 1..16\n"
           "                           (default: the online CPUs, at most 16)\n"
           "    -o allow_other, -o ... other FUSE mount options\n",
           program, program, program, program, names);
    g_free(names);
}

void options_print_version(void)
{
    char *names = format_names();
    printf("tracefs %s\nformats: %s\ncodecs: none, brotli, snappy, zlib, zstd\nlibfuse %d\n",
           TRACEFS_VERSION, names, fuse_version());
    g_free(names);
}
