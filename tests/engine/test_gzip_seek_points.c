/* A gzip file's seek points (compressed_file_gzip): every chunk decodes to
 * the bytes the file holds; the points' packed windows stay within the
 * budget they are given, chunks joined up to LIMIT_GZIP_LONGEST_SPAN
 * where they would not; a budget that even such chunks cannot meet ends
 * the stream with an /errors line.  The hostile file is 32 KiB of noise at the end of every segment
 * of zeros: each window then packs to more than 32 KiB while its stretch
 * of the file is a few hundred bytes more.  A deflate block of 20 MiB
 * (one literal, then matches of 258 bytes: 130 KB of file) is served in
 * sub-chunks of 1 MiB that share its seek point's window.  The scan
 * leaves its chunks' output in the cache, except a chunk the file's end
 * cuts or any once chunks are joined; every chunk is read from there and
 * decoded from its seek point. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <glib.h>
#include "chunk_cache.h"
#include "compressed_file.h"
#include "saved_bytes.h"
#include "saved_stream.h"
#include "stream.h"
#include "trace.h"
#include "trace_fixture.h"
#include "tracefs_limits.h"

#define NOISE 32768u

/* SEGMENTS segments of SEGMENT bytes (zeros, then NOISE bytes of noise),
 * each ending a deflate block; the output in *data. */
static char *write_noisy_gzip(size_t segments, size_t segment, GByteArray **data)
{
    char *path = g_strdup("/tmp/tracefs-gzip-XXXXXX");
    int fd = g_mkstemp(path);
    g_assert_cmpint(fd, >=, 0);
    GRand *rand = g_rand_new_with_seed(11);
    *data = g_byte_array_sized_new((guint)(segments * segment));
    z_stream z = { 0 };
    g_assert_cmpint(deflateInit2(&z, 6, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY), ==, Z_OK);
    uint8_t *in = g_malloc0(segment), *out = g_malloc(deflateBound(&z, segment) + 64);
    for (size_t s = 0; s < segments; s++) {
        memset(in, 0, segment - NOISE);
        for (size_t k = segment - NOISE; k < segment; k++)
            in[k] = (uint8_t)g_rand_int(rand);
        g_byte_array_append(*data, in, (guint)segment);
        z.next_in = in;
        z.avail_in = (uInt)segment;
        do {
            z.next_out = out;
            z.avail_out = (uInt)(deflateBound(&z, segment) + 64);
            int rc = deflate(&z, s + 1 == segments ? Z_FINISH : Z_FULL_FLUSH);
            g_assert_true(rc == Z_OK || rc == Z_STREAM_END);
            size_t n = (size_t)(z.next_out - out);
            g_assert_cmpint(write(fd, out, n), ==, (ssize_t)n);
        } while (z.avail_out == 0);
    }
    deflateEnd(&z);
    g_free(in);
    g_free(out);
    g_rand_free(rand);
    close(fd);
    return path;
}

struct scanned {
    struct trace trace;
    struct trace_error_list errors;
    struct stream *stream;
};

/* The scan on a trace made of just what it uses, its errors held back. */
static void scan(struct scanned *s, const char *path, uint64_t span, uint64_t budget)
{
    memset(s, 0, sizeof *s);
    trace_fixture_open(&s->trace, path, 256u << 20);
    trace_errors_defer(&s->errors);
    s->stream = compressed_file_gzip(&s->trace, span, budget);
    trace_errors_defer(NULL);
    g_assert_nonnull(s->stream);
}

static void scanned_free(struct scanned *s)
{
    trace_fixture_close(&s->trace);
    trace_error_list_clear(&s->errors);
}

static uint64_t held_bytes(struct stream *stream)
{
    uint64_t held = 0;
    for (size_t i = 0; i < stream_chunk_count(stream); i++)
        held += sizeof(struct chunk_entry) +
                (stream_chunk_owns_window(stream_chunk(stream, 0), i) ? stream_chunk(stream, i)->window_size : 0);
    return held;
}

