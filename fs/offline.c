/* Reading the tree without FUSE, for machines without /dev/fuse: the same
 * trace_open, the same tree and the same views as a mount. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "offline.h"
#include "options.h"
#include "trace.h"

static gboolean print_name(void *data, const char *name, const struct tree_entry_info *entry, uint64_t next)
{
    (void)data; (void)entry; (void)next;
    if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0)
        printf("%s\n", name);
    return TRUE;
}

static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static int command_cat(struct trace *trace, const struct tree_entry_info *entry, const char *path)
{
    if (entry->kind != NODE_FILE) {
        fprintf(stderr, "tracefs: %s: Is a directory\n", path);
        return 1;
    }
    enum { STEP = 1 << 20 };
    char *buf = g_malloc(STEP);
    uint64_t offset = 0;
    int status = 0;
    for (;;) {
        ssize_t n = tree_file_read(trace, entry->ino, offset, buf, STEP);
        if (n < 0) {
            fprintf(stderr, "tracefs: %s: %s\n", path, g_strerror((int)-n));
            status = 1;
            break;
        }
        if (n == 0)
            break;
        if (write_all(STDOUT_FILENO, buf, (size_t)n) < 0) {
            status = 1;
            break;
        }
        offset += (uint64_t)n;
    }
    g_free(buf);
    return status;
}

static int command_stat(struct trace *trace, const struct tree_entry_info *entry, const char *path)
{
    uint64_t size = 0;
    const char *kind = entry->kind == NODE_DIR ? "directory" : entry->kind == NODE_SYMLINK ? "symlink" : "file";
    if (entry->kind == NODE_FILE)
        tree_file_size(trace, entry->ino, &size);
    else if (entry->kind == NODE_SYMLINK)
        size = strlen(tree_symlink_target(trace->tree, entry->ino));
    printf("%s %s %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT "\n", path, kind, size, (uint64_t)entry->ino);
    return 0;
}

/* `cat` takes several paths, as cat(1) does: one index, many files. */
static int run_command(struct trace *trace, const char *command, int count, char **paths)
{
    const char *root = "";
    if (count == 0) {
        count = 1;
        paths = (char **)&root;
    }
    int status = 0;
    for (int i = 0; i < count; i++) {
        struct tree_entry_info entry;
        if (!tree_resolve(trace->tree, paths[i], &entry)) {
            fprintf(stderr, "tracefs: %s: No such file or directory\n", paths[i]);
            status = 1;
        } else if (strcmp(command, "cat") == 0) {
            status |= command_cat(trace, &entry, paths[i]);
        } else if (strcmp(command, "stat") == 0) {
            status |= command_stat(trace, &entry, *paths[i] ? paths[i] : ".");
        } else if (entry.kind == NODE_DIR) {
            tree_readdir(trace->tree, entry.ino, 0, print_name, NULL);
        } else {
            printf("%s\n", paths[i]);
        }
    }
    return status;
}

int offline_main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "ls") && strcmp(argv[1], "cat") && strcmp(argv[1], "stat")))
        return -1;
    const char *command = argv[1];
    if (argc < 3 || (strcmp(command, "cat") == 0 && argc < 4)) {
        fprintf(stderr, "usage: tracefs %s TRACE %s\n", command, strcmp(command, "cat") ? "[PATH...]" : "PATH...");
        return 2;
    }
    struct trace_options options = { .no_index = FALSE };
    const char *format = g_getenv("TRACEFS_FORMAT");
    options.format_name = format && *format ? format : NULL;
    const char *cache = g_getenv("TRACEFS_CACHE_SIZE");
    if (cache)
        options_parse_size(cache, &options.cache_bytes);
    options.xray_binary = g_getenv("TRACEFS_XRAY_BINARY");
    const char *threads = g_getenv("TRACEFS_THREADS");
    if (threads && !options_parse_threads(threads, &options.threads)) {
        fprintf(stderr, "tracefs: bad TRACEFS_THREADS '%s' (1..16)\n", threads);
        return 2;
    }
    char *message = NULL;
    struct trace *trace = trace_open(argv[2], &options, &message);
    if (!trace) {
        fprintf(stderr, "tracefs: %s\n", message);
        g_free(message);
        return 1;
    }
    int status = run_command(trace, command, argc - 3, argv + 3);
    fflush(stdout);
    trace_save_index_if_changed(trace);
    trace_close(trace);
    return status;
}
