/* sp-rtrace binary logs: shared state of the decoder's files. */
#ifndef TRACEFS_SPRTRACE_H
#define TRACEFS_SPRTRACE_H

#include <glib.h>
#include <stdint.h>
#include "format.h"
#include "tracefs_limits.h"

struct trace;
struct saved_writer;
struct stream;

/* Packet types as the four ASCII bytes read as a little-endian dword. */
#define SPRT_TYPE(a, b, c, d) ((uint32_t)(a) | ((uint32_t)(b) << 8) | ((uint32_t)(c) << 16) | ((uint32_t)(d) << 24))

/* The packets of parse_binary.c. */
#define T_MINF SPRT_TYPE('M', 'I', 'N', 'F')
#define T_MMAP SPRT_TYPE('M', 'M', 'A', 'P')
#define T_CTXR SPRT_TYPE('C', 'T', 'X', 'R')
#define T_CALL SPRT_TYPE('C', 'A', 'L', 'L')
#define T_BTRC SPRT_TYPE('B', 'T', 'R', 'C')
#define T_ARGS SPRT_TYPE('A', 'R', 'G', 'S')
#define T_PINF SPRT_TYPE('P', 'I', 'N', 'F')
#define T_NLIB SPRT_TYPE('N', 'L', 'I', 'B')
#define T_HINF SPRT_TYPE('H', 'I', 'N', 'F')
#define T_OCFG SPRT_TYPE('O', 'C', 'F', 'G')
#define T_RESR SPRT_TYPE('R', 'E', 'S', 'R')
#define T_FILE SPRT_TYPE('F', 'I', 'L', 'E')

enum { SPRT_FREE = 1, SPRT_ALLOC = 2 };
#define SPRT_NONE UINT32_MAX

/* A bounds-checked reader over one packet's data. */
struct sprt_reader {
    const uint8_t *data;
    size_t size;
    size_t pos;
    gboolean big_endian;
    unsigned pointer_size;
    gboolean bad;             /* a field ran past the packet */
};

/* One call as the packets say it: decoded again whenever it is needed
 * (by a walk from the nearest checkpoint), never kept in a table. */
struct sprt_call {
    uint32_t index;           /* 0-based call number */
    uint64_t call_offset;     /* data of the CALL packet */
    uint64_t args_offset;     /* data of its ARGS packet, 0 when none */
    uint64_t bt_offset;       /* data of its BTRC packet, 0 when none */
    uint32_t call_size, args_size, bt_size;
    uint32_t bt_frames;       /* frames of its BTRC packet, 0 when none */
    uint32_t resource;        /* index in resources (postproc's res_index[id] then), or SPRT_NONE */
    uint32_t context;
    int32_t res_size;
    uint64_t res_id;
    uint8_t type;
    uint8_t leak;             /* survives `sp-rtrace-postproc -l` */
    uint8_t pair;             /* its pair code (below): SPRT_PAIR_NONE unless an allocation a later free
                               * ends, or the free that ends one */
};

/* A call's pair code, three bits per call: both calls of a pair carry the
 * same one.  1..SPRT_PAIR_CODED_NAMES: the pair's allocation function is
 * pair_names[code - 1]; SPRT_PAIR_ESCAPED: it is the pair_names entry that
 * pair_escapes gives for the call; SPRT_PAIR_BY_RESOURCE: the pair is
 * named after its resource type (its function is past the names or the
 * escapes kept, or too long). */
#define SPRT_PAIR_BITS 3u
#define SPRT_PAIR_NONE 0u
#define SPRT_PAIR_CODED_NAMES 5u
#define SPRT_PAIR_ESCAPED 6u
#define SPRT_PAIR_BY_RESOURCE 7u
/* Bytes of the pair codes of `calls` calls. */
#define SPRT_PAIR_CODE_BYTES(calls) (((uint64_t)(calls) * SPRT_PAIR_BITS + 7) / 8)

struct sprt_pair_escape { uint32_t call, name; };   /* by call: sorted_compare_u32 */

