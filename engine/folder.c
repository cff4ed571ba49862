/* Folders of traces: `tracefs ~/.local/share/rr /mnt/t` or a folder of
 * XRay logs shows one directory per recognised trace.  Only probing happens
 * at mount; a trace is indexed the first time its directory is entered.
 * Symlinks between entries (rr's latest-trace) stay symlinks. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "folder.h"
#include "input_file.h"
#include "text.h"
#include "trace.h"

struct folder_entry {
    char *name;
    char *path;
    const struct format *format;
    struct stat st;               /* the entry's (a symlink's target's) */
};

struct folder {
    struct trace *trace;          /* the folder's own trace (for options, errors, cache) */
    GPtrArray *entries;           /* struct folder_entry *, by graft number */
    GPtrArray *links;             /* name, target, ...: symlinks between entries */
};

static void folder_entry_free(gpointer p)
{
    struct folder_entry *entry = p;
    g_free(entry->name);
    g_free(entry->path);
    g_free(entry);
}

static int folder_probe(const struct probe_input *input)
{
    (void)input;
    return 0;      /* chosen by trace_open when nothing else claims a directory */
}

static struct trace *open_entry(void *context, uint32_t number)
{
    struct folder *folder = context;
    struct folder_entry *entry = folder->entries->pdata[number];
    struct trace_options options = folder->trace->options;
    options.format_name = NULL;
    options.shared_cache = folder->trace->cache;
    options.shared_text_cache = folder->trace->text_cache;
    options.shared_workers = folder->trace->workers;
    options.inside_folder = TRUE;
    char *message = NULL;
    struct trace *trace = trace_open(entry->path, &options, &message);
    if (!trace)
        trace_error(folder->trace, "folder", 0, "%s", message);
    g_free(message);
    return trace;
}

static void refuse_entry(void *context, uint32_t number, const char *why)
{
    struct folder *folder = context;
    struct folder_entry *entry = folder->entries->pdata[number];
    trace_error(folder->trace, "folder", 0, "%s: %s", entry->name, why);
}

static gint compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **sorted_names(const char *path)
{
    GDir *dir = g_dir_open(path, 0, NULL);
    GPtrArray *names = g_ptr_array_new();
    for (const char *name; dir && (name = g_dir_read_name(dir));)
        g_ptr_array_add(names, g_strdup(name));
    if (dir)
        g_dir_close(dir);
    g_ptr_array_sort(names, compare_names);
    g_ptr_array_add(names, NULL);
    return (char **)g_ptr_array_free(names, FALSE);
}

/* A symlink to another entry of the same folder. */
static gboolean is_sibling_link(const char *folder, const char *name, char **target)
{
    char *path = g_build_filename(folder, name, NULL);
    char *link = g_file_read_link(path, NULL);
    g_free(path);
    if (!link)
        return FALSE;
    char *base = g_path_get_basename(link);
    char *dir = g_path_get_dirname(link);
    gboolean sibling = strcmp(dir, ".") == 0 || (g_path_is_absolute(link) && strcmp(dir, folder) == 0);
    g_free(dir);
    g_free(link);
    if (!sibling) {
        g_free(base);
        return FALSE;
    }
    *target = base;
    return TRUE;
}

/* Why an entry cannot be a trace before probing it: a FIFO, a socket or a
 * device is never opened (input_file.h).  *st is its stat (a symlink's
 * target's). */
static const char *entry_problem(const char *path, struct stat *st)
{
    const unsigned kinds = INPUT_REGULAR | INPUT_DIRECTORY;
    if (stat(path, st) < 0)
        return g_strerror(errno);
    int wrong = input_kind_check(st, kinds);
    return wrong ? input_strerror(wrong, kinds) : NULL;
}

static void add_entry(struct folder *folder, const char *name, const char *path, const struct format *format,
                      const struct stat *st)
{
    struct folder_entry *entry = g_new0(struct folder_entry, 1);
    entry->name = g_strdup(name);
    entry->path = g_strdup(path);
    entry->format = format;
    entry->st = *st;
    g_ptr_array_add(folder->entries, entry);
}

/* One graft per entry, numbered as the entries are: an entry over the
 * limit is dropped. */
