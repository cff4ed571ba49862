/* Sizing and reading views (see view.h). */
#include <errno.h>
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
        g_string_truncate(record, 0);
        if (view->ops->next(view, &cursor, record) != VIEW_RECORD) {
            /* Sized once, now shorter: the trace changed under the mount. */
            result = -EIO;
            break;
        }
        uint64_t record_end = position + record->len;
        if (record_end > offset) {
            uint64_t from = MAX(position, offset), to = MIN(record_end, end);
            memcpy((uint8_t *)buf + (from - offset), record->str + (from - position), to - from);
        }
        position = record_end;
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
    ssize_t n = view_read(trace, view, &index, 0, out->str + base, index.size);
    view_index_clear(&index);
    if (n < 0 || (uint64_t)n != index.size) {
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
