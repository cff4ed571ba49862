/* A made-up trace for the common-event tests: a deterministic sequence of
 * events over several processes and threads (nested slices, complete
 * events, instants, counters, flows across threads, async operations,
 * every arg type, names that need escaping, a burst of distinct names that
 * overflows the Perfetto interning table), served through a
 * trace_event_iterator, and that iterator wrapped as record views the way
 * the engine will serve events.jsonl, chrome.json and the Perfetto export. */
#ifndef TRACEFS_TEST_SYNTHETIC_EVENTS_H
#define TRACEFS_TEST_SYNTHETIC_EVENTS_H

#include <glib.h>
#include "trace_event.h"
#include "view.h"

struct synthetic_arg {
    char *key;
    enum trace_arg_type type;
    int64_t i;
    uint64_t u;
    double d;
    GBytes *s;
};

struct synthetic_event {
    struct trace_event base;   /* strings and args unset: below */
    GBytes *cat, *name;
    GArray *args;              /* struct synthetic_arg */
};

struct synthetic_trace {
    GArray *events;            /* struct synthetic_event */
    uint64_t fail_at;          /* next() fails here (UINT64_MAX: never) */
};

/* `count` events or a few more (every open slice, flow and async operation
 * is closed at the end).  Same seed, same events. */
struct synthetic_trace *synthetic_trace_new(uint32_t count, uint32_t seed);
void synthetic_trace_free(struct synthetic_trace *trace);

/* The iterator: format_state of `trace` is the synthetic_trace. */
extern const struct trace_event_iterator synthetic_iterator;

/* Record views over the iterator (view.context: the struct trace whose
 * format_state is the synthetic trace; arg[0]: 1 = one thread, arg[1] pid,
 * arg[2] tid). */
extern const struct view_ops synthetic_jsonl_ops;
extern const struct view_ops synthetic_chrome_ops;
extern const struct view_ops synthetic_perfetto_ops;

#endif
