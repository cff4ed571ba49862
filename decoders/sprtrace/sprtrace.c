/* sp-rtrace binary logs (protocol 1.x and 2.0): the format's entry points. */
#include "sprtrace.h"
#include "trace.h"
#include "trace_event.h"

static void free_strings(GArray *array, size_t element, size_t first, size_t second)
{
    if (!array)
        return;
    for (guint i = 0; i < array->len; i++) {
        char *base = array->data + i * element;
        g_free(*(char **)(base + first));
        if (second != first)
            g_free(*(char **)(base + second));
    }
    g_array_unref(array);
}

#define FREE_STRINGS(array, type, first, second) \
    free_strings(array, sizeof(type), G_STRUCT_OFFSET(type, first), G_STRUCT_OFFSET(type, second))

static void sprtrace_close(struct trace *trace)
{
    struct sprt_state *state = trace->format_state;
    if (!state)
        return;
    g_free(state->arch);
    g_free(state->process);
    g_clear_pointer(&state->checkpoints, g_array_unref);
    g_clear_pointer(&state->leak_bits, g_byte_array_unref);
    g_clear_pointer(&state->pair_codes, g_byte_array_unref);
    g_clear_pointer(&state->pair_names, g_ptr_array_unref);
    g_clear_pointer(&state->pair_escapes, g_array_unref);
    g_clear_pointer(&state->res_previous, g_array_unref);
    g_clear_pointer(&state->groups, g_array_unref);
    g_clear_pointer(&state->group_calls, g_byte_array_unref);
    FREE_STRINGS(state->resources, struct sprt_resource, type, desc);
    FREE_STRINGS(state->contexts, struct sprt_named, name, name);
    FREE_STRINGS(state->modules, struct sprt_module, name, name);
    FREE_STRINGS(state->mmaps, struct sprt_mmap, path, path);
    FREE_STRINGS(state->files, struct sprt_file, name, path);
    if (state->environment)
        g_string_free(state->environment, TRUE);
    if (state->leak_summary)
        g_string_free(state->leak_summary, TRUE);
    g_free(state);
}

struct sprt_state *sprt_state_new(struct trace *trace)
{
    struct sprt_state *state = g_new0(struct sprt_state, 1);
    state->stream = trace_file_stream(trace);
    state->checkpoints = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    state->leak_bits = g_byte_array_new();
    state->pair_codes = g_byte_array_new();
    state->pair_names = g_ptr_array_new_with_free_func(g_free);
    state->pair_escapes = g_array_new(FALSE, FALSE, sizeof(struct sprt_pair_escape));
    state->res_previous = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    state->groups = g_array_new(FALSE, FALSE, sizeof(struct sprt_group));
    state->group_calls = g_byte_array_new();
    state->resources = g_array_new(FALSE, FALSE, sizeof(struct sprt_resource));
    state->contexts = g_array_new(FALSE, FALSE, sizeof(struct sprt_named));
    state->modules = g_array_new(FALSE, FALSE, sizeof(struct sprt_module));
    state->mmaps = g_array_new(FALSE, FALSE, sizeof(struct sprt_mmap));
    state->files = g_array_new(FALSE, FALSE, sizeof(struct sprt_file));
    return state;
}

static int sprtrace_index(struct trace *trace)
{
    struct sprt_state *state = sprt_state_new(trace);
    trace->format_state = state;
    if (!state->stream) {
        trace_fail(trace, "cannot read the sp-rtrace log");
        return -1;
    }
    return sprt_index(trace, state) != 0 ? -1 : 0;
}

const struct format format_sprtrace = {
    .name = "sp-rtrace",
    .description = "sp-rtrace binary log (protocol 1.x, 2.0)",
    .probe = sprt_probe,
    .index = sprtrace_index,
    .build_tree = sprt_build_tree,
    .close = sprtrace_close,
    .save = sprt_save,
    .load = sprt_load,
    .index_version = 7,
    .events = &sprt_event_iterator,
};
