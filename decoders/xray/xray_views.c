/* The record views of an XRay log: events.yaml, events, per-thread events,
 * calls and stack, per-function calls, llvm-xray's trace_event export. */
#include <inttypes.h>
#include "tracefs_limits.h"
#include "xray_format.h"

static const struct xray_state *state_of(const struct view *view)
{
    return view->context;
}

enum layout { YAML_RECORD, LINE_WITH_THREAD, LINE_WITHOUT_THREAD };

/* Renders record i of a merge (thread UINT32_MAX: every thread's). */
static enum view_step render_at(const struct view *view, uint32_t thread, uint64_t i, enum layout layout,
                                GString *out)
{
    const struct xray_state *state = state_of(view);
    struct xray_record record;
    gboolean found = xray_merge_next(xray_merge_at(state, thread, i, FALSE), &record, NULL);
    if (!found || !xray_decode_extra(state, &record)) {
        trace_error(state->trace, "log", found ? record.offset : 0, "record %llu no longer readable",
                    (unsigned long long)i);
        return VIEW_ERROR;
    }
    if (layout == YAML_RECORD)
        xray_render_yaml_record(state, &record, out);
    else
        xray_render_event_line(state, &record, layout == LINE_WITH_THREAD, out);
    return VIEW_RECORD;
}

/* Where the sizing may cut a view (view_ops.segments): at resume points the
 * index pass placed, candidate i (0 < i < candidates) being record or
 * interval number `ordinals ? ordinals[i] : i * spacing`, evenly chosen so
 * that a segment covers about LIMIT_SEGMENT_MIN_RECORDS of the view's
 * `records` or more.  A cut's cursor is word[0] = shift + that number (below
 * `end`), the other words 0: the cursor the view's `next` itself reaches
 * there. */
struct cut_points {
    const guint64 *ordinals;   /* NULL: i * spacing */
    uint64_t spacing;
    uint64_t candidates;
    uint64_t records;
    uint64_t end;
    uint64_t shift;
};

static gboolean cut_point(const void *context, uint64_t i, struct view_cursor *cursor)
{
    const struct cut_points *p = context;
    uint64_t mark = p->ordinals ? p->ordinals[i] : i * p->spacing;
    if (mark == 0 || mark >= p->end)
        return FALSE;
    cursor->word[0] = p->shift + mark;
    return TRUE;
}

/* Views of every record in time order: cut at the merge's global checkpoints. */
uint32_t xray_global_cut_points(const struct xray_state *state, uint64_t shift, struct view_cursor *cursors,
                                uint32_t max)
{
    struct cut_points p = { (const guint64 *)(void *)state->checkpoint_ordinals->data, 0,
                            state->checkpoint_ordinals->len, state->records, state->records, shift };
    return view_segment_cuts(p.records, p.candidates, max, cut_point, &p, cursors);
}

/* Cuts a view whose word0 counts to `end` at every spacing-th number: a
 * thread's events at its checkpoints, a calls view where the checkpoint
 * intervals it walks start (spacing 1). */
static uint32_t spaced_cuts(uint64_t spacing, uint64_t end, uint64_t records, struct view_cursor *cursors,
                            uint32_t max)
{
    struct cut_points p = { NULL, spacing, (end + spacing - 1) / spacing, records, end, 0 };
    return view_segment_cuts(p.records, p.candidates, max, cut_point, &p, cursors);
}

/* ---- events.yaml: word0 = 0 header, i + 1 record i, n + 1 the end marker ---- */
static enum view_step yaml_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    const struct xray_state *state = state_of(view);
    uint64_t n = state->records;
    uint64_t step = cursor->word[0]++;
    if (step == 0) {
        xray_render_yaml_header(state, out);
        return VIEW_RECORD;
    }
    if (step <= n)
        return render_at(view, UINT32_MAX, step - 1, YAML_RECORD, out);
    if (step == n + 1) {
        g_string_append(out, "...\n");
        return VIEW_RECORD;
    }
    return VIEW_END;
}

