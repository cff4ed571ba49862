/* FXT's common events (engine/trace_event.h): one per event record, in
 * file order.  A duration begin whose end is found (the thread's nesting
 * returns to it within LIMIT_FXT_SPAN_SCAN of its records, as
 * threads/<tid>/spans pairs them) is a `begin`; one that never ends is an
 * `instant` with `unmatched: true`, so that begins and ends stay balanced.
 * Cursor: word[0] the next record's offset, word[1] the events yielded
 * before it (seq). */
#include <inttypes.h>
#include <string.h>
#include "fxt.h"
#include "trace.h"
#include "trace_event.h"
#include "tracefs_limits.h"

static const enum trace_event_kind kinds[FXT_EV_COUNT] = {
    [FXT_EV_INSTANT] = TRACE_EVENT_INSTANT,         [FXT_EV_COUNTER] = TRACE_EVENT_COUNTER,
    [FXT_EV_DUR_BEGIN] = TRACE_EVENT_BEGIN,         [FXT_EV_DUR_END] = TRACE_EVENT_END,
    [FXT_EV_DUR_COMPLETE] = TRACE_EVENT_COMPLETE,   [FXT_EV_ASYNC_BEGIN] = TRACE_EVENT_ASYNC_BEGIN,
    [FXT_EV_ASYNC_INSTANT] = TRACE_EVENT_ASYNC_INSTANT, [FXT_EV_ASYNC_END] = TRACE_EVENT_ASYNC_END,
    [FXT_EV_FLOW_BEGIN] = TRACE_EVENT_FLOW_BEGIN,   [FXT_EV_FLOW_STEP] = TRACE_EVENT_FLOW_STEP,
    [FXT_EV_FLOW_END] = TRACE_EVENT_FLOW_END,
};

static void fxt_events_begin(struct trace *trace, struct view_cursor *cursor)
{
    const struct fxt_state *state = trace->format_state;
    cursor->word[0] = state->data_start;
    cursor->word[1] = 0;
    cursor->word[2] = 0;
}

static void add_arg(struct trace_event *event, struct trace_event_scratch *scratch, const struct fxt_arg *a)
{
    const char *key = a->name.data;
    size_t len = a->name.len;
    double d;
    switch (a->type) {
    case FXT_ARG_I32: case FXT_ARG_I64: trace_event_add_int(event, scratch, key, len, (int64_t)a->value); break;
    case FXT_ARG_U32: case FXT_ARG_U64: case FXT_ARG_KOID:
        trace_event_add_uint(event, scratch, key, len, a->value);
        break;
    case FXT_ARG_POINTER: trace_event_add_pointer(event, scratch, key, len, a->value); break;
    case FXT_ARG_DOUBLE:
        memcpy(&d, &a->value, sizeof d);
        trace_event_add_double(event, scratch, key, len, d);
        break;
    case FXT_ARG_STRING: trace_event_add_string(event, scratch, key, len, a->text.data, a->text.len); break;
    case FXT_ARG_BOOL: trace_event_add_bool(event, scratch, key, len, a->value != 0); break;
    default: trace_event_add_null(event, scratch, key, len); break;
    }
}

static void fill_event(const struct fxt_record *rec, uint64_t seq, struct trace_event *event,
                       struct trace_event_scratch *scratch)
{
    trace_event_start(event, seq, kinds[rec->event_type]);
    event->has_ts = TRUE;
    event->ts = rec->ts_ns;
    event->pid = (int64_t)rec->pid;
    event->tid = (int64_t)rec->tid;
    trace_event_set_cat(event, scratch, rec->category.data, rec->category.len);
    trace_event_set_name(event, scratch, rec->name.data, rec->name.len);
    if (rec->event_type == FXT_EV_DUR_COMPLETE) {
        event->has_dur = TRUE;
        event->dur = rec->extra_ns >= rec->ts_ns ? rec->extra_ns - rec->ts_ns : 0;
    } else if (rec->event_type != FXT_EV_DUR_BEGIN && rec->event_type != FXT_EV_DUR_END &&
               rec->event_type != FXT_EV_INSTANT) {
        event->has_id = TRUE;
        event->id = rec->extra;
    }
    for (uint32_t i = 0; i < rec->arg_count; i++)
        add_arg(event, scratch, &rec->args[i]);
}

void fxt_note_span_event(struct fxt_state *state, struct fxt_thread *thread, const struct fxt_record *rec)
{
    if (rec->type != FXT_EVENT)
        return;
    if (rec->event_type == FXT_EV_DUR_BEGIN) {
        thread->open_begins++;
    } else if (rec->event_type == FXT_EV_DUR_END) {
        if (thread->open_begins > 0) {
            thread->open_begins--;
        } else if (state->unmatched_ends->len < LIMIT_FXT_UNMATCHED_ENDS) {
            g_array_append_val(state->unmatched_ends, rec->offset);
        } else if (!state->unmatched_ends_full) {
            trace_error(state->trace, "fxt", rec->offset,
                        "more than %u duration ends with no begin: later ones are not told apart in events.jsonl",
                        LIMIT_FXT_UNMATCHED_ENDS);
            state->unmatched_ends_full = TRUE;
        }
    }
}

