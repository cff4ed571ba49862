/* LLVM XRay logs (FDR v1-v5, basic v1-v3): shared state of the decoder. */
#ifndef TRACEFS_XRAY_FORMAT_H
#define TRACEFS_XRAY_FORMAT_H

#include <glib.h>
#include <stdint.h>
#include "format.h"
#include "stream.h"
#include "thread_value.h"
#include "trace.h"
#include "view.h"

struct saved_writer;

enum xray_kind {
    XRAY_ENTER = 0,
    XRAY_EXIT = 1,
    XRAY_TAIL_EXIT = 2,
    XRAY_ENTER_ARG = 3,
    XRAY_CUSTOM = 4,
    XRAY_TYPED = 5,
};

struct xray_header {
    uint16_t version;
    uint16_t type;            /* 0 basic, 1 FDR */
    uint32_t bitfield;
    uint64_t cycle_frequency;
    uint64_t buffer_size;     /* FDR: bytes 16..23 */
};

/* One decoded record, whatever the log type. */
struct xray_record {
    enum xray_kind kind;
    uint32_t func_id;         /* for events: the thread's previous function (stale, as llvm shows it) */
    uint16_t cpu;
    uint32_t thread;          /* index into state->threads */
    uint64_t tsc;
    uint64_t offset;          /* of the record in the log */
    gboolean has_arg;
    uint64_t arg;
    uint64_t payload_offset;  /* custom/typed events */
    uint32_t payload_size;
    uint16_t event_type;
};

/* Where a run stands: the next byte to decode and the decoder state there.
 * Positions are the merge's checkpoints, so they are kept small. */
struct xray_position {
    uint64_t offset;          /* next byte to decode, inside segment */
    uint64_t tsc;             /* FDR: the latest TSC (base of the next delta) */
    uint32_t left;            /* records of the run still to come */
    uint32_t segment;         /* index into state->segments */
    uint32_t last_func;       /* the thread's previous function (events show it) */
    uint16_t cpu;
    uint16_t pad;
};

/* A stretch of one thread's records inside one buffer (basic logs: a stretch
 * of consecutive records of one thread).  A thread's segments are chained
 * in file order: its records, in llvm's order before the sort. */
struct xray_segment {
    uint64_t offset;          /* first record */
    uint64_t end;             /* where the index pass stopped decoding it */
    uint64_t tsc;             /* FDR: the latest TSC at offset */
    uint32_t thread;
    uint32_t next;            /* the thread's next segment, or UINT32_MAX */
    uint16_t cpu;             /* FDR: the buffer's CPU at offset */
    uint16_t pad[3];
};

/* A run: records of one thread, in its order, whose TSCs never decrease.
 * A thread is one run unless its TSC went back (wrap, migration). */
struct xray_run {
    struct xray_position start;
    uint32_t thread;
    uint32_t pad;
};

struct xray_thread {
    int32_t tid;
    int32_t pid;
    uint64_t records;
    uint64_t calls;
    uint64_t first_tsc, last_tsc;
    uint32_t first_run, run_count;     /* its runs: contiguous in state->runs */
    uint64_t first_checkpoint;         /* into state->thread_checkpoints (positions) */
    uint64_t spacing;                  /* records between its checkpoints */
};

struct xray_call {
    uint64_t start_tsc;
    uint64_t end_tsc;
    uint64_t enter_offset;    /* the entry record in the log */
    uint32_t func_id;
    uint32_t depth;
    uint32_t thread;
    uint32_t enter_kind;
};

struct xray_function_stats {
    uint32_t func_id;
    uint64_t count;
    double min, median, p90, p99, max, sum;   /* seconds */
    uint64_t first_interval;  /* into state->function_intervals; UINT64_MAX: every interval */
    uint64_t interval_count;
};

/* A call open at a checkpoint: the views learn its end from here. */
#define XRAY_CALL_OPEN UINT64_MAX
struct xray_long_call {
    uint64_t end_tsc;         /* XRAY_CALL_OPEN: it never completed */
    uint32_t func_id;
    uint32_t parent;          /* the frame below it, or UINT32_MAX */
};

struct xray_stack_node {
    uint32_t func_id;
    uint32_t parent;          /* UINT32_MAX for a root */
};

