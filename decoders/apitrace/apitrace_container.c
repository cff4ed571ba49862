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
 *  (a brotli stream or zstd frame decoding to more than
 *  LIMIT_SUBCHUNK_THRESHOLD is served in sub-chunks: see stream.c)
 *  none    the raw stream itself */
#include <brotli/decode.h>
#include <errno.h>
#include <inttypes.h>
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
/* The last chunk cut off by the end of the file: what its elements yield
 * up to there. */
static void add_snappy_prefix(struct trace *trace, GArray *chunks, uint64_t at, uint64_t stream_at, uint64_t raw)
{
    uint64_t size = (uint64_t)trace->st.st_size, compressed = size - at - 4;
    uint8_t *in = g_try_malloc(compressed ? compressed : 1), *out = g_try_malloc(raw);
    uint64_t produced = 0;
    if (in && out && file_pread_full(trace->fd, in, compressed, at + 4) == (ssize_t)compressed)
        produced = codec_decompress_prefix(CODEC_SNAPPY, in, compressed, out, raw);
    g_free(in);
    g_free(out);
    trace_error(trace, "container", at, "snappy chunk cut off by the end of the file: the %" PRIu64
                " bytes it yields are kept", produced);
    if (produced == 0)
        return;
    struct chunk_entry entry = { .file_offset = at + 4, .stream_offset = stream_at,
                                 .compressed_size = (uint32_t)compressed, .size = (uint32_t)produced, .prefix = 1 };
    g_array_append_val(chunks, entry);
}

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
        if (raw == 0 || raw > LIMIT_CHUNK_BYTES) {
            trace_error(trace, "container", at, "snappy chunk with a bad uncompressed length");
            break;
        }
        if (length == 0) {
            trace_error(trace, "container", at, "snappy chunk of 0 bytes");
            break;
        }
        if (at + 4 + length > size) {
            add_snappy_prefix(trace, chunks, at, stream_at, raw);
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
/* Where a frame ends, found from its header and block headers alone (the
 * payloads are skipped), so that indexing reads each byte once however
 * small the frames are.  A small read-ahead buffer serves the headers of
 * runs of small blocks. */
struct zstd_walk {
    int fd;
    uint64_t file_size;
    uint64_t buf_at;
    size_t buf_len;
    uint8_t buf[4096];
};

/* `len` (<= 18) bytes at `at`, or NULL past the end of the file. */
static const uint8_t *walk_bytes(struct zstd_walk *walk, uint64_t at, size_t len)
{
    if (at < walk->buf_at || at + len > walk->buf_at + walk->buf_len) {
        ssize_t n = file_pread_full(walk->fd, walk->buf, sizeof walk->buf, at);
        walk->buf_at = at;
        walk->buf_len = n > 0 ? (size_t)n : 0;
        if (walk->buf_len < len)
            return NULL;
    }
    return walk->buf + (at - walk->buf_at);
}

enum frame_end { FRAME_WHOLE, FRAME_CUT, FRAME_DAMAGED };

/* The window a frame header declares (a single-segment frame's is its
 * content size). */
static uint64_t zstd_window_size(unsigned descriptor, const uint8_t *header_after_descriptor, uint64_t content)
{
    if ((descriptor >> 5) & 1)
        return content;
    unsigned wd = header_after_descriptor[0], log = 10 + (wd >> 3);
    uint64_t base = (uint64_t)1 << log;
    return base + (base / 8) * (wd & 7);
}

/* The frame at `at`: its compressed size (to the end of the file when cut
 * off), its content size from the header (UINT64_MAX when absent) and
 * the window its decoder keeps (*window). */
static enum frame_end zstd_frame_extent(struct zstd_walk *walk, uint64_t at, uint64_t *compressed, uint64_t *content,
                                        uint64_t *window)
{
    *window = 0;
    enum { BLOCK_MAX = 128u << 10 };
    *compressed = walk->file_size - at;
    *content = UINT64_MAX;
    const uint8_t *h = walk_bytes(walk, at, 5);
    if (!h)
        return FRAME_CUT;
    unsigned descriptor = h[4], fcs_flag = descriptor >> 6, single = (descriptor >> 5) & 1;
    uint8_t window_descriptor = 0;
    if (!single) {
        const uint8_t *wd = walk_bytes(walk, at + 5, 1);
        if (!wd)
            return FRAME_CUT;
        window_descriptor = wd[0];
    }
    unsigned dict_bytes = (unsigned[]){ 0, 1, 2, 4 }[descriptor & 3];
    unsigned fcs_bytes = fcs_flag ? 1u << fcs_flag : single;
    if (descriptor & 0x08)
        return FRAME_DAMAGED;                     /* reserved bit */
    uint64_t pos = at + 5 + !single + dict_bytes;
    const uint8_t *fcs = walk_bytes(walk, pos, fcs_bytes);
    if (!fcs)
        return FRAME_CUT;
    if (fcs_bytes) {
        uint64_t value = 0;
        for (unsigned i = 0; i < fcs_bytes; i++)
            value |= (uint64_t)fcs[i] << (8 * i);
        *content = fcs_bytes == 2 ? value + 256 : value;
    }
    *window = zstd_window_size(descriptor, &window_descriptor, *content);
    pos += fcs_bytes;
    for (gboolean last = FALSE; !last;) {
        const uint8_t *b = walk_bytes(walk, pos, 3);
        if (!b)
            return FRAME_CUT;
        uint32_t header = b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16;
        unsigned type = (header >> 1) & 3;
        uint32_t size = header >> 3;
        last = header & 1;
        if (type == 3 || size > BLOCK_MAX)
            return FRAME_DAMAGED;
        pos += 3 + (type == 1 ? 1 : size);        /* an RLE block holds one byte */
        if (pos > walk->file_size)
            return FRAME_CUT;
    }
    pos += (descriptor >> 2) & 1 ? 4 : 0;         /* content checksum */
    if (pos > walk->file_size)
        return FRAME_CUT;
    *compressed = pos - at;
    return FRAME_WHOLE;
}

/* Bytes a frame (or what there is of it) decodes to, counting past
 * LIMIT_CHUNK_BYTES only to say it is more; *complete when it ended well. */
static uint64_t zstd_count_output(ZSTD_DStream *d, const uint8_t *frame, size_t size, gboolean *complete)
{
    uint8_t *out = g_malloc(1 << 16);
    uint64_t total = 0;
    ZSTD_initDStream(d);
    ZSTD_inBuffer in = { frame, size, 0 };
    *complete = FALSE;
    while (total <= LIMIT_CHUNK_BYTES) {
        ZSTD_outBuffer o = { out, 1 << 16, 0 };
        size_t before = in.pos;
        size_t rc = ZSTD_decompressStream(d, &o, &in);
        if (ZSTD_isError(rc))
            break;
        total += o.pos;
        if (rc == 0) {
            *complete = TRUE;
            break;
        }
        if (in.pos == before && o.pos == 0)
            break;
    }
    g_free(out);
    return total;
}

/* The seekable format's seek table (a skippable frame at the end of the
 * file: per frame its compressed and decompressed size, then a footer),
 * read entry by entry as the frames are walked: it gives the output size
 * of frames whose header does not, without decoding them.  Its sizes are
 * as untrusted as the headers': a chunk that does not decode to its size
 * is a damaged chunk when read. */
struct seek_table {
    struct zstd_walk entries;
    uint64_t first, count;     /* file offset of entry 0; entries */
    unsigned entry_bytes;      /* 8, or 12 with checksums */
};

static gboolean seek_table_open(struct trace *trace, struct seek_table *table)
{
    uint64_t size = (uint64_t)trace->st.st_size;
    uint8_t footer[9], frame_head[8];
    table->count = 0;
    if (size < 17 || file_pread_full(trace->fd, footer, 9, size - 9) != 9 || load_le32(footer + 5) != 0x8F92EAB1u)
        return FALSE;
    uint64_t count = load_le32(footer);
    unsigned entry_bytes = footer[4] & 0x80 ? 12 : 8;
    uint64_t payload = count * entry_bytes + 9;
    if ((footer[4] & 0x7C) || count > LIMIT_STREAM_CHUNKS || payload + 8 > size ||
        file_pread_full(trace->fd, frame_head, 8, size - payload - 8) != 8 ||
        load_le32(frame_head) != 0x184D2A5Eu || load_le32(frame_head + 4) != payload)
        return FALSE;
    table->entries = (struct zstd_walk){ .fd = trace->fd, .file_size = size };
    table->first = size - payload;
    table->count = count;
    table->entry_bytes = entry_bytes;
    return TRUE;
}

/* Frame `index`'s decompressed size when the table lists it with this
 * compressed size; UINT64_MAX when it does not. */
static uint64_t seek_table_size(struct seek_table *table, uint64_t index, uint64_t compressed)
{
    if (index >= table->count)
        return UINT64_MAX;
    const uint8_t *e = walk_bytes(&table->entries, table->first + index * table->entry_bytes, 8);
    return e && load_le32(e) == compressed ? load_le32(e + 4) : UINT64_MAX;
}

/* Output size of the frame at `at`: from its header, or by decoding it.
 * For a frame cut off or damaged, what it yields up to there (*prefix). */
static uint64_t zstd_frame_size(struct trace *trace, ZSTD_DStream *d, uint64_t at, uint64_t *compressed_size,
                                uint64_t content, enum frame_end end, gboolean *prefix)
{
    *prefix = end != FRAME_WHOLE;
    if (end == FRAME_WHOLE && content != UINT64_MAX)
        return content;
    /* More input than this cannot decode to a chunk: a prefix reads no more. */
    if (end != FRAME_WHOLE)
        *compressed_size = MIN(*compressed_size, (uint64_t)LIMIT_CHUNK_BYTES + (1u << 20));
    uint64_t compressed = MIN(*compressed_size, (uint64_t)LIMIT_CHUNK_BYTES + (1u << 20));
    uint8_t *frame = g_try_malloc(compressed ? compressed : 1);
    if (!frame || file_pread_full(trace->fd, frame, compressed, at) != (ssize_t)compressed) {
        g_free(frame);
        return 0;
    }
    gboolean complete;
    uint64_t total = zstd_count_output(d, frame, compressed, &complete);
    g_free(frame);
    if (!complete && total <= LIMIT_CHUNK_BYTES)
        *prefix = TRUE;
    return total;
}

static struct stream *open_zstd(struct trace *trace)
{
    uint64_t size = (uint64_t)trace->st.st_size, at = 0, stream_at = 0;
    GArray *chunks = g_array_new(FALSE, TRUE, sizeof(struct chunk_entry));
    struct zstd_walk *walk = g_new0(struct zstd_walk, 1);
    walk->fd = trace->fd;
    walk->file_size = size;
    ZSTD_DStream *d = ZSTD_createDStream();
    ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, LIMIT_DECODER_WINDOW_LOG);
    struct seek_table *table = g_new0(struct seek_table, 1);
    seek_table_open(trace, table);
    uint64_t frame = 0;       /* zstd frames before this one (skippable ones aside) */
    while (at + 4 <= size && chunks->len < LIMIT_STREAM_CHUNKS) {
        const uint8_t *head = walk_bytes(walk, at, 4);
        uint32_t magic = head ? load_le32(head) : 0;
        if ((magic & 0xFFFFFFF0u) == 0x184D2A50u) {   /* skippable (the seek table) */
            const uint8_t *length = walk_bytes(walk, at + 4, 4);
            if (!length) {
                trace_error(trace, "container", at, "skippable zstd frame cut off");
                break;
            }
            at += 8 + (uint64_t)load_le32(length);
            continue;
        }
        if (magic != 0xFD2FB528u) {
            trace_error(trace, "container", at, "not a zstd frame");
            break;
        }
        uint64_t compressed, content, window;
        enum frame_end end = zstd_frame_extent(walk, at, &compressed, &content, &window);
        if (window > (1u << LIMIT_DECODER_WINDOW_LOG)) {
            trace_error(trace, "container", at, "zstd frame needs a window of %" PRIu64 " bytes, more than the %u MiB "
                        "tracefs decodes with: the rest is not shown", window, 1u << (LIMIT_DECODER_WINDOW_LOG - 20));
            break;
        }
        if (end == FRAME_WHOLE && content == UINT64_MAX)
            content = seek_table_size(table, frame, compressed);
        frame++;
        gboolean prefix;
        uint64_t raw = zstd_frame_size(trace, d, at, &compressed, content, end, &prefix);
        trace->bytes_loaded = (gint64)at;
        if (raw > LIMIT_CHUNK_BYTES || compressed > UINT32_MAX) {
            trace_error(trace, "container", at, "zstd frame larger than %u MiB", LIMIT_CHUNK_BYTES >> 20);
            break;
        }
        if (raw > 0) {
            struct chunk_entry entry = { .file_offset = at, .stream_offset = stream_at,
                                         .compressed_size = (uint32_t)compressed, .size = (uint32_t)raw,
                                         .prefix = (uint8_t)prefix };
            g_array_append_val(chunks, entry);
        }
        if (prefix) {
            trace_error(trace, "container", at, "zstd frame %s: the %" PRIu64 " bytes it yields are kept",
                        end == FRAME_CUT ? "cut off" : "damaged", raw);
            break;
        }
        stream_at += raw;
        at += compressed;
    }
    ZSTD_freeDStream(d);
    g_free(table);
    g_free(walk);
    return finish_stream(trace, CODEC_ZSTD, chunks);
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
static struct stream *open_brotli(struct trace *trace)
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
