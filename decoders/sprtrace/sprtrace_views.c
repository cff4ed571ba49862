/* The record views (events, leaks, leaks-compressed, per-resource and
 * per-context call lists, calls/<n>.json, the header tables' files) and
 * the tree. */
#include <time.h>
#include "numbered_files.h"
#include "sprtrace.h"
#include "trace.h"
#include "tree.h"
#include "view.h"
#include "text.h"

enum view_mode {
    MODE_EVENTS,        /* postproc default output */
    MODE_LEAKS,         /* postproc -l */
    MODE_COMPRESSED,    /* postproc -lc */
    MODE_RES_CALLS,     /* calls of resource arg[1] (index in resources) */
    MODE_RES_LEAKS,
    MODE_CTX_CALLS,     /* calls whose context mask has bits of arg[1] */
    MODE_CALL_JSON,     /* call arg[1] (0-based) as JSON */
    MODE_MMAP_JSON,     /* mmap arg[1] as JSON */
    MODE_MAPS,          /* the mmaps as /proc/PID/maps lines */
    MODE_MODULES,       /* the tracing modules */
};

static struct sprt_state *view_state(const struct view *view)
{
    return ((struct trace *)view->context)->format_state;
}

static gboolean call_selected(const struct view *view, const struct sprt_call *call)
{
    switch (view->arg[0]) {
    case MODE_LEAKS: return call->leak;
    case MODE_RES_CALLS: return call->resource == view->arg[1];
    case MODE_RES_LEAKS: return call->leak && call->resource == view->arg[1];
    case MODE_CTX_CALLS: return (call->context & view->arg[1]) != 0;
    default: return TRUE;
    }
}

/* word[0]: next call to look at; word[1]: 1 once past the calls; word[2]:
 * the offset of the packet after the previous call (sprt_walk_resume).  A
 * record never runs across a checkpoint (a multiple of
 * SPRT_CALLS_PER_CHECKPOINT calls), where the sizing's segments start: a
 * search for the next selected call that reaches one ends there with an
 * empty record, resumed from that checkpoint. */
static enum view_step next_call(const struct view *view, struct view_cursor *cursor, GString *out)
{
    struct trace *trace = view->context;
    const struct sprt_state *state = trace->format_state;
    uint32_t n = state->call_count;
    struct sprt_walk walk;
    sprt_walk_resume(&walk, trace, state, cursor->word[0], cursor->word[2]);
    struct sprt_call call;
    gboolean leaks_only = view->arg[0] == MODE_LEAKS || view->arg[0] == MODE_RES_LEAKS;
    uint64_t boundary = ((uint64_t)walk.next / SPRT_CALLS_PER_CHECKPOINT + 1) * SPRT_CALLS_PER_CHECKPOINT;
    for (;;) {
        uint32_t i = leaks_only ? sprt_next_leak(state, walk.next) : walk.next;
        if (i >= boundary && boundary < n) {
            cursor->word[0] = boundary;
            cursor->word[2] = 0;
            return VIEW_RECORD;
        }
        if (i >= n)
            break;
        if (!sprt_walk_to(&walk, i, &call))
            return VIEW_ERROR;
        if (call_selected(view, &call)) {
            if (!sprt_render_call(trace, state, &call, TRUE, out))
                return VIEW_ERROR;
            cursor->word[0] = walk.next;
            cursor->word[2] = walk.offset;
            return VIEW_RECORD;
        }
    }
    if (view->arg[0] != MODE_LEAKS || cursor->word[1])
        return VIEW_END;
    g_string_append_len(out, state->leak_summary->str, (gssize)state->leak_summary->len);
    cursor->word[1] = 1;
    cursor->word[0] = n;
    cursor->word[2] = 0;
    return VIEW_RECORD;
}

