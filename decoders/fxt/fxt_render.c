/* How FXT records read as text lines and as JSON.
 *
 * Text lines are awk-friendly: fixed leading columns, then key=value pairs.
 * Names and values are single tokens: bytes that would split a line or a
 * field (space, control bytes, '"', '\\', and '=' in keys) are written as
 * \xHH, and an empty value as "". */
#include <inttypes.h>
#include <string.h>
#include "fxt.h"
#include "text.h"

static const char *const event_names[FXT_EV_COUNT] = {
    "instant", "counter", "dur_begin", "dur_end", "dur_complete",
    "async_begin", "async_instant", "async_end", "flow_begin", "flow_step", "flow_end",
};
static const char *const chrome_phases[FXT_EV_COUNT] = {
    "i", "C", "B", "E", "X", "b", "n", "e", "s", "t", "f",
};
static const char *const thread_states[] = { "new", "running", "suspended", "blocked", "dying", "dead" };

const char *fxt_event_type_name(unsigned type)
{
    return type < FXT_EV_COUNT ? event_names[type] : "unknown";
}

static const char *fxt_chrome_phase(unsigned type)
{
    return type < FXT_EV_COUNT ? chrome_phases[type] : "i";
}

/* Bytes written as \xHH in every token, as they would split a line or a
 * field: 0x00-0x20, '"' (0x22), '\\' (0x5c) and 0x7f. */
static const struct byte_set token_escaped = { { 0x00000005ffffffffu, 0x8000000010000000u, 0, 0 } };

static void escape(GString *out, struct fxt_str s, char also)
{
    uint32_t run = 0;
    for (uint32_t i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.data[i];
        if (!byte_set_has(&token_escaped, c) && c != (unsigned char)also)   /* NUL is escaped anyway */
            continue;
        text_append(out, s.data + run, i - run);
        text_append(out, "\\x", 2);
        text_append_hex_padded(out, c, 2);
        run = i + 1;
    }
    text_append(out, s.data + run, s.len - run);
}

void fxt_render_token(GString *out, struct fxt_str s, char also)
{
    if (s.len == 0)
        g_string_append(out, "\"\"");
    else
        escape(out, s, also);
}

/* Views print millions of records: numbers and fixed pieces go through
 * text.h's appends, not printf, which was a third of rendering /events. */
void fxt_render_arg_value(GString *out, const struct fxt_arg *a)
{
    double d;
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    switch (a->type) {
    case FXT_ARG_I32: case FXT_ARG_I64: text_append_i64(out, (int64_t)a->value); break;
    case FXT_ARG_U32: case FXT_ARG_U64: case FXT_ARG_KOID:
        text_append_u64(out, a->value);
        break;
    case FXT_ARG_DOUBLE:
        memcpy(&d, &a->value, sizeof d);
        g_string_append(out, g_ascii_dtostr(buf, sizeof buf, d));
        break;
    case FXT_ARG_STRING: fxt_render_token(out, a->text, 0); break;
    case FXT_ARG_POINTER:
        text_append(out, "0x", 2);
        text_append_hex(out, a->value);
        break;
    case FXT_ARG_BOOL: text_append_cstring(out, a->value ? "true" : "false"); break;
    default: g_string_append_printf(out, "?type%u", a->type); break;
    }
}

static void fxt_render_args_text(const struct fxt_record *record, GString *out)
{
    for (uint32_t i = 0; i < record->arg_count; i++) {
        const struct fxt_arg *a = &record->args[i];
        g_string_append_c(out, ' ');
        fxt_render_token(out, a->name, '=');
        if (a->type == FXT_ARG_NULL)
            continue;
        g_string_append_c(out, '=');
        fxt_render_arg_value(out, a);
    }
}

static void arg_value_json(GString *out, const struct fxt_arg *a)
{
    double d;
    switch (a->type) {
    case FXT_ARG_I32: case FXT_ARG_I64: text_append_i64(out, (int64_t)a->value); break;
    case FXT_ARG_U32: case FXT_ARG_U64: case FXT_ARG_KOID:
        text_append_u64(out, a->value);
        break;
    case FXT_ARG_POINTER:
        text_json_hex(out, a->value);
        break;
    case FXT_ARG_DOUBLE:
        memcpy(&d, &a->value, sizeof d);
        text_json_double(out, d);
        break;
    case FXT_ARG_STRING: text_json_string(out, a->text.data, a->text.len); break;
    case FXT_ARG_BOOL: g_string_append(out, a->value ? "true" : "false"); break;
    default: g_string_append(out, "null"); break;
    }
}

static void fxt_render_args_json(const struct fxt_record *record, GString *out)
{
    g_string_append_c(out, '{');
    for (uint32_t i = 0; i < record->arg_count; i++) {
        const struct fxt_arg *a = &record->args[i];
        if (i)
            g_string_append_c(out, ',');
        text_json_string(out, a->name.data, a->name.len);
        g_string_append_c(out, ':');
        arg_value_json(out, a);
    }
    g_string_append_c(out, '}');
}

/* "<ts> <pid>/<tid> " */
static void append_when_and_who(GString *out, const struct fxt_record *r)
{
    text_append_u64(out, r->ts_ns);
    g_string_append_c(out, ' ');
    text_append_u64(out, r->pid);
    g_string_append_c(out, '/');
    text_append_u64(out, r->tid);
    g_string_append_c(out, ' ');
}

