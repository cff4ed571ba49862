/* Fuchsia trace format (FXT): shared declarations of the decoder.
 *
 * The index pass records, for every string, thread, provider and
 * initialization record, *where* it was registered.  Any record can then be
 * decoded alone from its file offset: its provider, strings, threads and
 * tick rate are the registrations in force at that offset (binary search).
 * So every view's cursor is just a file offset and no per-event memory is
 * kept. */
#ifndef TRACEFS_FXT_H
#define TRACEFS_FXT_H

#include <glib.h>
#include <stdint.h>
#include "stream.h"
#include "tree.h"
#include "view.h"

struct trace;
struct saved_writer;

/* The trace's clock, as info.json and the common files tell it. */
#define FXT_CLOCK "ns (ticks converted with each provider's initialization record)"

/* The magic-number record as one word: little-endian writers put it as
 * 10 00 04 46 78 54 16 00, big-endian ones reversed. */
#define FXT_MAGIC_WORD UINT64_C(0x0016547846040010)

enum fxt_record_type {
    FXT_METADATA = 0, FXT_INIT = 1, FXT_STRING = 2, FXT_THREAD = 3, FXT_EVENT = 4,
    FXT_BLOB = 5, FXT_UOBJECT = 6, FXT_KOBJECT = 7, FXT_SCHED = 8, FXT_LOG = 9,
    FXT_LARGE = 15,
};

enum fxt_event_type {
    FXT_EV_INSTANT, FXT_EV_COUNTER, FXT_EV_DUR_BEGIN, FXT_EV_DUR_END, FXT_EV_DUR_COMPLETE,
    FXT_EV_ASYNC_BEGIN, FXT_EV_ASYNC_INSTANT, FXT_EV_ASYNC_END,
    FXT_EV_FLOW_BEGIN, FXT_EV_FLOW_STEP, FXT_EV_FLOW_END, FXT_EV_COUNT,
};

enum fxt_arg_type {
    FXT_ARG_NULL, FXT_ARG_I32, FXT_ARG_U32, FXT_ARG_I64, FXT_ARG_U64, FXT_ARG_DOUBLE,
    FXT_ARG_STRING, FXT_ARG_POINTER, FXT_ARG_KOID, FXT_ARG_BOOL,
};

/* Scheduling record sub-types (bits 60..63 of a type-8 record). */
enum fxt_sched_type { FXT_SCHED_LEGACY = 0, FXT_SCHED_SWITCH = 1, FXT_SCHED_WAKEUP = 2 };

struct fxt_str {
    const char *data;
    uint32_t len;
};

struct fxt_arg {
    uint8_t type;            /* enum fxt_arg_type, or another value: unknown (skipped) */
    struct fxt_str name;
    struct fxt_str text;     /* string value */
    uint64_t value;          /* integer bits: i32/i64 sign-extended, double's bits, bool 0/1 */
};

/* One decoded record.  Strings point into the record bytes or into the
 * string pool; both live as long as the record. */
struct fxt_record {
    uint64_t offset;
    uint8_t type;            /* enum fxt_record_type */
    uint32_t provider;       /* provider slot in force */
    int64_t provider_id;     /* its id, -1 for records before any provider record */
    uint64_t ticks, ts_ns;   /* timestamp (events, sched, log) */
    uint64_t pid, tid;       /* the thread (events, log); the process (uobject) */
    uint8_t event_type;
    uint8_t sub_type;        /* metadata type, sched sub-type, kobject type */
    struct fxt_str category, name;   /* name also: blob, kobject, uobject, provider name */
    uint64_t extra;          /* counter/correlation id, end ticks, koid, pointer */
    uint64_t extra_ns;       /* complete event: end time in ns */
    /* Scheduling records. */
    uint32_t cpu, out_state, out_prio, in_prio;
    uint64_t out_pid, out_tid, in_pid, in_tid;
    /* Payloads: blob bytes, log message. */
    const uint8_t *payload;
    uint32_t payload_len;
    uint32_t payload_offset; /* of a blob's payload inside the record */
    /* Set when something was unreadable but the record still decodes
     * (a string or thread index never registered): rendered as a
     * placeholder and reported once by the index pass. */
    const char *warning;
    gboolean unknown;        /* a record type or sub-type skipped by its size */
    gboolean brief;          /* events: only type, time and thread decoded */
    /* Last, so that a record is cleared up to them: the first arg_count are set. */
    uint32_t arg_count;
    struct fxt_arg args[15];
};

/* A registration: value `value` holds from file offset `offset` on. */
struct fxt_reg {
    uint64_t offset;
    uint64_t value;
    uint64_t value2;
};

struct fxt_provider {
    uint32_t id;
    GArray *provider_events;  /* uint32 event ids of provider event records */
    gboolean has_id;         /* FALSE for records before any provider record */
    GString *name;           /* as the trace has it: a NUL in it is kept */
    GArray *ticks;           /* struct fxt_reg: ticks per second */
    uint64_t event_count;
};

