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
    reader->p = reader->end = NULL;
}

uint64_t at_reader_offset(const struct at_reader *reader)
{
    return reader->base - (uint64_t)(reader->end - reader->p);
}

void at_reader_seek(struct at_reader *reader, uint64_t offset)
{
    reader->p = reader->end = NULL;
    reader->base = offset;
    stream_cursor_seek(&reader->cursor, offset);
}

uint64_t at_bytes_left(const struct at_reader *reader)
{
    uint64_t at = at_reader_offset(reader);
    return at < reader->size ? reader->size - at : 0;
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
        reader->error = -EIO;
        return FALSE;
    }
    uint64_t avail = reader->cursor.chunk_end - at;
    reader->p = p;
    reader->end = p + avail;
    reader->base = at + avail;
    return TRUE;
}

int at_getc_after_refill(struct at_reader *reader)
{
    if (reader->p == reader->end && !refill(reader))
        return -1;
    return *reader->p++;
}

gboolean at_uint(struct at_reader *reader, uint64_t *value)
{
    /* Most numbers are one byte (ids, small counts, enum values). */
    if (reader->p != reader->end && !(*reader->p & 0x80)) {
        *value = *reader->p++;
        return TRUE;
    }
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
        if (!(c & 0x80)) {
            if (overflow)
                reader->error = -ERANGE;
            *value = v;
            return !overflow;
        }
    }
    reader->error = -ERANGE;          /* longer than 10 bytes */
    return FALSE;
}

gboolean at_skip(struct at_reader *reader, uint64_t length)
{
    if (length > at_bytes_left(reader))
        return FALSE;
    uint64_t in_chunk = (uint64_t)(reader->end - reader->p);
    reader->bulk_bytes += length;
    if (length <= in_chunk) {
        reader->p += length;
        return TRUE;
    }
    at_reader_seek(reader, at_reader_offset(reader) + length);
    return TRUE;
}

gboolean at_read(struct at_reader *reader, void *buf, size_t length)
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
