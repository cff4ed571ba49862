/* The persistent index: the frame table (events offset, data offset, tid,
 * segments per frame) and the frames with memory writes.  Everything else
 * (header, block tables, mmaps, tasks) is cheap and re-read at load.  The
 * bytes come from a checksummed file but are checked like trace data. */
#include <string.h>

#include "rr.h"
#include "stream.h"
#include "text.h"
#include "trace.h"
#include "tracefs_limits.h"

#define SAVED_MAGIC 0x31585252u   /* "RRX1" */

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
    put64(out, state->frames->len);
    put64(out, state->frames_with_writes->len);
    for (guint i = 0; i < state->frames->len; i++) {
        const struct rr_frame_entry *e = &g_array_index(state->frames, struct rr_frame_entry, i);
        put64(out, e->offset);
        put64(out, e->data_offset);
        put64(out, (uint64_t)(uint32_t)e->tid | ((uint64_t)e->segments << 32));
    }
    for (guint i = 0; i < state->frames_with_writes->len; i++)
        put64(out, g_array_index(state->frames_with_writes, uint32_t, i));
    return 0;
}

int rr_load_frames(struct rr_state *state, const uint8_t *data, size_t size)
{
    if (size < 32 || load_le64(data) != SAVED_MAGIC)
        return -1;
    uint64_t events_size = load_le64(data + 8), frames = load_le64(data + 16), with_writes = load_le64(data + 24);
    if (events_size != (state->events ? stream_size(state->events) : 0) || frames > LIMIT_RR_FRAMES ||
        with_writes > frames || (size - 32) / 8 != frames * 3 + with_writes || (size - 32) % 8)
        return -1;
    const uint8_t *p = data + 32;
    uint64_t last_offset = 0, last_data = 0;
    for (uint64_t i = 0; i < frames; i++, p += 24) {
        struct rr_frame_entry e = { .offset = load_le64(p), .data_offset = load_le64(p + 8),
                                    .tid = (int32_t)load_le32(p + 16), .segments = load_le32(p + 20) };
        if ((i && e.offset <= last_offset) || e.offset >= events_size || e.data_offset < last_data)
            return -1;
        last_offset = e.offset;
        last_data = e.data_offset;
        g_array_append_val(state->frames, e);
    }
    uint64_t last_position = 0;
    for (uint64_t i = 0; i < with_writes; i++, p += 8) {
        uint64_t position = load_le64(p);
        if (position >= frames || position >= LIMIT_RR_MEMORY_FRAMES || (i && position <= last_position))
            return -1;
        last_position = position;
        uint32_t value = (uint32_t)position;
        g_array_append_val(state->frames_with_writes, value);
    }
    return 0;
}
