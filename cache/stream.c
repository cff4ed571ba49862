/* Streams over the chunk cache.  A plain file is cut into fixed blocks so
 * that it shares the cache (and its budget) with compressed streams. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <glib.h>
#include "chunk_cache.h"
#include "part_resume.h"
#include "tracefs_limits.h"
#include "stream.h"

struct stream {
    char *name;
    struct chunk_cache *cache;
    uint64_t owner_id;
    int fd;
    enum codec codec;
    uint64_t size;
    struct chunk_entry *chunks;   /* NULL for a plain file */
    struct part_resume *resume;   /* decoders kept between sub-chunks; NULL without them */
    size_t chunk_count;
    gint64 *bytes_loaded;
    struct stat identity;         /* the file as it was when the stream was made */
    /* The last chunk that could not be read or decompressed (file
     * unchanged): chunk index + 1, 0 for none.  For error messages. */
    uint64_t failed_chunk;
};

/* A trace rewritten or truncated under a mount must not be decoded as if it
 * were the one indexed: every load checks the file is still the same. */
static gboolean file_unchanged(const struct stream *stream)
{
    struct stat now;
    if (fstat(stream->fd, &now) < 0)
        return FALSE;
    return now.st_size == stream->identity.st_size &&
           now.st_mtim.tv_sec == stream->identity.st_mtim.tv_sec &&
           now.st_mtim.tv_nsec == stream->identity.st_mtim.tv_nsec;
}

void stream_count_loads(struct stream *stream, gint64 *counter)
{
    stream->bytes_loaded = counter;
}

static void count_load(struct stream *stream, size_t bytes)
{
    if (stream->bytes_loaded)
        __atomic_fetch_add(stream->bytes_loaded, (gint64)bytes, __ATOMIC_RELAXED);
}

ssize_t file_pread_full(int fd, void *buf, size_t len, uint64_t offset)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, (uint8_t *)buf + done, len - done, (off_t)(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break;
        done += (size_t)n;
    }
    return (ssize_t)done;
}

struct stream *stream_new_file(struct chunk_cache *cache, const char *name, int fd, uint64_t size)
{
    struct stream *stream = g_new0(struct stream, 1);
    stream->name = g_strdup(name);
    stream->cache = cache;
    stream->owner_id = chunk_cache_new_owner(cache);
    stream->fd = fd;
    stream->codec = CODEC_IDENTITY;
    stream->size = size;
    if (fstat(fd, &stream->identity) < 0)
        memset(&stream->identity, 0, sizeof stream->identity);
    return stream;
}

/* Parts a big brotli, zstd or gzip chunk is served as (1 when it is not
 * split). */
uint64_t stream_chunk_parts(enum codec codec, uint64_t size)
{
    uint64_t threshold = codec == CODEC_ZLIB_RAW ? LIMIT_GZIP_SUBCHUNK_THRESHOLD : LIMIT_SUBCHUNK_THRESHOLD;
    if ((codec != CODEC_BROTLI && codec != CODEC_ZSTD && codec != CODEC_ZLIB_RAW) || size <= threshold)
        return 1;
    return (size + LIMIT_SUBCHUNK_BYTES - 1) / LIMIT_SUBCHUNK_BYTES;
}

static size_t parts_of(enum codec codec, const struct chunk_entry *e)
{
    if (e->part != CHUNK_WHOLE || e->skip != 0)
        return 1;
    return (size_t)stream_chunk_parts(codec, e->size);
}

gboolean stream_chunk_owns_window(const struct chunk_entry *chunks, size_t index)
{
    return chunks[index].window && (index == 0 || chunks[index - 1].window != chunks[index].window);
}

uint64_t stream_table_budget_bytes(uint64_t file_bytes)
{
    return LIMIT_TABLE_FLOOR_BYTES / 4 + file_bytes / LIMIT_TABLE_FILE_DIVISOR;
}

uint64_t stream_chunk_budget(uint64_t file_bytes)
{
    return MIN(stream_table_budget_bytes(file_bytes) / sizeof(struct chunk_entry), (uint64_t)LIMIT_STREAM_CHUNKS);
}

/* Replaces every big brotli, zstd or gzip chunk by its sub-chunks (see
 * LIMIT_SUBCHUNK_THRESHOLD); the table stays sorted and contiguous.  The
 * split depends on the chunk alone, never on the cache. */
