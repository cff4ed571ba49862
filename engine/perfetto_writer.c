/* The Perfetto TrackEvent writer (see perfetto_writer.h for the mapping
 * and why the export is cut in segments). */
#include <string.h>
#include "perfetto_writer.h"
#include "proto_wire.h"

/* Field numbers, from perfetto_trace.proto. */
enum {
    TRACE_PACKET = 1,
    PACKET_TIMESTAMP = 8,
    PACKET_SEQUENCE_ID = 10,
    PACKET_TRACK_EVENT = 11,
    PACKET_INTERNED_DATA = 12,
    PACKET_SEQUENCE_FLAGS = 13,
    PACKET_TRACK_DESCRIPTOR = 60,

    SEQ_INCREMENTAL_STATE_CLEARED = 1,
    SEQ_NEEDS_INCREMENTAL_STATE = 2,

    INTERNED_EVENT_CATEGORIES = 1,
    INTERNED_EVENT_NAMES = 2,
    INTERNED_ANNOTATION_NAMES = 3,
    INTERNED_IID = 1,
    INTERNED_NAME = 2,

    EVENT_CATEGORY_IIDS = 3,
    EVENT_DEBUG_ANNOTATIONS = 4,
    EVENT_TYPE = 9,
    EVENT_NAME_IID = 10,
    EVENT_TRACK_UUID = 11,
    EVENT_CATEGORIES = 22,
    EVENT_NAME = 23,
    EVENT_COUNTER_VALUE = 30,
    EVENT_DOUBLE_COUNTER_VALUE = 44,
    EVENT_FLOW_IDS = 47,
    EVENT_TERMINATING_FLOW_IDS = 48,

    TYPE_SLICE_BEGIN = 1,
    TYPE_SLICE_END = 2,
    TYPE_INSTANT = 3,
    TYPE_COUNTER = 4,

    ANNOTATION_NAME_IID = 1,
    ANNOTATION_BOOL = 2,
    ANNOTATION_UINT = 3,
    ANNOTATION_INT = 4,
    ANNOTATION_DOUBLE = 5,
    ANNOTATION_STRING = 6,
    ANNOTATION_POINTER = 7,
    ANNOTATION_NAME = 10,

    TRACK_UUID = 1,
    TRACK_NAME = 2,
    TRACK_PROCESS = 3,
    TRACK_THREAD = 4,
    TRACK_PARENT_UUID = 5,
    TRACK_COUNTER = 8,
    PROCESS_PID = 1,
    PROCESS_NAME = 6,
    THREAD_PID = 1,
    THREAD_TID = 2,
    THREAD_NAME = 5,
};

enum intern_kind {
    INTERN_NAME,
    INTERN_CATEGORY,
    INTERN_ANNOTATION_NAME,
    INTERN_TRACK,        /* a descriptor written in this segment: key = its uuid */
    INTERN_KINDS
};

struct intern_slot {
    uint64_t hash;       /* 0 = empty */
    uint32_t offset;     /* of the key in `keys` */
    uint32_t len;
    uint32_t iid;
    uint32_t kind;
};

struct perfetto_writer {
    struct intern_slot slots[PERFETTO_INTERN_SLOTS];
    uint32_t used_slots;
    GString *keys;
    uint32_t next_iid[INTERN_KINDS];
    uint32_t segment_events;
    gboolean cleared_written;    /* the segment's first TrackEvent packet said so */
    GString *body, *interned, *descriptor, *text, *name;
    struct trace *trace;                       /* names come from here */
    const struct trace_event_iterator *events;
};

/* ---- hashing: interning and track uuids ---- */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

static uint64_t bytes_hash(const char *data, size_t len)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)data[i]) * UINT64_C(0x100000001b3);
    return h;
}

enum track_kind { TRACK_OF_PROCESS = 1, TRACK_OF_THREAD, TRACK_OF_ASYNC, TRACK_OF_COUNTER };

/* A track's uuid from its key: positive (the guide keeps uuids in 63
 * bits) and never 0 (the default track). */
static uint64_t track_uuid(enum track_kind kind, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t h = mix64(mix64(mix64(mix64((uint64_t)kind) ^ a) ^ b) ^ c) & (uint64_t)INT64_MAX;
    return h ? h : 1;
}