/* Record i's step is i + 1 (step 0 is the header). */
static uint32_t yaml_segments(const struct view *view, struct view_cursor *cursors, uint32_t max)
{
    return xray_global_cut_points(state_of(view), 1, cursors, max);
}

const struct view_ops xray_yaml_ops = { .next = yaml_next, .segments = yaml_segments };

/* The thread of a threads/<tid>/ view (arg0), or NULL. */
static const struct xray_thread *thread_of(const struct view *view)
{
    const struct xray_state *state = state_of(view);
    uint32_t thread = (uint32_t)view->arg[0];
    if (thread >= state->threads->len)
        return NULL;
    return &g_array_index(state->threads, struct xray_thread, thread);
}

/* ---- events (arg0 = UINT32_MAX: every thread's records, with their tid)
 * and threads/<tid>/events (arg0 = thread): word0 = the next record ---- */
static enum view_step events_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    uint32_t thread = (uint32_t)view->arg[0];
    const struct xray_thread *t = thread_of(view);
    uint64_t records = thread == UINT32_MAX ? state_of(view)->records : t ? t->records : 0;
    if (cursor->word[0] >= records)
        return VIEW_END;
    return render_at(view, thread, cursor->word[0]++, thread == UINT32_MAX ? LINE_WITH_THREAD : LINE_WITHOUT_THREAD,
                     out);
}

/* Cut at the global checkpoints, or at the thread's own (one every
 * thread->spacing records). */
static uint32_t events_segments(const struct view *view, struct view_cursor *cursors, uint32_t max)
{
    if (view->arg[0] == UINT32_MAX)
        return xray_global_cut_points(state_of(view), 0, cursors, max);
    const struct xray_thread *t = thread_of(view);
    return t && t->spacing ? spaced_cuts(t->spacing, t->records, t->records, cursors, max) : 0;
}

const struct view_ops xray_events_ops = { .next = events_next, .segments = events_segments };

/* ---- calls: threads/<tid>/calls and stack, functions/<f>/calls ---- */
void xray_append_function_name(const struct xray_state *state, uint32_t func_id, GString *out)
{
    const char *name = xray_symbols_name(state->symbols, (int32_t)func_id);
    if (name)
        text_append_cstring(out, name);
    else
        text_append_u64(out, func_id);
}

static void append_call_arg(const struct xray_state *state, const struct xray_call *call, GString *out)
{
    if (call->enter_kind != XRAY_ENTER_ARG)
        return;
    struct xray_record record = { .kind = XRAY_ENTER_ARG, .offset = call->enter_offset };
    if (xray_decode_extra(state, &record) && record.has_arg)
        g_string_append_printf(out, " arg=%" PRIu64, record.arg);
}

/* The next call of interval k (word1 numbers them), or NULL when they are
 * done: the cursor then moves on to the next interval's first with an
 * empty record, so that a record never runs across an interval (the
 * sizing's segments start there). */
static const struct xray_call *next_call(const struct xray_state *state, uint32_t thread, uint32_t func_id,
                                         uint64_t k, struct view_cursor *cursor)
{
    const GArray *calls = xray_interval_calls(state, thread, func_id, k);
    if (cursor->word[1] < calls->len)
        return &g_array_index(calls, struct xray_call, cursor->word[1]++);
    cursor->word[0]++;
    cursor->word[1] = 0;
    return NULL;
}

/* threads/<tid>/calls and stack: arg0 = thread, arg2 = 1 for the stack
 * layout; word0 = checkpoint interval, word1 = call within it. */
