/* JSON lines and Chrome Trace Event JSON from the common events. */
#include <string.h>
#include "event_json.h"
#include "text.h"

/* The largest integer every double holds exactly: beyond it, JSON readers
 * that parse numbers as doubles (jq, JavaScript) would round. */
#define JSON_EXACT_INTEGER (UINT64_C(1) << 53)

static void json_u64(GString *out, uint64_t value)
{
    if (value <= JSON_EXACT_INTEGER) {
        text_append_u64(out, value);
        return;
    }
    g_string_append_c(out, '"');
    text_append_u64(out, value);
    g_string_append_c(out, '"');
}

static void json_i64(GString *out, int64_t value)
{
    uint64_t magnitude = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;
    if (magnitude <= JSON_EXACT_INTEGER) {
        text_append_i64(out, value);
        return;
    }
    g_string_append_c(out, '"');
    text_append_i64(out, value);
    g_string_append_c(out, '"');
}

static void json_arg_value(GString *out, const struct trace_arg *arg)
{
    switch (arg->type) {
    case TRACE_ARG_INT: json_i64(out, arg->value.i); return;
    case TRACE_ARG_UINT: json_u64(out, arg->value.u); return;
    case TRACE_ARG_DOUBLE: text_json_double(out, arg->value.d); return;
    case TRACE_ARG_STRING: text_json_string(out, arg->value.s.data, arg->value.s.len); return;
    case TRACE_ARG_POINTER: text_json_hex(out, arg->value.u); return;
    case TRACE_ARG_BOOL: text_append_cstring(out, arg->value.b ? "true" : "false"); return;
    case TRACE_ARG_NULL:
    default: text_append(out, "null", 4); return;
    }
}

void event_json_args(const struct trace_event *event, GString *out)
{
    g_string_append_c(out, '{');
    for (uint32_t i = 0; i < event->arg_count; i++) {
        const struct trace_arg *arg = &event->args[i];
        if (i)
            g_string_append_c(out, ',');
        text_json_string(out, arg->key, arg->key_len);
        g_string_append_c(out, ':');
        json_arg_value(out, arg);
    }
    g_string_append_c(out, '}');
}

void event_json_line(const struct trace_event *event, GString *out)
{
    text_append_cstring(out, "{\"seq\":");
    json_u64(out, event->seq);
    text_append_cstring(out, ",\"ts\":");
    if (event->has_ts)
        json_u64(out, event->ts);
    else
        text_append(out, "null", 4);
    text_append_cstring(out, ",\"dur\":");
    if (event->has_dur)
        json_u64(out, event->dur);
    else
        text_append(out, "null", 4);
    text_append_cstring(out, ",\"kind\":\"");
    text_append_cstring(out, trace_event_kind_name(event->kind));
    text_append_cstring(out, "\",\"pid\":");
    json_i64(out, event->pid);
    text_append_cstring(out, ",\"tid\":");
    json_i64(out, event->tid);
    text_append_cstring(out, ",\"cat\":");
    text_json_string(out, event->cat, event->cat_len);
    text_append_cstring(out, ",\"name\":");
    text_json_string(out, event->name, event->name_len);
    text_append_cstring(out, ",\"id\":");
    if (event->has_id)
        json_u64(out, event->id);
    else
        text_append(out, "null", 4);
    text_append_cstring(out, ",\"args\":");
    event_json_args(event, out);
    text_append(out, "}\n", 2);
}

static const char *chrome_phase(enum trace_event_kind kind)
{
    static const char *const phases[TRACE_EVENT_KIND_COUNT] = {
        [TRACE_EVENT_BEGIN] = "B",
        [TRACE_EVENT_END] = "E",
        [TRACE_EVENT_COMPLETE] = "X",
        [TRACE_EVENT_INSTANT] = "i",
        [TRACE_EVENT_COUNTER] = "C",
        [TRACE_EVENT_FLOW_BEGIN] = "s",
        [TRACE_EVENT_FLOW_STEP] = "t",
        [TRACE_EVENT_FLOW_END] = "f",
        [TRACE_EVENT_ASYNC_BEGIN] = "b",
        [TRACE_EVENT_ASYNC_INSTANT] = "n",
        [TRACE_EVENT_ASYNC_END] = "e",
    };
    return (unsigned)kind < TRACE_EVENT_KIND_COUNT ? phases[kind] : "i";
}