static struct chunk_entry *split_big_chunks(enum codec codec, struct chunk_entry *chunks, size_t *count)
{
    size_t total = 0;
    for (size_t i = 0; i < *count; i++)
        total += parts_of(codec, &chunks[i]);
    if (total == *count || total > LIMIT_STREAM_CHUNKS)
        return chunks;
    struct chunk_entry *split = g_new(struct chunk_entry, total);
    size_t at = 0;
    for (size_t i = 0; i < *count; i++) {
        size_t parts = parts_of(codec, &chunks[i]);
        if (parts == 1) {
            split[at++] = chunks[i];
            continue;
        }
        for (size_t k = 0; k < parts; k++) {
            struct chunk_entry part = chunks[i];
            uint64_t skip = (uint64_t)k * LIMIT_SUBCHUNK_BYTES;
            part.stream_offset += skip;
            part.skip = (uint32_t)skip;
            part.size = (uint32_t)MIN((uint64_t)LIMIT_SUBCHUNK_BYTES, chunks[i].size - skip);
            part.part = k + 1 == parts ? CHUNK_PART_LAST : CHUNK_PART;
            split[at++] = part;
        }
    }
    g_free(chunks);
    *count = total;
    return split;
}

struct stream *stream_new_chunked(struct chunk_cache *cache, const char *name, int fd,
                                  enum codec codec, struct chunk_entry *chunks, size_t chunk_count)
{
    chunks = split_big_chunks(codec, chunks, &chunk_count);
    /* Only parts are decoded past LIMIT_CHUNK_BYTES: a whole chunk that big
     * (a table too long to split) ends the stream, not the memory rule. */
    for (size_t i = 0; i < chunk_count; i++) {
        if (chunks[i].part == CHUNK_WHOLE && chunks[i].size > LIMIT_CHUNK_BYTES) {
            for (size_t dropped = i; dropped < chunk_count; dropped++)
                if (stream_chunk_owns_window(chunks, dropped))
                    g_free((void *)chunks[dropped].window);
            chunk_count = i;
            break;
        }
    }
    struct stream *stream = stream_new_file(cache, name, fd, 0);
    stream->codec = codec;
    stream->chunks = chunks;
    stream->chunk_count = chunk_count;
    for (size_t i = 0; i < chunk_count && !stream->resume; i++)
        if (chunks[i].part != CHUNK_WHOLE)
            stream->resume = part_resume_new(cache);
    if (chunk_count)
        stream->size = chunks[chunk_count - 1].stream_offset + chunks[chunk_count - 1].size;
    return stream;
}

void stream_free(struct stream *stream)
{
    if (!stream)
        return;
    chunk_cache_forget_owner(stream->cache, stream->owner_id);
    part_resume_free(stream->resume);
    for (size_t i = 0; i < stream->chunk_count; i++)
        if (stream_chunk_owns_window(stream->chunks, i))
            g_free((void *)stream->chunks[i].window);
    g_free(stream->chunks);
    g_free(stream->name);
    g_free(stream);
}

gboolean stream_file_changed(const struct stream *stream)
{
    return !file_unchanged(stream);
}

const char *stream_name(const struct stream *stream) { return stream->name; }
uint64_t stream_size(const struct stream *stream) { return stream->size; }
enum codec stream_codec(const struct stream *stream) { return stream->codec; }
size_t stream_chunk_count(const struct stream *stream) { return stream->chunk_count; }
const struct chunk_entry *stream_chunk(const struct stream *stream, size_t index)
{
    return index < stream->chunk_count ? &stream->chunks[index] : NULL;
}

static int read_plain_block(struct stream *stream, uint64_t index, uint8_t *out, size_t size)
{
    ssize_t n = file_pread_full(stream->fd, out, size, index * LIMIT_PLAIN_CHUNK_BYTES);
    count_load(stream, size);
    if (n < 0)
        return (int)n;
    return (size_t)n == size ? 0 : -EIO;   /* the file shrank under us */
}

/* A sub-chunk's input, read 64 KiB at a time from the chunk's bytes. */
struct part_input {
    struct stream *stream;
    const struct chunk_entry *entry;
};

