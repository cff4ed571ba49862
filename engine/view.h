/* Views: how the content of every file is produced.
 *
 * A file's content is never stored.  It is rendered on demand by a view,
 * which is one of two kinds:
 *
 *  - a record view renders a sequence of records, one at a time, from a
 *    small resumable cursor (`begin` + `next`).  The first time its size is
 *    needed the engine renders it once from start to end, keeping a
 *    checkpoint (output offset -> cursor) every LIMIT_CHECKPOINT_SPACING
 *    bytes, or a multiple of it for a view whose checkpoints would cost
 *    more than trace->view_checkpoint_bytes; a read at any offset then
 *    resumes at the nearest checkpoint.
 *    `next` must be deterministic: the same cursor always yields the same
 *    bytes and the same following cursor, and it must be safe to call from
 *    many threads at once (read the trace only through streams).
 *
 *  - a random-access view knows its size and reads any range directly
 *    (`size` + `read_at`): raw streams, blobs, recorded memory.
 */
#ifndef TRACEFS_VIEW_H
#define TRACEFS_VIEW_H

#include <glib.h>
#include <stdint.h>
#include <sys/types.h>

/* A decoder's resume state: whatever fits in four words (a stream offset, a
 * record ordinal, an index into a side table...). */
struct view_cursor {
    uint64_t word[4];
};

enum view_step {
    VIEW_RECORD = 1,   /* appended one record (possibly zero bytes) and advanced */
    VIEW_END = 0,      /* no more records */
    VIEW_ERROR = -1,   /* the view ends here; the decoder has called trace_error() */
};

struct view;

struct view_ops {
    /* Record views.  `begin` is given a zeroed cursor; NULL leaves it so
     * (a view whose records start at the zero cursor needs none). */
    void (*begin)(const struct view *view, struct view_cursor *cursor);
    enum view_step (*next)(const struct view *view, struct view_cursor *cursor, GString *out);
    /* Optional, record views: where the sizing may cut the view into
     * segments rendered on separate workers.  Fills up to `max` cursors
     * (the starts of segments 1, 2...; segment 0 starts at `begin`) and
     * returns how many.  The cursors must be a pure function of the trace
     * (never of max, which is always LIMIT_VIEW_SEGMENTS - 1), their word[0]
     * strictly increasing, each one a record boundary the view knows
     * without rendering (rr's frame checkpoints, apitrace's call
     * checkpoints); and a segment is the records whose starting cursor has
     * word[0] below the next segment's: rendering from cursor k until
     * word[0] reaches cursor k + 1's gives exactly the bytes between them,
     * so that the segments joined are the view.  (Records must not run
     * across a cursor: a batching `next` ends its batch there.) */
    uint32_t (*segments)(const struct view *view, struct view_cursor *cursors, uint32_t max);
    /* Optional, record views: the sizing is about to render, on the
     * calling thread, the records from `start` until word[0] reaches
     * `stop` (UINT64_MAX: the end), and has done so (`whole`: all of them,
     * with no error and no /errors line), so a view may learn from the
     * records it renders. */
    void (*segment_begin)(const struct view *view, const struct view_cursor *start, uint64_t stop);
    void (*segment_end)(const struct view *view, gboolean whole);
    /* Random-access views: when `size` is set the three above are unused. */
    uint64_t (*size)(const struct view *view);
    /* Returns bytes copied (short only at the end) or a negative errno. */
    ssize_t (*read_at)(const struct view *view, uint64_t offset, void *buf, size_t len);
    /* Content that changes while mounted (/errors, /.tracefs/stats): never
     * cached, sized afresh on every stat, served with direct_io. */
    gboolean dynamic;
};

/* A view is a small value: the ops, the decoder's state and a few
 * arguments (e.g. which thread, which record range). Copied freely. */
struct view {
    const struct view_ops *ops;
    void *context;
    uint64_t arg[3];
};

struct trace;

/* A block (checkpoint to checkpoint) larger than this is never put in the
 * text cache, neither by the sizing nor by read-ahead: it holds a record
 * that big, left to view_read's kept-record slot; the cache's budget is
 * for many blocks, not one record.  Twice the widest spacing the thinning
 * of a view's checkpoints reaches in a 100 MB trace (1 MiB: XRay's
 * events.yaml is 1.8 GB there), since a block is its spacing and the
 * record that crosses it. */
#define VIEW_KEPT_BLOCK_MAX_BYTES (2u << 20)

/* A place in a view: the offset of a record's first byte and the cursor
 * that renders it. */
struct view_checkpoint {
    uint64_t offset;
    struct view_cursor cursor;
};

/* The sizing pass result for one file. */
struct view_index {
    uint64_t size;
    uint32_t checkpoint_count;
    struct view_checkpoint *checkpoints;   /* NULL for files under one spacing */
    gboolean failed;                       /* the view ended early on an error */
    /* Text the sizing pass kept: blocks 0 .. text_blocks - 1 (block k runs
     * from checkpoint k to checkpoint k + 1, the last to the end) are
     * chunks text_owner of text_cache, rendered again if evicted. */
    struct chunk_cache *text_cache;
    uint64_t text_owner;
    uint32_t text_blocks;
    /* Read-ahead (view_read, with a trace's workers): set on first use,
     * updated atomically by concurrent reads.  Blocks read ahead are
     * chunks text_owner of text_cache too (text_cache and text_owner are
     * then set if they were not). */
    uint64_t read_end;           /* where the last read ended */
    uint32_t ahead_next;         /* blocks below it have been scheduled */
    /* Blocks rendered into the text cache, and the CPU time that took on
     * the threads that rendered them: what read-ahead costs per byte. */
    uint64_t rendered_bytes, rendered_cpu_ns;
    /* Where the last rendering read stopped (a record's start and its
     * cursor; offset 0: none), guarded by resume_lock (a spin lock): the
     * next read of a sequential reader starts there, not at its block's
     * checkpoint, so a block bigger than a read is rendered once. */
    int resume_lock;
    struct view_checkpoint resume;
};