static enum view_step next_group(const struct view *view, struct view_cursor *cursor, GString *out)
{
    struct trace *trace = view->context;
    const struct sprt_state *state = trace->format_state;
    uint64_t k = cursor->word[0];
    if (k > state->groups->len)
        return VIEW_END;
    cursor->word[0] = k + 1;
    if (k == state->groups->len) {
        g_string_append_len(out, state->leak_summary->str, (gssize)state->leak_summary->len);
        return VIEW_RECORD;
    }
    const struct sprt_group *g = &g_array_index(state->groups, struct sprt_group, k);
    struct sprt_walk walk;
    struct sprt_call call, first;
    sprt_walk_resume(&walk, trace, state, g->first_call, 0);
    uint64_t pos = g->list_offset, index = g->first_call;
    for (int32_t n = 0; n < g->leak_count; n++) {
        if (n > 0 && !sprt_group_next(state, &pos, &index)) {
            trace_error(trace, "leaks-compressed", 0, "group %" G_GUINT64_FORMAT " lists a call past the log", k);
            return VIEW_ERROR;
        }
        if (!sprt_walk_to(&walk, (uint32_t)index, &call) || !sprt_render_call(trace, state, &call, FALSE, out))
            return VIEW_ERROR;
        if (n == 0)
            first = call;
    }
    g_string_append_printf(out, "# allocation summary: %d block(s) with total size %d\n", g->leak_count,
                           g->leak_size);
    return sprt_render_frames(trace, state, &first, FALSE, out) ? VIEW_RECORD : VIEW_ERROR;
}

static void mmap_json(const struct sprt_mmap *m, uint64_t index, GString *out)
{
    g_string_append_printf(out, "{\n  \"index\": %" G_GUINT64_FORMAT ",\n  \"from\": \"0x%" G_GINT64_MODIFIER "x\",\n"
                           "  \"to\": \"0x%" G_GINT64_MODIFIER "x\",\n  \"size\": %" G_GUINT64_FORMAT
                           ",\n  \"path\": ", index, m->from, m->to, m->to >= m->from ? m->to - m->from : 0);
    text_json_cstring(out, m->path);
    g_string_append(out, "\n}\n");
}

/* The views over the header tables, rendered when read, so the tree keeps
 * no text or node per entry: a record is one entry (word[0] the next). */
static enum view_step table_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    const struct sprt_state *state = view_state(view);
    uint64_t at = cursor->word[0];
    switch (view->arg[0]) {
    case MODE_MMAP_JSON:
        if (at > 0 || view->arg[1] >= state->mmaps->len)
            return VIEW_END;
        mmap_json(&g_array_index(state->mmaps, struct sprt_mmap, view->arg[1]), view->arg[1], out);
        break;
    case MODE_MAPS: {
        if (at >= state->mmaps->len)
            return VIEW_END;
        /* sp-rtrace records only the executable mappings of /proc/PID/maps. */
        const struct sprt_mmap *m = &g_array_index(state->mmaps, struct sprt_mmap, at);
        int width = (int)state->log.pointer_size * 2;
        g_string_append_printf(out, "%0*" G_GINT64_MODIFIER "x-%0*" G_GINT64_MODIFIER "x r-xp 00000000 00:00 0 %s\n",
                               width, m->from, width, m->to, m->path);
        break;
    }
    default: {
        if (at >= state->modules->len)
            return VIEW_END;
        const struct sprt_module *m = &g_array_index(state->modules, struct sprt_module, at);
        g_string_append_printf(out, "%u %s %u.%u\n", m->id, m->name, m->vmajor, m->vminor);
        break;
    }
    }
    cursor->word[0] = at + 1;
    return VIEW_RECORD;
}

static enum view_step next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    const struct sprt_state *state = view_state(view);
    enum view_mode mode = view->arg[0];
    if (mode >= MODE_MMAP_JSON)
        return table_next(view, cursor, out);
    if (mode == MODE_CALL_JSON) {
        if (cursor->word[0]++)
            return VIEW_END;
        struct sprt_walk walk;
        struct sprt_call call;
        sprt_walk_resume(&walk, view->context, state, view->arg[1], 0);
        if (!sprt_walk_to(&walk, (uint32_t)view->arg[1], &call))
            return VIEW_ERROR;
        return sprt_render_call_json(view->context, state, &call, out) ? VIEW_RECORD : VIEW_ERROR;
    }
    gboolean with_header = mode == MODE_EVENTS || mode == MODE_LEAKS || mode == MODE_COMPRESSED;
    if (with_header && cursor->word[3] == 0) {
        cursor->word[3] = 1;
        sprt_render_header(state, mode == MODE_EVENTS ? NULL : mode == MODE_LEAKS ? "leaks" : "leaks|compress", out);
        return VIEW_RECORD;
    }
    return mode == MODE_COMPRESSED ? next_group(view, cursor, out) : next_call(view, cursor, out);
}

/* Where the sizing may cut the views of every call (events, leaks) and
 * leaks-compressed (view_ops.segments): at call checkpoints, or groups,
 * evenly chosen so that a segment covers LIMIT_SEGMENT_MIN_RECORDS calls
 * or more.  A cut's cursor is the one `next` reaches there (the header
 * done; word[2] 0: resumed from the checkpoint).  The per-resource and
 * per-context views are not cut: their many small files would each get a
 * checkpoint per segment.  The context is the step between candidates (a
 * checkpoint's calls, or one group); view_segment_cuts gives i below their
 * count, so every cut is at a call, or group, of the log. */
