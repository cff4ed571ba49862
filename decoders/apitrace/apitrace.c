/* apitrace: the format's entry points (probe, index, build_tree, close). */
#include <brotli/decode.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "apitrace.h"
#include "format.h"
#include "tracefs_limits.h"
#include "trace.h"

/* The decompressed head of a compressed trace, to check its header. */
static size_t inflate_head(const struct probe_input *input, uint8_t *out, size_t size)
{
    z_stream z = { .next_in = (Bytef *)input->head, .avail_in = (uInt)input->head_size,
                   .next_out = out, .avail_out = (uInt)size };   /* inflateInit2 leaves these as they are */
    if (inflateInit2(&z, 47) != Z_OK)
        return 0;
    inflate(&z, Z_SYNC_FLUSH);
    size_t produced = size - z.avail_out;
    inflateEnd(&z);
    return produced;
}

static size_t unzstd_head(const struct probe_input *input, uint8_t *out, size_t size)
{
    ZSTD_DStream *d = ZSTD_createDStream();
    /* A frame asking for a larger window is not decoded (nor allocated for). */
    ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, LIMIT_DECODER_WINDOW_LOG);
    ZSTD_inBuffer in = { input->head, input->head_size, 0 };
    ZSTD_outBuffer o = { out, size, 0 };
    size_t rc = ZSTD_decompressStream(d, &o, &in);
    ZSTD_freeDStream(d);
    return ZSTD_isError(rc) ? 0 : o.pos;
}

/* Bytes decoded from the start of the file.  Brotli has no magic, so the
 * decoder is fed on past the head until it outputs, fails, or reaches the
 * end of the file; *undecided tells that LIMIT_APITRACE_PROBE_BROTLI_BYTES
 * went by with none of these (random bytes end in one of the first two, or
 * at the end of a short file).  The head the probe was given goes first,
 * so that most files (which fail in it) cost no read. */
static size_t unbrotli_head(const struct probe_input *input, uint8_t *out, size_t size, gboolean *undecided)
{
    enum { STEP = 64u << 10 };
    *undecided = FALSE;
    BrotliDecoderState *d = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    if (!d)
        return 0;
    size_t avail_out = size;
    uint8_t *next_out = out;
    size_t avail_in = input->head_size;
    const uint8_t *next_in = input->head;
    BrotliDecoderResult rc = BrotliDecoderDecompressStream(d, &avail_in, &next_in, &avail_out, &next_out, NULL);
    uint64_t offset = input->head_size;
    uint8_t *chunk = NULL;
    while (rc == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT && avail_out == size &&
           offset < LIMIT_APITRACE_PROBE_BROTLI_BYTES) {
        if (!chunk)
            chunk = g_malloc(STEP);
        ssize_t n = pread(input->fd, chunk, STEP, (off_t)offset);
        if (n <= 0)
            break;
        offset += (uint64_t)n;
        avail_in = (size_t)n;
        next_in = chunk;
        rc = BrotliDecoderDecompressStream(d, &avail_in, &next_in, &avail_out, &next_out, NULL);
    }
    BrotliDecoderDestroyInstance(d);
    g_free(chunk);
    if (rc == BROTLI_DECODER_RESULT_ERROR)
        return 0;
    *undecided = avail_out == size && rc == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT &&
                 offset >= LIMIT_APITRACE_PROBE_BROTLI_BYTES;
    return size - avail_out;
}

/* A v6 header names a property first ("process.name" on Linux). */
static int header_score(const uint8_t *head, size_t size, int strong, int weak)
{
    if (!at_plausible_raw(head, size))
        return 0;
    if (size >= 15 && head[0] == 6 && memcmp(head + 3, "process.name", 12) == 0)
        return strong;
    return weak;
}

static int apitrace_probe(const struct probe_input *input)
{
    uint8_t head[64];
    if (input->is_directory || input->head_size < 3)
        return 0;
    switch (at_container_of(input->head, input->head_size)) {
    case AT_CONTAINER_SNAPPY:
        return input->head_size >= 6 ? 90 : 0;
    case AT_CONTAINER_GZIP:
        return header_score(head, inflate_head(input, head, sizeof head), 90, 60);
    case AT_CONTAINER_ZSTD: {
        /* A large first block yields nothing from the head: zstd's magic
         * then decides alone, weakly. */
        size_t produced = unzstd_head(input, head, sizeof head);
        return produced ? header_score(head, produced, 90, 60) : 40;
    }
    case AT_CONTAINER_OTHER:
        break;
    }
    int raw = header_score(input->head, input->head_size, 80, 0);
    if (raw)
        return raw;
    /* Brotli has no magic: only a stream that decodes to an apitrace header. */
    gboolean undecided = FALSE;
    size_t produced = unbrotli_head(input, head, sizeof head, &undecided);
    if (undecided)
        return 5;      /* a megabyte of brotli stream and no output yet */
    return header_score(head, produced, 70, 0);
}

static int apitrace_index(struct trace *trace)
{
    struct at_state *state = at_state_new(trace);
    if (at_open_container(trace, state) < 0 || at_index_stream(state) < 0)
        return -1;
    return 0;
}

static void apitrace_close(struct trace *trace)
{
    struct at_state *state = trace->format_state;
    if (!state)
        return;
    at_state_free_sigs(state);
    g_clear_pointer(&state->properties, g_ptr_array_unref);
    g_clear_pointer(&state->blobs, g_array_unref);
    g_clear_pointer(&state->threads, g_array_unref);
    g_clear_pointer(&state->checkpoints, g_array_unref);
    g_clear_pointer(&state->checkpoint_pending, g_array_unref);
    g_clear_pointer(&state->unfinished, g_array_unref);
    at_walk_memo_free(state);
    g_free(state);
}

extern const struct trace_event_iterator at_event_iterator;

const struct format format_apitrace = {
    .name = "apitrace",
    .description = "apitrace call traces (snappy, gzip, zstd, brotli or raw)",
    .probe = apitrace_probe,
    .index = apitrace_index,
    .build_tree = at_build_tree,
    .close = apitrace_close,
    .save = at_save,
    .load = at_load,
    .index_version = 9,
    .events = &at_event_iterator,
};