/* Renders the view once to size it and place checkpoints: segment by
 * segment (view_ops.segments), on the trace's workers when it has more
 * than one.  A checkpoint starts every non-empty segment and then one
 * follows every LIMIT_CHECKPOINT_SPACING bytes of it; each segment may
 * keep its share (an equal one) of trace->view_checkpoint_bytes, and past
 * it drops every other checkpoint and doubles its spacing.  So the size,
 * the checkpoints and /errors are the same for any thread count, and a
 * view's checkpoints cost a bounded share of the trace's file size however
 * much text it renders to.  The record and text a segment's rendering
 * holds are counted in the trace's text cache while held. */
void view_index_build(struct trace *trace, const struct view *view, struct view_index *out);
/* The same, and the text of the view's first blocks, up to keep_bytes, is
 * put in `cache`: the `cat` or `grep` that usually follows the sizing of a
 * file reads it instead of rendering the view a second time. */
struct chunk_cache;
void view_index_build_keeping_text(struct trace *trace, const struct view *view, struct chunk_cache *cache,
                                   uint64_t keep_bytes, struct view_index *out);
void view_index_clear(struct view_index *index);

/* The cursor before a record view's first record: zeroed, then the
 * view's `begin` if it has one. */
void view_begin(const struct view *view, struct view_cursor *cursor);

/* For view_ops.segments and trace_event_iterator.cuts: cuts a view of
 * `records` records into at most max + 1 segments of
 * LIMIT_SEGMENT_MIN_RECORDS records or more, at candidate cut points
 * 0 < i < candidates evenly spread (none when the view is not worth
 * cutting).  Each chosen i is given to `cut`, which fills *cursor (zeroed)
 * with the cut there or returns FALSE to pass it over; a cut whose word[0]
 * does not rise above the previous one's (or above 0) is dropped too.
 * Fills up to `max` cursors and returns how many. */
typedef gboolean (*view_cut_fn)(const void *context, uint64_t i, struct view_cursor *cursor);
uint32_t view_segment_cuts(uint64_t records, uint64_t candidates, uint32_t max, view_cut_fn cut,
                           const void *context, struct view_cursor *cursors);

/* Bytes of a read left in the text cache instead of copied into the
 * reader's buffer: a FUSE reply sends them from there, so a view's text is
 * copied once (into the kernel) instead of twice.  Each piece is pinned
 * until view_lent_release; a read that runs out of pieces copies. */
#define VIEW_LENT_PIECES 32   /* a 1 MiB request: 16 blocks of 64 KiB, or thinner ones at segment ends */
struct view_lent {
    struct chunk_cache *cache;
    unsigned count;
    struct {
        uint64_t at;              /* its place in the read, from its offset */
        const uint8_t *data;
        size_t len;
        void *pin;
        gboolean spent;           /* released with chunk_cache_release_spent */
    } piece[VIEW_LENT_PIECES];
};

/* Reads len bytes at offset of a sized view.  Returns bytes read (short at
 * the end) or a negative errno (-EIO when the trace no longer yields the
 * bytes it yielded when sized). */
ssize_t view_read(struct trace *trace, const struct view *view, const struct view_index *index,
                  uint64_t offset, void *buf, size_t len);
/* The same, where some of the bytes may be lent instead of written to buf
 * (`lent` zeroed by the caller; view_lent_iov says where each byte is). */
ssize_t view_read_lent(struct trace *trace, const struct view *view, const struct view_index *index,
                       uint64_t offset, void *buf, size_t len, struct view_lent *lent);
/* The read's `len` bytes in order, as at most 2 * VIEW_LENT_PIECES + 1
 * iovecs: the lent pieces, and buf between them.  Returns the count. */
struct iovec;
unsigned view_lent_iov(const struct view_lent *lent, const void *buf, size_t len, struct iovec *iov);
void view_lent_release(struct view_lent *lent);

/* Drops the one big record view_read keeps for the next read (called when
 * a trace closes: its views' contexts may be reused by another). */
void view_forget_kept_record(void);
/* Records served from that slot instead of rendered again (tests). */
uint64_t view_kept_record_hits(void);

/* Renders the whole view into out (tests, `tracefs cat` of small files). */
int view_render_all(struct trace *trace, const struct view *view, GString *out);

/* A view over fixed bytes; `bytes` is referenced by the caller for the
 * view's lifetime (the tree keeps it). */
void view_init_bytes(struct view *view, GBytes *bytes);
/* A random-access view over a byte range of a stream. */
struct stream;
void view_init_stream_range(struct view *view, struct stream *stream, uint64_t offset, uint64_t length);

#endif
