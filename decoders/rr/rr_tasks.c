/* tasks/ (task events as JSON and text, `rr ps`), mmaps/<n>.json and a
 * /proc/PID/maps-style `maps` per thread. */
#include <sys/sysmacros.h>

#include "numbered_files.h"
#include "rr.h"
#include "sorted_search.h"
#include "text.h"
#include "trace.h"
#include "tree.h"

static const char *const task_kinds[] = { "clone", "exec", "exit", "detach" };

static void task_text(const struct rr_task *t, GString *out)
{
    g_string_append_printf(out, "%" G_GINT64_FORMAT " %s tid=%d", t->frame_time, task_kinds[t->kind], t->tid);
    if (t->kind == RR_TASK_CLONE)
        g_string_append_printf(out, " parent=%d clone_flags=0x%x own_ns_tid=%d", t->parent_tid,
                               (uint32_t)t->clone_flags, t->own_ns_tid);
    if (t->kind == RR_TASK_EXEC)
        g_string_append_printf(out, " file=%s exe_base=0x%" G_GINT64_MODIFIER "x", t->file_name, t->exe_base);
    if (t->kind == RR_TASK_EXIT)
        g_string_append_printf(out, " status=%d", t->exit_status);
    g_string_append_c(out, '\n');
}

static void task_json(const struct rr_task *t, GString *out)
{
    g_string_append_printf(out, "{\"frame_time\": %" G_GINT64_FORMAT ", \"kind\": \"%s\", \"tid\": %d",
                           t->frame_time, task_kinds[t->kind], t->tid);
    if (t->kind == RR_TASK_CLONE)
        g_string_append_printf(out, ", \"parent_tid\": %d, \"clone_flags\": %u, \"own_ns_tid\": %d", t->parent_tid,
                               (uint32_t)t->clone_flags, t->own_ns_tid);
    if (t->kind == RR_TASK_EXEC) {
        g_string_append(out, ", \"file_name\": ");
        text_json_cstring(out, t->file_name);
        g_string_append_printf(out, ", \"exe_base\": %" G_GUINT64_FORMAT ", \"cmd_line\": [", t->exe_base);
        for (guint i = 0; t->cmdline && i < t->cmdline->len; i++) {
            g_string_append(out, i ? ", " : "");
            text_json_cstring(out, g_ptr_array_index(t->cmdline, i));
        }
        g_string_append_c(out, ']');
    }
    if (t->kind == RR_TASK_EXIT)
        g_string_append_printf(out, ", \"exit_status\": %d", t->exit_status);
    g_string_append_c(out, '}');
}

/* ---- mmaps ---- */
static void mmap_json(const struct rr_state *state, const struct rr_mmap *m, guint index, GString *out)
{
    static const char *const sources[] = { "zero", "trace", "file" };
    g_string_append_printf(out, "{\"index\": %u, \"frame_time\": %" G_GINT64_FORMAT ", \"start\": \"0x%" G_GINT64_MODIFIER
                           "x\", \"end\": \"0x%" G_GINT64_MODIFIER "x\", \"fsname\": ", index, m->frame_time, m->start, m->end);
    text_json_cstring(out, m->fsname);
    g_string_append_printf(out, ", \"device\": %" G_GUINT64_FORMAT ", \"inode\": %" G_GUINT64_FORMAT ", \"prot\": %d, "
                           "\"flags\": %d, \"file_offset\": %" G_GINT64_FORMAT ", \"stat_mode\": %u, \"stat_uid\": %u, "
                           "\"stat_gid\": %u, \"stat_size\": %" G_GINT64_FORMAT ", \"stat_mtime\": %" G_GINT64_FORMAT
                           ", \"source\": \"%s\"", m->device, m->inode, m->prot, m->flags, m->file_offset, m->stat_mode,
                           m->stat_uid, m->stat_gid, m->stat_size, m->stat_mtime, m->source < 3 ? sources[m->source] : "unknown");
    if (m->source == 2) {
        g_string_append(out, ", \"backing_file\": ");
        char *path = m->backing_file[0] == '/' ? g_strdup(m->backing_file)
                                               : g_strconcat(state->dir_real_path, "/", m->backing_file, NULL);
        text_json_cstring(out, path);
        g_free(path);
    }
    g_string_append(out, "}\n");
}