struct sprt_resource {
    uint32_t id, flags;
    char *type, *desc;
    uint64_t offset;          /* of the RESR packet: calls after it refer to it */
    size_t type_len;          /* see sprt_name_dup */
};

struct sprt_named { uint32_t id; char *name; size_t name_len; };   /* CTXR */
struct sprt_module { uint32_t id, vmajor, vminor; char *name; };
struct sprt_mmap { uint64_t from, to; char *path; };
/* From `from` to the next span's: the first mmap holding it, or none. */
struct sprt_module_span { uint64_t from; uint32_t mmap; };
struct sprt_file { char *name, *path; size_t name_len; };

/* The header tables, in the order of struct sprt_state's. */
enum { SPRT_RESOURCES, SPRT_CONTEXTS, SPRT_MODULES, SPRT_MMAPS, SPRT_FILES, SPRT_TABLES };

/* What the index pass's budget, the saved index and the state's free need
 * of a header table's entries: the offsets of their numbers (saved as
 * uint64 words), of a name kept with its length (see sprt_name_dup) and of
 * a string, in that order. */
#define SPRT_NO_FIELD SIZE_MAX
struct sprt_table {
    uint32_t packet;
    const char *what;                        /* the packet's type, for /errors */
    size_t entry_size;
    struct { size_t at, bytes; } numbers[3];   /* bytes 0: no more */
    size_t name, name_len, string;           /* SPRT_NO_FIELD: none */
};
extern const struct sprt_table sprt_tables[SPRT_TABLES];

/* An entry's string member at `at`, NULL where its table has none. */
static inline char **sprt_entry_string(void *entry, size_t at)
{
    return at == SPRT_NO_FIELD ? NULL : (char **)((char *)entry + at);
}

/* One group of `-lc` output: a backtrace and its leaked calls. */
struct sprt_group {
    uint32_t trace;
    uint32_t first_call;
    int32_t leak_count, leak_size;
    uint32_t hash;            /* postproc's bucket: decides the order of equal sizes */
    uint32_t pad;
    uint64_t list_offset;     /* in group_calls: leak_count - 1 varint gaps after first_call */
};

/* A checkpoint (the CALL packet's header offset) every this many calls. */
#define SPRT_CALLS_PER_CHECKPOINT 64u

/* What the log says of itself (handshake, PINF, HINF, and the lowest and
 * highest block its calls allocate): plain numbers, saved as they are. */
struct sprt_log {
    uint64_t heap_bottom, heap_top, lowest_block, highest_block;
    int32_t heap[10];
    uint32_t pid, secs, usecs;
    int32_t backtrace_depth;
    uint32_t pointer_size;
    uint8_t vmajor, vminor;
    uint8_t big_endian, have_pinfo, have_depth, have_hinfo;
    uint8_t pad[6];
};

struct sprt_state {
    struct stream *stream;
    struct sprt_log log;
    char *arch, *process;
    uint32_t call_count;
    GArray *checkpoints;      /* uint64 per SPRT_CALLS_PER_CHECKPOINT calls */
    GByteArray *leak_bits;    /* one bit per call: survives `-l` */
    GByteArray *pair_codes;   /* SPRT_PAIR_BITS per call, from the low bits up: sprt_call.pair */
    GPtrArray *pair_names;    /* allocation functions in call order, at most LIMIT_SPRT_PAIR_NAMES */
    GArray *pair_escapes;     /* struct sprt_pair_escape by call: the calls of code SPRT_PAIR_ESCAPED */
    uint64_t leak_count;
    union {                   /* the header tables, by name or as sprt_tables describes them */
        GArray *tables[SPRT_TABLES];
        struct {
            GArray *resources;        /* struct sprt_resource */
            GArray *contexts;         /* struct sprt_named */
            GArray *modules;          /* struct sprt_module */
            GArray *mmaps;            /* struct sprt_mmap */
            GArray *files;            /* struct sprt_file */
        };
    };
    /* Per resource id, its last resource, and per resource the one before
     * it with the same id (SPRT_NONE ends): which one a call names. */
    uint32_t res_last[LIMIT_SPRT_RESOURCE_ID + 1];
    GArray *res_previous;     /* uint32 per resource */
    GArray *module_spans;     /* struct sprt_module_span, sorted (sprtrace_modules.c) */
    GArray *groups;           /* struct sprt_group, in `-lc` order */
    GByteArray *group_calls;  /* the groups' leaked calls after the first, as varint gaps */
    uint32_t trace_count;

