/* gzip and brotli files, and the stream every compressed file becomes
 * (compressed_file.h). */
#include <brotli/decode.h>
#include <inttypes.h>
#include <string.h>
#include <zlib.h>
#include "chunk_cache.h"
#include "compressed_file.h"
#include "stream.h"
#include "trace.h"
#include "tracefs_limits.h"

struct stream *compressed_file_stream(struct trace *trace, enum codec codec, GArray *chunks)
{
    size_t count = chunks->len;
    struct chunk_entry *entries = (struct chunk_entry *)g_array_free(chunks, FALSE);
    struct stream *stream = stream_new_chunked(trace->cache, "stream", trace->fd, codec, entries, count);
    stream_count_loads(stream, &trace->bytes_loaded);
    return trace_add_stream(trace, stream);
}

/* ---- gzip with seek points ---- */
/* The seek points' table and windows are held in the budget of a
 * container's block table (stream_table_budget_bytes).  A point costs its
 * packed window, about what its span of the file holds, but a hostile file
 * (32 KiB of noise in every few MiB of zeros) makes it cost more: then
 * chunks are joined up to LIMIT_GZIP_LONGEST_SPAN, and past that the
 * stream ends there. */

/* A chunk's output, kept by the scan for the cache (gzip_scan.kept). */
struct kept_chunk {
    uint64_t stream_offset;
    uint8_t *data;
    size_t size;
};

struct gzip_scan {
    struct trace *trace;
    GArray *chunks;
    z_stream z;
    uint64_t out_total;
    uint64_t span;              /* output between points */
    uint64_t held, budget;      /* bytes of entries and packed windows */
    /* The output of the first chunks, while it fits keep_budget: the
     * stream's cache is seeded with it, so that the index pass, which
     * reads the file next, does not inflate it a second time.  Counted in
     * the cache's budget while held (kept_bytes, charged). */
    GArray *kept;               /* struct kept_chunk, in stream order */
    uint8_t *open;              /* output since the last point; NULL when not keeping */
    size_t open_size, open_capacity;
    uint64_t open_offset;
    uint64_t kept_bytes, keep_budget, charged;
    uint8_t window[CODEC_WINDOW_BYTES];
    uint8_t in[65536];
};

static void charge_kept(struct gzip_scan *scan)
{
    chunk_cache_charge(scan->trace->cache, &scan->charged, scan->kept_bytes + scan->open_capacity);
}

/* A buffer for the chunk that starts here, if it may be kept. */
static void open_chunk(struct gzip_scan *scan)
{
    size_t capacity = (size_t)scan->span + CODEC_WINDOW_BYTES;
    if (scan->kept_bytes + capacity > scan->keep_budget)
        return;
    scan->open = g_try_malloc(capacity);
    scan->open_capacity = scan->open ? capacity : 0;
    scan->open_size = 0;
    scan->open_offset = scan->out_total;
    charge_kept(scan);
}

static void stop_keeping(struct gzip_scan *scan)
{
    g_free(scan->open);
    scan->open = NULL;
    scan->open_capacity = scan->open_size = 0;
}

static void drop_kept(struct gzip_scan *scan)
{
    stop_keeping(scan);
    for (guint i = 0; i < scan->kept->len; i++)
        g_free(g_array_index(scan->kept, struct kept_chunk, i).data);
    g_array_set_size(scan->kept, 0);
    scan->kept_bytes = 0;
    scan->keep_budget = 0;
    chunk_cache_unreserve(scan->trace->cache, scan->charged);
    scan->charged = 0;
}

static void keep_output(struct gzip_scan *scan, const uint8_t *data, size_t length)
{
    if (!scan->open)
        return;
    if (scan->open_size + length > scan->open_capacity) {
        size_t capacity = MAX(scan->open_capacity * 2, scan->open_size + length);
        uint8_t *grown = scan->kept_bytes + capacity <= scan->keep_budget ? g_try_realloc(scan->open, capacity) : NULL;
        if (!grown) {
            stop_keeping(scan);
            return;
        }
        scan->open = grown;
        scan->open_capacity = capacity;
        charge_kept(scan);
    }
    memcpy(scan->open + scan->open_size, data, length);
    scan->open_size += length;
}

/* The open chunk ends at out_total, where a point is or the stream ends:
 * it is kept, and the next one opens (an empty one, the point at the
 * stream's start, only moves there).  Its buffer shrinks to its bytes, so
 * what is charged already covers it. */