static enum view_step thread_calls_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    const struct xray_state *state = state_of(view);
    if (cursor->word[0] >= state->checkpoint_ordinals->len || !thread_of(view))
        return VIEW_END;
    const struct xray_call *call = next_call(state, (uint32_t)view->arg[0], 0, cursor->word[0], cursor);
    if (!call)
        return VIEW_RECORD;
    uint64_t start = xray_tsc_ns(state, call->start_tsc);
    g_string_append_printf(out, "%" PRIu64 " %" PRIu64 " ", start, xray_tsc_ns(state, call->end_tsc) - start);
    if (view->arg[2]) {
        g_string_append_printf(out, "%*s", (int)(2 * MIN(call->depth, 4096u)), "");
    } else {
        g_string_append_printf(out, "%" PRIu32 " %" PRIu32, call->depth, call->func_id);
        append_call_arg(state, call, out);
        g_string_append(out, " fn=");
    }
    xray_append_function_name(state, call->func_id, out);
    g_string_append_c(out, '\n');
    return VIEW_RECORD;
}

static uint32_t thread_calls_segments(const struct view *view, struct view_cursor *cursors, uint32_t max)
{
    const struct xray_thread *t = thread_of(view);
    return t ? spaced_cuts(1, state_of(view)->checkpoint_ordinals->len, t->calls, cursors, max) : 0;
}

const struct view_ops xray_thread_calls_ops = { .next = thread_calls_next,
                                                .segments = thread_calls_segments };

/* The function of a functions/<f>/calls view (arg0), or NULL, and how many
 * intervals the view walks: those listed, else every one. */
static const struct xray_function_stats *function_of(const struct view *view, uint64_t *intervals)
{
    const struct xray_state *state = state_of(view);
    if (view->arg[0] >= state->functions->len)
        return NULL;
    const struct xray_function_stats *s = &g_array_index(state->functions, struct xray_function_stats, view->arg[0]);
    *intervals = s->first_interval != UINT64_MAX ? s->interval_count : state->checkpoint_ordinals->len;
    return s;
}

/* functions/<f>/calls: arg0 = index into state->functions; word0 = index
 * into the function's intervals (or the interval, when it has no list),
 * word1 = call within the interval. */
static enum view_step function_calls_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    const struct xray_state *state = state_of(view);
    uint64_t intervals;
    const struct xray_function_stats *s = function_of(view, &intervals);
    if (!s || cursor->word[0] >= intervals)
        return VIEW_END;
    uint64_t k = s->first_interval != UINT64_MAX
                     ? g_array_index(state->function_intervals, uint32_t, s->first_interval + cursor->word[0])
                     : cursor->word[0];
    const struct xray_call *call = next_call(state, UINT32_MAX, s->func_id, k, cursor);
    if (!call)
        return VIEW_RECORD;
    const struct xray_thread *thread = &g_array_index(state->threads, struct xray_thread, call->thread);
    uint64_t start = xray_tsc_ns(state, call->start_tsc);
    g_string_append_printf(out, "%" PRIu64 " %" PRIu64 " %" PRId32 " %" PRIu32, start,
                           xray_tsc_ns(state, call->end_tsc) - start, thread->tid, call->depth);
    append_call_arg(state, call, out);
    g_string_append_c(out, '\n');
    return VIEW_RECORD;
}

static uint32_t function_calls_segments(const struct view *view, struct view_cursor *cursors, uint32_t max)
{
    uint64_t intervals;
    const struct xray_function_stats *s = function_of(view, &intervals);
    return s ? spaced_cuts(1, intervals, s->count, cursors, max) : 0;
}

const struct view_ops xray_function_calls_ops = { .next = function_calls_next,
                                                  .segments = function_calls_segments };

/* ---- export/llvm-xray-trace_event.json (llvm-xray convert --output-format=
 * trace_event, kept for its reference test; export/chrome.json is the
 * engine's): word0 = phase (0 head, 1 events, 2 frames, 3 tail),
 * word1 = index in the phase, word2 = 1 once an item was written ---- */
static void chrome_name(const struct xray_state *state, uint32_t func_id, GString *out)
{
    GString *label = g_string_new(NULL);
    xray_function_label(state, func_id, label);
    text_json_string(out, label->str, label->len);
    g_string_free(label, TRUE);
}

