/* Loading ahead of an index pass: which chunks a sequential reader hands
 * out (each once, a few ahead, fewer in a small cache, none the cache
 * holds, again after a seek back to chunks evicted, once per stream for
 * two streams read in turn), and, with real
 * loader threads, that a reader gets the same bytes, no chunk is loaded
 * twice, and a damaged chunk loaded ahead but never reached is not
 * reported. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <snappy-c.h>
#include "chunk_cache.h"
#include "load_ahead.h"
#include "stream.h"
#include "tracefs_limits.h"

#define CHUNKS 12u
#define CHUNK_BYTES 65536u

struct sample {
    char *path;
    int fd;
    uint8_t *content;        /* the stream's bytes, CHUNKS * CHUNK_BYTES */
    struct chunk_entry *entries;
};

static uint8_t content_byte(size_t at)
{
    return (uint8_t)(at * 2654435761u >> 13);
}

/* A file of CHUNKS snappy chunks; `damaged` (or CHUNKS for none) holds
 * bytes that do not decompress. */
static struct sample sample_new(unsigned damaged)
{
    struct sample s = { .content = g_malloc(CHUNKS * CHUNK_BYTES), .entries = g_new0(struct chunk_entry, CHUNKS) };
    for (size_t i = 0; i < CHUNKS * CHUNK_BYTES; i++)
        s.content[i] = content_byte(i);
    s.fd = g_file_open_tmp("load-ahead-XXXXXX", &s.path, NULL);
    g_assert_cmpint(s.fd, >=, 0);
    uint64_t at = 0;
    for (unsigned c = 0; c < CHUNKS; c++) {
        size_t size = snappy_max_compressed_length(CHUNK_BYTES);
        char *packed = g_malloc(size);
        g_assert_cmpint(snappy_compress((const char *)s.content + (size_t)c * CHUNK_BYTES, CHUNK_BYTES, packed, &size),
                        ==, SNAPPY_OK);
        if (c == damaged)
            memset(packed, 0xff, size);
        g_assert_cmpint(pwrite(s.fd, packed, size, (off_t)at), ==, (ssize_t)size);
        s.entries[c] = (struct chunk_entry){ .file_offset = at, .stream_offset = (uint64_t)c * CHUNK_BYTES,
                                             .compressed_size = size, .size = CHUNK_BYTES };
        at += size;
        g_free(packed);
    }
    return s;
}

static struct stream *sample_stream(struct sample *s, struct chunk_cache *cache)
{
    struct chunk_entry *entries = g_memdup2(s->entries, CHUNKS * sizeof *entries);
    return stream_new_chunked(cache, "sample", s->fd, CODEC_SNAPPY, entries, CHUNKS);
}

static void sample_free(struct sample *s)
{
    close(s->fd);
    unlink(s->path);
    g_free(s->path);
    g_free(s->content);
    g_free(s->entries);
}

/* Reads [from, to) through one cursor, 4 KiB at a time, checking every byte;
 * `reading` follows the chunk the cursor is in. */
static void read_range(struct stream *stream, uint64_t from, uint64_t to, const uint8_t *content, size_t *reading)
{
    struct stream_cursor cursor;
    stream_cursor_init(&cursor, stream, from);
    uint8_t buffer[4096];
    for (uint64_t at = from; at < to; at += sizeof buffer) {
        if (reading)
            *reading = (size_t)(at / CHUNK_BYTES);
        g_assert_cmpint(stream_cursor_read(&cursor, buffer, sizeof buffer), ==, 0);
        g_assert_cmpmem(buffer, sizeof buffer, content + at, sizeof buffer);
    }
    stream_cursor_finish(&cursor);
}

struct recorded {
    GArray *chunks;          /* size_t, in the order handed out */
    size_t reading;          /* the reader's chunk */
    size_t most_ahead;       /* chunks past it the cache's size allows */
};

static void record_request(void *data, struct stream *stream, size_t chunk)
{
    (void)stream;
    struct recorded *recorded = data;
    g_assert_cmpuint(chunk, >, recorded->reading);
    g_assert_cmpuint(chunk, <=, recorded->reading + recorded->most_ahead);
    g_array_append_val(recorded->chunks, chunk);
}

