/* Decoding one FXT record from its file offset.  Every size, length and
 * index comes from the trace and is checked before use. */
#include <string.h>
#include "fxt.h"
#include "text.h"

static uint64_t fxt_word(const struct fxt_state *state, const uint8_t *p)
{
    return state->big_endian ? load_be64(p) : load_le64(p);
}

static inline uint64_t bits(uint64_t word, unsigned lo, unsigned hi)
{
    unsigned width = hi - lo + 1;
    return width == 64 ? word : (word >> lo) & ((UINT64_C(1) << width) - 1);
}

/* A bounded reader over the bytes of a record (or of one argument). */
struct body {
    const struct fxt_state *state;
    const uint8_t *data;
    uint32_t pos, len;
    const char *why;
};

static gboolean take_word(struct body *b, uint64_t *out)
{
    if (b->len - b->pos < 8) {
        b->why = "record ends inside a word";
        return FALSE;
    }
    *out = fxt_word(b->state, b->data + b->pos);
    b->pos += 8;
    return TRUE;
}

static gboolean take_stream(struct body *b, uint32_t len, const uint8_t **out)
{
    uint32_t padded = (len + 7u) & ~7u;
    if (b->len - b->pos < padded) {
        b->why = "string or payload runs past the end of its record";
        return FALSE;
    }
    *out = b->data + b->pos;
    b->pos += padded;
    return TRUE;
}

/* A string of `len` bytes inline in the record. */
static gboolean take_text(struct body *b, uint32_t len, struct fxt_str *out)
{
    const uint8_t *p;
    if (!take_stream(b, len, &p))
        return FALSE;
    out->data = (const char *)p;
    out->len = len;
    return TRUE;
}

static const char unset_string[] = "<unset string>";

static gboolean take_string(struct body *b, struct fxt_record *record, uint32_t ref, struct fxt_str *out)
{
    out->data = "";
    out->len = 0;
    if (ref == 0)
        return TRUE;
    if (ref & 0x8000u)
        return take_text(b, ref & 0x7fffu, out);
    const struct fxt_reg *reg = fxt_regs_lookup(b->state, b->state->string_regs,
                                                ((uint64_t)record->provider << 15) | ref, record->offset);
    if (!reg) {
        record->warning = "string index used before it was registered";
        out->data = unset_string;
        out->len = sizeof unset_string - 1;
        return TRUE;
    }
    *out = fxt_pool_string(b->state, (uint32_t)reg->value);
    return TRUE;
}

static gboolean take_thread(struct body *b, struct fxt_record *record, uint32_t ref, uint64_t *pid, uint64_t *tid)
{
    if (ref == 0)
        return take_word(b, pid) && take_word(b, tid);
    const struct fxt_reg *reg = fxt_regs_lookup(b->state, b->state->thread_regs,
                                                ((uint64_t)record->provider << 8) | ref, record->offset);
    if (!reg) {
        record->warning = "thread index used before it was registered";
        *pid = *tid = 0;
        return TRUE;
    }
    *pid = reg->value;
    *tid = reg->value2;
    return TRUE;
}

static gboolean take_args(struct body *b, struct fxt_record *record, uint32_t count)
{
    record->arg_count = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (b->len - b->pos < 8) {
            b->why = "argument count runs past the end of its record";
            return FALSE;
        }
        uint64_t h = fxt_word(b->state, b->data + b->pos);
        uint32_t size = (uint32_t)bits(h, 4, 15) * 8u;
        if (size == 0 || size > b->len - b->pos) {
            b->why = "argument size is zero or runs past the end of its record";
            return FALSE;
        }
        struct body arg = { b->state, b->data + b->pos, 8, size, NULL };
        struct fxt_arg *a = &record->args[record->arg_count++];
        memset(a, 0, sizeof *a);
        a->type = (uint8_t)bits(h, 0, 3);
        gboolean ok = take_string(&arg, record, (uint32_t)bits(h, 16, 31), &a->name);
        switch (a->type) {
        case FXT_ARG_I32: a->value = (uint64_t)(int64_t)(int32_t)(uint32_t)bits(h, 32, 63); break;
        case FXT_ARG_U32: a->value = bits(h, 32, 63); break;
        case FXT_ARG_BOOL: a->value = bits(h, 32, 32); break;
        case FXT_ARG_I64: case FXT_ARG_U64: case FXT_ARG_DOUBLE: case FXT_ARG_POINTER: case FXT_ARG_KOID:
            ok = ok && take_word(&arg, &a->value);
            break;
        case FXT_ARG_STRING:
            ok = ok && take_string(&arg, record, (uint32_t)bits(h, 32, 47), &a->text);
            break;
        default: break;   /* null, or a newer type: skipped by its size */
        }
        if (!ok) {
            b->why = arg.why ? arg.why : "bad argument";
            return FALSE;
        }
        b->pos += size;
    }
    return TRUE;
}

