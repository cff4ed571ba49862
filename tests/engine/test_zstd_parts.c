/* A zstd file of one frame with an 8 MiB window (what `zstd -19` writes),
 * read in order in 1 MiB parts (compressed_file_zstd): under a chunk cache
 * whose half holds the window, the decoder that made a part is kept and
 * resumed for the next, so the frame is decoded once; under one whose half
 * cannot, every part decodes from the frame's start, and the bytes are the
 * same. */
#include <fcntl.h>
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

static void test_window_in_half_the_cache(void)
{
    GByteArray *data = make_text(FRAME_BYTES);
    char *path = write_zstd_frame(data);
    struct stat st;
    g_assert_cmpint(stat(path, &st), ==, 0);
    /* A quarter of 24 MiB cannot keep the 8 MiB window, half can: the
     * frame is decoded once (its input read once, and a header per part). */
    gint64 kept = read_in_order(path, data, 24u << 20);
    g_test_message("24 MiB cache: %" G_GINT64_FORMAT " bytes loaded of a %lld-byte file", kept,
                   (long long)st.st_size);
    g_assert_cmpint(kept, <=, 2 * (gint64)st.st_size);
    /* Half of 12 MiB cannot, so the window is not kept past its part (the
     * cache's budget holds): each part decodes from the frame's start,
     * about half the frame on average. */
    gint64 dropped = read_in_order(path, data, 12u << 20);
    g_test_message("12 MiB cache: %" G_GINT64_FORMAT " bytes loaded", dropped);
    g_assert_cmpint(dropped, >, 4 * (gint64)st.st_size);
    unlink(path);
    g_free(path);
    g_byte_array_free(data, TRUE);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/zstd_parts/window_in_half_the_cache", test_window_in_half_the_cache);
    return g_test_run();
}