struct xray_symbols;
struct xray_yaml_labels;

struct xray_state {
    struct trace *trace;
    struct stream *stream;
    struct xray_header header;
    GArray *threads;          /* struct xray_thread */
    GArray *segments;         /* struct xray_segment, in file order */
    GArray *runs;             /* struct xray_run, grouped by thread */
    uint64_t records;         /* in all runs */
    uint64_t first_tsc, last_tsc;      /* of the first and last record in time order */
    uint32_t checkpoint_words;/* uint32 words of one global checkpoint */
    GArray *checkpoint_ordinals;       /* guint64: the record each global checkpoint stands before */
    GArray *checkpoints;      /* uint32 words: per checkpoint, every run's position, every thread's chrome
                               * node, every thread's top open call (into long_calls) */
    GArray *long_calls;       /* struct xray_long_call: calls open at some checkpoint */
    GArray *function_intervals;        /* uint32: per function, the checkpoint intervals its calls start in */
    GArray *thread_checkpoints;        /* struct xray_position: per thread, per checkpoint, its runs' positions */
    uint32_t *rank;           /* per thread: llvm's order of threads for equal TSCs (all 0 for basic logs) */
    GHashTable *trie;         /* (parent << 32 | func) -> stack node + 1 */
    uint64_t serial;          /* tells this state from a freed one at the same address */
    uint64_t calls;           /* completed */
    GArray *functions;        /* struct xray_function_stats, by func_id */
    GArray *stack_nodes;      /* struct xray_stack_node */
    GArray *custom_events;    /* guint64 record offsets, in time order */
    GArray *typed_events;     /* guint64 record offsets, in time order */
    struct xray_symbols *symbols;   /* NULL without a binary */
    char *binary_path;        /* absolute path of the binary the names come from */
    struct xray_yaml_labels *yaml_labels;   /* per func id: its events.yaml piece (with a binary) */
    uint64_t unmatched_exits;
};

/* Every array of the state, in the order the saved index holds them; the
 * element sizes (xray_state_new) and load limits (xray_load) are tables in
 * the same order, their lengths checked against it when compiled. */
#define XRAY_STATE_ARRAYS(state)                                                                               \
    { &(state)->threads, &(state)->segments, &(state)->runs, &(state)->checkpoint_ordinals,                    \
      &(state)->checkpoints, &(state)->thread_checkpoints, &(state)->long_calls, &(state)->functions,         \
      &(state)->function_intervals, &(state)->stack_nodes, &(state)->custom_events, &(state)->typed_events }

/* uint32 words of a position in a global checkpoint (state->checkpoints). */
#define XRAY_POSITION_WORDS (sizeof(struct xray_position) / sizeof(uint32_t))

/* xray_scan.c: the index pass over the records: segments and runs. */
void xray_scan(struct xray_state *state);
void xray_rank_threads(struct xray_state *state);

/* xray_decode.c: decodes records again from a position. */
struct xray_reader {
    uint8_t *bytes;
    size_t capacity;
    uint64_t start;           /* stream offset of bytes[0] */
    size_t length;
};
void xray_reader_init(struct xray_reader *reader, size_t capacity);
void xray_reader_free(struct xray_reader *reader);
/* The record at *pos and the position after it; FALSE at the run's end. */
gboolean xray_decode_next(const struct xray_state *state, struct xray_reader *reader, struct xray_position *pos,
                          struct xray_record *out);
/* The argument and payload of a record (they lie beside it in the log). */
gboolean xray_decode_extra(const struct xray_state *state, struct xray_record *record);

/* xray_merge.c: records in llvm's time order, merged from the runs. */
struct xray_merge;
/* A merge of every run (thread UINT32_MAX) or of one thread's, placed
 * before its record number `ordinal`; track_chrome also follows the
 * Chrome export's stack nodes (global merge only).  From a per-thread
 * cache: for the same thread, until its next xray_merge_at. */
struct xray_merge *xray_merge_at(const struct xray_state *state, uint32_t thread, uint64_t ordinal,
                                 gboolean track_chrome);
/* The next record (and its Chrome stack node, UINT32_MAX when none or not
 * tracked); FALSE at the end. */
