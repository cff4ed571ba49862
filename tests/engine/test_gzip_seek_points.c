/* A gzip file's seek points (compressed_file_gzip): every chunk decodes to
 * the bytes the file holds; the points' packed windows stay within the
 * budget they are given, chunks joined up to LIMIT_GZIP_LONGEST_SPAN
 * where they would not; a budget that even such chunks cannot meet ends
 * the stream with an /errors line.  The hostile file is 32 KiB of noise at the end of every segment
 * of zeros: each window then packs to more than 32 KiB while its stretch
 * of the file is a few hundred bytes more. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <glib.h>
#include "chunk_cache.h"
#include "compressed_file.h"
#include "stream.h"
#include "trace.h"
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
    s->trace.fd = open(path, O_RDONLY);
    g_assert_cmpint(s->trace.fd, >=, 0);
    g_assert_cmpint(fstat(s->trace.fd, &s->trace.st), ==, 0);
    s->trace.cache = chunk_cache_new(256u << 20);
    s->trace.streams = g_ptr_array_new_with_free_func((GDestroyNotify)stream_free);
    trace_errors_defer(&s->errors);
    s->stream = compressed_file_gzip(&s->trace, span, budget);
    trace_errors_defer(NULL);
    g_assert_nonnull(s->stream);
}

static void scanned_free(struct scanned *s)
{
    g_ptr_array_free(s->trace.streams, TRUE);
    chunk_cache_free(s->trace.cache);
    close(s->trace.fd);
    trace_error_list_clear(&s->errors);
}

static uint64_t held_bytes(struct stream *stream)
{
    uint64_t held = 0;
    for (size_t i = 0; i < stream_chunk_count(stream); i++)
        held += sizeof(struct chunk_entry) + stream_chunk(stream, i)->window_size;
    return held;
}

/* The stream reads back as the first `size` bytes of `data`, chunk by
 * chunk from the last to the first (every one from its own seek point). */
static void expect_bytes(struct stream *stream, const GByteArray *data, uint64_t size)
{
    g_assert_cmpuint(stream_size(stream), ==, size);
    for (size_t i = stream_chunk_count(stream); i-- > 0;) {
        const struct chunk_entry *chunk = stream_chunk(stream, i);
        uint8_t *buf = g_malloc(chunk->size);
        g_assert_cmpint(stream_read_exact(stream, chunk->stream_offset, buf, chunk->size), ==, 0);
        g_assert_true(memcmp(buf, data->data + chunk->stream_offset, chunk->size) == 0);
        g_free(buf);
    }
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/gzip_seek_points/every_point", test_every_point);
    g_test_add_func("/gzip_seek_points/thinned", test_thinned);
    g_test_add_func("/gzip_seek_points/budget_too_small", test_budget_too_small);
    return g_test_run();
}
