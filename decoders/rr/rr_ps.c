/* tasks/ps (`rr ps`) and tasks/tree: the processes of the task events, as
 * views rendered when read.  The rows come from one pass over the tasks
 * table at mount, a few words per process: a row's exec and end are found
 * by following the tid -> process map forward once, not once per process
 * (which took the square of the task count), and the tree gives each row
 * one parent, so its size is the row count whatever the pids (a parent
 * printed once per process that reused its pid multiplied the tree by two
 * per level: 80 clone events held the mount forever). */
#include <string.h>

#include "rr.h"
#include "tree.h"
#include "tracefs_limits.h"

#define NONE UINT32_MAX
/* Past this depth a tree row is indented no further (a chain of forks
 * thousands deep would be mostly spaces). */
#define TREE_INDENT_LEVELS 64

struct ps_row {
    int32_t pid, ppid;        /* ppid unused for the first row ("--") */
    uint32_t task;            /* the task event that made the process */
    uint32_t exec, end;       /* the exec naming it, the exit or detach ending it; NONE when none */
    uint32_t depth;           /* in the tree */
};

/* What the pass keeps: tid -> process (as `rr ps` follows it: a detached
 * tid stays), how many tids each process has, and the rows still waiting
 * for their exec and for their end, per process. */
struct ps_pass {
    GHashTable *process_of, *tid_count, *waiting_exec, *waiting_end;
};

static int lookup_int(GHashTable *table, int32_t key)
{
    return GPOINTER_TO_INT(g_hash_table_lookup(table, GINT_TO_POINTER(key)));
}

static void count_tid(struct ps_pass *pass, int32_t process, int change)
{
    g_hash_table_insert(pass->tid_count, GINT_TO_POINTER(process),
                        GINT_TO_POINTER(lookup_int(pass->tid_count, process) + change));
}

/* rr's map from tids to processes after task event t. */
static void follow_task(struct ps_pass *pass, const struct rr_task *t)
{
    gpointer tid = GINT_TO_POINTER(t->tid);
    gboolean known = g_hash_table_contains(pass->process_of, tid);
    if (t->kind == RR_TASK_CLONE) {
        int32_t process = (t->clone_flags & RR_CLONE_THREAD) ? lookup_int(pass->process_of, t->parent_tid) : t->tid;
        if (known)
            count_tid(pass, lookup_int(pass->process_of, t->tid), -1);
        g_hash_table_insert(pass->process_of, tid, GINT_TO_POINTER(process));
        count_tid(pass, process, 1);
    } else if (t->kind == RR_TASK_EXIT && known) {
        /* rr 5.6.0 keeps a detached tid in its map, so a process with a
         * detached thread never shows an exit code ("none"). */
        count_tid(pass, lookup_int(pass->process_of, t->tid), -1);
        g_hash_table_remove(pass->process_of, tid);
    }
}

static void wait_for(GHashTable *waiting, int32_t process, uint32_t row)
{
    GArray *rows = g_hash_table_lookup(waiting, GINT_TO_POINTER(process));
    if (!rows) {
        rows = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        g_hash_table_insert(waiting, GINT_TO_POINTER(process), rows);
    }
    g_array_append_val(rows, row);
}

/* Task event `at` is an exec or the end of the process its tid belongs to:
 * the rows of that process waiting for it take it. */
static void settle_rows(struct ps_pass *pass, GArray *rows, const struct rr_task *t, uint32_t at)
{
    if (!g_hash_table_contains(pass->process_of, GINT_TO_POINTER(t->tid)))
        return;
    gpointer process = GINT_TO_POINTER(lookup_int(pass->process_of, t->tid));
    gboolean ends = t->kind == RR_TASK_EXIT || t->kind == RR_TASK_DETACH;
    if (t->kind != RR_TASK_EXEC && !(ends && lookup_int(pass->tid_count, GPOINTER_TO_INT(process)) == 1))
        return;
    GArray *waiting = g_hash_table_lookup(ends ? pass->waiting_end : pass->waiting_exec, process);
    for (guint i = 0; waiting && i < waiting->len; i++) {
        struct ps_row *row = &g_array_index(rows, struct ps_row, g_array_index(waiting, uint32_t, i));
        /* An ended process takes no later exec. */
        if (ends)
            row->end = at;
        else if (row->end == NONE)
            row->exec = at;
    }
    g_hash_table_remove(ends ? pass->waiting_end : pass->waiting_exec, process);
}

