/* One decompressor per codec, each producing exactly one chunk. */
#include <brotli/decode.h>
#include <errno.h>
#include <snappy-c.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
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

static int decompress_zstd(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
    size_t produced = ZSTD_decompress(out, out_size, in, in_size);
    if (ZSTD_isError(produced) || produced != out_size)
        return -EIO;
    return 0;
}

/* Raw deflate resumed at a seek point: prime the leftover bits of the byte
 * before the point, load the 32 KiB window, inflate out_size bytes (after
 * discarding `skip` bytes). */
static int decompress_zlib_raw(const struct chunk_entry *entry, const uint8_t *in, size_t in_size,
                               uint8_t *out, size_t out_size)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -15) != Z_OK)
        return -ENOMEM;
    int rc = Z_OK;
    const uint8_t *input = in;
    size_t input_size = in_size;
    if (entry->bits) {
        if (input_size == 0)
            goto fail;
        rc = inflatePrime(&z, entry->bits, input[0] >> (8 - entry->bits));
        input++;
        input_size--;
    }
    if (rc == Z_OK && entry->window)
        rc = inflateSetDictionary(&z, entry->window, 32768);
    if (rc != Z_OK)
        goto fail;
    z.next_in = (Bytef *)input;
    z.avail_in = (uInt)input_size;
    uint8_t discard[4096];
    uint32_t skip = entry->skip;
    while (skip > 0) {
        uint32_t step = skip < sizeof discard ? skip : sizeof discard;
        z.next_out = discard;
        z.avail_out = step;
        rc = inflate(&z, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END)
            goto fail;
        skip -= step - z.avail_out;
        if (rc == Z_STREAM_END && skip > 0)
            goto fail;
    }
    z.next_out = out;
    z.avail_out = (uInt)out_size;
    while (z.avail_out > 0) {
        rc = inflate(&z, Z_NO_FLUSH);
        if (rc == Z_STREAM_END && z.avail_out > 0) {
            /* gzip members can follow: a new member's header is the
             * container's business; a chunk never spans one. */
            goto fail;
        }
        if (rc != Z_OK && rc != Z_STREAM_END)
            goto fail;
        if (rc == Z_OK && z.avail_in == 0 && z.avail_out > 0)
            goto fail;
    }
    inflateEnd(&z);
    return 0;
fail:
    inflateEnd(&z);
    return -EIO;
}

int codec_decompress(enum codec codec, const struct chunk_entry *entry,
                     const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size)
{
    if (out_size > LIMIT_CHUNK_BYTES)
        return -EIO;
    switch (codec) {
    case CODEC_IDENTITY:
        if (in_size != out_size)
            return -EIO;
        memcpy(out, in, out_size);
        return 0;
    case CODEC_BROTLI: return decompress_brotli(in, in_size, out, out_size);
    case CODEC_SNAPPY: return decompress_snappy(in, in_size, out, out_size);
    case CODEC_ZSTD: return decompress_zstd(in, in_size, out, out_size);
    case CODEC_ZLIB_RAW: return decompress_zlib_raw(entry, in, in_size, out, out_size);
    }
    return -EINVAL;
}