/* The first `count` chunks read back as `data` holds them, last first. */
static void expect_chunks(struct stream *stream, const GByteArray *data, size_t count)
{
    for (size_t i = count; i-- > 0;) {
        const struct chunk_entry *chunk = stream_chunk(stream, i);
        uint8_t *buf = g_malloc(chunk->size);
        g_assert_cmpint(stream_read_exact(stream, chunk->stream_offset, buf, chunk->size), ==, 0);
        g_assert_true(memcmp(buf, data->data + chunk->stream_offset, chunk->size) == 0);
        g_free(buf);
    }
}

/* The stream reads back as the first `size` bytes of `data`, chunk by
 * chunk from the last to the first: as the scan left the cache (with the
 * chunks it kept), then with every one decoded from its own seek point. */
static void expect_bytes(struct stream *stream, const GByteArray *data, uint64_t size)
{
    g_assert_cmpuint(stream_size(stream), ==, size);
    expect_chunks(stream, data, stream_chunk_count(stream));
    stream_forget_cached(stream);
    expect_chunks(stream, data, stream_chunk_count(stream));
}

static uint64_t cache_bytes_held(const struct scanned *s)
{
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(s->trace.cache, &stats);
    return stats.bytes_held;
}

static guint error_count(const struct scanned *s)
{
    return s->errors.lines ? s->errors.lines->len : 0;
}

/* A budget that holds them all: a point per 128 KiB segment. */
static void test_every_point(void)
{
    GByteArray *data;
    char *path = write_noisy_gzip(64, 128u << 10, &data);
    struct scanned s;
    scan(&s, path, 128u << 10, 64u << 20);
    g_assert_cmpuint(stream_chunk_count(s.stream), ==, 64);
    g_assert_cmpuint(error_count(&s), ==, 0);
    /* The scan kept every chunk's output for the cache, and nothing else. */
    g_assert_cmpuint(cache_bytes_held(&s), >=, data->len);
    g_assert_cmpuint(cache_bytes_held(&s), <=, data->len + data->len / 8);
    expect_bytes(s.stream, data, data->len);
    scanned_free(&s);
    unlink(path);
    g_free(path);
    g_byte_array_free(data, TRUE);
}

/* A budget of 10 noisy windows: chunks joined up to the longest span, the
 * stream whole. */
static void test_thinned(void)
{
    GByteArray *data;
    char *path = write_noisy_gzip(64, 128u << 10, &data);
    struct scanned s;
    uint64_t budget = 10 * (NOISE + 200);
    scan(&s, path, 128u << 10, budget);
    g_assert_cmpuint(error_count(&s), ==, 0);
    /* Joined chunks are not the ones the scan kept: none is. */
    g_assert_cmpuint(cache_bytes_held(&s), ==, 0);
    g_assert_cmpuint(held_bytes(s.stream), <=, budget);
    g_assert_cmpuint(stream_chunk_count(s.stream), >=, 2);
    g_assert_cmpuint(stream_chunk_count(s.stream), <=, 10);
    for (size_t i = 0; i < stream_chunk_count(s.stream); i++)
        g_assert_cmpuint(stream_chunk(s.stream, i)->size, <=, LIMIT_GZIP_LONGEST_SPAN);
    expect_bytes(s.stream, data, data->len);
    scanned_free(&s);
    unlink(path);
    g_free(path);
    g_byte_array_free(data, TRUE);
}

/* A file cut inside its last chunk: the scan keeps the chunks before it
 * for the cache, not the last one, whose reader decodes it and meets the
 * cut itself. */
static void test_cut_keeps_whole_chunks(void)
{
    GByteArray *data;
    char *path = write_noisy_gzip(8, 128u << 10, &data);
    struct stat st;
    g_assert_cmpint(stat(path, &st), ==, 0);
    g_assert_cmpint(truncate(path, st.st_size - 100), ==, 0);
    struct scanned s;
    scan(&s, path, 128u << 10, 64u << 20);
    g_assert_cmpuint(error_count(&s), ==, 1);
    g_assert_nonnull(strstr(s.errors.lines->pdata[0], "cut off"));
    size_t count = stream_chunk_count(s.stream);
    g_assert_cmpuint(count, ==, 8);
    const struct chunk_entry *last = stream_chunk(s.stream, count - 1);
    g_assert_cmpuint(cache_bytes_held(&s), ==, last->stream_offset);
    expect_chunks(s.stream, data, count - 1);
    stream_forget_cached(s.stream);
    expect_chunks(s.stream, data, count - 1);
    scanned_free(&s);
    unlink(path);
    g_free(path);
    g_byte_array_free(data, TRUE);
}