static gboolean decode_event(struct body *b, struct fxt_record *r, uint64_t h)
{
    r->event_type = (uint8_t)bits(h, 16, 19);
    if (!take_word(b, &r->ticks)
        || !take_thread(b, r, (uint32_t)bits(h, 24, 31), &r->pid, &r->tid))
        return FALSE;
    if (r->brief)
        return TRUE;
    if (!take_string(b, r, (uint32_t)bits(h, 32, 47), &r->category)
        || !take_string(b, r, (uint32_t)bits(h, 48, 63), &r->name)
        || !take_args(b, r, (uint32_t)bits(h, 20, 23)))
        return FALSE;
    switch (r->event_type) {
    case FXT_EV_INSTANT: case FXT_EV_DUR_BEGIN: case FXT_EV_DUR_END:
        return TRUE;
    case FXT_EV_COUNTER: case FXT_EV_DUR_COMPLETE: case FXT_EV_ASYNC_BEGIN: case FXT_EV_ASYNC_INSTANT:
    case FXT_EV_ASYNC_END: case FXT_EV_FLOW_BEGIN: case FXT_EV_FLOW_STEP: case FXT_EV_FLOW_END:
        return take_word(b, &r->extra);
    default:
        r->unknown = TRUE;   /* an event type newer than the spec: skipped by its size */
        return TRUE;
    }
}

static gboolean decode_metadata(struct body *b, struct fxt_record *r, uint64_t h)
{
    r->sub_type = (uint8_t)bits(h, 16, 19);
    switch (r->sub_type) {
    case 1:
        r->extra = bits(h, 20, 51);
        return take_text(b, (uint32_t)bits(h, 52, 59), &r->name);
    case 2: r->extra = bits(h, 20, 51); return TRUE;
    case 3: r->extra = bits(h, 20, 51); r->cpu = (uint32_t)bits(h, 52, 55); return TRUE;
    case 4: r->cpu = (uint32_t)bits(h, 20, 23); r->extra = bits(h, 24, 55); return TRUE;
    default: r->unknown = TRUE; return TRUE;
    }
}

static gboolean decode_sched(struct body *b, struct fxt_record *r, uint64_t h)
{
    r->sub_type = (uint8_t)bits(h, 60, 63);
    switch (r->sub_type) {
    case FXT_SCHED_LEGACY:
        r->cpu = (uint32_t)bits(h, 16, 23);
        r->out_state = (uint32_t)bits(h, 24, 27);
        r->out_prio = (uint32_t)bits(h, 44, 51);
        r->in_prio = (uint32_t)bits(h, 52, 59);
        return take_word(b, &r->ticks)
            && take_thread(b, r, (uint32_t)bits(h, 28, 35), &r->out_pid, &r->out_tid)
            && take_thread(b, r, (uint32_t)bits(h, 36, 43), &r->in_pid, &r->in_tid);
    case FXT_SCHED_SWITCH:
        r->cpu = (uint32_t)bits(h, 20, 35);
        r->out_state = (uint32_t)bits(h, 36, 43);
        return take_word(b, &r->ticks) && take_word(b, &r->out_tid) && take_word(b, &r->in_tid)
            && take_args(b, r, (uint32_t)bits(h, 16, 19));
    case FXT_SCHED_WAKEUP:
        r->cpu = (uint32_t)bits(h, 20, 35);
        return take_word(b, &r->ticks) && take_word(b, &r->in_tid)
            && take_args(b, r, (uint32_t)bits(h, 16, 19));
    default:
        r->unknown = TRUE;
        return TRUE;
    }
}