static gboolean call_cut(const void *context, uint64_t i, struct view_cursor *cursor)
{
    cursor->word[0] = i * *(const uint64_t *)context;
    cursor->word[3] = 1;
    return TRUE;
}

static uint32_t segments(const struct view *view, struct view_cursor *cursors, uint32_t max)
{
    static const uint64_t calls_per_checkpoint = SPRT_CALLS_PER_CHECKPOINT, one_group = 1;
    const struct sprt_state *state = view_state(view);
    enum view_mode mode = view->arg[0];
    if (mode == MODE_EVENTS || mode == MODE_LEAKS)
        return view_segment_cuts(state->call_count, state->checkpoints->len, max, call_cut, &calls_per_checkpoint,
                                 cursors);
    if (mode == MODE_COMPRESSED)
        return view_segment_cuts(state->call_count, state->groups->len, max, call_cut, &one_group, cursors);
    return 0;
}

static const struct view_ops record_ops = { .next = next, .segments = segments };

static void add_view(struct trace *trace, node_id dir, const char *name, enum view_mode mode, uint64_t arg)
{
    struct view view = { .ops = &record_ops, .context = trace, .arg = { mode, arg, 0 } };
    tree_add_view(trace->tree, dir, name, &view);
}

/* ---- calls/<n>.json: n is postproc's 1-based call number ---- */

static void call_view(void *context, uint64_t n, unsigned kind, struct view *out)
{
    (void)kind;
    *out = (struct view){ .ops = &record_ops, .context = context, .arg = { MODE_CALL_JSON, n - 1, 0 } };
}

static const struct numbered_files calls_files = { { ".json", NULL }, 1, call_view };

/* ---- the header tables' files ---- */

static void mmap_view(void *context, uint64_t n, unsigned kind, struct view *out)
{
    (void)kind;
    *out = (struct view){ .ops = &record_ops, .context = context, .arg = { MODE_MMAP_JSON, n, 0 } };
}

static const struct numbered_files mmaps_files = { { ".json", NULL }, 0, mmap_view };

static void add_tables(struct trace *trace, const struct sprt_state *state)
{
    node_id dir = tree_add_dir(trace->tree, TREE_ROOT, "mmaps");
    numbered_files_add(trace->tree, dir, &mmaps_files, trace, state->mmaps->len);
    add_view(trace, TREE_ROOT, "maps", MODE_MAPS, 0);
    add_view(trace, TREE_ROOT, "modules", MODE_MODULES, 0);
}

static void add_heap(struct trace *trace, const struct sprt_log *log)
{
    static const char *const names[10] = {
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
    };
    if (!log->have_hinfo)
        return;
    GString *json = g_string_new(NULL);
    g_string_append_printf(json, "{\n  \"heap_bottom\": \"0x%" G_GINT64_MODIFIER "x\",\n  \"heap_top\": \"0x%"
                           G_GINT64_MODIFIER "x\",\n  \"lowest_block\": \"0x%" G_GINT64_MODIFIER "x\",\n"
                           "  \"highest_block\": \"0x%" G_GINT64_MODIFIER "x\"", log->heap_bottom, log->heap_top,
                           log->lowest_block, log->highest_block);
    for (int i = 0; i < 10; i++)
        g_string_append_printf(json, ",\n  \"%s\": %d", names[i], log->heap[i]);
    g_string_append(json, "\n}\n");
    tree_add_string(trace->tree, TREE_ROOT, "heap.json", json);
}

/* The attached file lives next to the log (the tool writes both there). */
static void add_attachments(struct trace *trace, const struct sprt_state *state)
{
    if (!state->files->len)
        return;
    node_id dir = tree_add_dir(trace->tree, TREE_ROOT, "attachments");
    char *log_dir = g_path_get_dirname(trace->real_path ? trace->real_path : trace->path);
    for (guint i = 0; i < state->files->len; i++) {
        const struct sprt_file *f = &g_array_index(state->files, struct sprt_file, i);
        char *base = g_path_get_basename(f->path);
        char *target = g_build_filename(log_dir, base, NULL);
        tree_add_symlink_len(trace->tree, dir, f->name, f->name_len, target);   /* a NUL in it is escaped */
        g_free(target);
        g_free(base);
    }
    g_free(log_dir);
}