/* Room for one noisy window: chunks are joined, then the stream ends at
 * the last point with an /errors line. */
static void test_budget_too_small(void)
{
    GByteArray *data;
    size_t segment = 1u << 20;
    char *path = write_noisy_gzip(6 * LIMIT_GZIP_LONGEST_SPAN / segment, segment, &data);
    struct scanned s;
    scan(&s, path, 128u << 10, NOISE + 1000);
    g_assert_cmpuint(error_count(&s), ==, 1);
    g_assert_nonnull(strstr(s.errors.lines->pdata[0], "needs more seek points"));
    g_assert_cmpuint(stream_size(s.stream), <, data->len);
    g_assert_cmpuint(stream_size(s.stream), >=, LIMIT_GZIP_LONGEST_SPAN);
    for (size_t i = 0; i < stream_chunk_count(s.stream); i++)
        g_assert_cmpuint(stream_chunk(s.stream, i)->size, <=, LIMIT_GZIP_LONGEST_SPAN + segment);
    g_assert_cmpuint(held_bytes(s.stream), <=, NOISE + 1000);
    expect_bytes(s.stream, data, stream_size(s.stream));
    scanned_free(&s);
    unlink(path);
    g_free(path);
    g_byte_array_free(data, TRUE);
}

/* Deflate's bits, least significant first; Huffman codes go in most
 * significant bit first. */
struct bit_writer {
    GByteArray *out;
    uint32_t bits, count;
};

static void put_bits(struct bit_writer *w, uint32_t value, uint32_t count)
{
    w->bits |= value << w->count;
    w->count += count;
    while (w->count >= 8) {
        uint8_t byte = (uint8_t)w->bits;
        g_byte_array_append(w->out, &byte, 1);
        w->bits >>= 8;
        w->count -= 8;
    }
}

static void put_code(struct bit_writer *w, uint32_t code, uint32_t length)
{
    uint32_t reversed = 0;
    for (uint32_t k = 0; k < length; k++)
        reversed |= ((code >> k) & 1) << (length - 1 - k);
    put_bits(w, reversed, length);
}

/* A fixed-Huffman literal (0..143) and the block's end. */
static void put_literal(struct bit_writer *w, uint8_t literal) { put_code(w, 0x30u + literal, 8); }
static void put_block_end(struct bit_writer *w) { put_code(w, 0, 7); }

/* Length 258 (symbol 285), distance 1 (distance code 0): the byte before, 258 times. */
static void put_repeat_258(struct bit_writer *w)
{
    put_code(w, 0xC0u + 5, 8);
    put_code(w, 0, 5);
}

/* A gzip file of two fixed-Huffman blocks: 2.5 MiB of letters, then one
 * block of `repeats` matches of 258 bytes; the output in *data. */
static char *write_long_block_gzip(size_t repeats, GByteArray **data)
{
    static const uint8_t header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff };
    struct bit_writer w = { g_byte_array_new(), 0, 0 };
    g_byte_array_append(w.out, header, sizeof header);
    *data = g_byte_array_new();
    GRand *rand = g_rand_new_with_seed(5);
    put_bits(&w, 0, 1);
    put_bits(&w, 1, 2);
    for (size_t k = 0; k < (5u << 19); k++) {
        uint8_t letter = (uint8_t)('a' + g_rand_int_range(rand, 0, 26));
        put_literal(&w, letter);
        g_byte_array_append(*data, &letter, 1);
    }
    put_block_end(&w);
    put_bits(&w, 1, 1);
    put_bits(&w, 1, 2);
    put_literal(&w, 'z');
    for (size_t k = 0; k < repeats; k++)
        put_repeat_258(&w);
    put_block_end(&w);
    put_bits(&w, 0, 7);
    g_byte_array_set_size(*data, (guint)((*data)->len + 1 + repeats * 258));
    memset((*data)->data + (5u << 19), 'z', 1 + repeats * 258);
    uint32_t trailer[2] = { GUINT32_TO_LE((uint32_t)crc32(0, (*data)->data, (*data)->len)),
                            GUINT32_TO_LE((*data)->len) };
    g_byte_array_append(w.out, (const guint8 *)trailer, sizeof trailer);
    char *path = g_strdup("/tmp/tracefs-gzip-XXXXXX");
    int fd = g_mkstemp(path);
    g_assert_cmpint(write(fd, w.out->data, w.out->len), ==, (ssize_t)w.out->len);
    close(fd);
    g_byte_array_free(w.out, TRUE);
    g_rand_free(rand);
    return path;
}

