/* The persistent index: the block tables of the events and data files,
 * the frame checkpoints (events offset, data offset, mask of frames with
 * memory writes, per LIMIT_RR_FRAME_CHECKPOINT frames), each thread's tid
 * and span, each mmap's owner (the tid of the frame at its time), and where
 * the initial exec is.  Everything else (header, mmaps, tasks) is cheap
 * and re-read at load.  The bytes come from a checksummed file but are
 * checked like trace data. */
#include "rr.h"
#include "saved_bytes.h"
#include "codec.h"
#include "saved_stream.h"
#include "stream.h"
#include "thread_presence.h"
#include "trace.h"
#include "tracefs_limits.h"

#define WORD 8u
#define THREAD_WORDS 3u           /* tid, first and last frame */

/* The first words: what the tables that follow must match. */
struct saved_header {
    uint64_t events_size, frames, checkpoints, with_writes, threads, owners;
    uint64_t initial_exec;    /* frame position + 1, or 0 */
};

static uint64_t events_size(const struct rr_state *state)
{
    return state->events ? stream_size(state->events) : 0;
}

/* ---- writing ---- */

static void put_header(struct saved_writer *out, const struct rr_state *state)
{
    struct saved_header h = {
        events_size(state), state->frame_count, state->checkpoints->len, state->frames_with_writes,
        state->tids->len, state->mmaps->len, state->initial_exec,
    };
    saved_put(out, &h, sizeof h);
}

static void put_threads(struct saved_writer *out, const struct rr_state *state)
{
    for (guint i = 0; i < state->tids->len; i++) {
        const struct rr_thread_span *span = &g_array_index(state->thread_spans, struct rr_thread_span, i);
        saved_put_u64(out, (uint32_t)g_array_index(state->tids, int32_t, i));
        saved_put_u64(out, span->first);
        saved_put_u64(out, span->last);
    }
}

/* Bit 32: has an owner; the low 32 bits: its tid. */
static void put_owners(struct saved_writer *out, const GArray *mmaps)
{
    for (guint i = 0; i < mmaps->len; i++) {
        const struct rr_mmap *m = &g_array_index(mmaps, struct rr_mmap, i);
        saved_put_u64(out, m->has_owner ? ((uint64_t)1 << 32) | (uint32_t)m->owner_tid : 0);
    }
}

/* A block table is saved when it is small beside its file (or small at
 * all): a file of tiny blocks, hostile or odd, would make the saved index
 * several times its size, far past the 2 % it may take.  Its block headers
 * are read again at load instead. */
#define SAVED_TABLE_FILE_SHARE 64u
#define SAVED_TABLE_ANY_BYTES (64u << 10)

static gboolean table_worth_saving(const struct stream *stream)
{
    size_t count = stream ? stream_chunk_count(stream) : 0;
    if (count == 0)
        return FALSE;
    const struct chunk_entry *last = stream_chunk(stream, count - 1);
    uint64_t file_bytes = last->file_offset + last->compressed_size;
    return saved_stream_bytes(stream) <= MAX(file_bytes / SAVED_TABLE_FILE_SHARE, (uint64_t)SAVED_TABLE_ANY_BYTES);
}

int rr_save(struct trace *trace, struct saved_writer *out)
{
    const struct rr_state *state = trace->format_state;
    if (!state)
        return -1;
    /* The block tables: a flag, then the table when it is saved. */
    const struct stream *tables[] = { state->events, state->data };
    for (size_t i = 0; i < G_N_ELEMENTS(tables); i++) {
        gboolean saved = table_worth_saving(tables[i]);
        saved_put_u64(out, saved);
        if (saved)
            saved_put_stream(out, tables[i]);
    }
    put_header(out, state);
    saved_put(out, state->checkpoints->data, (size_t)state->checkpoints->len * sizeof(struct rr_checkpoint));
    put_threads(out, state);
    put_owners(out, state->mmaps);
    thread_presence_save(state->presence, out);
    return 0;
}

/* ---- reading ---- */

/* The counts fit this trace and the limits, and the tables after the header
 * fill the bytes left but for the threads' presence, which is bounded
 * (checked before any is read, so no count is trusted for an allocation). */
static gboolean header_valid(const struct saved_header *h, const struct rr_state *state, size_t bytes_left)
{
    if (h->events_size != events_size(state) || h->frames > LIMIT_RR_FRAMES ||
        h->checkpoints != (h->frames + LIMIT_RR_FRAME_CHECKPOINT - 1) / LIMIT_RR_FRAME_CHECKPOINT)
        return FALSE;
    if (h->with_writes > h->frames || h->threads > h->frames || (h->frames && !h->threads) ||
        h->owners > LIMIT_RR_SIDE_RECORDS || h->initial_exec > h->frames)
        return FALSE;
    uint64_t tables = h->checkpoints * sizeof(struct rr_checkpoint) + (h->threads * THREAD_WORDS + h->owners) * WORD;
    return tables <= bytes_left && bytes_left - tables <= THREAD_PRESENCE_SAVED_MAX_BYTES;
}

