/* The one scan of the events, mmaps and tasks streams. */
#include <string.h>

#include "rr.h"
#include "stream.h"
#include "trace.h"
#include "tracefs_limits.h"

static gint compare_map_times(gconstpointer a, gconstpointer b, gpointer data)
{
    const GArray *mmaps = data;
    guint i = *(const guint *)a, j = *(const guint *)b;
    int64_t ti = g_array_index(mmaps, struct rr_mmap, i).frame_time;
    int64_t tj = g_array_index(mmaps, struct rr_mmap, j).frame_time;
    if (ti != tj)
        return ti < tj ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* Indices of the mmaps that name a frame, by frame time. */
static GArray *mmaps_by_time(const struct rr_state *state)
{
    GArray *order = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint i = 0; i < state->mmaps->len; i++)
        if (g_array_index(state->mmaps, struct rr_mmap, i).frame_time >= 1)
            g_array_append_val(order, i);
    g_array_sort_with_data(order, compare_map_times, state->mmaps);
    return order;
}

/* A checkpoint's writes_mask has one bit per frame of its block. */
G_STATIC_ASSERT(LIMIT_RR_FRAME_CHECKPOINT == 64);

/* Whether one more checkpoint fits the table budget, which the mmaps and
 * tasks records, the checkpoints and the threads share: a trace of
 * identical frames compresses 1,000x, and a checkpoint per 64 frames would
 * then outgrow the file. */
static gboolean checkpoint_fits(const struct rr_state *state)
{
    uint64_t bytes = state->side_bytes + (state->checkpoints->len + 1ull) * sizeof(struct rr_checkpoint) +
                     state->tids->len * (sizeof(int32_t) + sizeof(struct rr_thread_span) + 32ull);
    return bytes <= limit_table_budget(state->compressed_bytes);
}

/* The thread and syscall of each of the last LIMIT_RR_SYSCALL_PAIR_FRAMES
 * frames: enough to find the exits the common events join to their
 * entering frame (rr_events.c), which the checkpoints count. */
struct recent_frame {
    int32_t tid;
    int32_t number;
    uint16_t arch;
    gboolean entering;
};

/* Whether frame `position` is an exit joined to its thread's previous
 * frame, as rr_events.c's find_exit joins them; *enter is that frame. */
static gboolean joined_exit(const struct recent_frame *recent, uint64_t position, const struct rr_frame *f,
                            uint64_t *enter)
{
    for (uint64_t d = 1; d <= LIMIT_RR_SYSCALL_PAIR_FRAMES && d <= position; d++) {
        const struct recent_frame *r = &recent[(position - d) % LIMIT_RR_SYSCALL_PAIR_FRAMES];
        if (r->tid != f->tid)
            continue;
        *enter = position - d;
        return r->entering && rr_frame_exits_syscall_of(f, r->tid, r->number, r->arch);
    }
    return FALSE;
}