/* A whole read handed out every chunk after the first, once, in order. */
static void assert_every_chunk_once(const struct recorded *recorded)
{
    g_assert_cmpuint(recorded->chunks->len, ==, CHUNKS - 1);
    for (guint i = 0; i < recorded->chunks->len; i++)
        g_assert_cmpuint(g_array_index(recorded->chunks, size_t, i), ==, i + 1);
}

static void test_requests(void)
{
    struct sample s = sample_new(CHUNKS);
    struct chunk_cache *cache = chunk_cache_new(64u << 20);
    struct stream *stream = sample_stream(&s, cache);
    struct recorded recorded = { g_array_new(FALSE, FALSE, sizeof(size_t)), 0, LIMIT_STREAM_LOAD_AHEAD_CHUNKS };
    stream_load_ahead_begin(record_request, &recorded);
    read_range(stream, 0, CHUNKS * CHUNK_BYTES, s.content, &recorded.reading);
    assert_every_chunk_once(&recorded);
    /* A reader back at the start finds every chunk cached: a loader
     * would be woken for nothing. */
    g_array_set_size(recorded.chunks, 0);
    read_range(stream, 0, 2 * CHUNK_BYTES, s.content, &recorded.reading);
    g_assert_cmpuint(recorded.chunks->len, ==, 0);
    /* Off: nothing handed out. */
    stream_load_ahead_end();
    g_array_set_size(recorded.chunks, 0);
    read_range(stream, 0, CHUNKS * CHUNK_BYTES, s.content, NULL);
    g_assert_cmpuint(recorded.chunks->len, ==, 0);
    g_array_free(recorded.chunks, TRUE);
    stream_free(stream);
    chunk_cache_free(cache);
    sample_free(&s);
}

/* An eighth of a 1 MiB cache: two 64 KiB chunks ahead, each still once. */
static void test_small_cache(void)
{
    struct sample s = sample_new(CHUNKS);
    struct chunk_cache *cache = chunk_cache_new(1u << 20);
    struct stream *stream = sample_stream(&s, cache);
    struct recorded recorded = { g_array_new(FALSE, FALSE, sizeof(size_t)), 0, 2 };
    stream_load_ahead_begin(record_request, &recorded);
    read_range(stream, 0, CHUNKS * CHUNK_BYTES, s.content, &recorded.reading);
    stream_load_ahead_end();
    assert_every_chunk_once(&recorded);
    g_array_free(recorded.chunks, TRUE);
    stream_free(stream);
    chunk_cache_free(cache);
    sample_free(&s);
}

/* A reader back at the start of a stream its cache no longer holds all
 * of is read ahead of again (a 512 KiB cache: 8 chunks, one ahead). */
static void test_seek_back(void)
{
    struct sample s = sample_new(CHUNKS);
    struct chunk_cache *cache = chunk_cache_new(512u << 10);
    struct stream *stream = sample_stream(&s, cache);
    struct recorded recorded = { g_array_new(FALSE, FALSE, sizeof(size_t)), 0, 1 };
    stream_load_ahead_begin(record_request, &recorded);
    read_range(stream, 0, CHUNKS * CHUNK_BYTES, s.content, &recorded.reading);
    assert_every_chunk_once(&recorded);
    g_array_set_size(recorded.chunks, 0);
    read_range(stream, 0, 2 * CHUNK_BYTES, s.content, &recorded.reading);
    stream_load_ahead_end();
    g_assert_cmpuint(recorded.chunks->len, ==, 2);
    g_assert_cmpuint(g_array_index(recorded.chunks, size_t, 0), ==, 1);
    g_assert_cmpuint(g_array_index(recorded.chunks, size_t, 1), ==, 2);
    g_array_free(recorded.chunks, TRUE);
    stream_free(stream);
    chunk_cache_free(cache);
    sample_free(&s);
}

static void count_request(void *data, struct stream *stream, size_t chunk)
{
    GHashTable *handed = data;
    char *key = g_strdup_printf("%p/%zu", (void *)stream, chunk);
    g_assert_false(g_hash_table_contains(handed, key));
    g_hash_table_add(handed, key);
}

