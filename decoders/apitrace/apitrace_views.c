/* Views over the call order: events, events-verbose, frames/<n>,
 * threads/<tid>/events, functions/<name>/calls, calls/<n>.json. */
#include <inttypes.h>
#include "apitrace.h"
#include "apitrace_views.h"
#include "trace.h"

/* Calls rendered per record: a batch keeps the walker's bookkeeping (and
 * the engine's, 64 KiB apart) small against the text. */
#define LIST_BATCH_BYTES (16u << 10)
#define LIST_BATCH_CALLS 4096u

/* arg[0]: style (low byte) | AT_LIST_* bits | thread << 32
 * arg[1]: the frame (AT_LIST_FRAME)
 * cursor: word[0] dump-order position, word[1] header done, word[2] ended */
static void list_begin(const struct view *view, struct view_cursor *cursor)
{
    struct at_state *state = view->context;
    cursor->word[0] = (view->arg[0] & AT_LIST_FRAME) ? at_frame_start(state, view->arg[1]) : 0;
    cursor->word[1] = (view->arg[0] & AT_LIST_HEADER) ? 0 : 1;   /* header done? */
}

static gboolean wanted(uint64_t flags_arg, const struct at_call *call)
{
    if (!((flags_arg & 0xff) == AT_CALL_DUMP_VERBOSE) && (call->flags & AT_FLAG_VERBOSE))
        return FALSE;
    if ((flags_arg & AT_LIST_THREAD) && call->thread != (uint32_t)(flags_arg >> 32))
        return FALSE;
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
    if (cursor->word[2])
        return VIEW_END;
    struct at_walker walker;
    at_walk_resume(&walker, state, cursor->word[0]);
    gsize start = out->len;
    gboolean any = FALSE, ended = FALSE, failed = FALSE;
    struct at_call call;
    struct at_render_scratch *scratch = at_render_scratch_new();
    walker.render = scratch;
    walker.render_style = (enum at_call_style)(view->arg[0] & 0xff);
    /* A batch ends at a checkpoint: the sizing's segments start there. */
    uint64_t stop = at_checkpoint_after(state, cursor->word[0]);
    for (unsigned walked = 0; out->len - start < LIST_BATCH_BYTES && walked < LIST_BATCH_CALLS &&
                              walker.done < stop; walked++) {
        uint64_t pos = walker.done;
        if (!at_walk_next(&walker, &call)) {
            ended = TRUE;
            failed = walker.failed;
            break;
        }
        if (wanted(view->arg[0], &call) &&
            !at_render_call(state, &call, walker.render_style, scratch, out)) {
            /* This record ends before the call; the next one fails on it. */
            failed = TRUE;
            walker.done = pos;
            walker.failed = TRUE;
            break;
        }
        any = TRUE;
        if ((view->arg[0] & AT_LIST_FRAME) && (call.flags & AT_FLAG_END_FRAME)) {
            ended = TRUE;
            break;
        }
    }
    at_render_scratch_free(scratch);
    walker.render = NULL;
    cursor->word[0] = walker.done;
    at_walk_park(&walker);
    if (failed)
        return any ? VIEW_RECORD : VIEW_ERROR;
    if (ended) {
        cursor->word[2] = 1;
        return any ? VIEW_RECORD : VIEW_END;
    }
    return VIEW_RECORD;
}

/* Segments start at checkpoints' dump-order positions, evenly chosen
 * among them (whole-trace and per-thread lists; a frame is short). */
static gboolean list_cut(const void *context, uint64_t i, struct view_cursor *cursor)
{
    const struct at_state *state = context;
    cursor->word[0] = g_array_index(state->checkpoints, struct at_checkpoint, i).done;
    cursor->word[1] = 1;
    return cursor->word[0] < state->order_count;
}

static uint32_t list_segments(const struct view *view, struct view_cursor *cursors, uint32_t max)
{
    const struct at_state *state = view->context;
    if (view->arg[0] & AT_LIST_FRAME)
        return 0;
    return view_segment_cuts(state->order_count, state->checkpoints->len, max, list_cut, state, cursors);
}

const struct view_ops at_list_ops = { .begin = list_begin, .next = list_next, .segments = list_segments };

