/* `tracefs index list|clean` (see index_command.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "index_cache.h"
#include "index_command.h"
#include "index_file.h"
#include "options.h"
#include "trace.h"

#define USAGE "usage: tracefs index list|clean [--all] [-o index_dir=DIR,index_max=SIZE]\n"

struct index_command {
    const char *action;           /* "list" or "clean" */
    gboolean all;
    struct trace_options options;
};

/* One -o value: comma-separated index_dir= and index_max=. */
static gboolean parse_o(struct index_command *command, const char *value, char **owned_dir)
{
    gboolean ok = TRUE;
    char **items = g_strsplit(value, ",", -1);
    for (char **item = items; *item && ok; item++) {
        if (g_str_has_prefix(*item, "index_dir=")) {
            g_free(*owned_dir);
            *owned_dir = g_strdup(*item + strlen("index_dir="));
            command->options.index_dir = *owned_dir;
        } else if (g_str_has_prefix(*item, "index_max=")) {
            ok = options_parse_size(*item + strlen("index_max="), &command->options.index_max) &&
                 command->options.index_max > 0;
        } else {
            ok = FALSE;
        }
        if (!ok)
            fprintf(stderr, "tracefs index: bad option '%s'\n", *item);
    }
    g_strfreev(items);
    return ok;
}

static gboolean parse(struct index_command *command, int argc, char **argv, char **owned_dir)
{
    if (argc < 3 || (strcmp(argv[2], "list") && strcmp(argv[2], "clean")))
        return FALSE;
    command->action = argv[2];
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--all") == 0 && strcmp(command->action, "clean") == 0)
            command->all = TRUE;
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            { if (!parse_o(command, argv[++i], owned_dir)) return FALSE; }
        else if (strncmp(argv[i], "-o", 2) == 0 && argv[i][2])
            { if (!parse_o(command, argv[i] + 2, owned_dir)) return FALSE; }
        else
            return FALSE;
    }
    return TRUE;
}

/* What a file of the directory is now: for an index its trace's state
 * (current, changed, gone), "other-build" or "damaged"; for a temporary
 * "writing" (a live save holds its lock) or "stale". */
static const char *file_state(int dirfd, const struct index_cache_file *file, struct index_file_key *key)
{
    memset(key, 0, sizeof *key);
    int fd = openat(dirfd, file->name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return "unreadable";
    const char *state;
    if (file->kind == INDEX_CACHE_TEMPORARY) {
        state = flock(fd, LOCK_SH | LOCK_NB) == 0 ? "stale" : "writing";
    } else if (!index_file_read_key(fd, key)) {
        state = "damaged";
    } else {
        state = index_file_key_state(key);
        if (strcmp(state, "current") == 0 && !key->this_build)
            state = "other-build";
    }
    close(fd);
    return state;
}

static char *human_size(uint64_t bytes)
{
    return g_format_size_full(bytes, G_FORMAT_SIZE_IEC_UNITS);
}

static void print_row(const struct index_cache_file *file, const char *state, const struct index_file_key *key)
{
    char when[32];
    time_t seconds = file->last_use.tv_sec;
    struct tm local;
    strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime_r(&seconds, &local));
    char *size = human_size(file->size);
    char *trace = key->trace_path ? g_strescape(key->trace_path, NULL) : g_strdup("-");
    printf("%-45s %10s  %s  %-11s %-9s %s\n", file->name, size, when, state, key->format ? key->format : "-", trace);
    g_free(trace);
    g_free(size);
}

static int list(int dirfd, const char *dir, const struct index_command *command)
{
    GPtrArray *files = index_cache_list(dirfd);
    uint64_t total = 0;
    for (guint i = 0; i < files->len; i++)
        total += ((struct index_cache_file *)files->pdata[i])->size;
    char *used = human_size(total), *cap = human_size(index_cache_limit(dirfd, command->options.index_max));
    printf("%s: %u file%s, %s (cap %s)\n", dir, files->len, files->len == 1 ? "" : "s", used, cap);
    g_free(used);
    g_free(cap);
    if (files->len)
        printf("%-45s %10s  %-16s  %-11s %-9s %s\n", "INDEX", "SIZE", "LAST USE", "STATE", "FORMAT", "TRACE");
    for (guint i = files->len; i-- > 0;) {          /* most recently used first */
        struct index_file_key key;
        const char *state = file_state(dirfd, files->pdata[i], &key);
        print_row(files->pdata[i], state, &key);
        index_file_key_clear(&key);
    }
    g_ptr_array_free(files, TRUE);
    return 0;
}

/* Without --all: what no mount can use (the trace gone or changed, a
 * damaged file) and stale temporaries.  Never a temporary being written. */
static gboolean should_remove(const char *state, gboolean all)
{
    if (strcmp(state, "writing") == 0)
        return FALSE;
    return all || (strcmp(state, "current") != 0 && strcmp(state, "other-build") != 0);
}

static int clean(int dirfd, const char *dir, const struct index_command *command)
{
    GPtrArray *files = index_cache_list(dirfd);
    uint64_t freed = 0;
    unsigned removed = 0, kept_writing = 0;
    int status = 0;
    for (guint i = 0; i < files->len; i++) {
        struct index_cache_file *file = files->pdata[i];
        struct index_file_key key;
        const char *state = file_state(dirfd, file, &key);
        index_file_key_clear(&key);
        kept_writing += strcmp(state, "writing") == 0;
        if (!should_remove(state, command->all))
            continue;
        gboolean gone = file->kind == INDEX_CACHE_TEMPORARY ? index_cache_remove_stale(dirfd, file->name)
                                                            : unlinkat(dirfd, file->name, 0) == 0 || errno == ENOENT;
        if (!gone && file->kind != INDEX_CACHE_TEMPORARY) {
            fprintf(stderr, "tracefs index: %s/%s: %s\n", dir, file->name, g_strerror(errno));
            status = 1;
            continue;
        }
        removed += gone;
        freed += gone ? file->size : 0;
    }
    char *size = human_size(freed);
    printf("%s: removed %u file%s, %s", dir, removed, removed == 1 ? "" : "s", size);
    if (kept_writing)
        printf(" (%u being written by a live save kept)", kept_writing);
    printf("\n");
    g_free(size);
    g_ptr_array_free(files, TRUE);
    return status;
}

int index_command_main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "index") != 0)
        return -1;
    struct index_command command = { 0 };
    char *owned_dir = NULL;
    if (!parse(&command, argc, argv, &owned_dir)) {
        fputs(USAGE, stderr);
        g_free(owned_dir);
        return 2;
    }
    char *dir = index_cache_dir(&command.options);
    const char *refused = NULL;
    int dirfd = index_cache_open_dir(dir, &refused);
    if (dirfd == -EPERM && refused) {
        /* Listed and cleaned all the same: mounts will not use it. */
        fprintf(stderr, "tracefs index: %s: mounts use no index here: %s\n", dir, refused);
        dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
        if (dirfd < 0)
            dirfd = -errno;
    }
    int status = 0;
    if (dirfd == -ENOENT) {
        printf("%s: no saved indexes\n", dir);
    } else if (dirfd < 0) {
        fprintf(stderr, "tracefs index: %s: %s\n", dir, g_strerror(-dirfd));
        status = 1;
    } else {
        status = strcmp(command.action, "list") == 0 ? list(dirfd, dir, &command) : clean(dirfd, dir, &command);
        close(dirfd);
    }
    g_free(dir);
    g_free(owned_dir);
    return status;
}
