/* Decodes records again from a run's position (views call this from many
 * threads: only locals, the caller's reader and stream reads).  It follows
 * the index pass (xray_scan.c) inside the segments that pass delimited, so
 * it meets no record the pass rejected. */
#include <string.h>
#include "xray_format.h"

void xray_reader_init(struct xray_reader *reader, size_t capacity)
{
    *reader = (struct xray_reader){ .bytes = g_malloc(capacity), .capacity = capacity };
}

void xray_reader_free(struct xray_reader *reader)
{
    g_free(reader->bytes);
    *reader = (struct xray_reader){ 0 };
}

/* The len (<= 32) bytes at offset, from the reader's window, refilled as needed. */
static const uint8_t *reader_get(const struct xray_state *state, struct xray_reader *reader, uint64_t offset,
                                 size_t len)
{
    if (offset >= reader->start && offset - reader->start + len <= reader->length)
        return reader->bytes + (offset - reader->start);
    ssize_t got = stream_read(state->stream, offset, reader->bytes, reader->capacity);
    reader->start = offset;
    reader->length = got > 0 ? (size_t)got : 0;
    return reader->length >= len ? reader->bytes : NULL;
}

/* Moves to the thread's next segment when the current one is used up. */
static gboolean enter_segment(const struct xray_state *state, struct xray_position *pos, uint64_t *end)
{
    guint count = state->segments->len;
    const struct xray_segment *segments = (const struct xray_segment *)(void *)state->segments->data;
    if (pos->segment >= count)
        return FALSE;
    while (pos->offset >= segments[pos->segment].end) {
        uint32_t next = segments[pos->segment].next;
        if (next == UINT32_MAX || next >= count || next <= pos->segment)
            return FALSE;
        pos->segment = next;
        pos->offset = segments[next].offset;
        pos->tsc = segments[next].tsc;
        pos->cpu = segments[next].cpu;
    }
    *end = segments[pos->segment].end;
    return TRUE;
}

static gboolean next_basic(const struct xray_state *state, struct xray_reader *reader, struct xray_position *pos,
                           uint64_t end, struct xray_record *out)
{
    while (pos->offset + 32 <= end) {
        const uint8_t *r = reader_get(state, reader, pos->offset, 32);
        if (!r)
            return FALSE;
        uint64_t at = pos->offset;
        pos->offset += 32;
        if (load_le16(r) != 0 || r[3] > 3)
            continue;   /* an argument payload, or a record the index pass reported */
        *out = (struct xray_record){ .kind = r[3], .func_id = load_le32(r + 4), .cpu = r[2],
                                     .thread = g_array_index(state->segments, struct xray_segment, pos->segment).thread,
                                     .tsc = load_le64(r + 8), .offset = at };
        return TRUE;
    }
    pos->offset = end;
    return FALSE;
}

/* The FDR function record r at pos->offset, and the position after it. */
static void decode_function(const uint8_t *r, uint32_t thread, struct xray_position *pos, struct xray_record *out)
{
    uint32_t word = load_le32(r);
    pos->tsc += load_le32(r + 4);
    pos->last_func = word >> 4;
    *out = (struct xray_record){ .kind = (word >> 1) & 7, .func_id = word >> 4, .cpu = pos->cpu,
                                 .thread = thread, .tsc = pos->tsc, .offset = pos->offset };
    pos->offset += 8;
}

static gboolean next_fdr(const struct xray_state *state, struct xray_reader *reader, struct xray_position *pos,
                         uint64_t end, struct xray_record *out)
{
    uint16_t version = state->header.version;
    uint32_t thread = g_array_index(state->segments, struct xray_segment, pos->segment).thread;
    while (pos->offset < end) {
        const uint8_t *r = reader_get(state, reader, pos->offset, MIN(16, end - pos->offset));
        if (!r)
            return FALSE;
        uint64_t at = pos->offset;
        if (!(r[0] & 1)) {
            if (end - at < 8)
                return FALSE;
            decode_function(r, thread, pos, out);
            return TRUE;
        }
        if (end - at < 16)
            return FALSE;
        unsigned kind = r[0] >> 1;
        pos->offset += 16;
        if (kind == 2) {
            pos->cpu = load_le16(r + 1);
            pos->tsc = load_le64(r + 3);
        } else if (kind == 3) {
            pos->tsc = load_le64(r + 1);
        } else if (kind == 5 || kind == 8) {
            uint32_t size = load_le32(r + 1);
            pos->offset += MIN((uint64_t)size, end - pos->offset);
            *out = (struct xray_record){ .kind = kind == 5 ? XRAY_CUSTOM : XRAY_TYPED, .func_id = pos->last_func,
                                         .cpu = pos->cpu, .thread = thread, .offset = at };
            if (version >= 5) {
                pos->tsc += (uint64_t)(int64_t)(int32_t)load_le32(r + 5);
                out->tsc = pos->tsc;
            } else {
                out->tsc = load_le64(r + 5);
                out->cpu = version == 4 ? load_le16(r + 13) : 0;
            }
            return TRUE;
        }
    }
    return FALSE;
}

