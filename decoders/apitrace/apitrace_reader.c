/* Byte reader over the decompressed apitrace stream.  Keeps a pointer into
 * the pinned chunk so that the index pass reads a varint without a call
 * into the cache per byte. */
#include <errno.h>
#include <string.h>
#include "apitrace.h"
#include "tracefs_limits.h"

void at_reader_init(struct at_reader *reader, struct stream *stream, uint64_t offset)
{
    memset(reader, 0, sizeof *reader);
    stream_cursor_init(&reader->cursor, stream, offset);
    reader->size = stream_size(stream);
    reader->base = offset;
}

void at_reader_finish(struct at_reader *reader)
{
    stream_cursor_finish(&reader->cursor);
    reader->p = reader->end = reader->start = NULL;
}

void at_reader_seek_outside(struct at_reader *reader, uint64_t offset)
{
    reader->p = reader->end = reader->start = NULL;
    reader->base = offset;
    stream_cursor_seek(&reader->cursor, offset);
}

/* Pins the chunk holding the next byte; the cursor's chunk bounds tell how
 * many bytes follow in it. */
static gboolean refill(struct at_reader *reader)
{
    uint64_t at = at_reader_offset(reader);
    if (at >= reader->size)
        return FALSE;
    stream_cursor_seek(&reader->cursor, at);
    const uint8_t *p = stream_cursor_peek(&reader->cursor, 1);
    if (!p) {
        /* The cursor let the old chunk go: a seek must not land in it. */
        at_reader_seek_outside(reader, at);
        reader->error = -EIO;
        return FALSE;
    }
    uint64_t avail = reader->cursor.chunk_end - at;
    reader->p = p;
    reader->end = p + avail;
    reader->start = reader->cursor.chunk_data;
    reader->base = at + avail;
    return TRUE;
}

int at_getc_after_refill(struct at_reader *reader)
{
    if (reader->p == reader->end && !refill(reader))
        return -1;
    return *reader->p++;
}

/* The 10th byte holds bit 63 alone: any other bit there is past 64. */
static gboolean uint_end(struct at_reader *reader, uint64_t v, gboolean overflow, uint64_t *value)
{
    if (overflow)
        reader->error = -ERANGE;
    *value = v;
    return !overflow;
}

/* A varint lying whole in the window: no bounds check per byte. */
static gboolean uint_in_window(struct at_reader *reader, uint64_t *value)
{
    const uint8_t *p = reader->p;
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 63; shift += 7) {
        uint8_t c = *p++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            reader->p = p;
            return uint_end(reader, v, FALSE, value);
        }
    }
    uint8_t c = *p++;                  /* the 10th byte */
    reader->p = p;
    v |= (uint64_t)(c & 0x7f) << 63;
    if (c & 0x80) {
        reader->error = -ERANGE;       /* longer than 10 bytes */
        return FALSE;
    }
    return uint_end(reader, v, (c & 0x7e) != 0, value);
}

gboolean at_uint_long(struct at_reader *reader, uint64_t *value)
{
    if (reader->end - reader->p >= 10)
        return uint_in_window(reader, value);
    uint64_t v = 0;
    gboolean overflow = FALSE;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        int c = at_getc(reader);
        if (c < 0)
            return FALSE;
        if (shift == 63 && (c & 0x7e))
            overflow = TRUE;           /* bits past 64 */
        if (shift < 64)
            v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return uint_end(reader, v, overflow, value);
    }
    reader->error = -ERANGE;          /* longer than 10 bytes */
    return FALSE;
}

gboolean at_skip(struct at_reader *reader, uint64_t length)
{
    if (length > at_bytes_left(reader))
        return FALSE;
    reader->bulk_bytes += length;
    if (length <= (uint64_t)(reader->end - reader->p))
        reader->p += length;
    else
        at_reader_seek(reader, at_reader_offset(reader) + length);
    return TRUE;
}

gboolean at_read_across(struct at_reader *reader, void *buf, size_t length)
{
    uint8_t *out = buf;
    while (length > 0) {
        if (reader->p == reader->end && !refill(reader))
            return FALSE;
        size_t step = MIN(length, (size_t)(reader->end - reader->p));
        memcpy(out, reader->p, step);
        reader->p += step;
        out += step;
        length -= step;
        reader->bulk_bytes += step;
    }
    return TRUE;
}

char *at_string(struct at_reader *reader, size_t *length_out)
{
    uint64_t length;
    if (!at_uint(reader, &length))
        return NULL;
    if (length > LIMIT_APITRACE_NAME_BYTES || length > at_bytes_left(reader))
        return NULL;
    char *s = g_malloc(length + 1);
    if (!at_read(reader, s, length)) {
        g_free(s);
        return NULL;
    }
    s[length] = '\0';
    if (length_out)
        *length_out = length;
    return s;
}

gboolean at_sint(struct at_reader *reader, int64_t *value)
{
    int tag = at_getc(reader);
    uint64_t magnitude;
    if ((tag != 0x03 && tag != 0x04) || !at_uint(reader, &magnitude))
        return FALSE;
    *value = tag == 0x03 ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
    return TRUE;
}
