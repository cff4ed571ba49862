/* Sub-chunks of big brotli, zstd and gzip chunks, and gzip chunks: decoded
 * by streaming the chunk's input from the file.  A decoder that made one
 * part can be kept and resumed for the next, so reading a chunk's parts in
 * order decodes it once, not once per part. */
#include <brotli/decode.h>
#include <errno.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <glib.h>
#include "codec.h"
#include "tracefs_limits.h"

enum { PART_IO = 1 << 16 };

struct codec_part_decoder {
    enum codec codec;
    BrotliDecoderState *brotli;
    ZSTD_DCtx *zstd;
    z_stream zlib;
    gboolean zlib_open;
    uint8_t in[PART_IO];
    size_t in_pos, in_len;      /* input read and not yet consumed */
    uint64_t at;                /* input read, from the chunk's first byte */
    gboolean eof;
    uint64_t position;          /* output made, from the chunk's first byte */
};

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

void codec_part_decoder_free(struct codec_part_decoder *decoder)
{
    if (!decoder)
        return;
    if (decoder->brotli)
        BrotliDecoderDestroyInstance(decoder->brotli);
    ZSTD_freeDCtx(decoder->zstd);
    if (decoder->zlib_open)
        inflateEnd(&decoder->zlib);
    g_free(decoder);
}

/* Reads the next input into the decoder's buffer; FALSE on a read error. */
static gboolean refill(struct codec_part_decoder *decoder, codec_read_fn read, void *ctx)
{
    ssize_t n = read(ctx, decoder->in, PART_IO, decoder->at);
    if (n < 0)
        return FALSE;
    decoder->eof = n == 0;
    decoder->at += (uint64_t)n;
    decoder->in_pos = 0;
    decoder->in_len = (size_t)n;
    return TRUE;
}

/* A decoder at the chunk's first output byte: its first input read, the
 * window it declares checked, a gzip chunk's seek point applied. */
static struct codec_part_decoder *decoder_open(enum codec codec, const struct chunk_entry *entry,
                                               codec_read_fn read, void *ctx)
{
    struct codec_part_decoder *decoder = g_try_new0(struct codec_part_decoder, 1);
    if (!decoder)
        return NULL;
    decoder->codec = codec;
    gboolean ok = refill(decoder, read, ctx) && decoder->in_len > 0;
    if (ok && codec == CODEC_BROTLI) {
        unsigned window = codec_brotli_window_log(decoder->in, decoder->in_len);
        ok = window != 0 && window <= LIMIT_DECODER_WINDOW_LOG &&
             (decoder->brotli = BrotliDecoderCreateInstance(NULL, NULL, NULL)) != NULL;
    } else if (ok && codec == CODEC_ZSTD) {
        ok = (decoder->zstd = ZSTD_createDCtx()) != NULL;
        if (ok)
            ZSTD_DCtx_setParameter(decoder->zstd, ZSTD_d_windowLogMax, LIMIT_DECODER_WINDOW_LOG);
    } else if (ok && codec == CODEC_ZLIB_RAW) {
        ok = inflateInit2(&decoder->zlib, -15) == Z_OK;
        decoder->zlib_open = ok;
        const uint8_t *next_in = decoder->in;
        size_t avail_in = decoder->in_len;
        ok = ok && zlib_seek_point(&decoder->zlib, entry, &next_in, &avail_in) == Z_OK;
        decoder->in_pos = (size_t)(next_in - decoder->in);
    }
    if (!ok) {
        codec_part_decoder_free(decoder);
        return NULL;
    }
    return decoder;
}

static int part_brotli(struct codec_part_decoder *decoder, struct part_sink *sink, codec_read_fn read, void *ctx)
{
    for (;;) {
        uint8_t *next_out;
        size_t avail_out, asked;
        part_next(sink, &next_out, &avail_out);
        asked = avail_out;
        size_t avail_in = decoder->in_len - decoder->in_pos;
        const uint8_t *next_in = decoder->in + decoder->in_pos;
        BrotliDecoderResult r = BrotliDecoderDecompressStream(decoder->brotli, &avail_in, &next_in, &avail_out,
                                                              &next_out, NULL);
        decoder->in_pos = decoder->in_len - avail_in;
        if (!part_take(sink, asked - avail_out))
            return -EIO;
        if (part_full(sink) && (!sink->check_end || r == BROTLI_DECODER_RESULT_SUCCESS))
            return 0;
        if (r == BROTLI_DECODER_RESULT_SUCCESS || r == BROTLI_DECODER_RESULT_ERROR)
            return -EIO;
        if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT && (!refill(decoder, read, ctx) || decoder->eof))
            return -EIO;
    }
}

