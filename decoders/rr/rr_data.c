/* Lazily reading recorded memory: a write's bytes lie in `data` at the
 * running sum of the stored sizes of all earlier writes, holes excluded. */
#include <string.h>

#include "rr.h"
#include "sorted_search.h"
#include "stream.h"

ssize_t rr_data_write_read(const struct rr_state *state, uint64_t data_offset, const struct rr_mem_write *w,
                           uint64_t offset, uint8_t *buf, size_t len)
{
    if (offset >= w->size)
        return 0;
    len = (size_t)MIN(len, w->size - offset);
    /* Walk the holes: bytes before each hole come from `data` in order. */
    uint64_t pos = 0, stored = 0;   /* position in the write, bytes of data consumed */
    uint64_t end = offset + len;
    for (uint32_t h = 0; h <= w->holes.count && pos < end; h++) {
        uint64_t hole_start = w->size, hole_size = 0;
        if (h < w->holes.count) {
            struct capnp_struct hole;
            if (capnp_list_struct(&w->holes, h, &hole) < 0)
                return -1;
            hole_start = capnp_u64(&hole, 0);
            hole_size = capnp_u64(&hole, 8);
            if (hole_start < pos || hole_start > w->size)
                return -1;
            hole_size = MIN(hole_size, w->size - hole_start);
        }
        /* stored run [pos, hole_start) */
        uint64_t a = MAX(pos, offset), b = MIN(hole_start, end);
        if (a < b) {
            if (!state->data)
                return -1;
            if (stream_read_exact(state->data, data_offset + stored + (a - pos), buf + (a - offset), (size_t)(b - a)) != 0)
                return -1;
        }
        stored += hole_start - pos;
        /* hole [hole_start, hole_start + hole_size) */
        a = MAX(hole_start, offset);
        b = MIN(hole_start + hole_size, end);
        if (a < b)
            memset(buf + (a - offset), 0, (size_t)(b - a));
        pos = hole_start + hole_size;
    }
    return (ssize_t)len;
}

GByteArray *rr_data_write_bytes(const struct rr_state *state, const struct rr_frame *f, uint32_t i,
                                uint64_t max_bytes)
{
    struct rr_mem_write w;
    if (rr_mem_write_at(f, i, &w) < 0 || w.size > max_bytes)
        return NULL;
    GByteArray *bytes = g_byte_array_sized_new((guint)w.size);
    g_byte_array_set_size(bytes, (guint)w.size);
    uint64_t offset = f->data_offset + rr_frame_stored_bytes(f, i);
    if (rr_data_write_read(state, offset, &w, 0, bytes->data, (size_t)w.size) != (ssize_t)w.size) {
        g_byte_array_unref(bytes);
        return NULL;
    }
    return bytes;
}

const struct rr_task *rr_data_task_at(const struct rr_state *state, int64_t time)
{
    size_t at = SORTED_BELOW_SIGNED(state->tasks, struct rr_task, frame_time, time);
    if (at < state->tasks->len && g_array_index(state->tasks, struct rr_task, at).frame_time == time)
        return &g_array_index(state->tasks, struct rr_task, at);
    return NULL;
}

void rr_data_mmaps_at(const struct rr_state *state, int64_t time, guint *first, guint *count)
{
    /* Attached mmaps form a prefix of the array in non-decreasing time. */
    guint attached = state->mmaps_attached;
    guint lo = (guint)sorted_count_below_signed(state->mmaps->data, attached, sizeof(struct rr_mmap),
                                                offsetof(struct rr_mmap, frame_time), time);
    guint n = 0;
    while (lo + n < attached && g_array_index(state->mmaps, struct rr_mmap, lo + n).frame_time == time)
        n++;
    *first = lo;
    *count = n;
}
