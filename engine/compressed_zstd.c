/* A zstd file as a stream of one chunk per frame (compressed_file.h). */
#include <inttypes.h>
#include <string.h>
#include <zstd.h>
#include "compressed_file.h"
#include "stream.h"
#include "trace.h"
#include "tracefs_limits.h"

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

/* Bytes the frame of *compressed bytes at `at` (or what there is of it)
 * decodes to, streamed from the file, counting past
 * LIMIT_PARTED_CHUNK_BYTES only to say it is more; *complete when it ended
 * well, *compressed the input that took. */
static uint64_t zstd_count_output(struct trace *trace, ZSTD_DStream *d, uint64_t at, uint64_t *compressed,
                                  gboolean *complete)
{
    enum { IO = 1 << 16 };
    uint8_t *in = g_malloc(IO), *out = g_malloc(IO);
    uint64_t total = 0, read = 0;
    ZSTD_initDStream(d);
    ZSTD_inBuffer input = { in, 0, 0 };
    *complete = FALSE;
    while (total <= LIMIT_PARTED_CHUNK_BYTES) {
        if (input.pos == input.size && read < *compressed) {
            ssize_t n = file_pread_full(trace->fd, in, (size_t)MIN((uint64_t)IO, *compressed - read), at + read);
            if (n <= 0)
                break;
            read += (uint64_t)n;
            input = (ZSTD_inBuffer){ in, (size_t)n, 0 };
        }
        ZSTD_outBuffer output = { out, IO, 0 };
        size_t before = input.pos;
        size_t rc = ZSTD_decompressStream(d, &output, &input);
        if (ZSTD_isError(rc))
            break;
        total += output.pos;
        if (rc == 0) {
            *complete = TRUE;
            break;
        }
        if (input.pos == before && output.pos == 0)
            break;
    }
    *compressed = read - (input.size - input.pos);
    g_free(in);
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
static uint64_t zstd_frame_size(struct trace *trace, ZSTD_DStream *d, uint64_t at, uint64_t *compressed,
                                uint64_t content, enum frame_end end, gboolean *prefix)
{
    *prefix = end != FRAME_WHOLE;
    if (end == FRAME_WHOLE && content != UINT64_MAX)
        return content;
    /* A frame cut off or damaged is the input its prefix took; a whole
     * one keeps the size its block headers gave. */
    gboolean complete;
    uint64_t consumed = *compressed;
    uint64_t total = zstd_count_output(trace, d, at, &consumed, &complete);
    if (end != FRAME_WHOLE)
        *compressed = consumed;
    if (!complete && total <= LIMIT_PARTED_CHUNK_BYTES)
        *prefix = TRUE;
    return total;
}

struct stream *compressed_file_zstd(struct trace *trace)
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
    uint64_t entries = 0;     /* in the stream's table: chunks and sub-chunks */
    while (at + 4 <= size) {
        if (entries >= stream_chunk_budget(size)) {
            trace_error(trace, "container", at, "more than %" G_GUINT64_FORMAT " zstd frames, what a file of %"
                        G_GUINT64_FORMAT " bytes may index: the rest is not shown", stream_chunk_budget(size), size);
            break;
        }
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
        if (raw > LIMIT_PARTED_CHUNK_BYTES || compressed > UINT32_MAX) {
            trace_error(trace, "container", at, "zstd frame larger than %u MiB: the rest is not shown",
                        LIMIT_PARTED_CHUNK_BYTES >> 20);
            break;
        }
        uint64_t parts = stream_chunk_parts(CODEC_ZSTD, raw);
        if (raw > 0 && entries + parts > stream_chunk_budget(size)) {
            trace_error(trace, "container", at, "a zstd frame of %" PRIu64 " bytes would take the stream's table past "
                        "what a file of %" G_GUINT64_FORMAT " bytes may index: the rest is not shown", raw, size);
            break;
        }
        if (raw > 0) {
            entries += parts;
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
    return compressed_file_stream(trace, CODEC_ZSTD, chunks);
}
