/* Containers: the compressed file -> one stream of call events, read
 * through the chunk cache.
 *  snappy  'a''t' + (u32 LE length, raw snappy block)*: one chunk each
 *  gzip    one deflate stream: seek points (bit offset + 32 KiB window)
 *          every LIMIT_APITRACE_GZIP_SPAN of output, found by one inflate
 *          pass here, as zlib's zran example does
 *  zstd    a sequence of frames (newer apitrace writes seekable zstd:
 *          frames of bounded size + a skippable seek-table frame): one
 *          chunk per frame
 *  brotli  no magic, no seek points: one chunk of the whole stream
 *  none    the raw stream itself */
#include <brotli/decode.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "apitrace.h"
#include "apitrace_container.h"
#include "codec.h"
#include "stream.h"
#include "trace.h"
#include "tracefs_limits.h"

enum at_container at_container_of(const uint8_t *head, size_t size)
{
    if (size >= 2 && head[0] == 'a' && head[1] == 't')
        return AT_CONTAINER_SNAPPY;
    if (size >= 2 && head[0] == 0x1f && head[1] == 0x8b)
        return AT_CONTAINER_GZIP;
    if (size >= 4 && load_le32(head) == 0xFD2FB528u)
        return AT_CONTAINER_ZSTD;
    return AT_CONTAINER_OTHER;
}

static struct stream *finish_stream(struct trace *trace, enum codec codec, GArray *chunks)
{
    size_t count = chunks->len;
    struct chunk_entry *entries = (struct chunk_entry *)g_array_free(chunks, FALSE);
    struct stream *stream = stream_new_chunked(trace->cache, "stream", trace->fd, codec, entries, count);
    stream_count_loads(stream, &trace->bytes_loaded);
    return trace_add_stream(trace, stream);
}

