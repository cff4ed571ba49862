/* How one record looks: as a line of events.yaml (llvm-xray convert's YAML)
 * and as a line of the events files. */
#include <inttypes.h>
#include "xray_format.h"

uint64_t xray_tsc_ns(const struct xray_state *state, uint64_t tsc)
{
    uint64_t frequency = state->header.cycle_frequency;
    if (frequency == 0)
        return tsc;
    return (uint64_t)(((unsigned __int128)tsc * 1000000000u) / frequency);
}

/* FDR v2 logs have no Pid record and llvm's expander reports the tid as the
 * process; v1 and basic logs before v3 have none (0, which YAML omits). */
uint32_t xray_shown_pid(const struct xray_state *state, const struct xray_thread *thread)
{
    if (state->header.type == 1 && state->header.version == 2)
        return (uint32_t)thread->tid;
    return (uint32_t)thread->pid;
}

const char *xray_kind_name(enum xray_kind kind)
{
    switch (kind) {
    case XRAY_ENTER: return "function-enter";
    case XRAY_EXIT: return "function-exit";
    case XRAY_TAIL_EXIT: return "function-tail-exit";
    case XRAY_ENTER_ARG: return "function-enter-arg";
    case XRAY_CUSTOM: return "custom-event";
    case XRAY_TYPED: return "typed-event";
    }
    return "unknown";
}

/* What llvm-xray shows as a function: the symbol with a binary, else the id. */
void xray_function_label(const struct xray_state *state, uint32_t func_id, GString *out)
{
    if (state->symbols)
        xray_symbols_label(state->symbols, (int32_t)func_id, out);
    else
        g_string_append_printf(out, "%" PRId32, (int32_t)func_id);
}

/* The YAML scalars of the symbolized names, made once at index time. */
void xray_prepare_labels(struct xray_state *state)
{
    if (!state->symbols)
        return;
    uint32_t count = xray_symbols_function_count(state->symbols);
    state->yaml_labels = g_ptr_array_new_full(count, g_free);
    GString *label = g_string_new(NULL), *scalar = g_string_new(NULL);
    for (uint32_t id = 1; id <= count; id++) {
        g_string_truncate(label, 0);
        g_string_truncate(scalar, 0);
        xray_symbols_label(state->symbols, (int32_t)id, label);
        xray_yaml_scalar(scalar, label->str, label->len);
        g_ptr_array_add(state->yaml_labels, g_strdup(scalar->str));
    }
    g_string_free(label, TRUE);
    g_string_free(scalar, TRUE);
}

static void append_yaml_function(const struct xray_state *state, uint32_t func_id, GString *out)
{
    int32_t id = (int32_t)func_id;
    if (state->yaml_labels && id >= 1 && (guint)id <= state->yaml_labels->len) {
        text_append_cstring(out, g_ptr_array_index(state->yaml_labels, (guint)id - 1));
        return;
    }
    if (!state->symbols) {   /* an id is numeric: LLVM single-quotes it */
        g_string_append_c(out, '\'');
        text_append_i64(out, id);
        g_string_append_c(out, '\'');
        return;
    }
    GString *label = g_string_new(NULL);
    xray_function_label(state, func_id, label);
    xray_yaml_scalar(out, label->str, label->len);
    g_string_free(label, TRUE);
}

void xray_render_yaml_header(const struct xray_state *state, GString *out)
{
    const struct xray_header *h = &state->header;
    g_string_append_printf(out,
        "---\nheader:\n  version:         %u\n  type:            %u\n"
        "  constant-tsc:    %s\n  nonstop-tsc:     %s\n  cycle-frequency: %" PRIu64 "\n",
        h->version, h->type, (h->bitfield & 1) ? "true" : "false", (h->bitfield & 2) ? "true" : "false",
        h->cycle_frequency);
    text_append_cstring(out, state->records ? "records:\n" : "records:         []\n");
}