/* The bits a checkpoint's mask can have: one per frame of its block below
 * `end` (the frame count, and for the writes LIMIT_RR_MEMORY_FRAMES). */
static uint64_t block_bits(uint64_t block, uint64_t end)
{
    uint64_t first = block * LIMIT_RR_FRAME_CHECKPOINT;
    uint64_t in_block = end > first ? MIN(end - first, (uint64_t)LIMIT_RR_FRAME_CHECKPOINT) : 0;
    return in_block >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << in_block) - 1;
}

/* The first checkpoint is at the start of both streams; each next one
 * moves on in the events and never back in the data. */
static gboolean checkpoint_follows(const struct rr_checkpoint *c, const struct rr_checkpoint *last)
{
    if (!last)
        return c->offset == 0 && c->data_offset == 0;
    return c->offset > last->offset && c->data_offset >= last->data_offset;
}

/* Joined exits: at most one per frame of the earlier blocks (each joins
 * an entering frame, so fewer), and only in the block's frames. */
static gboolean joined_follows(const struct rr_checkpoint *c, const struct rr_checkpoint *last, uint64_t block,
                               uint64_t frames)
{
    if ((c->joined_mask & ~block_bits(block, frames)) || c->joined_before > block * LIMIT_RR_FRAME_CHECKPOINT)
        return FALSE;
    if (!last)
        return c->joined_before == 0;
    return c->joined_before >= last->joined_before &&
           c->joined_before - last->joined_before <= LIMIT_RR_FRAME_CHECKPOINT;
}

static int load_checkpoints(struct rr_state *state, struct saved_reader *r, const struct saved_header *h)
{
    uint64_t writes = 0;
    for (uint64_t i = 0; i < h->checkpoints; i++) {
        struct rr_checkpoint c;
        saved_take(r, &c, sizeof c);
        const struct rr_checkpoint *last = i ? &g_array_index(state->checkpoints, struct rr_checkpoint, i - 1) : NULL;
        if (r->bad || c.offset >= h->events_size || !checkpoint_follows(&c, last) ||
            (c.writes_mask & ~block_bits(i, MIN(h->frames, LIMIT_RR_MEMORY_FRAMES))) || c.writes_before != writes ||
            !joined_follows(&c, last, i, h->frames))
            return -1;
        writes += (uint64_t)__builtin_popcountll(c.writes_mask);
        g_array_append_val(state->checkpoints, c);
    }
    return writes == h->with_writes ? 0 : -1;
}

/* Threads come in order of their first frame, the first at frame 0, each
 * span inside the trace and no tid twice. */
static gboolean thread_fits(uint64_t tid, const struct rr_thread_span *span, const struct rr_thread_span *last,
                            uint64_t frames, GHashTable *seen)
{
    if (tid > UINT32_MAX || span->first > span->last || span->last >= frames)
        return FALSE;
    if (last ? span->first <= last->first : span->first != 0)
        return FALSE;
    return !g_hash_table_contains(seen, GUINT_TO_POINTER((guint)tid));
}

static int load_threads(struct rr_state *state, struct saved_reader *r, uint64_t count, uint64_t frames)
{
    GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    int rc = 0;
    for (uint64_t i = 0; i < count && rc == 0; i++) {
        uint64_t tid = saved_get_u64(r);
        struct rr_thread_span span;
        span.first = saved_get_u64(r);
        span.last = saved_get_u64(r);
        const struct rr_thread_span *last = i ? &g_array_index(state->thread_spans, struct rr_thread_span, i - 1) : NULL;
        if (r->bad || !thread_fits(tid, &span, last, frames, seen)) {
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

/* Each mmap's owner (see put_owners): one saved per mmap read at load. */
static int load_owners(struct rr_state *state, struct saved_reader *r, uint64_t count)
{
    if (count != state->mmaps->len)
        return -1;
    for (guint i = 0; i < state->mmaps->len; i++) {
        uint64_t owner = saved_get_below(r, (uint64_t)1 << 33);
        if (r->bad)
            return -1;
        struct rr_mmap *m = &g_array_index(state->mmaps, struct rr_mmap, i);
        m->has_owner = (int)(owner >> 32);
        m->owner_tid = (int32_t)(uint32_t)owner;
    }
    return 0;
}

int rr_load_frames(struct rr_state *state, struct saved_reader *saved)
{
    struct saved_reader r = *saved;
    struct saved_header h;
    if (!saved_take(&r, &h, sizeof h) || !header_valid(&h, state, r.size - r.at))
        return -1;
    if (load_checkpoints(state, &r, &h) < 0 || load_threads(state, &r, h.threads, h.frames) < 0 ||
        load_owners(state, &r, h.owners) < 0)
        return -1;
    state->frame_count = h.frames;
    state->frames_with_writes = h.with_writes;
    state->initial_exec = h.initial_exec;
    rr_presence_init(state);
    return thread_presence_load(state->presence, &r) && saved_reader_done(&r) ? 0 : -1;
}