void rr_index_frames(struct rr_state *state)
{
    struct recent_frame recent[LIMIT_RR_SYSCALL_PAIR_FRAMES];
    uint64_t joined = 0;
    struct rr_frame_pos pos = { 0, 0, 0 };
    GHashTable *by_tid = g_hash_table_new(g_direct_hash, g_direct_equal);
    GArray *maps = mmaps_by_time(state);
    guint next_map = 0;
    /* Each frame's reader takes back the chunk the last one pinned,
     * instead of a cache lookup and a release per frame. */
    stream_hold_begin();
    while (state->events) {
        struct rr_frame f;
        memset(&f, 0, sizeof f);
        f.time = pos.index + 1;
        uint64_t end;
        int rc = capnp_read_packed(state->events, pos.offset, &f.msg, &end);
        if (rc > 0) {
            rr_frame_release(&f);
            break;
        }
        const char *why = f.msg.error;
        if (rc < 0 || rr_frame_decode(&f, &why) < 0) {
            RR_INDEX_ERROR(state, "events", pos.offset, "frame %" G_GUINT64_FORMAT ": %s; later frames are not shown",
                           f.time, why ? why : "bad frame");
            rr_frame_release(&f);
            break;
        }
        if (state->frame_count >= LIMIT_RR_FRAMES) {
            RR_INDEX_ERROR(state, "events", pos.offset, "more than %u frames; the rest are not shown", LIMIT_RR_FRAMES);
            rr_frame_release(&f);
            break;
        }
        uint64_t position = pos.index;
        if (position % LIMIT_RR_FRAME_CHECKPOINT == 0 && !checkpoint_fits(state)) {
            RR_INDEX_ERROR(state, "events", pos.offset, "frame %" G_GUINT64_FORMAT ": the index's tables reach their "
                           "budget of %" G_GUINT64_FORMAT " bytes (%u MiB + 1/%u of the trace's size); later frames "
                           "are not shown", f.time, (uint64_t)limit_table_budget(state->compressed_bytes),
                           LIMIT_TABLE_FLOOR_BYTES >> 20, LIMIT_TABLE_FILE_DIVISOR);
            rr_frame_release(&f);
            break;
        }
        if (position % LIMIT_RR_FRAME_CHECKPOINT == 0) {
            struct rr_checkpoint c = { .offset = pos.offset, .data_offset = pos.data_offset,
                                       .writes_before = state->frames_with_writes, .joined_before = joined };
            g_array_append_val(state->checkpoints, c);
        }
        uint64_t enter;
        if (joined_exit(recent, position, &f, &enter)) {
            if (enter < position - position % LIMIT_RR_FRAME_CHECKPOINT)
                g_array_index(state->checkpoints, struct rr_checkpoint, state->checkpoints->len - 1).joined_mask |=
                    (uint64_t)1 << (position % LIMIT_RR_FRAME_CHECKPOINT);
            joined++;
        }
        recent[position % LIMIT_RR_SYSCALL_PAIR_FRAMES] =
            (struct recent_frame){ f.tid, f.sys_number, f.sys_arch, rr_frame_enters_syscall(&f) };
        if (f.mem_writes.count && position < LIMIT_RR_MEMORY_FRAMES) {
            g_array_index(state->checkpoints, struct rr_checkpoint, state->checkpoints->len - 1).writes_mask |=
                (uint64_t)1 << (position % LIMIT_RR_FRAME_CHECKPOINT);
            state->frames_with_writes++;
        }
        gpointer slot;
        if (g_hash_table_lookup_extended(by_tid, GINT_TO_POINTER(f.tid), NULL, &slot)) {
            g_array_index(state->thread_spans, struct rr_thread_span, GPOINTER_TO_UINT(slot)).last = position;
        } else if (state->tids->len <= LIMIT_RR_THREAD_DIRS) {
            /* One past the limit is kept, so the tree can say it was reached. */
            struct rr_thread_span span = { position, position };
            g_hash_table_insert(by_tid, GINT_TO_POINTER(f.tid), GUINT_TO_POINTER(state->tids->len));
            g_array_append_val(state->tids, f.tid);
            g_array_append_val(state->thread_spans, span);
        }
        for (; next_map < maps->len; next_map++) {
            struct rr_mmap *m = &g_array_index(state->mmaps, struct rr_mmap, g_array_index(maps, guint, next_map));
            if ((uint64_t)m->frame_time > position + 1)
                break;
            if ((uint64_t)m->frame_time == position + 1) {
                m->has_owner = 1;
                m->owner_tid = f.tid;
            }
        }
        if (!state->initial_exec && rr_frame_is_exec_exit(&f))
            state->initial_exec = position + 1;
        state->frame_count++;
        pos.index++;
        pos.offset = end;
        pos.data_offset += rr_frame_stored_bytes(&f, f.mem_writes.count);
        rr_frame_release(&f);
    }
    stream_hold_end();
    g_array_unref(maps);
    g_hash_table_destroy(by_tid);
    uint64_t data_size = state->data ? stream_size(state->data) : 0;
    if (pos.data_offset > data_size)
        RR_INDEX_ERROR(state, "data", data_size, "memory writes need %" G_GUINT64_FORMAT " bytes but the stream has %"
                       G_GUINT64_FORMAT ": later writes are unreadable", pos.data_offset, data_size);
}

/* A side record being kept: the bytes it takes (counted against the table
 * budget) and where a name cut short is reported. */
struct side_record {
    struct rr_state *state;
    const char *stream;
    uint64_t offset;
    uint64_t bytes;
};

/* What the allocator spends on a kept string besides its bytes. */
#define KEPT_OVERHEAD 32u

/* A name of a record (Text/Data, cut at a NUL as rr's C strings are),
 * kept whole up to LIMIT_RR_NAME_BYTES and cut with a marker past it: a
 * record can hold a name of megabytes that compresses to nothing. */
