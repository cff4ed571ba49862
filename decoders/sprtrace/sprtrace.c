/* sp-rtrace binary logs (protocol 1.x and 2.0): the format's entry points. */
#include <stddef.h>
#include "sprtrace.h"
#include "trace.h"

#define NUMBER(type, member) { offsetof(type, member), sizeof(((type *)0)->member) }

const struct sprt_table sprt_tables[SPRT_TABLES] = {
    [SPRT_RESOURCES] = {
        T_RESR, "RESR", sizeof(struct sprt_resource),
        { NUMBER(struct sprt_resource, id), NUMBER(struct sprt_resource, flags), NUMBER(struct sprt_resource, offset) },
        offsetof(struct sprt_resource, type), offsetof(struct sprt_resource, type_len),
        offsetof(struct sprt_resource, desc),
    },
    [SPRT_CONTEXTS] = {
        T_CTXR, "CTXR", sizeof(struct sprt_named), { NUMBER(struct sprt_named, id) },
        offsetof(struct sprt_named, name), offsetof(struct sprt_named, name_len), SPRT_NO_FIELD,
    },
    [SPRT_MODULES] = {
        T_MINF, "MINF", sizeof(struct sprt_module),
        { NUMBER(struct sprt_module, id), NUMBER(struct sprt_module, vmajor), NUMBER(struct sprt_module, vminor) },
        SPRT_NO_FIELD, SPRT_NO_FIELD, offsetof(struct sprt_module, name),
    },
    [SPRT_MMAPS] = {
        T_MMAP, "MMAP", sizeof(struct sprt_mmap), { NUMBER(struct sprt_mmap, from), NUMBER(struct sprt_mmap, to) },
        SPRT_NO_FIELD, SPRT_NO_FIELD, offsetof(struct sprt_mmap, path),
    },
    [SPRT_FILES] = {
        T_FILE, "FILE", sizeof(struct sprt_file), { { 0, 0 } },
        offsetof(struct sprt_file, name), offsetof(struct sprt_file, name_len), offsetof(struct sprt_file, path),
    },
};

static void free_table(GArray *array, const struct sprt_table *table)
{
    for (guint i = 0; i < array->len; i++) {
        char *entry = array->data + i * table->entry_size;
        char **name = sprt_entry_string(entry, table->name), **string = sprt_entry_string(entry, table->string);
        g_free(name ? *name : NULL);
        g_free(string ? *string : NULL);
    }
    g_array_unref(array);
}

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
    g_clear_pointer(&state->module_spans, g_array_unref);
    g_clear_pointer(&state->groups, g_array_unref);
    g_clear_pointer(&state->group_calls, g_byte_array_unref);
    for (unsigned t = 0; t < SPRT_TABLES; t++)
        free_table(state->tables[t], &sprt_tables[t]);
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
    trace->format_state = state;
    state->checkpoints = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    state->leak_bits = g_byte_array_new();
    state->pair_codes = g_byte_array_new();
    state->pair_names = g_ptr_array_new_with_free_func(g_free);
    state->pair_escapes = g_array_new(FALSE, FALSE, sizeof(struct sprt_pair_escape));
    state->res_previous = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (unsigned id = 0; id <= LIMIT_SPRT_RESOURCE_ID; id++)
        state->res_last[id] = SPRT_NONE;
    state->groups = g_array_new(FALSE, FALSE, sizeof(struct sprt_group));
    state->group_calls = g_byte_array_new();
    /* Grown zeroed: a load fills their entries in place. */
    for (unsigned t = 0; t < SPRT_TABLES; t++)
        state->tables[t] = g_array_new(FALSE, TRUE, (guint)sprt_tables[t].entry_size);
    return state;
}

const struct format format_sprtrace = {
    .name = "sp-rtrace",
    .description = "sp-rtrace binary log (protocol 1.x, 2.0)",
    .probe = sprt_probe,
    .index = sprt_index,
    .build_tree = sprt_build_tree,
    .close = sprtrace_close,
    .save = sprt_save,
    .load = sprt_load,
    .index_version = 7,
    .events = &sprt_event_iterator,
};
