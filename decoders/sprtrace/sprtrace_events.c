/* sp-rtrace's common events (engine/trace_event.h): one per call, in call
 * order (the numbered lines of `events`).  An allocation that a later free
 * ends (the pairing of `sp-rtrace-postproc -l`, refcounts included) is an
 * async_begin, that free its async_end, both with the resource's address
 * as id: each is yielded at its own call, from the pair code the index pass
 * kept, so nothing is read ahead.  Both ends carry the allocation's
 * function as their name (Chrome JSON importers key an async slice by its
 * name), each call's own function in args.function.  Every other call is
 * an instant.
 * sp-rtrace records no threads: pid and tid are the traced process's pid.
 * Cursor: word[0] the next call's number, word[1] the next packet header
 * (a walk's offset; 0: the checkpoint before the call, see
 * sprt_walk_resume).  The common files are cut at call checkpoints (the
 * walk resumes from any, as the native views do). */
#include <string.h>
#include "sprtrace.h"
#include "trace.h"
#include "trace_event.h"

/* The category an async pair is keyed by must be the same at both ends:
 * the free may name another RESR record with the same id (postproc pairs
 * them), so it is the type of the id's last record. */
static const char *call_category(const struct sprt_state *state, const struct sprt_call *call)
{
    if (call->resource == SPRT_NONE)
        return "";
    const struct sprt_resource *res = &g_array_index(state->resources, struct sprt_resource, call->resource);
    if (res->id > LIMIT_SPRT_RESOURCE_ID || state->res_last[res->id] == SPRT_NONE)
        return res->type;
    return g_array_index(state->resources, struct sprt_resource, state->res_last[res->id]).type;
}

static enum trace_event_kind call_kind(const struct sprt_call *call)
{
    if (call->pair != SPRT_PAIR_NONE && call->type == SPRT_ALLOC)
        return TRACE_EVENT_ASYNC_BEGIN;
    if (call->pair != SPRT_PAIR_NONE && call->type == SPRT_FREE)
        return TRACE_EVENT_ASYNC_END;
    return TRACE_EVENT_INSTANT;
}

/* The name both ends of a pair carry: its allocation's function, or the
 * resource type where the index kept no name for it ("allocation" for a
 * call of no registered resource). */
static const char *pair_name(const struct sprt_state *state, const struct sprt_call *call, const char *category)
{
    const char *name = sprt_pair_name(state, call->index, call->pair);
    if (name)
        return name;
    return *category ? category : "allocation";
}

#define ADD(kind, key, ...) trace_event_add_##kind(event, scratch, key, sizeof key - 1, __VA_ARGS__)

static void fill_event(const struct sprt_state *state, const struct sprt_call *call,
                       const struct sprt_call_fields *f, struct trace_event *event,
                       struct trace_event_scratch *scratch)
{
    trace_event_start(event, call->index, call_kind(call));
    event->has_ts = f->timestamp != 0;
    event->ts = (uint64_t)f->timestamp * 1000000u;
    event->pid = event->tid = (int64_t)state->log.pid;
    event->cat = call_category(state, call);
    event->cat_len = strlen(event->cat);
    if (event->kind == TRACE_EVENT_INSTANT) {
        trace_event_set_name(event, scratch, f->name, f->name_len);
    } else {
        const char *name = pair_name(state, call, event->cat);
        trace_event_set_name(event, scratch, name, strlen(name));
        event->has_id = TRUE;
        event->id = call->res_id;
    }
    ADD(uint, "call", (uint64_t)call->index + 1);
    const char *type = sprt_call_type_name(call);
    ADD(string, "type", type, strlen(type));
    if (call->resource == SPRT_NONE) {
        trace_event_add_null(event, scratch, "resource", 8);
    } else {
        const char *res = g_array_index(state->resources, struct sprt_resource, call->resource).type;
        ADD(string, "resource", res, strlen(res));
    }
    ADD(int, "size", (int64_t)call->res_size);
    ADD(pointer, "address", call->res_id);
    ADD(uint, "context", (uint64_t)call->context);
    ADD(uint, "frames", (uint64_t)call->bt_frames);
    if (event->kind != TRACE_EVENT_INSTANT)
        ADD(string, "function", f->name, f->name_len);
    if (call->type == SPRT_ALLOC && call->leak)
        ADD(bool, "leaked", TRUE);
}

static enum view_step sprt_events_next(struct trace *trace, struct view_cursor *cursor, struct trace_event *event,
                                       struct trace_event_scratch *scratch)
{
    const struct sprt_state *state = trace->format_state;
    if (cursor->word[0] >= state->call_count)
        return VIEW_END;
    /* It resumes at or before call word[0], below call_count: a call or a read error. */
    struct sprt_walk walk;
    sprt_walk_resume(&walk, trace, state, cursor->word[0], cursor->word[1]);
    struct sprt_call call;
    struct sprt_call_fields f;
    uint8_t *data = sprt_walk_next(&walk, &call) == 1 ? sprt_load_call(trace, state, &call, &f) : NULL;
    if (!data)
        return VIEW_ERROR;
    fill_event(state, &call, &f, event, scratch);
    sprt_packet_free(data);
    cursor->word[0] = walk.next;
    cursor->word[1] = walk.offset;
    return VIEW_RECORD;
}

/* Call checkpoints, evenly chosen by view_segment_cuts so that a segment
 * covers LIMIT_SEGMENT_MIN_RECORDS calls or more (trace_event_iterator.cuts);
 * i is below the checkpoints' count. */
static gboolean checkpoint_cut(const void *context, uint64_t i, struct view_cursor *cursor)
{
    const struct sprt_state *state = context;
    cursor->word[0] = i * SPRT_CALLS_PER_CHECKPOINT;
    cursor->word[1] = g_array_index(state->checkpoints, uint64_t, i);
    return TRUE;
}

static uint32_t sprt_event_cuts(struct trace *trace, struct view_cursor *cursors, uint32_t max)
{
    const struct sprt_state *state = trace->format_state;
    return view_segment_cuts(state->call_count, state->checkpoints->len, max, checkpoint_cut, state, cursors);
}

static gboolean sprt_process_name(struct trace *trace, int64_t pid, GString *out)
{
    const struct sprt_state *state = trace->format_state;
    if (pid != (int64_t)state->log.pid || !state->process || !*state->process)
        return FALSE;
    g_string_append(out, state->process);
    return TRUE;
}

static gboolean sprt_thread_name(struct trace *trace, int64_t pid, int64_t tid, GString *out)
{
    return pid == tid && sprt_process_name(trace, pid, out);
}

static void sprt_threads(struct trace *trace, void (*fn)(void *, int64_t, int64_t, const char *), void *data)
{
    const struct sprt_state *state = trace->format_state;
    fn(data, (int64_t)state->log.pid, (int64_t)state->log.pid, NULL);
}

const struct trace_event_iterator sprt_event_iterator = {
    .next = sprt_events_next,
    .thread_name = sprt_thread_name,
    .process_name = sprt_process_name,
    .threads = sprt_threads,
    .cuts = sprt_event_cuts,
    .clock = "ns: each call's CLOCK_MONOTONIC milliseconds modulo 24 h, as postproc's [hh:mm:ss.mmm]; "
             "null where a call has no timestamp",
};