static void add_resources(struct trace *trace, const struct sprt_state *state)
{
    node_id dir = tree_add_dir(trace->tree, TREE_ROOT, "resources");
    for (guint i = 0; i < state->resources->len; i++) {
        const struct sprt_resource *r = &g_array_index(state->resources, struct sprt_resource, i);
        node_id sub = tree_add_dir_len(trace->tree, dir, r->type, r->type_len);
        add_view(trace, sub, "calls", MODE_RES_CALLS, i);
        add_view(trace, sub, "leaks", MODE_RES_LEAKS, i);
    }
}

static void add_contexts(struct trace *trace, const struct sprt_state *state)
{
    node_id dir = tree_add_dir(trace->tree, TREE_ROOT, "contexts");
    for (guint i = 0; i < state->contexts->len; i++) {
        const struct sprt_named *c = &g_array_index(state->contexts, struct sprt_named, i);
        GString *name = g_string_new(NULL);
        g_string_printf(name, "%u-", c->id);
        g_string_append_len(name, c->name, (gssize)c->name_len);
        node_id sub = tree_add_dir_len(trace->tree, dir, name->str, name->len);
        g_string_free(name, TRUE);
        add_view(trace, sub, "calls", MODE_CTX_CALLS, c->id);
    }
}

static void add_info(struct trace *trace, const struct sprt_state *state)
{
    const struct sprt_log *log = &state->log;
    char text[64];
    g_snprintf(text, sizeof text, "%u.%u", log->vmajor, log->vminor);
    trace_info_add_string(trace, "version", text);
    trace_info_add_string(trace, "architecture", state->arch);
    trace_info_add_number(trace, "pointer_size", log->pointer_size);
    trace_info_add_string(trace, "endianness", log->big_endian ? "big" : "little");
    trace_info_add_string(trace, "process", state->process);
    trace_info_add_number(trace, "pid", log->pid);
    time_t secs = (time_t)log->secs;
    struct tm tm;
    gmtime_r(&secs, &tm);
    g_snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ", tm.tm_year + 1900, tm.tm_mon + 1,
               tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, log->usecs % 1000000u);
    trace_info_add_string(trace, "start_time", text);
    if (log->have_depth)
        trace_info_add(trace, "backtrace_depth", (g_snprintf(text, sizeof text, "%d", log->backtrace_depth), text));
    trace_info_add_number(trace, "calls", state->call_count);
    trace_info_add_number(trace, "leaks", state->leak_count);
    trace_info_add_number(trace, "backtraces", state->trace_count);
    trace_info_add_number(trace, "resources", state->resources->len);
    trace_info_add_number(trace, "mmaps", state->mmaps->len);
}

/* The environment text is rendered from the tables, scanned or loaded. */
void sprt_build_tree(struct trace *trace)
{
    struct sprt_state *state = trace->format_state;
    sprt_render_environment(state);
    sprt_index_modules(state);
    add_view(trace, TREE_ROOT, "events", MODE_EVENTS, 0);
    add_view(trace, TREE_ROOT, "leaks", MODE_LEAKS, 0);
    add_view(trace, TREE_ROOT, "leaks-compressed", MODE_COMPRESSED, 0);
    node_id calls = tree_add_dir(trace->tree, TREE_ROOT, "calls");
    numbered_files_add(trace->tree, calls, &calls_files, trace, state->call_count);
    add_resources(trace, state);
    add_contexts(trace, state);
    add_tables(trace, state);
    add_heap(trace, &state->log);
    add_attachments(trace, state);
    add_info(trace, state);
    g_string_append(trace->readme,
        "sp-rtrace log: every tracked call (allocation/free of memory, file descriptors, shared memory, GObjects...)\n"
        "with its backtrace.\n"
        "  events            sp-rtrace-postproc's default text, byte for byte\n"
        "  leaks             sp-rtrace-postproc -l (calls not freed, then a summary per resource)\n"
        "  leaks-compressed  sp-rtrace-postproc -lc (leaks grouped by backtrace, smallest total first)\n"
        "  calls/<n>.json    call n (the number in events) with arguments and backtrace mapped to modules\n"
        "  resources/<type>/{calls,leaks}   the same text for one resource type\n"
        "  contexts/<id>-<name>/calls       calls made inside a call context\n"
        "  mmaps/<n>.json, maps             executable mappings; modules: tracing modules; heap.json: mallinfo\n"
        "  attachments/<name>               links to files attached to the log (next to it)\n"
        "  events.jsonl      the calls as common events: allocations with their frees as async slices\n");
}
