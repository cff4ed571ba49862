/* One decompressor per codec, each producing exactly one chunk. */
#include <brotli/decode.h>
#include <errno.h>
#include <snappy-c.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <glib.h>
#include "codec.h"
#include "tracefs_limits.h"

const char *codec_name(enum codec codec)
{
    switch (codec) {
    case CODEC_IDENTITY: return "none";
    case CODEC_BROTLI: return "brotli";
    case CODEC_SNAPPY: return "snappy";
    case CODEC_ZLIB_RAW: return "zlib";
    case CODEC_ZSTD: return "zstd";
    }
    return "unknown";
}

static int decompress_brotli(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
    size_t produced = out_size;
    if (BrotliDecoderDecompress(in_size, in, &produced, out) != BROTLI_DECODER_RESULT_SUCCESS)
        return -EIO;
    return produced == out_size ? 0 : -EIO;
}

uint64_t codec_snappy_uncompressed_length(const uint8_t *in, size_t in_size)
{
    size_t length = 0;
    if (snappy_uncompressed_length((const char *)in, in_size, &length) != SNAPPY_OK)
        return 0;
    return length;
}

static int decompress_snappy(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
    size_t produced = out_size;
    if (codec_snappy_uncompressed_length(in, in_size) != out_size)
        return -EIO;
    if (snappy_uncompress((const char *)in, in_size, (char *)out, &produced) != SNAPPY_OK)
        return -EIO;
    return produced == out_size ? 0 : -EIO;
}

/* ZSTD_decompress makes and frees a context of ~160 KiB per call: above
 * the allocator's mmap threshold (frontend/main.c) that is an mmap, fresh
 * pages faulted in and an munmap per frame, most of the time indexing a
 * trace of 16 KiB frames took.  One context per thread instead. */
static void free_zstd_context(gpointer context)
{
    ZSTD_freeDCtx(context);
}

static GPrivate zstd_context = G_PRIVATE_INIT(free_zstd_context);

static int decompress_zstd(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
    ZSTD_DCtx *context = g_private_get(&zstd_context);
    if (!context) {
        context = ZSTD_createDCtx();
        if (!context)
            return -ENOMEM;
        g_private_set(&zstd_context, context);
    }
    size_t produced = ZSTD_decompressDCtx(context, out, out_size, in, in_size);
    if (ZSTD_isError(produced) || produced != out_size)
        return -EIO;
    return 0;
}

uint8_t *codec_window_pack(const uint8_t *window, uint32_t *packed_size)
{
    uLongf size = compressBound(CODEC_WINDOW_BYTES);
    uint8_t *packed = g_malloc(size);
    if (compress2(packed, &size, window, CODEC_WINDOW_BYTES, 1) != Z_OK)
        g_error("deflating a 32 KiB window into its bound failed");
    *packed_size = (uint32_t)size;
    return g_realloc(packed, size);
}

int codec_window_unpack(const uint8_t *packed, uint32_t packed_size, uint8_t *window)
{
    uLongf size = CODEC_WINDOW_BYTES;
    if (uncompress(window, &size, packed, packed_size) != Z_OK || size != CODEC_WINDOW_BYTES)
        return -EIO;
    return 0;
}

/* Puts inflate at a chunk's seek point: primes the leftover bits of the
 * byte before the point (taken from the input's first byte) and loads the
 * 32 KiB window. */
static int zlib_seek_point(z_stream *z, const struct chunk_entry *entry, const uint8_t **in, size_t *in_size)
{
    int rc = Z_OK;
    if (entry->bits) {
        if (*in_size == 0)
            return Z_DATA_ERROR;
        rc = inflatePrime(z, entry->bits, (*in)[0] >> (8 - entry->bits));
        (*in)++;
        (*in_size)--;
    }
    if (rc == Z_OK && entry->window) {
        uint8_t *window = g_malloc(CODEC_WINDOW_BYTES);
        rc = codec_window_unpack(entry->window, entry->window_size, window) == 0
                 ? inflateSetDictionary(z, window, CODEC_WINDOW_BYTES) : Z_DATA_ERROR;
        g_free(window);
    }
    return rc;
}

/* ---- prefixes of cut-off input ---- */
static size_t brotli_prefix(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
    BrotliDecoderState *d = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    if (!d)
        return 0;
    size_t avail_in = in_size, avail_out = out_size;
    const uint8_t *next_in = in;
    uint8_t *next_out = out;
    BrotliDecoderDecompressStream(d, &avail_in, &next_in, &avail_out, &next_out, NULL);
    BrotliDecoderDestroyInstance(d);
    return out_size - avail_out;
}