static gboolean decode_body(struct body *b, struct fxt_record *r, uint64_t h)
{
    uint64_t word;
    switch (r->type) {
    case FXT_METADATA:
        return decode_metadata(b, r, h);
    case FXT_INIT:
        return take_word(b, &r->extra);
    case FXT_STRING:
        r->extra = bits(h, 16, 30);
        return take_text(b, (uint32_t)bits(h, 32, 46), &r->name);
    case FXT_THREAD:
        r->extra = bits(h, 16, 23);
        return take_word(b, &r->pid) && take_word(b, &r->tid);
    case FXT_EVENT:
        return decode_event(b, r, h);
    case FXT_BLOB:
        r->payload_len = (uint32_t)bits(h, 32, 46);
        if (!take_string(b, r, (uint32_t)bits(h, 16, 31), &r->name))
            return FALSE;
        r->payload_offset = b->pos;
        return take_stream(b, r->payload_len, &r->payload);
    case FXT_UOBJECT:
        /* Its process: an inline koid, or the pid of a thread index. */
        return take_word(b, &r->extra)
            && (bits(h, 16, 23) == 0 ? take_word(b, &r->pid)
                                     : take_thread(b, r, (uint32_t)bits(h, 16, 23), &r->pid, &word))
            && take_string(b, r, (uint32_t)bits(h, 24, 39), &r->name)
            && take_args(b, r, (uint32_t)bits(h, 40, 43));
    case FXT_KOBJECT:
        r->sub_type = (uint8_t)bits(h, 16, 23);
        return take_word(b, &r->extra)
            && take_string(b, r, (uint32_t)bits(h, 24, 39), &r->name)
            && take_args(b, r, (uint32_t)bits(h, 40, 43));
    case FXT_SCHED:
        return decode_sched(b, r, h);
    case FXT_LOG:
        r->payload_len = (uint32_t)bits(h, 16, 30);
        return take_word(b, &r->ticks) && take_thread(b, r, (uint32_t)bits(h, 32, 39), &r->pid, &r->tid)
            && take_stream(b, r->payload_len, &r->payload);
    default:
        r->unknown = TRUE;
        return TRUE;
    }
}

void fxt_reader_open(struct fxt_reader *reader, const struct fxt_state *state)
{
    reader->state = state;
    stream_cursor_init(&reader->cursor, state->stream, state->data_start);
    reader->buf = NULL;
}

void fxt_reader_close(struct fxt_reader *reader)
{
    stream_cursor_finish(&reader->cursor);
    g_free(reader->buf);
}

enum fxt_read_result fxt_read_record(struct fxt_reader *reader, uint64_t offset, gboolean brief)
{
    const struct fxt_state *state = reader->state;
    struct fxt_record *record = &reader->record;
    struct stream_cursor *cursor = &reader->cursor;
    memset(record, 0, offsetof(struct fxt_record, args));
    record->brief = brief;
    reader->why = NULL;
    if (offset >= state->data_end)
        return FXT_READ_END;
    if (state->data_end - offset < 8) {
        reader->why = "trailing bytes shorter than a record header";
        return FXT_READ_BAD_HEADER;
    }
    uint8_t head[8];
    stream_cursor_seek(cursor, offset);
    if (stream_cursor_read(cursor, head, 8) != 0) {
        reader->why = "cannot read record header";
        return FXT_READ_BAD_HEADER;
    }
    uint64_t h = fxt_word(state, head);
    record->offset = offset;
    record->type = (uint8_t)bits(h, 0, 3);
    uint64_t size = record->type == FXT_LARGE ? bits(h, 4, 35) * 8u : bits(h, 4, 15) * 8u;
    if (size == 0) {
        reader->why = "record size 0";
        return FXT_READ_BAD_HEADER;
    }
    if (size > state->data_end - offset) {
        reader->why = "record runs past the end of the file";
        return FXT_READ_BAD_HEADER;
    }
    reader->next = offset + size;
    record->provider = fxt_provider_at(state, offset);
    record->provider_id = -1;
    if (record->provider < state->providers->len) {
        const struct fxt_provider *provider = g_ptr_array_index(state->providers, record->provider);
        if (provider->has_id)
            record->provider_id = provider->id;
    }
    if (record->type == FXT_LARGE) {
        record->unknown = TRUE;   /* large records are newer than the spec we decode: skipped */
        return FXT_READ_OK;
    }
    /* Decode in place from the pinned chunk; copy only records that
     * straddle two chunks. */
    stream_cursor_seek(cursor, offset);
    const uint8_t *bytes = stream_cursor_peek(cursor, size);
    if (bytes) {
        stream_cursor_seek(cursor, offset + size);
    } else {
        if (!reader->buf)
            reader->buf = g_malloc(FXT_RECORD_MAX_BYTES);
        if (stream_cursor_read(cursor, reader->buf, size) != 0) {
            reader->why = "cannot read record";
            return FXT_READ_BAD_HEADER;
        }
        bytes = reader->buf;
    }
    struct body b = { state, bytes, 8, (uint32_t)size, NULL };
    if (!decode_body(&b, record, h)) {
        reader->why = b.why ? b.why : "bad record";
        return FXT_READ_BAD_BODY;
    }
    if (record->type == FXT_EVENT || record->type == FXT_SCHED || record->type == FXT_LOG) {
        record->ts_ns = fxt_ticks_to_ns(state, record->provider, offset, record->ticks);
        if (record->type == FXT_EVENT && record->event_type == FXT_EV_DUR_COMPLETE && !brief)
            record->extra_ns = fxt_ticks_to_ns(state, record->provider, offset, record->extra);
    }
    return FXT_READ_OK;
}
