/* The persistent index of an XRay log: the time-sorted records, the calls
 * and the stack trie, so that a remount skips the index pass.  Everything
 * derived from them (thread links, per-function stats, event lists) is
 * rebuilt on load, and every saved number is checked like trace data. */
#include <string.h>
#include <sys/stat.h>
#include "saved_bytes.h"
#include "tracefs_limits.h"
#include "xray_format.h"
#include "xray_persist.h"

#define XRAY_SAVE_MAGIC 0x31535258u   /* "XRS1" */

/* Which binary the names (and the index pass's errors about it) came from:
 * a saved index applies only to the same one. */
static char *binary_identity(const struct xray_state *state)
{
    struct stat st;
    if (!state->binary_path || stat(state->binary_path, &st) != 0)
        return g_strdup(state->binary_path ? state->binary_path : "");
    return g_strdup_printf("%s:%lld:%lld:%lld", state->binary_path, (long long)st.st_size,
                           (long long)st.st_mtime, (long long)st.st_ino);
}

int xray_save(struct trace *trace, struct saved_writer *out)
{
    const struct xray_state *state = trace->format_state;
    if (!state)
        return -1;
    uint64_t bytes = (uint64_t)state->threads->len * sizeof(struct xray_thread) +
                     (uint64_t)state->refs->len * sizeof(struct xray_ref) +
                     (uint64_t)state->calls->len * sizeof(struct xray_call) +
                     (uint64_t)state->stack_nodes->len * sizeof(struct xray_stack_node);
    if (bytes > LIMIT_XRAY_SAVED_BYTES)
        return -1;
    uint32_t magic = XRAY_SAVE_MAGIC;
    saved_put(out, &magic, sizeof magic);
    saved_put(out, &state->header, sizeof state->header);
    char *binary = binary_identity(state);
    saved_put_string(out, binary);
    g_free(binary);
    saved_put_u64(out, state->unmatched_exits);
    saved_put_array(out, state->threads);
    saved_put_array(out, state->refs);
    saved_put_array(out, state->calls);
    saved_put_array(out, state->stack_nodes);
    return 0;
}

static gboolean refs_valid(const struct xray_state *state, uint64_t file_size)
{
    uint32_t threads = state->threads->len, nodes = state->stack_nodes->len;
    for (guint i = 0; i < state->refs->len; i++) {
        const struct xray_ref *ref = &g_array_index(state->refs, struct xray_ref, i);
        if (ref->thread >= threads || ref->kind > XRAY_TYPED || ref->offset >= file_size ||
            (ref->stack_node != UINT32_MAX && ref->stack_node >= nodes))
            return FALSE;
        if (ref->kind == XRAY_CUSTOM || ref->kind == XRAY_TYPED) {
            uint8_t r[16];
            if (stream_read_exact(state->stream, ref->offset, r, 16) != 0)
                return FALSE;
            int32_t size = (int32_t)load_le32(r + 1);
            if (size < 0 || (uint64_t)size > file_size - ref->offset - 16)
                return FALSE;
        }
    }
    return TRUE;
}

static gboolean calls_valid(const struct xray_state *state)
{
    for (guint i = 0; i < state->calls->len; i++) {
        const struct xray_call *c = &g_array_index(state->calls, struct xray_call, i);
        if (c->thread >= state->threads->len || c->enter_ref >= state->refs->len || c->end_tsc < c->start_tsc)
            return FALSE;
    }
    for (guint i = 0; i < state->stack_nodes->len; i++) {
        uint32_t parent = g_array_index(state->stack_nodes, struct xray_stack_node, i).parent;
        if (parent != UINT32_MAX && parent >= i)   /* parents come first: no cycles */
            return FALSE;
    }
    return TRUE;
}

static gboolean same_binary(struct saved_reader *r, const struct xray_state *state)
{
    char *saved = saved_get_string(r, 1u << 16);
    char *binary = binary_identity(state);
    gboolean same = saved && strcmp(saved, binary) == 0;
    g_free(binary);
    g_free(saved);
    return same;
}

int xray_load(struct trace *trace, const uint8_t *data, size_t size)
{
    struct xray_state *state = xray_state_new(trace);
    if (!state)
        return -1;
    struct saved_reader r;
    saved_reader_init_mapped(&r, data, size);
    uint32_t magic = 0;
    struct xray_header header;
    if (!saved_take(&r, &magic, sizeof magic) || magic != XRAY_SAVE_MAGIC || !saved_take(&r, &header, sizeof header) ||
        memcmp(&header, &state->header, sizeof header) != 0 || !same_binary(&r, state))
        return -1;
    state->unmatched_exits = saved_get_u64(&r);
    if (!saved_get_array(&r, state->threads, LIMIT_XRAY_THREADS) ||
        !saved_get_array(&r, state->refs, LIMIT_XRAY_RECORDS) ||
        !saved_get_array(&r, state->calls, state->refs->len) ||
        !saved_get_array(&r, state->stack_nodes, state->refs->len) || !saved_reader_done(&r))
        return -1;
    if (!refs_valid(state, stream_size(state->stream)) || !calls_valid(state))
        return -1;
    xray_finish_index(state, TRUE);
    return 0;
}
