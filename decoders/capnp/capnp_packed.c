/* Cap'n Proto packed stream framing: unpacks one message (segment table
 * and segments) from a stream or from memory, checking every size. */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "capnp.h"
#include "text.h"
#include "stream.h"
#include "tracefs_limits.h"

struct byte_source {
    struct stream *stream;         /* or: */
    const uint8_t *mem;
    size_t mem_size;
    uint64_t offset;               /* next byte to consume */
    uint64_t buf_start;
    size_t buf_len;
    const uint8_t *window;         /* buf_len bytes at buf_start: in the chunk or in buf */
    struct stream_cursor cursor;   /* pins the chunk the window points into */
    int cursor_open;
    uint8_t buf[4096];
};

/* Bytes to buffer at offset without crossing into the next chunk, so a
 * corrupt chunk fails only the messages that reach into it. */
static size_t chunk_room(struct stream *stream, uint64_t offset)
{
    size_t lo = 0, hi = stream_chunk_count(stream);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct chunk_entry *c = stream_chunk(stream, mid);
        if (offset >= c->stream_offset + c->size)
            lo = mid + 1;
        else if (offset < c->stream_offset)
            hi = mid;
        else {
            uint64_t room = c->stream_offset + c->size - offset;
            return room < sizeof ((struct byte_source *)0)->buf ? (size_t)room : sizeof ((struct byte_source *)0)->buf;
        }
    }
    return sizeof ((struct byte_source *)0)->buf;
}

static int source_refill(struct byte_source *src, uint8_t *out);

/* 0 = a byte, 1 = end of input, -1 = read error.  The window check is the
 * hot path of every index pass and view. */
static inline int source_byte(struct byte_source *src, uint8_t *out)
{
    uint64_t at = src->offset - src->buf_start;
    if (src->offset >= src->buf_start && at < src->buf_len) {
        *out = src->window[at];
        src->offset++;
        return 0;
    }
    return source_refill(src, out);
}

static int source_refill(struct byte_source *src, uint8_t *out)
{
    if (src->mem)
        return 1;   /* the window was all of it */
    {
        size_t room = chunk_room(src->stream, src->offset);
        if (!src->cursor_open) {
            stream_cursor_init(&src->cursor, src->stream, src->offset);
            src->cursor_open = 1;
        }
        stream_cursor_seek(&src->cursor, src->offset);
        /* Point into the cached chunk when possible: no copy per message. */
        const uint8_t *direct = room ? stream_cursor_peek(&src->cursor, room) : NULL;
        src->buf_start = src->offset;
        if (direct) {
            src->window = direct;
            src->buf_len = room;
        } else {
            ssize_t got = stream_read(src->stream, src->offset, src->buf, room);
            if (got < 0)
                return -1;
            src->window = src->buf;
            src->buf_len = (size_t)got;
            if (got == 0)
                return 1;
        }
    }
    *out = src->window[src->offset - src->buf_start];
    src->offset++;
    return 0;
}

struct unpacker {
    struct byte_source *src;
    uint32_t zero_words;           /* pending run of zero words */
    uint32_t literal_words;        /* pending run of raw words */
    const char *error;
};

static int need_byte(struct unpacker *u, uint8_t *out)
{
    int rc = source_byte(u->src, out);
    if (rc == 0)
        return 0;
    u->error = rc > 0 ? "message truncated" : "a compressed block cannot be read or decompressed (corrupt data)";
    return -1;
}

/* unpack_word when the window holds the longest packed word (a tag, 8
 * bytes, a run count): no call and no end check per byte, which made
 * unpacking a fifth of rendering `events`.  FALSE: take the careful path. */
static inline gboolean unpack_word_in_window(struct unpacker *u, uint8_t word[8])
{
    struct byte_source *src = u->src;
    uint64_t at = src->offset - src->buf_start;
    if (src->offset < src->buf_start || at + 10 > src->buf_len)
        return FALSE;
    const uint8_t *start = src->window + at, *p = start;
    if (u->literal_words) {
        u->literal_words--;
        memcpy(word, p, 8);
        src->offset += 8;
        return TRUE;
    }
    uint8_t tag = *p++;
    for (int i = 0; i < 8; i++) {   /* branch-free: tags are unpredictable */
        unsigned present = (tag >> i) & 1;
        word[i] = (uint8_t)(*p & (0u - present));
        p += present;
    }
    if (tag == 0x00)
        u->zero_words = *p++;
    else if (tag == 0xff)
        u->literal_words = *p++;
    src->offset += (uint64_t)(p - start);
    return TRUE;
}

