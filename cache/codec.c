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