struct fxt_thread {
    uint64_t pid, tid;
    char *dir_name;          /* its directory under threads/ */
    uint64_t events, first_ns, last_ns;
    uint64_t open_begins;    /* index pass: duration begins not yet ended */
    GArray *open_offsets;    /* index pass: offsets of the bottom ones of them */
    /* Where its events are: runs of events (struct fxt_reg: first and last
     * event offset, and the common events before the first: its seq)
     * separated by more than FXT_THREAD_RUN_GAP bytes of other records, so
     * a thread's files skip the stretches without its events, and the
     * common files and /events are cut at run starts (fxt_events.c,
     * fxt_views.c).  A run ends after FXT_THREAD_RUN_EVENTS events too, so
     * that a trace of one busy thread can still be cut. */
    GArray *runs;
    uint64_t run_events;     /* index pass: events in its last run */
};
#define FXT_THREAD_RUN_GAP (4u << 10)
#define FXT_THREAD_RUN_EVENTS (16u << 10)

struct fxt_object {
    uint64_t offset;         /* of its record */
    uint64_t id;             /* its koid, or its pointer */
};

struct fxt_counter {
    uint32_t name_string;    /* pool id */
    uint64_t id;
    GArray *columns;         /* uint32 pool ids of argument names */
};

struct fxt_blob {
    uint32_t name_string;
    GArray *segments;        /* struct fxt_reg: file offset, length, stream offset */
    uint64_t size;
};

/* What the index pass counts, saved as it is (fxt_save.c). */
struct fxt_totals {
    uint64_t records[16];            /* by record type */
    uint64_t events[FXT_EV_COUNT];   /* by event type */
    uint64_t unknown_records, bad_records;
    uint64_t first_ns, last_ns;
    uint64_t have_time;              /* 1 once first_ns and last_ns are set */
};

/* What the allocator and a hash table spend per kept item besides its bytes. */
#define FXT_KEPT_OVERHEAD 64u

struct fxt_state {
    struct trace *trace;
    struct stream *stream;
    uint64_t generation;             /* unique to this state in the process */
    gboolean big_endian;
    uint64_t data_start, data_end;   /* records lie in [start, end) */
    /* What the index's tables keep (registrations, threads, objects, the
     * string pool), against limit_table_budget() of the file: past it the
     * index pass stops. */
    uint64_t table_bytes;

    /* Interned strings: id 0 is "", ids are in first-seen order. */
    GPtrArray *pool;                 /* GBytes */
    GHashTable *pool_ids;            /* GBytes -> id + 1 */

    GPtrArray *providers;            /* struct fxt_provider; slot 0 the anonymous one */
    GHashTable *provider_slots;      /* id -> slot + 1 */
    GArray *provider_switches;       /* struct fxt_reg: slot */
    GHashTable *string_regs;         /* (slot << 15 | index) -> GArray of fxt_reg (pool id) */
    GHashTable *thread_regs;         /* (slot << 8 | index) -> GArray of fxt_reg (pid, tid) */

    GPtrArray *threads;              /* struct fxt_thread */
    GHashTable *thread_by_koids;     /* "pid/tid" -> thread + 1 */
    struct fxt_thread *last_thread;  /* index pass: the thread of the last event */
    uint32_t current_provider;       /* index pass: the provider slot in force */
    GPtrArray *counters;             /* struct fxt_counter */
    GHashTable *counter_by_key;      /* "name-id/id" -> counter + 1 */
    GPtrArray *blobs;                /* struct fxt_blob */
    GHashTable *blob_by_name;        /* pool id -> blob + 1 */
    /* struct fxt_object, at most LIMIT_FXT_OBJECT_FILES each: the
     * record's id is kept so that naming the files reads no record (a
     * remount of a trace whose objects are all over it read all of it). */
    GArray *kobjects;
    GArray *uobjects;
    /* Offsets of duration ends with no open begin on their thread (the
     * common events yield them as instants), in file order, at most
     * LIMIT_FXT_UNMATCHED_ENDS. */
    GArray *unmatched_ends;
    gboolean unmatched_ends_full;    /* index pass: the limit was reported */
    /* Offsets of duration begins never ended (yielded as instants), sorted,
     * at most LIMIT_FXT_UNMATCHED_ENDS; open_offsets_held counts the index
     * pass's open_offsets against that bound. */
    GArray *unended_begins;
    uint64_t open_offsets_held;
    GHashTable *cpus;                /* cpu number set */
    GHashTable *process_names;       /* koid -> pool id */
    GHashTable *thread_names;        /* koid -> pool id */

    struct fxt_totals totals;
    gboolean objects_capped;         /* the object limit was reported */
};

/* ---- fxt_tables.c ---- */
struct fxt_state *fxt_state_new(struct trace *trace, struct stream *stream);
/* format.h's close: frees the state. */
void fxt_close(struct trace *trace);
uint32_t fxt_intern(struct fxt_state *state, const char *data, size_t len);
struct fxt_str fxt_pool_string(const struct fxt_state *state, uint32_t id);
/* A provider with no name, ticks or events, in no table yet. */
struct fxt_provider *fxt_provider_new(uint32_t id, gboolean has_id);
/* The slot of provider `id`, a new one if it has none. */
uint32_t fxt_provider_slot(struct fxt_state *state, uint32_t id);
/* The registrations under `key` in a table of them; empty if it had none. */
GArray *fxt_reg_array(GHashTable *regs, uint64_t key);
/* A table's uint64 keys in order, in a new array: its hash is
 * keyed per process, and neither the saved bytes nor the tree's inodes
 * may depend on it (the same trace saves the same index, an index pass
 * and a saved index give the same tree). */