/* ---- snappy ---- */
static struct stream *open_snappy(struct trace *trace)
{
    uint64_t size = (uint64_t)trace->st.st_size, at = 2, stream_at = 0;
    GArray *chunks = g_array_new(FALSE, TRUE, sizeof(struct chunk_entry));
    while (at < size && chunks->len < LIMIT_STREAM_CHUNKS) {
        uint8_t head[4 + 10];
        ssize_t n = file_pread_full(trace->fd, head, sizeof head, at);
        if (n < 4 + 1) {
            trace_error(trace, "container", at, "snappy chunk header cut off");
            break;
        }
        uint32_t length = load_le32(head);
        uint64_t raw = codec_snappy_uncompressed_length(head + 4, (size_t)n - 4);
        if (length == 0 || at + 4 + length > size) {
            trace_error(trace, "container", at, "snappy chunk of %u bytes runs past the end of the file", length);
            break;
        }
        if (raw == 0 || raw > LIMIT_CHUNK_BYTES) {
            trace_error(trace, "container", at, "snappy chunk with a bad uncompressed length");
            break;
        }
        struct chunk_entry entry = { .file_offset = at + 4, .stream_offset = stream_at,
                                     .compressed_size = length, .size = (uint32_t)raw };
        g_array_append_val(chunks, entry);
        stream_at += raw;
        at += 4 + (uint64_t)length;
    }
    return finish_stream(trace, CODEC_SNAPPY, chunks);
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

static struct stream *open_gzip(struct trace *trace)
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
        if (block_end && (!have_point || scan->out_total - last_point >= LIMIT_APITRACE_GZIP_SPAN)) {
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
    return finish_stream(trace, CODEC_ZLIB_RAW, chunks);
}

/* ---- zstd: one chunk per frame ---- */
static uint64_t zstd_frame_output(const uint8_t *frame, size_t size)
{
    unsigned long long known = ZSTD_getFrameContentSize(frame, size);
    if (known != ZSTD_CONTENTSIZE_UNKNOWN && known != ZSTD_CONTENTSIZE_ERROR)
        return known;
    ZSTD_DStream *d = ZSTD_createDStream();
    uint8_t *out = g_malloc(1 << 16);
    uint64_t total = 0;
    ZSTD_inBuffer in = { frame, size, 0 };
    for (;;) {
        ZSTD_outBuffer o = { out, 1 << 16, 0 };
        size_t rc = ZSTD_decompressStream(d, &o, &in);
        if (ZSTD_isError(rc)) {
            total = UINT64_MAX;
            break;
        }
        total += o.pos;
        if (rc == 0 || total > LIMIT_CHUNK_BYTES)
            break;
        if (in.pos == in.size && o.pos == 0) {
            total = UINT64_MAX;
            break;
        }
    }
    g_free(out);
    ZSTD_freeDStream(d);
    return total;
}

static struct stream *open_zstd(struct trace *trace)
{
    uint64_t size = (uint64_t)trace->st.st_size, at = 0, stream_at = 0;
    GArray *chunks = g_array_new(FALSE, TRUE, sizeof(struct chunk_entry));
    while (at + 8 <= size && chunks->len < LIMIT_STREAM_CHUNKS) {
        uint8_t head[8];
        if (file_pread_full(trace->fd, head, 8, at) != 8)
            break;
        uint32_t magic = load_le32(head);
        if ((magic & 0xFFFFFFF0u) == 0x184D2A50u) {   /* skippable (the seek table) */
            at += 8 + (uint64_t)load_le32(head + 4);
            continue;
        }
        if (magic != 0xFD2FB528u) {
            trace_error(trace, "container", at, "not a zstd frame");
            break;
        }
        /* Read enough to find the frame's end: frames are bounded by the
         * chunk limit (compressed data never much exceeds its output). */
        size_t want = (size_t)MIN(size - at, (uint64_t)LIMIT_CHUNK_BYTES + (1u << 20));
        uint8_t *frame = g_try_malloc(want);
        if (!frame || file_pread_full(trace->fd, frame, want, at) != (ssize_t)want) {
            g_free(frame);
            break;
        }
        size_t compressed = ZSTD_findFrameCompressedSize(frame, want);
        uint64_t raw = ZSTD_isError(compressed) ? UINT64_MAX : zstd_frame_output(frame, compressed);
        g_free(frame);
        trace->bytes_loaded = (gint64)at;
        if (ZSTD_isError(compressed) || raw == UINT64_MAX || raw > LIMIT_CHUNK_BYTES) {
            trace_error(trace, "container", at, "damaged or oversized zstd frame");
            break;
        }
        if (raw > 0) {
            struct chunk_entry entry = { .file_offset = at, .stream_offset = stream_at,
                                         .compressed_size = (uint32_t)compressed, .size = (uint32_t)raw };
            g_array_append_val(chunks, entry);
        }
        stream_at += raw;
        at += compressed;
    }
    return finish_stream(trace, CODEC_ZSTD, chunks);
}

/* ---- brotli: the whole stream is one chunk ---- */
static uint64_t brotli_output_size(struct trace *trace, uint64_t *consumed)
{
    BrotliDecoderState *d = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    uint8_t *in = g_malloc(1 << 16), *out = g_malloc(1 << 16);
    uint64_t file_at = 0, total = 0;
    size_t avail_in = 0;
    const uint8_t *next_in = in;
    BrotliDecoderResult rc = BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT;
    while (total <= LIMIT_CHUNK_BYTES) {
        if (rc == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT) {
            ssize_t n = file_pread_full(trace->fd, in, 1 << 16, file_at);
            if (n <= 0)
                break;
            file_at += (uint64_t)n;
            avail_in = (size_t)n;
            next_in = in;
        }
        size_t avail_out = 1 << 16;
        uint8_t *next_out = out;
        rc = BrotliDecoderDecompressStream(d, &avail_in, &next_in, &avail_out, &next_out, NULL);
        total += (1u << 16) - avail_out;
        if (rc == BROTLI_DECODER_RESULT_SUCCESS || rc == BROTLI_DECODER_RESULT_ERROR)
            break;
    }
    *consumed = file_at - avail_in;
    BrotliDecoderDestroyInstance(d);
    g_free(in);
    g_free(out);
    return rc == BROTLI_DECODER_RESULT_SUCCESS ? total : UINT64_MAX;
}

static struct stream *open_brotli(struct trace *trace)
{
    uint64_t consumed = 0, raw = brotli_output_size(trace, &consumed);
    if (raw == UINT64_MAX || raw == 0 || raw > LIMIT_CHUNK_BYTES || consumed > UINT32_MAX)
        return NULL;
    GArray *chunks = g_array_new(FALSE, TRUE, sizeof(struct chunk_entry));
    struct chunk_entry entry = { .file_offset = 0, .stream_offset = 0,
                                 .compressed_size = (uint32_t)consumed, .size = (uint32_t)raw };
    g_array_append_val(chunks, entry);
    return finish_stream(trace, CODEC_BROTLI, chunks);
}

/* A plausible raw stream: version <= 6, and for v6 a sane semantic
 * version and a property name length. */
gboolean at_plausible_raw(const uint8_t *head, size_t size)
{
    if (size < 3 || head[0] > 6)
        return FALSE;
    if (head[0] < 6)
        return head[1] == 0x00;        /* the first enter event */
    return head[1] <= 6 && head[2] < 0x80 && (size_t)head[2] + 3 <= size;
}

int at_open_container(struct trace *trace, struct at_state *state)
{
    uint8_t head[16] = { 0 };
    ssize_t n = file_pread_full(trace->fd, head, sizeof head, 0);
    enum at_container kind = at_container_of(head, n > 0 ? (size_t)n : 0);
    struct stream *stream = NULL;
    switch (kind) {
    case AT_CONTAINER_SNAPPY: state->container = "Snappy"; stream = open_snappy(trace); break;
    case AT_CONTAINER_GZIP: state->container = "ZLib"; stream = open_gzip(trace); break;
    case AT_CONTAINER_ZSTD: state->container = "Zstd"; stream = open_zstd(trace); break;
    case AT_CONTAINER_OTHER:
        if (at_plausible_raw(head, n > 0 ? (size_t)n : 0)) {
            state->container = "None";
            stream = trace_file_stream(trace);
        } else {
            state->container = "Brotli";
            stream = open_brotli(trace);
        }
        break;
    }
    if (!stream) {
        trace_fail(trace, "apitrace: cannot read the %s container", state->container);
        return -1;
    }
    state->stream = stream;
    return 0;
}
