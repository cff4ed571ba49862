/* Containers: the compressed file -> one stream of call events, read
 * through the chunk cache.
 *  snappy  'a''t' + (u32 LE length, raw snappy block)*: one chunk each
 *  gzip    seek points every LIMIT_APITRACE_GZIP_SPAN of output or more,
 *  zstd    one chunk per frame, and
 *  brotli  one chunk: whole-file containers (engine/compressed_file.h)
 *  none    the raw stream itself */
#include <inttypes.h>
#include "apitrace.h"
#include "codec.h"
#include "compressed_file.h"
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
    while (at < size) {
        if (chunks->len >= stream_chunk_budget(size)) {
            trace_error(trace, "container", at, "more than %" G_GUINT64_FORMAT " snappy chunks, what a file of %"
                        G_GUINT64_FORMAT " bytes may index: the rest is not shown", stream_chunk_budget(size), size);
            break;
        }
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
    return compressed_file_stream(trace, CODEC_SNAPPY, chunks);
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
    case AT_CONTAINER_GZIP: state->container = "ZLib"; stream = compressed_file_gzip(trace, LIMIT_APITRACE_GZIP_SPAN,
                                                      stream_table_budget_bytes((uint64_t)trace->st.st_size));
        break;
    case AT_CONTAINER_ZSTD: state->container = "Zstd"; stream = compressed_file_zstd(trace); break;
    case AT_CONTAINER_OTHER:
        if (at_plausible_raw(head, n > 0 ? (size_t)n : 0)) {
            state->container = "None";
            stream = trace_file_stream(trace);
        } else {
            state->container = "Brotli";
            stream = compressed_file_brotli(trace);
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