/* One event, after a separator unless it is the first. */
static void chrome_event(const struct xray_state *state, const struct xray_record *ref, uint32_t func_id,
                         uint32_t node, const char *phase, gboolean *first, GString *out)
{
    if (!*first)
        g_string_append(out, ",\n");
    *first = FALSE;
    const struct xray_thread *thread = &g_array_index(state->threads, struct xray_thread, ref->thread);
    double frequency = (double)state->header.cycle_frequency;
    double us = frequency > 0 ? 1000000.0 / frequency * (double)ref->tsc : (double)ref->tsc / 1000.0;
    text_append_cstring(out, "    { \"name\" : ");
    chrome_name(state, func_id, out);
    text_append_cstring(out, ", \"ph\" : \"");
    text_append_cstring(out, phase);
    text_append_cstring(out, "\", \"tid\" : \"");
    text_append_u64(out, (uint32_t)thread->tid);
    text_append_cstring(out, "\", \"pid\" : \"");
    text_append_u64(out, xray_shown_pid(state, thread));
    text_append_cstring(out, "\", \"ts\" : \"");
    text_fixed_number(out, us, 4);
    text_append_cstring(out, "\", \"sf\" : \"");
    text_append_u64(out, node);
    text_append_cstring(out, "\" }");
}

static gboolean chrome_record(const struct xray_state *state, const struct xray_record *ref, uint32_t stack_node,
                              gboolean first, GString *out)
{
    if (stack_node == UINT32_MAX || stack_node >= state->stack_nodes->len)
        return FALSE;
    const GArray *nodes = state->stack_nodes;
    if (ref->kind == XRAY_ENTER || ref->kind == XRAY_ENTER_ARG) {
        chrome_event(state, ref, ref->func_id, stack_node, "B", &first, out);
        return TRUE;
    }
    if (ref->kind != XRAY_EXIT && ref->kind != XRAY_TAIL_EXIT)
        return FALSE;
    uint32_t cursor = stack_node;
    while (cursor != UINT32_MAX && cursor < nodes->len) {
        const struct xray_stack_node *node = &g_array_index(nodes, struct xray_stack_node, cursor);
        chrome_event(state, ref, node->func_id, cursor, "E", &first, out);
        if (node->func_id == ref->func_id)
            break;
        cursor = node->parent;
    }
    return TRUE;
}

static enum view_step chrome_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    const struct xray_state *state = state_of(view);
    uint64_t *phase = &cursor->word[0], *i = &cursor->word[1], *written = &cursor->word[2];
    switch (*phase) {
    case 0:
        g_string_append(out, "{\n  \"traceEvents\": [\n");
        *phase = 1;
        return VIEW_RECORD;
    case 1:
        if (*i < state->records) {
            struct xray_record record;
            uint32_t node;
            if (!xray_merge_next(xray_merge_at(state, UINT32_MAX, *i, TRUE), &record, &node)) {
                trace_error(state->trace, "log", 0, "record %llu no longer readable", (unsigned long long)*i);
                return VIEW_ERROR;
            }
            if (chrome_record(state, &record, node, !*written, out))
                *written = 1;
            (*i)++;
            return VIEW_RECORD;
        }
        g_string_append(out, "\n  ],\n  \"displayTimeUnit\": \"ns\",\n  \"stackFrames\": {\n");
        *phase = 2;
        *i = 0;
        *written = 0;
        return VIEW_RECORD;
    case 2:
        if (*i < state->stack_nodes->len) {
            const struct xray_stack_node *node = &g_array_index(state->stack_nodes, struct xray_stack_node, *i);
            g_string_append_printf(out, "%s    \"%" PRIu64 "\" : { \"name\" : ", *i ? ",\n" : "", *i);
            chrome_name(state, node->func_id, out);
            if (node->parent != UINT32_MAX)
                g_string_append_printf(out, ", \"parent\": \"%" PRIu32 "\"", node->parent);
            g_string_append(out, " }");
            (*i)++;
            return VIEW_RECORD;
        }
        g_string_append(out, "\n  }\n}\n");
        *phase = 3;
        return VIEW_RECORD;
    default:
        return VIEW_END;
    }
}

const struct view_ops xray_trace_event_ops = { .next = chrome_next };
