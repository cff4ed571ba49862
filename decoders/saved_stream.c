/* A stream's chunk table through the saved byte layer (saved_stream.h). */
#include <zlib.h>
#include "saved_stream.h"
#include "codec.h"
#include "stream.h"
#include "tracefs_limits.h"

/* A chunk's fixed fields: seven words. */
#define CHUNK_SAVED_BYTES 56u
/* Flags: bit 0 a window follows, bit 1 prefix, bits 2-3 the part, bit 4
 * the part shares the window of the part before it (a gzip chunk's). */
#define FLAG_SHARED_WINDOW_SHIFT 4

void saved_put_stream(struct saved_writer *out, const struct stream *stream)
{
    size_t count = stream_chunk_count(stream);
    saved_put_u64(out, stream_codec(stream));
    saved_put_u64(out, count);
    for (size_t i = 0; i < count; i++) {
        const struct chunk_entry *e = stream_chunk(stream, i);
        gboolean owns = stream_chunk_owns_window(stream_chunk(stream, 0), i);
        gboolean shared = e->window && !owns;
        saved_put_u64(out, e->file_offset);
        saved_put_u64(out, e->stream_offset);
        saved_put_u64(out, e->compressed_size);
        saved_put_u64(out, e->size);
        saved_put_u64(out, e->bits);
        saved_put_u64(out, e->skip);
        saved_put_u64(out, (uint64_t)owns | (e->prefix ? 2u : 0u) | (uint64_t)e->part << 2 |
                               (uint64_t)shared << FLAG_SHARED_WINDOW_SHIFT);
        if (owns) {
            saved_put_u64(out, e->window_size);
            saved_put(out, e->window, e->window_size);
        }
    }
}

uint64_t saved_stream_bytes(const struct stream *stream)
{
    size_t count = stream_chunk_count(stream);
    uint64_t bytes = 16 + (uint64_t)count * CHUNK_SAVED_BYTES;
    for (size_t i = 0; i < count; i++)
        bytes += stream_chunk_owns_window(stream_chunk(stream, 0), i) ? 8 + stream_chunk(stream, i)->window_size : 0;
    return bytes;
}

static void free_entries(struct chunk_entry *entries, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (stream_chunk_owns_window(entries, i))
            g_free((void *)entries[i].window);
    g_free(entries);
}

/* A sub-chunk that shares the window of the part before it: the same
 * gzip chunk's. */
static gboolean share_window(struct chunk_entry *e, const struct chunk_entry *before, enum codec codec)
{
    if (codec != CODEC_ZLIB_RAW || !before || !before->window || before->part != CHUNK_PART ||
        e->part == CHUNK_WHOLE || before->file_offset != e->file_offset ||
        before->compressed_size != e->compressed_size || before->bits != e->bits)
        return FALSE;
    e->window = before->window;
    e->window_size = before->window_size;
    return TRUE;
}

/* One chunk, which must start where the one before it ended (`expect`). */
static void get_chunk(struct saved_reader *r, struct chunk_entry *e, const struct chunk_entry *before,
                      enum codec codec, uint64_t expect, uint64_t file_size)
{
    e->file_offset = saved_get_u64(r);
    e->stream_offset = saved_get_u64(r);
    uint64_t compressed = saved_get_u64(r), size = saved_get_u64(r), bits = saved_get_u64(r), skip = saved_get_u64(r);
    uint64_t flags = saved_get_u64(r), has_window = flags & 1, part = (flags >> 2) & 3;
    uint64_t shared = (flags >> FLAG_SHARED_WINDOW_SHIFT) & 1;
    if (e->stream_offset != expect || size == 0 || size > LIMIT_CHUNK_BYTES || compressed > UINT32_MAX ||
        e->file_offset > file_size || compressed > file_size - e->file_offset || bits > 7 ||
        skip > UINT32_MAX || part > CHUNK_PART_LAST || flags >> (FLAG_SHARED_WINDOW_SHIFT + 1) ||
        (has_window && shared) ||
        (part && ((has_window && codec != CODEC_ZLIB_RAW) || size > LIMIT_SUBCHUNK_BYTES))) {
        r->bad = TRUE;
        return;
    }
    e->compressed_size = (uint32_t)compressed;
    e->size = (uint32_t)size;
    e->bits = (uint8_t)bits;
    e->skip = (uint32_t)skip;
    e->prefix = (uint8_t)((flags >> 1) & 1);
    e->part = (uint8_t)part;
    if (shared && !share_window(e, before, codec))
        r->bad = TRUE;
    if (!has_window)
        return;
    uint64_t window_size = saved_get_u64(r);
    if (r->bad || window_size == 0 || window_size > compressBound(CODEC_WINDOW_BYTES)) {
        r->bad = TRUE;
        return;
    }
    uint8_t *window = g_malloc(window_size);
    if (!saved_take(r, window, window_size)) {
        g_free(window);
        return;
    }
    e->window = window;
    e->window_size = (uint32_t)window_size;
}

struct stream *saved_get_stream(struct saved_reader *r, struct chunk_cache *cache, const char *name, int fd,
                                uint64_t file_size)
{
    uint64_t codec = saved_get_u64(r);
    uint64_t count = saved_get_count(r, CHUNK_SAVED_BYTES, LIMIT_STREAM_CHUNKS);
    if (r->bad || codec > CODEC_ZSTD || count == 0) {
        r->bad = TRUE;
        return NULL;
    }
    struct chunk_entry *entries = g_new0(struct chunk_entry, count);
    uint64_t expect = 0, windows = 0;
    for (uint64_t i = 0; i < count && !r->bad; i++) {
        get_chunk(r, &entries[i], i ? &entries[i - 1] : NULL, (enum codec)codec, expect, file_size);
        expect += entries[i].size;
        if (stream_chunk_owns_window(entries, i))
            windows += entries[i].window_size;
    }
    /* Windows beyond what the container's own scan keeps. */
    if (windows > stream_table_budget_bytes(file_size))
        r->bad = TRUE;
    if (r->bad) {
        free_entries(entries, count);
        return NULL;
    }
    return stream_new_chunked(cache, name, fd, (enum codec)codec, entries, count);
}