static size_t zstd_prefix(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
    ZSTD_DStream *d = ZSTD_createDStream();
    if (!d)
        return 0;
    ZSTD_inBuffer input = { in, in_size, 0 };
    ZSTD_outBuffer output = { out, out_size, 0 };
    while (output.pos < output.size) {
        size_t before_in = input.pos, before_out = output.pos;
        size_t rc = ZSTD_decompressStream(d, &output, &input);
        if (ZSTD_isError(rc) || rc == 0 || (input.pos == before_in && output.pos == before_out))
            break;
    }
    ZSTD_freeDStream(d);
    return output.pos;
}

/* Snappy's raw block, element by element (literals and back-references),
 * stopping where the input runs out: libsnappy decodes whole blocks only. */
static size_t snappy_prefix(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
    size_t at = 0, produced = 0;
    for (unsigned shift = 0; at < in_size; shift += 7)     /* the length varint */
        if (!(in[at++] & 0x80) || shift > 28)
            break;
    while (at < in_size && produced < out_size) {
        uint8_t tag = in[at++];
        size_t length, offset = 0;
        if ((tag & 3) == 0) {
            length = (size_t)(tag >> 2) + 1;
            if (length > 60) {
                unsigned extra = (unsigned)length - 60;
                if (in_size - at < extra)
                    break;
                length = 0;
                for (unsigned i = 0; i < extra; i++)
                    length |= (size_t)in[at + i] << (8 * i);
                length += 1;
                at += extra;
            }
            length = MIN(length, MIN(in_size - at, out_size - produced));
            memcpy(out + produced, in + at, length);
            at += length;
            produced += length;
            continue;
        }
        unsigned offset_bytes = (tag & 3) == 1 ? 1 : (tag & 3) == 2 ? 2 : 4;
        if (in_size - at < offset_bytes)
            break;
        if ((tag & 3) == 1) {
            length = (size_t)((tag >> 2) & 7) + 4;
            offset = ((size_t)(tag >> 5) << 8) | in[at];
        } else {
            length = (size_t)(tag >> 2) + 1;
            for (unsigned i = 0; i < offset_bytes; i++)
                offset |= (size_t)in[at + i] << (8 * i);
        }
        at += offset_bytes;
        if (offset == 0 || offset > produced)
            break;                                          /* damaged */
        length = MIN(length, out_size - produced);
        for (size_t i = 0; i < length; i++, produced++)     /* may overlap itself */
            out[produced] = out[produced - offset];
    }
    return produced;
}

/* ---- sub-chunks of big streams ---- */
enum { PART_IO = 1 << 16 };

unsigned codec_brotli_window_log(const uint8_t *in, size_t in_size)
{
    if (in_size == 0)
        return 0;
    unsigned b = in[0], n = (b >> 1) & 7, m = (b >> 4) & 7;
    if (!(b & 1))
        return 16;
    if (n)
        return 17 + n;
    if (m == 1)
        return 0;                   /* large window: never accepted */
    return m ? 8 + m : 17;
}

static uint64_t zstd_window_size(const uint8_t *in, size_t in_size)
{
    if (in_size < 6)
        return 0;
    unsigned descriptor = in[4], single = (descriptor >> 5) & 1, fcs_flag = descriptor >> 6;
    if (!single) {
        uint64_t base = (uint64_t)1 << (10 + (in[5] >> 3));
        return base + (base / 8) * (in[5] & 7);
    }
    unsigned dict_bytes = (unsigned[]){ 0, 1, 2, 4 }[descriptor & 3];
    unsigned fcs_bytes = fcs_flag ? 1u << fcs_flag : 1;
    size_t at = 5 + dict_bytes;
    if (in_size < at + fcs_bytes)
        return 0;
    uint64_t value = 0;
    for (unsigned i = 0; i < fcs_bytes; i++)
        value |= (uint64_t)in[at + i] << (8 * i);
    return fcs_bytes == 2 ? value + 256 : value;
}

uint64_t codec_window_size(enum codec codec, const uint8_t *in, size_t in_size)
{
    if (codec == CODEC_ZSTD)
        return zstd_window_size(in, in_size);
    if (codec == CODEC_ZLIB_RAW)
        return 2 * CODEC_WINDOW_BYTES;   /* inflate's window, and the seek point's unpacked */
    unsigned log = codec == CODEC_BROTLI ? codec_brotli_window_log(in, in_size) : 0;
    return log ? (uint64_t)1 << log : 0;
}

