/* A stream's chunk table through the saved byte layer: read back as it was
 * written (windows included), and refused when a chunk leaves the file,
 * leaves a gap or the bytes run out. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include "chunk_cache.h"
#include "codec.h"
#include "saved_stream.h"
#include "stream.h"

#define FILE_SIZE 100000u

/* Two zlib chunks: the first from the stream's start (no window), the
 * second at a seek point with a window. */
static struct stream *sample_stream(struct chunk_cache *cache, int fd)
{
    struct chunk_entry *entries = g_new0(struct chunk_entry, 2);
    entries[0] = (struct chunk_entry){ .file_offset = 10, .compressed_size = 500, .size = 4096 };
    uint8_t *window = g_malloc(32768);
    for (size_t i = 0; i < 32768; i++)
        window[i] = (uint8_t)(i * 7);
    entries[1] = (struct chunk_entry){ .file_offset = 509, .stream_offset = 4096, .compressed_size = 700,
                                       .size = 8192, .bits = 3, .window = window, .skip = 17 };
    return stream_new_chunked(cache, "sample", fd, CODEC_ZLIB_RAW, entries, 2);
}

static GByteArray *saved_sample(struct chunk_cache *cache, int fd)
{
    struct stream *stream = sample_stream(cache, fd);
    struct saved_writer *out = saved_writer_new();
    saved_put_stream(out, stream);
    GByteArray *bytes = saved_writer_join(out);
    saved_writer_free(out);
    stream_free(stream);
    return bytes;
}

static void test_round_trip(void)
{
    struct chunk_cache *cache = chunk_cache_new(1 << 20);
    int fd = open("/dev/null", O_RDONLY);
    GByteArray *bytes = saved_sample(cache, fd);
    struct saved_reader r;
    saved_reader_init(&r, bytes->data, bytes->len);
    struct stream *loaded = saved_get_stream(&r, cache, "loaded", fd, FILE_SIZE);
    g_assert_nonnull(loaded);
    g_assert_true(saved_reader_done(&r));
    struct stream *original = sample_stream(cache, fd);
    g_assert_cmpint(stream_codec(loaded), ==, CODEC_ZLIB_RAW);
    g_assert_cmpuint(stream_chunk_count(loaded), ==, 2);
    for (size_t i = 0; i < 2; i++) {
        const struct chunk_entry *a = stream_chunk(original, i), *b = stream_chunk(loaded, i);
        g_assert_cmpuint(a->file_offset, ==, b->file_offset);
        g_assert_cmpuint(a->stream_offset, ==, b->stream_offset);
        g_assert_cmpuint(a->compressed_size, ==, b->compressed_size);
        g_assert_cmpuint(a->size, ==, b->size);
        g_assert_cmpuint(a->bits, ==, b->bits);
        g_assert_cmpuint(a->skip, ==, b->skip);
        g_assert_true((a->window == NULL) == (b->window == NULL));
        g_assert_true(!a->window || memcmp(a->window, b->window, 32768) == 0);
    }
    stream_free(original);
    stream_free(loaded);
    g_byte_array_free(bytes, TRUE);
    close(fd);
    chunk_cache_free(cache);
}

/* Each damage must make the table bad, and leak nothing (ASan). */
static void expect_refused(struct chunk_cache *cache, int fd, const uint8_t *data, size_t size, uint64_t file_size)
{
    struct saved_reader r;
    saved_reader_init(&r, data, size);
    g_assert_null(saved_get_stream(&r, cache, "bad", fd, file_size));
    g_assert_true(r.bad);
}

static void test_refused(void)
{
    struct chunk_cache *cache = chunk_cache_new(1 << 20);
    int fd = open("/dev/null", O_RDONLY);
    GByteArray *bytes = saved_sample(cache, fd);
    /* The second chunk ends at 1209: a shorter file does not hold it. */
    expect_refused(cache, fd, bytes->data, bytes->len, 1208);
    /* Cut inside the window. */
    expect_refused(cache, fd, bytes->data, bytes->len - 100, FILE_SIZE);
    /* A gap: the second chunk's stream offset (word 2 + 7 + 1) moved on. */
    GByteArray *gap = g_byte_array_new();
    g_byte_array_append(gap, bytes->data, bytes->len);
    gap->data[(2 + 7 + 1) * 8] += 1;
    expect_refused(cache, fd, gap->data, gap->len, FILE_SIZE);
    /* An unknown codec, and no chunks. */
    uint64_t words[2] = { 99, 0 };
    expect_refused(cache, fd, (const uint8_t *)words, sizeof words, FILE_SIZE);
    words[0] = CODEC_ZLIB_RAW;
    expect_refused(cache, fd, (const uint8_t *)words, sizeof words, FILE_SIZE);
    g_byte_array_free(gap, TRUE);
    g_byte_array_free(bytes, TRUE);
    close(fd);
    chunk_cache_free(cache);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/saved_stream/round_trip", test_round_trip);
    g_test_add_func("/saved_stream/refused", test_refused);
    return g_test_run();
}
