/* Test helper: converts between a byte stream and rr's chunked brotli
 * stream file (u32 compressed length, u32 uncompressed length, brotli
 * block), as rr's CompressedWriter writes it.
 *   rr_blocks pack BLOCK_SIZE < raw > file      rr_blocks unpack < file > raw */
#include <brotli/decode.h>
#include <brotli/encode.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *slurp(size_t *size)
{
    size_t cap = 1 << 20, len = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf && (got = fread(buf + len, 1, cap - len, stdin)) > 0) {
        len += got;
        if (len == cap)
            buf = realloc(buf, cap *= 2);
    }
    *size = len;
    return buf;
}

static void put32(uint32_t v)
{
    uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
    fwrite(b, 1, 4, stdout);
}

/* Block by block from stdin, so that a stream of gigabytes (the hostile
 * traces of tests/rr/hostile_names.py) needs one block of memory. */
static int pack(size_t block)
{
    uint8_t *in = block ? malloc(block) : NULL;
    int status = in ? 0 : 1;
    size_t n;
    while (in && (n = fread(in, 1, block, stdin)) > 0) {
        size_t out_size = BrotliEncoderMaxCompressedSize(n);
        uint8_t *out = malloc(out_size);
        if (!out || !BrotliEncoderCompress(5, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, n, in, &out_size, out))
            return 1;
        put32((uint32_t)out_size);
        put32((uint32_t)n);
        fwrite(out, 1, out_size, stdout);
        free(out);
    }
    free(in);
    return status;
}

static int unpack(void)
{
    size_t size, at = 0;
    uint8_t *in = slurp(&size);
    while (in && at + 8 <= size) {
        uint32_t c = in[at] | in[at + 1] << 8 | in[at + 2] << 16 | (uint32_t)in[at + 3] << 24;
        size_t u = in[at + 4] | in[at + 5] << 8 | in[at + 6] << 16 | (uint32_t)in[at + 7] << 24;
        uint8_t *out = malloc(u ? u : 1);
        if (at + 8 + c > size || BrotliDecoderDecompress(c, in + at + 8, &u, out) != BROTLI_DECODER_RESULT_SUCCESS)
            return 1;
        fwrite(out, 1, u, stdout);
        free(out);
        at += 8 + c;
    }
    free(in);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "pack") == 0)
        return pack((size_t)strtoul(argv[2], NULL, 0));
    if (argc >= 2 && strcmp(argv[1], "unpack") == 0)
        return unpack();
    fprintf(stderr, "usage: rr_blocks pack BLOCK_SIZE | unpack\n");
    return 2;
}
