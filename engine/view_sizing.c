/* Sizing a record view (view.h): render it once, segment by segment, to
 * learn its size and place checkpoints; segments run on the trace's
 * workers and are joined by prefix sums. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include "chunk_cache.h"
#include "tracefs_limits.h"
#include "trace.h"
#include "stream.h"
#include "view.h"
#include "workers.h"

/* Blocks of text the sizing hands to the chunk cache, in order from its
 * first (the view's, or in parallel a segment's, kept under the segment's
 * own owner until the join numbers them); the first block not kept ends
 * the keeping. */
struct text_keeper {
    struct chunk_cache *cache;
    uint64_t *pool;         /* bytes all keepers may still keep (shared) */
    uint64_t floor;         /* what this keeper leaves in the pool */
    gboolean keeping;
    uint64_t owner;
    uint32_t blocks;        /* blocks 0 .. blocks - 1 are kept */
    GString *block;         /* the current block's text while keeping; its buffer stays to the segment's end */
};

/* A buffer that held a block of the usual size (a checkpoint's spacing
 * and a record) is kept for the next block; a bigger one is given back. */
#define SPARE_BLOCK_MAX_BYTES (2 * LIMIT_CHECKPOINT_SPACING)

static void free_block(void *block)
{
    g_string_free(block, TRUE);
}

/* Ends the keeping.  The block's buffer stays for the segment's owner to
 * reuse or free (size_one_segment, view_index_build_keeping_text), unless
 * it grew past the usual size. */
static void stop_keeping(struct text_keeper *keeper)
{
    keeper->keeping = FALSE;
    if (keeper->block && keeper->block->allocated_len > SPARE_BLOCK_MAX_BYTES) {
        g_string_free(keeper->block, TRUE);
        keeper->block = NULL;
    } else if (keeper->block) {
        g_string_truncate(keeper->block, 0);
    }
}

/* Takes bytes from the keepers' shared pool, leaving at least `floor`;
 * FALSE when it has fewer. */
