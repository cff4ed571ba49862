/* The format table: each format plugs in through one of these, in the
 * spirit of libarchive's archive_read_support_format_*.c. */
#ifndef TRACEFS_FORMAT_H
#define TRACEFS_FORMAT_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

struct trace;
struct saved_writer;
struct trace_event_iterator;

struct probe_input {
    const char *path;
    gboolean is_directory;
    int fd;                  /* the file or directory, read-only */
    uint64_t size;           /* file size (0 for a directory) */
    const uint8_t *head;     /* the first bytes of a file (empty for a directory) */
    size_t head_size;        /* up to 4096 */
};

struct format {
    const char *name;          /* "fxt", "apitrace", "rr", "xray", "sp-rtrace" */
    const char *description;
    /* 0 = not this format ... 100 = certain.  Must only look at `input`. */
    int (*probe)(const struct probe_input *input);
    /* The engine (engine/trace.c) runs a format in this order: `index` or
     * `load` fills the format's tables (trace->format_state), then
     * `build_tree` makes the format's part of the tree under TREE_ROOT from
     * those tables alone, then the engine adds the common files.  So the
     * tree is the same whether the tables came from a scan or a saved index.
     *
     * `index` scans the trace through streams into the tables, and creates
     * no tree node.  Return 0, or -1 after trace_fail() when nothing can be
     * mounted.  Damage after a readable prefix is not fatal: trace_error()
     * and mount what was read.  The errors of `index` are saved with the
     * index; those of `build_tree` are made again on every open. */
    int (*index)(struct trace *trace);
    void (*build_tree)(struct trace *trace);
    /* Frees format_state (called also after a failed index or load); the
     * engine then forgets the pointer. */
    void (*close)(struct trace *trace);

    /* Optional persistent index.  `save` appends the tables `index` built to
     * `out` (saved_put_*; big arrays are written later from where they are,
     * so they must not change before `save`'s caller returns, which holds:
     * nothing else runs then); `load` rebuilds the same tables from them
     * without scanning the trace (return -1 to fall back to `index`).
     * The bytes come from a checksummed file whose header names the format
     * and its index_version, but are still checked like trace data; they
     * are a private read-only mapping of that file (read them with
     * saved_reader_init_mapped).  Bump index_version whenever their layout
     * changes: it is the only version check. */
    int (*save)(struct trace *trace, struct saved_writer *out);
    int (*load)(struct trace *trace, const uint8_t *data, size_t size);
    uint32_t index_version;

    /* The common events (engine/trace_event.h), or NULL: the engine builds
     * /events.jsonl, /threads/<dir>/events.jsonl, /summary.csv,
     * /export/chrome.json and /export/trace.perfetto-trace from them. */
    const struct trace_event_iterator *events;
};

/* All compiled-in formats, NULL-terminated, in probe order. */
extern const struct format *const format_table[];

const struct format *format_find(const char *name);
/* "rr, xray, apitrace, fxt, sp-rtrace" */
char *format_names(void);

#endif
