/* A zstd file of one frame with an 8 MiB window (what `zstd -19` writes),
 * read in 1 MiB parts (compressed_file_zstd).  Read in order, the decoder
 * that made a part is kept and resumed for the next, so the frame is
 * decoded once, also under a chunk cache smaller than the window.  Read by
 * several threads at once from different places, the stream's decoders
 * stay within a quarter of the cache or one window: the cache holds a few
 * windows, not one per thread, and every byte is right. */
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <glib.h>
#include "chunk_cache.h"
#include "compressed_file.h"
#include "stream.h"
#include "trace.h"
#include "trace_fixture.h"

#define FRAME_BYTES (24u << 20)
#define WINDOW_LOG 23

/* Text-like bytes: words of a small vocabulary, compressible about 6.5:1 at
 * zstd level 1 (24 MiB to 3.9 MB). */
static GByteArray *make_text(size_t size)
{
    static const char *const words[] = { "glDrawArrays ", "mmap ", "0x7f3a2c ", "Vsync\n", "exit ", "42 ",
                                         "read(3, ", "frame ", "thread=7 ", "brk " };
    GByteArray *data = g_byte_array_sized_new((guint)size);
    GRand *rand = g_rand_new_with_seed(5);
    while (data->len < size) {
        const char *word = words[g_rand_int_range(rand, 0, G_N_ELEMENTS(words))];
        g_byte_array_append(data, (const guint8 *)word, (guint)MIN(strlen(word), size - data->len));
    }
    g_rand_free(rand);
    return data;
}

/* One frame of `data` with a 2^WINDOW_LOG window and its size in its header. */
static char *write_zstd_frame(const GByteArray *data)
{
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    g_assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1)));
    g_assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, WINDOW_LOG)));
    size_t bound = ZSTD_compressBound(data->len);
    uint8_t *out = g_malloc(bound);
    size_t n = ZSTD_compress2(cctx, out, bound, data->data, data->len);
    g_assert_false(ZSTD_isError(n));
    ZSTD_freeCCtx(cctx);
    char *path = g_strdup("/tmp/tracefs-zstd-XXXXXX");
    int fd = g_mkstemp(path);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(write(fd, out, n), ==, (ssize_t)n);
    close(fd);
    g_free(out);
    return path;
}

/* Reads the file's stream in order through a chunk cache of `budget`
 * bytes; returns the compressed bytes that took. */
static gint64 read_in_order(const char *path, const GByteArray *data, uint64_t budget)
{
    struct trace trace;
    trace_fixture_open(&trace, path, budget);
    struct stream *stream = compressed_file_zstd(&trace);
    g_assert_nonnull(stream);
    g_assert_cmpuint(stream_size(stream), ==, data->len);
    size_t parts = 0;
    for (size_t i = 0; i < stream_chunk_count(stream); i++)
        parts += stream_chunk(stream, i)->part != CHUNK_WHOLE;
    g_assert_cmpuint(parts, >=, FRAME_BYTES >> 20);
    gint64 loaded = 0;
    stream_count_loads(stream, &loaded);
    size_t step = 64u << 10;
    uint8_t *buf = g_malloc(step);
    for (size_t at = 0; at < data->len; at += step) {
        size_t len = MIN(step, data->len - at);
        g_assert_cmpint(stream_read_exact(stream, at, buf, len), ==, 0);
        g_assert_true(memcmp(buf, data->data + at, len) == 0);
    }
    g_free(buf);
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(trace.cache, &stats);
    g_assert_cmpuint(stats.load_errors, ==, 0);
    trace_fixture_close(&trace);
    return loaded;
}

static void test_lone_decoder_kept(void)
{
    GByteArray *data = make_text(FRAME_BYTES);
    char *path = write_zstd_frame(data);
    struct stat st;
    g_assert_cmpint(stat(path, &st), ==, 0);
    /* The frame is decoded once (its input read once, and a header per
     * part) whether the cache holds the 8 MiB window three times or not
     * even once. */
    const uint64_t budgets[] = { 24u << 20, 12u << 20, 4u << 20 };
    for (size_t i = 0; i < G_N_ELEMENTS(budgets); i++) {
        gint64 loaded = read_in_order(path, data, budgets[i]);
        g_test_message("%" G_GUINT64_FORMAT " MiB cache: %" G_GINT64_FORMAT " bytes loaded of a %lld-byte file",
                       budgets[i] >> 20, loaded, (long long)st.st_size);
        g_assert_cmpint(loaded, <=, 2 * (gint64)st.st_size);
    }
    unlink(path);
    g_free(path);
    g_byte_array_free(data, TRUE);
}

struct place_reader {
    struct stream *stream;
    const GByteArray *data;
    size_t from, to;
};

/* Reads [from, to) of the stream in 256 KiB reads, checking the bytes. */
static void *read_place(void *arg)
{
    const struct place_reader *reader = arg;
    size_t step = 256u << 10;
    uint8_t *buf = g_malloc(step);
    for (size_t at = reader->from; at < reader->to; at += step) {
        size_t len = MIN(step, reader->to - at);
        g_assert_cmpint(stream_read_exact(reader->stream, at, buf, len), ==, 0);
        g_assert_true(memcmp(buf, reader->data->data + at, len) == 0);
    }
    g_free(buf);
    return NULL;
}

/* Eight threads each read a stretch of the frame (each must decode from
 * the frame's start to reach it) under a 16 MiB cache, whose quarter holds
 * no 8 MiB window: one decoder exists at a time, so the cache never holds
 * more than its budget, a window and the parts being read.  Each thread
 * made its own decoder at once: 8 windows, 64 MiB. */
static void test_concurrent_readers_share_the_room(void)
{
    GByteArray *data = make_text(FRAME_BYTES);
    char *path = write_zstd_frame(data);
    struct trace trace;
    const uint64_t budget = 16u << 20;
    trace_fixture_open(&trace, path, budget);
    struct stream *stream = compressed_file_zstd(&trace);
    g_assert_nonnull(stream);
    enum { READERS = 8 };
    struct place_reader readers[READERS];
    pthread_t threads[READERS];
    size_t stretch = data->len / READERS;
    for (int i = 0; i < READERS; i++) {
        readers[i] = (struct place_reader){ stream, data, i * stretch, MIN(i * stretch + (2u << 20), data->len) };
        g_assert_cmpint(pthread_create(&threads[i], NULL, read_place, &readers[i]), ==, 0);
    }
    for (int i = 0; i < READERS; i++)
        pthread_join(threads[i], NULL);
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(trace.cache, &stats);
    g_test_message("peak %" G_GUINT64_FORMAT " bytes held", stats.peak_bytes_held);
    g_assert_cmpuint(stats.load_errors, ==, 0);
    g_assert_cmpuint(stats.peak_bytes_held, <=, budget + (8u << 20) + READERS * (2u << 20));
    trace_fixture_close(&trace);
    unlink(path);
    g_free(path);
    g_byte_array_free(data, TRUE);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/zstd_parts/lone_decoder_kept", test_lone_decoder_kept);
    g_test_add_func("/zstd_parts/concurrent_readers_share_the_room", test_concurrent_readers_share_the_room);
    return g_test_run();
}
