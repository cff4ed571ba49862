/* apitrace: state shared by the decoder's files.
 *
 * The index pass reads the decompressed call stream once and keeps no
 * table per call: a checkpoint every LIMIT_APITRACE_CHECKPOINT_CALLS calls
 * (where an event starts, the counts before it and the calls pending
 * there, which enters and leaves of several threads interleave), the calls
 * never left, the threads, the blobs and the signatures.  Views walk the
 * stream from a checkpoint (apitrace_walk.c) and re-parse each call's
 * events when they render it.  Signatures are defined once in the stream
 * (first use) and kept for the whole trace, as apitrace itself does: an
 * occurrence before a signature's end offset is its definition (skipped
 * when re-parsing), any later one a reference. */
#ifndef TRACEFS_APITRACE_H
#define TRACEFS_APITRACE_H

#include <glib.h>
#include <stdint.h>
#include <string.h>
#include "stream.h"

struct trace;
struct saved_writer;

/* Call flags, numbered as apitrace's pickle output numbers them. */
enum {
    AT_FLAG_FAKE = 1,
    AT_FLAG_NON_REPRODUCIBLE = 2,
    AT_FLAG_NO_SIDE_EFFECTS = 4,
    AT_FLAG_RENDER = 8,
    AT_FLAG_SWAP_RENDERTARGET = 16,
    AT_FLAG_END_FRAME = 32,
    AT_FLAG_INCOMPLETE = 64,
    AT_FLAG_VERBOSE = 128,
};

#define AT_NO_OFFSET UINT64_MAX

struct at_function {
    uint64_t id;
    /* All the name's bytes, NUL-terminated: as a C string it ends at a NUL
     * inside the name, as apitrace prints it; the tree's directory and the
     * JSON take name_len bytes, so that such a name is neither cut nor
     * confused with another. */
    char *name;
    size_t name_len;
    uint32_t arg_count;
    char **arg_names;
    uint64_t def_end;          /* stream offset just after the definition */
    uint32_t flags;            /* derived from the name */
    uint32_t index;            /* position in at_state.functions */
    uint64_t call_count;
};

/* An enum's values (int64_t, kept as their bits) or a bitmask's flags. */
struct at_named_value { char *name; uint64_t value; };
struct at_value_position { uint64_t value; uint32_t position; };
struct at_named_values {
    uint64_t id;
    uint32_t count;
    struct at_named_value *values;
    /* Enums: the values sorted (then by position), so that a value's name
     * is found in log(count) steps, not a scan of thousands (GLenum). */
    struct at_value_position *by_value;
    /* Bitmasks: the flags that can match, in signature order: the first
     * flag of each distinct nonzero value (a later equal flag finds its
     * bits already cleared or never present), at most
     * LIMIT_APITRACE_BITMASK_FLAGS of them, so that a value costs that many
     * tests at most, not one per flag of a signature of thousands. */
    uint64_t *matchable_values;
    uint32_t *matchable_positions;
    uint32_t matchable_count;
    uint64_t def_end;
};

struct at_struct {
    uint64_t id;
    char *name;
    uint32_t count;
    char **member_names;
    uint64_t def_end;
};

struct at_frame {
    uint64_t id;
    char *module, *function, *filename;
    int32_t line;              /* -1 when absent (apitrace keeps an int) */
    int64_t offset;            /* -1 when absent */
    uint64_t def_end;
};

/* One call as a walk found it (nothing of it is kept by the index). */
struct at_call {
    uint64_t number;
    uint64_t enter_offset;     /* offset of the enter event's tag byte */
    uint64_t leave_offset;     /* AT_NO_OFFSET: never left */
    uint32_t function;         /* index into functions */
    uint32_t thread;
    uint32_t flags;            /* everything apitrace's parser derives */
};

/* A call entered and not yet left (24 bytes). */
struct at_pending {
    uint64_t enter_offset;
    uint32_t number;           /* call numbers are < LIMIT_APITRACE_CALLS = 2^32 */
    uint32_t function;
    uint32_t thread;
    uint32_t flags;            /* as known after the enter event */
};

/* Where a walk may start: an event boundary of the stream, what came
 * before it, and the calls pending there (entries [pending_first,
 * pending_first + pending_count) of at_state.checkpoint_pending, by call
 * number; calls never left are not listed: they come from `unfinished`). */
struct at_checkpoint {
    uint64_t offset;           /* stream offset of the next event */
    uint64_t next_call;        /* calls entered before it */
    uint64_t done;             /* calls left before it = dump-order position */
    uint64_t frames;           /* frame-ending calls among those */
    uint64_t pending_first;
    uint64_t pending_count;
};

