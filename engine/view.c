/* Sizing and reading views (see view.h). */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/uio.h>
#include "chunk_cache.h"
#include "load_ahead.h"
#include "tracefs_limits.h"
#include "stream.h"
#include "trace.h"
#include "view.h"
#include "workers.h"

/* The stride between the candidates view_segment_cuts tries; 0: no cuts. */
static uint64_t segment_stride(uint64_t records, uint64_t candidates, uint32_t max)
{
    uint64_t wanted = MIN((uint64_t)max + 1, records / LIMIT_SEGMENT_MIN_RECORDS);
    if (wanted < 2 || candidates < 2)
        return 0;
    return MAX(1u, candidates / wanted);
}

uint32_t view_segment_cuts(uint64_t records, uint64_t candidates, uint32_t max, view_cut_fn cut,
                           const void *context, struct view_cursor *cursors)
{
    uint64_t stride = segment_stride(records, candidates, max);
    if (stride == 0)
        return 0;
    uint32_t count = 0;
    uint64_t previous = 0;
    for (uint64_t i = stride; i < candidates && count < max; i += stride) {
        memset(&cursors[count], 0, sizeof cursors[count]);
        if (!cut(context, i, &cursors[count]) || cursors[count].word[0] <= previous)
            continue;
        previous = cursors[count++].word[0];
    }
    return count;
}

void view_index_clear(struct view_index *index)
{
    if (index->text_cache && index->text_owner)
        chunk_cache_forget_owner(index->text_cache, index->text_owner);
    g_free(index->checkpoints);
    memset(index, 0, sizeof *index);
}