    /* Environment text of postproc's output (after the first line). */
    GString *environment;
    GString *leak_summary;
};

/* sprtrace_modules.c: the mmap an address is in (the first in the log). */
void sprt_index_modules(struct sprt_state *state);
const struct sprt_mmap *sprt_module_of(const struct sprt_state *state, uint64_t address);

/* sprtrace_packet.c */
void sprt_reader_init(struct sprt_reader *r, const struct sprt_state *state, const uint8_t *data, size_t size);
uint32_t sprt_u32(struct sprt_reader *r);
uint64_t sprt_pointer(struct sprt_reader *r);
/* A length-prefixed string: *text points into the packet (not NUL-terminated),
 * *len stops at the first NUL. */
void sprt_string(struct sprt_reader *r, const char **text, size_t *len);
char *sprt_string_dup(struct sprt_reader *r);
/* A name for the tree: every byte of the field but the NUL padding after
 * the last other byte, NUL-terminated, its length in *len.  As a C string
 * it is what sprt_string_dup gives (what sp-rtrace-postproc prints); the
 * tree's name takes len bytes, so that a NUL inside is escaped, not an end. */
char *sprt_name_dup(struct sprt_reader *r, size_t *len);
int sprt_probe(const struct probe_input *input);

/* The CALL packet's fields (the resource is the index's business). */
struct sprt_call_fields {
    uint32_t res_type, context, timestamp, type;
    const char *name;
    size_t name_len;
    int32_t res_size;
    uint64_t res_id;
};
/* FALSE when the packet is smaller than its fields. */
gboolean sprt_parse_call(const struct sprt_state *state, const uint8_t *data, size_t size,
                         struct sprt_call_fields *f);
/* The packet header read at `offset`: its type and data size.  0, or where
 * the packets end: SPRT_HEAD_SHORT (a 1.x size below its type field),
 * SPRT_HEAD_PAST_END (data past the file or above the packet limit). */
enum { SPRT_HEAD_SHORT = -1, SPRT_HEAD_PAST_END = -2 };
int sprt_packet_header(const struct sprt_state *state, const uint8_t head[8], uint64_t offset, uint64_t end,
                       uint32_t *type, uint32_t *size);

/* sprtrace_index.c */
int sprt_index(struct trace *trace);

/* sprtrace_walk.c: calls decoded again from the checkpoints. */
struct sprt_walk {
    struct trace *trace;
    const struct sprt_state *state;
    uint64_t offset;          /* next packet header */
    uint32_t next;            /* number of the next call */
};
/* A walk started, or resumed from a cursor: at call `next` (or the end), from the
 * packet header at `offset` after the call before it (0: from the
 * checkpoint before call `next`). */
void sprt_walk_resume(struct sprt_walk *walk, struct trace *trace, const struct sprt_state *state, uint64_t next,
                      uint64_t offset);
/* 1: *call is call walk->next - 1; 0: no more calls; -1: a read error (reported). */
int sprt_walk_next(struct sprt_walk *walk, struct sprt_call *call);
/* Call `index` (below call_count), walking on from *walk when it is close
 * behind, else from its checkpoint; FALSE on an error (reported). */
gboolean sprt_walk_to(struct sprt_walk *walk, uint32_t index, struct sprt_call *call);
/* Links resource i, the last one so far, into res_last and res_previous. */
void sprt_link_resource(struct sprt_state *state, uint32_t i);
/* The resource a call's res_type names at `offset` (postproc's res_index then). */
uint32_t sprt_resource_at(const struct sprt_state *state, uint32_t res_type, uint64_t offset);
gboolean sprt_is_leak(const struct sprt_state *state, uint32_t index);
/* The first leaked call at or after `index`, call_count when none: the
 * bits let a walk skip whole checkpoints of freed calls. */
