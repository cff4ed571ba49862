/* Reading the tree without FUSE, for machines without /dev/fuse: the same
 * trace_open, the same tree and the same views as a mount. */
#include <errno.h>
#include <locale.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "offline.h"
#include "options.h"
#include "trace.h"

/* ls(1) order: the locale's collation (LC_COLLATE, as ls uses it), which
 * is byte order under LC_ALL=C; ties broken by bytes so that the order is
 * total. */
static int compare_names(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    int order = strcoll(x, y);
    return order ? order : strcmp(x, y);
}

static gboolean collect_name(void *data, const char *name, const struct tree_entry_info *entry, uint64_t next)
{
    (void)entry; (void)next;
    if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0)
        g_ptr_array_add(data, g_strdup(name));
    return TRUE;
}

/* Every entry but "." and "..", as `ls -A` lists them.  The names are held
 * to be sorted, as ls(1) holds them: a directory of a million generated
 * entries costs tens of megabytes here, in this short-lived process. */
static void list_directory(struct trace *trace, const struct tree_entry_info *entry)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    tree_readdir(trace->tree, entry->ino, 0, collect_name, names);
    if (names->len > 1)     /* an empty array's pdata is NULL, which qsort must not get */
        qsort(names->pdata, names->len, sizeof(char *), compare_names);
    for (guint i = 0; i < names->len; i++)
        printf("%s\n", (const char *)names->pdata[i]);
    g_ptr_array_free(names, TRUE);
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

/* buf holds CAT_STEP bytes, one buffer for all the paths: `tracefs cat`
 * of thousands of small files is how scripts and tests compare them. */
enum { CAT_STEP = 1 << 20 };

static int command_cat(struct trace *trace, const struct tree_entry_info *entry, const char *path, char *buf)
{
    if (entry->kind != NODE_FILE) {
        fprintf(stderr, "tracefs: %s: Is a directory\n", path);
        return 1;
    }
    uint64_t offset = 0;
    int status = 0;
    for (;;) {
        ssize_t n = tree_file_read(trace, entry->ino, offset, buf, CAT_STEP);
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
    char *buf = strcmp(command, "cat") == 0 ? g_malloc(CAT_STEP) : NULL;
    for (int i = 0; i < count; i++) {
        struct tree_entry_info entry;
        if (!tree_resolve(trace->tree, paths[i], &entry)) {
            fprintf(stderr, "tracefs: %s: No such file or directory\n", paths[i]);
            status = 1;
        } else if (strcmp(command, "cat") == 0) {
            status |= command_cat(trace, &entry, paths[i], buf);
        } else if (strcmp(command, "stat") == 0) {
            status |= command_stat(trace, &entry, *paths[i] ? paths[i] : ".");
        } else if (entry.kind == NODE_DIR) {
            list_directory(trace, &entry);
        } else {
            printf("%s\n", paths[i]);
        }
    }
    g_free(buf);
    return status;
}

/* The environment's defaults for what -o did not set (kept for scripts
 * written before the offline commands took -o). */
static int apply_environment(struct trace_options *options)
{
    const char *format = g_getenv("TRACEFS_FORMAT");
    if (!options->format_name && format && *format)
        options->format_name = strdup(format);
    const char *cache = g_getenv("TRACEFS_CACHE_SIZE");
    if (!options->cache_bytes && cache)
        options_parse_size(cache, &options->cache_bytes);
    const char *binary = g_getenv("TRACEFS_XRAY_BINARY");
    if (!options->xray_binary && binary && *binary)
        options->xray_binary = strdup(binary);
    const char *threads = g_getenv("TRACEFS_THREADS");
    if (!options->threads && threads && *threads && !options_parse_threads(threads, &options->threads))
        return options_usage_error("bad TRACEFS_THREADS '%s' (1..16)", threads);
    return 0;
}

static int run_offline(const char *name, struct command_line *command)
{
    gboolean needs_path = strcmp(name, "cat") == 0;
    if (!command->trace_path || (needs_path && command->paths->len == 0))
        return options_usage_error("missing %s\nusage: tracefs %s [options] TRACE %s",
                                   command->trace_path ? "PATH" : "TRACE", name, needs_path ? "PATH..." : "[PATH...]");
    int usage = apply_environment(&command->trace);
    if (usage)
        return usage;
    options_make_paths_absolute(command);
    char *message = NULL;
    struct trace *trace = trace_open(command->trace_path, &command->trace, &message);
    if (!trace) {
        fprintf(stderr, "tracefs: %s\n", message);
        g_free(message);
        return 1;
    }
    int status = run_command(trace, name, (int)command->paths->len, (char **)command->paths->pdata);
    fflush(stdout);
    trace_save_index_if_changed(trace);
    trace_close(trace);
    return status;
}

int offline_main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "ls") && strcmp(argv[1], "cat") && strcmp(argv[1], "stat")))
        return -1;
    setlocale(LC_COLLATE, "");
    /* The same options as a mount: argv without the command's name. */
    struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
    fuse_opt_add_arg(&args, argv[0]);
    for (int i = 2; i < argc; i++)
        fuse_opt_add_arg(&args, argv[i]);
    struct command_line command;
    int status = 0;
    if (options_parse(&args, &command, TRUE) < 0)
        status = options_report_parse_error(&command);
    else if (command.show_help)
        options_print_help(argv[0]);
    else if (command.show_version)
        options_print_version();
    else if (!options_check_fuse(&args))
        status = EXIT_USAGE;
    else
        status = run_offline(argv[1], &command);
    command_line_clear(&command);
    fuse_opt_free_args(&args);
    return status;
}