static void add_row(struct ps_pass *pass, GArray *rows, int32_t pid, int32_t ppid, uint32_t task)
{
    struct ps_row row = { .pid = pid, .ppid = ppid, .task = task, .exec = NONE, .end = NONE };
    wait_for(pass->waiting_exec, pid, rows->len);
    wait_for(pass->waiting_end, pid, rows->len);
    g_array_append_val(rows, row);
}

/* `rr ps`'s rows: the first exec's process, then one per clone that is
 * not a thread, in task order. */
static GArray *ps_rows(const struct rr_state *state)
{
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(struct ps_row));
    struct ps_pass pass = {
        .process_of = g_hash_table_new(g_direct_hash, g_direct_equal),
        .tid_count = g_hash_table_new(g_direct_hash, g_direct_equal),
        .waiting_exec = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_array_unref),
        .waiting_end = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_array_unref),
    };
    const struct rr_task *first = &g_array_index(state->tasks, struct rr_task, 0);
    g_hash_table_insert(pass.process_of, GINT_TO_POINTER(first->tid), GINT_TO_POINTER(first->tid));
    count_tid(&pass, first->tid, 1);
    add_row(&pass, rows, first->tid, 0, 0);
    for (guint i = 0; i < state->tasks->len; i++) {
        const struct rr_task *t = &g_array_index(state->tasks, struct rr_task, i);
        settle_rows(&pass, rows, t, i);
        if (i > 0)
            follow_task(&pass, t);
        if (i > 0 && t->kind == RR_TASK_CLONE && !(t->clone_flags & RR_CLONE_THREAD))
            add_row(&pass, rows, t->tid, lookup_int(pass.process_of, t->parent_tid), i);
    }
    g_hash_table_destroy(pass.process_of);
    g_hash_table_destroy(pass.tid_count);
    g_hash_table_destroy(pass.waiting_exec);
    g_hash_table_destroy(pass.waiting_end);
    return rows;
}

/* The tree's order: each row under the last row before it of its parent
 * process (the one alive when it was made), children in task order. */
static GArray *tree_order(GArray *rows)
{
    guint count = rows->len;
    /* Row `count` stands for a parent of the roots. */
    uint32_t *first_child = g_new(uint32_t, count + 1), *last_child = g_new(uint32_t, count + 1);
    uint32_t *next_sibling = g_new(uint32_t, count);
    memset(first_child, 0xff, (count + 1) * sizeof *first_child);
    memset(next_sibling, 0xff, count * sizeof *next_sibling);
    GHashTable *last_row_of = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (uint32_t r = 0; r < count; r++) {
        const struct ps_row *row = &g_array_index(rows, struct ps_row, r);
        gpointer found = r ? g_hash_table_lookup(last_row_of, GINT_TO_POINTER(row->ppid)) : NULL;
        uint32_t parent = found ? GPOINTER_TO_UINT(found) - 1 : count;
        if (first_child[parent] == NONE)
            first_child[parent] = r;
        else
            next_sibling[last_child[parent]] = r;
        last_child[parent] = r;
        g_hash_table_insert(last_row_of, GINT_TO_POINTER(row->pid), GUINT_TO_POINTER(r + 1));
    }
    g_hash_table_destroy(last_row_of);
    /* Depth first, without recursion: a row's parent always comes before it. */
    GArray *order = g_array_sized_new(FALSE, FALSE, sizeof(uint32_t), count);
    GArray *stack = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    uint32_t next = first_child[count];
    while (next != NONE || stack->len) {
        if (next == NONE) {
            next = next_sibling[g_array_index(stack, uint32_t, stack->len - 1)];
            g_array_set_size(stack, stack->len - 1);
            continue;
        }
        g_array_index(rows, struct ps_row, next).depth = stack->len;
        g_array_append_val(order, next);
        g_array_append_val(stack, next);
        next = first_child[next];
    }
    g_array_unref(stack);
    g_free(first_child);
    g_free(last_child);
    g_free(next_sibling);
    return order;
}

