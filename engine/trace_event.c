/* The common event: kind names and the scratch memory events live in. */
#include <string.h>
#include "trace_event.h"

#define SCRATCH_FIRST_BLOCK 4096

void trace_event_begin(const struct trace_event_iterator *events, struct trace *trace, struct view_cursor *cursor)
{
    memset(cursor, 0, sizeof *cursor);
    if (events->begin)
        events->begin(trace, cursor);
}

const char *trace_event_kind_name(enum trace_event_kind kind)
{
    static const char *const names[TRACE_EVENT_KIND_COUNT] = {
        [TRACE_EVENT_BEGIN] = "begin",
        [TRACE_EVENT_END] = "end",
        [TRACE_EVENT_COMPLETE] = "complete",
        [TRACE_EVENT_INSTANT] = "instant",
        [TRACE_EVENT_COUNTER] = "counter",
        [TRACE_EVENT_FLOW_BEGIN] = "flow_begin",
        [TRACE_EVENT_FLOW_STEP] = "flow_step",
        [TRACE_EVENT_FLOW_END] = "flow_end",
        [TRACE_EVENT_ASYNC_BEGIN] = "async_begin",
        [TRACE_EVENT_ASYNC_INSTANT] = "async_instant",
        [TRACE_EVENT_ASYNC_END] = "async_end",
    };
    return (unsigned)kind < TRACE_EVENT_KIND_COUNT ? names[kind] : "unknown";
}

void trace_event_scratch_init(struct trace_event_scratch *scratch)
{
    memset(scratch, 0, sizeof *scratch);
    scratch->full_blocks = g_ptr_array_new_with_free_func(g_free);
}

void trace_event_scratch_clear(struct trace_event_scratch *scratch)
{
    g_free(scratch->args);
    if (scratch->full_blocks)
        g_ptr_array_free(scratch->full_blocks, TRUE);
    g_free(scratch->block);
    memset(scratch, 0, sizeof *scratch);
}

/* Blocks filled during the event are freed, and the current block grows to
 * what the whole event took, so the next event of that size fits in one. */
void trace_event_scratch_reset(struct trace_event_scratch *scratch)
{
    scratch->arg_count = 0;
    if (scratch->full_blocks->len > 0) {
        size_t total = scratch->full_bytes + scratch->used;
        g_ptr_array_set_size(scratch->full_blocks, 0);
        scratch->full_bytes = 0;
        if (total > scratch->size) {
            g_free(scratch->block);
            scratch->size = total;
            scratch->block = g_malloc(total);
        }
    }
    scratch->used = 0;
}

void trace_event_scratch_trim(struct trace_event_scratch *scratch, size_t keep_bytes, guint keep_args)
{
    trace_event_scratch_reset(scratch);
    if (scratch->size > keep_bytes) {
        g_free(scratch->block);
        scratch->block = NULL;
        scratch->size = 0;
    }
    if (scratch->args_peak > keep_args) {
        g_free(scratch->args);
        scratch->args = NULL;
        scratch->args_capacity = 0;
    }
    scratch->args_peak = 0;
}

const char *trace_event_scratch_copy(struct trace_event_scratch *scratch, const char *data, size_t len)
{
    if (len == 0)
        return "";
    if (scratch->size - scratch->used < len) {
        if (scratch->used > 0) {
            g_ptr_array_add(scratch->full_blocks, scratch->block);   /* earlier copies stay valid */
            scratch->full_bytes += scratch->used;
        } else {
            g_free(scratch->block);
        }
        size_t size = MAX(MAX(scratch->size * 2, (size_t)SCRATCH_FIRST_BLOCK), len);
        scratch->block = g_malloc(size);
        scratch->size = size;
        scratch->used = 0;
    }
    char *copy = scratch->block + scratch->used;
    memcpy(copy, data, len);
    scratch->used += len;
    return copy;
}

void trace_event_start(struct trace_event *event, uint64_t seq, enum trace_event_kind kind)
{
    memset(event, 0, sizeof *event);
    event->seq = seq;
    event->kind = kind;
    event->cat = "";
    event->name = "";
}

void trace_event_set_cat(struct trace_event *event, struct trace_event_scratch *scratch, const char *data,
                         size_t len)
{
    event->cat = trace_event_scratch_copy(scratch, data, len);
    event->cat_len = len;
}

void trace_event_set_name(struct trace_event *event, struct trace_event_scratch *scratch, const char *data,
                          size_t len)
{
    event->name = trace_event_scratch_copy(scratch, data, len);
    event->name_len = len;
}

/* The args array may move as it grows: event->args follows it.  Filled
 * in place, not appended as a copy: an event has a few args, and the copy
 * was a tenth of a walk of XRay's events. */
static struct trace_arg *add_arg(struct trace_event *event, struct trace_event_scratch *scratch, const char *key,
                                 size_t key_len, enum trace_arg_type type)
{
    const char *key_copy = trace_event_scratch_copy(scratch, key, key_len);
    if (scratch->arg_count == scratch->args_capacity) {
        scratch->args_capacity = MAX(2 * scratch->args_capacity, 8u);
        scratch->args = g_renew(struct trace_arg, scratch->args, scratch->args_capacity);
    }
    struct trace_arg *arg = &scratch->args[scratch->arg_count++];
    arg->key = key_copy;
    arg->key_len = key_len;
    arg->type = type;
    memset(&arg->value, 0, sizeof arg->value);
    scratch->args_peak = MAX(scratch->args_peak, scratch->arg_count);
    event->args = scratch->args;
    event->arg_count = scratch->arg_count;
    return arg;
}

void trace_event_add_int(struct trace_event *event, struct trace_event_scratch *scratch, const char *key,
                         size_t key_len, int64_t value)
{
    add_arg(event, scratch, key, key_len, TRACE_ARG_INT)->value.i = value;
}

void trace_event_add_uint(struct trace_event *event, struct trace_event_scratch *scratch, const char *key,
                          size_t key_len, uint64_t value)
{
    add_arg(event, scratch, key, key_len, TRACE_ARG_UINT)->value.u = value;
}

void trace_event_add_double(struct trace_event *event, struct trace_event_scratch *scratch, const char *key,
                            size_t key_len, double value)
{
    add_arg(event, scratch, key, key_len, TRACE_ARG_DOUBLE)->value.d = value;
}

void trace_event_add_string(struct trace_event *event, struct trace_event_scratch *scratch, const char *key,
                            size_t key_len, const char *data, size_t len)
{
    const char *copy = trace_event_scratch_copy(scratch, data, len);
    struct trace_arg *arg = add_arg(event, scratch, key, key_len, TRACE_ARG_STRING);
    arg->value.s.data = copy;
    arg->value.s.len = len;
}

void trace_event_add_pointer(struct trace_event *event, struct trace_event_scratch *scratch, const char *key,
                             size_t key_len, uint64_t value)
{
    add_arg(event, scratch, key, key_len, TRACE_ARG_POINTER)->value.u = value;
}

void trace_event_add_bool(struct trace_event *event, struct trace_event_scratch *scratch, const char *key,
                          size_t key_len, gboolean value)
{
    add_arg(event, scratch, key, key_len, TRACE_ARG_BOOL)->value.b = value;
}

void trace_event_add_null(struct trace_event *event, struct trace_event_scratch *scratch, const char *key,
                          size_t key_len)
{
    add_arg(event, scratch, key, key_len, TRACE_ARG_NULL);
}