struct at_blob {
    uint64_t call;
    uint64_t offset;           /* first blob byte in the stream */
    uint64_t size;
    int64_t arg;               /* -1 for the return value */
};

struct at_property { char *name; char *value; };

/* Signatures by id.  Real traces number them from 0 as first used, so an
 * id below LIMIT_APITRACE_DENSE_IDS is found by index (a hash lookup per
 * call would be 4% of rendering); the hash table holds every id (and owns the
 * frames).  Written only by the index pass and the loader, before any
 * reader thread runs. */
struct at_id_map {
    GHashTable *all;
    GPtrArray *dense;
};

void *at_id_map_get(const struct at_id_map *map, uint64_t id);
/* Adds or replaces (the table's value destroy, if any, frees the old). */
void at_id_map_put(struct at_id_map *map, uint64_t id, void *sig);

struct at_state {
    struct trace *trace;
    struct stream *stream;
    const char *container;
    uint64_t version, semantic_version;
    uint64_t first_event;      /* offset of the first event */
    const char *api;

    GPtrArray *properties;     /* struct at_property*, sorted by name */
    GPtrArray *functions;      /* struct at_function*, in definition order */
    struct at_id_map function_ids;  /* id -> struct at_function* */
    struct at_id_map enums, bitmasks, structs, frames;   /* id -> sig */
    GPtrArray *enum_list, *bitmask_list, *struct_list;

    uint64_t call_count;       /* calls entered */
    uint64_t order_count;      /* calls dumped: left ones, then `unfinished` */
    uint64_t frame_count;
    uint64_t events_end;       /* where the index pass stopped (stream end or damage) */
    uint64_t stream_done;      /* calls left before events_end */
    uint64_t stream_frames;    /* frame-ending calls among those */
    uint64_t bulk_bytes;       /* the index pass's at_reader.bulk_bytes: what apitrace's parser reads
                                * with File::read (apitrace-info.json's ActualDataSize for gzip) */
    GArray *checkpoints;       /* struct at_checkpoint, by offset */
    GArray *checkpoint_pending;/* struct at_pending */
    GArray *unfinished;        /* struct at_pending, flags with INCOMPLETE: never left, by number */
    struct at_walk_memo *memo; /* walker states where views stopped (apitrace_walk.c) */
    /* The tables above and the signatures grow with the decoded stream:
     * they share limit_table_budget() of the FILE size.  kept_bytes counts
     * the signatures and properties (strings, pointers, allocator
     * overhead); the index pass adds the arrays' lengths to it. */
    uint64_t table_budget;
    uint64_t kept_bytes;
    gboolean over_budget;      /* something did not fit: the index pass stops there */
    GArray *blobs;             /* struct at_blob, in stream order */
    GArray *threads;           /* uint32_t thread numbers seen, sorted */
};

/* ---- byte reader over the decompressed stream (apitrace_reader.c) ---- */
struct at_reader {
    struct stream_cursor cursor;
    const uint8_t *p, *end;    /* inside the pinned chunk */
    const uint8_t *start;      /* the pinned chunk's first byte (NULL: none) */
    uint64_t base;             /* stream offset of end */
    uint64_t size;             /* stream size */
    int error;                 /* 0, or why the last read failed */
    uint64_t bulk_bytes;       /* bytes taken by at_read and at_skip (string, float, blob payloads) */
};

void at_reader_init(struct at_reader *reader, struct stream *stream, uint64_t offset);
void at_reader_finish(struct at_reader *reader);
/* Inline, as the next few: the walks and renderers call them for every
 * value of every call. */
static inline uint64_t at_reader_offset(const struct at_reader *reader)
{
    return reader->base - (uint64_t)(reader->end - reader->p);
}
void at_reader_seek_outside(struct at_reader *reader, uint64_t offset);
/* A renderer seeks to each call's enter and leave event: inside the pinned
 * chunk that only moves the pointer (a refill per seek was a sixth of
 * rendering `events`). */
static inline void at_reader_seek(struct at_reader *reader, uint64_t offset)
{
    if (reader->start && offset <= reader->base && reader->base - offset <= (uint64_t)(reader->end - reader->start)) {
        reader->p = reader->end - (reader->base - offset);
        return;
    }
    at_reader_seek_outside(reader, offset);
}
int at_getc_after_refill(struct at_reader *reader);
/* The next byte, -1 at end or error.  Inline: the walk reads every byte of
 * the trace through it. */