static char *copy_name(struct side_record *rec, const uint8_t *data, size_t size, const char *what)
{
    const uint8_t *nul = data ? memchr(data, 0, size) : NULL;
    size_t length = !data ? 0 : nul ? (size_t)(nul - data) : size;
    char *s;
    if (length <= LIMIT_RR_NAME_BYTES) {
        s = g_strndup(data ? (const char *)data : "", length);
    } else {
        if (rec->state->names_cut++ == 0)
            RR_INDEX_ERROR(rec->state, rec->stream, rec->offset, "%s of %zu bytes kept cut to %u bytes and \"%s\"", what,
                           length, LIMIT_RR_NAME_BYTES, LIMIT_TRUNCATED_MARKER);
        s = g_malloc(LIMIT_RR_NAME_BYTES + sizeof LIMIT_TRUNCATED_MARKER);
        memcpy(s, data, LIMIT_RR_NAME_BYTES);
        memcpy(s + LIMIT_RR_NAME_BYTES, LIMIT_TRUNCATED_MARKER, sizeof LIMIT_TRUNCATED_MARKER);
        length = LIMIT_RR_NAME_BYTES + sizeof LIMIT_TRUNCATED_MARKER - 1;
    }
    rec->bytes += length + 1 + KEPT_OVERHEAD;
    return s;
}

static char *copy_text(struct side_record *rec, const struct capnp_struct *s, uint16_t index, const char *what)
{
    const uint8_t *data;
    size_t size;
    capnp_get_data(s, index, &data, &size);   /* a null or undecodable field leaves data NULL: "" */
    return copy_name(rec, data, size, what);
}

static void decode_mmap(struct side_record *rec, const struct capnp_struct *s, struct rr_mmap *m)
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
    m->fsname = copy_text(rec, s, 0, "fsname");
    if (m->source == 2)
        m->backing_file = copy_text(rec, s, 1, "backing file name");
}

/* The command line up to LIMIT_RR_CMDLINE_BYTES (arguments and their
 * overhead); past it a last argument LIMIT_TRUNCATED_MARKER says so. */
static void decode_cmdline(struct side_record *rec, const struct capnp_struct *s, GPtrArray *cmdline)
{
    struct capnp_list args;
    if (capnp_get_list(s, 1, &args) < 0)
        return;
    uint64_t start = rec->bytes;
    for (uint32_t i = 0; i < args.count; i++) {
        const uint8_t *data;
        size_t size;
        if (capnp_list_data(&args, i, &data, &size) < 0)
            break;
        if (rec->bytes - start + MIN(size, LIMIT_RR_NAME_BYTES) + KEPT_OVERHEAD > LIMIT_RR_CMDLINE_BYTES) {
            if (rec->state->names_cut++ == 0)
                RR_INDEX_ERROR(rec->state, rec->stream, rec->offset, "command line of %u arguments kept cut after %u",
                               args.count, i);
            g_ptr_array_add(cmdline, g_strdup(LIMIT_TRUNCATED_MARKER));
            break;
        }
        g_ptr_array_add(cmdline, copy_name(rec, data, size, "command-line argument"));
        rec->bytes += sizeof(char *);
    }
}

static void decode_task(struct side_record *rec, const struct capnp_struct *s, struct rr_task *t)
{
    t->frame_time = (int64_t)capnp_u64(s, 0);
    t->tid = (int32_t)capnp_u32(s, 8);
    t->kind = capnp_u16(s, 24);
    if (t->kind == RR_TASK_CLONE) {
        t->parent_tid = (int32_t)capnp_u32(s, 12);
        t->clone_flags = (int32_t)capnp_u32(s, 16);
        t->own_ns_tid = (int32_t)capnp_u32(s, 20);
    } else if (t->kind == RR_TASK_EXEC) {
        t->file_name = copy_text(rec, s, 0, "exec file name");
        t->exe_base = capnp_u64(s, 16);
        t->cmdline = g_ptr_array_new_with_free_func(g_free);
        decode_cmdline(rec, s, t->cmdline);
    } else if (t->kind == RR_TASK_EXIT) {
        t->exit_status = (int32_t)capnp_u32(s, 12);
    }
}

void rr_task_free(struct rr_task *t)
{
    g_free(t->file_name);
    g_clear_pointer(&t->cmdline, g_ptr_array_unref);
}

/* Counts a decoded record against the table budget; FALSE (reported) when
 * it does not fit, and the caller drops it. */
static gboolean side_record_fits(struct side_record *rec, size_t record_size)
{
    struct rr_state *state = rec->state;
    uint64_t budget = limit_table_budget(state->compressed_bytes);
    if (state->side_bytes + rec->bytes + record_size + KEPT_OVERHEAD <= budget) {
        state->side_bytes += rec->bytes + record_size + KEPT_OVERHEAD;
        return TRUE;
    }
    RR_INDEX_ERROR(state, rec->stream, rec->offset,
                   "the mmaps and tasks records reach their budget of %" G_GUINT64_FORMAT " bytes (%u MiB + 1/%u of "
                   "the trace's size); later records are not shown", budget, LIMIT_TABLE_FLOOR_BYTES >> 20,
                   LIMIT_TABLE_FILE_DIVISOR);
    return FALSE;
}

