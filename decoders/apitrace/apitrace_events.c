/* apitrace's common events (engine/trace_event.h): every call, verbose and
 * incomplete ones included, in call-number order, as a complete event on
 * its thread.  apitrace records no time, so the time is made up from the
 * call number: call n at n µs, 1 µs long (docs/events.md).
 * Cursor: word[0] the stream offset of the next enter event (0: the
 * first), word[1] the next call number, word[2] the events yielded (seq). */
#include <inttypes.h>
#include <string.h>
#include "apitrace.h"
#include "trace.h"
#include "trace_event.h"

#define CALL_NS 1000u

static void at_events_begin(struct trace *trace, struct view_cursor *cursor)
{
    (void)trace;
    cursor->word[0] = cursor->word[1] = cursor->word[2] = 0;
}

static enum view_step at_events_next(struct trace *trace, struct view_cursor *cursor, struct trace_event *event,
                                     struct trace_event_scratch *scratch)
{
    struct at_state *state = trace->format_state;
    uint64_t offset = cursor->word[0] ? cursor->word[0] : state->first_event, number = cursor->word[1];
    struct at_reader reader;
    at_reader_init(&reader, state->stream, offset);
    struct at_call call;
    gboolean found = at_next_enter(state, &reader, &offset, &number, &call);
    at_reader_finish(&reader);
    if (!found)
        return VIEW_END;
    cursor->word[0] = offset;
    cursor->word[1] = number;
    trace_event_start(event, cursor->word[2]++, TRACE_EVENT_COMPLETE);
    event->has_ts = event->has_dur = TRUE;
    event->ts = call.number * CALL_NS;
    event->dur = CALL_NS;
    event->pid = 0;
    event->tid = call.thread;
    const char *api = state->api ? state->api : "";
    event->cat = api;
    event->cat_len = strlen(api);
    const struct at_function *sig = call.function < state->functions->len ? state->functions->pdata[call.function]
                                                                          : NULL;
    event->name = sig && sig->name ? sig->name : "";
    event->name_len = sig && sig->name ? sig->name_len : 0;   /* a NUL in it is kept */
    trace_event_add_uint(event, scratch, "call", 4, call.number);
    return VIEW_RECORD;
}

static void at_threads(struct trace *trace, void (*fn)(void *, int64_t, int64_t, const char *), void *data)
{
    const struct at_state *state = trace->format_state;
    for (guint i = 0; i < state->threads->len; i++) {
        uint32_t tid = g_array_index(state->threads, uint32_t, i);
        char dir[16];
        g_snprintf(dir, sizeof dir, "%u", tid);
        fn(data, 0, tid, dir);
    }
}

const struct trace_event_iterator at_event_iterator = {
    .begin = at_events_begin,
    .next = at_events_next,
    .threads = at_threads,
    .clock = "call-number: call n at n us, 1 us long (apitrace records no time)",
};