static ssize_t read_part_input(void *ctx, uint8_t *buf, size_t len, uint64_t at)
{
    struct part_input *input = ctx;
    if (at >= input->entry->compressed_size)
        return 0;
    len = (size_t)MIN((uint64_t)len, input->entry->compressed_size - at);
    ssize_t n = file_pread_full(input->stream->fd, buf, len, input->entry->file_offset + at);
    if (n > 0)
        count_load(input->stream, (size_t)n);
    return n;
}

/* A sub-chunk: its decoder's window counts against the cache's budget
 * while it decodes or is kept for the next part, so a few of them at once
 * stay inside the memory rule. */
static int decompress_part(struct stream *stream, uint64_t index, uint8_t *out, size_t size)
{
    const struct chunk_entry *entry = &stream->chunks[index];
    struct part_input input = { stream, entry };
    uint8_t head[18];
    ssize_t n = stream->codec == CODEC_ZLIB_RAW ? 0 : read_part_input(&input, head, sizeof head, 0);
    uint64_t window = n >= 0 ? codec_window_size(stream->codec, head, (size_t)n) : 0;
    if (window == 0 || window > (1u << LIMIT_DECODER_WINDOW_LOG))
        return -EIO;
    struct codec_part_decoder *decoder = NULL;
    if (entry->part == CHUNK_WHOLE) {
        /* A whole gzip chunk: a 32 KiB window, never kept. */
        chunk_cache_reserve(stream->cache, window);
        int rc = codec_decompress_part(stream->codec, entry, read_part_input, &input, out, size, &decoder);
        codec_part_decoder_free(decoder);
        chunk_cache_unreserve(stream->cache, window);
        return rc;
    }
    int ticket;
    decoder = part_resume_take(stream->resume, entry, &ticket);
    if (!decoder)
        part_resume_admit(stream->resume, window);
    int rc = codec_decompress_part(stream->codec, entry, read_part_input, &input, out, size, &decoder);
    part_resume_settle(stream->resume, ticket, decoder, window);
    return rc;
}

static int decompress_chunk(struct stream *stream, uint64_t index, uint8_t *out, size_t size)
{
    const struct chunk_entry *entry = &stream->chunks[index];
    if (entry->part != CHUNK_WHOLE || stream->codec == CODEC_ZLIB_RAW)
        return decompress_part(stream, index, out, size);
    uint8_t *in = g_try_malloc(entry->compressed_size ? entry->compressed_size : 1);
    if (!in)
        return -ENOMEM;
    ssize_t n = file_pread_full(stream->fd, in, entry->compressed_size, entry->file_offset);
    count_load(stream, entry->compressed_size);
    int rc = n < 0 ? (int)n : (size_t)n != entry->compressed_size ? -EIO
           : codec_decompress(stream->codec, entry, in, entry->compressed_size, out, size);
    g_free(in);
    return rc;
}

static int load_chunk_quietly(void *owner, uint64_t index, uint8_t *out, size_t size)
{
    struct stream *stream = owner;
    if (!file_unchanged(stream))
        return -EIO;
    return stream->chunks ? decompress_chunk(stream, index, out, size) : read_plain_block(stream, index, out, size);
}

/* A chunk that fails while the file is unchanged is remembered: the trace
 * is damaged there (or the disk failed), not rewritten. */
static int load_chunk(void *owner, uint64_t index, uint8_t *out, size_t size)
{
    struct stream *stream = owner;
    int rc = load_chunk_quietly(owner, index, out, size);
    if (rc < 0 && rc != -ENOMEM && file_unchanged(stream))
        __atomic_store_n(&stream->failed_chunk, index + 1, __ATOMIC_RELAXED);
    return rc;
}

gboolean stream_failed_chunk(const struct stream *stream, uint64_t *file_offset, uint64_t *stream_offset)
{
    uint64_t failed = __atomic_load_n(&stream->failed_chunk, __ATOMIC_RELAXED);
    if (failed == 0)
        return FALSE;
    uint64_t index = failed - 1;
    if (stream->chunks && index < stream->chunk_count) {
        *file_offset = stream->chunks[index].file_offset;
        *stream_offset = stream->chunks[index].stream_offset;
    } else {
        *file_offset = *stream_offset = index * LIMIT_PLAIN_CHUNK_BYTES;
    }
    return TRUE;
}