/* /proc/<pid>/maps' line: "start-end perms offset major:minor inode",
 * then the file's name after eight spaces. */
static void maps_line(const struct rr_mmap *m, GString *out)
{
    text_append_hex_padded(out, m->start, 8);
    text_append_c(out, '-');
    text_append_hex_padded(out, m->end, 8);
    char perms[6] = { ' ', m->prot & 1 ? 'r' : '-', m->prot & 2 ? 'w' : '-', m->prot & 4 ? 'x' : '-',
                      m->flags & 1 ? 's' : 'p', ' ' };
    text_append(out, perms, sizeof perms);
    text_append_hex_padded(out, (uint64_t)m->file_offset, 8);
    text_append_c(out, ' ');
    text_append_hex_padded(out, major(m->device), 2);
    text_append_c(out, ':');
    text_append_hex_padded(out, minor(m->device), 2);
    text_append_c(out, ' ');
    text_append_u64(out, m->inode);
    if (m->fsname[0]) {
        text_append(out, "        ", 8);
        text_append_cstring(out, m->fsname);
    }
    text_append_c(out, '\n');
}

/* The files over the mmaps and tasks tables are views, rendered when
 * read: a text per file would hold the tables again, outside any budget
 * (a process's maps once per thread, a thousand copies for a thousand
 * threads; the tasks' JSON six times over for control bytes, 25 MB for a
 * 158 KB trace).  arg[0], arg[1]: the first and the count of the records
 * shown; arg[2]: what a record is.  A record is one mmap or task, and
 * tasks/events.json ends with one closing record. */
enum table_file {
    MMAP_JSON,      /* mmaps/<n>.json */
    MAPS,           /* /maps: every mmap in order */
    PROCESS_MAPS,   /* threads/<tid>/maps: a range of process_mmaps */
    TASKS_LIST,
    TASKS_JSON,
};

static enum view_step table_view_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    const struct rr_state *state = view->context;
    uint64_t at = cursor->word[0], count = view->arg[1], i = view->arg[0] + at;
    if (at > count || (at == count && view->arg[2] != TASKS_JSON))
        return VIEW_END;
    switch (view->arg[2]) {
    case MMAP_JSON:
        mmap_json(state, &g_array_index(state->mmaps, struct rr_mmap, i), (guint)i, out);
        break;
    case MAPS:
        maps_line(&g_array_index(state->mmaps, struct rr_mmap, i), out);
        break;
    case PROCESS_MAPS:
        maps_line(&g_array_index(state->mmaps, struct rr_mmap, g_array_index(state->process_mmaps, uint32_t, i)), out);
        break;
    case TASKS_LIST:
        task_text(&g_array_index(state->tasks, struct rr_task, i), out);
        break;
    default:
        if (at == count) {
            g_string_append(out, count ? "\n]\n" : "[]\n");
            break;
        }
        g_string_append(out, at ? ",\n  " : "[\n  ");
        task_json(&g_array_index(state->tasks, struct rr_task, i), out);
        break;
    }
    cursor->word[0] = at + 1;
    return VIEW_RECORD;
}

static const struct view_ops table_view_ops = { .next = table_view_next };

static void add_table_view(struct rr_state *state, node_id dir, const char *name, enum table_file file,
                           uint64_t first, uint64_t count)
{
    struct view view = { .ops = &table_view_ops, .context = state, .arg = { first, count, file } };
    tree_add_view(state->trace->tree, dir, name, &view);
}

/* mmaps/<n>.json: a family (no node per record). */
static void mmap_view(void *context, uint64_t n, unsigned kind, struct view *out)
{
    (void)kind;
    const struct rr_state *state = context;
    *out = (struct view){ .ops = &table_view_ops, .context = context,
                          .arg = { n, n < state->mmaps->len ? 1 : 0, MMAP_JSON } };
}

static const struct numbered_files mmaps_files = { { ".json", NULL }, 0, mmap_view };

/* The process (thread-group leader) of a tid: follow thread clones to
 * their parent, at most 64 steps (a damaged trace may loop). */
static int32_t process_of(GHashTable *thread_parent, int32_t tid)
{
    gpointer parent;
    for (int steps = 0; steps < 64; steps++) {
        if (!g_hash_table_lookup_extended(thread_parent, GINT_TO_POINTER(tid), NULL, &parent))
            break;
        tid = GPOINTER_TO_INT(parent);
    }
    return tid;
}

