/* The common event model: what every format yields besides its native
 * text, and what the engine renders for every format (events.jsonl,
 * threads/<tid>/events.jsonl, summary.csv, export/chrome.json,
 * export/trace.perfetto-trace).  docs/events.md describes the schema.
 *
 * A format provides one `struct trace_event_iterator` (begin/next over a
 * resumable cursor, like a record view) as the `events` member of its
 * `struct format`; engine/event_files.c adds the files.  The engine walks it to render the
 * common files, so a sequential read decodes each record once and a read at
 * any offset resumes from a checkpointed cursor. */
#ifndef TRACEFS_TRACE_EVENT_H
#define TRACEFS_TRACE_EVENT_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>
#include "view.h"

enum trace_event_kind {
    TRACE_EVENT_BEGIN,          /* a slice opens on its thread */
    TRACE_EVENT_END,            /* the thread's innermost open slice closes */
    TRACE_EVENT_COMPLETE,       /* a whole slice: ts .. ts + dur */
    TRACE_EVENT_INSTANT,
    TRACE_EVENT_COUNTER,        /* args hold the values (numbers) */
    TRACE_EVENT_FLOW_BEGIN,     /* id links flow_begin, flow_step..., flow_end */
    TRACE_EVENT_FLOW_STEP,
    TRACE_EVENT_FLOW_END,
    TRACE_EVENT_ASYNC_BEGIN,    /* id (with cat) names the async operation */
    TRACE_EVENT_ASYNC_INSTANT,
    TRACE_EVENT_ASYNC_END,
    TRACE_EVENT_KIND_COUNT
};

/* "begin", "end", "complete", "instant", "counter", "flow_begin",
 * "flow_step", "flow_end", "async_begin", "async_instant", "async_end";
 * "unknown" outside the enum. */
const char *trace_event_kind_name(enum trace_event_kind kind);

enum trace_arg_type {
    TRACE_ARG_NULL,
    TRACE_ARG_INT,        /* int64 */
    TRACE_ARG_UINT,       /* uint64 */
    TRACE_ARG_DOUBLE,
    TRACE_ARG_STRING,     /* bytes, not necessarily UTF-8 */
    TRACE_ARG_POINTER,    /* an address: uint64 shown in hex */
    TRACE_ARG_BOOL,
};

struct trace_arg {
    const char *key;
    size_t key_len;
    enum trace_arg_type type;
    union {
        int64_t i;
        uint64_t u;       /* UINT and POINTER */
        double d;
        gboolean b;
        struct {
            const char *data;
            size_t len;
        } s;
    } value;
};

/* One event.  Strings are (pointer, length), not NUL-terminated; they and
 * `args` stay valid until the next call of the iterator with the same
 * scratch (they live in the scratch or in the format's immutable tables). */
struct trace_event {
    uint64_t seq;              /* the record's number in trace order, from 0 */
    gboolean has_ts;           /* FALSE where the format records no time */
    uint64_t ts;               /* ns since the trace's start */
    gboolean has_dur;          /* set for complete events */
    uint64_t dur;              /* ns */
    enum trace_event_kind kind;
    int64_t pid;
    int64_t tid;
    gboolean has_id;           /* flows, async events, counters that have one */
    uint64_t id;
    const char *cat;           /* "" (len 0) where the format has none */
    size_t cat_len;
    const char *name;          /* may be empty for an end */
    size_t name_len;
    const struct trace_arg *args;
    uint32_t arg_count;
};

/* The time the exports place an event at: its ts, or its seq (as ns) where
 * the format records no time (Chrome and Perfetto need a time). */
static inline uint64_t trace_event_time(const struct trace_event *event)
{
    return event->has_ts ? event->ts : event->seq;
}

/* Memory for one event's strings and args, reused from event to event: a
 * steady walk allocates nothing (one block, grown to the largest event). */
struct trace_event_scratch {
    struct trace_arg *args;   /* the current event's, args_capacity of them */
    guint arg_count, args_capacity;
    char *block;              /* strings of the current event */
    size_t used, size;
    GPtrArray *full_blocks;   /* blocks filled earlier in this event */
    size_t full_bytes;        /* what they hold */
    guint args_peak;          /* the most args an event had since the last trim */
};

void trace_event_scratch_init(struct trace_event_scratch *scratch);
void trace_event_scratch_clear(struct trace_event_scratch *scratch);
/* Forgets the previous event (the engine calls it before each `next`). */
void trace_event_scratch_reset(struct trace_event_scratch *scratch);
/* Frees what the scratch holds beyond `keep_bytes` of string block and
 * `keep_args` args, so that a scratch kept between events (one per thread)
 * does not keep the memory of its largest event. */
void trace_event_scratch_trim(struct trace_event_scratch *scratch, size_t keep_bytes, guint keep_args);
/* A copy of `len` bytes valid until the next reset. */
const char *trace_event_scratch_copy(struct trace_event_scratch *scratch, const char *data, size_t len);

/* Starts an event: zeroes it, sets seq and kind, no args. */
void trace_event_start(struct trace_event *event, uint64_t seq, enum trace_event_kind kind);
/* Sets cat / name to copies of the bytes (for bytes the format does not
 * keep: a record in a chunk that is released after `next`). */
void trace_event_set_cat(struct trace_event *event, struct trace_event_scratch *scratch, const char *data,
                         size_t len);