static gboolean take_from_pool(uint64_t *pool, uint64_t bytes, uint64_t floor)
{
    uint64_t left = __atomic_load_n(pool, __ATOMIC_RELAXED);
    do {
        if (bytes > left || left - bytes < floor)
            return FALSE;
    } while (!__atomic_compare_exchange_n(pool, &left, left - bytes, TRUE, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return TRUE;
}

/* One segment's rendering: checkpoints relative to its start. */
struct segment {
    struct view_cursor start;
    uint64_t stop;              /* word[0] that ends it; UINT64_MAX: the view's end */
    uint64_t size;
    GArray *checkpoints;        /* struct view_checkpoint */
    uint32_t max_checkpoints;   /* past it the checkpoints are thinned */
    struct trace_error_list errors;   /* its /errors lines, added in segment order */
    gboolean failed;            /* the view ends inside this segment */
    gboolean ended;             /* the view ended (VIEW_END) before the segment's stop */
    uint64_t cpu_ns;            /* CPU time its rendering took */
};

static int copy_kept_block(void *owner, uint64_t chunk_index, uint8_t *out, size_t size)
{
    (void)chunk_index;
    const GString *block = owner;
    if (block->len != size)
        return -EIO;
    memcpy(out, block->str, size);
    return 0;
}

/* Block `index` (numbered in the whole view) is complete: keeps it if it
 * is the next one in order, not empty and within the pool (a block growing
 * past VIEW_KEPT_BLOCK_MAX_BYTES ended the keeping already). */
static void keep_block(struct text_keeper *keeper, uint64_t index)
{
    GString *block = keeper->block;
    if (!keeper->keeping || index != keeper->blocks || block->len == 0 || !take_from_pool(keeper->pool, block->len, keeper->floor)) {
        stop_keeping(keeper);
        return;
    }
    if (keeper->owner == 0)
        keeper->owner = chunk_cache_new_owner(keeper->cache);
    struct chunk chunk;
    void *pin = NULL;
    if (chunk_cache_get(keeper->cache, keeper->owner, index, block->len, copy_kept_block, block, &chunk, &pin) < 0) {
        stop_keeping(keeper);
        return;
    }
    chunk_cache_release(keeper->cache, pin);
    keeper->blocks++;
}

static void add_checkpoint(struct segment *segment, struct text_keeper *keeper, uint64_t first_block,
                           uint64_t offset, const struct view_cursor *cursor)
{
    GArray *checkpoints = segment->checkpoints;
    if (keeper && checkpoints->len > 0 && keeper->keeping) {
        keep_block(keeper, first_block + checkpoints->len - 1);
        if (keeper->block)
            g_string_truncate(keeper->block, 0);
    }
    struct view_checkpoint checkpoint = { offset, *cursor };
    g_array_append_val(checkpoints, checkpoint);
}

/* Keeps every other checkpoint (the first stays: it starts the segment).
 * The kept text was numbered by the checkpoints dropped: it is forgotten
 * and the keeping ends (a view this big keeps a sliver of its text). */
static void thin_checkpoints(struct segment *segment, struct text_keeper *keeper)
{
    GArray *checkpoints = segment->checkpoints;
    guint kept = 0;
    for (guint c = 0; c < checkpoints->len; c += 2)
        g_array_index(checkpoints, struct view_checkpoint, kept++) = g_array_index(checkpoints, struct view_checkpoint, c);
    g_array_set_size(checkpoints, kept);
    if (keeper && keeper->owner != 0)
        chunk_cache_forget_owner(keeper->cache, keeper->owner);
    if (keeper) {
        stop_keeping(keeper);
        keeper->blocks = 0;
    }
}

/* Renders one segment; keeper (NULL: keep nothing) numbers its blocks
 * from first_block.  `cancel` (may be NULL) is polled between records. */
static void render_segment(struct trace *trace, const struct view *view, struct segment *segment,
                           struct text_keeper *keeper, uint64_t first_block, const struct workers *cancel)
{
    segment->checkpoints = g_array_new(FALSE, FALSE, sizeof(struct view_checkpoint));
    trace_errors_defer(&segment->errors);
    GString *record = g_string_sized_new(4096);
    /* The record and the text being kept count in the text cache's
     * budget while held. */
    struct chunk_cache *scratch_cache = trace ? trace->text_cache : NULL;
    uint64_t scratch = 0;
    struct view_cursor cursor = segment->start;
    uint64_t offset = 0, next_mark = 0, counted = 0, spacing = LIMIT_CHECKPOINT_SPACING;
    if (keeper && keeper->keeping && !keeper->block)
        keeper->block = g_string_new(NULL);
    stream_hold_begin();
    if (view->ops->segment_begin)
        view->ops->segment_begin(view, &segment->start, segment->stop);
    for (;;) {
        if (cursor.word[0] >= segment->stop)
            break;
        if (workers_stopping(cancel)) {
            segment->failed = TRUE;
            break;
        }
        if (offset >= next_mark) {
            add_checkpoint(segment, keeper, first_block, offset, &cursor);
            if (segment->checkpoints->len > segment->max_checkpoints) {
                thin_checkpoints(segment, keeper);
                spacing *= 2;
            }
            next_mark = offset + spacing;
            /* For the progress line: once a checkpoint, not once a record. */
            if (trace)
                __atomic_fetch_add(&trace->bytes_sized, (gint64)(offset - counted), __ATOMIC_RELAXED);
            counted = offset;
        }
        g_string_truncate(record, 0);
        enum view_step step = view->ops->next(view, &cursor, record);
        if (step == VIEW_END) {
            /* Before the next segment's start: the view ends here (an
             * export closed after an iterator error), later segments are
             * not part of it. */
            segment->ended = segment->stop != UINT64_MAX;
            break;
        }
        if (step == VIEW_ERROR) {
            segment->failed = TRUE;
            break;
        }
        if (record->len > LIMIT_RECORD_TEXT_BYTES) {
            trace_error(trace, "view", offset, "a record renders to %zu bytes (limit %u); file cut here",
                        record->len, LIMIT_RECORD_TEXT_BYTES);
            segment->failed = TRUE;
            break;
        }
        if (keeper && keeper->keeping && keeper->block->len + record->len > VIEW_KEPT_BLOCK_MAX_BYTES)
            stop_keeping(keeper);         /* a block this big is not kept: its text need not be held */
        if (keeper && keeper->keeping)
            g_string_append_len(keeper->block, record->str, (gssize)record->len);
        chunk_cache_charge(scratch_cache, &scratch,
                           record->allocated_len + (keeper && keeper->block ? keeper->block->allocated_len : 0));
        offset += record->len;
    }
    /* What a segment that reported errors teaches is not kept: a view
     * that relied on it would not report them again. */
    if (view->ops->segment_end)
        view->ops->segment_end(view, !segment->failed && !segment->ended && !segment->errors.lines &&
                                         segment->errors.unlisted == 0);
    stream_hold_end();
    trace_errors_defer(NULL);
    g_string_free(record, TRUE);
    segment->size = offset;
    /* The last block ends at the segment's end: kept only when the view
     * went on to where it should, not on an error. */
    if (keeper && !segment->failed && keeper->keeping && segment->checkpoints->len > 0 && offset > 0) {
        keep_block(keeper, first_block + segment->checkpoints->len - 1);
        if (keeper->block)
            g_string_truncate(keeper->block, 0);
    }
    if (scratch_cache)
        chunk_cache_unreserve(scratch_cache, scratch);
}

enum segment_keeping { SEGMENT_RUNNING, SEGMENT_KEPT_WHOLE, SEGMENT_NOT_KEPT };

struct sizing {
    struct trace *trace;
    const struct view *view;
    struct segment *segments;
    uint32_t count;
    struct text_keeper *keepers; /* one per segment */
    uint32_t stop_at;            /* the first segment known to end the view: later ones need not run */
    uint64_t pool_bytes;         /* the keepers' pool when the sizing began */
    /* Kept blocks are joined only where every block before them is kept:
     * segments 0 .. kept_through - 1 are done with all their blocks kept,
     * and segment kept_through always keeps.  A segment further on keeps
     * only when it may end inside the pool's share of the view (the
     * segments done so far give its end: done_bytes over done_segments
     * times its number plus one): past that it would copy text that is
     * thrown away when the pool runs out before it.  So the kept text is
     * about the view's first pool bytes, as in a serial pass, at any
     * thread count. */
    pthread_mutex_t lock;        /* pthread's: TSan does not see GLib's futex-based GMutex */
    uint8_t *keeping;            /* enum segment_keeping, per segment */
    uint32_t kept_through;
    uint64_t done_bytes, done_segments;
    /* Block buffers of finished segments, for the next ones: a buffer per
     * segment was a fresh mapping to fault in, grow (mremap) and unmap,
     * each unmap stopping the other cores for a TLB flush.  At most one
     * per worker, freed when the sizing ends. */
    GPtrArray *spare_blocks;
};

static GString *take_spare_block(struct sizing *sizing)
{
    GString *block = NULL;
    pthread_mutex_lock(&sizing->lock);
    if (sizing->spare_blocks->len > 0)
        block = g_ptr_array_steal_index_fast(sizing->spare_blocks, sizing->spare_blocks->len - 1);
    pthread_mutex_unlock(&sizing->lock);
    return block ? block : g_string_sized_new(SPARE_BLOCK_MAX_BYTES - 1);
}

/* A buffer stop_keeping left (emptied, of the usual size) for the next segment. */
static void give_spare_block(struct sizing *sizing, GString *block)
{
    pthread_mutex_lock(&sizing->lock);
    g_ptr_array_add(sizing->spare_blocks, block);
    pthread_mutex_unlock(&sizing->lock);
}

/* TRUE when segment i kept all its blocks and the view goes on. */
static gboolean kept_whole(const struct segment *segment, const struct text_keeper *keeper)
{
    return keeper->keeping && !segment->failed && !segment->ended && segment->checkpoints->len > 0 &&
           keeper->blocks == (segment->size > 0 ? segment->checkpoints->len : 0);
}

static gboolean segment_may_keep(struct sizing *sizing, uint64_t i, gboolean *next_in_run)
{
    pthread_mutex_lock(&sizing->lock);
    *next_in_run = i == sizing->kept_through;
    /* An eighth of the pool is left to the run: the estimate is rough,
     * and a run that finds the pool empty ends the kept text there. */
    gboolean may_fit = sizing->done_segments == 0 ||
                       (double)sizing->done_bytes / (double)sizing->done_segments * (double)(i + 1) <=
                           (double)sizing->pool_bytes * 7 / 8;
    pthread_mutex_unlock(&sizing->lock);
    return *next_in_run || may_fit;
}

static void segment_done(struct sizing *sizing, uint64_t i, gboolean whole)
{
    pthread_mutex_lock(&sizing->lock);
    sizing->keeping[i] = whole ? SEGMENT_KEPT_WHOLE : SEGMENT_NOT_KEPT;
    while (sizing->kept_through < sizing->count && sizing->keeping[sizing->kept_through] == SEGMENT_KEPT_WHOLE)
        sizing->kept_through++;
    sizing->done_bytes += sizing->segments[i].size;
    sizing->done_segments++;
    pthread_mutex_unlock(&sizing->lock);
}

/* stop_at becomes i if i is lower (segments end the view in any order). */
static void lower_stop_at(struct sizing *sizing, uint32_t i)
{
    uint32_t stop_at = __atomic_load_n(&sizing->stop_at, __ATOMIC_RELAXED);
    while (i < stop_at &&
           !__atomic_compare_exchange_n(&sizing->stop_at, &stop_at, i, TRUE, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        continue;
}

static void size_one_segment(void *data, uint64_t i)
{
    struct sizing *sizing = data;
    /* A segment past a failed one is not part of the view: skipped, as
     * the serial pass never reaches it. */
    if (i > __atomic_load_n(&sizing->stop_at, __ATOMIC_RELAXED)) {
        sizing->segments[i].failed = TRUE;
        sizing->segments[i].checkpoints = g_array_new(FALSE, FALSE, sizeof(struct view_checkpoint));
        return;
    }
    struct segment *segment = &sizing->segments[i];
    struct text_keeper *keeper = &sizing->keepers[i];
    gboolean next_in_run = FALSE;
    keeper->keeping = keeper->keeping && segment_may_keep(sizing, i, &next_in_run);
    /* Segments beside the run keep only what leaves the run a part of the
     * pool: they may start before any estimate, all at once. */
    if (!next_in_run)
        keeper->floor = MAX(sizing->pool_bytes / 8, 2 * (uint64_t)LIMIT_CHECKPOINT_SPACING);
    if (keeper->keeping)
        keeper->block = take_spare_block(sizing);
    uint64_t started = workers_thread_cpu_ns();
    render_segment(sizing->trace, sizing->view, segment, keeper, 0, sizing->trace->workers);
    segment->cpu_ns = workers_thread_cpu_ns() - started;
    segment_done(sizing, i, kept_whole(segment, keeper));
    stop_keeping(keeper);   /* its blocks are kept */
    if (keeper->block)
        give_spare_block(sizing, keeper->block);
    keeper->block = NULL;
    if (segment->failed || segment->ended)
        lower_stop_at(sizing, (uint32_t)i);
}

/* The segments' starts: begin's cursor, then the view's cut points
 * (checked: increasing word[0], or the view is not cut at all). */
static uint32_t plan_segments(const struct view *view, struct segment *segments)
{
    memset(&segments[0], 0, sizeof segments[0]);
    view_begin(view, &segments[0].start);
    uint32_t cuts = 0;
    if (view->ops->segments) {
        struct view_cursor cursors[LIMIT_VIEW_SEGMENTS - 1];
        memset(cursors, 0, sizeof cursors);
        cuts = MIN(view->ops->segments(view, cursors, LIMIT_VIEW_SEGMENTS - 1), LIMIT_VIEW_SEGMENTS - 1);
        uint64_t previous = segments[0].start.word[0];
        for (uint32_t i = 0; i < cuts; i++) {
            if (cursors[i].word[0] <= previous) {
                cuts = 0;
                break;
            }
            previous = cursors[i].word[0];
            memset(&segments[i + 1], 0, sizeof segments[i + 1]);
            segments[i + 1].start = cursors[i];
        }
    }
    for (uint32_t i = 0; i <= cuts; i++)
        segments[i].stop = i < cuts ? segments[i + 1].start.word[0] : UINT64_MAX;
    return cuts + 1;
}

/* Joins the segments up to the first failed one, in order: offsets by
 * prefix sums, their errors into /errors.  Frees the segments. */
static void join_segments(struct trace *trace, struct segment *segments, uint32_t count, struct view_index *out)
{
    guint total = 0;
    for (uint32_t i = 0; i < count; i++) {
        total += segments[i].checkpoints->len;
        out->rendered_bytes += segments[i].size;
        out->rendered_cpu_ns += segments[i].cpu_ns;
    }
    GArray *checkpoints = g_array_sized_new(FALSE, FALSE, sizeof(struct view_checkpoint), total);
    uint64_t base = 0;
    gboolean ended = FALSE;
    for (uint32_t i = 0; i < count; i++) {
        struct segment *segment = &segments[i];
        if (!ended) {
            trace_errors_replay(trace, &segment->errors);
            if (segment->size > 0) {
                for (guint c = 0; c < segment->checkpoints->len; c++) {
                    struct view_checkpoint checkpoint = g_array_index(segment->checkpoints, struct view_checkpoint, c);
                    checkpoint.offset += base;
                    g_array_append_val(checkpoints, checkpoint);
                }
            }
            base += segment->size;
            if (segment->failed) {
                out->failed = TRUE;
                ended = TRUE;
            }
            ended = ended || segment->ended;
        }
        g_array_free(segment->checkpoints, TRUE);
        trace_error_list_clear(&segment->errors);
    }
    out->size = base;
    if (checkpoints->len > 1) {
        out->checkpoint_count = checkpoints->len;
        out->checkpoints = (struct view_checkpoint *)g_array_free(checkpoints, FALSE);
    } else {
        g_array_free(checkpoints, TRUE);
    }
}

/* After a parallel sizing: the segments' kept blocks join the view's
 * owner, numbered after the blocks of the segments before, as long as
 * every block before them is kept; the rest is forgotten.  Returns the
 * view's kept blocks. */
static uint32_t join_kept_text(const struct segment *segments, uint32_t count, struct text_keeper *keepers,
                               struct text_keeper *view_keeper)
{
    uint64_t blocks = 0;
    gboolean whole = TRUE;       /* every block so far is kept */
    gboolean ended = FALSE;      /* the view ended in an earlier segment */
    for (uint32_t i = 0; i < count; i++) {
        struct text_keeper *keeper = &keepers[i];
        uint64_t segment_blocks = segments[i].size > 0 ? segments[i].checkpoints->len : 0;
        if (keeper->owner != 0 && whole && !ended && keeper->blocks > 0) {
            if (view_keeper->owner == 0)
                view_keeper->owner = chunk_cache_new_owner(view_keeper->cache);
            chunk_cache_move_owner(keeper->cache, keeper->owner, view_keeper->owner, blocks);
            blocks += keeper->blocks;
        } else if (keeper->owner != 0) {
            chunk_cache_forget_owner(keeper->cache, keeper->owner);
        }
        whole = whole && keeper->blocks == segment_blocks;
        ended = ended || segments[i].failed || segments[i].ended;
    }
    return (uint32_t)MIN(blocks, (uint64_t)UINT32_MAX);
}

/* Serially, one keeper numbers blocks across segments; in parallel each
 * segment keeps its own (segment_may_keep), joined afterwards, so a `cat`
 * after a parallel sizing reads them too. */
static void size_segments(struct trace *trace, const struct view *view, struct segment *segments, uint32_t count,
                          struct text_keeper *keeper)
{
    if (count > 1 && trace && workers_threads(trace->workers) > 1) {
        struct sizing sizing = { .trace = trace, .view = view, .segments = segments, .count = count,
                                 .keepers = g_new0(struct text_keeper, count), .stop_at = UINT32_MAX,
                                 .pool_bytes = *keeper->pool, .keeping = g_new0(uint8_t, count),
                                 .spare_blocks = g_ptr_array_new_with_free_func(free_block) };
        pthread_mutex_init(&sizing.lock, NULL);
        struct text_keeper *keepers = sizing.keepers;
        for (uint32_t i = 0; i < count; i++)
            keepers[i] = (struct text_keeper){ keeper->cache, keeper->pool, 0, keeper->keeping, 0, 0, NULL };
        workers_for(trace->workers, count, size_one_segment, &sizing);
        keeper->blocks = join_kept_text(segments, count, keepers, keeper);
        pthread_mutex_destroy(&sizing.lock);
        g_ptr_array_free(sizing.spare_blocks, TRUE);
        g_free(sizing.keeping);
        g_free(keepers);
        return;
    }
    uint64_t blocks = 0;
    gboolean stop = FALSE;
    for (uint32_t i = 0; i < count; i++) {
        if (stop) {
            segments[i].failed = TRUE;
            segments[i].checkpoints = g_array_new(FALSE, FALSE, sizeof(struct view_checkpoint));
            continue;
        }
        render_segment(trace, view, &segments[i], keeper, blocks, trace ? trace->workers : NULL);
        if (segments[i].size > 0)
            blocks += segments[i].checkpoints->len;
        stop = segments[i].failed || segments[i].ended;
    }
}

void view_index_build_keeping_text(struct trace *trace, const struct view *view, struct chunk_cache *cache,
                                   uint64_t keep_bytes, struct view_index *out)
{
    memset(out, 0, sizeof *out);
    if (view->ops->size) {
        out->size = view->ops->size(view);
        return;
    }
    uint64_t pool = cache && !view->ops->dynamic ? keep_bytes : 0;
    struct text_keeper keeper = { cache, &pool, 0, pool > 0, 0, 0, NULL };
    struct segment *segments = g_new0(struct segment, LIMIT_VIEW_SEGMENTS);
    uint32_t count = plan_segments(view, segments);
    if (trace)
        __atomic_fetch_add(&trace->segments_sized, (gint64)count, __ATOMIC_RELAXED);
    /* Shared evenly, so that where checkpoints fall depends on the segment
     * alone, never on the thread count. */
    uint64_t budget = trace && trace->view_checkpoint_bytes ? trace->view_checkpoint_bytes
                                                            : limit_view_checkpoint_bytes(0);
    uint64_t most = budget / sizeof(struct view_checkpoint);
    for (uint32_t i = 0; i < count; i++)
        segments[i].max_checkpoints = (uint32_t)MAX(most / count, 4);
    size_segments(trace, view, segments, count, &keeper);
    join_segments(trace, segments, count, out);
    g_free(segments);
    stop_keeping(&keeper);
    if (keeper.block)
        free_block(keeper.block);
    if (keeper.owner != 0) {
        out->text_cache = cache;
        out->text_owner = keeper.owner;
        out->text_blocks = out->checkpoint_count > 1 ? (uint32_t)MIN(keeper.blocks, out->checkpoint_count) : 0;
    }
}

void view_index_build(struct trace *trace, const struct view *view, struct view_index *out)
{
    view_index_build_keeping_text(trace, view, NULL, 0, out);
}