static void add_grafts(struct folder *folder)
{
    struct trace *trace = folder->trace;
    for (guint i = 0; i < folder->entries->len;) {
        struct folder_entry *entry = folder->entries->pdata[i];
        struct tree_graft_source source = { .open = open_entry, .refused = refuse_entry, .context = folder,
                                            .st = entry->st };
        if (tree_add_graft(trace->tree, TREE_ROOT, entry->name, &source, NULL) >= 0) {
            i++;
            continue;
        }
        trace_error(trace, "folder", 0, "%s: not shown: more than %u traces in one folder", entry->name,
                    TREE_MAX_GRAFTS);
        g_ptr_array_remove_index(folder->entries, i);
    }
}

static void add_traces_json(struct folder *folder)
{
    GString *json = g_string_new("[\n");
    for (guint i = 0; i < folder->entries->len; i++) {
        struct folder_entry *entry = folder->entries->pdata[i];
        g_string_append(json, i ? ",\n  {\"name\": " : "  {\"name\": ");
        text_json_cstring(json, entry->name);
        g_string_append(json, ", \"format\": ");
        text_json_cstring(json, entry->format->name);
        g_string_append(json, ", \"path\": ");
        text_json_cstring(json, entry->path);
        uint64_t size = S_ISREG(entry->st.st_mode) ? (uint64_t)entry->st.st_size : 0;
        g_string_append_printf(json, ", \"size\": %" G_GUINT64_FORMAT "}", size);
    }
    g_string_append(json, folder->entries->len ? "\n]\n" : "]\n");
    tree_add_string(folder->trace->tree, TREE_ROOT, "traces.json", json);
}

/* Only probes: a trace is indexed when its directory is first entered. */
static int folder_index(struct trace *trace)
{
    struct folder *folder = g_new0(struct folder, 1);
    folder->trace = trace;
    folder->entries = g_ptr_array_new_with_free_func(folder_entry_free);
    folder->links = g_ptr_array_new_with_free_func(g_free);
    trace->format_state = folder;
    /* The resolved path: entries are opened later, maybe after the daemon
     * left the directory a relative path was given from. */
    const char *base = trace->real_path ? trace->real_path : trace->path;
    char **names = sorted_names(base);
    for (char **name = names; *name; name++) {
        char *path = g_build_filename(base, *name, NULL);
        char *target = NULL;
        const char *problem = NULL;
        const struct format *format = NULL;
        struct stat st;
        if (is_sibling_link(base, *name, &target)) {
            g_ptr_array_add(folder->links, g_strdup(*name));
            g_ptr_array_add(folder->links, target);
        } else if ((problem = entry_problem(path, &st)) != NULL) {
            trace_error(trace, "folder", 0, "%s: %s", *name, problem);
        } else if ((format = trace_probe(path)) != NULL) {
            add_entry(folder, *name, path, format, &st);
        } else {
            trace_error(trace, "folder", 0, "%s: not a recognised trace", *name);
        }
        g_free(path);
    }
    g_strfreev(names);
    return 0;
}

static void folder_build_tree(struct trace *trace)
{
    struct folder *folder = trace->format_state;
    add_grafts(folder);
    GPtrArray *links = folder->links;
    for (guint i = 0; i < links->len; i += 2) {
        struct tree_entry_info target;
        if (tree_lookup(trace->tree, TREE_ROOT_INO, links->pdata[i + 1], &target))
            tree_add_symlink(trace->tree, TREE_ROOT, links->pdata[i], links->pdata[i + 1]);
    }
    add_traces_json(folder);
    trace_info_add_number(trace, "traces", folder->entries->len);
    g_string_append_printf(trace->readme,
        "A folder of %u traces: one directory each (indexed the first time it is entered),\n"
        "listed in traces.json. Files that are not traces are named in errors.\n", folder->entries->len);
}

static void folder_close(struct trace *trace)
{
    struct folder *folder = trace->format_state;
    if (!folder)
        return;
    for (guint i = 0; i < folder->entries->len; i++) {
        struct trace *sub = tree_graft_trace(trace->tree, i);
        if (sub) {
            trace_save_index_if_changed(sub);
            trace_close(sub);
        }
    }
    g_ptr_array_free(folder->entries, TRUE);
    g_ptr_array_free(folder->links, TRUE);
    g_free(folder);
    trace->format_state = NULL;
}

const struct format folder_format = {
    .name = "folder",
    .description = "folder of traces",
    .probe = folder_probe,
    .index = folder_index,
    .build_tree = folder_build_tree,
    .close = folder_close,
};
