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

/* Bytes from offset to the end of its chunk, so that a window never
 * crosses into the next chunk and a corrupt chunk fails only the messages
 * that reach into it; sizeof buf when the stream has no chunk table. */
static uint64_t chunk_room(struct stream *stream, uint64_t offset)
{
    size_t lo = 0, hi = stream_chunk_count(stream);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct chunk_entry *c = stream_chunk(stream, mid);
        if (offset >= c->stream_offset + c->size)
            lo = mid + 1;
        else if (offset < c->stream_offset)
            hi = mid;
        else
            return c->stream_offset + c->size - offset;
    }
    return sizeof ((struct byte_source *)0)->buf;
}

static int source_refill(struct byte_source *src);

/* 0 = a byte, 1 = end of input, -1 = read error.  The careful path: the
 * window's edges, where unpack_in_window stops. */
static inline int source_byte(struct byte_source *src, uint8_t *out)
{
    uint64_t at = src->offset - src->buf_start;
    if (src->offset < src->buf_start || at >= src->buf_len) {
        int rc = source_refill(src);
        if (rc != 0)
            return rc;
        at = 0;
    }
    *out = src->window[at];
    src->offset++;
    return 0;
}

/* Points the window at src->offset: 0, 1 at the end of input, -1 on a read
 * error. */
