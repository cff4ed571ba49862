/* The one scan of the events, mmaps and tasks streams. */
#include <string.h>

#include "rr.h"
#include "stream.h"
#include "trace.h"
#include "tracefs_limits.h"

void rr_rebuild_thread_lists(struct rr_state *state)
{
    GHashTable *by_tid = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint position = 0; position < state->frames->len; position++) {
        int32_t tid = g_array_index(state->frames, struct rr_frame_entry, position).tid;
        gpointer slot;
        GArray *list;
        if (g_hash_table_lookup_extended(by_tid, GINT_TO_POINTER(tid), NULL, &slot)) {
            list = g_ptr_array_index(state->thread_frames, GPOINTER_TO_UINT(slot));
        } else {
            g_hash_table_insert(by_tid, GINT_TO_POINTER(tid), GUINT_TO_POINTER(state->tids->len));
            g_array_append_val(state->tids, tid);
            list = g_array_new(FALSE, FALSE, sizeof(uint32_t));
            g_ptr_array_add(state->thread_frames, list);
        }
        g_array_append_val(list, position);
    }
    g_hash_table_destroy(by_tid);
}

static uint64_t frame_stored_bytes(struct rr_frame *f)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < f->mem_writes.count; i++) {
        struct rr_mem_write w;
        if (rr_mem_write_at(f, i, &w) < 0)
            break;
        total += rr_mem_write_stored(&w);
    }
    return total;
}

void rr_index_frames(struct rr_state *state)
{
    uint64_t offset = 0, data_offset = 0;
    while (state->events) {
        struct rr_frame f;
        memset(&f, 0, sizeof f);
        f.time = state->frames->len + 1;
        uint64_t end;
        int rc = capnp_read_packed(state->events, offset, &f.msg, &end);
        if (rc > 0) {
            rr_frame_release(&f);
            break;
        }
        const char *why = f.msg.error;
        if (rc < 0 || rr_frame_decode(&f, &why) < 0) {
            RR_INDEX_ERROR(state, "events", offset, "frame %" G_GUINT64_FORMAT ": %s; later frames are not shown",
                        f.time, why ? why : "bad frame");
            rr_frame_release(&f);
            break;
        }
        if (state->frames->len >= LIMIT_RR_FRAMES) {
            RR_INDEX_ERROR(state, "events", offset, "more than %u frames; the rest are not shown", LIMIT_RR_FRAMES);
            rr_frame_release(&f);
            break;
        }
        struct rr_frame_entry e = { .offset = offset, .data_offset = data_offset, .tid = f.tid,
                                    .segments = f.msg.segment_count };
        uint32_t position = state->frames->len;
        g_array_append_val(state->frames, e);
        if (f.mem_writes.count && position < LIMIT_RR_MEMORY_FRAMES)
            g_array_append_val(state->frames_with_writes, position);
        data_offset += frame_stored_bytes(&f);
        rr_frame_release(&f);
        offset = end;
    }
    rr_rebuild_thread_lists(state);
    uint64_t data_size = state->data ? stream_size(state->data) : 0;
    if (data_offset > data_size)
        RR_INDEX_ERROR(state, "data", data_size, "memory writes need %" G_GUINT64_FORMAT " bytes but the stream has %"
                    G_GUINT64_FORMAT ": later writes are unreadable", data_offset, data_size);
}

static char *copy_text(const struct capnp_struct *s, uint16_t index)
{
    const uint8_t *data;
    size_t size;
    if (capnp_get_data(s, index, &data, &size) < 0 || !data)
        return g_strdup("");
    /* Text/Data with a NUL terminator: keep the part before it. */
    const uint8_t *nul = memchr(data ? data : (const uint8_t *)"", 0, size);
    return g_strndup((const char *)data, nul ? (size_t)(nul - data) : size);
}

static void decode_mmap(const struct capnp_struct *s, struct rr_mmap *m)
{
    m->frame_time = (int64_t)capnp_u64(s, 0);
    m->start = capnp_u64(s, 8);
    m->end = capnp_u64(s, 16);
    m->device = capnp_u64(s, 24);
    m->inode = capnp_u64(s, 32);
    m->prot = (int32_t)capnp_u32(s, 40);
    m->flags = (int32_t)capnp_u32(s, 44);
    m->file_offset = (int64_t)capnp_u64(s, 48);
    m->stat_mode = capnp_u32(s, 56);
    m->stat_uid = capnp_u32(s, 60);
    m->stat_gid = capnp_u32(s, 64);
    m->source = capnp_u16(s, 68);
    m->stat_size = (int64_t)capnp_u64(s, 72);
    m->stat_mtime = (int64_t)capnp_u64(s, 80);
    m->fsname = copy_text(s, 0);
    if (m->source == 2)
        m->backing_file = copy_text(s, 1);
}