/* Unpacks one word.  Returns 0, 1 for a clean end before the word when
 * `may_end`, -1 on error. */
static int unpack_word(struct unpacker *u, uint8_t word[8], int may_end)
{
    if (u->zero_words) {
        u->zero_words--;
        memset(word, 0, 8);
        return 0;
    }
    if (unpack_word_in_window(u, word))
        return 0;
    if (u->literal_words) {
        u->literal_words--;
        for (int i = 0; i < 8; i++)
            if (need_byte(u, &word[i]) < 0)
                return -1;
        return 0;
    }
    uint8_t tag;
    int rc = source_byte(u->src, &tag);
    if (rc > 0 && may_end)
        return 1;
    if (rc != 0) {
        u->error = rc > 0 ? "message truncated" : "a compressed block cannot be read or decompressed (corrupt data)";
        return -1;
    }
    for (int i = 0; i < 8; i++) {
        word[i] = 0;
        if ((tag >> i) & 1)
            if (need_byte(u, &word[i]) < 0)
                return -1;
    }
    uint8_t count;
    if (tag == 0x00 || tag == 0xff) {
        if (need_byte(u, &count) < 0)
            return -1;
        if (tag == 0x00)
            u->zero_words = count;
        else
            u->literal_words = count;
    }
    return 0;
}

/* Copies as much of a pending run of raw words as the window holds (most of
 * a frame's register blobs). Returns the words copied. */
static uint64_t literal_run_in_window(struct unpacker *u, uint8_t *out, uint64_t words)
{
    struct byte_source *src = u->src;
    uint64_t at = src->offset - src->buf_start;
    if (!u->literal_words || src->offset < src->buf_start || at >= src->buf_len)
        return 0;
    uint64_t n = MIN(MIN((uint64_t)u->literal_words, words), (src->buf_len - at) / 8);
    memcpy(out, src->window + at, n * 8);
    src->offset += n * 8;
    u->literal_words -= (uint32_t)n;
    return n;
}

static int unpack_words(struct unpacker *u, uint8_t *out, uint64_t words)
{
    for (uint64_t i = 0; i < words; i++) {
        /* Fast path for long zero runs (sparse frames, big holes). */
        if (u->zero_words && words - i > 1) {
            uint64_t n = u->zero_words < words - i ? u->zero_words : words - i;
            memset(out + i * 8, 0, n * 8);
            u->zero_words -= (uint32_t)n;
            i += n - 1;
            continue;
        }
        uint64_t copied = literal_run_in_window(u, out + i * 8, words - i);
        if (copied) {
            i += copied - 1;
            continue;
        }
        if (unpack_word(u, out + i * 8, 0) < 0)
            return -1;
    }
    return 0;
}

static int fail(struct capnp_message *msg, const char *why)
{
    msg->error = why;
    return -1;
}

/* Unpacks and drops `words` words, a bounded buffer at a time. */
static int skip_words(struct unpacker *u, uint64_t words)
{
    enum { STEP = 8192 };
    uint8_t *scratch = g_malloc(STEP * 8);
    int rc = 0;
    for (uint64_t done = 0; done < words && rc == 0; done += STEP)
        rc = unpack_words(u, scratch, MIN((uint64_t)STEP, words - done));
    g_free(scratch);
    return rc;
}

/* `keep_words` (at most LIMIT_CAPNP_WORDS, what may be held): a message
 * of more words is read past and dropped (2) when `skip_big` and it is
 * below LIMIT_CAPNP_SKIP_WORDS, refused otherwise. */