static void close_open_chunk(struct gzip_scan *scan)
{
    if (!scan->open)
        return;
    if (scan->open_size == 0) {
        scan->open_offset = scan->out_total;
        return;
    }
    struct kept_chunk kept = { scan->open_offset, g_realloc(scan->open, scan->open_size), scan->open_size };
    g_array_append_val(scan->kept, kept);
    scan->kept_bytes += kept.size;
    scan->open = NULL;
    scan->open_capacity = scan->open_size = 0;
    open_chunk(scan);
}

/* Gives the stream's cache the kept chunks that are its chunks (the table
 * may have been cut since), freeing each as it goes. */
static void seed_cache(struct gzip_scan *scan, struct stream *stream)
{
    size_t chunk = 0, count = stream ? stream_chunk_count(stream) : 0;
    for (guint i = 0; i < scan->kept->len; i++) {
        struct kept_chunk *kept = &g_array_index(scan->kept, struct kept_chunk, i);
        while (chunk < count && stream_chunk(stream, chunk)->stream_offset < kept->stream_offset)
            chunk++;
        if (chunk < count && stream_chunk(stream, chunk)->stream_offset == kept->stream_offset)
            stream_seed_chunk(stream, chunk, kept->data, kept->size);
        g_free(kept->data);
        kept->data = NULL;
        chunk_cache_unreserve(scan->trace->cache, kept->size);
        scan->charged -= kept->size;
    }
    g_array_set_size(scan->kept, 0);
    scan->kept_bytes = 0;
}

static uint64_t point_bytes(const struct chunk_entry *entry)
{
    return sizeof *entry + entry->window_size;
}

/* A seek point where inflate stands at a block boundary: where the
 * compressed bits are and the last 32 KiB of output (none at the start). */
static void add_seek_point(struct gzip_scan *scan, uint64_t file_in)
{
    close_open_chunk(scan);
    struct chunk_entry entry = { 0 };
    unsigned bits = (unsigned)(scan->z.data_type & 7);
    entry.bits = (uint8_t)bits;
    entry.file_offset = file_in - (bits ? 1 : 0);
    entry.stream_offset = scan->out_total;
    if (scan->out_total) {
        uint8_t *ordered = g_malloc(CODEC_WINDOW_BYTES);
        /* The window is circular: oldest bytes start at out_total % 32 KiB. */
        size_t cut = (size_t)(scan->out_total % CODEC_WINDOW_BYTES);
        memcpy(ordered, scan->window + cut, CODEC_WINDOW_BYTES - cut);
        memcpy(ordered + CODEC_WINDOW_BYTES - cut, scan->window, cut);
        entry.window = codec_window_pack(ordered, &entry.window_size);
        g_free(ordered);
    }
    scan->held += point_bytes(&entry);
    g_array_append_val(scan->chunks, entry);
}

/* Joins each chunk to the one after it while the two stay within
 * LIMIT_GZIP_LONGEST_SPAN, dropping the point between them, and widens the
 * span to it; FALSE when no point could go. */
static gboolean thin_seek_points(struct gzip_scan *scan)
{
    GArray *chunks = scan->chunks;
    guint kept = 1;
    uint64_t last_kept = 0;
    scan->held = point_bytes(&g_array_index(chunks, struct chunk_entry, 0));
    for (guint i = 1; i < chunks->len; i++) {
        struct chunk_entry *entry = &g_array_index(chunks, struct chunk_entry, i);
        uint64_t next = i + 1 < chunks->len ? entry[1].stream_offset : scan->out_total;
        if (next - last_kept <= LIMIT_GZIP_LONGEST_SPAN) {
            g_free((void *)entry->window);
            continue;
        }
        last_kept = entry->stream_offset;
        scan->held += point_bytes(entry);
        g_array_index(chunks, struct chunk_entry, kept++) = *entry;
    }
    gboolean dropped = kept < chunks->len;
    g_array_set_size(chunks, kept);
    /* Joined chunks are not the ones kept: a file this hostile keeps none. */
    drop_kept(scan);
    scan->span = MAX(scan->span, (uint64_t)LIMIT_GZIP_LONGEST_SPAN);
    return dropped;
}

static uint64_t last_point(const struct gzip_scan *scan)
{
    return g_array_index(scan->chunks, struct chunk_entry, scan->chunks->len - 1).stream_offset;
}

static void free_windows_from(GArray *chunks, guint first)
{
    for (guint k = first; k < chunks->len; k++)
        g_free((void *)g_array_index(chunks, struct chunk_entry, k).window);
    g_array_set_size(chunks, first);
}

/* Sizes every chunk from the point after it; the last one ends at the
 * stream's end and at `file_end`. */