void fxt_render_event_line(const struct fxt_record *r, GString *out)
{
    append_when_and_who(out, r);
    text_append_cstring(out, fxt_event_type_name(r->event_type));
    g_string_append_c(out, ' ');
    if (r->category.len)
        escape(out, r->category, ':');
    g_string_append_c(out, ':');
    fxt_render_token(out, r->name, 0);
    if (r->event_type == FXT_EV_DUR_COMPLETE) {
        text_append(out, " dur=", 5);
        text_append_i64(out, (int64_t)(r->extra_ns - r->ts_ns));
    } else if (r->event_type == FXT_EV_DUR_BEGIN || r->event_type == FXT_EV_DUR_END
             || r->event_type == FXT_EV_INSTANT) {
        text_append(out, " -", 2);
    } else {
        text_append(out, " id=", 4);
        text_append_u64(out, r->extra);
    }
    fxt_render_args_text(r, out);
    g_string_append_c(out, '\n');
}

void fxt_render_event_json(const struct fxt_record *r, GString *out)
{
    text_append_cstring(out, "{\"ts_ns\":");
    text_append_u64(out, r->ts_ns);
    text_append_cstring(out, ",\"type\":\"");
    text_append_cstring(out, fxt_event_type_name(r->event_type));
    text_append_cstring(out, "\",\"ph\":\"");
    text_append_cstring(out, fxt_chrome_phase(r->event_type));
    text_append_cstring(out, "\",\"provider\":");
    text_append_i64(out, r->provider_id);
    text_append_cstring(out, ",\"pid\":");
    text_append_u64(out, r->pid);
    text_append_cstring(out, ",\"tid\":");
    text_append_u64(out, r->tid);
    text_append_cstring(out, ",\"cat\":");
    text_json_string(out, r->category.data, r->category.len);
    text_append_cstring(out, ",\"name\":");
    text_json_string(out, r->name.data, r->name.len);
    if (r->event_type == FXT_EV_DUR_COMPLETE) {
        text_append_cstring(out, ",\"end_ns\":");
        text_append_u64(out, r->extra_ns);
        text_append_cstring(out, ",\"dur_ns\":");
        text_append_i64(out, (int64_t)(r->extra_ns - r->ts_ns));
    } else if (r->event_type != FXT_EV_DUR_BEGIN && r->event_type != FXT_EV_DUR_END
             && r->event_type != FXT_EV_INSTANT) {
        text_append_cstring(out, ",\"id\":");
        text_append_u64(out, r->extra);
    }
    text_append_cstring(out, ",\"args\":");
    fxt_render_args_json(r, out);
    text_append(out, "}\n", 2);
}

static const char *state_name(uint32_t state)
{
    return state < G_N_ELEMENTS(thread_states) ? thread_states[state] : "unknown";
}

void fxt_render_sched_line(const struct fxt_record *r, GString *out)
{
    g_string_append_printf(out, "%" PRIu64 " ", r->ts_ns);
    if (r->sub_type == FXT_SCHED_WAKEUP) {
        g_string_append_printf(out, "wakeup cpu=%u tid=%" PRIu64, r->cpu, r->in_tid);
    } else {
        g_string_append_printf(out, "switch cpu=%u out=%" PRIu64 " out_state=%s in=%" PRIu64, r->cpu,
                               r->out_tid, state_name(r->out_state), r->in_tid);
        if (r->sub_type == FXT_SCHED_LEGACY)
            g_string_append_printf(out, " out_pid=%" PRIu64 " in_pid=%" PRIu64 " out_prio=%u in_prio=%u",
                                   r->out_pid, r->in_pid, r->out_prio, r->in_prio);
    }
    fxt_render_args_text(r, out);
    g_string_append_c(out, '\n');
}

void fxt_render_log_line(const struct fxt_record *r, GString *out)
{
    append_when_and_who(out, r);
    /* The message keeps its spaces: it is the rest of the line. */
    for (uint32_t i = 0; i < r->payload_len; i++) {
        unsigned char c = r->payload[i];
        if (c < 0x20 || c == 0x7f || c == '\\')
            g_string_append_printf(out, "\\x%02x", c);
        else
            g_string_append_c(out, (char)c);
    }
    g_string_append_c(out, '\n');
}

static const char *kobject_type_name(unsigned type)
{
    static const char *const names[] = {
        "none", "process", "thread", "vmo", "channel", "event", "port", NULL, NULL, "interrupt",
        NULL, "pci_device", "log", NULL, "socket", "resource", "eventpair", "job", "vmar", "fifo",
        "guest", "vcpu", "timer", "iommu", "bti", "profile", "pmt", "suspend_token", "pager",
        "exception", "clock", "stream", "msi",
    };
    return type < G_N_ELEMENTS(names) && names[type] ? names[type] : "unknown";
}

void fxt_render_object_json(const struct fxt_record *r, GString *out)
{
    if (r->type == FXT_KOBJECT)
        g_string_append_printf(out, "{\n  \"koid\": %" PRIu64 ",\n  \"type\": %u,\n  \"type_name\": \"%s\",\n",
                               r->extra, r->sub_type, kobject_type_name(r->sub_type));
    else
        g_string_append_printf(out, "{\n  \"pointer\": \"0x%" PRIx64 "\",\n  \"pid\": %" PRIu64 ",\n",
                               r->extra, r->pid);
    g_string_append_printf(out, "  \"provider\": %" PRId64 ",\n  \"name\": ", r->provider_id);
    text_json_string(out, r->name.data, r->name.len);
    g_string_append(out, ",\n  \"args\": ");
    fxt_render_args_json(r, out);
    g_string_append(out, "\n}\n");
}