static gboolean unmatched_end(const struct fxt_state *state, uint64_t offset)
{
    const GArray *ends = state->unmatched_ends;
    guint lo = 0, hi = ends->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        uint64_t at = g_array_index(ends, uint64_t, mid);
        if (at == offset)
            return TRUE;
        if (at < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return FALSE;
}

/* Whether the begin of thread (pid, tid) before `offset` has its end: the
 * thread's later begins and ends counted, at most LIMIT_FXT_SPAN_SCAN of
 * its events read. */
static gboolean begin_ends(const struct fxt_state *state, uint64_t pid, uint64_t tid, uint64_t offset)
{
    char key[48];
    g_snprintf(key, sizeof key, "%" PRIu64 "/%" PRIu64, pid, tid);
    guint slot = GPOINTER_TO_UINT(g_hash_table_lookup(state->thread_by_koids, key));
    if (slot == 0)
        return FALSE;
    const struct fxt_thread *thread = g_ptr_array_index(state->threads, slot - 1);
    struct stream_cursor reader;
    uint8_t *buf = NULL;
    struct fxt_record rec;
    stream_cursor_init(&reader, state->stream, state->data_start);
    uint64_t nesting = 1;
    gboolean found = FALSE;
    for (uint32_t seen = 0; seen < LIMIT_FXT_SPAN_SCAN;) {
        offset = fxt_thread_skip(thread, offset);
        if (offset == UINT64_MAX)
            break;
        uint64_t next = offset;
        enum fxt_read_result res = fxt_read_record_brief(state, &reader, offset, &buf, &rec, &next);
        if (res == FXT_READ_END || res == FXT_READ_BAD_HEADER)
            break;
        offset = next;
        if (res != FXT_READ_OK || rec.unknown || rec.type != FXT_EVENT || rec.pid != pid || rec.tid != tid)
            continue;
        seen++;
        if (rec.event_type == FXT_EV_DUR_BEGIN)
            nesting++;
        else if (rec.event_type == FXT_EV_DUR_END && --nesting == 0) {
            found = TRUE;
            break;
        }
    }
    stream_cursor_finish(&reader);
    g_free(buf);
    return found;
}

/* Skips records that are not events (metadata, strings, logs, scheduling,
 * unreadable bodies the index pass reported) inside one call. */
static enum view_step fxt_events_next(struct trace *trace, struct view_cursor *cursor, struct trace_event *event,
                                      struct trace_event_scratch *scratch)
{
    const struct fxt_state *state = trace->format_state;
    struct stream_cursor reader;
    uint8_t *buf = NULL;
    struct fxt_record rec;
    stream_cursor_init(&reader, state->stream, state->data_start);
    enum view_step step = VIEW_END;
    for (;;) {
        uint64_t offset = cursor->word[0], next = offset;
        const char *why = NULL;
        enum fxt_read_result res = fxt_read_record(state, &reader, offset, &buf, &rec, &next, &why);
        if (res == FXT_READ_END)
            break;
        if (res == FXT_READ_BAD_HEADER) {
            trace_error(trace, "fxt", offset, "%s (while rendering events)", why);
            step = VIEW_ERROR;
            break;
        }
        cursor->word[0] = next;
        if (res != FXT_READ_OK || rec.unknown || rec.type != FXT_EVENT || rec.event_type >= FXT_EV_COUNT)
            continue;
        fill_event(&rec, cursor->word[1]++, event, scratch);
        if ((rec.event_type == FXT_EV_DUR_BEGIN && !begin_ends(state, rec.pid, rec.tid, next)) ||
            (rec.event_type == FXT_EV_DUR_END && unmatched_end(state, offset))) {
            event->kind = TRACE_EVENT_INSTANT;
            trace_event_add_bool(event, scratch, "unmatched", 9, TRUE);
        }
        step = VIEW_RECORD;
        break;
    }
    stream_cursor_finish(&reader);
    g_free(buf);
    return step;
}

static gboolean append_pool_name(const struct fxt_state *state, GHashTable *names, uint64_t koid, GString *out)
{
    gpointer id;
    if (!g_hash_table_lookup_extended(names, &koid, NULL, &id))
        return FALSE;
    struct fxt_str s = fxt_pool_string(state, GPOINTER_TO_UINT(id));
    if (s.len == 0)
        return FALSE;
    g_string_append_len(out, s.data, s.len);
    return TRUE;
}

static gboolean fxt_thread_name(struct trace *trace, int64_t pid, int64_t tid, GString *out)
{
    (void)pid;
    const struct fxt_state *state = trace->format_state;
    return append_pool_name(state, state->thread_names, (uint64_t)tid, out);
}

static gboolean fxt_process_name(struct trace *trace, int64_t pid, GString *out)
{
    const struct fxt_state *state = trace->format_state;
    return append_pool_name(state, state->process_names, (uint64_t)pid, out);
}

static void fxt_threads(struct trace *trace, void (*fn)(void *, int64_t, int64_t, const char *), void *data)
{
    const struct fxt_state *state = trace->format_state;
    for (guint i = 0; i < state->threads->len; i++) {
        const struct fxt_thread *t = g_ptr_array_index(state->threads, i);
        if (t->dir_name)
            fn(data, (int64_t)t->pid, (int64_t)t->tid, t->dir_name);
    }
}

const struct trace_event_iterator fxt_event_iterator = {
    .begin = fxt_events_begin,
    .next = fxt_events_next,
    .thread_name = fxt_thread_name,
    .process_name = fxt_process_name,
    .threads = fxt_threads,
    .clock = "ns (ticks converted with each provider's initialization record)",
};
