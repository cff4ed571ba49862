/* LLVM XRay logs: the format entry (probe, index, close). */
#include <string.h>
#include "keyed_hash.h"
#include "xray_format.h"

static int xray_parse_header(const uint8_t *bytes, size_t size, struct xray_header *out)
{
    if (size < 32)
        return -1;
    out->version = load_le16(bytes);
    out->type = load_le16(bytes + 2);
    out->bitfield = load_le32(bytes + 4);
    out->cycle_frequency = load_le64(bytes + 8);
    out->buffer_size = load_le64(bytes + 16);
    if (out->type == 1 && out->version >= 1 && out->version <= 5)
        return 0;
    if (out->type == 0 && out->version >= 1 && out->version <= 3)
        return 0;
    return -1;
}

static int xray_probe(const struct probe_input *input)
{
    struct xray_header header;
    if (input->is_directory || xray_parse_header(input->head, input->head_size, &header) != 0)
        return 0;
    if (input->size == 32)
        return 30;   /* a header alone: a log with no records */
    if (input->head_size < 33)
        return 0;
    uint8_t first = input->head[32];
    if (header.type == 1)
        return first == (header.version >= 2 ? 0x0f : 0x01) ? 80 : 0;
    /* basic: 32-byte records that start with record_type 0 and a type of
     * 0..3 (when the file holds that byte: a first record cut off before
     * it is still a basic log, whose /errors says so) */
    if (input->head_size >= 34 && load_le16(input->head + 32) == 0 && (input->head_size < 36 || input->head[35] <= 3))
        return 60;
    return 0;
}

/* XRay's runtime names a log xray-log.<binary>.<suffix>: the binary may sit beside it. */
static char *binary_beside(const char *log_path)
{
    char *base = g_path_get_basename(log_path);
    const char *name = g_str_has_prefix(base, "xray-log.") ? base + strlen("xray-log.") : NULL;
    const char *dot = name ? strrchr(name, '.') : NULL;
    char *result = NULL;
    if (dot && dot > name) {
        char *binary = g_strndup(name, (gsize)(dot - name));
        char *dir = g_path_get_dirname(log_path);
        result = g_build_filename(dir, binary, NULL);
        g_free(dir);
        g_free(binary);
    }
    g_free(base);
    if (result && !g_file_test(result, G_FILE_TEST_IS_REGULAR))
        g_clear_pointer(&result, g_free);
    return result;
}

static void load_symbols(struct xray_state *state)
{
    struct trace *trace = state->trace;
    char *beside = trace->options.xray_binary ? NULL : binary_beside(trace->path);
    const char *path = trace->options.xray_binary ? trace->options.xray_binary : beside;
    if (path) {
        state->symbols = xray_symbols_load(trace, path);
        trace_info_add_string(trace, "binary", path);
        state->binary_path = g_canonicalize_filename(path, NULL);
    }
    g_free(beside);
}

static void check_function_ids(struct xray_state *state)
{
    if (!state->symbols)
        return;
    uint32_t count = xray_symbols_function_count(state->symbols);
    for (guint i = 0; i < state->functions->len; i++) {
        const struct xray_function_stats *s = &g_array_index(state->functions, struct xray_function_stats, i);
        if (s->func_id < 1 || s->func_id > count)
            trace_error(state->trace, "log", 0, "function id %u is not in the binary's instrumentation map (%u functions)",
                        s->func_id, count);
    }
}

struct xray_state *xray_state_new(struct trace *trace)
{
    struct xray_state *state = g_new0(struct xray_state, 1);
    trace->format_state = state;
    state->trace = trace;
    state->stream = trace_file_stream(trace);
    uint8_t head[32];
    if (!state->stream || stream_read_exact(state->stream, 0, head, sizeof head) != 0) {
        trace_fail(trace, "an XRay log starts with a 32-byte header: the file is shorter");
        return NULL;
    }
    if (xray_parse_header(head, sizeof head, &state->header) != 0) {
        trace_fail(trace, "XRay header: version %u type %u is not an FDR (1-5) or basic (1-3) log",
                   load_le16(head), load_le16(head + 2));
        return NULL;
    }
    static gint serials;
    state->serial = (uint64_t)(guint)g_atomic_int_add(&serials, 1) + 1;
    GArray **arrays[] = XRAY_STATE_ARRAYS(state);
    static const guint element_sizes[] = {
        sizeof(struct xray_thread), sizeof(struct xray_segment), sizeof(struct xray_run), sizeof(guint64),
        sizeof(uint32_t), sizeof(struct xray_position), sizeof(struct xray_long_call),
        sizeof(struct xray_function_stats), sizeof(uint32_t), sizeof(struct xray_stack_node), sizeof(guint64),
        sizeof(guint64) };
    G_STATIC_ASSERT(G_N_ELEMENTS(element_sizes) == G_N_ELEMENTS(arrays));
    for (size_t i = 0; i < G_N_ELEMENTS(arrays); i++)
        *arrays[i] = g_array_new(FALSE, FALSE, element_sizes[i]);
    state->trie = g_hash_table_new_full(keyed_hash_int64, g_int64_equal, g_free, NULL);
    load_symbols(state);
    xray_prepare_labels(state);
    return state;
}

static int xray_index(struct trace *trace)
{
    struct xray_state *state = xray_state_new(trace);
    if (!state)
        return -1;
    xray_scan(state);
    xray_analyze(state);
    check_function_ids(state);
    return 0;
}

static void xray_close(struct trace *trace)
{
    struct xray_state *state = trace->format_state;
    if (!state)
        return;
    xray_merge_forget(state);
    GArray **arrays[] = XRAY_STATE_ARRAYS(state);
    for (size_t i = 0; i < G_N_ELEMENTS(arrays); i++)
        g_clear_pointer(arrays[i], g_array_unref);
    g_free(state->rank);
    g_clear_pointer(&state->trie, g_hash_table_destroy);
    xray_symbols_free(state->symbols);
    g_free(state->binary_path);
    xray_free_labels(state->yaml_labels);
    g_free(state);
}

const struct format format_xray = {
    .name = "xray",
    .description = "LLVM XRay log (FDR v1-v5, basic v1-v3)",
    .probe = xray_probe,
    .index = xray_index,
    .build_tree = xray_build_tree,
    .close = xray_close,
    .save = xray_save,
    .load = xray_load,
    .events = &xray_event_iterator,
    .index_version = 4,
};