/* Reads the whole stream in 64 KiB reads, comparing with `data`. */
static void expect_read_through(struct stream *stream, const GByteArray *data)
{
    uint8_t *buf = g_malloc(1u << 16);
    for (uint64_t at = 0; at < data->len; at += 1u << 16) {
        size_t len = (size_t)MIN((uint64_t)1u << 16, data->len - at);
        g_assert_cmpint(stream_read_exact(stream, at, buf, len), ==, 0);
        g_assert_true(memcmp(buf, data->data + at, len) == 0);
    }
    g_free(buf);
}

/* The stream's table through the saved layer: the parts and their shared
 * window come back as they were. */
static struct stream *saved_round_trip(struct scanned *s)
{
    struct saved_writer *out = saved_writer_new();
    saved_put_stream(out, s->stream);
    GByteArray *bytes = saved_writer_join(out);
    saved_writer_free(out);
    g_assert_cmpuint(bytes->len, ==, saved_stream_bytes(s->stream));
    struct saved_reader r;
    saved_reader_init(&r, bytes->data, bytes->len);
    struct stream *loaded = saved_get_stream(&r, s->trace.cache, "loaded", s->trace.fd, (uint64_t)s->trace.st.st_size);
    g_assert_nonnull(loaded);
    g_assert_true(saved_reader_done(&r));
    g_byte_array_free(bytes, TRUE);
    g_assert_cmpuint(stream_chunk_count(loaded), ==, stream_chunk_count(s->stream));
    for (size_t i = 0; i < stream_chunk_count(loaded); i++) {
        const struct chunk_entry *a = stream_chunk(s->stream, i), *b = stream_chunk(loaded, i);
        g_assert_cmpuint(a->part, ==, b->part);
        g_assert_cmpuint(a->skip, ==, b->skip);
        g_assert_cmpuint(a->size, ==, b->size);
        g_assert_cmpuint(a->window_size, ==, b->window_size);
        g_assert_cmpint(stream_chunk_owns_window(stream_chunk(s->stream, 0), i), ==,
                        stream_chunk_owns_window(stream_chunk(loaded, 0), i));
    }
    return loaded;
}