/* A pass reading two streams in turn (rr's events and their data) hands
 * out each stream's chunks once. */
static void test_two_streams(void)
{
    struct sample s = sample_new(CHUNKS);
    struct chunk_cache *cache = chunk_cache_new(64u << 20);
    struct stream *first = sample_stream(&s, cache), *second = sample_stream(&s, cache);
    GHashTable *handed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    stream_load_ahead_begin(count_request, handed);
    for (unsigned c = 0; c < CHUNKS; c++) {
        read_range(first, (uint64_t)c * CHUNK_BYTES, (uint64_t)(c + 1) * CHUNK_BYTES, s.content, NULL);
        read_range(second, (uint64_t)c * CHUNK_BYTES, (uint64_t)(c + 1) * CHUNK_BYTES, s.content, NULL);
    }
    stream_load_ahead_end();
    g_assert_cmpuint(g_hash_table_size(handed), ==, 2 * (CHUNKS - 1));
    g_hash_table_destroy(handed);
    stream_free(first);
    stream_free(second);
    chunk_cache_free(cache);
    sample_free(&s);
}

static void test_loaders(void)
{
    for (unsigned threads = 1; threads <= 7; threads += 3) {
        struct sample s = sample_new(CHUNKS);
        struct chunk_cache *cache = chunk_cache_new(64u << 20);
        struct stream *stream = sample_stream(&s, cache);
        struct load_ahead *load_ahead = load_ahead_start(threads);
        g_assert_true((load_ahead == NULL) == (threads == 1));
        load_ahead_begin(load_ahead);
        read_range(stream, 0, CHUNKS * CHUNK_BYTES, s.content, NULL);
        load_ahead_end(load_ahead);
        load_ahead_stop(load_ahead);
        struct chunk_cache_stats stats;
        chunk_cache_get_stats(cache, &stats);
        g_assert_cmpuint(stats.misses, ==, CHUNKS);   /* each chunk loaded once, by a loader or the reader */
        g_assert_cmpuint(stats.load_errors, ==, 0);
        stream_free(stream);
        chunk_cache_free(cache);
        sample_free(&s);
    }
}

static void test_damage_ahead(void)
{
    struct sample s = sample_new(3);
    struct chunk_cache *cache = chunk_cache_new(64u << 20);
    struct stream *stream = sample_stream(&s, cache);
    struct load_ahead *load_ahead = load_ahead_start(2);
    load_ahead_begin(load_ahead);
    read_range(stream, 0, 3 * CHUNK_BYTES, s.content, NULL);
    load_ahead_end(load_ahead);
    /* The loader gets to the damaged chunk (ahead of a reader at chunk 2). */
    struct chunk_cache_stats stats = { 0 };
    for (int wait = 0; wait < 10000 && stats.load_errors == 0; wait++) {
        g_usleep(1000);
        chunk_cache_get_stats(cache, &stats);
    }
    g_assert_cmpuint(stats.load_errors, ==, 1);
    load_ahead_stop(load_ahead);
    uint64_t file_offset, stream_offset;
    g_assert_false(stream_failed_chunk(stream, &file_offset, &stream_offset));
    /* The reader that gets there fails, and says where. */
    uint8_t byte;
    g_assert_cmpint(stream_read_exact(stream, 3 * CHUNK_BYTES, &byte, 1), ==, -EIO);
    g_assert_true(stream_failed_chunk(stream, &file_offset, &stream_offset));
    g_assert_cmpuint(stream_offset, ==, 3 * CHUNK_BYTES);
    g_assert_cmpuint(file_offset, ==, s.entries[3].file_offset);
    stream_free(stream);
    chunk_cache_free(cache);
    sample_free(&s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/load_ahead/requests", test_requests);
    g_test_add_func("/load_ahead/small_cache", test_small_cache);
    g_test_add_func("/load_ahead/seek_back", test_seek_back);
    g_test_add_func("/load_ahead/two_streams", test_two_streams);
    g_test_add_func("/load_ahead/loaders", test_loaders);
    g_test_add_func("/load_ahead/damage_ahead", test_damage_ahead);
    return g_test_run();
}