typedef int (*record_fn)(struct rr_state *state, const struct capnp_struct *root, uint64_t offset);

static int add_mmap(struct rr_state *state, const struct capnp_struct *root, uint64_t offset)
{
    struct side_record rec = { state, "mmaps", offset, 0 };
    struct rr_mmap m;
    memset(&m, 0, sizeof m);
    decode_mmap(&rec, root, &m);
    if (!side_record_fits(&rec, sizeof m)) {
        g_free(m.fsname);
        g_free(m.backing_file);
        return -1;
    }
    g_array_append_val(state->mmaps, m);
    return 0;
}

static int add_task(struct rr_state *state, const struct capnp_struct *root, uint64_t offset)
{
    struct side_record rec = { state, "tasks", offset, 0 };
    struct rr_task t;
    memset(&t, 0, sizeof t);
    decode_task(&rec, root, &t);
    if (t.kind > RR_TASK_DETACH) {
        RR_INDEX_ERROR(state, "tasks", offset, "unknown task event kind %u", t.kind);
        return -1;
    }
    if (state->tasks->len && g_array_index(state->tasks, struct rr_task, state->tasks->len - 1).frame_time > t.frame_time) {
        RR_INDEX_ERROR(state, "tasks", offset, "task event times go backwards");
        rr_task_free(&t);
        return -1;
    }
    if (!side_record_fits(&rec, sizeof t)) {
        rr_task_free(&t);
        return -1;
    }
    g_array_append_val(state->tasks, t);
    return 0;
}

static void scan_records(struct rr_state *state, struct stream *stream, const char *name, record_fn add)
{
    uint64_t offset = 0;
    unsigned count = 0, too_big = 0;
    while (stream) {
        struct capnp_message msg;
        struct capnp_struct root;
        uint64_t end;
        /* 1: the end; 2: a record too big to keep, read past (msg empty). */
        int rc = capnp_read_packed_bounded(stream, offset, LIMIT_RR_SIDE_RECORD_BYTES / 8, &msg, &end);
        if (rc == 1)
            break;
        if (rc < 0 || (rc == 0 && capnp_root(&msg, &root) < 0)) {
            RR_INDEX_ERROR(state, name, offset, "%s; later records are not shown", msg.error ? msg.error : "bad record");
            capnp_message_clear(&msg);
            break;
        }
        if (++count > LIMIT_RR_SIDE_RECORDS) {
            RR_INDEX_ERROR(state, name, offset, "more than %u records", LIMIT_RR_SIDE_RECORDS);
            capnp_message_clear(&msg);
            break;
        }
        if (rc == 2) {
            if (too_big++ == 0)
                RR_INDEX_ERROR(state, name, offset, "record larger than %u MiB: not shown", LIMIT_RR_SIDE_RECORD_BYTES >> 20);
            offset = end;
            continue;
        }
        rc = add(state, &root, offset);
        capnp_message_clear(&msg);
        if (rc < 0)
            break;
        offset = end;
    }
    if (too_big > 1)
        RR_INDEX_ERROR(state, name, offset, "%u records larger than %u MiB in all, none shown", too_big,
                       LIMIT_RR_SIDE_RECORD_BYTES >> 20);
}

/* mmaps/tasks errors wait for the frame scan's, so /errors keeps the order
 * events, data, mmaps, tasks while the side streams are read first (the
 * frame scan gives each mmap its owner). */
void rr_index_side_streams(struct rr_state *state)
{
    trace_errors_defer(&state->side_errors);
    scan_records(state, state->mmaps_stream, "mmaps", add_mmap);
    scan_records(state, state->tasks_stream, "tasks", add_task);
    trace_errors_defer(NULL);
}

void rr_finish_side_streams(struct rr_state *state)
{
    trace_errors_replay(state->trace, &state->side_errors);
    trace_error_list_clear(&state->side_errors);
    /* rr dump -p attaches mmaps in order while their time is the frame's:
     * the mmaps up to the first whose time is before the one before it's
     * or names no frame.  One step per mmap, not per frame: this runs at
     * every mount. */
    guint next = 0;
    int64_t time = 1;
    for (; next < state->mmaps->len; next++) {
        int64_t at = g_array_index(state->mmaps, struct rr_mmap, next).frame_time;
        if (at < time || (uint64_t)at > state->frame_count)
            break;
        time = at;
    }
    state->mmaps_attached = next;
}
