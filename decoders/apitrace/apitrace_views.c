/* Views over the call order: events, events-verbose, frames/<n>,
 * threads/<tid>/events, functions/<name>/calls, calls/<n>.json. */
#include <inttypes.h>
#include "apitrace.h"
#include "apitrace_views.h"
#include "text.h"
#include "trace.h"

/* arg[0]: style (low byte) | AT_LIST_* bits | thread << 32
 * arg[1], arg[2]: order positions [first, end) */
static void list_begin(const struct view *view, struct view_cursor *cursor)
{
    cursor->word[0] = view->arg[1];
    cursor->word[1] = (view->arg[0] & AT_LIST_HEADER) ? 0 : 1;   /* header done? */
}

static gboolean wanted(const struct at_state *state, uint64_t flags_arg, const struct at_call *call)
{
    if (!((flags_arg & 0xff) == AT_CALL_DUMP_VERBOSE) && (call->flags & AT_FLAG_VERBOSE))
        return FALSE;
    if ((flags_arg & AT_LIST_THREAD) && call->thread != (uint32_t)(flags_arg >> 32))
        return FALSE;
    (void)state;
    return TRUE;
}

static enum view_step list_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    struct at_state *state = view->context;
    if (!cursor->word[1]) {
        at_render_properties(state, out);
        cursor->word[1] = 1;
        return VIEW_RECORD;
    }
    uint64_t end = MIN(view->arg[2], state->order_count);
    uint64_t pos = cursor->word[0];
    while (pos < end && !wanted(state, view->arg[0], &state->calls[state->order[pos]]))
        pos++;
    if (pos >= end)
        return VIEW_END;
    if (!at_render_call(state, state->order[pos], (enum at_call_style)(view->arg[0] & 0xff), out))
        return VIEW_ERROR;
    cursor->word[0] = pos + 1;
    return VIEW_RECORD;
}

static const struct view_ops list_ops = { .begin = list_begin, .next = list_next };

void at_list_view(struct at_state *state, struct view *view, uint64_t flags, uint64_t first, uint64_t end)
{
    view->ops = &list_ops;
    view->context = state;
    view->arg[0] = flags;
    view->arg[1] = first;
    view->arg[2] = end;
}

/* ---- one call as JSON ---- */
static void one_begin(const struct view *view, struct view_cursor *cursor)
{
    (void)view;
    cursor->word[0] = 0;
}

static enum view_step call_json_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    if (cursor->word[0])
        return VIEW_END;
    cursor->word[0] = 1;
    return at_render_call(view->context, view->arg[0], AT_CALL_JSON, out) ? VIEW_RECORD : VIEW_ERROR;
}

static const struct view_ops call_json_ops = { .begin = one_begin, .next = call_json_next };

void at_call_json_view(struct at_state *state, struct view *view, uint64_t number)
{
    view->ops = &call_json_ops;
    view->context = state;
    view->arg[0] = number;
}

/* ---- functions/<name>/calls: call numbers, one a line ---- */
static enum view_step function_calls_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    const struct at_state *state = view->context;
    uint64_t n = cursor->word[0];
    /* Many calls per record keep the walk over a million calls cheap. */
    unsigned emitted = 0;
    while (n < state->call_count && emitted < 1024) {
        if (state->calls[n].function == view->arg[0]) {
            g_string_append_printf(out, "%" PRIu64 "\n", n);
            emitted++;
        }
        n++;
    }
    cursor->word[0] = n;
    return emitted || n < state->call_count ? VIEW_RECORD : VIEW_END;
}

static const struct view_ops function_calls_ops = { .begin = one_begin, .next = function_calls_next };

void at_function_calls_view(struct at_state *state, struct view *view, uint32_t function)
{
    view->ops = &function_calls_ops;
    view->context = state;
    view->arg[0] = function;
}

/* ---- frames/<n>.json ---- */
static enum view_step frame_json_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    const struct at_state *state = view->context;
    uint64_t frame = view->arg[0];
    uint64_t first = frame ? state->frame_ends[frame - 1] + 1 : 0, end = state->frame_ends[frame] + 1;
    uint64_t pos = cursor->word[0] ? cursor->word[0] : first;
    if (cursor->word[0] == 0) {
        g_string_append_printf(out,
            "{\n  \"frame\": %" PRIu64 ",\n  \"calls\": %" PRIu64 ",\n  \"first_call\": %u,\n"
            "  \"last_call\": %u,\n  \"call_numbers\": [", frame, end - first,
            state->order[first], state->order[end - 1]);
        cursor->word[0] = first + 1;   /* positions are stored +1 so that 0 means "header" */
        return VIEW_RECORD;
    }
    pos = cursor->word[0] - 1;
    if (pos >= end + 1)
        return VIEW_END;
    if (pos == end) {
        g_string_append(out, "]\n}\n");
        cursor->word[0] = pos + 2;
        return VIEW_RECORD;
    }
    uint64_t stop = MIN(end, pos + 1024);
    for (uint64_t p = pos; p < stop; p++)
        g_string_append_printf(out, "%s%u", p == first ? "" : ", ", state->order[p]);
    cursor->word[0] = stop + 1;
    return VIEW_RECORD;
}

static const struct view_ops frame_json_ops = { .begin = one_begin, .next = frame_json_next };

void at_frame_json_view(struct at_state *state, struct view *view, uint64_t frame)
{
    view->ops = &frame_json_ops;
    view->context = state;
    view->arg[0] = frame;
}

/* ---- export/chrome.json: apitrace records no times, so each call is a
 * 1 us complete event at ts = its call number, on its thread. ---- */
static enum view_step chrome_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    const struct at_state *state = view->context;
    if (cursor->word[0] == 0) {
        g_string_append(out, "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"clock\": "
                             "\"call numbers (apitrace records no times)\"}, \"traceEvents\": [\n");
        cursor->word[0] = 1;
        return VIEW_RECORD;
    }
    uint64_t n = cursor->word[0] - 1;
    if (n > state->call_count)
        return VIEW_END;
    if (n == state->call_count) {
        g_string_append(out, "]}\n");
        cursor->word[0] = n + 2;
        return VIEW_RECORD;
    }
    uint64_t stop = MIN(state->call_count, n + 1024);
    for (; n < stop; n++) {
        const struct at_call *call = &state->calls[n];
        const struct at_function *sig = state->functions->pdata[call->function];
        g_string_append(out, n ? ",{\"name\": " : "{\"name\": ");
        text_json_cstring(out, sig->name);
        g_string_append_printf(out, ", \"ph\": \"X\", \"ts\": %" PRIu64 ", \"dur\": 1, \"pid\": 0, \"tid\": %u, "
                               "\"args\": {\"call\": %" PRIu64 "}}\n", n, call->thread, n);
    }
    cursor->word[0] = stop + 1;
    return VIEW_RECORD;
}

static const struct view_ops chrome_ops = { .begin = one_begin, .next = chrome_next };

void at_chrome_view(struct at_state *state, struct view *view)
{
    view->ops = &chrome_ops;
    view->context = state;
}