/* ---- one call as JSON: arg[0] its number ---- */
static enum view_step call_json_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    struct at_state *state = view->context;
    if (cursor->word[0])
        return VIEW_END;
    cursor->word[0] = 1;
    struct at_call call;
    if (!at_find_call(state, view->arg[0], &call)) {
        trace_error(state->trace, "call", 0, "call %" PRIu64 ": not found in the stream", view->arg[0]);
        return VIEW_ERROR;
    }
    struct at_render_scratch *scratch = at_render_scratch_new();
    gboolean ok = at_render_call(state, &call, AT_CALL_JSON, scratch, out);
    at_render_scratch_free(scratch);
    return ok ? VIEW_RECORD : VIEW_ERROR;
}

const struct view_ops at_call_json_ops = { .next = call_json_next };

/* ---- functions/<name>/calls: call numbers, one a line ----
 * arg[0]: the function's index.  Enter events in call order.  cursor: word[0] ended, word[1] the next
 * event's offset (0: the first), word[2] the next call number. */
static enum view_step function_calls_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    struct at_state *state = view->context;
    if (cursor->word[0])
        return VIEW_END;
    uint64_t offset = cursor->word[1] ? cursor->word[1] : state->first_event, number = cursor->word[2];
    struct at_reader reader;
    at_reader_init(&reader, state->stream, offset);
    struct at_call call;
    /* Many calls per record keep the walk over a million calls cheap. */
    for (unsigned n = 0; n < 8192; n++) {
        if (!at_next_enter(state, &reader, &offset, &number, &call)) {
            cursor->word[0] = 1;
            break;
        }
        if (call.function == view->arg[0])
            g_string_append_printf(out, "%" PRIu64 "\n", call.number);
        if (out->len >= (16u << 10))
            break;
    }
    at_reader_finish(&reader);
    cursor->word[1] = offset;
    cursor->word[2] = number;
    return out->len || !cursor->word[0] ? VIEW_RECORD : VIEW_END;
}

const struct view_ops at_function_calls_ops = { .next = function_calls_next };

/* ---- frames/<n>.json: arg[0] the frame ----
 * cursor: word[0] 0 header, 1 call numbers, 2 done; word[1] position;
 * word[2] numbers written */
static enum view_step frame_json_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    struct at_state *state = view->context;
    uint64_t frame = view->arg[0];
    struct at_walker walker;
    struct at_call call;
    if (cursor->word[0] == 2)
        return VIEW_END;
    if (cursor->word[0] == 0) {
        uint64_t first = at_frame_start(state, frame), count = 0, first_call = 0, last_call = 0;
        at_walk_resume(&walker, state, first);
        while (at_walk_next(&walker, &call)) {
            if (count++ == 0)
                first_call = call.number;
            last_call = call.number;
            if (call.flags & AT_FLAG_END_FRAME)
                break;
        }
        gboolean failed = walker.failed;
        at_walk_finish(&walker);
        if (failed)
            return VIEW_ERROR;
        g_string_append_printf(out,
            "{\n  \"frame\": %" PRIu64 ",\n  \"calls\": %" PRIu64 ",\n  \"first_call\": %" PRIu64 ",\n"
            "  \"last_call\": %" PRIu64 ",\n  \"call_numbers\": [", frame, count, first_call, last_call);
        cursor->word[0] = 1;
        cursor->word[1] = first;
        cursor->word[2] = 0;
        return VIEW_RECORD;
    }
    at_walk_resume(&walker, state, cursor->word[1]);
    gboolean ended = FALSE;
    for (unsigned n = 0; n < 1024; n++) {
        if (!at_walk_next(&walker, &call)) {
            ended = TRUE;
            break;
        }
        g_string_append_printf(out, "%s%" PRIu64, cursor->word[2]++ ? ", " : "", call.number);
        if (call.flags & AT_FLAG_END_FRAME) {
            ended = TRUE;
            break;
        }
    }
    if (walker.failed) {
        at_walk_finish(&walker);
        return VIEW_ERROR;
    }
    cursor->word[1] = walker.done;
    at_walk_park(&walker);
    if (ended) {
        g_string_append(out, "]\n}\n");
        cursor->word[0] = 2;
    }
    return VIEW_RECORD;
}

const struct view_ops at_frame_json_ops = { .next = frame_json_next };
