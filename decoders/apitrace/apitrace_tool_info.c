/* /apitrace-info.json: what `apitrace info TRACE` prints (cli/cli_info.cpp),
 * from what the index pass knows.
 *
 *  FileName          the trace's path as tracefs was given it (made
 *                    absolute when mounting), JSON-escaped where apitrace
 *                    prints it raw: the same bytes for any path without
 *                    '"', '\\', control characters or invalid UTF-8
 *  ContainerType     the name apitrace's File class gives the container;
 *                    zstd as newer apitrace names it (11.1 reads no zstd)
 *  API               from the first function signature, as apitrace's parser
 *  FramesCount       frame-ending calls, incomplete ones included
 *  ActualDataSize    the decompressed bytes the parser took from the
 *                    container: the whole stream, except for gzip, whose
 *                    getc (gzgetc) is not counted: there only File::read's
 *                    bytes, i.e. the index pass's at_read/at_skip bytes
 *                    (strings, floats, doubles, blobs)
 *  ContainerSize     the file's size
 * A raw stream (no container) has no such file: apitrace cannot read one. */
#include <inttypes.h>
#include <string.h>
#include "apitrace.h"
#include "stream.h"
#include "text.h"
#include "trace.h"
#include "tree.h"

#define ZSTD_SEEKABLE_MAGIC 0x8F92EAB1u

static const char *container_type(const struct at_state *state)
{
    if (strcmp(state->container, "Zstd") != 0)
        return state->container;
    struct trace *trace = state->trace;
    uint8_t magic[4];
    uint64_t size = (uint64_t)trace->st.st_size;
    if (size >= 4 && file_pread_full(trace->fd, magic, 4, size - 4) == 4 && load_le32(magic) == ZSTD_SEEKABLE_MAGIC)
        return "Zstandard (seekable)";
    return "Zstandard";
}

/* apitrace's API_NAMES: at_api_of's names, and its name for none. */
static const char *api_name(const struct at_state *state)
{
    return state->api && strcmp(state->api, "Unknown") != 0 ? state->api : "Unknown API";
}

void at_add_tool_info(struct at_state *state)
{
    struct trace *trace = state->trace;
    if (!state->container || strcmp(state->container, "None") == 0)
        return;
    gboolean gzip = strcmp(state->container, "ZLib") == 0;
    GString *j = g_string_new("{\n  \"FileName\": ");
    text_json_cstring(j, trace->path);
    g_string_append_printf(j, ",\n  \"ContainerVersion\": %" PRIu64 ",\n  \"ContainerType\": \"%s\",\n"
                           "  \"API\": \"%s\",\n  \"FramesCount\": %" PRIu64 ",\n  \"ActualDataSize\": %" PRIu64
                           ",\n  \"ContainerSize\": %" PRIu64 "\n}\n",
                           state->version, container_type(state), api_name(state), state->frame_count,
                           gzip ? state->bulk_bytes : stream_size(state->stream), (uint64_t)trace->st.st_size);
    tree_add_string(trace->tree, TREE_ROOT, "apitrace-info.json", j);
}
