/* Decompressors for one chunk each.  Every function checks that the
 * compressed input yields exactly `out_size` bytes and returns 0 or -EIO. */
#ifndef TRACEFS_CODEC_H
#define TRACEFS_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum codec {
    CODEC_IDENTITY,
    CODEC_BROTLI,
    CODEC_SNAPPY,
    CODEC_ZLIB_RAW,     /* raw deflate resumed at a seek point (see chunk_entry) */
    CODEC_ZSTD,
};

/* What a chunk is: where its compressed bytes lie in the file and where its
 * decompressed bytes lie in the stream. */
struct chunk_entry {
    uint64_t file_offset;      /* first compressed byte in the file */
    uint64_t stream_offset;    /* first decompressed byte in the stream */
    uint32_t compressed_size;
    uint32_t size;             /* decompressed bytes */
    /* CODEC_ZLIB_RAW seek point (as zran.c keeps them): `bits` unused bits
     * of the byte before file_offset (0..7) and the 32 KiB window of output
     * before stream_offset, kept deflated (codec_window_pack) in
     * `window_size` bytes (NULL at the stream's start).  Owned by the
     * stream's chunk table. */
    uint8_t bits;
    uint32_t window_size;
    const uint8_t *window;
    /* Output bytes to discard before the chunk's data starts (zlib seek
     * points fall mid-block; 0 for other codecs). */
    uint32_t skip;
    /* The chunk is the first `size` bytes its input yields before the input
     * ends or turns out damaged (a cut-off trace's last chunk): decoded by
     * streaming, not checked to end where its framing says. */
    uint8_t prefix;
    /* A virtual sub-chunk of a big brotli, zstd or gzip chunk:
     * `file_offset`, `compressed_size`, `bits` and `window` are the whole
     * chunk's (its parts share one window, owned by the first), `skip` the
     * output before this part; decoded by streaming.  CHUNK_PART_LAST also
     * checks that a brotli or zstd chunk ends right after it (unless
     * `prefix`). */
    uint8_t part;
};

enum chunk_part { CHUNK_WHOLE, CHUNK_PART, CHUNK_PART_LAST };

/* Reads up to `len` input bytes at `at` (relative to the chunk's
 * file_offset); returns the bytes read, 0 at the end, or a negative errno. */
typedef ssize_t (*codec_read_fn)(void *ctx, uint8_t *buf, size_t len, uint64_t at);

int codec_decompress(enum codec codec, const struct chunk_entry *entry,
                     const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size);

/* Decodes until out_size bytes are out, the input ends, or it is found
 * damaged; returns the bytes produced (what a cut-off stream yields).
 * Brotli, snappy (one raw block) and zstd (one frame). */
size_t codec_decompress_prefix(enum codec codec, const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size);

/* A sub-chunk (entry->part != CHUNK_WHOLE), or any gzip chunk: streams the
 * chunk's input through `read`, discards entry->skip bytes of output and
 * keeps out_size.  Holds 64 KiB of input and the decoder's window (at most
 * 2^LIMIT_DECODER_WINDOW_LOG bytes; a stream needing more is -EIO).
 * `resume` (may be NULL): on entry *resume is NULL or a decoder of the same
 * chunk standing at or before entry->skip, which is used (and owned) from
 * there; on return it is the decoder standing at this part's end when the
 * part was made and the chunk has more parts, else NULL. */
struct codec_part_decoder;
int codec_decompress_part(enum codec codec, const struct chunk_entry *entry, codec_read_fn read, void *ctx,
                          uint8_t *out, size_t out_size, struct codec_part_decoder **resume);
void codec_part_decoder_free(struct codec_part_decoder *decoder);

/* Bytes of window a streaming decoder keeps for the brotli stream or zstd
 * frame starting with `in` (its first 18 bytes suffice), or for a gzip
 * chunk; 0 when the header is not readable or asks for a large-window
 * brotli stream. */
uint64_t codec_window_size(enum codec codec, const uint8_t *in, size_t in_size);

/* log2 of the window a brotli stream declares in its first bits
 * (10..24; 0 for the large-window extension or no input). */
unsigned codec_brotli_window_log(const uint8_t *in, size_t in_size);

/* The 32 KiB of output before a zlib seek point.  A window is held for
 * every few MiB of output, so it is kept deflated: it then costs about what
 * its stretch of the file does, whatever the trace's compression ratio. */
#define CODEC_WINDOW_BYTES 32768u
/* The deflated `window` (CODEC_WINDOW_BYTES), g_malloc'd, and its size. */
uint8_t *codec_window_pack(const uint8_t *window, uint32_t *packed_size);
/* Inflates a packed window into `window` (CODEC_WINDOW_BYTES); 0, or -EIO
 * when it does not yield exactly that. */
int codec_window_unpack(const uint8_t *packed, uint32_t packed_size, uint8_t *window);

/* Sizes a codec knows from its own framing (0 when it does not). */
uint64_t codec_snappy_uncompressed_length(const uint8_t *in, size_t in_size);

#endif