static void decode_task(const struct capnp_struct *s, struct rr_task *t)
{
    t->frame_time = (int64_t)capnp_u64(s, 0);
    t->tid = (int32_t)capnp_u32(s, 8);
    t->kind = capnp_u16(s, 24);
    if (t->kind == RR_TASK_CLONE) {
        t->parent_tid = (int32_t)capnp_u32(s, 12);
        t->clone_flags = (int32_t)capnp_u32(s, 16);
        t->own_ns_tid = (int32_t)capnp_u32(s, 20);
    } else if (t->kind == RR_TASK_EXEC) {
        t->file_name = copy_text(s, 0);
        t->exe_base = capnp_u64(s, 16);
        t->cmdline = g_ptr_array_new_with_free_func(g_free);
        struct capnp_list args;
        if (capnp_get_list(s, 1, &args) == 0) {
            for (uint32_t i = 0; i < args.count; i++) {
                const uint8_t *data;
                size_t size;
                if (capnp_list_data(&args, i, &data, &size) < 0)
                    break;
                g_ptr_array_add(t->cmdline, data ? g_strndup((const char *)data, size) : g_strdup(""));
            }
        }
    } else if (t->kind == RR_TASK_EXIT) {
        t->exit_status = (int32_t)capnp_u32(s, 12);
    }
}

typedef int (*record_fn)(struct rr_state *state, const struct capnp_struct *root, uint64_t offset);

static int add_mmap(struct rr_state *state, const struct capnp_struct *root, uint64_t offset)
{
    (void)offset;
    struct rr_mmap m;
    memset(&m, 0, sizeof m);
    decode_mmap(root, &m);
    g_array_append_val(state->mmaps, m);
    return 0;
}

static int add_task(struct rr_state *state, const struct capnp_struct *root, uint64_t offset)
{
    struct rr_task t;
    memset(&t, 0, sizeof t);
    decode_task(root, &t);
    if (t.kind > RR_TASK_DETACH) {
        RR_INDEX_ERROR(state, "tasks", offset, "unknown task event kind %u", t.kind);
        return -1;
    }
    if (state->tasks->len && g_array_index(state->tasks, struct rr_task, state->tasks->len - 1).frame_time > t.frame_time) {
        RR_INDEX_ERROR(state, "tasks", offset, "task event times go backwards");
        g_free(t.file_name);
        if (t.cmdline)
            g_ptr_array_unref(t.cmdline);
        return -1;
    }
    g_array_append_val(state->tasks, t);
    return 0;
}

static void scan_records(struct rr_state *state, struct stream *stream, const char *name, record_fn add)
{
    uint64_t offset = 0;
    unsigned count = 0;
    while (stream) {
        struct capnp_message msg;
        struct capnp_struct root;
        uint64_t end;
        int rc = capnp_read_packed(stream, offset, &msg, &end);
        if (rc > 0)
            break;
        if (rc < 0 || capnp_root(&msg, &root) < 0) {
            RR_INDEX_ERROR(state, name, offset, "%s; later records are not shown", msg.error ? msg.error : "bad record");
            capnp_message_clear(&msg);
            break;
        }
        if (++count > LIMIT_RR_SIDE_RECORDS) {
            RR_INDEX_ERROR(state, name, offset, "more than %u records", LIMIT_RR_SIDE_RECORDS);
            capnp_message_clear(&msg);
            break;
        }
        rc = add(state, &root, offset);
        capnp_message_clear(&msg);
        if (rc < 0)
            break;
        offset = end;
    }
}

void rr_index_side_streams(struct rr_state *state)
{
    scan_records(state, state->mmaps_stream, "mmaps", add_mmap);
    scan_records(state, state->tasks_stream, "tasks", add_task);
    /* rr dump -p attaches mmaps in order while their time is the frame's. */
    guint next = 0;
    for (uint64_t time = 1; time <= state->frames->len && next < state->mmaps->len; time++)
        while (next < state->mmaps->len &&
               g_array_index(state->mmaps, struct rr_mmap, next).frame_time == (int64_t)time)
            g_array_index(state->mmaps, struct rr_mmap, next++).attached = 1;
    state->mmaps_attached = next;
}