/* "<pid>" or "<pid> (<pid in its namespace>)", as rr ps shows a process. */
static void append_process(const struct rr_state *state, const struct ps_row *row, GString *out)
{
    const struct rr_task *made = &g_array_index(state->tasks, struct rr_task, row->task);
    g_string_append_printf(out, "%d", row->pid);
    if (row->task > 0 && made->own_ns_tid != made->tid)
        g_string_append_printf(out, " (%d)", made->own_ns_tid);
}

static void append_end(const struct rr_state *state, const struct ps_row *row, GString *out)
{
    if (row->end == NONE) {
        g_string_append(out, "none");
        return;
    }
    const struct rr_task *end = &g_array_index(state->tasks, struct rr_task, row->end);
    if (end->kind == RR_TASK_DETACH)
        g_string_append(out, "detach");
    else   /* the exit code, or minus the signal that ended it */
        g_string_append_printf(out, "%d", (end->exit_status & 0x7f) == 0 ? (end->exit_status >> 8) & 0xff
                                                                         : -(end->exit_status & 0x7f));
}

/* The first process is named by the first exec; the others by the first
 * exec of theirs after they were made. */
static void append_command(const struct rr_state *state, const struct ps_row *row, GString *out)
{
    uint32_t exec = row->task == 0 ? 0 : row->exec;
    if (exec == NONE) {
        g_string_append(out, "(forked without exec)\n");
        return;
    }
    const GPtrArray *cmdline = g_array_index(state->tasks, struct rr_task, exec).cmdline;
    for (guint i = 0; cmdline && i < cmdline->len; i++) {
        if (i)
            g_string_append_c(out, ' ');
        g_string_append(out, g_ptr_array_index(cmdline, i));
    }
    g_string_append_c(out, '\n');
}

enum ps_file { PS_TABLE, PS_TREE };

/* A record is a row; tasks/ps starts with its header (and the reason when
 * there are no rows). */
static enum view_step ps_view_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    const struct rr_state *state = view->context;
    uint64_t at = cursor->word[0], rows = state->ps_rows ? state->ps_rows->len : 0;
    cursor->word[0] = at + 1;
    if (view->arg[0] == PS_TABLE && at == 0) {
        g_string_append(out, "PID\tPPID\tEXIT\tCMD\n");
        if (state->tasks->len > LIMIT_RR_PS_TASKS)
            g_string_append_printf(out, "# %u task events: more than %u, not listed (see tasks/list)\n",
                                   state->tasks->len, LIMIT_RR_PS_TASKS);
        else if (!state->ps_rows)
            g_string_append(out, "# invalid trace: the first task event is not an exec\n");
        return VIEW_RECORD;
    }
    gboolean tree = view->arg[0] == PS_TREE;
    uint64_t position = tree ? at : at - 1;
    if (position >= rows)
        return VIEW_END;
    if (tree)
        position = g_array_index(state->ps_tree_order, uint32_t, position);
    const struct ps_row *row = &g_array_index(state->ps_rows, struct ps_row, position);
    if (tree)
        g_string_append_printf(out, "%*s", (int)(MIN(row->depth, TREE_INDENT_LEVELS) * 2), "");
    append_process(state, row, out);
    if (tree)
        g_string_append(out, " exit=");
    else if (position == 0)
        g_string_append(out, "\t--\t");
    else
        g_string_append_printf(out, "\t%d\t", row->ppid);
    append_end(state, row, out);
    g_string_append_c(out, tree ? ' ' : '\t');
    append_command(state, row, out);
    return VIEW_RECORD;
}

static const struct view_ops ps_view_ops = { .next = ps_view_next };

void rr_add_ps_files(struct rr_state *state, uint32_t tasks_dir)
{
    const GArray *tasks = state->tasks;
    if (tasks->len && tasks->len <= LIMIT_RR_PS_TASKS && g_array_index(tasks, struct rr_task, 0).kind == RR_TASK_EXEC) {
        state->ps_rows = ps_rows(state);
        state->ps_tree_order = tree_order(state->ps_rows);
    }
    struct view table = { .ops = &ps_view_ops, .context = state, .arg = { PS_TABLE, 0, 0 } };
    struct view tree = { .ops = &ps_view_ops, .context = state, .arg = { PS_TREE, 0, 0 } };
    tree_add_view(state->trace->tree, tasks_dir, "tree", &tree);
    tree_add_view(state->trace->tree, tasks_dir, "ps", &table);
}
