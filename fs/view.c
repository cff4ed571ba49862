/* Sizing and reading views (see view.h). */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include "tracefs_limits.h"
#include "stream.h"
#include "trace.h"
#include "view.h"

void view_index_build(struct trace *trace, const struct view *view, struct view_index *out)
{
    memset(out, 0, sizeof *out);
    if (view->ops->size) {
        out->size = view->ops->size(view);
        return;
    }
    GArray *checkpoints = g_array_new(FALSE, FALSE, sizeof(struct view_checkpoint));
    GString *record = g_string_sized_new(4096);
    struct view_cursor cursor;
    memset(&cursor, 0, sizeof cursor);
    view->ops->begin(view, &cursor);
    uint64_t offset = 0, next_mark = 0;
    for (;;) {
        if (offset >= next_mark) {
            struct view_checkpoint checkpoint = { offset, cursor };
            g_array_append_val(checkpoints, checkpoint);
            next_mark = offset + LIMIT_CHECKPOINT_SPACING;
        }
        g_string_truncate(record, 0);
        enum view_step step = view->ops->next(view, &cursor, record);
        if (step == VIEW_END)
            break;
        if (step == VIEW_ERROR) {
            out->failed = TRUE;
            break;
        }
        if (record->len > LIMIT_RECORD_TEXT_BYTES) {
            trace_error(trace, "view", offset, "a record renders to %zu bytes (limit %u); file cut here",
                        record->len, LIMIT_RECORD_TEXT_BYTES);
            out->failed = TRUE;
            break;
        }
        offset += record->len;
    }
    g_string_free(record, TRUE);
    out->size = offset;
    if (checkpoints->len > 1) {
        out->checkpoint_count = checkpoints->len;
        out->checkpoints = (struct view_checkpoint *)g_array_free(checkpoints, FALSE);
    } else {
        g_array_free(checkpoints, TRUE);
    }
}

void view_index_clear(struct view_index *index)
{
    g_free(index->checkpoints);
    memset(index, 0, sizeof *index);
}

/* The last checkpoint at or before offset. */
static struct view_checkpoint start_point(const struct view *view, const struct view_index *index, uint64_t offset)
{
    struct view_checkpoint start = { 0, { { 0 } } };
    if (index->checkpoint_count == 0) {
        view->ops->begin(view, &start.cursor);
        return start;
    }
    size_t lo = 0, hi = index->checkpoint_count;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (index->checkpoints[mid].offset <= offset)
            lo = mid;
        else
            hi = mid;
    }
    return index->checkpoints[lo];
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

ssize_t view_read(struct trace *trace, const struct view *view, const struct view_index *index,
                  uint64_t offset, void *buf, size_t len)
{
    (void)trace;
    if (offset >= index->size)
        return 0;
    len = (size_t)MIN((uint64_t)len, index->size - offset);
    if (view->ops->size)
        return view->ops->read_at(view, offset, buf, len);
    struct view_checkpoint start = start_point(view, index, offset);
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
