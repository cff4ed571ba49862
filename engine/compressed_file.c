/* gzip and brotli files, and the stream every compressed file becomes
 * (compressed_file.h). */
#include <brotli/decode.h>
#include <inttypes.h>
#include <string.h>
#include <zlib.h>
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
struct gzip_scan {
    struct trace *trace;
    GArray *chunks;
    z_stream z;
    uint8_t window[32768];
    uint64_t out_total;
    uint8_t in[65536];
};

/* A seek point where inflate stands at a block boundary: remember where the
 * compressed bits are and the last 32 KiB of output. */
static void add_seek_point(struct gzip_scan *scan, uint64_t file_in, const uint8_t *window)
{
    struct chunk_entry entry = { 0 };
    unsigned bits = (unsigned)(scan->z.data_type & 7);
    entry.bits = (uint8_t)bits;
    entry.file_offset = file_in - (bits ? 1 : 0);
    entry.stream_offset = scan->out_total;
    if (window) {
        uint8_t *copy = g_malloc(32768);
        /* The window is circular: oldest bytes start at out_total % 32 KiB. */
        size_t cut = (size_t)(scan->out_total % 32768);
        memcpy(copy, window + cut, 32768 - cut);
        memcpy(copy + 32768 - cut, window, cut);
        entry.window = copy;
    }
    g_array_append_val(scan->chunks, entry);
}

static void close_chunks(GArray *chunks, uint64_t stream_end, uint64_t file_size)
{
    for (guint i = 0; i < chunks->len; i++) {
        struct chunk_entry *e = &g_array_index(chunks, struct chunk_entry, i);
        uint64_t next_stream = i + 1 < chunks->len ? g_array_index(chunks, struct chunk_entry, i + 1).stream_offset
                                                   : stream_end;
        uint64_t next_file = i + 1 < chunks->len ? g_array_index(chunks, struct chunk_entry, i + 1).file_offset + 2
                                                 : file_size;
        next_file = MIN(next_file, file_size);
        if (next_stream - e->stream_offset > LIMIT_CHUNK_BYTES) {
            /* A deflate block longer than a chunk may hold: keep what came before. */
            for (guint k = i; k < chunks->len; k++)
                g_free((void *)g_array_index(chunks, struct chunk_entry, k).window);
            g_array_set_size(chunks, i);
            return;
        }
        e->size = (uint32_t)(next_stream - e->stream_offset);
        e->compressed_size = (uint32_t)MIN(next_file - e->file_offset, (uint64_t)UINT32_MAX);
    }
    /* Drop an empty last chunk (a seek point at the very end). */
    while (chunks->len > 0 && g_array_index(chunks, struct chunk_entry, chunks->len - 1).size == 0) {
        g_free((void *)g_array_index(chunks, struct chunk_entry, chunks->len - 1).window);
        g_array_set_size(chunks, chunks->len - 1);
    }
}

struct stream *compressed_file_gzip(struct trace *trace, uint64_t span)
{
    struct gzip_scan *scan = g_new0(struct gzip_scan, 1);
    scan->trace = trace;
    scan->chunks = g_array_new(FALSE, TRUE, sizeof(struct chunk_entry));
    uint64_t file_size = (uint64_t)trace->st.st_size, file_in = 0, last_point = 0;
    gboolean have_point = FALSE, done = FALSE;
    if (inflateInit2(&scan->z, 47) != Z_OK) {
        g_free(scan);
        return NULL;
    }
    uint8_t *window = g_malloc(32768);
    while (!done) {
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
        uint64_t before = scan->out_total;
        size_t at = (size_t)(before % 32768);
        scan->z.next_out = window + at;
        scan->z.avail_out = (uInt)(32768 - at);
        int rc = inflate(&scan->z, Z_BLOCK);
        scan->out_total += (32768 - at) - scan->z.avail_out;
        if (rc == Z_STREAM_END) {
            done = TRUE;
            break;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            trace_error(trace, "container", file_in - scan->z.avail_in, "gzip data error: %s",
                        scan->z.msg ? scan->z.msg : "inflate failed");
            break;
        }
        /* At the end of a deflate block (not the last one), maybe a point. */
        gboolean block_end = (scan->z.data_type & 128) && !(scan->z.data_type & 64);
        if (block_end && (!have_point || scan->out_total - last_point >= span)) {
            if (scan->chunks->len >= LIMIT_STREAM_CHUNKS)
                break;
            add_seek_point(scan, file_in - scan->z.avail_in, scan->out_total ? window : NULL);
            last_point = scan->out_total;
            have_point = TRUE;
        }
    }
    inflateEnd(&scan->z);
    g_free(window);
    close_chunks(scan->chunks, scan->out_total, file_size);
    GArray *chunks = scan->chunks;
    g_free(scan);
    return compressed_file_stream(trace, CODEC_ZLIB_RAW, chunks);
}

/* ---- brotli: the whole stream is one chunk ---- */
/* Bytes the stream decodes to (at most just past LIMIT_CHUNK_BYTES) and
 * the input that took; *complete when it ended well. */
static uint64_t brotli_output_size(struct trace *trace, uint64_t *consumed, gboolean *complete)
{
    BrotliDecoderState *d = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    uint8_t *in = g_malloc(1 << 16), *out = g_malloc(1 << 16);
    uint64_t file_at = 0, total = 0;
    size_t avail_in = 0;
    const uint8_t *next_in = in;
    BrotliDecoderResult rc = BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT;
    size_t avail_out = 1;
    while (total <= LIMIT_CHUNK_BYTES) {
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

/* A stream cut off, damaged or longer than a chunk keeps what it yields
 * up to there (a chunk decoded as a prefix), as the gzip path does. */
struct stream *compressed_file_brotli(struct trace *trace)
{
    gboolean complete;
    uint64_t consumed = 0, raw = brotli_output_size(trace, &consumed, &complete);
    if (raw == 0 || consumed > UINT32_MAX)
        return NULL;
    gboolean prefix = !complete || raw > LIMIT_CHUNK_BYTES;
    if (raw > LIMIT_CHUNK_BYTES) {
        trace_error(trace, "container", consumed, "brotli stream longer than %u MiB: the rest is not shown",
                    LIMIT_CHUNK_BYTES >> 20);
        raw = LIMIT_CHUNK_BYTES;
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