static uint64_t process_uuid(int64_t pid)
{
    return track_uuid(TRACK_OF_PROCESS, (uint64_t)pid, 0, 0);
}

static uint64_t thread_uuid(int64_t pid, int64_t tid)
{
    return track_uuid(TRACK_OF_THREAD, (uint64_t)pid, (uint64_t)tid, 0);
}

/* ---- the interning table ---- */

struct perfetto_writer *perfetto_writer_new(void)
{
    struct perfetto_writer *writer = g_new0(struct perfetto_writer, 1);
    writer->keys = g_string_sized_new(4096);
    writer->body = g_string_sized_new(1024);
    writer->interned = g_string_sized_new(1024);
    writer->descriptor = g_string_sized_new(256);
    writer->text = g_string_sized_new(256);
    writer->name = g_string_sized_new(64);
    perfetto_writer_reset(writer);
    return writer;
}

void perfetto_writer_free(struct perfetto_writer *writer)
{
    if (!writer)
        return;
    g_string_free(writer->keys, TRUE);
    g_string_free(writer->body, TRUE);
    g_string_free(writer->interned, TRUE);
    g_string_free(writer->descriptor, TRUE);
    g_string_free(writer->text, TRUE);
    g_string_free(writer->name, TRUE);
    g_free(writer);
}

void perfetto_writer_set_names(struct perfetto_writer *writer, struct trace *trace,
                               const struct trace_event_iterator *events)
{
    writer->trace = trace;
    writer->events = events;
}

void perfetto_writer_reset(struct perfetto_writer *writer)
{
    memset(writer->slots, 0, sizeof writer->slots);
    writer->used_slots = 0;
    g_string_truncate(writer->keys, 0);
    for (int k = 0; k < INTERN_KINDS; k++)
        writer->next_iid[k] = 1;
    writer->segment_events = 0;
    writer->cleared_written = FALSE;
}

uint32_t perfetto_writer_segment_events(const struct perfetto_writer *writer)
{
    return writer->segment_events;
}

/* The iid of (kind, key) in this segment; *added when it was not there
 * before.  0 when the table is full: the caller writes the string inline
 * (or, for a track, its descriptor again). */
static uint32_t intern(struct perfetto_writer *writer, enum intern_kind kind, const char *key, size_t len,
                       gboolean *added)
{
    *added = FALSE;
    uint64_t hash = mix64(bytes_hash(key, len) ^ (uint64_t)kind) | 1;
    uint32_t mask = PERFETTO_INTERN_SLOTS - 1;
    for (uint32_t i = (uint32_t)hash & mask;; i = (i + 1) & mask) {
        struct intern_slot *slot = &writer->slots[i];
        if (slot->hash == 0) {
            if (writer->used_slots >= PERFETTO_INTERN_SLOTS / 2 || len > PERFETTO_INTERN_BYTES
                || writer->keys->len + len > PERFETTO_INTERN_BYTES)
                return 0;
            *slot = (struct intern_slot){ hash, (uint32_t)writer->keys->len, (uint32_t)len,
                                          writer->next_iid[kind]++, (uint32_t)kind };
            g_string_append_len(writer->keys, key, (gssize)len);
            writer->used_slots++;
            *added = TRUE;
            return slot->iid;
        }
        if (slot->hash == hash && slot->kind == (uint32_t)kind && slot->len == len
            && memcmp(writer->keys->str + slot->offset, key, len) == 0)
            return slot->iid;
    }
}

/* ---- strings ---- */

/* proto2 `string` fields should be UTF-8: a byte of no valid sequence is
 * written as the code point of the same value, as text_json_string shows
 * it (\u00XX), so names read the same in every export. */
static void put_string(struct perfetto_writer *writer, GString *out, uint32_t field, const char *data, size_t len)
{
    if (len == 0 || g_utf8_validate_len(data, len, NULL)) {
        proto_bytes(out, field, data, len);
        return;
    }
    GString *text = writer->text;
    g_string_truncate(text, 0);
    const char *p = data, *end = data + len;
    while (p < end) {
        const char *valid_end;
        g_utf8_validate_len(p, (gsize)(end - p), &valid_end);
        g_string_append_len(text, p, valid_end - p);
        if (valid_end == end)
            break;
        unsigned char c = (unsigned char)*valid_end;
        if (c < 0x80) {
            g_string_append_c(text, (char)c);   /* NUL: glib stops there, it is valid UTF-8 */
        } else {
            g_string_append_c(text, (char)(0xC0 | (c >> 6)));
            g_string_append_c(text, (char)(0x80 | (c & 0x3F)));
        }
        p = valid_end + 1;
    }
    proto_bytes(out, field, text->str, text->len);
}

