/* FXT's common events (engine/trace_event.h): one per event record, in
 * file order.  Duration begins and ends are paired as threads/<tid>/spans
 * pairs them; a begin that never ends and an end that closes nothing (both
 * noted by the index pass) are instants with `unmatched: true`, so that
 * begins and ends stay balanced.
 * Cursor: word[0] the events yielded (seq), word[1] the next record's
 * offset.  The common files are cut at the starts of threads' runs of
 * events, whose seq the index pass kept: only records that are not events
 * lie between the walk's cursor after the event before and a run's start,
 * so the cut (seq, offset) yields what the walk yields from there. */
#include <string.h>
#include "fxt.h"
#include "sorted_search.h"
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
    cursor->word[1] = state->data_start;
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

/* The index pass follows each thread's nesting as threads/<tid>/spans
 * pairs it (an end closes the latest open begin; an end with none open is
 * unmatched).  It keeps the offsets of the bottom of each thread's stack
 * of open begins, LIMIT_FXT_UNMATCHED_ENDS in all: the begins still open at
 * the end are the bottom of the stack, so they are all known unless more
 * than that many never end. */
void fxt_note_span_event(struct fxt_state *state, struct fxt_thread *thread, const struct fxt_record *rec)
{
    if (rec->type != FXT_EVENT)
        return;
    if (rec->event_type == FXT_EV_DUR_BEGIN) {
        if (!thread->open_offsets)
            thread->open_offsets = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        if (thread->open_offsets->len == thread->open_begins &&
            state->open_offsets_held < LIMIT_FXT_UNMATCHED_ENDS) {
            g_array_append_val(thread->open_offsets, rec->offset);
            state->open_offsets_held++;
        }
        thread->open_begins++;
    } else if (rec->event_type == FXT_EV_DUR_END) {
        if (thread->open_begins > 0) {
            thread->open_begins--;
            if (thread->open_offsets && thread->open_offsets->len > thread->open_begins) {
                g_array_set_size(thread->open_offsets, thread->open_begins);
                state->open_offsets_held--;
            }
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

void fxt_finish_spans(struct fxt_state *state)
{
    gboolean partial = FALSE;
    for (guint i = 0; i < state->threads->len; i++) {
        struct fxt_thread *t = g_ptr_array_index(state->threads, i);
        if (!t->open_offsets)
            continue;
        partial |= t->open_begins > t->open_offsets->len;
        g_array_append_vals(state->unended_begins, t->open_offsets->data, t->open_offsets->len);
        g_clear_pointer(&t->open_offsets, g_array_unref);
    }
    g_array_sort(state->unended_begins, sorted_compare_u64);
    if (partial)
        trace_error(state->trace, "fxt", 0,
                    "more than %u duration begins never end: later ones are not told apart in events.jsonl",
                    LIMIT_FXT_UNMATCHED_ENDS);
}

static gboolean offset_listed(const GArray *offsets, uint64_t offset)
{
    size_t at = sorted_count_below(offsets->data, offsets->len, sizeof(uint64_t), 0, offset);
    return at < offsets->len && g_array_index(offsets, uint64_t, at) == offset;
}

/* Skips records that are not events (metadata, strings, logs, scheduling,
 * unreadable bodies the index pass reported) inside one call. */
static enum view_step fxt_events_next(struct trace *trace, struct view_cursor *cursor, struct trace_event *event,
                                      struct trace_event_scratch *scratch)
{
    const struct fxt_state *state = trace->format_state;
    struct fxt_reader reader;
    const struct fxt_record *rec = &reader.record;
    fxt_reader_open(&reader, state);
    enum view_step step = VIEW_END;
    for (;;) {
        uint64_t offset = cursor->word[1];
        enum fxt_read_result res = fxt_read_record(&reader, offset, FALSE);
        if (res == FXT_READ_END)
            break;
        if (res == FXT_READ_BAD_HEADER) {
            trace_error(trace, "fxt", offset, "%s (while rendering events)", reader.why);
            step = VIEW_ERROR;
            break;
        }
        cursor->word[1] = reader.next;
        if (res != FXT_READ_OK || rec->unknown || rec->type != FXT_EVENT || rec->event_type >= FXT_EV_COUNT)
            continue;
        fill_event(rec, cursor->word[0]++, event, scratch);
        if ((rec->event_type == FXT_EV_DUR_BEGIN && offset_listed(state->unended_begins, offset)) ||
            (rec->event_type == FXT_EV_DUR_END && offset_listed(state->unmatched_ends, offset))) {
            event->kind = TRACE_EVENT_INSTANT;
            trace_event_add_bool(event, scratch, "unmatched", 9, TRUE);
        }
        step = VIEW_RECORD;
        break;
    }
    fxt_reader_close(&reader);
    return step;
}

/* Run starts of every thread in file order, evenly chosen so that a
 * segment covers LIMIT_SEGMENT_MIN_RECORDS events or more
 * (trace_event_iterator.cuts).  Their seqs never fall in file order; a
 * run after no new event (or after none at all) starts no segment. */
static uint32_t fxt_event_cuts(struct trace *trace, struct view_cursor *cursors, uint32_t max)
{
    const struct fxt_state *state = trace->format_state;
    uint64_t events = fxt_event_total(state);
    uint64_t wanted = MIN((uint64_t)max + 1, events / LIMIT_SEGMENT_MIN_RECORDS);
    if (wanted < 2)
        return 0;
    GArray *starts = fxt_run_starts(state);
    uint64_t spacing = events / wanted, next = spacing;
    uint32_t count = 0;
    for (guint i = 0; i < starts->len && count < max; i++) {
        const struct fxt_reg *run = &g_array_index(starts, struct fxt_reg, i);
        if (run->value2 < next || run->value2 >= events)
            continue;
        memset(&cursors[count], 0, sizeof cursors[count]);
        cursors[count].word[0] = run->value2;
        cursors[count].word[1] = run->offset;
        count++;
        next = run->value2 + spacing;
    }
    g_array_free(starts, TRUE);
    return count;
}

/* A koid no record named reads as pool id 0, "": no name, as an empty one. */
static gboolean append_pool_name(const struct fxt_state *state, GHashTable *names, uint64_t koid, GString *out)
{
    struct fxt_str s = fxt_pool_string(state, GPOINTER_TO_UINT(g_hash_table_lookup(names, &koid)));
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
    .cuts = fxt_event_cuts,
    .clock = FXT_CLOCK,
};