uint32_t sprt_next_leak(const struct sprt_state *state, uint32_t index);
uint8_t sprt_pair_code(const struct sprt_state *state, uint32_t index);
/* How many escapes a log of `file_size` bytes keeps. */
uint32_t sprt_pair_escape_limit(uint64_t file_size);
/* The function a paired call's pair is named after, NULL where it is named
 * after its resource type. */
const char *sprt_pair_name(const struct sprt_state *state, uint32_t index, uint8_t code);
/* The call after *index in a group's list (its gap at *pos of group_calls);
 * FALSE where the list ends early or names no later call of the log. */
gboolean sprt_group_next(const struct sprt_state *state, uint64_t *pos, uint64_t *index);

/* sprtrace_leaks.c: what `-l` keeps (fed call by call by the index pass),
 * its summary, and the `-lc` groups (from a second walk). */
struct sprt_leaks;
struct sprt_leaks *sprt_leaks_new(void);
void sprt_leaks_free(struct sprt_leaks *leaks);
/* name: the call's function (an allocation's names its pair). */
void sprt_leaks_call(struct sprt_leaks *leaks, struct sprt_state *state, const struct sprt_call *call,
                     const char *name, size_t name_len);
void sprt_leaks_summarise(struct sprt_leaks *leaks, struct sprt_state *state);
/* trace_of: the backtrace number of a BTRC packet's data; trace_hash: postproc's bucket of each. */
int sprt_build_groups(struct trace *trace, struct sprt_state *state,
                      uint32_t (*trace_of)(void *context, const uint8_t *data, size_t size), void *context,
                      const GArray *trace_hash);

/* sprtrace_render.c */
void sprt_render_environment(struct sprt_state *state);
/* postproc's first line and the environment after it. */
void sprt_render_header(const struct sprt_state *state, const char *filter, GString *out);
/* Appends postproc's text of a call; FALSE on a read error. */
gboolean sprt_render_call(struct trace *trace, const struct sprt_state *state, const struct sprt_call *call,
                          gboolean with_backtrace, GString *out);
/* A call's frames: postproc's lines after the call, or a JSON array of
 * them mapped to modules; FALSE on a read error. */
gboolean sprt_render_frames(struct trace *trace, const struct sprt_state *state, const struct sprt_call *call,
                            gboolean json, GString *out);
/* Reads and parses a call's CALL packet; f's strings point into the
 * returned buffer, which the caller frees with sprt_packet_free.  NULL on
 * a read error. */
uint8_t *sprt_load_call(struct trace *trace, const struct sprt_state *state, const struct sprt_call *call,
                        struct sprt_call_fields *f);
/* "undefined", "free" or "alloc", as postproc names a call's type. */
const char *sprt_call_type_name(const struct sprt_call *call);
gboolean sprt_render_call_json(struct trace *trace, const struct sprt_state *state, const struct sprt_call *call,
                               GString *out);
/* Reads a packet's data into a buffer the caller frees with
 * sprt_packet_free; NULL (and an error) on failure. */
uint8_t *sprt_read_packet(struct trace *trace, const struct sprt_state *state, uint64_t offset, uint32_t size);
/* Frees what sprt_read_packet or sprt_load_call returned (NULL: nothing). */
void sprt_packet_free(uint8_t *data);

/* sprtrace_events.c: the common events (engine/trace_event.h) */
extern const struct trace_event_iterator sprt_event_iterator;

/* sprtrace_views.c */
void sprt_build_tree(struct trace *trace);

/* The trace's format_state: empty tables, the file's stream (NULL when it cannot be read). */
struct sprt_state *sprt_state_new(struct trace *trace);

/* sprtrace_saved.c: the persistent index hooks (format.h) */
int sprt_save(struct trace *trace, struct saved_writer *out);
int sprt_load(struct trace *trace, const uint8_t *data, size_t size);

#endif