/* An interned string: its iid in `iid_field` of out, and its definition in
 * the packet's InternedData when new; inline in `inline_field` past the
 * table's bounds. */
static void put_interned(struct perfetto_writer *writer, GString *out, enum intern_kind kind,
                         uint32_t interned_field, uint32_t iid_field, uint32_t inline_field, const char *data,
                         size_t len)
{
    gboolean added;
    uint32_t iid = intern(writer, kind, data, len, &added);
    if (!iid) {
        put_string(writer, out, inline_field, data, len);
        return;
    }
    if (added) {
        size_t at = proto_open(writer->interned, interned_field);
        proto_uint(writer->interned, INTERNED_IID, iid);
        put_string(writer, writer->interned, INTERNED_NAME, data, len);
        proto_close(writer->interned, at);
    }
    proto_uint(out, iid_field, iid);
}

/* ---- packets ---- */

static void open_packet(GString *out, uint64_t time, size_t *at)
{
    *at = proto_open(out, TRACE_PACKET);
    proto_uint(out, PACKET_TIMESTAMP, time);
    proto_uint(out, PACKET_SEQUENCE_ID, PERFETTO_SEQUENCE_ID);
}

static void write_descriptor_packet(struct perfetto_writer *writer, uint64_t time, GString *out)
{
    size_t at;
    open_packet(out, time, &at);
    proto_bytes(out, PACKET_TRACK_DESCRIPTOR, writer->descriptor->str, writer->descriptor->len);
    proto_close(out, at);
}

/* TRUE the first time a track is met in the segment (or always, once the
 * table is full): its descriptor is to be written. */
static gboolean track_is_new(struct perfetto_writer *writer, uint64_t uuid)
{
    gboolean added;
    char key[8];
    memcpy(key, &uuid, sizeof key);
    return intern(writer, INTERN_TRACK, key, sizeof key, &added) == 0 || added;
}

static gboolean pid_fits_descriptor(int64_t pid)
{
    return pid >= INT32_MIN && pid <= INT32_MAX;   /* ProcessDescriptor.pid is int32 */
}

/* A pid beyond int32 gets a plain track named after it. */
static void ensure_process(struct perfetto_writer *writer, int64_t pid, uint64_t time, GString *out)
{
    uint64_t uuid = process_uuid(pid);
    if (!track_is_new(writer, uuid))
        return;
    GString *d = writer->descriptor;
    g_string_truncate(d, 0);
    proto_uint(d, TRACK_UUID, uuid);
    if (pid_fits_descriptor(pid)) {
        size_t at = proto_open(d, TRACK_PROCESS);
        proto_int(d, PROCESS_PID, pid);
        g_string_truncate(writer->name, 0);
        if (writer->events && writer->events->process_name
            && writer->events->process_name(writer->trace, pid, writer->name))
            put_string(writer, d, PROCESS_NAME, writer->name->str, writer->name->len);
        proto_close(d, at);
    } else {
        char name[32];
        int n = g_snprintf(name, sizeof name, "pid %" G_GINT64_FORMAT, pid);
        proto_bytes(d, TRACK_NAME, name, (size_t)n);
    }
    write_descriptor_packet(writer, time, out);
}