static int read_message(struct byte_source *src, struct capnp_message *msg, uint64_t keep_words, gboolean skip_big)
{
    memset(msg, 0, sizeof *msg);
    struct unpacker u = { .src = src };
    uint8_t first[8];
    int rc = unpack_word(&u, first, 1);
    if (rc != 0)
        return rc > 0 ? 1 : fail(msg, u.error);
    uint64_t segment_count = (uint64_t)load_le32(first) + 1;
    if (segment_count > LIMIT_CAPNP_SEGMENTS)
        return fail(msg, "too many segments");
    uint64_t table_words = (4 + 4 * segment_count + 7) / 8;
    uint8_t table[8 * ((4 + 4 * LIMIT_CAPNP_SEGMENTS + 7) / 8)];
    memcpy(table, first, 8);
    if (unpack_words(&u, table + 8, table_words - 1) < 0)
        return fail(msg, u.error);
    uint64_t total = 0;
    for (uint64_t i = 0; i < segment_count; i++)
        total += load_le32(table + 4 + 4 * i);
    if (total > LIMIT_CAPNP_SKIP_WORDS)
        return fail(msg, "message larger than the limit");
    /* Packing turns at most 2 input bytes into 256 zero words: a size
     * table claiming more than that cannot be real, so do not allocate it. */
    uint64_t input_end = src->mem ? src->mem_size : stream_size(src->stream);
    uint64_t input_left = input_end > src->offset ? input_end - src->offset : 0;
    if (total > input_left * 128 + 1)
        return fail(msg, "segment sizes exceed the remaining input");
    if (total > keep_words) {
        if (!skip_big)
            return fail(msg, "message larger than the limit");
        if (skip_words(&u, total) < 0)
            return fail(msg, u.error);
        if (u.zero_words || u.literal_words)
            return fail(msg, "packed run crosses the message end");
        return 2;
    }
    msg->buffer = g_malloc(total ? total * 8 : 8);
    msg->segments = g_new(struct capnp_segment, segment_count);
    msg->segment_count = (uint32_t)segment_count;
    uint64_t at = 0;
    for (uint64_t i = 0; i < segment_count; i++) {
        msg->segments[i].words = msg->buffer + at * 8;
        msg->segments[i].word_count = load_le32(table + 4 + 4 * i);
        at += msg->segments[i].word_count;
    }
    if (unpack_words(&u, msg->buffer, total) < 0)
        return fail(msg, u.error);
    if (u.zero_words || u.literal_words)
        return fail(msg, "packed run crosses the message end");
    msg->traversal_left = total * LIMIT_CAPNP_TRAVERSAL_FACTOR + 1024;
    return 0;
}

static int read_packed_stream(struct stream *stream, uint64_t offset, uint64_t keep_words, gboolean skip_big,
                              struct capnp_message *msg, uint64_t *end)
{
    struct byte_source *src = g_new(struct byte_source, 1);
    src->stream = stream;
    src->mem = NULL;
    src->mem_size = 0;
    src->offset = offset;
    src->buf_start = offset;
    src->buf_len = 0;
    src->window = NULL;
    src->cursor_open = 0;
    int rc = read_message(src, msg, MIN(keep_words, (uint64_t)LIMIT_CAPNP_WORDS), skip_big);
    *end = src->offset;
    if (src->cursor_open)
        stream_cursor_finish(&src->cursor);
    g_free(src);
    return rc;
}

int capnp_read_packed(struct stream *stream, uint64_t offset, struct capnp_message *msg, uint64_t *end)
{
    return read_packed_stream(stream, offset, LIMIT_CAPNP_WORDS, FALSE, msg, end);
}

int capnp_read_packed_bounded(struct stream *stream, uint64_t offset, uint64_t keep_words, struct capnp_message *msg,
                              uint64_t *end)
{
    return read_packed_stream(stream, offset, keep_words, TRUE, msg, end);
}

int capnp_read_packed_bytes(const uint8_t *data, size_t size, struct capnp_message *msg, size_t *end)
{
    struct byte_source src = { .mem = data, .mem_size = size, .window = data, .buf_len = size };
    int rc = read_message(&src, msg, LIMIT_CAPNP_WORDS, FALSE);
    *end = (size_t)src.offset;
    return rc;
}

void capnp_message_clear(struct capnp_message *msg)
{
    g_free(msg->buffer);
    g_free(msg->segments);
    msg->buffer = NULL;
    msg->segments = NULL;
    msg->segment_count = 0;
}