static size_t chunk_total(const struct stream *stream)
{
    if (stream->chunks)
        return stream->chunk_count;
    return (size_t)(stream->size / LIMIT_PLAIN_CHUNK_BYTES + (stream->size % LIMIT_PLAIN_CHUNK_BYTES != 0));
}

/* The extent of chunk `index` in the stream. */
static uint64_t chunk_extent(const struct stream *stream, size_t index, uint64_t *size)
{
    if (stream->chunks) {
        *size = stream->chunks[index].size;
        return stream->chunks[index].stream_offset;
    }
    uint64_t start = (uint64_t)index * LIMIT_PLAIN_CHUNK_BYTES;
    *size = MIN((uint64_t)LIMIT_PLAIN_CHUNK_BYTES, stream->size - start);
    return start;
}

/* Finds the chunk holding `offset` and its extent in the stream. */
static size_t chunk_for_offset(const struct stream *stream, uint64_t offset,
                               uint64_t *start, uint64_t *size)
{
    size_t lo = 0, hi = stream->chunk_count;
    if (!stream->chunks) {
        lo = (size_t)(offset / LIMIT_PLAIN_CHUNK_BYTES);
    } else {
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (stream->chunks[mid].stream_offset <= offset)
                lo = mid;
            else
                hi = mid;
        }
    }
    *start = chunk_extent(stream, lo, size);
    return lo;
}

/* A thread's loading ahead (stream_load_ahead_begin): for the last few
 * streams it read, the first chunk not handed out yet, so that a pass
 * reading two streams in turn hands out each chunk once. */
#define LOAD_AHEAD_STREAMS 4

static _Thread_local struct {
    stream_load_ahead_fn load;
    void *data;
    struct {
        const struct stream *stream;
        size_t next;
    } at[LOAD_AHEAD_STREAMS];
    unsigned replace;
} ahead;

void stream_load_ahead_begin(stream_load_ahead_fn load_ahead, void *data)
{
    memset(&ahead, 0, sizeof ahead);
    ahead.load = load_ahead;
    ahead.data = data;
}

void stream_load_ahead_end(void)
{
    memset(&ahead, 0, sizeof ahead);
}

static size_t *ahead_next_of(const struct stream *stream)
{
    for (unsigned i = 0; i < LOAD_AHEAD_STREAMS; i++)
        if (ahead.at[i].stream == stream)
            return &ahead.at[i].next;
    unsigned slot = ahead.replace++ % LOAD_AHEAD_STREAMS;
    ahead.at[slot].stream = stream;
    ahead.at[slot].next = 0;
    return &ahead.at[slot].next;
}

void stream_load_ahead(struct stream *stream, size_t chunk)
{
    /* A sub-chunk's decoder window is memory the cache cannot evict: a
     * loader's beside the reader's would double it. */
    if (chunk >= chunk_total(stream) || (stream->chunks && stream->chunks[chunk].part != CHUNK_WHOLE))
        return;
    uint64_t size;
    chunk_extent(stream, chunk, &size);
    chunk_cache_prefetch(stream->cache, stream->owner_id, chunk, size, load_chunk_quietly, stream);
}

void stream_forget_cached(struct stream *stream)
{
    chunk_cache_forget_owner(stream->cache, stream->owner_id);
}

static int copy_seed(void *data, uint64_t chunk_index, uint8_t *out, size_t size)
{
    (void)chunk_index;
    memcpy(out, data, size);
    return 0;
}

gboolean stream_seed_chunk(struct stream *stream, size_t chunk, const uint8_t *data, size_t size)
{
    if (chunk >= chunk_total(stream) || (stream->chunks && stream->chunks[chunk].part != CHUNK_WHOLE))
        return FALSE;
    uint64_t chunk_size;
    chunk_extent(stream, chunk, &chunk_size);
    return chunk_size == size &&
           chunk_cache_prefetch(stream->cache, stream->owner_id, chunk, size, copy_seed, (void *)data) == 1;
}

/* Hands the chunks after `index` that are not handed out yet nor cached
 * to the stream's loader ahead, as far as LIMIT_STREAM_LOAD_AHEAD_* allow and
 * within an eighth of what the cache may hold: loads ahead must not evict
 * what a pass with many cursors (XRay's merge of its threads) still reads. */