/* An mmap shown in its threads' maps, and its process (pid_of): 64-bit
 * members, so that a process's range is found by SORTED_BELOW_SIGNED. */
struct process_mmap {
    int64_t pid;
    uint64_t index;
};

static gboolean mmap_process(const struct rr_state *state, const struct rr_mmap *map, int64_t *pid)
{
    gpointer found;
    if (!map->has_owner || map->frame_time < 1 || (uint64_t)map->frame_time > state->frame_count ||
        !g_hash_table_lookup_extended(state->pid_of, GINT_TO_POINTER(map->owner_tid), NULL, &found))
        return FALSE;
    *pid = GPOINTER_TO_INT(found);
    return TRUE;
}

static gint compare_process_mmaps(gconstpointer a, gconstpointer b)
{
    const struct process_mmap *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* Each thread's maps: its process's mmaps, in trace order. */
static void add_thread_maps(struct rr_state *state, node_id threads)
{
    GHashTable *pid_of = g_hash_table_new(g_direct_hash, g_direct_equal);
    state->pid_of = pid_of;
    guint thread_count = rr_thread_dirs(state);
    GHashTable *thread_parent = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < state->tasks->len; i++) {
        const struct rr_task *t = &g_array_index(state->tasks, struct rr_task, i);
        if (t->kind == RR_TASK_CLONE && (t->clone_flags & RR_CLONE_THREAD) && t->tid != t->parent_tid)
            g_hash_table_insert(thread_parent, GINT_TO_POINTER(t->tid), GINT_TO_POINTER(t->parent_tid));
    }
    for (guint i = 0; i < thread_count; i++) {
        int32_t tid = g_array_index(state->tids, int32_t, i);
        g_hash_table_insert(pid_of, GINT_TO_POINTER(tid), GINT_TO_POINTER(process_of(thread_parent, tid)));
    }
    g_hash_table_destroy(thread_parent);
    GArray *shown = g_array_new(FALSE, FALSE, sizeof(struct process_mmap));
    for (guint m = 0; m < state->mmaps->len; m++) {
        struct process_mmap entry = { 0, m };
        if (mmap_process(state, &g_array_index(state->mmaps, struct rr_mmap, m), &entry.pid))
            g_array_append_val(shown, entry);
    }
    g_array_sort(shown, compare_process_mmaps);
    state->process_mmaps = g_array_sized_new(FALSE, FALSE, sizeof(uint32_t), shown->len);
    for (guint at = 0; at < shown->len; at++) {
        uint32_t index = (uint32_t)g_array_index(shown, struct process_mmap, at).index;
        g_array_append_val(state->process_mmaps, index);
    }
    for (guint i = 0; i < thread_count; i++) {
        int32_t tid = g_array_index(state->tids, int32_t, i);
        /* Its process's mmaps: a range of the sorted ones. */
        int64_t pid = GPOINTER_TO_INT(g_hash_table_lookup(pid_of, GINT_TO_POINTER(tid)));
        size_t first = SORTED_BELOW_SIGNED(shown, struct process_mmap, pid, pid);
        size_t count = SORTED_BELOW_SIGNED(shown, struct process_mmap, pid, pid + 1) - first;
        char name[16];
        g_snprintf(name, sizeof name, "%d", tid);
        add_table_view(state, tree_dir(state->trace->tree, threads, name), "maps", PROCESS_MAPS, count ? first : 0,
                       count);
    }
    g_array_free(shown, TRUE);
}

void rr_add_task_files(struct rr_state *state, node_id threads)
{
    struct tree *tree = state->trace->tree;
    node_id tasks = tree_dir(tree, TREE_ROOT, "tasks");
    add_table_view(state, tasks, "list", TASKS_LIST, 0, state->tasks->len);
    add_table_view(state, tasks, "events.json", TASKS_JSON, 0, state->tasks->len);
    rr_add_ps_files(state, tasks);
    node_id mmaps = tree_dir(tree, TREE_ROOT, "mmaps");
    add_table_view(state, TREE_ROOT, "maps", MAPS, 0, state->mmaps->len);
    numbered_files_add(tree, mmaps, &mmaps_files, state, state->mmaps->len);
    add_thread_maps(state, threads);
}