static inline int at_getc(struct at_reader *reader)
{
    if (reader->p != reader->end)
        return *reader->p++;
    return at_getc_after_refill(reader);
}
/* The next byte without taking it, -1 at end or error. */
static inline int at_peekc(struct at_reader *reader)
{
    int c = at_getc(reader);
    if (c >= 0)
        reader->p--;
    return c;
}
gboolean at_uint_long(struct at_reader *reader, uint64_t *value);
/* A varint (at most 10 bytes, at most 64 bits).  Most numbers are one byte
 * (ids, small counts, enum values), most others two or three (function
 * ids, call numbers): those take no call. */
static inline gboolean at_uint(struct at_reader *reader, uint64_t *value)
{
    const uint8_t *p = reader->p;
    if (reader->end - p >= 3) {
        if (!(p[0] & 0x80)) {
            *value = p[0];
            reader->p = p + 1;
            return TRUE;
        }
        if (!(p[1] & 0x80)) {
            *value = (p[0] & 0x7fu) | (uint64_t)p[1] << 7;
            reader->p = p + 2;
            return TRUE;
        }
        if (!(p[2] & 0x80)) {
            *value = (p[0] & 0x7fu) | (uint64_t)(p[1] & 0x7f) << 7 | (uint64_t)p[2] << 14;
            reader->p = p + 3;
            return TRUE;
        }
    }
    return at_uint_long(reader, value);
}
gboolean at_read_across(struct at_reader *reader, void *buf, size_t length);
/* Copies length bytes (counted in bulk_bytes); FALSE when the stream ends
 * first. */
static inline gboolean at_read(struct at_reader *reader, void *buf, size_t length)
{
    if (length && length <= (size_t)(reader->end - reader->p)) {   /* p may be NULL when length is 0 */
        memcpy(buf, reader->p, length);
        reader->p += length;
        reader->bulk_bytes += length;
        return TRUE;
    }
    return at_read_across(reader, buf, length);
}
gboolean at_skip(struct at_reader *reader, uint64_t length);
/* A length-prefixed string as a new NUL-terminated copy (limited length);
 * its length (NULs inside it included) in *length when not NULL. */
char *at_string(struct at_reader *reader, size_t *length);
/* A tagged signed integer: 0x03 magnitude (negative) or 0x04 value. */
gboolean at_sint(struct at_reader *reader, int64_t *value);
static inline uint64_t at_bytes_left(const struct at_reader *reader)
{
    uint64_t at = at_reader_offset(reader);
    return at < reader->size ? reader->size - at : 0;
}

/* ---- signatures (apitrace_sigs.c) ---- */
/* Reads a signature reference at the reader; defines it when `define` is
 * set and the id is new; skips the definition when the reader is before the
 * signature's end.  NULL on damage (reader->error or unknown id). */
struct at_function *at_function_sig(struct at_state *state, struct at_reader *reader, gboolean define);
/* An enum (signed values; before version 3, exactly one and no count) or
 * a bitmask (unsigned flags). */
struct at_named_values *at_named_values_sig(struct at_state *state, struct at_reader *reader, gboolean define,
                                            gboolean is_enum);
/* Sorts an enum's values for at_enum_name (returns 0), or lists a
 * bitmask's matchable flags (at_named_values.matchable_*) and returns how
 * many distinct nonzero values its flags have, matched or not. */
uint32_t at_index_named_values(struct at_named_values *sig, gboolean is_enum);
/* The name of an enum's first value equal to `value`, or NULL. */
const char *at_enum_name(const struct at_named_values *sig, int64_t value);
struct at_struct *at_struct_sig(struct at_state *state, struct at_reader *reader, gboolean define);
struct at_frame *at_frame_sig(struct at_state *state, struct at_reader *reader, gboolean define);
/* Adds a function defined in the stream or loaded from a saved index: its
 * flags and index, and the trace's API if its name is the first to tell. */
void at_add_function(struct at_state *state, struct at_function *sig);
void at_state_init_sigs(struct at_state *state);
void at_state_free_sigs(struct at_state *state);

/* ---- values (apitrace_values.c) ---- */
enum at_value_style { AT_STYLE_DUMP, AT_STYLE_JSON, AT_STYLE_SKIP };
/* Parses one value at the reader, appending its dump text or JSON to out
 * (out may be NULL for AT_STYLE_SKIP).  `define` as for signatures.
 * `last_int` receives the integer value of a top-level integer/enum (for
 * glGetError).  FALSE on damage (the caller reports it). */
struct at_value_ctx {
    struct at_state *state;
    gboolean define;
    enum at_value_style style;
    uint64_t call;             /* for blob names in JSON */
    int64_t arg;
    int64_t *last_int;         /* NULL when unwanted */
    gboolean *has_int;
    const char *why;           /* set on failure */
};
gboolean at_value(struct at_value_ctx *ctx, struct at_reader *reader, GString *out, unsigned depth);
/* apitrace dump's string quoting. */
void at_dump_string(GString *out, const char *s, size_t len);