static void append_payload(const struct xray_state *state, const struct xray_record *record, GString *out,
                           gboolean yaml)
{
    if (record->kind != XRAY_CUSTOM && record->kind != XRAY_TYPED) {
        if (yaml)
            text_append_cstring(out, "''");
        return;
    }
    guint8 *bytes = g_malloc(record->payload_size ? record->payload_size : 1);
    if (stream_read_exact(state->stream, record->payload_offset, bytes, record->payload_size) != 0) {
        g_free(bytes);
        text_append_cstring(out, yaml ? "''" : "<unreadable>");
        return;
    }
    if (yaml) {
        xray_yaml_scalar(out, (const char *)bytes, record->payload_size);
    } else {
        for (uint32_t i = 0; i < record->payload_size; i++) {
            guint8 c = bytes[i];
            if (c >= 0x20 && c < 0x7f && c != '\\' && c != ' ')
                g_string_append_c(out, (char)c);
            else
                g_string_append_printf(out, "\\x%02x", c);
        }
    }
    g_free(bytes);
}

void xray_render_yaml_record(const struct xray_state *state, const struct xray_record *record, GString *out)
{
    const struct xray_thread *thread = &g_array_index(state->threads, struct xray_thread, record->thread);
    text_append_cstring(out, "  - { type: 0, func-id: ");
    text_append_i64(out, (int32_t)record->func_id);
    text_append_cstring(out, ", function: ");
    append_yaml_function(state, record->func_id, out);
    if (record->has_arg) {
        text_append_cstring(out, ", args: [ ");
        text_append_u64(out, record->arg);
        text_append_cstring(out, " ]");
    }
    text_append_cstring(out, ", cpu: ");
    text_append_u64(out, record->cpu);
    text_append_cstring(out, ", thread: ");
    text_append_u64(out, (uint32_t)thread->tid);
    uint32_t pid = xray_shown_pid(state, thread);
    if (pid) {   /* an optional YAML key with default 0 */
        text_append_cstring(out, ", process: ");
        text_append_u64(out, pid);
    }
    text_append_cstring(out, ", kind: ");
    text_append_cstring(out, xray_kind_name(record->kind));
    text_append_cstring(out, ", tsc: ");
    text_append_u64(out, record->tsc);
    text_append_cstring(out, ", data: ");
    append_payload(state, record, out, TRUE);
    text_append_cstring(out, " }\n");
}

/* "<ns> [<tid>] <cpu> <kind> <func-id> [arg=] [type= size= data=] fn=<name>":
 * fixed columns first, the name (which may hold spaces) last. */
void xray_render_event_line(const struct xray_state *state, const struct xray_record *record,
                            gboolean with_thread, GString *out)
{
    const struct xray_thread *thread = &g_array_index(state->threads, struct xray_thread, record->thread);
    text_append_u64(out, xray_tsc_ns(state, record->tsc));
    g_string_append_c(out, ' ');
    if (with_thread) {
        text_append_i64(out, thread->tid);
        g_string_append_c(out, ' ');
    }
    gboolean event = record->kind == XRAY_CUSTOM || record->kind == XRAY_TYPED;
    text_append_u64(out, record->cpu);
    g_string_append_c(out, ' ');
    text_append_cstring(out, xray_kind_name(record->kind));
    g_string_append_c(out, ' ');
    if (event)
        text_append_cstring(out, "-");
    else
        text_append_u64(out, record->func_id);
    text_append_cstring(out, " tsc=");
    text_append_u64(out, record->tsc);
    if (record->has_arg) {
        text_append_cstring(out, " arg=");
        text_append_u64(out, record->arg);
    }
    if (event) {
        if (record->kind == XRAY_TYPED)
            g_string_append_printf(out, " type=%u", record->event_type);
        g_string_append_printf(out, " size=%" PRIu32 " data=", record->payload_size);
        append_payload(state, record, out, FALSE);
        g_string_append_c(out, '\n');
        return;
    }
    text_append_cstring(out, " fn=");
    const char *name = state->symbols ? xray_symbols_name(state->symbols, (int32_t)record->func_id) : NULL;
    if (name)
        text_append_cstring(out, name);   /* symbol names hold no newline (checked when loaded) */
    else
        text_append_u64(out, record->func_id);
    g_string_append_c(out, '\n');
}