static int source_refill(struct byte_source *src)
{
    if (src->mem)
        return 1;   /* the window was all of it */
    uint64_t room = chunk_room(src->stream, src->offset);
    if (!src->cursor_open) {
        stream_cursor_init(&src->cursor, src->stream, src->offset);
        src->cursor_open = 1;
    }
    stream_cursor_seek(&src->cursor, src->offset);
    /* The rest of the cached chunk when it can be pointed into: no copy,
     * and one window for all the messages a record walk reads from it. */
    const uint8_t *direct = room && room <= SIZE_MAX ? stream_cursor_peek(&src->cursor, (size_t)room) : NULL;
    src->buf_start = src->offset;
    if (direct) {
        src->window = direct;
        src->buf_len = (size_t)room;
        return 0;
    }
    ssize_t got = stream_read(src->stream, src->offset, src->buf, (size_t)MIN(room, (uint64_t)sizeof src->buf));
    if (got < 0)
        return -1;
    src->window = src->buf;
    src->buf_len = (size_t)got;
    return got == 0 ? 1 : 0;
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

/* For each tag, where each byte of the unpacked word comes from: its index
 * among the tag's present bytes, or 8 for an absent (zero) byte.  A word
 * is then eight independent table loads instead of a chain of per-bit
 * tests and pointer bumps. */
#define TAG_BIT(t, i) (((t) >> (i)) & 1)
#define TAG_RANK(t, i)                                                                                    \
    (((i) > 0 ? TAG_BIT(t, 0) : 0) + ((i) > 1 ? TAG_BIT(t, 1) : 0) + ((i) > 2 ? TAG_BIT(t, 2) : 0) +     \
     ((i) > 3 ? TAG_BIT(t, 3) : 0) + ((i) > 4 ? TAG_BIT(t, 4) : 0) + ((i) > 5 ? TAG_BIT(t, 5) : 0) +     \
     ((i) > 6 ? TAG_BIT(t, 6) : 0) + ((i) > 7 ? TAG_BIT(t, 7) : 0))
#define TAG_SOURCE(t, i) (TAG_BIT(t, i) ? TAG_RANK(t, i) : 8)
#define TAG_ROW(t)                                                                                        \
    { TAG_SOURCE(t, 0), TAG_SOURCE(t, 1), TAG_SOURCE(t, 2), TAG_SOURCE(t, 3),                            \
      TAG_SOURCE(t, 4), TAG_SOURCE(t, 5), TAG_SOURCE(t, 6), TAG_SOURCE(t, 7), TAG_RANK(t, 8) }
#define TAG_ROWS4(t) TAG_ROW(t), TAG_ROW((t) + 1), TAG_ROW((t) + 2), TAG_ROW((t) + 3)
#define TAG_ROWS16(t) TAG_ROWS4(t), TAG_ROWS4((t) + 4), TAG_ROWS4((t) + 8), TAG_ROWS4((t) + 12)
#define TAG_ROWS64(t) TAG_ROWS16(t), TAG_ROWS16((t) + 16), TAG_ROWS16((t) + 32), TAG_ROWS16((t) + 48)

/* [tag][0..7]: the sources above; [tag][8]: how many bytes follow the tag. */
static const uint8_t tag_layout[256][9] = { TAG_ROWS64(0), TAG_ROWS64(64), TAG_ROWS64(128), TAG_ROWS64(192) };

/* The longest packed word: its tag, 8 bytes and a run count. */
#define PACKED_WORD_MAX_BYTES 10

/* ---- words one by one: every tag but 0xff ----
 * Each expander unpacks words from *pp into out, at most `words`, while
 * the window holds PACKED_WORD_MAX_BYTES (so that the 8 bytes after a tag
 * may be loaded whole), stopping at a 0xff tag (a literal run) or after a
 * zero word whose run count (*zeros) is not 0; it advances *pp and returns
 * the words written.  A frame's registers are mostly such words, so this
 * is most of unpacking.  A zero tag's row makes a zero word like any
 * other. */
typedef size_t (*expand_words_fn)(const uint8_t **pp, const uint8_t *end, uint8_t *out, size_t words,
                                  uint32_t *zeros);

static size_t expand_words_scalar(const uint8_t **pp, const uint8_t *end, uint8_t *out, size_t words,
                                  uint32_t *zeros)
{
    const uint8_t *p = *pp;
    size_t n = 0;
    uint8_t in[9];
    in[8] = 0;   /* the source of an absent byte */
    while (n < words && end - p >= PACKED_WORD_MAX_BYTES && p[0] != 0xff) {
        uint8_t tag = p[0];
        const uint8_t *layout = tag_layout[tag];
        memcpy(in, p + 1, 8);
        for (int i = 0; i < 8; i++)
            out[n * 8 + (size_t)i] = in[layout[i]];
        p += 1 + layout[8];
        n++;
        if (tag == 0x00 && (*zeros = *p++) != 0)
            break;
    }
    *pp = p;
    return n;
}

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CAPNP_EXPAND_SSSE3 1
/* pshufb with the tag's row as the shuffle: source 8 picks a byte of the
 * zeroed upper half, so an absent byte comes out 0. */
__attribute__((target("ssse3")))
static size_t expand_words_ssse3(const uint8_t **pp, const uint8_t *end, uint8_t *out, size_t words,
                                 uint32_t *zeros)
{
    const uint8_t *p = *pp;
    size_t n = 0;
    while (n < words && end - p >= PACKED_WORD_MAX_BYTES && p[0] != 0xff) {
        uint8_t tag = p[0];
        const uint8_t *layout = tag_layout[tag];
        __m128i bytes = _mm_loadl_epi64((const __m128i *)(const void *)(p + 1));
        __m128i shuffle = _mm_loadl_epi64((const __m128i *)(const void *)layout);
        _mm_storel_epi64((__m128i *)(void *)(out + n * 8), _mm_shuffle_epi8(bytes, shuffle));
        p += 1 + layout[8];
        n++;
        if (tag == 0x00 && (*zeros = *p++) != 0)
            break;
    }
    *pp = p;
    return n;
}
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define CAPNP_EXPAND_NEON 1
/* tbl with the tag's row as the indices: index 8 is out of the 8-byte
 * table, so an absent byte comes out 0. */
static size_t expand_words_neon(const uint8_t **pp, const uint8_t *end, uint8_t *out, size_t words,
                                uint32_t *zeros)
{
    const uint8_t *p = *pp;
    size_t n = 0;
    while (n < words && end - p >= PACKED_WORD_MAX_BYTES && p[0] != 0xff) {
        uint8_t tag = p[0];
        const uint8_t *layout = tag_layout[tag];
        vst1_u8(out + n * 8, vtbl1_u8(vld1_u8(p + 1), vld1_u8(layout)));
        p += 1 + layout[8];
        n++;
        if (tag == 0x00 && (*zeros = *p++) != 0)
            break;
    }
    *pp = p;
    return n;
}
#endif

/* 0: not chosen yet, 1: scalar, 2: vector (set by capnp_unpack_force_scalar
 * in tests, else on first use from what the CPU has). */
static int expand_choice;

void capnp_unpack_force_scalar(int scalar)
{
    __atomic_store_n(&expand_choice, scalar ? 1 : 0, __ATOMIC_RELAXED);
}

static int vector_expand_available(void)
{
#if defined(CAPNP_EXPAND_SSSE3)
    __builtin_cpu_init();
    return __builtin_cpu_supports("ssse3");
#elif defined(CAPNP_EXPAND_NEON)
    return 1;
#else
    return 0;
#endif
}

static expand_words_fn choose_expand(void)
{
    int choice = __atomic_load_n(&expand_choice, __ATOMIC_RELAXED);
    if (choice == 0) {
        choice = vector_expand_available() ? 2 : 1;
        __atomic_store_n(&expand_choice, choice, __ATOMIC_RELAXED);
    }
#if defined(CAPNP_EXPAND_SSSE3)
    if (choice == 2)
        return expand_words_ssse3;
#elif defined(CAPNP_EXPAND_NEON)
    if (choice == 2)
        return expand_words_neon;
#endif
    return expand_words_scalar;
}

/* Unpacks up to `words` words, as many as the window holds whole: pending
 * runs, words one by one, and literal runs' tags while the window has the longest
 * packed word left, so that no byte needs its own end check.  Returns the
 * words written; the caller takes the careful path (unpack_word) for the
 * next one, at the window's edge, where the input ends or is unreadable. */
static uint64_t unpack_in_window(struct unpacker *u, uint8_t *out, uint64_t words)
{
    struct byte_source *src = u->src;
    uint64_t at = src->offset - src->buf_start;
    if (src->offset < src->buf_start || at > src->buf_len)
        return 0;
    expand_words_fn expand = choose_expand();
    const uint8_t *start = src->window + at, *p = start, *end = src->window + src->buf_len;
    uint8_t *o = out;
    const uint8_t *o_end = out + words * 8;
    uint32_t zeros = u->zero_words, literals = u->literal_words;
    while (o < o_end) {
        if (zeros) {
            uint32_t n = (uint32_t)MIN((uint64_t)zeros, (uint64_t)(o_end - o) / 8);
            memset(o, 0, (size_t)n * 8);
            o += (size_t)n * 8;
            zeros -= n;
            continue;
        }
        if (literals) {
            uint32_t n = (uint32_t)MIN(MIN((uint64_t)literals, (uint64_t)(o_end - o) / 8), (uint64_t)(end - p) / 8);
            if (n == 0)
                break;
            memcpy(o, p, (size_t)n * 8);
            o += (size_t)n * 8;
            p += (size_t)n * 8;
            literals -= n;
            continue;
        }
        o += expand(&p, end, o, (size_t)(o_end - o) / 8, &zeros) * 8;
        if (zeros)
            continue;
        if (o == o_end || end - p < PACKED_WORD_MAX_BYTES)
            break;
        /* The expander stopped at a literal run's tag: its word, then the
         * count. */
        memcpy(o, p + 1, 8);
        literals = p[9];
        p += 10;
        o += 8;
    }
    u->zero_words = zeros;
    u->literal_words = literals;
    src->offset += (uint64_t)(p - start);
    return (uint64_t)(o - out) / 8;
}

/* Unpacks one word, byte by byte: the careful path at the window's edges.
 * Returns 0, 1 for a clean end before the word when `may_end`, -1 on
 * error. */
static int unpack_word(struct unpacker *u, uint8_t word[8], int may_end)
{
    if (u->zero_words) {
        u->zero_words--;
        memset(word, 0, 8);
        return 0;
    }
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

/* A message's first word: as unpack_word with `may_end`, after pointing a
 * stream's window at the message, so that the fast path takes it too. */
static int unpack_first_word(struct unpacker *u, uint8_t word[8])
{
    struct byte_source *src = u->src;
    if (!src->mem && src->buf_len == 0) {
        int rc = source_refill(src);
        if (rc > 0)
            return 1;
        if (rc < 0) {
            u->error = "a compressed block cannot be read or decompressed (corrupt data)";
            return -1;
        }
    }
    if (unpack_in_window(u, word, 1) == 1)
        return 0;
    return unpack_word(u, word, 1);
}

static int unpack_words(struct unpacker *u, uint8_t *out, uint64_t words)
{
    uint64_t done = 0;
    while (done < words) {
        done += unpack_in_window(u, out + done * 8, words - done);
        if (done == words)
            break;
        if (unpack_word(u, out + done * 8, 0) < 0)
            return -1;
        done++;
    }
    return 0;
}

/* ---- the block a thread keeps for its next message ----
 * A record walk reads message after message, each in a block of about the
 * same size: a malloc and a free for each were a tenth of reading one, and
 * a block past the allocator's mmap threshold (frontend/main.c) was a
 * fresh mapping, faulted in and unmapped, every time.  So the last block a
 * thread frees, up to LIMIT_CAPNP_SPARE_BYTES, waits for the thread's next
 * message; it is freed when the thread ends. */
static _Thread_local struct spare_block {
    uint8_t *block;
    size_t bytes;
    gboolean registered;
} spare;

static void free_spare(gpointer data)
{
    struct spare_block *s = data;
    g_free(s->block);
    s->block = NULL;
    s->bytes = 0;
}

static GPrivate spare_owner = G_PRIVATE_INIT(free_spare);

/* A block of at least `need` bytes: the thread's spare when it is big
 * enough.  *bytes = its size. */
static uint8_t *block_take(size_t need, size_t *bytes)
{
    if (spare.block && spare.bytes >= need) {
        uint8_t *block = spare.block;
        *bytes = spare.bytes;
        spare.block = NULL;
        spare.bytes = 0;
        return block;
    }
    *bytes = need;
    return g_malloc(need);
}

/* Frees a message's block, or keeps it as the thread's spare (the larger
 * of the two, when it fits the limit). */
static void block_give(uint8_t *block, size_t bytes)
{
    if (!block || bytes > LIMIT_CAPNP_SPARE_BYTES || (spare.block && spare.bytes >= bytes)) {
        g_free(block);
        return;
    }
    if (!spare.registered) {
        g_private_set(&spare_owner, &spare);   /* frees the spare at the thread's end */
        spare.registered = TRUE;
    }
    g_free(spare.block);
    spare.block = block;
    spare.bytes = bytes;
}

/* The segment table follows the words in the message's one block. */
G_STATIC_ASSERT(_Alignof(struct capnp_segment) <= 8);

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
    int rc = unpack_first_word(&u, first);
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
    /* One block: the words, then the segment table (no padding: 8-byte
     * words keep it aligned), so a message costs one allocation. */
    msg->buffer = block_take((total ? total * 8 : 8) + segment_count * sizeof(struct capnp_segment),
                             &msg->buffer_bytes);
    msg->segments = (struct capnp_segment *)(msg->buffer + (total ? total * 8 : 8));
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
    /* On the stack: buf is only written when a window cannot point into
     * the cached chunk, so a message costs no allocation for it. */
    struct byte_source src;
    src.stream = stream;
    src.mem = NULL;
    src.mem_size = 0;
    src.offset = offset;
    src.buf_start = offset;
    src.buf_len = 0;
    src.window = NULL;
    src.cursor_open = 0;
    int rc = read_message(&src, msg, MIN(keep_words, (uint64_t)LIMIT_CAPNP_WORDS), skip_big);
    *end = src.offset;
    if (src.cursor_open)
        stream_cursor_finish(&src.cursor);
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
    block_give(msg->buffer, msg->buffer_bytes);   /* the segment table is in the same block */
    msg->buffer = NULL;
    msg->buffer_bytes = 0;
    msg->segments = NULL;
    msg->segment_count = 0;
}