/* Where a sub-chunk's decoding stands: output is discarded until `skip`
 * bytes are gone, then fills `out`; past it (when checking the end) any
 * further byte is an error. */
struct part_sink {
    uint8_t *out;
    size_t out_size, done;
    uint64_t skip;
    gboolean check_end;
    uint8_t *discard;    /* PART_IO bytes, only while skipping */
    uint8_t past_end;    /* where a byte past the part lands */
};

/* The next output buffer to offer the decoder. */
static void part_next(struct part_sink *sink, uint8_t **next, size_t *avail)
{
    if (sink->skip) {
        *next = sink->discard;
        *avail = (size_t)MIN(sink->skip, (uint64_t)PART_IO);
    } else if (sink->done < sink->out_size) {
        *next = sink->out + sink->done;
        *avail = sink->out_size - sink->done;
    } else {
        *next = &sink->past_end;
        *avail = 1;
    }
}

/* Counts `got` bytes into the sink; FALSE when one lands past the part
 * while its end is checked. */
static gboolean part_take(struct part_sink *sink, size_t got)
{
    if (sink->skip) {
        sink->skip -= got;
        return TRUE;
    }
    if (sink->done < sink->out_size) {
        sink->done += got;
        return TRUE;
    }
    return got == 0;
}

static gboolean part_full(const struct part_sink *sink)
{
    return sink->skip == 0 && sink->done == sink->out_size;
}

static int part_brotli(struct part_sink *sink, codec_read_fn read, void *ctx, uint8_t *in)
{
    ssize_t n = read(ctx, in, PART_IO, 0);
    if (n <= 0)
        return -EIO;
    unsigned window = codec_brotli_window_log(in, (size_t)n);
    if (window == 0 || window > LIMIT_DECODER_WINDOW_LOG)
        return -EIO;
    BrotliDecoderState *d = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    if (!d)
        return -ENOMEM;
    uint64_t at = (uint64_t)n;
    size_t avail_in = (size_t)n;
    const uint8_t *next_in = in;
    int rc = -EIO;
    for (;;) {
        uint8_t *next_out;
        size_t avail_out, asked;
        part_next(sink, &next_out, &avail_out);
        asked = avail_out;
        BrotliDecoderResult r = BrotliDecoderDecompressStream(d, &avail_in, &next_in, &avail_out, &next_out, NULL);
        if (!part_take(sink, asked - avail_out))
            break;
        if (part_full(sink) && (!sink->check_end || r == BROTLI_DECODER_RESULT_SUCCESS)) {
            rc = 0;
            break;
        }
        if (r == BROTLI_DECODER_RESULT_SUCCESS || r == BROTLI_DECODER_RESULT_ERROR)
            break;
        if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT) {
            n = read(ctx, in, PART_IO, at);
            if (n <= 0)
                break;
            at += (uint64_t)n;
            avail_in = (size_t)n;
            next_in = in;
        }
    }
    BrotliDecoderDestroyInstance(d);
    return rc;
}

static int part_zstd(struct part_sink *sink, codec_read_fn read, void *ctx, uint8_t *in)
{
    ZSTD_DCtx *d = ZSTD_createDCtx();
    if (!d)
        return -ENOMEM;
    ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, LIMIT_DECODER_WINDOW_LOG);
    ZSTD_inBuffer input = { in, 0, 0 };
    uint64_t at = 0;
    gboolean eof = FALSE;
    int rc = -EIO;
    for (;;) {
        if (input.pos == input.size && !eof) {
            ssize_t n = read(ctx, in, PART_IO, at);
            if (n < 0)
                break;
            eof = n == 0;
            at += (uint64_t)n;
            input = (ZSTD_inBuffer){ in, (size_t)n, 0 };
        }
        uint8_t *next_out;
        size_t avail_out;
        part_next(sink, &next_out, &avail_out);
        ZSTD_outBuffer output = { next_out, avail_out, 0 };
        size_t before_in = input.pos;
        size_t r = ZSTD_decompressStream(d, &output, &input);
        if (ZSTD_isError(r) || !part_take(sink, output.pos))
            break;
        if (part_full(sink) && (!sink->check_end || r == 0)) {
            rc = 0;
            break;
        }
        if (r == 0 || (eof && input.pos == before_in && output.pos == 0))
            break;
    }
    ZSTD_freeDCtx(d);
    return rc;
}