static void close_chunks(struct trace *trace, GArray *chunks, uint64_t stream_end, uint64_t file_end)
{
    for (guint i = 0; i < chunks->len; i++) {
        struct chunk_entry *e = &g_array_index(chunks, struct chunk_entry, i);
        uint64_t next_stream = i + 1 < chunks->len ? g_array_index(chunks, struct chunk_entry, i + 1).stream_offset
                                                   : stream_end;
        uint64_t next_file = i + 1 < chunks->len ? g_array_index(chunks, struct chunk_entry, i + 1).file_offset + 2
                                                 : file_end;
        next_file = MIN(next_file, file_end);
        if (next_stream - e->stream_offset > LIMIT_CHUNK_BYTES) {
            trace_error(trace, "container", e->file_offset, "a deflate block of more than %u MiB of output at byte %"
                        PRIu64 " of the stream: the rest is not shown", LIMIT_CHUNK_BYTES >> 20, e->stream_offset);
            free_windows_from(chunks, i);
            return;
        }
        e->size = (uint32_t)(next_stream - e->stream_offset);
        e->compressed_size = (uint32_t)MIN(next_file - e->file_offset, (uint64_t)UINT32_MAX);
    }
    /* Drop an empty last chunk (a seek point at the very end). */
    while (chunks->len > 0 && g_array_index(chunks, struct chunk_entry, chunks->len - 1).size == 0)
        free_windows_from(chunks, chunks->len - 1);
}

/* At a block boundary: a point when the span since the last one is
 * done; FALSE when the points no longer fit the budget, even joined. */
static gboolean at_block_end(struct gzip_scan *scan, uint64_t file_in)
{
    if (scan->chunks->len > 0 && scan->out_total - last_point(scan) < scan->span)
        return TRUE;
    add_seek_point(scan, file_in);
    if (scan->held > scan->budget && (!thin_seek_points(scan) || scan->held > scan->budget)) {
        trace_error(scan->trace, "container", file_in, "the gzip stream needs more seek points than a file of %"
                    PRIu64 " bytes may hold (%" PRIu64 " bytes of tables): it ends at byte %" PRIu64
                    " of its output", (uint64_t)scan->trace->st.st_size, scan->budget, scan->out_total);
        return FALSE;
    }
    return TRUE;
}

/* Inflates the whole file once, keeping seek points; returns where the
 * last chunk's input ends. */
static uint64_t scan_gzip(struct gzip_scan *scan)
{
    struct trace *trace = scan->trace;
    uint64_t file_in = 0;
    for (;;) {
        if (scan->z.avail_in == 0) {
            ssize_t n = file_pread_full(trace->fd, scan->in, sizeof scan->in, file_in);
            if (n <= 0) {
                trace_error(trace, "container", file_in, "gzip stream cut off");
                break;
            }
            scan->z.next_in = scan->in;
            scan->z.avail_in = (uInt)n;
            file_in += (uint64_t)n;
            trace->bytes_loaded = (gint64)file_in;
        }
        size_t at = (size_t)(scan->out_total % CODEC_WINDOW_BYTES);
        scan->z.next_out = scan->window + at;
        scan->z.avail_out = (uInt)(CODEC_WINDOW_BYTES - at);
        int rc = inflate(&scan->z, Z_BLOCK);
        size_t produced = (CODEC_WINDOW_BYTES - at) - scan->z.avail_out;
        keep_output(scan, scan->window + at, produced);
        scan->out_total += produced;
        if (rc == Z_STREAM_END) {
            close_open_chunk(scan);
            break;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            trace_error(trace, "container", file_in - scan->z.avail_in, "gzip data error: %s",
                        scan->z.msg ? scan->z.msg : "inflate failed");
            break;
        }
        /* The end of a deflate block that is not the last one. */
        gboolean block_end = (scan->z.data_type & 128) && !(scan->z.data_type & 64);
        if (block_end && !at_block_end(scan, file_in - scan->z.avail_in))
            return file_in - scan->z.avail_in;
    }
    return (uint64_t)trace->st.st_size;
}

struct stream *compressed_file_gzip(struct trace *trace, uint64_t span, uint64_t budget)
{
    struct gzip_scan *scan = g_new0(struct gzip_scan, 1);
    scan->trace = trace;
    scan->chunks = g_array_new(FALSE, TRUE, sizeof(struct chunk_entry));
    scan->span = span;
    scan->budget = budget;
    if (inflateInit2(&scan->z, 47) != Z_OK) {
        g_array_free(scan->chunks, TRUE);
        g_free(scan);
        return NULL;
    }
    /* Three quarters of what the cache may hold: the rest is for the
     * index pass's own reads past what is kept. */
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(trace->cache, &stats);
    scan->keep_budget = stats.bytes_allowed / 4 * 3;
    scan->kept = g_array_new(FALSE, FALSE, sizeof(struct kept_chunk));
    open_chunk(scan);
    uint64_t file_end = scan_gzip(scan);
    inflateEnd(&scan->z);
    /* Output past the last point is kept only when the stream ended well
     * there (close_open_chunk): a chunk cut short or damaged is decoded by
     * its reader, which reports it. */
    stop_keeping(scan);
    close_chunks(trace, scan->chunks, scan->out_total, file_end);
    struct stream *stream = compressed_file_stream(trace, CODEC_ZLIB_RAW, scan->chunks);
    seed_cache(scan, stream);
    drop_kept(scan);
    g_array_free(scan->kept, TRUE);
    g_free(scan);
    return stream;
}

