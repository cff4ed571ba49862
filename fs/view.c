/* Sizing and reading views (see view.h). */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include "chunk_cache.h"
#include "tracefs_limits.h"
#include "stream.h"
#include "trace.h"
#include "view.h"

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

static struct view_checkpoint start_point(const struct view *view, const struct view_index *index, uint32_t number)
{
    struct view_checkpoint start = { 0, { { 0 } } };
    if (index->checkpoint_count == 0) {
        view->ops->begin(view, &start.cursor);
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

/* Fills the slot (text NULL: empties it); takes the reference to text. */
static void kept_record_replace(const struct view *view, uint64_t position, const struct view_cursor *before,
                                const struct view_cursor *after, GBytes *text)
{
    pthread_mutex_lock(&kept.lock);
    GBytes *old = kept.text;
    if (text) {
        kept.view = *view;
        kept.position = position;
        kept.before = *before;
        kept.after = *after;
    }
    kept.text = text;
    __atomic_store_n(&kept_position_hint, text ? position : UINT64_MAX, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&kept.lock);
    if (old)
        g_bytes_unref(old);
}

void view_forget_kept_record(void)
{
    kept_record_replace(NULL, 0, NULL, NULL, NULL);
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

/* Renders [offset, offset + len) from checkpoint `start` (at or before
 * offset) into buf. */
static ssize_t render_range(const struct view *view, struct view_checkpoint start, uint64_t offset,
                            void *buf, size_t len)
{
    struct view_cursor cursor = start.cursor;
    uint64_t position = start.offset, end = offset + len;
    GString *record = g_string_sized_new(4096);
    ssize_t result = (ssize_t)len;
    while (position < end) {
        GBytes *text = kept_record_take(view, position, &cursor);
        if (text) {
            gsize length;
            const char *data = g_bytes_get_data(text, &length);
            copy_overlap(buf, offset, end, position, data, length);
            position += length;
            g_bytes_unref(text);
            continue;
        }
        struct view_cursor before = cursor;
        g_string_truncate(record, 0);
        if (view->ops->next(view, &cursor, record) != VIEW_RECORD) {
            /* Sized once, now shorter: the trace changed under the mount. */
            result = -EIO;
            break;
        }
        copy_overlap(buf, offset, end, position, record->str, record->len);
        uint64_t record_start = position;
        position += record->len;
        /* Kept only when the read ends inside it: the next read starts there.
         * The slot takes the rendered buffer itself, no copy. */
        if (record->len >= LIMIT_KEPT_RECORD_MIN_BYTES && position > end) {
            kept_record_replace(view, record_start, &before, &cursor, g_string_free_to_bytes(record));
            record = g_string_sized_new(4096);
        }
    }
    g_string_free(record, TRUE);
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
    struct view_cursor cursor = source->index->checkpoints[number].cursor;
    GString *record = g_string_sized_new(4096);
    size_t filled = 0;
    int rc = 0;
    while (filled < size) {
        g_string_truncate(record, 0);
        if (source->view->ops->next(source->view, &cursor, record) != VIEW_RECORD || record->len > size - filled) {
            rc = -EIO;
            break;
        }
        memcpy(out + filled, record->str, record->len);
        filled += record->len;
    }
    g_string_free(record, TRUE);
    return rc;
}

static uint64_t block_end(const struct view_index *index, uint32_t number)
{
    return number + 1 < index->checkpoint_count ? index->checkpoints[number + 1].offset : index->size;
}

/* Copies what block `number` holds of [offset, end) into buf (which
 * starts at offset); returns the bytes copied or a negative errno. */
static ssize_t read_kept_block(const struct view *view, const struct view_index *index, uint32_t number,
                               uint64_t offset, uint64_t end, void *buf)
{
    uint64_t start = index->checkpoints[number].offset, stop = block_end(index, number);
    struct block_source source = { view, index };
    struct chunk chunk;
    void *pin = NULL;
    int rc = chunk_cache_get(index->text_cache, index->text_owner, number, (size_t)(stop - start),
                             render_kept_block, &source, &chunk, &pin);
    if (rc < 0)
        return rc;
    uint64_t from = MAX(start, offset), to = MIN(stop, end);
    memcpy(buf, chunk.data + (from - start), (size_t)(to - from));
    chunk_cache_release(index->text_cache, pin);
    return (ssize_t)(to - from);
}

ssize_t view_read(struct trace *trace, const struct view *view, const struct view_index *index,
                  uint64_t offset, void *buf, size_t len)
{
    (void)trace;
    if (offset >= index->size)
        return 0;
    len = (size_t)MIN((uint64_t)len, index->size - offset);
    if (view->ops->size)
        return view->ops->read_at(view, offset, buf, len);
    uint64_t position = offset, end = offset + len;
    uint32_t number = checkpoint_before(index, offset);
    for (; position < end && number < index->text_blocks; number++) {
        ssize_t n = read_kept_block(view, index, number, position, end, (uint8_t *)buf + (position - offset));
        if (n < 0)
            return n;
        position += (uint64_t)n;
    }
    if (position == end)
        return (ssize_t)len;
    ssize_t n = render_range(view, start_point(view, index, number), position,
                             (uint8_t *)buf + (position - offset), (size_t)(end - position));
    return n < 0 ? n : (ssize_t)len;
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