static void load_ahead_after(struct stream *stream, size_t index)
{
    if (!ahead.load)
        return;
    size_t *handed = ahead_next_of(stream);
    size_t next = *handed, total = chunk_total(stream), chunk = index + 1;
    if (next < chunk || next > chunk + LIMIT_STREAM_LOAD_AHEAD_CHUNKS)
        next = chunk;   /* the reader moved elsewhere */
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(stream->cache, &stats);
    uint64_t bytes = 0, most = MIN((uint64_t)LIMIT_STREAM_LOAD_AHEAD_BYTES, stats.bytes_allowed / 8);
    for (; chunk < total && chunk <= index + LIMIT_STREAM_LOAD_AHEAD_CHUNKS; chunk++) {
        uint64_t size;
        chunk_extent(stream, chunk, &size);
        bytes += size;
        if (bytes > most)
            break;
        if (chunk >= next && !chunk_cache_holds(stream->cache, stream->owner_id, chunk))
            ahead.load(ahead.data, stream, chunk);
    }
    *handed = MAX(next, chunk);
}

static int get_chunk(struct stream *stream, uint64_t offset, struct chunk *chunk,
                     uint64_t *start, void **pin)
{
    uint64_t size;
    size_t index = chunk_for_offset(stream, offset, start, &size);
    load_ahead_after(stream, index);
    return chunk_cache_get(stream->cache, stream->owner_id, index, size, load_chunk, stream, chunk, pin);
}

int stream_read_exact(struct stream *stream, uint64_t offset, void *buf, size_t len)
{
    ssize_t n = stream_read(stream, offset, buf, len);
    if (n < 0)
        return (int)n;
    return (size_t)n == len ? 0 : -ENODATA;
}

void stream_cursor_init(struct stream_cursor *cursor, struct stream *stream, uint64_t offset)
{
    memset(cursor, 0, sizeof *cursor);
    cursor->stream = stream;
    cursor->offset = offset;
}

/* ---- chunks a thread keeps pinned between its cursors ----
 * A decoder's record reader opens a cursor per record: without this, each
 * record took and released its chunk's pin under the cache's lock, a few
 * times per record, from every thread at once.  Inside a hold
 * (stream_hold_begin/end), a cursor's pin is parked here when it finishes
 * and taken back by the thread's next cursor on that chunk; the hold's end
 * releases what is parked, so no pin outlives the rendering that took it. */
#define HELD_CHUNKS 2

struct held_chunk {
    struct stream *stream;
    void *pin;
    const uint8_t *data;
    uint64_t start, end;
};

static _Thread_local struct {
    unsigned depth;
    struct held_chunk chunk[HELD_CHUNKS];
} held;

void stream_hold_begin(void)
{
    held.depth++;
}

static void release_held(struct held_chunk *chunk)
{
    if (chunk->pin)
        chunk_cache_release(chunk->stream->cache, chunk->pin);
    *chunk = (struct held_chunk){ 0 };
}

void stream_hold_end(void)
{
    if (held.depth == 0 || --held.depth > 0)
        return;
    for (unsigned i = 0; i < HELD_CHUNKS; i++)
        release_held(&held.chunk[i]);
}

/* Parks a pin in the thread's held chunks (the oldest one is released to
 * make room); FALSE when there is no hold or the chunk is held already. */
static gboolean park(struct held_chunk chunk)
{
    if (held.depth == 0)
        return FALSE;
    for (unsigned i = 0; i < HELD_CHUNKS; i++)
        if (held.chunk[i].pin == chunk.pin)
            return FALSE;
    release_held(&held.chunk[HELD_CHUNKS - 1]);
    memmove(&held.chunk[1], &held.chunk[0], (HELD_CHUNKS - 1) * sizeof held.chunk[0]);
    held.chunk[0] = chunk;
    return TRUE;
}

static gboolean park_pin(const struct stream_cursor *cursor)
{
    return park((struct held_chunk){ cursor->stream, cursor->pin, cursor->chunk_data, cursor->chunk_start,
                                     cursor->chunk_end });
}