/* ---- calls (apitrace_call.c) ---- */
enum at_call_style { AT_CALL_DUMP, AT_CALL_DUMP_VERBOSE, AT_CALL_JSON };
/* What a caller that renders many calls keeps between them
 * (apitrace_details.h). */
struct at_render_scratch;
struct at_render_scratch *at_render_scratch_new(void);
void at_render_scratch_free(struct at_render_scratch *scratch);
/* Renders a call found by a walk as apitrace dump text or JSON; FALSE (with
 * trace_error) on damage. */
gboolean at_render_call(struct at_state *state, const struct at_call *call, enum at_call_style style,
                        struct at_render_scratch *scratch, GString *out);
/* The dump header: "// name = value" per property. */
void at_render_properties(struct at_state *state, GString *out);

/* ---- walks in dump order from a checkpoint (apitrace_walk.c) ---- */
/* Calls entered and not left, by number: a plain array, appended to and
 * dropped from inline (a GArray call per call was 3% of rendering). */
struct at_pending_list {
    struct at_pending *items;
    size_t len, capacity;
};

struct at_walker {
    struct at_state *state;
    struct at_reader reader;
    gboolean reading;          /* reader initialised */
    uint64_t offset;           /* next event */
    uint64_t next_call, done, frames;
    /* Where the walk started: 1 + the checkpoint's number, 0 the first
     * event, WALK_FROM_STREAM_END the calls never left. */
    uint64_t origin;
    struct at_pending_list pending;
    gboolean failed;           /* an event the index pass read no longer reads */
    /* When set, the walk renders each call's values in render_style as it
     * reads its events, for at_render_call with the same scratch
     * (reading them once, not once to walk and again to render). */
    struct at_render_scratch *render;
    enum at_call_style render_style;
};
/* Index of `number` in a by-number array of pending calls, or -1. */
gssize at_find_pending(const struct at_pending *list, size_t count, uint64_t number);
/* Takes over a remembered walker at pos, else seeks. */
void at_walk_resume(struct at_walker *walker, struct at_state *state, uint64_t pos);
/* Remembers the walker for a later at_walk_resume and releases it. */
void at_walk_park(struct at_walker *walker);
void at_walk_finish(struct at_walker *walker);
/* The next call in dump order; FALSE at the end (walker->failed on damage). */
gboolean at_walk_next(struct at_walker *walker, struct at_call *call);
/* The first checkpoint's dump-order position above pos, UINT64_MAX if
 * none: where list views end a batch (their segments start there). */
uint64_t at_checkpoint_after(const struct at_state *state, uint64_t pos);
/* The dump-order position where frame n starts. */
uint64_t at_frame_start(struct at_state *state, uint64_t frame);
/* Call `number` found from its checkpoint; FALSE if there is none. */
gboolean at_find_call(struct at_state *state, uint64_t number, struct at_call *call);
/* Enter events in call-number order (functions/, export/): from
 * (offset, number) to the next enter; FALSE at the end. */
gboolean at_next_enter(struct at_state *state, struct at_reader *reader, uint64_t *offset, uint64_t *number,
                       struct at_call *call);
void at_walk_memo_init(struct at_state *state);
void at_walk_memo_free(struct at_state *state);

/* ---- containers, for the probe and the index pass (apitrace_container.c) ---- */
enum at_container { AT_CONTAINER_SNAPPY, AT_CONTAINER_GZIP, AT_CONTAINER_ZSTD, AT_CONTAINER_OTHER };
enum at_container at_container_of(const uint8_t *head, size_t size);
/* Whether bytes look like the start of an uncompressed call stream. */
gboolean at_plausible_raw(const uint8_t *head, size_t size);

/* ---- index pass and tree (apitrace_index.c, apitrace_container.c, apitrace_tree.c) ---- */
int at_open_container(struct trace *trace, struct at_state *state);
int at_index_stream(struct at_state *state);
void at_build_tree(struct trace *trace);
void at_sort_blobs(struct at_state *state);
/* /apitrace-info.json: `apitrace info TRACE`'s output (apitrace_tool_info.c). */
void at_add_tool_info(struct at_state *state);
/* The trace's state with empty tables (before a scan or a load). */
struct at_state *at_state_new(struct trace *trace);
/* After the index is known (scanned or loaded): threads sorted, API. */
void at_finish_index(struct at_state *state);
/* Persistent index (apitrace_saved.c). */
int at_save(struct trace *trace, struct saved_writer *out);
int at_load(struct trace *trace, const uint8_t *data, size_t size);

#endif
