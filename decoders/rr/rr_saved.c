/* The persistent index: the frame checkpoints (events offset, data offset,
 * mask of frames with memory writes, per LIMIT_RR_FRAME_CHECKPOINT frames),
 * each thread's tid and span, and each mmap's owner (the tid of the frame
 * at its time).  Everything else (header, block tables, mmaps, tasks) is
 * cheap and re-read at load.  The bytes come from a checksummed file but
 * are checked like trace data. */
#include <string.h>

#include "rr.h"
#include "stream.h"
#include "text.h"
#include "trace.h"
#include "tracefs_limits.h"

#define SAVED_MAGIC 0x32585252u   /* "RRX2" */
#define HEADER_WORDS 7u

static void put64(GByteArray *out, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    g_byte_array_append(out, b, 8);
}

int rr_save(struct trace *trace, GByteArray *out)
{
    const struct rr_state *state = trace->format_state;
    if (!state)
        return -1;
    put64(out, SAVED_MAGIC);
    put64(out, state->events ? stream_size(state->events) : 0);
    put64(out, state->frame_count);
    put64(out, state->checkpoints->len);
    put64(out, state->frames_with_writes);
    put64(out, state->tids->len);
    put64(out, state->mmaps->len);
    for (guint i = 0; i < state->checkpoints->len; i++) {
        const struct rr_checkpoint *c = &g_array_index(state->checkpoints, struct rr_checkpoint, i);
        put64(out, c->offset);
        put64(out, c->data_offset);
        put64(out, c->writes_mask);
        put64(out, c->writes_before);
    }
    for (guint i = 0; i < state->tids->len; i++) {
        const struct rr_thread_span *span = &g_array_index(state->thread_spans, struct rr_thread_span, i);
        put64(out, (uint32_t)g_array_index(state->tids, int32_t, i));
        put64(out, span->first);
        put64(out, span->last);
    }
    for (guint i = 0; i < state->mmaps->len; i++) {
        const struct rr_mmap *m = &g_array_index(state->mmaps, struct rr_mmap, i);
        put64(out, m->has_owner ? ((uint64_t)1 << 32) | (uint32_t)m->owner_tid : 0);
    }
    return 0;
}

static int popcount64(uint64_t v)
{
    int n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

static int load_checkpoints(struct rr_state *state, const uint8_t *p, uint64_t count, uint64_t frames,
                            uint64_t with_writes, uint64_t events_size)
{
    uint64_t writes = 0;
    for (uint64_t i = 0; i < count; i++, p += 32) {
        struct rr_checkpoint c = { .offset = load_le64(p), .data_offset = load_le64(p + 8),
                                   .writes_mask = load_le64(p + 16), .writes_before = load_le64(p + 24) };
        const struct rr_checkpoint *last = i ? &g_array_index(state->checkpoints, struct rr_checkpoint, i - 1) : NULL;
        uint64_t first_frame = i * LIMIT_RR_FRAME_CHECKPOINT;
        uint64_t in_block = MIN(frames, MIN(LIMIT_RR_MEMORY_FRAMES, first_frame + LIMIT_RR_FRAME_CHECKPOINT));
        in_block = in_block > first_frame ? in_block - first_frame : 0;
        uint64_t allowed = in_block >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << in_block) - 1;
        if (c.offset >= events_size || (last && (c.offset <= last->offset || c.data_offset < last->data_offset)) ||
            (!last && (c.offset != 0 || c.data_offset != 0)) || (c.writes_mask & ~allowed) || c.writes_before != writes)
            return -1;
        writes += (uint64_t)popcount64(c.writes_mask);
        g_array_append_val(state->checkpoints, c);
    }
    return writes == with_writes ? 0 : -1;
}

static int load_threads(struct rr_state *state, const uint8_t *p, uint64_t count, uint64_t frames)
{
    GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    int rc = 0;
    for (uint64_t i = 0; i < count && rc == 0; i++, p += 24) {
        uint64_t tid = load_le64(p);
        struct rr_thread_span span = { load_le64(p + 8), load_le64(p + 16) };
        const struct rr_thread_span *last = i ? &g_array_index(state->thread_spans, struct rr_thread_span, i - 1) : NULL;
        if (tid > UINT32_MAX || span.first > span.last || span.last >= frames || (!last && span.first != 0) ||
            (last && span.first <= last->first) || g_hash_table_contains(seen, GUINT_TO_POINTER((guint)tid))) {
            rc = -1;
            break;
        }
        g_hash_table_add(seen, GUINT_TO_POINTER((guint)tid));
        int32_t value = (int32_t)(uint32_t)tid;
        g_array_append_val(state->tids, value);
        g_array_append_val(state->thread_spans, span);
    }
    g_hash_table_destroy(seen);
    return rc;
}

int rr_load_frames(struct rr_state *state, const uint8_t *data, size_t size)
{
    if (size < HEADER_WORDS * 8 || load_le64(data) != SAVED_MAGIC)
        return -1;
    uint64_t events_size = load_le64(data + 8), frames = load_le64(data + 16), checkpoints = load_le64(data + 24);
    uint64_t with_writes = load_le64(data + 32), threads = load_le64(data + 40), owners = load_le64(data + 48);
    if (events_size != (state->events ? stream_size(state->events) : 0) || frames > LIMIT_RR_FRAMES ||
        checkpoints != (frames + LIMIT_RR_FRAME_CHECKPOINT - 1) / LIMIT_RR_FRAME_CHECKPOINT ||
        with_writes > frames || threads > frames || (frames && !threads) || owners > LIMIT_RR_SIDE_RECORDS ||
        (size - HEADER_WORDS * 8) % 8 || (size - HEADER_WORDS * 8) / 8 != checkpoints * 4 + threads * 3 + owners)
        return -1;
    const uint8_t *p = data + HEADER_WORDS * 8;
    if (load_checkpoints(state, p, checkpoints, frames, with_writes, events_size) < 0)
        return -1;
    p += checkpoints * 32;
    if (load_threads(state, p, threads, frames) < 0)
        return -1;
    p += threads * 24;
    state->saved_owners = g_array_sized_new(FALSE, FALSE, sizeof(uint64_t), (guint)owners);
    for (uint64_t i = 0; i < owners; i++, p += 8) {
        uint64_t owner = load_le64(p);
        if (owner >> 33)
            return -1;
        g_array_append_val(state->saved_owners, owner);
    }
    state->frame_count = frames;
    state->frames_with_writes = with_writes;
    return 0;
}

int rr_apply_saved_owners(struct rr_state *state)
{
    if (!state->saved_owners || state->saved_owners->len != state->mmaps->len)
        return -1;
    for (guint i = 0; i < state->mmaps->len; i++) {
        struct rr_mmap *m = &g_array_index(state->mmaps, struct rr_mmap, i);
        uint64_t owner = g_array_index(state->saved_owners, uint64_t, i);
        m->has_owner = (int)(owner >> 32);
        m->owner_tid = (int32_t)(uint32_t)owner;
    }
    g_array_unref(state->saved_owners);
    state->saved_owners = NULL;
    return 0;
}