static int part_zstd(struct codec_part_decoder *decoder, struct part_sink *sink, codec_read_fn read, void *ctx)
{
    for (;;) {
        if (decoder->in_pos == decoder->in_len && !decoder->eof && !refill(decoder, read, ctx))
            return -EIO;
        uint8_t *next_out;
        size_t avail_out;
        part_next(sink, &next_out, &avail_out);
        ZSTD_outBuffer output = { next_out, avail_out, 0 };
        ZSTD_inBuffer input = { decoder->in, decoder->in_len, decoder->in_pos };
        size_t r = ZSTD_decompressStream(decoder->zstd, &output, &input);
        gboolean stuck = decoder->eof && input.pos == decoder->in_pos && output.pos == 0;
        decoder->in_pos = input.pos;
        if (ZSTD_isError(r) || !part_take(sink, output.pos))
            return -EIO;
        if (part_full(sink) && (!sink->check_end || r == 0))
            return 0;
        if (r == 0 || stuck)
            return -EIO;
    }
}

/* A gzip chunk ends at a block boundary inside the stream, so its end is
 * not checked; it never spans a member's end (the next member's header is
 * the container's business). */
static int part_zlib(struct codec_part_decoder *decoder, struct part_sink *sink, codec_read_fn read, void *ctx)
{
    z_stream *z = &decoder->zlib;
    for (;;) {
        if (decoder->in_pos == decoder->in_len && (!refill(decoder, read, ctx) || decoder->eof))
            return -EIO;
        uint8_t *next_out;
        size_t avail_out;
        part_next(sink, &next_out, &avail_out);
        z->next_in = decoder->in + decoder->in_pos;
        z->avail_in = (uInt)(decoder->in_len - decoder->in_pos);
        z->next_out = next_out;
        z->avail_out = (uInt)avail_out;
        int r = inflate(z, Z_NO_FLUSH);
        decoder->in_pos = decoder->in_len - z->avail_in;
        part_take(sink, avail_out - z->avail_out);
        if (part_full(sink))
            return 0;
        if (r == Z_STREAM_END || (r != Z_OK && r != Z_BUF_ERROR))
            return -EIO;
    }
}

int codec_decompress_part(enum codec codec, const struct chunk_entry *entry, codec_read_fn read, void *ctx,
                          uint8_t *out, size_t out_size, struct codec_part_decoder **resume)
{
    struct codec_part_decoder *decoder = resume ? *resume : NULL;
    if (resume)
        *resume = NULL;
    if (out_size > LIMIT_CHUNK_BYTES || (codec != CODEC_BROTLI && codec != CODEC_ZSTD && codec != CODEC_ZLIB_RAW) ||
        (decoder && (decoder->codec != codec || decoder->position > entry->skip))) {
        codec_part_decoder_free(decoder);
        return -EIO;
    }
    if (!decoder && !(decoder = decoder_open(codec, entry, read, ctx)))
        return -EIO;
    struct part_sink sink = { .out = out, .out_size = out_size, .skip = entry->skip - decoder->position,
                              .check_end = entry->part == CHUNK_PART_LAST && !entry->prefix &&
                                           codec != CODEC_ZLIB_RAW };
    /* A whole gzip chunk, or a part resumed where it starts, skips nothing:
     * no buffer to map for it. */
    sink.discard = sink.skip ? g_try_malloc(PART_IO) : NULL;
    int rc = -ENOMEM;
    if (sink.discard || !sink.skip)
        rc = codec == CODEC_BROTLI ? part_brotli(decoder, &sink, read, ctx)
           : codec == CODEC_ZSTD   ? part_zstd(decoder, &sink, read, ctx)
                                   : part_zlib(decoder, &sink, read, ctx);
    g_free(sink.discard);
    decoder->position = entry->skip + out_size;
    if (rc == 0 && resume && entry->part == CHUNK_PART)
        *resume = decoder;
    else
        codec_part_decoder_free(decoder);
    return rc;
}