static uint64_t ensure_thread(struct perfetto_writer *writer, int64_t pid, int64_t tid, uint64_t time,
                              GString *out)
{
    uint64_t uuid = thread_uuid(pid, tid);
    ensure_process(writer, pid, time, out);
    if (!track_is_new(writer, uuid))
        return uuid;
    GString *d = writer->descriptor;
    g_string_truncate(d, 0);
    proto_uint(d, TRACK_UUID, uuid);
    if (pid_fits_descriptor(pid)) {
        size_t at = proto_open(d, TRACK_THREAD);
        proto_int(d, THREAD_PID, pid);
        proto_int(d, THREAD_TID, tid);
        g_string_truncate(writer->name, 0);
        if (writer->events && writer->events->thread_name
            && writer->events->thread_name(writer->trace, pid, tid, writer->name))
            put_string(writer, d, THREAD_NAME, writer->name->str, writer->name->len);
        proto_close(d, at);
    } else {
        char name[32];
        int n = g_snprintf(name, sizeof name, "tid %" G_GINT64_FORMAT, tid);
        proto_uint(d, TRACK_PARENT_UUID, process_uuid(pid));
        proto_bytes(d, TRACK_NAME, name, (size_t)n);
    }
    write_descriptor_packet(writer, time, out);
    return uuid;
}

/* An async operation's track, under its process, named by its category
 * (the same in every segment, whatever event comes first). */
static uint64_t ensure_async(struct perfetto_writer *writer, const struct trace_event *event, uint64_t time,
                             GString *out)
{
    uint64_t uuid = track_uuid(TRACK_OF_ASYNC, (uint64_t)event->pid, bytes_hash(event->cat, event->cat_len),
                               event->id);
    ensure_process(writer, event->pid, time, out);
    if (!track_is_new(writer, uuid))
        return uuid;
    GString *d = writer->descriptor;
    g_string_truncate(d, 0);
    proto_uint(d, TRACK_UUID, uuid);
    proto_uint(d, TRACK_PARENT_UUID, process_uuid(event->pid));
    if (event->cat_len)
        put_string(writer, d, TRACK_NAME, event->cat, event->cat_len);
    else
        proto_bytes(d, TRACK_NAME, "async", 5);
    write_descriptor_packet(writer, time, out);
    return uuid;
}

/* A counter series' track: "<name> <key>" under its process. */
static uint64_t ensure_counter(struct perfetto_writer *writer, const struct trace_event *event,
                               const struct trace_arg *arg, uint64_t time, GString *out)
{
    uint64_t uuid = track_uuid(TRACK_OF_COUNTER, (uint64_t)event->pid, bytes_hash(event->name, event->name_len),
                               bytes_hash(arg->key, arg->key_len));
    ensure_process(writer, event->pid, time, out);
    if (!track_is_new(writer, uuid))
        return uuid;
    GString *name = g_string_new_len(event->name, (gssize)event->name_len);
    if (arg->key_len) {
        g_string_append_c(name, ' ');
        g_string_append_len(name, arg->key, (gssize)arg->key_len);
    }
    GString *d = writer->descriptor;
    g_string_truncate(d, 0);
    proto_uint(d, TRACK_UUID, uuid);
    proto_uint(d, TRACK_PARENT_UUID, process_uuid(event->pid));
    put_string(writer, d, TRACK_NAME, name->str, name->len);
    proto_bytes(d, TRACK_COUNTER, NULL, 0);
    g_string_free(name, TRUE);
    write_descriptor_packet(writer, time, out);
    return uuid;
}

static void put_annotation(struct perfetto_writer *writer, GString *body, const struct trace_arg *arg)
{
    if (arg->type == TRACE_ARG_NULL)
        return;   /* DebugAnnotation has no null value */
    size_t at = proto_open(body, EVENT_DEBUG_ANNOTATIONS);
    put_interned(writer, body, INTERN_ANNOTATION_NAME, INTERNED_ANNOTATION_NAMES, ANNOTATION_NAME_IID,
                 ANNOTATION_NAME, arg->key, arg->key_len);
    switch (arg->type) {
    case TRACE_ARG_INT: proto_int(body, ANNOTATION_INT, arg->value.i); break;
    case TRACE_ARG_UINT: proto_uint(body, ANNOTATION_UINT, arg->value.u); break;
    case TRACE_ARG_DOUBLE: proto_double(body, ANNOTATION_DOUBLE, arg->value.d); break;
    case TRACE_ARG_STRING:
        put_string(writer, body, ANNOTATION_STRING, arg->value.s.data, arg->value.s.len);
        break;
    case TRACE_ARG_POINTER: proto_uint(body, ANNOTATION_POINTER, arg->value.u); break;
    case TRACE_ARG_BOOL: proto_uint(body, ANNOTATION_BOOL, arg->value.b ? 1 : 0); break;
    case TRACE_ARG_NULL:
    default: break;
    }
    proto_close(body, at);
}