/* A gzip chunk or sub-chunk: inflate from its chunk's seek point, the
 * input streamed.  A chunk ends at a block boundary inside the stream, so
 * its end is not checked; it never spans a member's end (the next
 * member's header is the container's business). */
static int part_zlib(struct part_sink *sink, const struct chunk_entry *entry, codec_read_fn read, void *ctx,
                     uint8_t *in)
{
    ssize_t n = read(ctx, in, PART_IO, 0);
    if (n <= 0)
        return -EIO;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -15) != Z_OK)
        return -ENOMEM;
    uint64_t at = (uint64_t)n;
    const uint8_t *next_in = in;
    size_t avail_in = (size_t)n;
    int rc = zlib_seek_point(&z, entry, &next_in, &avail_in) == Z_OK ? -EAGAIN : -EIO;
    z.next_in = (Bytef *)next_in;
    z.avail_in = (uInt)avail_in;
    while (rc == -EAGAIN) {
        if (z.avail_in == 0) {
            n = read(ctx, in, PART_IO, at);
            if (n <= 0) {
                rc = -EIO;
                break;
            }
            at += (uint64_t)n;
            z.next_in = in;
            z.avail_in = (uInt)n;
        }
        uint8_t *next_out;
        size_t avail_out;
        part_next(sink, &next_out, &avail_out);
        z.next_out = next_out;
        z.avail_out = (uInt)avail_out;
        int r = inflate(&z, Z_NO_FLUSH);
        part_take(sink, avail_out - z.avail_out);
        if (part_full(sink))
            rc = 0;
        else if (r == Z_STREAM_END || (r != Z_OK && r != Z_BUF_ERROR))
            rc = -EIO;
    }
    inflateEnd(&z);
    return rc;
}

int codec_decompress_part(enum codec codec, const struct chunk_entry *entry, codec_read_fn read, void *ctx,
                          uint8_t *out, size_t out_size)
{
    if (out_size > LIMIT_CHUNK_BYTES || (codec != CODEC_BROTLI && codec != CODEC_ZSTD && codec != CODEC_ZLIB_RAW))
        return -EIO;
    struct part_sink sink = { .out = out, .out_size = out_size, .skip = entry->skip,
                              .check_end = entry->part == CHUNK_PART_LAST && !entry->prefix &&
                                           codec != CODEC_ZLIB_RAW };
    uint8_t *in = g_try_malloc(PART_IO);
    /* A whole gzip chunk skips nothing: no buffer to map for it. */
    sink.discard = entry->skip ? g_try_malloc(PART_IO) : NULL;
    int rc = -ENOMEM;
    if (in && (sink.discard || !entry->skip))
        rc = codec == CODEC_BROTLI ? part_brotli(&sink, read, ctx, in)
           : codec == CODEC_ZSTD   ? part_zstd(&sink, read, ctx, in)
                                   : part_zlib(&sink, entry, read, ctx, in);
    g_free(in);
    g_free(sink.discard);
    return rc;
}

size_t codec_decompress_prefix(enum codec codec, const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
    switch (codec) {
    case CODEC_BROTLI: return brotli_prefix(in, in_size, out, out_size);
    case CODEC_SNAPPY: return snappy_prefix(in, in_size, out, out_size);
    case CODEC_ZSTD: return zstd_prefix(in, in_size, out, out_size);
    case CODEC_IDENTITY:
    case CODEC_ZLIB_RAW:
        break;
    }
    return 0;
}

int codec_decompress(enum codec codec, const struct chunk_entry *entry,
                     const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
    if (out_size > LIMIT_CHUNK_BYTES)
        return -EIO;
    if (entry && entry->part != CHUNK_WHOLE)
        return -EIO;
    if (entry && entry->prefix)
        return codec_decompress_prefix(codec, in, in_size, out, out_size) == out_size ? 0 : -EIO;
    switch (codec) {
    case CODEC_IDENTITY:
        if (in_size != out_size)
            return -EIO;
        memcpy(out, in, out_size);
        return 0;
    case CODEC_BROTLI: return decompress_brotli(in, in_size, out, out_size);
    case CODEC_SNAPPY: return decompress_snappy(in, in_size, out, out_size);
    case CODEC_ZSTD: return decompress_zstd(in, in_size, out, out_size);
    case CODEC_ZLIB_RAW: break;   /* streamed from the file: codec_decompress_part */
    }
    return -EINVAL;
}
