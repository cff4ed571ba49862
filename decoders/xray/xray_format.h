/* LLVM XRay logs (FDR v1-v5, basic v1-v3): shared state of the decoder. */
#ifndef TRACEFS_XRAY_FORMAT_H
#define TRACEFS_XRAY_FORMAT_H

#include <glib.h>
#include <stdint.h>
#include "format.h"
#include "stream.h"
#include "trace.h"

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

/* A record in global TSC order: enough to decode it again alone. */
struct xray_ref {
    uint64_t tsc;
    uint64_t offset;
    uint32_t thread;
    uint16_t cpu;
    uint8_t kind;
    uint8_t pad;
    uint32_t func_id;         /* the stale function of events, the function otherwise */
    uint32_t stack_node;      /* chrome export stack frame after this record, or UINT32_MAX */
};

struct xray_thread {
    int32_t tid;
    int32_t pid;
    uint64_t records;
    uint64_t calls;
    uint64_t first_call;      /* index into state->calls of the thread's first call */
    uint64_t first_ref;       /* index into state->refs of the thread's first record */
    uint64_t first_tsc, last_tsc;
};

struct xray_call {
    uint64_t start_tsc;
    uint64_t end_tsc;
    uint64_t enter_ref;       /* index into refs of the entry record */
    uint32_t func_id;
    uint32_t depth;
    uint32_t thread;
    uint32_t pad;
};

struct xray_function_stats {
    uint32_t func_id;
    uint64_t count;
    double min, median, p90, p99, max, sum;   /* seconds */
    uint64_t first_call;      /* index into state->calls_by_function */
};

struct xray_stack_node {
    uint32_t func_id;
    uint32_t parent;          /* UINT32_MAX for a root */
};

struct xray_symbols;

struct xray_state {
    struct trace *trace;
    struct stream *stream;
    struct xray_header header;
    GArray *threads;          /* struct xray_thread */
    GHashTable *thread_ids;   /* (pid << 32 | tid) -> thread index + 1, for the index pass */
    GArray *refs;             /* struct xray_ref, stable-sorted by tsc */
    GArray *calls;            /* struct xray_call, completed calls in start (global TSC) order */
    GArray *next_ref;         /* uint32_t per ref: the thread's next ref, or UINT32_MAX */
    GArray *next_call;        /* uint32_t per call: the thread's next call, or UINT32_MAX */
    GArray *calls_by_function;/* guint64 call indexes, grouped by function, by start */
    GArray *functions;        /* struct xray_function_stats, by func_id */
    GArray *stack_nodes;      /* struct xray_stack_node */
    GArray *custom_events;    /* guint64 ref indexes */
    GArray *typed_events;     /* guint64 ref indexes */
    struct xray_symbols *symbols;   /* NULL without a binary */
    char *binary_path;        /* absolute path of the binary the names come from */
    GPtrArray *yaml_labels;   /* func id - 1 -> the YAML scalar of its symbolized name (with a binary) */
    uint64_t unmatched_exits;
};

/* xray_header.c */
int xray_parse_header(const uint8_t *bytes, size_t size, struct xray_header *out);

/* xray_scan.c: the index pass over the records. */
int xray_scan(struct xray_state *state);

/* xray_decode.c: decodes the record a ref points to. */
gboolean xray_decode_ref(const struct xray_state *state, const struct xray_ref *ref, struct xray_record *out);
uint32_t xray_thread_index(struct xray_state *state, int32_t pid, int32_t tid);

/* xray_analyze.c: calls and the stack trie from the sorted refs; then the
 * thread links, event lists and per-function stats (also after a load). */
void xray_analyze(struct xray_state *state);
void xray_derive(struct xray_state *state);

/* xray_symbols.c */
struct xray_symbols *xray_symbols_load(struct trace *trace, const char *path);
void xray_symbols_free(struct xray_symbols *symbols);
/* The function's name as llvm-xray --symbolize shows it: the demangled
 * symbol, "@(<hex address>)" without one, "#<id>" for an id not in the map. */
void xray_symbols_label(const struct xray_symbols *symbols, int32_t func_id, GString *out);
/* The demangled symbol of a function id, or NULL. */
const char *xray_symbols_name(const struct xray_symbols *symbols, int32_t func_id);
uint32_t xray_symbols_function_count(const struct xray_symbols *symbols);
/* Demangles with the C++ runtime's __cxa_demangle when available. */
char *xray_demangle(const char *name);

/* xray_render.c */
uint64_t xray_tsc_ns(const struct xray_state *state, uint64_t tsc);
/* The process id llvm-xray shows for a thread's records. */
uint32_t xray_shown_pid(const struct xray_state *state, const struct xray_thread *thread);
void xray_function_label(const struct xray_state *state, uint32_t func_id, GString *out);
const char *xray_kind_name(enum xray_kind kind);
void xray_render_yaml_header(const struct xray_state *state, GString *out);
void xray_render_yaml_record(const struct xray_state *state, const struct xray_record *record, GString *out);
void xray_render_event_line(const struct xray_state *state, const struct xray_record *record,
                            gboolean with_thread, GString *out);
void xray_yaml_scalar(GString *out, const char *s, size_t len);
void xray_prepare_labels(struct xray_state *state);

/* xray_views.c */
void xray_build_tree(struct xray_state *state);

#endif
