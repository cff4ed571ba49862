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

void xray_render_yaml_header(const struct xray_state *state, GString *out)
{
    const struct xray_header *h = &state->header;
    g_string_append_printf(out,
        "---\nheader:\n  version:         %u\n  type:            %u\n"
        "  constant-tsc:    %s\n  nonstop-tsc:     %s\n  cycle-frequency: %" PRIu64 "\n",
        h->version, h->type, (h->bitfield & 1) ? "true" : "false", (h->bitfield & 2) ? "true" : "false",
        h->cycle_frequency);
    g_string_append(out, state->refs->len ? "records:\n" : "records:         []\n");
}

static void append_payload(const struct xray_state *state, const struct xray_record *record, GString *out,
                           gboolean yaml)
{
    if (record->kind != XRAY_CUSTOM && record->kind != XRAY_TYPED) {
        if (yaml)
            g_string_append(out, "''");
        return;
    }
    guint8 *bytes = g_malloc(record->payload_size ? record->payload_size : 1);
    if (stream_read_exact(state->stream, record->payload_offset, bytes, record->payload_size) != 0) {
        g_free(bytes);
        g_string_append(out, yaml ? "''" : "<unreadable>");
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
    g_string_append_printf(out, "  - { type: 0, func-id: %" PRId32 ", function: ", (int32_t)record->func_id);
    GString *label = g_string_new(NULL);
    xray_function_label(state, record->func_id, label);
    xray_yaml_scalar(out, label->str, label->len);
    g_string_free(label, TRUE);
    if (record->has_arg)
        g_string_append_printf(out, ", args: [ %" PRIu64 " ]", record->arg);
    g_string_append_printf(out, ", cpu: %u, thread: %" PRIu32 ", process: %" PRIu32 ", kind: %s, tsc: %" PRIu64
                           ", data: ", record->cpu, (uint32_t)thread->tid, (uint32_t)thread->pid,
                           xray_kind_name(record->kind), record->tsc);
    append_payload(state, record, out, TRUE);
    g_string_append(out, " }\n");
}

/* "<ns> [<tid>] <cpu> <kind> <func-id> [arg=] [type= size= data=] fn=<name>":
 * fixed columns first, the name (which may hold spaces) last. */
void xray_render_event_line(const struct xray_state *state, const struct xray_record *record,
                            gboolean with_thread, GString *out)
{
    const struct xray_thread *thread = &g_array_index(state->threads, struct xray_thread, record->thread);
    g_string_append_printf(out, "%" PRIu64 " ", xray_tsc_ns(state, record->tsc));
    if (with_thread)
        g_string_append_printf(out, "%" PRId32 " ", thread->tid);
    gboolean event = record->kind == XRAY_CUSTOM || record->kind == XRAY_TYPED;
    g_string_append_printf(out, "%u %s ", record->cpu, xray_kind_name(record->kind));
    if (event)
        g_string_append(out, "-");
    else
        g_string_append_printf(out, "%" PRIu32, record->func_id);
    g_string_append_printf(out, " tsc=%" PRIu64, record->tsc);
    if (record->has_arg)
        g_string_append_printf(out, " arg=%" PRIu64, record->arg);
    if (event) {
        if (record->kind == XRAY_TYPED)
            g_string_append_printf(out, " type=%u", record->event_type);
        g_string_append_printf(out, " size=%" PRIu32 " data=", record->payload_size);
        append_payload(state, record, out, FALSE);
        g_string_append_c(out, '\n');
        return;
    }
    g_string_append(out, " fn=");
    GString *label = g_string_new(NULL);
    if (state->symbols && xray_symbols_name(state->symbols, (int32_t)record->func_id))
        g_string_append(label, xray_symbols_name(state->symbols, (int32_t)record->func_id));
    else
        g_string_append_printf(label, "%" PRIu32, record->func_id);
    for (gsize i = 0; i < label->len; i++)   /* one record, one line */
        if (label->str[i] == '\n')
            label->str[i] = ' ';
    g_string_append_len(out, label->str, (gssize)label->len);
    g_string_free(label, TRUE);
    g_string_append_c(out, '\n');
}
