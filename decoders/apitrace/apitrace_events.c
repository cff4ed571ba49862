/* apitrace's common events (engine/trace_event.h): every call, verbose and
 * incomplete ones included, in call-number order, as a complete event on
 * its thread.  apitrace records no time, so the time is made up from the
 * call number: call n at n µs, 1 µs long (docs/events.md).
 * Cursor: word[0] the next call number (= seq, the events yielded),
 * word[1] the stream offset to read the next enter event from (0: the
 * first).  The common files are cut at call checkpoints: a checkpoint's
 * offset is an enter event's, and the walk reaches that call with only
 * leave events between, so the cursor (its number, its offset) yields what
 * the walk yields from there. */
#include <string.h>
#include "apitrace.h"
#include "trace.h"
#include "trace_event.h"

#define CALL_NS 1000u

static enum view_step at_events_next(struct trace *trace, struct view_cursor *cursor, struct trace_event *event,
                                     struct trace_event_scratch *scratch)
{
    struct at_state *state = trace->format_state;
    uint64_t offset = cursor->word[1] ? cursor->word[1] : state->first_event, number = cursor->word[0];
    struct at_reader reader;
    at_reader_init(&reader, state->stream, offset);
    struct at_call call;
    gboolean found = at_next_enter(state, &reader, &offset, &number, &call);
    at_reader_finish(&reader);
    if (!found)
        return VIEW_END;
    trace_event_start(event, cursor->word[0], TRACE_EVENT_COMPLETE);
    cursor->word[0] = number;
    cursor->word[1] = offset;
    event->has_ts = event->has_dur = TRUE;
    event->ts = call.number * CALL_NS;
    event->dur = CALL_NS;
    event->pid = 0;
    event->tid = call.thread;
    event->cat = state->api;           /* set by at_finish_index */
    event->cat_len = strlen(state->api);
    /* at_next_enter gives the index of the function signature it read. */
    const struct at_function *sig = state->functions->pdata[call.function];
    event->name = sig->name;
    event->name_len = sig->name_len;   /* a NUL in it is kept */
    trace_event_add_uint(event, scratch, "call", 4, call.number);
    return VIEW_RECORD;
}

/* A call checkpoint where the common files may be cut: its offset is an
 * enter event's (view_segment_cuts chooses them evenly). */
static gboolean call_cut(const void *context, uint64_t i, struct view_cursor *cursor)
{
    const struct at_state *state = context;
    const struct at_checkpoint *c = &g_array_index(state->checkpoints, struct at_checkpoint, i);
    if (c->next_call >= state->call_count || c->offset == 0)
        return FALSE;
    cursor->word[0] = c->next_call;
    cursor->word[1] = c->offset;
    return TRUE;
}

static uint32_t at_event_cuts(struct trace *trace, struct view_cursor *cursors, uint32_t max)
{
    const struct at_state *state = trace->format_state;
    return view_segment_cuts(state->call_count, state->checkpoints->len, max, call_cut, state, cursors);
}

static void at_threads(struct trace *trace, void (*fn)(void *, int64_t, int64_t, const char *), void *data)
{
    const struct at_state *state = trace->format_state;
    for (guint i = 0; i < state->threads->len; i++)
        fn(data, 0, g_array_index(state->threads, uint32_t, i), NULL);
}

const struct trace_event_iterator at_event_iterator = {
    .next = at_events_next,
    .threads = at_threads,
    .clock = "call-number: call n at n us, 1 us long (apitrace records no time)",
    .cuts = at_event_cuts,
};