/* The number of the last checkpoint at or before offset (0 without any). */
static uint32_t checkpoint_before(const struct view_index *index, uint64_t offset)
{
    if (index->checkpoint_count == 0)
        return 0;
    uint32_t lo = 0, hi = index->checkpoint_count;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (index->checkpoints[mid].offset <= offset)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

void view_begin(const struct view *view, struct view_cursor *cursor)
{
    memset(cursor, 0, sizeof *cursor);
    if (view->ops->begin)
        view->ops->begin(view, cursor);
}

static struct view_checkpoint start_point(const struct view *view, const struct view_index *index, uint32_t number)
{
    struct view_checkpoint start = { 0, { { 0 } } };
    if (index->checkpoint_count == 0) {
        view_begin(view, &start.cursor);
        return start;
    }
    return index->checkpoints[number];
}

/* The last big record a read rendered.  Without it a record larger than a
 * read (a call with 50,000 arguments, a frame's memory dump) is rendered
 * again for each 128 KiB the kernel asks for: quadratic in the record's
 * size, minutes for a record near LIMIT_RECORD_TEXT_BYTES.  One slot for
 * the whole process bounds its memory by one record, which rendering it
 * needed anyway.  A view is a pure function of (ops, context, arg), so that
 * and the cursor before the record name the text; view_forget_kept_record
 * drops it when a trace closes (its context may be reused). */
static struct {
    pthread_mutex_t lock;
    struct view view;
    uint64_t position;                  /* offset of the record's first byte */
    struct view_cursor before, after;
    GBytes *text;                       /* NULL: empty slot */
    struct chunk_cache *charged_cache;  /* the text counts there (may be NULL) */
    uint64_t charged;
    uint64_t renders_saved;             /* tests */
} kept = { .lock = PTHREAD_MUTEX_INITIALIZER };
/* kept.position read without the lock (atomically), so that the records a
 * read renders before and after the kept one cost no lock each. */
static uint64_t kept_position_hint = UINT64_MAX;

static gboolean same_view(const struct view *a, const struct view *b)
{
    return a->ops == b->ops && a->context == b->context && memcmp(a->arg, b->arg, sizeof a->arg) == 0;
}

/* The kept text of the record at `position` whose cursor is `*cursor`, or
 * NULL; on a hit the cursor moves past the record. */
static GBytes *kept_record_take(const struct view *view, uint64_t position, struct view_cursor *cursor)
{
    if (__atomic_load_n(&kept_position_hint, __ATOMIC_RELAXED) != position)
        return NULL;
    GBytes *text = NULL;
    pthread_mutex_lock(&kept.lock);
    if (kept.text && kept.position == position && same_view(&kept.view, view) &&
        memcmp(&kept.before, cursor, sizeof *cursor) == 0) {
        text = g_bytes_ref(kept.text);
        *cursor = kept.after;
        kept.renders_saved++;
    }
    pthread_mutex_unlock(&kept.lock);
    return text;
}

/* Fills the slot (text NULL: empties it); takes the reference to text,
 * whose `held` bytes count in `cache` (may be NULL) while it is kept: a
 * kept record can be LIMIT_RECORD_TEXT_BYTES, more than the fixed part of
 * the memory rule. */
static void kept_record_replace(const struct view *view, uint64_t position, const struct view_cursor *before,
                                const struct view_cursor *after, GBytes *text, struct chunk_cache *cache,
                                uint64_t held)
{
    uint64_t charged = 0;
    if (text)
        chunk_cache_charge(cache, &charged, held);
    pthread_mutex_lock(&kept.lock);
    GBytes *old = kept.text;
    struct chunk_cache *old_cache = kept.charged_cache;
    uint64_t old_charged = kept.charged;
    if (text) {
        kept.view = *view;
        kept.position = position;
        kept.before = *before;
        kept.after = *after;
    }
    kept.text = text;
    kept.charged_cache = text ? cache : NULL;
    kept.charged = charged;
    __atomic_store_n(&kept_position_hint, text ? position : UINT64_MAX, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&kept.lock);
    if (old)
        g_bytes_unref(old);
    if (old_cache && old_charged)
        chunk_cache_unreserve(old_cache, old_charged);
}

/* Before a trace's caches go: the slot's charge is given back to them. */
void view_forget_kept_record(void)
{
    kept_record_replace(NULL, 0, NULL, NULL, NULL, NULL, 0);
}

uint64_t view_kept_record_hits(void)
{
    pthread_mutex_lock(&kept.lock);
    uint64_t hits = kept.renders_saved;
    pthread_mutex_unlock(&kept.lock);
    return hits;
}

static void copy_overlap(void *buf, uint64_t offset, uint64_t end, uint64_t position, const char *text, size_t length)
{
    uint64_t record_end = position + length;
    if (record_end <= offset)
        return;
    uint64_t from = MAX(position, offset), to = MIN(record_end, end);
    memcpy((uint8_t *)buf + (from - offset), text + (from - position), to - from);
}

static void resume_lock(struct view_index *index)
{
    while (__atomic_exchange_n(&index->resume_lock, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&index->resume_lock, __ATOMIC_RELAXED))
            ;
}

static void resume_unlock(struct view_index *index)
{
    __atomic_store_n(&index->resume_lock, 0, __ATOMIC_RELEASE);
}

/* The index's resume point when it lies after `start` and at or before
 * offset (a read that goes on from the last one), else start. */
static struct view_checkpoint resume_point(struct view_index *index, struct view_checkpoint start, uint64_t offset)
{
    resume_lock(index);
    if (index->resume.offset > start.offset && index->resume.offset <= offset)
        start = index->resume;
    resume_unlock(index);
    return start;
}

static void resume_set(struct view_index *index, uint64_t offset, const struct view_cursor *cursor)
{
    resume_lock(index);
    index->resume = (struct view_checkpoint){ offset, *cursor };
    resume_unlock(index);
}

/* The number of the first checkpoint after offset (checkpoint_count if
 * none). */
static uint32_t checkpoint_after(const struct view_index *index, uint64_t offset)
{
    uint32_t before = checkpoint_before(index, offset);
    return index->checkpoint_count && index->checkpoints[before].offset <= offset ? before + 1 : 0;
}

/* A block's bytes are what its own checkpoint renders up to the next one,
 * whichever way a read gets there: at a checkpoint the rendering restarts
 * from its cursor, and a record across one is -EIO.  With the trace's own
 * sizing the two agree; a saved index that passed its checksum but
 * disagrees with the trace then gives the same bytes (or error) to every
 * read order and thread count, as a block rendered ahead would.  Returns
 * FALSE when the record just rendered crossed a checkpoint. */
static gboolean restart_at_checkpoint(const struct view_index *index, uint32_t *next, uint64_t record_start,
                                      uint64_t position, struct view_cursor *cursor)
{
    gboolean crossed = FALSE;
    while (*next < index->checkpoint_count && index->checkpoints[*next].offset <= position) {
        const struct view_checkpoint *checkpoint = &index->checkpoints[*next];
        if (checkpoint->offset > record_start && checkpoint->offset < position)
            crossed = TRUE;
        if (checkpoint->offset == position)
            *cursor = checkpoint->cursor;
        (*next)++;
    }
    return !crossed && !(record_start < index->size && position > index->size);
}

/* Renders [offset, offset + len) from checkpoint `start` (at or before
 * offset) into buf, and leaves the index's resume point where the next
 * read will start: the record the read ends in (or after).  The record
 * being rendered counts in `scratch_cache` (may be NULL) while held. */
static ssize_t render_range(const struct view *view, struct view_index *index, struct view_checkpoint start,
                            uint64_t offset, void *buf, size_t len, struct chunk_cache *scratch_cache)
{
    struct view_cursor cursor = start.cursor;
    uint64_t position = start.offset, end = offset + len, scratch = 0;
    uint32_t next_checkpoint = checkpoint_after(index, position);
    GString *record = g_string_sized_new(4096);
    ssize_t result = (ssize_t)len;
    stream_hold_begin();
    while (position < end) {
        GBytes *text = kept_record_take(view, position, &cursor);
        if (text) {
            gsize length;
            const char *data = g_bytes_get_data(text, &length);
            copy_overlap(buf, offset, end, position, data, length);
            uint64_t record_start = position;
            position += length;
            g_bytes_unref(text);
            if (!restart_at_checkpoint(index, &next_checkpoint, record_start, position, &cursor)) {
                result = -EIO;
                break;
            }
            continue;
        }
        struct view_cursor before = cursor;
        g_string_truncate(record, 0);
        if (view->ops->next(view, &cursor, record) != VIEW_RECORD) {
            /* Sized once, now shorter: the trace changed under the mount. */
            result = -EIO;
            break;
        }
        chunk_cache_charge(scratch_cache, &scratch, record->allocated_len);
        copy_overlap(buf, offset, end, position, record->str, record->len);
        uint64_t record_start = position;
        position += record->len;
        if (!restart_at_checkpoint(index, &next_checkpoint, record_start, position, &cursor)) {
            result = -EIO;
            break;
        }
        if (position == end)
            resume_set(index, position, &cursor);
        else if (position > end && record_start > 0)
            resume_set(index, record_start, &before);
        /* Kept only when the read ends inside it: the next read starts there.
         * The slot takes the rendered buffer itself, no copy. */
        if (record->len >= LIMIT_KEPT_RECORD_MIN_BYTES && position > end) {
            uint64_t held = record->allocated_len;
            kept_record_replace(view, record_start, &before, &cursor, g_string_free_to_bytes(record),
                                scratch_cache, held);
            record = g_string_sized_new(4096);
        }
    }
    stream_hold_end();
    g_string_free(record, TRUE);
    if (scratch_cache)
        chunk_cache_unreserve(scratch_cache, scratch);
    return result;
}

struct block_source {
    const struct view *view;
    const struct view_index *index;
};

/* Renders a kept block again after its eviction: exactly the bytes between
 * its two checkpoints, or -EIO (the trace changed under the mount). */
static int render_kept_block(void *owner, uint64_t number, uint8_t *out, size_t size)
{
    const struct block_source *source = owner;
    uint64_t started = workers_thread_cpu_ns();
    struct view_cursor cursor = source->index->checkpoints[number].cursor;
    GString *record = g_string_sized_new(4096);
    /* The block itself is in the cache; the record being rendered counts
     * in it too while held. */
    uint64_t scratch = 0;
    size_t filled = 0;
    int rc = 0;
    stream_hold_begin();
    while (filled < size) {
        g_string_truncate(record, 0);
        if (source->view->ops->next(source->view, &cursor, record) != VIEW_RECORD || record->len > size - filled) {
            rc = -EIO;
            break;
        }
        chunk_cache_charge(source->index->text_cache, &scratch, record->allocated_len);
        memcpy(out + filled, record->str, record->len);
        filled += record->len;
    }
    stream_hold_end();
    g_string_free(record, TRUE);
    if (source->index->text_cache)
        chunk_cache_unreserve(source->index->text_cache, scratch);
    struct view_index *index = (struct view_index *)source->index;
    __atomic_add_fetch(&index->rendered_bytes, (uint64_t)filled, __ATOMIC_RELAXED);
    __atomic_add_fetch(&index->rendered_cpu_ns, workers_thread_cpu_ns() - started, __ATOMIC_RELAXED);
    return rc;
}

static uint64_t block_end(const struct view_index *index, uint32_t number)
{
    return number + 1 < index->checkpoint_count ? index->checkpoints[number + 1].offset : index->size;
}

static uint64_t block_size(const struct view_index *index, uint32_t number)
{
    return block_end(index, number) - index->checkpoints[number].offset;
}

/* Where a read's bytes go: buf holds them from `offset` on; `lent`, when
 * given, may take kept blocks' bytes instead.  A sequential reader's
 * blocks it copies whole are released as spent. */
struct read_target {
    uint8_t *buf;
    uint64_t offset;
    struct view_lent *lent;
    gboolean sequential;
};

static void release_block(struct chunk_cache *cache, void *pin, gboolean spent)
{
    if (spent)
        chunk_cache_release_spent(cache, pin);
    else
        chunk_cache_release(cache, pin);
}

static gboolean lend(struct view_lent *lent, struct chunk_cache *cache, uint64_t at, const uint8_t *data,
                     size_t len, void *pin, gboolean spent)
{
    if (!lent || lent->count == VIEW_LENT_PIECES || (lent->cache && lent->cache != cache))
        return FALSE;
    lent->cache = cache;
    lent->piece[lent->count].at = at;
    lent->piece[lent->count].data = data;
    lent->piece[lent->count].len = len;
    lent->piece[lent->count].pin = pin;
    lent->piece[lent->count].spent = spent;
    lent->count++;
    return TRUE;
}

/* Gives the reader what block `number` holds of [position, end) (position
 * is in the block); returns the bytes given or a negative errno. */
static ssize_t read_kept_block(const struct view *view, const struct view_index *index, uint32_t number,
                               uint64_t position, uint64_t end, const struct read_target *to)
{
    uint64_t start = index->checkpoints[number].offset, stop = MIN(block_end(index, number), end);
    struct block_source source = { view, index };
    struct chunk chunk;
    void *pin = NULL;
    int rc = chunk_cache_get(index->text_cache, index->text_owner, number, (size_t)block_size(index, number),
                             render_kept_block, &source, &chunk, &pin);
    if (rc < 0)
        return rc;
    const uint8_t *data = chunk.data + (position - start);
    size_t len = (size_t)(stop - position);
    /* Only a block this read copies whole: the kernel sends a file's reads
     * a little out of order, and a block that two reads share may still be
     * wanted by the other one. */
    gboolean spent = to->sequential && position == start && stop == block_end(index, number);
    if (!lend(to->lent, index->text_cache, position - to->offset, data, len, pin, spent)) {
        memcpy(to->buf + (position - to->offset), data, len);
        release_block(index->text_cache, pin, spent);
    }
    return (ssize_t)len;
}

unsigned view_lent_iov(const struct view_lent *lent, const void *buf, size_t len, struct iovec *iov)
{
    unsigned count = 0;
    uint64_t at = 0;
    for (unsigned i = 0; lent && i < lent->count; i++) {
        if (lent->piece[i].at > at)
            iov[count++] = (struct iovec){ (uint8_t *)buf + at, (size_t)(lent->piece[i].at - at) };
        iov[count++] = (struct iovec){ (void *)lent->piece[i].data, lent->piece[i].len };
        at = lent->piece[i].at + lent->piece[i].len;
    }
    if (len > at)
        iov[count++] = (struct iovec){ (uint8_t *)buf + at, (size_t)(len - at) };
    return count;
}

void view_lent_release(struct view_lent *lent)
{
    for (unsigned i = 0; i < lent->count; i++)
        release_block(lent->cache, lent->piece[i].pin, lent->piece[i].spent);
    lent->count = 0;
}

/* ---- read-ahead: a sequential reader's next blocks are rendered into the
 * text cache on the workers while it copies the current ones ---- */

/* A read this close to where the last one ended continues it (the kernel
 * sends a file's reads concurrently, a little out of order). */
#define READAHEAD_NEAR_BYTES (1u << 20)
/* Text a worker renders ahead in one task: consecutive blocks on one
 * thread, so a decoder that resumes where its last record ended (apitrace's
 * walker, XRay's merge) continues instead of seeking for each block. */
#define READAHEAD_RUN_BYTES (256u << 10)
/* How far ahead of the reader the workers render, per worker.  With 1 MiB
 * the cores sat idle 7 % of a two-thread `cat` of rr 100M's events (a
 * worker with no block left while the reader waited for the other's);
 * ahead_window caps the whole window for many threads. */
#define READAHEAD_BYTES_PER_WORKER (2u << 20)

struct ahead_task {
    struct view view;
    struct view_index *index;
    struct workers *workers;
    struct load_ahead *loaders;
    uint32_t first, count;
};

/* Renders a run of blocks into the text cache, skipping any a reader or
 * another worker has or is rendering: no block is rendered twice while
 * cached, and no worker waits for another thread's block. */
static void render_ahead(void *data, uint64_t unused)
{
    (void)unused;
    struct ahead_task *task = data;
    struct block_source source = { &task->view, task->index };
    /* The run's chunks after the one it reads are decompressed meanwhile:
     * the other workers render the blocks after it from those chunks. */
    load_ahead_begin(task->loaders);
    for (uint32_t block = task->first; block < task->first + task->count; block++) {
        if (workers_stopping(task->workers))
            break;
        /* A block the reader has passed: it has read it already (and may
         * have spent it), so rendering it now would be for nothing. */
        if (block_end(task->index, block) <= __atomic_load_n(&task->index->read_end, __ATOMIC_RELAXED))
            continue;
        /* A failure here is the reader's to report when it gets there. */
        if (chunk_cache_prefetch(task->index->text_cache, task->index->text_owner, block,
                                 (size_t)block_size(task->index, block), render_kept_block, &source) < 0)
            break;
    }
    load_ahead_end(task->loaders);
    g_free(task);
}

/* Blocks scheduled ahead of the reader: READAHEAD_BYTES_PER_WORKER per
 * worker and at least two blocks per worker, within a third of the text
 * cache's budget (a block is the view's spacing and a record; the spacing
 * grows with a view too big for its checkpoints: XRay 100M's events.yaml
 * has blocks of 1.2 MiB).  Every worker needs a block of its own to render
 * while the reader copies another, or one renders while the other waits.
 * The rest holds the text the sizing pass kept, the blocks readers have
 * pinned, and buffers counted at their capacity (up to twice a block's
 * size when recycled); the reader's copied blocks are released spent
 * (read_kept_block), so they make room before any unread block does.
 * Measured: with half the budget and 8 threads, XRay 100M's events.yaml
 * was rendered 1.2 times over; with a third, rr 100M's events is rendered
 * once (within 1 %) with 2 to 16 threads, and events.yaml within 6 %. */
static uint32_t ahead_window(struct trace *trace, const struct view_index *index)
{
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(trace->text_cache, &stats);
    uint64_t block = MAX(index->size / index->checkpoint_count, (uint64_t)LIMIT_CHECKPOINT_SPACING);
    uint64_t fit = stats.bytes_budget / 3 / block;
    uint64_t threads = workers_threads(trace->workers);
    uint64_t wanted = MAX(threads * READAHEAD_BYTES_PER_WORKER / block, 2 * threads);
    return (uint32_t)MAX(MIN(wanted, fit), (uint64_t)1);
}

/* A view that renders faster than this per thread costs more to hand
 * from a worker to the reader's thread than to render where it is read:
 * XRay's events.yaml (1.6 GB/s) was read 0.7 times as fast by a `cat` of
 * a mount with 2 threads and read-ahead as with 1 thread, and 1.3 times as
 * fast with the 2 FUSE threads rendering the kernel's concurrent reads
 * themselves; rr's and apitrace's events (0.15-0.3 GB/s) gain from it. */
#define READAHEAD_MAX_RENDER_BYTES_PER_SECOND (500u << 20)
/* Rendering measured before the rate above decides. */
#define READAHEAD_SAMPLE_BYTES (4u << 20)

static gboolean renders_cheaply(const struct view_index *index)
{
    uint64_t bytes = __atomic_load_n(&index->rendered_bytes, __ATOMIC_RELAXED);
    uint64_t cpu_ns = __atomic_load_n(&index->rendered_cpu_ns, __ATOMIC_RELAXED);
    return bytes >= READAHEAD_SAMPLE_BYTES &&
           (double)bytes * 1e9 > (double)READAHEAD_MAX_RENDER_BYTES_PER_SECOND * (double)cpu_ns;
}

/* Read-ahead applies to a sized record view with blocks, read by a trace
 * with more than one worker, unless it renders cheaply; sets the index's
 * text cache owner if it has none yet (the same for every caller: the
 * first one wins). */
static gboolean readahead_applies(struct trace *trace, struct view_index *index)
{
    if (!trace || !trace->text_cache || workers_threads(trace->workers) < 2 || index->checkpoint_count < 2 ||
        renders_cheaply(index))
        return FALSE;
    if (__atomic_load_n(&index->text_owner, __ATOMIC_ACQUIRE) != 0)
        return index->text_cache == trace->text_cache;
    /* Each field is written once, by a compare-and-swap from empty. */
    struct chunk_cache *no_cache = NULL;
    __atomic_compare_exchange_n(&index->text_cache, &no_cache, trace->text_cache, FALSE, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&index->text_cache, __ATOMIC_ACQUIRE) != trace->text_cache)
        return FALSE;
    uint64_t owner = chunk_cache_new_owner(trace->text_cache), none = 0;
    __atomic_compare_exchange_n(&index->text_owner, &none, owner, FALSE, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return TRUE;
}

static gboolean block_cacheable(const struct view_index *index, uint32_t block)
{
    return block >= index->text_blocks && block_size(index, block) <= VIEW_KEPT_BLOCK_MAX_BYTES;
}

/* Schedules the blocks after `last` (up to the window) not scheduled yet,
 * in runs of about READAHEAD_RUN_BYTES. */
static void schedule_ahead(struct trace *trace, const struct view *view, struct view_index *index, uint32_t last)
{
    uint32_t window = ahead_window(trace, index);
    /* The kept blocks need no rendering: while the reader copies them the
     * workers render the blocks after them. */
    uint32_t start = MAX(last + 1, index->text_blocks);
    uint64_t target = MIN((uint64_t)start + window, (uint64_t)index->checkpoint_count);
    uint32_t from = __atomic_load_n(&index->ahead_next, __ATOMIC_RELAXED);
    if (from < start || from > target)
        from = start;                      /* behind the reader, or the reader went back */
    if (from >= target)
        return;
    __atomic_store_n(&index->ahead_next, (uint32_t)target, __ATOMIC_RELAXED);
    uint32_t block = from;
    while (block < target) {
        if (!block_cacheable(index, block)) {
            block++;
            continue;
        }
        uint32_t first = block;
        uint64_t bytes = 0;
        while (block < target && block_cacheable(index, block) && bytes < READAHEAD_RUN_BYTES)
            bytes += block_size(index, block++);
        struct ahead_task *task = g_new(struct ahead_task, 1);
        *task = (struct ahead_task){ *view, index, trace->workers, trace_loaders(trace), first, block - first };
        if (!workers_submit(trace->workers, render_ahead, task))
            return;                        /* ran here: the pool is stopping */
    }
}

/* A sequential read through the text cache, blocks after it scheduled;
 * returns bytes read, or 0 when the reader is not sequential or the first
 * block is too big to cache (view_read renders then). */
static ssize_t read_ahead(struct trace *trace, const struct view *view, const struct view_index *index,
                          const struct read_target *to, size_t len)
{
    struct view_index *shared = (struct view_index *)index;
    if (!readahead_applies(trace, shared))
        return 0;
    uint64_t offset = to->offset, end = offset + len;
    uint64_t previous = __atomic_exchange_n(&shared->read_end, end, __ATOMIC_RELAXED);
    if (offset != 0 && (offset + READAHEAD_NEAR_BYTES < previous || offset > previous + READAHEAD_NEAR_BYTES))
        return 0;
    struct read_target sequential = *to;
    sequential.sequential = TRUE;
    uint64_t position = offset;
    uint32_t number = checkpoint_before(index, offset);
    for (; position < end && number < index->checkpoint_count; number++) {
        if (block_size(index, number) > VIEW_KEPT_BLOCK_MAX_BYTES)
            break;
        ssize_t n = read_kept_block(view, index, number, position, end, &sequential);
        if (n < 0)
            return n;
        position += (uint64_t)n;
    }
    if (position > offset)
        schedule_ahead(trace, view, shared, number - 1);
    return (ssize_t)(position - offset);
}

ssize_t view_read_lent(struct trace *trace, const struct view *view, const struct view_index *index,
                       uint64_t offset, void *buf, size_t len, struct view_lent *lent)
{
    if (offset >= index->size)
        return 0;
    len = (size_t)MIN((uint64_t)len, index->size - offset);
    if (view->ops->size)
        return view->ops->read_at(view, offset, buf, len);
    struct read_target to = { buf, offset, lent, FALSE };
    ssize_t ahead = read_ahead(trace, view, index, &to, len);
    if (ahead < 0 || (size_t)ahead == len)
        return ahead;
    uint64_t position = offset + (uint64_t)ahead, end = offset + len;
    uint32_t number = checkpoint_before(index, position);
    for (; position < end && number < index->text_blocks; number++) {
        ssize_t n = read_kept_block(view, index, number, position, end, &to);
        if (n < 0)
            return n;
        position += (uint64_t)n;
    }
    if (position == end)
        return (ssize_t)len;
    struct view_index *shared = (struct view_index *)index;
    struct view_checkpoint start = resume_point(shared, start_point(view, index, number), position);
    ssize_t n = render_range(view, shared, start, position, (uint8_t *)buf + (position - offset),
                             (size_t)(end - position), trace ? trace->text_cache : NULL);
    return n < 0 ? n : (ssize_t)len;
}

ssize_t view_read(struct trace *trace, const struct view *view, const struct view_index *index,
                  uint64_t offset, void *buf, size_t len)
{
    return view_read_lent(trace, view, index, offset, buf, len, NULL);
}

int view_render_all(struct trace *trace, const struct view *view, GString *out)
{
    struct view_index index;
    view_index_build(trace, view, &index);
    size_t base = out->len;
    g_string_set_size(out, base + index.size);
    uint64_t size = index.size;
    ssize_t n = view_read(trace, view, &index, 0, out->str + base, size);
    view_index_clear(&index);
    if (n < 0 || (uint64_t)n != size) {
        g_string_truncate(out, base);
        return n < 0 ? (int)n : -EIO;
    }
    return 0;
}

static uint64_t bytes_size(const struct view *view)
{
    return g_bytes_get_size(view->context);
}

static ssize_t bytes_read_at(const struct view *view, uint64_t offset, void *buf, size_t len)
{
    gsize size;
    const uint8_t *data = g_bytes_get_data(view->context, &size);
    if (offset >= size)
        return 0;
    len = (size_t)MIN((uint64_t)len, size - offset);
    memcpy(buf, data + offset, len);
    return (ssize_t)len;
}

static const struct view_ops bytes_view_ops = { .size = bytes_size, .read_at = bytes_read_at };

void view_init_bytes(struct view *view, GBytes *bytes)
{
    memset(view, 0, sizeof *view);
    view->ops = &bytes_view_ops;
    view->context = bytes;
}

static uint64_t stream_range_size(const struct view *view)
{
    return view->arg[1];
}

static ssize_t stream_range_read_at(const struct view *view, uint64_t offset, void *buf, size_t len)
{
    if (offset >= view->arg[1])
        return 0;
    len = (size_t)MIN((uint64_t)len, view->arg[1] - offset);
    ssize_t n = stream_read(view->context, view->arg[0] + offset, buf, len);
    if (n >= 0 && (size_t)n != len)
        return -EIO;
    return n;
}

static const struct view_ops stream_range_view_ops = { .size = stream_range_size, .read_at = stream_range_read_at };

void view_init_stream_range(struct view *view, struct stream *stream, uint64_t offset, uint64_t length)
{
    memset(view, 0, sizeof *view);
    view->ops = &stream_range_view_ops;
    view->context = stream;
    view->arg[0] = offset;
    view->arg[1] = length;
}
