/* A stream's chunk table through the saved byte layer: read back as it was
 * written (packed windows included), and refused when a chunk leaves the
 * file, leaves a gap, the bytes run out or its windows hold more than the
 * file's table budget. */
#include <errno.h>
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
    uint8_t window[CODEC_WINDOW_BYTES];
    for (size_t i = 0; i < sizeof window; i++)
        window[i] = (uint8_t)(i * 7);
    entries[1] = (struct chunk_entry){ .file_offset = 509, .stream_offset = 4096, .compressed_size = 700,
                                       .size = 8192, .bits = 3, .skip = 17 };
    entries[1].window = codec_window_pack(window, &entries[1].window_size);
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
        g_assert_cmpuint(a->window_size, ==, b->window_size);
        g_assert_true(!a->window || memcmp(a->window, b->window, a->window_size) == 0);
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

/* `count` chunks of 4 KiB, each but the first at a seek point whose window
 * is noise (it packs to more than 32 KiB), all inside a 100 KB file. */
static GByteArray *saved_noisy_windows(size_t count)
{
    struct chunk_cache *cache = chunk_cache_new(1 << 20);
    int fd = open("/dev/null", O_RDONLY);
    struct chunk_entry *entries = g_new0(struct chunk_entry, count);
    GRand *rand = g_rand_new_with_seed(7);
    uint8_t window[CODEC_WINDOW_BYTES];
    for (size_t i = 0; i < count; i++) {
        entries[i] = (struct chunk_entry){ .file_offset = 10 + i * 100, .stream_offset = i * 4096,
                                           .compressed_size = 100, .size = 4096 };
        if (i == 0)
            continue;
        for (size_t k = 0; k < sizeof window; k++)
            window[k] = (uint8_t)g_rand_int(rand);
        entries[i].window = codec_window_pack(window, &entries[i].window_size);
        g_assert_cmpuint(entries[i].window_size, >, CODEC_WINDOW_BYTES);
    }
    struct stream *stream = stream_new_chunked(cache, "noisy", fd, CODEC_ZLIB_RAW, entries, count);
    struct saved_writer *out = saved_writer_new();
    saved_put_stream(out, stream);
    GByteArray *bytes = saved_writer_join(out);
    saved_writer_free(out);
    stream_free(stream);
    g_rand_free(rand);
    close(fd);
    chunk_cache_free(cache);
    return bytes;
}

/* A 100 KB file's budget (1 MiB + 1 KB) holds 31 windows of noise, not
 * 40; a 100 MB file's (2 MB) holds 40. */
static void test_window_budget(void)
{
    struct chunk_cache *cache = chunk_cache_new(1 << 20);
    int fd = open("/dev/null", O_RDONLY);
    GByteArray *bytes = saved_noisy_windows(41);
    expect_refused(cache, fd, bytes->data, bytes->len, FILE_SIZE);
    struct saved_reader r;
    saved_reader_init(&r, bytes->data, bytes->len);
    struct stream *loaded = saved_get_stream(&r, cache, "loaded", fd, 100000000);
    g_assert_nonnull(loaded);
    g_assert_cmpuint(stream_chunk_count(loaded), ==, 41);
    stream_free(loaded);
    g_byte_array_free(bytes, TRUE);
    bytes = saved_noisy_windows(31);
    saved_reader_init(&r, bytes->data, bytes->len);
    loaded = saved_get_stream(&r, cache, "loaded", fd, FILE_SIZE);
    g_assert_nonnull(loaded);
    stream_free(loaded);
    g_byte_array_free(bytes, TRUE);
    close(fd);
    chunk_cache_free(cache);
}

/* A packed window inflates back to its 32 KiB, and a damaged one is -EIO. */
static void test_window_pack(void)
{
    uint8_t window[CODEC_WINDOW_BYTES], back[CODEC_WINDOW_BYTES];
    for (size_t i = 0; i < sizeof window; i++)
        window[i] = (uint8_t)(i % 251 < 20 ? i : 0);
    uint32_t size;
    uint8_t *packed = codec_window_pack(window, &size);
    g_assert_cmpuint(size, <, CODEC_WINDOW_BYTES / 8);
    g_assert_cmpint(codec_window_unpack(packed, size, back), ==, 0);
    g_assert_true(memcmp(window, back, sizeof window) == 0);
    g_assert_cmpint(codec_window_unpack(packed, size - 1, back), ==, -EIO);
    packed[size / 2] ^= 0x55;
    g_assert_cmpint(codec_window_unpack(packed, size, back), ==, -EIO);
    g_free(packed);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/saved_stream/round_trip", test_round_trip);
    g_test_add_func("/saved_stream/refused", test_refused);
    g_test_add_func("/saved_stream/window_budget", test_window_budget);
    g_test_add_func("/saved_stream/window_pack", test_window_pack);
    return g_test_run();
}