/* What one TrackEvent packet carries besides its type and track. */
enum packet_part {
    PART_NAME = 1,          /* name and category */
    PART_ARGS = 2,          /* debug annotations */
    PART_FLOW = 4,          /* flow_ids = [id] */
    PART_FLOW_END = 8,      /* terminating_flow_ids = [id] */
};

static void write_event_packet(struct perfetto_writer *writer, const struct trace_event *event, uint64_t time,
                               uint32_t type, uint64_t track, unsigned parts, const struct trace_arg *counter,
                               GString *out)
{
    GString *body = writer->body;
    g_string_truncate(body, 0);
    g_string_truncate(writer->interned, 0);
    proto_uint(body, EVENT_TYPE, type);
    proto_uint(body, EVENT_TRACK_UUID, track);
    if ((parts & PART_NAME) && event->cat_len)
        put_interned(writer, body, INTERN_CATEGORY, INTERNED_EVENT_CATEGORIES, EVENT_CATEGORY_IIDS,
                     EVENT_CATEGORIES, event->cat, event->cat_len);
    if (parts & PART_NAME)
        put_interned(writer, body, INTERN_NAME, INTERNED_EVENT_NAMES, EVENT_NAME_IID, EVENT_NAME, event->name,
                     event->name_len);
    if (parts & PART_ARGS)
        for (uint32_t i = 0; i < event->arg_count; i++)
            put_annotation(writer, body, &event->args[i]);
    if ((parts & PART_FLOW) && event->has_id)
        proto_fixed64(body, EVENT_FLOW_IDS, event->id);
    if ((parts & PART_FLOW_END) && event->has_id)
        proto_fixed64(body, EVENT_TERMINATING_FLOW_IDS, event->id);
    if (counter) {
        switch (counter->type) {
        case TRACE_ARG_DOUBLE: proto_double(body, EVENT_DOUBLE_COUNTER_VALUE, counter->value.d); break;
        case TRACE_ARG_INT: proto_int(body, EVENT_COUNTER_VALUE, counter->value.i); break;
        case TRACE_ARG_BOOL: proto_int(body, EVENT_COUNTER_VALUE, counter->value.b ? 1 : 0); break;
        default:
            if (counter->value.u <= (uint64_t)INT64_MAX)
                proto_int(body, EVENT_COUNTER_VALUE, (int64_t)counter->value.u);
            else
                proto_double(body, EVENT_DOUBLE_COUNTER_VALUE, (double)counter->value.u);
            break;
        }
    }
    size_t at;
    open_packet(out, time, &at);
    uint32_t flags = SEQ_NEEDS_INCREMENTAL_STATE;
    if (!writer->cleared_written) {
        flags |= SEQ_INCREMENTAL_STATE_CLEARED;
        writer->cleared_written = TRUE;
    }
    proto_uint(out, PACKET_SEQUENCE_FLAGS, flags);
    if (writer->interned->len)
        proto_bytes(out, PACKET_INTERNED_DATA, writer->interned->str, writer->interned->len);
    proto_bytes(out, PACKET_TRACK_EVENT, body->str, body->len);
    proto_close(out, at);
}

static gboolean arg_is_number(const struct trace_arg *arg)
{
    return arg->type == TRACE_ARG_INT || arg->type == TRACE_ARG_UINT || arg->type == TRACE_ARG_DOUBLE
           || arg->type == TRACE_ARG_BOOL || arg->type == TRACE_ARG_POINTER;
}

static void write_counter(struct perfetto_writer *writer, const struct trace_event *event, uint64_t time,
                          GString *out)
{
    for (uint32_t i = 0; i < event->arg_count; i++) {
        const struct trace_arg *arg = &event->args[i];
        if (!arg_is_number(arg))
            continue;
        uint64_t track = ensure_counter(writer, event, arg, time, out);
        write_event_packet(writer, event, time, TYPE_COUNTER, track, 0, arg, out);
    }
}