/* The common case, as next_fdr decodes it: an FDR function record inside
 * the position's segment, already in the reader's window.  FALSE leaves
 * everything as it was (the general path then runs). */
static gboolean next_fdr_function_in_window(const struct xray_state *state, const struct xray_reader *reader,
                                           struct xray_position *pos, struct xray_record *out)
{
    if (state->header.type == 0 || pos->segment >= state->segments->len)
        return FALSE;
    const struct xray_segment *segment = &g_array_index(state->segments, struct xray_segment, pos->segment);
    uint64_t at = pos->offset;
    if (at >= segment->end || segment->end - at < 8 || at < reader->start || reader->length < 8 ||
        at - reader->start > reader->length - 8)
        return FALSE;
    const uint8_t *r = reader->bytes + (at - reader->start);
    if (r[0] & 1)
        return FALSE;
    decode_function(r, segment->thread, pos, out);
    pos->left--;
    return TRUE;
}

gboolean xray_decode_next(const struct xray_state *state, struct xray_reader *reader, struct xray_position *pos,
                          struct xray_record *out)
{
    if (pos->left > 0 && next_fdr_function_in_window(state, reader, pos, out))
        return TRUE;
    while (pos->left > 0) {
        uint64_t end;
        if (!enter_segment(state, pos, &end))
            break;
        gboolean found = state->header.type == 0 ? next_basic(state, reader, pos, end, out)
                                                 : next_fdr(state, reader, pos, end, out);
        if (found) {
            pos->left--;
            return TRUE;
        }
        if (pos->offset < end)
            break;   /* unreadable: the log changed */
    }
    pos->left = 0;
    return FALSE;
}

static void extra_basic(const struct xray_state *state, struct xray_record *out)
{
    uint8_t r[64];
    if (out->kind != XRAY_ENTER_ARG || stream_read_exact(state->stream, out->offset, r, 64) != 0)
        return;
    const uint8_t *a = r + 32;
    /* An argument payload belongs to the record just before it (llvm checks
     * the function and thread, and the process from version 3 on). */
    if (load_le16(a) != 1 || load_le32(a + 4) != load_le32(r + 4) || load_le32(a + 8) != load_le32(r + 16))
        return;
    if (state->header.version >= 3 && load_le32(a + 12) != load_le32(r + 20))
        return;
    out->has_arg = TRUE;
    out->arg = load_le64(a + 16);
}

gboolean xray_decode_extra(const struct xray_state *state, struct xray_record *out)
{
    if (out->kind != XRAY_ENTER_ARG && out->kind != XRAY_CUSTOM && out->kind != XRAY_TYPED)
        return TRUE;   /* most records: nothing lies beside them */
    if (state->header.type == 0) {
        extra_basic(state, out);
        return TRUE;
    }
    uint8_t r[16];
    if (out->kind == XRAY_CUSTOM || out->kind == XRAY_TYPED) {
        if (stream_read_exact(state->stream, out->offset, r, 16) != 0)
            return FALSE;
        out->payload_offset = out->offset + 16;
        out->payload_size = load_le32(r + 1);   /* checked by the index pass; a saved index may lie */
        if (out->payload_size > stream_size(state->stream) - MIN(stream_size(state->stream), out->payload_offset))
            return FALSE;
        if (out->kind == XRAY_TYPED)
            out->event_type = load_le16(r + 9);
        return TRUE;
    }
    if (stream_read_exact(state->stream, out->offset + 8, r, 16) == 0 && r[0] == 0x0d) {   /* XRAY_ENTER_ARG */
        out->has_arg = TRUE;
        out->arg = load_le64(r + 1);
    }
    return TRUE;
}