/* ---- brotli: the whole stream is one chunk ---- */
/* Bytes the stream decodes to (at most just past LIMIT_PARTED_CHUNK_BYTES)
 * and the input that took; *complete when it ended well. */
static uint64_t brotli_output_size(struct trace *trace, uint64_t *consumed, gboolean *complete)
{
    BrotliDecoderState *d = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    uint8_t *in = g_malloc(1 << 16), *out = g_malloc(1 << 16);
    uint64_t file_at = 0, total = 0;
    size_t avail_in = 0;
    const uint8_t *next_in = in;
    BrotliDecoderResult rc = BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT;
    size_t avail_out = 1;
    while (total <= LIMIT_PARTED_CHUNK_BYTES) {
        /* Asking for more input, the decoder pushes out what it decoded,
         * as much as fits: input is read once it has pushed it all. */
        if (rc == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT && avail_out > 0) {
            ssize_t n = file_pread_full(trace->fd, in, 1 << 16, file_at);
            if (n <= 0)
                break;
            file_at += (uint64_t)n;
            avail_in = (size_t)n;
            next_in = in;
        }
        avail_out = 1 << 16;
        uint8_t *next_out = out;
        rc = BrotliDecoderDecompressStream(d, &avail_in, &next_in, &avail_out, &next_out, NULL);
        total += (1u << 16) - avail_out;
        if (rc == BROTLI_DECODER_RESULT_SUCCESS || rc == BROTLI_DECODER_RESULT_ERROR)
            break;
    }
    *consumed = file_at - avail_in;
    *complete = rc == BROTLI_DECODER_RESULT_SUCCESS;
    BrotliDecoderDestroyInstance(d);
    g_free(in);
    g_free(out);
    return total;
}

/* A stream cut off, damaged or longer than LIMIT_PARTED_CHUNK_BYTES keeps
 * what it yields up to there (a chunk decoded as a prefix), as the gzip
 * path does.  Its sub-chunks (at most 4,095) are within any file's table
 * budget. */
G_STATIC_ASSERT(LIMIT_PARTED_CHUNK_BYTES / LIMIT_SUBCHUNK_BYTES <=
                LIMIT_TABLE_FLOOR_BYTES / 4 / sizeof(struct chunk_entry));

struct stream *compressed_file_brotli(struct trace *trace)
{
    gboolean complete;
    uint64_t consumed = 0, raw = brotli_output_size(trace, &consumed, &complete);
    if (raw == 0 || consumed > UINT32_MAX)
        return NULL;
    gboolean prefix = !complete || raw > LIMIT_PARTED_CHUNK_BYTES;
    if (raw > LIMIT_PARTED_CHUNK_BYTES) {
        trace_error(trace, "container", consumed, "brotli stream longer than %u MiB: the rest is not shown",
                    LIMIT_PARTED_CHUNK_BYTES >> 20);
        raw = LIMIT_PARTED_CHUNK_BYTES;
    } else if (!complete) {
        trace_error(trace, "container", consumed, "brotli stream cut off or damaged: the %" PRIu64
                    " bytes it yields are kept", raw);
    }
    uint8_t first = 0;
    unsigned window_log = file_pread_full(trace->fd, &first, 1, 0) == 1 ? codec_brotli_window_log(&first, 1) : 0;
    if (raw > LIMIT_SUBCHUNK_THRESHOLD && (window_log == 0 || window_log > LIMIT_DECODER_WINDOW_LOG)) {
        trace_error(trace, "container", 0, "brotli stream needs a window larger than the %u MiB tracefs decodes with",
                    1u << (LIMIT_DECODER_WINDOW_LOG - 20));
        return NULL;
    }
    GArray *chunks = g_array_new(FALSE, TRUE, sizeof(struct chunk_entry));
    struct chunk_entry entry = { .file_offset = 0, .stream_offset = 0, .compressed_size = (uint32_t)consumed,
                                 .size = (uint32_t)raw, .prefix = (uint8_t)prefix };
    g_array_append_val(chunks, entry);
    return compressed_file_stream(trace, CODEC_BROTLI, chunks);
}