void perfetto_writer_event(struct perfetto_writer *writer, const struct trace_event *event, GString *out)
{
    uint64_t time = trace_event_time(event);
    writer->segment_events++;
    const unsigned named = PART_NAME | PART_ARGS;
    uint64_t track;
    switch (event->kind) {
    case TRACE_EVENT_COUNTER:
        write_counter(writer, event, time, out);
        return;
    case TRACE_EVENT_ASYNC_BEGIN:
    case TRACE_EVENT_ASYNC_INSTANT:
    case TRACE_EVENT_ASYNC_END:
        track = ensure_async(writer, event, time, out);
        if (event->kind == TRACE_EVENT_ASYNC_END)
            write_event_packet(writer, event, time, TYPE_SLICE_END, track, PART_ARGS, NULL, out);
        else
            write_event_packet(writer, event, time,
                               event->kind == TRACE_EVENT_ASYNC_BEGIN ? TYPE_SLICE_BEGIN : TYPE_INSTANT, track,
                               named, NULL, out);
        return;
    default:
        break;
    }
    track = ensure_thread(writer, event->pid, event->tid, time, out);
    switch (event->kind) {
    case TRACE_EVENT_BEGIN:
        write_event_packet(writer, event, time, TYPE_SLICE_BEGIN, track, named, NULL, out);
        return;
    case TRACE_EVENT_END:
        write_event_packet(writer, event, time, TYPE_SLICE_END, track, PART_ARGS, NULL, out);
        return;
    case TRACE_EVENT_COMPLETE: {
        uint64_t dur = event->has_dur ? event->dur : 0;
        uint64_t end = time + dur >= time ? time + dur : UINT64_MAX;
        write_event_packet(writer, event, time, TYPE_SLICE_BEGIN, track, named, NULL, out);
        write_event_packet(writer, event, end, TYPE_SLICE_END, track, 0, NULL, out);
        return;
    }
    case TRACE_EVENT_FLOW_BEGIN:
    case TRACE_EVENT_FLOW_STEP:
        write_event_packet(writer, event, time, TYPE_INSTANT, track, named | PART_FLOW, NULL, out);
        return;
    case TRACE_EVENT_FLOW_END:
        write_event_packet(writer, event, time, TYPE_INSTANT, track, named | PART_FLOW_END, NULL, out);
        return;
    case TRACE_EVENT_INSTANT:
    default:
        write_event_packet(writer, event, time, TYPE_INSTANT, track, named, NULL, out);
        return;
    }
}

enum export_state { EXPORT_GOING = 0, EXPORT_FAILED = 1 };

enum view_step perfetto_export_next_until(struct trace *trace, const struct trace_event_iterator *events,
                                          uint64_t stop, struct view_cursor *cursor,
                                          struct trace_event_scratch *scratch, struct perfetto_writer *writer,
                                          GString *out)
{
    if (cursor->word[TRACE_EVENT_EXPORT_WORD] == EXPORT_FAILED)
        return VIEW_ERROR;
    perfetto_writer_set_names(writer, trace, events);
    perfetto_writer_reset(writer);
    size_t start = out->len;
    while (writer->segment_events < PERFETTO_SEGMENT_EVENTS && out->len - start < PERFETTO_SEGMENT_BYTES &&
           cursor->word[0] < stop) {
        struct trace_event event;
        trace_event_scratch_reset(scratch);
        enum view_step step = events->next(trace, cursor, &event, scratch);
        if (step == VIEW_END)
            return writer->segment_events ? VIEW_RECORD : VIEW_END;
        if (step == VIEW_ERROR) {
            if (!writer->segment_events)
                return VIEW_ERROR;
            /* Keep what the segment has; the next call ends the view
             * without asking the iterator (and trace_error) again. */
            cursor->word[TRACE_EVENT_EXPORT_WORD] = EXPORT_FAILED;
            return VIEW_RECORD;
        }
        perfetto_writer_event(writer, &event, out);
    }
    return VIEW_RECORD;
}

enum view_step perfetto_export_next(struct trace *trace, const struct trace_event_iterator *events,
                                    struct view_cursor *cursor, struct trace_event_scratch *scratch,
                                    struct perfetto_writer *writer, GString *out)
{
    return perfetto_export_next_until(trace, events, UINT64_MAX, cursor, scratch, writer, out);
}