void trace_event_set_name(struct trace_event *event, struct trace_event_scratch *scratch, const char *data,
                          size_t len);
/* Appends an argument; the key and a string value are copied. */
void trace_event_add_int(struct trace_event *event, struct trace_event_scratch *scratch, const char *key,
                         size_t key_len, int64_t value);
void trace_event_add_uint(struct trace_event *event, struct trace_event_scratch *scratch, const char *key,
                          size_t key_len, uint64_t value);
void trace_event_add_double(struct trace_event *event, struct trace_event_scratch *scratch, const char *key,
                            size_t key_len, double value);
void trace_event_add_string(struct trace_event *event, struct trace_event_scratch *scratch, const char *key,
                            size_t key_len, const char *data, size_t len);
void trace_event_add_pointer(struct trace_event *event, struct trace_event_scratch *scratch, const char *key,
                             size_t key_len, uint64_t value);
void trace_event_add_bool(struct trace_event *event, struct trace_event_scratch *scratch, const char *key,
                          size_t key_len, gboolean value);
void trace_event_add_null(struct trace_event *event, struct trace_event_scratch *scratch, const char *key,
                          size_t key_len);

/* The words of a view cursor an iterator may use: word[TRACE_EVENT_CURSOR_WORDS]
 * (the last) belongs to the engine, which keeps there where an export is
 * (before its header, inside, after its trailer).  Every decoder's record
 * cursor fits in three words (rr: frame, events offset, data offset). */
#define TRACE_EVENT_CURSOR_WORDS 3
#define TRACE_EVENT_EXPORT_WORD TRACE_EVENT_CURSOR_WORDS

/* What a format provides (the `events` member of struct format).
 *
 * Contract, checked by the engine's tests on every format:
 *  - `next` is deterministic and thread-safe, as a record view's: the same
 *    cursor always yields the same event and the same following cursor;
 *    it reads the trace only through streams and format_state.
 *  - events come in trace order, seq counting 0, 1, 2 ... one per event;
 *    an event may cover several records (a syscall's entering and exiting
 *    frames as one complete event), then seq numbers events, not records.
 *  - ts never goes backwards on one thread (pid, tid), unless the trace's
 *    own times do (the events keep the trace's order).
 *  - begin/end are balanced per thread: an end closes the thread's latest
 *    open begin; an end with no open begin is yielded as an instant, and a
 *    begin still open at the end of the trace gets an end at the thread's
 *    last time.  Complete events nest inside their enclosing slices.
 *  - VIEW_ERROR after trace_error(): the events end there. */
struct trace;
struct trace_event_iterator;
/* The cursor before the first event: zeroed, then the iterator's `begin`
 * if it has one. */
void trace_event_begin(const struct trace_event_iterator *events, struct trace *trace, struct view_cursor *cursor);

struct trace_event_iterator {
    /* Puts the cursor, given zeroed, before the first event (only words
     * 0..2); NULL: the zero cursor is before the first event. */
    void (*begin)(struct trace *trace, struct view_cursor *cursor);
    /* VIEW_RECORD: *event is filled and the cursor advanced; VIEW_END;
     * VIEW_ERROR.  `scratch` was reset by the caller. */
    enum view_step (*next)(struct trace *trace, struct view_cursor *cursor, struct trace_event *event,
                           struct trace_event_scratch *scratch);
    /* Optional (NULL: no names): appends the name of a thread or process
     * the events name, returns FALSE when it has none.  Perfetto's track
     * descriptors carry them. */
    gboolean (*thread_name)(struct trace *trace, int64_t pid, int64_t tid, GString *out);
    gboolean (*process_name)(struct trace *trace, int64_t pid, GString *out);
    /* Optional (NULL: no per-thread files): calls `fn` for each thread the
     * events name, with the name of its directory under /threads (the
     * format's own, so its native files and threads/<dir>/events.jsonl sit
     * side by side; NULL: the tid in decimal).  From the format's tables,
     * not from a walk. */
    void (*threads)(struct trace *trace, void (*fn)(void *data, int64_t pid, int64_t tid, const char *dir),
                    void *data);
    /* What `ts` counts, for info.json's "clock" (e.g. "ns since the first
     * frame"); NULL: "ns". */
    const char *clock;
    /* Optional (NULL: the common files are sized in one segment): where the
     * sizing may cut the common files (view_ops.segments).  Fills up to
     * `max` cursors (words 0..2, from the index's checkpoints, never from
     * a walk) and returns how many.  They must be a pure function of the
     * trace (never of max), their word[0] strictly increasing and above
     * begin's, each preceded by at least one event; and word[0] must never
     * decrease along a walk, whose first cursor with word[0] at or past a
     * cut's must yield what the cut yields (the same events, the same
     * cursors after them): a segment ends there and the next one starts
     * from the cut. */
    uint32_t (*cuts)(struct trace *trace, struct view_cursor *cursors, uint32_t max);
};

/* Which events a common file shows: all, or one thread's. */
struct trace_event_filter {
    gboolean one_thread;
    int64_t pid;
    int64_t tid;
};

static inline gboolean trace_event_filter_accepts(const struct trace_event_filter *filter,
                                                  const struct trace_event *event)
{
    return !filter || !filter->one_thread || (event->pid == filter->pid && event->tid == filter->tid);
}

#endif