gboolean xray_merge_next(struct xray_merge *merge, struct xray_record *out, uint32_t *stack_node);
/* The index pass's walk: every record once, in time order, placing
 * checkpoints (the three hooks are required). */
struct xray_build_hooks {
    void (*visit)(struct xray_state *state, const struct xray_record *record, void *data);
    /* Bytes a checkpoint placed now would add beyond its fixed words. */
    uint64_t (*pending_bytes)(const void *data);
    /* At a checkpoint: appends to its words every thread's top open call
     * (into long_calls, or UINT32_MAX). */
    void (*checkpoint)(struct xray_state *state, void *data);
};
void xray_merge_build(struct xray_state *state, const struct xray_build_hooks *hooks, void *data);
uint64_t xray_checkpoint_before(const struct xray_state *state, uint64_t ordinal);
struct xray_merge *xray_merge_interval(const struct xray_state *state, uint32_t thread, uint64_t k, uint64_t *count);
struct xray_merge *xray_merge_checkpoint(const struct xray_state *state, uint64_t k);
void xray_merge_free(struct xray_merge *merge);
void xray_merge_forget(const struct xray_state *state);
/* Enters stack node `id` in state->trie (the Chrome export's lookups). */
void xray_trie_index(struct xray_state *state, uint32_t id);

/* xray_analyze.c: the index pass's walk of the merged records: calls,
 * per-function stats (llvm-xray account's), the Chrome stack trie, event
 * lists, checkpoints with the open calls. */
void xray_analyze(struct xray_state *state);

/* xray_calls.c: calls paired as llvm-xray account pairs them: an exit
 * closes the innermost open frame of its function, frames above it are cut
 * (never complete); beyond LIMIT_XRAY_STACK_DEPTH entries are not tracked. */
struct call_frame {
    uint32_t func_id;
    uint32_t slot;            /* the user's: a collected call, or UINT32_MAX */
    uint32_t long_call;       /* into state->long_calls, or UINT32_MAX */
    uint32_t start_interval;
    uint64_t start_tsc;
};
enum call_step { CALL_OTHER, CALL_PUSHED, CALL_REFUSED, CALL_CLOSED, CALL_UNMATCHED };
/* An exit looks for its function from the top of the stack down.  One
 * whose function is on no frame would look at every frame, so a log of
 * thousands of open frames and as many such exits costs their product;
 * the frames above the first CALL_STACK_SCANNED are therefore counted per
 * function, and an exit of a function none of them holds looks at the
 * first CALL_STACK_SCANNED only.  Stacks that shallow (nearly all) never
 * touch the counts. */
#define CALL_STACK_SCANNED 64u
struct call_stack {
    GArray *frames;           /* struct call_frame, bottom first */
    GHashTable *deep_counts;  /* func id -> its frames at CALL_STACK_SCANNED and above (never 0), or NULL */
};
void xray_call_stack_init(struct call_stack *stack);
void xray_call_stack_clear(struct call_stack *stack);
/* Takes the frames above len out of the counts (for xray_call_stack_truncate). */
void xray_call_stack_uncount(struct call_stack *stack, guint len);
/* Pops frames down to len (every pop goes through here, so the counts stay
 * right).  Frames need no clearing and the stacks are not zero-terminated:
 * g_array_set_size's shrink would cost a few calls for each exit record. */
static inline void xray_call_stack_truncate(struct call_stack *stack, guint len)
{
    if (len >= stack->frames->len)
        return;
    if (stack->frames->len > CALL_STACK_SCANNED)
        xray_call_stack_uncount(stack, len);
    stack->frames->len = len;
}
/* Applies a record to a stack.  CALL_PUSHED: the new frame is on top.
 * CALL_CLOSED: frames[*closed] completed (with frames above it cut); the
 * caller looks at them, then truncates to *closed. */
enum call_step xray_call_step(struct call_stack *stack, const struct xray_record *r, guint *closed);
/* Thread t's stack at global checkpoint k (as xray_checkpoint_stack). */
void xray_call_stack_at_checkpoint(const struct xray_state *state, uint64_t k, uint32_t thread,
                                   struct call_stack *stack);
