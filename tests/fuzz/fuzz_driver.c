#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>
#include "fuzz_driver.h"
#include "trace.h"

#define FAMILY_ENTRIES_READ 16
#define READ_STEP 65536
#define COMPARE_LIMIT (8u << 20)

struct walk {
    struct trace *trace;
    GArray *inodes;
};

static gboolean collect(void *data, const char *name, const struct tree_entry_info *entry, uint64_t next)
{
    struct walk *walk = data;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return TRUE;
    g_array_append_val(walk->inodes, entry->ino);
    return next < 2 + 100000 && (entry->ino >> 63 == 0 || walk->inodes->len % FAMILY_ENTRIES_READ != 0);
}

/* What a file's size promised is what reading gives, and a read in the
 * middle (resumed from a checkpoint) gives the same bytes as the sequential
 * pass: a silently wrong answer aborts, as a crash would. */
static void read_file(struct trace *trace, tree_ino ino, GString *whole)
{
    /* One buffer for every read of every run: a fresh 64 KiB allocation per
     * file would be a tenth of each run under ASan. */
    static char buf[READ_STEP];
    uint64_t size = 0;
    struct view view;
    if (tree_file_size(trace, ino, &size) < 0 || !tree_file_view(trace->tree, ino, &view))
        return;
    gboolean keep = !view.ops->dynamic && size <= COMPARE_LIMIT;
    g_string_truncate(whole, 0);
    uint64_t offset = 0;
    for (;;) {
        ssize_t n = tree_file_read(trace, ino, offset, buf, READ_STEP);
        if (n < 0)
            return;
        if (n == 0)
            break;
        if (keep)
            g_string_append_len(whole, buf, n);
        offset += (uint64_t)n;
    }
    if (!view.ops->dynamic && offset != size) {
        fprintf(stderr, "fuzz: inode %#llx: size %llu but read gave %llu bytes\n",
                (unsigned long long)ino, (unsigned long long)size, (unsigned long long)offset);
        abort();
    }
    if (keep && size > 1) {
        ssize_t n = tree_file_read(trace, ino, size / 2, buf, 4096);
        if (n > 0 && memcmp(buf, whole->str + size / 2, (size_t)n) != 0) {
            fprintf(stderr, "fuzz: inode %#llx: a read at %llu differs from the sequential pass\n",
                    (unsigned long long)ino, (unsigned long long)(size / 2));
            abort();
        }
    }
}

void fuzz_walk_tree(struct trace *trace)
{
    struct walk walk = { trace, g_array_new(FALSE, FALSE, sizeof(tree_ino)) };
    GString *whole = g_string_new(NULL);
    tree_ino root = TREE_ROOT_INO;
    g_array_append_val(walk.inodes, root);
    for (guint i = 0; i < walk.inodes->len && i < 4000; i++) {
        tree_ino ino = g_array_index(walk.inodes, tree_ino, i);
        struct tree_entry_info entry;
        if (!tree_stat_ino(trace->tree, ino, &entry))
            continue;
        if (entry.kind == NODE_DIR)
            tree_readdir(trace->tree, ino, 0, collect, &walk);
        else if (entry.kind == NODE_FILE)
            read_file(trace, ino, whole);
    }
    g_string_free(whole, TRUE);
    g_array_free(walk.inodes, TRUE);
}

int fuzz_trace_path(const char *format_name, const char *path)
{
    struct trace_options options = { .format_name = format_name, .cache_bytes = 8u << 20, .no_index = TRUE };
    char *message = NULL;
    struct trace *trace = trace_open(path, &options, &message);
    g_free(message);
    if (trace) {
        fuzz_walk_tree(trace);
        trace_close(trace);
    }
    return 0;
}

int fuzz_trace_bytes(const char *format_name, const char *member, const uint8_t *data, size_t size)
{
    char *dir = g_dir_make_tmp("tracefs-fuzz-XXXXXX", NULL);
    if (!dir)
        return 0;
    char *file = g_build_filename(dir, member ? member : "trace", NULL);
    if (g_file_set_contents(file, (const char *)data, (gssize)size, NULL)) {
        /* Every format's probe sees every input too: the probes parse and
         * decompress the head (and Brotli's beyond it). */
        trace_probe(member ? dir : file);
        fuzz_trace_path(format_name, member ? dir : file);
    }
    g_unlink(file);
    g_rmdir(dir);
    g_free(file);
    g_free(dir);
    return 0;
}

static char *temporary_directory;

static void remove_temporary_directory(void)
{
    GDir *dir = g_dir_open(temporary_directory, 0, NULL);
    const char *name;
    while (dir && (name = g_dir_read_name(dir))) {
        char *path = g_build_filename(temporary_directory, name, NULL);
        g_unlink(path);
        g_free(path);
    }
    if (dir)
        g_dir_close(dir);
    g_rmdir(temporary_directory);
}

char *fuzz_temporary_directory(const char *template)
{
    g_assert(!temporary_directory);
    temporary_directory = g_dir_make_tmp(template, NULL);
    if (temporary_directory)
        atexit(remove_temporary_directory);
    return temporary_directory;
}