/* Chrome's times are µs: ns / 1000 with three decimals is exact. */
static void chrome_microseconds(GString *out, uint64_t ns)
{
    char fraction[4] = { '.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10), (char)('0' + ns % 10) };
    text_append_u64(out, ns / 1000);
    text_append(out, fraction, sizeof fraction);
}

static gboolean kind_has_chrome_id(enum trace_event_kind kind)
{
    return kind >= TRACE_EVENT_FLOW_BEGIN && kind <= TRACE_EVENT_ASYNC_END;
}

void event_chrome_object(const struct trace_event *event, GString *out)
{
    text_append_cstring(out, "{\"ph\":\"");
    text_append_cstring(out, chrome_phase(event->kind));
    text_append_cstring(out, "\",\"ts\":");
    chrome_microseconds(out, trace_event_time(event));
    if (event->kind == TRACE_EVENT_COMPLETE) {
        text_append_cstring(out, ",\"dur\":");
        chrome_microseconds(out, event->has_dur ? event->dur : 0);
    }
    /* Chrome reads pid and tid as numbers: written whole, even past 2^53. */
    text_append_cstring(out, ",\"pid\":");
    text_append_i64(out, event->pid);
    text_append_cstring(out, ",\"tid\":");
    text_append_i64(out, event->tid);
    text_append_cstring(out, ",\"cat\":");
    text_json_string(out, event->cat, event->cat_len);
    text_append_cstring(out, ",\"name\":");
    text_json_string(out, event->name, event->name_len);
    if (event->kind == TRACE_EVENT_INSTANT)
        text_append_cstring(out, ",\"s\":\"t\"");
    if (event->kind == TRACE_EVENT_FLOW_END)
        text_append_cstring(out, ",\"bp\":\"e\"");
    if (event->has_id && (kind_has_chrome_id(event->kind) || event->kind == TRACE_EVENT_COUNTER)) {
        text_append_cstring(out, ",\"id\":\"0x");
        text_append_hex(out, event->id);
        g_string_append_c(out, '"');
    }
    text_append_cstring(out, ",\"args\":");
    event_json_args(event, out);
    g_string_append_c(out, '}');
}

/* ---- record-view drivers ---- */

enum chrome_position {
    CHROME_BEFORE_HEADER = 0,
    CHROME_NO_EVENT_YET,
    CHROME_AFTER_EVENT,
    CHROME_DONE,
};

void event_chrome_cut(struct view_cursor *cursor)
{
    cursor->word[TRACE_EVENT_EXPORT_WORD] = CHROME_AFTER_EVENT;
}

void event_export_begin(struct trace *trace, const struct trace_event_iterator *events,
                        struct view_cursor *cursor)
{
    trace_event_begin(events, trace, cursor);
    cursor->word[TRACE_EVENT_EXPORT_WORD] = 0;
}

enum view_step event_chrome_next(struct trace *trace, const struct trace_event_iterator *events,
                                 struct view_cursor *cursor, struct trace_event_scratch *scratch, GString *out)
{
    uint64_t *position = &cursor->word[TRACE_EVENT_EXPORT_WORD];
    if (*position == CHROME_DONE)
        return VIEW_END;
    if (*position == CHROME_BEFORE_HEADER) {
        text_append_cstring(out, EVENT_CHROME_HEADER);
        *position = CHROME_NO_EVENT_YET;
        return VIEW_RECORD;
    }
    struct trace_event event;
    trace_event_scratch_reset(scratch);
    if (events->next(trace, cursor, &event, scratch) != VIEW_RECORD) {
        text_append_cstring(out, EVENT_CHROME_TRAILER);
        *position = CHROME_DONE;
        return VIEW_RECORD;
    }
    if (*position == CHROME_AFTER_EVENT)
        text_append(out, ",\n", 2);
    event_chrome_object(&event, out);
    *position = CHROME_AFTER_EVENT;
    return VIEW_RECORD;
}