static void test_long_block(void)
{
    GByteArray *data;
    size_t repeats = (20u << 20) / 258;
    char *path = write_long_block_gzip(repeats, &data);
    struct scanned s;
    scan(&s, path, LIMIT_APITRACE_GZIP_SPAN, 64u << 20);
    g_assert_cmpuint(error_count(&s), ==, 0);
    g_assert_cmpuint(stream_size(s.stream), ==, data->len);
    size_t parts = 0, windows = 0;
    for (size_t i = 0; i < stream_chunk_count(s.stream); i++) {
        const struct chunk_entry *chunk = stream_chunk(s.stream, i);
        g_assert_cmpuint(chunk->size, <=, LIMIT_GZIP_SUBCHUNK_THRESHOLD);
        parts += chunk->part != CHUNK_WHOLE;
        windows += stream_chunk_owns_window(stream_chunk(s.stream, 0), i);
        if (chunk->part != CHUNK_WHOLE) {
            g_assert_nonnull(chunk->window);
            g_assert_cmpuint(chunk->size, <=, LIMIT_SUBCHUNK_BYTES);
        }
    }
    g_assert_cmpuint(parts, ==, (data->len - (5u << 19) + LIMIT_SUBCHUNK_BYTES - 1) / LIMIT_SUBCHUNK_BYTES);
    g_assert_cmpuint(windows, ==, 1);
    expect_bytes(s.stream, data, data->len);
    struct stream *loaded = saved_round_trip(&s);
    expect_bytes(loaded, data, data->len);
    stream_free(loaded);
    /* Read through a 4 MiB cache: parts come and go (a whole chunk would
     * be 20 MiB at once).  The peak counts a part before the eviction
     * that makes room for it. */
    struct chunk_cache *small = chunk_cache_new(4u << 20);
    g_ptr_array_free(s.trace.streams, TRUE);
    chunk_cache_free(s.trace.cache);
    s.trace.cache = small;
    s.trace.streams = g_ptr_array_new_with_free_func((GDestroyNotify)stream_free);
    trace_errors_defer(&s.errors);
    s.stream = compressed_file_gzip(&s.trace, LIMIT_APITRACE_GZIP_SPAN, 64u << 20);
    trace_errors_defer(NULL);
    gint64 loaded_bytes = 0;
    stream_count_loads(s.stream, &loaded_bytes);
    expect_read_through(s.stream, data);
    /* Read in order, each part resumes the decoder that made the one
     * before it: the block is inflated once, not once per part (20 of
     * them here). */
    g_assert_cmpint(loaded_bytes, <=, s.trace.st.st_size + (128 << 10));
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(small, &stats);
    g_assert_cmpuint(stats.peak_bytes_held, <=, (4u << 20) + LIMIT_SUBCHUNK_BYTES);
    g_assert_cmpuint(stats.evictions, >, 0);
    g_assert_cmpuint(stats.load_errors, ==, 0);
    scanned_free(&s);
    unlink(path);
    g_free(path);
    g_byte_array_free(data, TRUE);
}

struct reader {
    struct stream *stream;
    const GByteArray *data;
    uint64_t first;      /* the read-through starts here and wraps around */
};

static gpointer read_from(gpointer data)
{
    struct reader *reader = data;
    uint64_t size = reader->data->len, step = 1u << 16;
    uint8_t *buf = g_malloc(step);
    for (uint64_t done = 0; done < size; done += step) {
        uint64_t at = (reader->first + done) % size;
        size_t len = (size_t)MIN(step, size - at);
        g_assert_cmpint(stream_read_exact(reader->stream, at, buf, len), ==, 0);
        g_assert_true(memcmp(buf, reader->data->data + at, len) == 0);
    }
    g_free(buf);
    return NULL;
}

/* Threads reading the long block's parts at once, each from the part
 * after the one before it (the block starts at 2.5 MiB): a part waits for the decoder of the part before it when another
 * thread is making that one, and every byte is right (run under TSan in
 * the CI's sanitized suites). */
static void test_long_block_threads(void)
{
    GByteArray *data;
    char *path = write_long_block_gzip((24u << 20) / 258, &data);
    struct scanned s;
    scan(&s, path, LIMIT_APITRACE_GZIP_SPAN, 64u << 20);
    enum { READERS = 5 };
    struct reader readers[READERS];
    GThread *threads[READERS];
    for (int round = 0; round < 2; round++) {       /* the second reads what the cache kept */
        for (int i = 0; i < READERS; i++) {
            readers[i] = (struct reader){ s.stream, data, (5u << 19) + (uint64_t)i * LIMIT_SUBCHUNK_BYTES };
            threads[i] = g_thread_new("reader", read_from, &readers[i]);
        }
        for (int i = 0; i < READERS; i++)
            g_thread_join(threads[i]);
    }
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(s.trace.cache, &stats);
    g_assert_cmpuint(stats.load_errors, ==, 0);
    scanned_free(&s);
    unlink(path);
    g_free(path);
    g_byte_array_free(data, TRUE);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/gzip_seek_points/every_point", test_every_point);
    g_test_add_func("/gzip_seek_points/thinned", test_thinned);
    g_test_add_func("/gzip_seek_points/cut_keeps_whole_chunks", test_cut_keeps_whole_chunks);
    g_test_add_func("/gzip_seek_points/budget_too_small", test_budget_too_small);
    g_test_add_func("/gzip_seek_points/long_block", test_long_block);
    g_test_add_func("/gzip_seek_points/long_block_threads", test_long_block_threads);
    return g_test_run();
}