/* The open frames of thread t at global checkpoint k, bottom first (slot and
 * start unknown: UINT32_MAX, 0). */
void xray_checkpoint_stack(const struct xray_state *state, uint64_t k, uint32_t thread, GArray *frames);
/* Where long call l completes; XRAY_CALL_OPEN: never, or no such call. */
static inline uint64_t xray_long_call_end(const struct xray_state *state, uint32_t l)
{
    return l < state->long_calls->len ? g_array_index(state->long_calls, struct xray_long_call, l).end_tsc
                                      : XRAY_CALL_OPEN;
}
/* The completed calls that start in global checkpoint interval k: thread
 * t's, or (thread UINT32_MAX) every thread's calls of func_id; in start
 * order.  From a per-thread cache: valid until the thread's next call. */
const GArray *xray_interval_calls(const struct xray_state *state, uint32_t thread, uint32_t func_id, uint64_t k);
/* Each thread's calls in its order (for the index pass's stats). */
typedef void (*xray_duration_fn)(uint32_t func_id, uint64_t duration, void *data);
/* Every completed call's duration, thread by thread, on up to `walkers`
 * threads at once: fn is called concurrently, in no set order. */
void xray_walk_durations(const struct xray_state *state, unsigned walkers, xray_duration_fn fn, void *data);

/* xray_symbols.c */
struct xray_symbols *xray_symbols_load(struct trace *trace, const char *path);
void xray_symbols_free(struct xray_symbols *symbols);
/* The demangled symbol of a function id, or NULL (also when there are no symbols). */
const char *xray_symbols_name(const struct xray_symbols *symbols, int32_t func_id);
/* The function's symbol, else its id in decimal (symbol names hold no
 * newline: checked when loaded). */
void xray_append_function_name(const struct xray_state *state, uint32_t func_id, GString *out);
uint32_t xray_symbols_function_count(const struct xray_symbols *symbols);
void xray_function_label(const struct xray_state *state, uint32_t func_id, GString *out);

/* xray_render.c */
uint64_t xray_tsc_ns(const struct xray_state *state, uint64_t tsc);
/* The process id llvm-xray shows for a thread's records. */
uint32_t xray_shown_pid(const struct xray_state *state, const struct xray_thread *thread);
const char *xray_kind_name(enum xray_kind kind);
void xray_render_yaml_header(const struct xray_state *state, GString *out);
void xray_render_yaml_record(const struct xray_state *state, const struct xray_record *record, GString *out);
void xray_render_event_line(const struct xray_state *state, const struct xray_record *record,
                            gboolean with_thread, GString *out);
void xray_yaml_scalar(GString *out, const char *s, size_t len);
void xray_prepare_labels(struct xray_state *state);
void xray_free_labels(struct xray_yaml_labels *labels);
void xray_prepare_thread_labels(struct xray_state *state);

/* xray_events.c: the common events (engine/trace_event.h) */
extern const struct trace_event_iterator xray_event_iterator;

/* xray_views.c: the view operations of the tree (view->context = the state) */
extern const struct view_ops xray_yaml_ops;
extern const struct view_ops xray_events_ops;            /* arg0 = thread, or UINT32_MAX: every thread's */
extern const struct view_ops xray_thread_calls_ops;      /* arg0 = thread, arg2 = 1: the stack layout */
extern const struct view_ops xray_function_calls_ops;    /* arg0 = index into state->functions */
extern const struct view_ops xray_trace_event_ops;
/* Where views of every record in time order may be cut: word[0] = shift +
 * a record number at one of the merge's global checkpoints (the events
 * views use them, and the common files through the event iterator). */
uint32_t xray_global_cut_points(const struct xray_state *state, uint64_t shift, struct view_cursor *cursors,
                                uint32_t max);

/* xray_tree.c */
void xray_build_tree(struct trace *trace);

/* xray_persist.c: saving and loading the side tables (struct format's
 * save/load) */
int xray_save(struct trace *trace, struct saved_writer *out);
int xray_load(struct trace *trace, const uint8_t *data, size_t size);

/* xray.c: a state with the header read and the symbols loaded (NULL after
 * trace_fail). */
struct xray_state *xray_state_new(struct trace *trace);

#endif