/* The thread's held chunk of `stream` that holds `offset`, or NULL. */
static struct held_chunk *held_chunk_at(const struct stream *stream, uint64_t offset)
{
    for (unsigned i = 0; i < HELD_CHUNKS && held.depth > 0; i++) {
        struct held_chunk *chunk = &held.chunk[i];
        if (chunk->pin && chunk->stream == stream && offset >= chunk->start && offset < chunk->end)
            return chunk;
    }
    return NULL;
}

/* Gives the cursor a held pin on the chunk holding its offset, if the
 * thread holds one. */
static gboolean take_held(struct stream_cursor *cursor)
{
    struct held_chunk *chunk = held_chunk_at(cursor->stream, cursor->offset);
    if (!chunk)
        return FALSE;
    cursor->pin = chunk->pin;
    cursor->chunk_data = chunk->data;
    cursor->chunk_start = chunk->start;
    cursor->chunk_end = chunk->end;
    *chunk = (struct held_chunk){ 0 };
    return TRUE;
}

/* Inside a hold, a read copies from the thread's held chunks and parks
 * the pins it takes, as cursors do: sp-rtrace reads three packets a call
 * this way, and two threads sizing at once spent a third of their time on
 * the cache's lock. */
ssize_t stream_read(struct stream *stream, uint64_t offset, void *buf, size_t len)
{
    if (offset >= stream->size)
        return 0;
    len = (size_t)MIN((uint64_t)len, stream->size - offset);
    size_t done = 0;
    while (done < len) {
        const struct held_chunk *kept = held_chunk_at(stream, offset + done);
        struct held_chunk taken = { stream, NULL, NULL, 0, 0 };
        if (!kept) {
            struct chunk chunk;
            int rc = get_chunk(stream, offset + done, &chunk, &taken.start, &taken.pin);
            if (rc < 0)
                return rc;
            taken.data = chunk.data;
            taken.end = taken.start + chunk.size;
            kept = &taken;
        }
        uint64_t in_chunk = offset + done - kept->start;
        size_t step = (size_t)MIN((uint64_t)(len - done), kept->end - kept->start - in_chunk);
        if (step > 0)
            memcpy((uint8_t *)buf + done, kept->data + in_chunk, step);
        if (taken.pin && !park(taken))
            chunk_cache_release(stream->cache, taken.pin);
        if (step == 0)
            return -EIO;
        done += step;
    }
    return (ssize_t)done;
}

void stream_cursor_finish(struct stream_cursor *cursor)
{
    if (cursor->pin && !park_pin(cursor))
        chunk_cache_release(cursor->stream->cache, cursor->pin);
    cursor->pin = NULL;
    cursor->chunk_data = NULL;
    cursor->chunk_start = cursor->chunk_end = 0;
}

void stream_cursor_seek(struct stream_cursor *cursor, uint64_t offset)
{
    cursor->offset = offset;
}

/* Makes the chunk holding cursor->offset the pinned one. */
static int cursor_fill(struct stream_cursor *cursor)
{
    if (cursor->chunk_data && cursor->offset >= cursor->chunk_start && cursor->offset < cursor->chunk_end)
        return 0;
    stream_cursor_finish(cursor);
    if (cursor->offset >= cursor->stream->size)
        return -ENODATA;
    if (take_held(cursor))
        return 0;
    struct chunk chunk;
    uint64_t start;
    int rc = get_chunk(cursor->stream, cursor->offset, &chunk, &start, &cursor->pin);
    if (rc < 0)
        return rc;
    cursor->chunk_data = chunk.data;
    cursor->chunk_start = start;
    cursor->chunk_end = start + chunk.size;
    return 0;
}

const uint8_t *stream_cursor_peek(struct stream_cursor *cursor, size_t len)
{
    if (cursor_fill(cursor) < 0)
        return NULL;
    if (cursor->offset + len > cursor->chunk_end)
        return NULL;
    return cursor->chunk_data + (cursor->offset - cursor->chunk_start);
}

int stream_cursor_read(struct stream_cursor *cursor, void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        int rc = cursor_fill(cursor);
        if (rc < 0)
            return rc;
        size_t step = (size_t)MIN((uint64_t)(len - done), cursor->chunk_end - cursor->offset);
        memcpy((uint8_t *)buf + done, cursor->chunk_data + (cursor->offset - cursor->chunk_start), step);
        cursor->offset += step;
        done += step;
    }
    return 0;
}