GArray *fxt_sorted_keys(GHashTable *table);
/* The first records of every thread's runs inside the data, in file order,
 * each once (struct fxt_reg as in fxt_thread.runs; free with
 * g_array_free): where the views and the common files may be cut. */
GArray *fxt_run_starts(const struct fxt_state *state);
const struct fxt_reg *fxt_regs_lookup(const struct fxt_state *state, GHashTable *regs, uint64_t key, uint64_t offset);
uint32_t fxt_provider_at(const struct fxt_state *state, uint64_t offset);
/* The common events (fxt_events.c): every readable event record of a known type. */
uint64_t fxt_event_total(const struct fxt_state *state);
uint64_t fxt_ticks_to_ns(const struct fxt_state *state, uint32_t slot, uint64_t offset, uint64_t ticks);

/* ---- fxt_events.c ---- */
/* Index pass: follows the thread's duration nesting, notes unmatched ends. */
void fxt_note_span_event(struct fxt_state *state, struct fxt_thread *thread, const struct fxt_record *rec);
/* After the scan: the begins still open are the ones that never end. */
void fxt_finish_spans(struct fxt_state *state);

/* ---- fxt_record.c ---- */
/* Largest record: 4095 words. */
#define FXT_RECORD_MAX_BYTES (4095u * 8u)
enum fxt_read_result { FXT_READ_OK, FXT_READ_END, FXT_READ_BAD_HEADER, FXT_READ_BAD_BODY };
/* A cursor over the trace's records and, for a record across two chunks,
 * its copy in `buf` (g_malloc'd on first need, FXT_RECORD_MAX_BYTES); what
 * the last read found. */
struct fxt_reader {
    const struct fxt_state *state;
    struct stream_cursor cursor;
    uint8_t *buf;
    uint64_t next;           /* OK, BAD_BODY: the following record's offset */
    const char *why;         /* BAD_HEADER, BAD_BODY: what is wrong */
    struct fxt_record record;
};
void fxt_reader_open(struct fxt_reader *reader, const struct fxt_state *state);
void fxt_reader_close(struct fxt_reader *reader);
/* Reads the record at offset and decodes it into reader->record, in place
 * in the cursor's pinned chunk or in `buf` (valid until the next read).
 * With `brief`, an event record is decoded only up to its thread and
 * timestamp (no strings, no arguments): for scans that only pair spans.
 * BAD_HEADER: no following record can be found. */
enum fxt_read_result fxt_read_record(struct fxt_reader *reader, uint64_t offset, gboolean brief);

/* ---- fxt_render.c ---- */
const char *fxt_event_type_name(unsigned type);
void fxt_render_event_line(const struct fxt_record *record, GString *out);
void fxt_render_event_json(const struct fxt_record *record, GString *out);
/* A name or value as one token (see fxt_render.c), `also` escaped too ('='
 * in keys). */
void fxt_render_token(GString *out, struct fxt_str s, char also);
/* An argument's value as the text lines give it after its '='. */
void fxt_render_arg_value(GString *out, const struct fxt_arg *a);
void fxt_render_sched_line(const struct fxt_record *record, GString *out);
void fxt_render_log_line(const struct fxt_record *record, GString *out);
void fxt_render_object_json(const struct fxt_record *record, GString *out);

/* ---- fxt_views.c: each adds a file over trace->format_state to the tree ---- */
enum fxt_filter {
    FXT_FILTER_EVENTS,          /* every event */
    FXT_FILTER_PROVIDER,        /* arg = provider slot */
    FXT_FILTER_THREAD,          /* arg = thread index */
    FXT_FILTER_LOGS,
    FXT_FILTER_CPU,             /* arg = cpu */
};
void fxt_add_lines(struct trace *trace, node_id dir, const char *name, enum fxt_filter filter, uint64_t arg, gboolean json);
/* The other views, their view.arg as fxt_views.c says: threads/<tid>/spans,
 * counters/<name>.<id>.csv, kobjects/ and uobjects/ files, blobs/<name>. */
extern const struct view_ops fxt_spans_ops, fxt_counter_ops, fxt_object_ops, fxt_blob_ops;
void fxt_add_view(struct trace *trace, node_id dir, const char *name, size_t len, const struct view_ops *ops,
                  uint64_t arg0, uint64_t arg1, uint64_t arg2);

/* ---- fxt_index.c ---- */
int fxt_index(struct trace *trace);
/* ---- fxt_save.c ---- */
int fxt_save(struct trace *trace, struct saved_writer *out);
int fxt_load(struct trace *trace, const uint8_t *data, size_t size);
/* ---- fxt_tree.c ---- */
void fxt_build_tree(struct trace *trace);

#endif
