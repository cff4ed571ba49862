/* sp-rtrace binary logs: shared state of the decoder's files. */
#ifndef TRACEFS_SPRTRACE_H
#define TRACEFS_SPRTRACE_H

#include <glib.h>
#include <stdint.h>
#include "format.h"

struct trace;
struct saved_writer;
struct stream;

/* Packet types as the four ASCII bytes read as a little-endian dword. */
#define SPRT_TYPE(a, b, c, d) ((uint32_t)(a) | ((uint32_t)(b) << 8) | ((uint32_t)(c) << 16) | ((uint32_t)(d) << 24))

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

struct sprt_call {
    uint64_t call_offset;     /* data of the CALL packet */
    uint64_t args_offset;     /* data of its ARGS packet, 0 when none */
    uint64_t bt_offset;       /* data of its BTRC packet, 0 when none */
    uint32_t call_size, args_size, bt_size;
    uint32_t trace;           /* unique backtrace number, SPRT_NONE when no BTRC */
    uint32_t next_leak;       /* next leaked call with the same backtrace */
    uint32_t resource;        /* index in resources (postproc's res_index[id] then), or SPRT_NONE */
    uint32_t context;
    int32_t res_size;
    uint8_t type;
    uint8_t leak;             /* survives `sp-rtrace-postproc -l` */
};

struct sprt_resource {
    uint32_t id, flags;
    char *type, *desc;
    uint64_t leak_count;      /* summed as postproc sums them (see leaks) */
    int32_t leak_size;
};

struct sprt_named { uint32_t id; char *name; };   /* CTXR */
struct sprt_module { uint32_t id, vmajor, vminor; char *name; };
struct sprt_mmap { uint64_t from, to; char *path; };
struct sprt_file { char *name, *path; };

/* One group of `-lc` output: a backtrace and its leaked calls. */
struct sprt_group {
    uint32_t trace;
    uint32_t first_call;
    int32_t leak_count, leak_size;
    uint32_t hash;            /* postproc's bucket: decides the order of equal sizes */
};

struct sprt_state {
    struct stream *stream;
    uint8_t vmajor, vminor;
    gboolean big_endian;
    unsigned pointer_size;
    char *arch;

    gboolean have_pinfo;
    uint32_t pid, secs, usecs;
    int32_t backtrace_depth;
    gboolean have_depth;
    char *process;

    gboolean have_hinfo;
    uint64_t heap_bottom, heap_top, lowest_block, highest_block;
    int32_t heap[10];

    GArray *calls;            /* struct sprt_call */
    GArray *resources;        /* struct sprt_resource */
    GArray *contexts;         /* struct sprt_named */
    GArray *modules;          /* struct sprt_module */
    GArray *mmaps;            /* struct sprt_mmap */
    GArray *files;            /* struct sprt_file */
    GArray *groups;           /* struct sprt_group, in `-lc` order */
    uint32_t trace_count;
    GArray *res_ids;          /* uint64 per call, during the index pass only */

    /* Environment text of postproc's output (after the first line). */
    GString *environment;
    GString *leak_summary;
};

/* sprtrace_packet.c */
void sprt_reader_init(struct sprt_reader *r, const struct sprt_state *state, const uint8_t *data, size_t size);
uint32_t sprt_u32(struct sprt_reader *r);
uint64_t sprt_pointer(struct sprt_reader *r);
/* A length-prefixed string: *text points into the packet (not NUL-terminated),
 * *len stops at the first NUL. */
void sprt_string(struct sprt_reader *r, const char **text, size_t *len);
char *sprt_string_dup(struct sprt_reader *r);
int sprt_probe(const struct probe_input *input);

/* sprtrace_index.c */
int sprt_index(struct trace *trace, struct sprt_state *state);
/* sprtrace_leaks.c: marks what `-l` keeps, sums, and orders `-lc` groups
 * (trace_hash: postproc's bucket of each backtrace). */
void sprt_compute_leaks(struct sprt_state *state, const GArray *trace_hash);

/* sprtrace_render.c */
void sprt_render_environment(struct sprt_state *state);
void sprt_render_header_line(const struct sprt_state *state, const char *filter, GString *out);
/* Appends postproc's text of call number `index` (0-based); FALSE on a read error. */
gboolean sprt_render_call(struct trace *trace, const struct sprt_state *state, uint32_t index,
                          gboolean with_backtrace, GString *out);
gboolean sprt_render_frames(struct trace *trace, const struct sprt_state *state, uint32_t index, GString *out);
gboolean sprt_render_call_chrome(struct trace *trace, const struct sprt_state *state, uint32_t index, GString *out);
gboolean sprt_render_call_json(struct trace *trace, const struct sprt_state *state, uint32_t index, GString *out);
/* Reads a packet's data into a new buffer; NULL (and an error) on failure. */
uint8_t *sprt_read_packet(struct trace *trace, const struct sprt_state *state, uint64_t offset, uint32_t size);

/* sprtrace_views.c */
void sprt_build_tree(struct trace *trace, struct sprt_state *state);

struct sprt_state *sprt_state_new(struct trace *trace);   /* empty tables, the file's stream */
void sprt_state_free(struct sprt_state *state);

/* sprtrace_saved.c: the persistent index hooks (format.h) */
int sprt_save(struct trace *trace, struct saved_writer *out);
int sprt_load(struct trace *trace, const uint8_t *data, size_t size);

#endif
