/* The index pass over an XRay log: decodes every record once, in file
 * order, and keeps nothing per record: the stretches of each thread's
 * records (segments, chained per thread) and the runs in which a thread's
 * TSCs never go back, from which xray_merge.c lists the records in time order. */
#include <string.h>
#include "keyed_hash.h"
#include "sorted_search.h"
#include "tracefs_limits.h"
#include "xray_format.h"
#include "xray_idmap.h"

#define XRAY_NO_THREAD UINT32_MAX
#define FDR_WINDOW_BYTES 4096u   /* read in place at a time: records in one chunk */

/* Per thread, during the pass. */
struct scan_thread {
    uint32_t last_func;       /* the last function id (events show it) */
    uint32_t run;             /* its current run, or UINT32_MAX */
    uint32_t last_segment;    /* or UINT32_MAX */
    uint32_t pad;
    uint64_t last_tsc;
};

struct scan {
    struct xray_state *state;
    GArray *threads;          /* struct scan_thread, beside state->threads */
    uint64_t size;
    uint64_t budget;          /* bytes segments and runs may take */
    uint64_t table_budget;    /* what threads and functions may cost (limit_table_budget of the file) */
    GHashTable *thread_ids;   /* (pid << 32 | tid) -> thread index + 1 */
    struct xray_id_map function_ids;   /* the function ids seen (value 0) */
    gboolean full;            /* a limit was reached: the rest is not indexed */
};

/* Per-buffer decoder state of an FDR log. */
struct fdr_buffer {
    int32_t tid, pid;
    gboolean have_tid;
    uint32_t thread;
    uint32_t segment;         /* the open segment, or UINT32_MAX */
    uint64_t latest_tsc;
    uint16_t cpu;
};

/* Threads, functions and runs cost the tree, the views and every merge
 * a reader holds a few KiB each (LIMIT_XRAY_THREAD_BYTES and the like);
 * together they stay within the table budget of the file.  A misaligned
 * or forged log names a new thread or function in nearly every record, or
 * sends its TSC back at every record: the index stops at the first thread,
 * function or run that does not fit. */
static gboolean table_fits(struct scan *scan, uint64_t threads, uint64_t functions, uint64_t runs, uint64_t offset)
{
    uint64_t bytes = threads * LIMIT_XRAY_THREAD_BYTES + functions * LIMIT_XRAY_FUNCTION_BYTES +
                     runs * LIMIT_XRAY_RUN_BYTES;
    if (bytes <= scan->table_budget)
        return TRUE;
    trace_error(scan->state->trace, "log", offset, "%llu threads, %llu function ids and %llu runs of rising TSC "
                "reach the index's budget of %llu bytes for them (%u, %u and %u bytes each; %u MiB + 1/%u of the "
                "file's size): the records from here on are not shown", (unsigned long long)threads,
                (unsigned long long)functions, (unsigned long long)runs, (unsigned long long)scan->table_budget,
                LIMIT_XRAY_THREAD_BYTES, LIMIT_XRAY_FUNCTION_BYTES, LIMIT_XRAY_RUN_BYTES,
                LIMIT_TABLE_FLOOR_BYTES >> 20, LIMIT_TABLE_FILE_DIVISOR);
    scan->full = TRUE;
    return FALSE;
}

/* The thread of (pid, tid), made when new and within the budget;
 * XRAY_NO_THREAD (and the rest is not indexed) otherwise. */
static uint32_t scan_thread_index(struct scan *scan, int32_t pid, int32_t tid, uint64_t offset)
{
    struct xray_state *state = scan->state;
    guint64 key = (guint64)(uint32_t)pid << 32 | (uint32_t)tid;
    gpointer found = g_hash_table_lookup(scan->thread_ids, &key);   /* index + 1 */
    if (found)
        return (uint32_t)(GPOINTER_TO_SIZE(found) - 1);
    if (!table_fits(scan, (uint64_t)state->threads->len + 1, scan->function_ids.count, state->runs->len, offset))
        return XRAY_NO_THREAD;
    if (state->threads->len >= LIMIT_XRAY_THREADS) {
        trace_error(state->trace, "log", offset, "more than %u threads", LIMIT_XRAY_THREADS);
        scan->full = TRUE;
        return XRAY_NO_THREAD;
    }
    struct xray_thread fresh = { .tid = tid, .pid = pid };
    g_array_append_val(state->threads, fresh);
    struct scan_thread walk = { .run = UINT32_MAX, .last_segment = UINT32_MAX };
    g_array_append_val(scan->threads, walk);
    g_hash_table_insert(scan->thread_ids, g_memdup2(&key, sizeof key), GSIZE_TO_POINTER((gsize)state->threads->len));
    return state->threads->len - 1;
}

/* Counts a function id seen in a record; FALSE past the budget. */
static gboolean scan_function(struct scan *scan, uint32_t func_id, uint64_t offset)
{
    if (xray_id_map_get(&scan->function_ids, func_id) != XRAY_ID_NONE)
        return TRUE;
    if (!table_fits(scan, scan->state->threads->len, (uint64_t)scan->function_ids.count + 1,
                    scan->state->runs->len, offset))
        return FALSE;
    xray_id_map_set(&scan->function_ids, func_id, 0);
    return TRUE;
}

static struct scan_thread *scan_thread(struct scan *scan, uint32_t thread)
{
    return &g_array_index(scan->threads, struct scan_thread, thread);
}

static gboolean over_budget(struct scan *scan, uint64_t offset)
{
    struct xray_state *state = scan->state;
    uint64_t bytes = (uint64_t)state->segments->len * sizeof(struct xray_segment) +
                     (uint64_t)state->runs->len * sizeof(struct xray_run);
    if (bytes < scan->budget && state->runs->len < LIMIT_XRAY_RUNS)
        return FALSE;
    if (!scan->full)
        trace_error(state->trace, "log", offset, "%u thread stretches and %u runs of rising TSC reach the index's "
                    "bound (threads switch, or TSCs go back, too often): the rest of the log is not indexed", state->segments->len, state->runs->len);
    scan->full = TRUE;
    return TRUE;
}

/* Opens a segment of `thread` at offset, chained after its previous one. */
static uint32_t open_segment(struct scan *scan, uint32_t thread, uint64_t offset, uint64_t tsc, uint16_t cpu)
{
    struct xray_state *state = scan->state;
    if (over_budget(scan, offset))
        return UINT32_MAX;
    struct xray_segment segment = { .offset = offset, .end = offset, .tsc = tsc, .thread = thread,
                                    .next = UINT32_MAX, .cpu = cpu };
    g_array_append_val(state->segments, segment);
    uint32_t index = state->segments->len - 1;
    struct scan_thread *t = scan_thread(scan, thread);
    if (t->last_segment != UINT32_MAX)
        g_array_index(state->segments, struct xray_segment, t->last_segment).next = index;
    t->last_segment = index;
    return index;
}

static void close_segment(struct scan *scan, uint32_t segment, uint64_t end)
{
    if (segment != UINT32_MAX)
        g_array_index(scan->state->segments, struct xray_segment, segment).end = end;
}

/* Counts a record of `segment` whose TSC is tsc; `before` is the decoder
 * state just before it (where a new run would start). */
static gboolean add_record(struct scan *scan, const struct xray_position *before, uint64_t tsc)
{
    struct xray_state *state = scan->state;
    if (state->records >= LIMIT_XRAY_RECORDS) {
        if (!scan->full)
            trace_error(state->trace, "log", before->offset, "more than %llu records: the rest is not indexed",
                        (unsigned long long)LIMIT_XRAY_RECORDS);
        scan->full = TRUE;
        return FALSE;
    }
    uint32_t thread = g_array_index(state->segments, struct xray_segment, before->segment).thread;
    struct scan_thread *t = scan_thread(scan, thread);
    if (t->run == UINT32_MAX || tsc < t->last_tsc) {
        if (over_budget(scan, before->offset) ||
            !table_fits(scan, state->threads->len, scan->function_ids.count,
                        (uint64_t)state->runs->len + 1, before->offset))
            return FALSE;
        struct xray_run run = { .start = *before, .thread = thread };
        run.start.left = 0;
        g_array_append_val(state->runs, run);
        t->run = state->runs->len - 1;
    }
    t->last_tsc = tsc;
    g_array_index(state->runs, struct xray_run, t->run).start.left++;
    g_array_index(state->threads, struct xray_thread, thread).records++;
    state->records++;
    return TRUE;
}

static gboolean fdr_thread(struct scan *scan, struct fdr_buffer *buffer, uint64_t offset)
{
    if (buffer->thread != XRAY_NO_THREAD)
        return TRUE;
    if (!buffer->have_tid) {
        trace_error(scan->state->trace, "log", offset, "record before the buffer's NewBuffer record");
        return FALSE;
    }
    buffer->thread = scan_thread_index(scan, buffer->pid, buffer->tid, offset);
    if (buffer->thread == XRAY_NO_THREAD)
        return FALSE;
    buffer->segment = open_segment(scan, buffer->thread, offset, buffer->latest_tsc, buffer->cpu);
    if (buffer->segment == UINT32_MAX) {
        buffer->thread = XRAY_NO_THREAD;
        return FALSE;
    }
    return TRUE;
}

/* Returns the bytes consumed, 0 at the end of the buffer, -1 on damage. */
static int64_t fdr_metadata(struct scan *scan, struct fdr_buffer *buffer, const uint8_t *r,
                            uint64_t pos, uint64_t end)
{
    struct xray_state *state = scan->state;
    struct trace *trace = state->trace;
    uint16_t version = state->header.version;
    unsigned kind = r[0] >> 1;
    switch (kind) {
    case 0: /* NewBuffer */
    case 9: /* Pid */
        close_segment(scan, buffer->segment, pos);
        buffer->segment = UINT32_MAX;
        buffer->thread = XRAY_NO_THREAD;
        if (kind == 9) {
            buffer->pid = (int32_t)load_le32(r + 1);
            return 16;
        }
        buffer->tid = (int32_t)load_le32(r + 1);
        buffer->have_tid = TRUE;
        return 16;
    case 1: /* EndOfBuffer */
        if (version >= 2) {
            trace_error(trace, "log", pos, "EndOfBuffer record in a version %u log", version);
            return -1;
        }
        return 0;
    case 2: /* NewCPUId */
        buffer->cpu = load_le16(r + 1);
        buffer->latest_tsc = load_le64(r + 3);
        return 16;
    case 3: /* TSCWrap */
        buffer->latest_tsc = load_le64(r + 1);
        return 16;
    case 4: /* WallTimeMarker */
    case 6: /* CallArgument not after an EnterArg: llvm drops it too */
    case 7: /* BufferExtents: only at buffer starts; harmless here */
        return 16;
    case 5: /* CustomEventMarker */
    case 8: { /* TypedEventMarker */
        int32_t size = (int32_t)load_le32(r + 1);
        if (kind == 8 && version < 5) {
            trace_error(trace, "log", pos, "TypedEventMarker in a version %u log", version);
            return -1;
        }
        if (size < 0 || (uint64_t)size > end - pos - 16) {
            trace_error(trace, "log", pos, "%s event of %d bytes runs past its buffer (ends at %llu)",
                        kind == 5 ? "custom" : "typed", size, (unsigned long long)end);
            return -1;
        }
        if (!fdr_thread(scan, buffer, pos))
            return -1;
        struct xray_position before = { .offset = pos, .tsc = buffer->latest_tsc, .segment = buffer->segment,
                                        .last_func = scan_thread(scan, buffer->thread)->last_func, .cpu = buffer->cpu };
        uint64_t tsc;
        if (version >= 5) {
            tsc = buffer->latest_tsc + (uint64_t)(int64_t)(int32_t)load_le32(r + 5);
            buffer->latest_tsc = tsc;
        } else {
            /* v2-v4 events carry an absolute TSC and their own CPU (none before v4: llvm shows 0) */
            tsc = load_le64(r + 5);
        }
        if (!add_record(scan, &before, tsc))
            return -1;
        return 16 + (int64_t)size;
    }
    default:
        trace_error(trace, "log", pos, "unknown metadata record kind %u", kind);
        return -1;
    }
}

static int64_t fdr_function(struct scan *scan, struct fdr_buffer *buffer, const uint8_t *r, uint64_t pos)
{
    uint32_t word = load_le32(r);
    unsigned kind = (word >> 1) & 7;
    if (kind > 3) {
        trace_error(scan->state->trace, "log", pos, "function record of unknown kind %u", kind);
        return -1;
    }
    if (!fdr_thread(scan, buffer, pos) || !scan_function(scan, word >> 4, pos))
        return -1;
    struct scan_thread *t = scan_thread(scan, buffer->thread);
    struct xray_position before = { .offset = pos, .tsc = buffer->latest_tsc, .segment = buffer->segment,
                                    .last_func = t->last_func, .cpu = buffer->cpu };
    uint64_t tsc = buffer->latest_tsc + load_le32(r + 4);
    buffer->latest_tsc = tsc;
    t->last_func = word >> 4;
    if (!add_record(scan, &before, tsc))
        return -1;
    return 8;
}

/* The next record at pos, copied when it crosses a chunk; NULL (reported)
 * when it is cut off or unreadable. */
static const uint8_t *fdr_record_copy(struct scan *scan, struct stream_cursor *cursor, uint64_t pos, uint64_t end,
                                      uint8_t copy[16])
{
    struct xray_state *state = scan->state;
    stream_cursor_seek(cursor, pos);
    if (stream_cursor_read(cursor, copy, 1) != 0)
        return NULL;
    size_t need = (copy[0] & 1) ? 16 : 8;
    if (need > end - pos) {
        trace_error(state->trace, "log", pos, "%s record cut off by the end of its buffer at %llu",
                    need == 16 ? "metadata" : "function", (unsigned long long)end);
        return NULL;
    }
    if (stream_cursor_read(cursor, copy + 1, need - 1) != 0) {
        trace_error(state->trace, "log", pos, "cannot read record");
        return NULL;
    }
    return copy;
}

static int64_t fdr_record(struct scan *scan, struct fdr_buffer *buffer, const uint8_t *r, uint64_t pos, uint64_t end)
{
    return (r[0] & 1) ? fdr_metadata(scan, buffer, r, pos, end) : fdr_function(scan, buffer, r, pos);
}

/* Decodes the records that lie whole in the FDR_WINDOW_BYTES at pos, in
 * place (one chunk lookup for many records); returns where it stopped,
 * *done set when a record ended the buffer. */
static uint64_t fdr_window(struct scan *scan, struct fdr_buffer *buffer, struct stream_cursor *cursor, uint64_t pos,
                           uint64_t end, gboolean *done)
{
    size_t len = (size_t)MIN(end - pos, (uint64_t)FDR_WINDOW_BYTES);
    stream_cursor_seek(cursor, pos);
    const uint8_t *window = len >= 16 ? stream_cursor_peek(cursor, len) : NULL;
    if (!window)
        return pos;
    uint64_t at = pos;
    /* 16 bytes left hold any record's fixed part; the rest go one by one. */
    while (at < end && at - pos <= len - 16) {
        int64_t used = fdr_record(scan, buffer, window + (at - pos), at, end);
        if (used <= 0) {
            *done = TRUE;
            return at;
        }
        at += (uint64_t)used;
    }
    return at;
}

/* Decodes the records in [start, end). */
static void fdr_buffer(struct scan *scan, uint64_t start, uint64_t end)
{
    struct fdr_buffer buffer = { .thread = XRAY_NO_THREAD, .segment = UINT32_MAX };
    struct stream_cursor cursor;
    stream_cursor_init(&cursor, scan->state->stream, start);
    uint64_t pos = start;
    gboolean done = FALSE;
    while (pos < end && !done) {
        uint64_t after = fdr_window(scan, &buffer, &cursor, pos, end, &done);
        if (after != pos || done) {
            pos = after;
            continue;
        }
        uint8_t copy[16];   /* a record across chunks, or in a buffer's last bytes */
        const uint8_t *r = fdr_record_copy(scan, &cursor, pos, end, copy);
        int64_t used = r ? fdr_record(scan, &buffer, r, pos, end) : 0;
        if (used <= 0)
            break;
        pos += (uint64_t)used;
    }
    close_segment(scan, buffer.segment, pos);
    stream_cursor_finish(&cursor);
}

static void scan_fdr_extents(struct scan *scan)
{
    struct xray_state *state = scan->state;
    uint64_t pos = 32;
    while (pos < scan->size && !scan->full) {
        uint8_t r[16];
        if (scan->size - pos < 16) {
            trace_error(state->trace, "log", pos, "%llu trailing bytes: BufferExtents record cut off",
                        (unsigned long long)(scan->size - pos));
            return;
        }
        if (stream_read_exact(state->stream, pos, r, 16) != 0) {
            trace_error(state->trace, "log", pos, "cannot read BufferExtents record");
            return;
        }
        if (r[0] != 0x0f) {
            trace_error(state->trace, "log", pos, "expected a BufferExtents record, found byte 0x%02x", r[0]);
            return;
        }
        uint64_t extent = load_le64(r + 1);
        uint64_t start = pos + 16;
        uint64_t end = start + extent;
        if (extent > scan->size - start) {
            trace_error(state->trace, "log", pos, "buffer extent %llu runs past the end of the log",
                        (unsigned long long)extent);
            end = scan->size;
        }
        fdr_buffer(scan, start, end);
        pos = end;
    }
}

static void scan_fdr_v1(struct scan *scan)
{
    struct xray_state *state = scan->state;
    uint64_t buffer_size = state->header.buffer_size;
    if (buffer_size < 16 || buffer_size > LIMIT_XRAY_BUFFER_BYTES) {
        trace_error(state->trace, "header", 16, "buffer size %llu is not usable: reading one buffer to EOF",
                    (unsigned long long)buffer_size);
        buffer_size = scan->size - 32;
    }
    for (uint64_t pos = 32; pos < scan->size && !scan->full; pos += buffer_size) {
        uint64_t end = buffer_size > scan->size - pos ? scan->size : pos + buffer_size;
        fdr_buffer(scan, pos, end);
    }
}

static void scan_basic(struct scan *scan)
{
    struct xray_state *state = scan->state;
    uint64_t count = (scan->size - 32) / 32;
    if ((scan->size - 32) % 32)
        trace_error(state->trace, "log", 32 + count * 32, "%llu trailing bytes: last record cut off",
                    (unsigned long long)((scan->size - 32) % 32));
    struct stream_cursor cursor;
    stream_cursor_init(&cursor, state->stream, 32);
    uint32_t segment = UINT32_MAX;
    uint64_t end = 32;
    for (uint64_t i = 0; i < count && !scan->full; i++) {
        uint8_t r[32];
        uint64_t pos = 32 + i * 32;
        if (stream_cursor_read(&cursor, r, 32) != 0) {
            trace_error(state->trace, "log", pos, "cannot read record");
            break;
        }
        uint16_t record_type = load_le16(r);
        if (record_type == 1)
            continue;   /* argument payload: decoded with its EnterArg record */
        if (record_type != 0 || r[3] > 3) {
            trace_error(state->trace, "log", pos, "basic record of unknown type %u/%u", record_type, r[3]);
            continue;
        }
        int32_t tid = (int32_t)load_le32(r + 16);
        int32_t pid = state->header.version >= 3 ? (int32_t)load_le32(r + 20) : 0;
        uint32_t thread = scan_thread_index(scan, pid, tid, pos);
        if (thread == XRAY_NO_THREAD || !scan_function(scan, load_le32(r + 4), pos))
            break;
        if (segment == UINT32_MAX || g_array_index(state->segments, struct xray_segment, segment).thread != thread) {
            close_segment(scan, segment, pos);
            segment = open_segment(scan, thread, pos, 0, 0);
            if (segment == UINT32_MAX)
                break;
        }
        struct xray_position before = { .offset = pos, .segment = segment };
        if (!add_record(scan, &before, load_le64(r + 8)))
            break;
        end = pos + 32;
    }
    close_segment(scan, segment, end);
    stream_cursor_finish(&cursor);
}

/* ---- the order llvm-xray lists FDR threads in ----
 * llvm's BlockIndexer keeps threads in a DenseMap keyed by (pid, tid) and
 * walks it in bucket order before its stable sort by TSC, so records with
 * equal TSC in different threads come out in that order.  This replays the
 * map: its hash, quadratic probing and growth. */
static uint32_t llvm_combine_hash(uint32_t a, uint32_t b)
{
    uint64_t key = (uint64_t)a << 32 | (uint64_t)b;
    key += ~(key << 32);
    key ^= (key >> 22);
    key += ~(key << 13);
    key ^= (key >> 8);
    key += (key << 3);
    key ^= (key >> 15);
    key += ~(key << 27);
    key ^= (key >> 31);
    return (uint32_t)key;
}

static uint32_t llvm_thread_hash(const struct xray_thread *t)
{
    uint64_t pid = (uint64_t)(int64_t)t->pid;
    return llvm_combine_hash((uint32_t)(pid * 37ull), (uint32_t)t->tid * 37u);
}

static void bucket_insert(uint32_t *buckets, uint32_t count, uint32_t hash, uint32_t thread)
{
    uint32_t at = hash & (count - 1);
    for (uint32_t probe = 1; buckets[at] != UINT32_MAX; probe++)
        at = (at + probe) & (count - 1);
    buckets[at] = thread;
}

/* Fills rank[thread] with the thread's position in llvm's iteration order. */
static void llvm_thread_order(const struct xray_state *state, uint32_t *rank)
{
    uint32_t n = state->threads->len;
    uint32_t count = 64;
    uint32_t *buckets = g_new(uint32_t, count);
    memset(buckets, 0xff, count * sizeof *buckets);
    for (uint32_t t = 0; t < n; t++) {
        if ((uint64_t)(t + 1) * 4 >= (uint64_t)count * 3) {
            uint32_t *old = buckets, old_count = count;
            count *= 2;
            buckets = g_new(uint32_t, count);
            memset(buckets, 0xff, count * sizeof *buckets);
            for (uint32_t b = 0; b < old_count; b++)
                if (old[b] != UINT32_MAX)
                    bucket_insert(buckets, count, llvm_thread_hash(&g_array_index(state->threads, struct xray_thread, old[b])), old[b]);
            g_free(old);
        }
        bucket_insert(buckets, count, llvm_thread_hash(&g_array_index(state->threads, struct xray_thread, t)), t);
    }
    uint32_t next = 0;
    for (uint32_t b = 0; b < count; b++)
        if (buckets[b] != UINT32_MAX)
            rank[buckets[b]] = next++;
    g_free(buckets);
}

/* llvm-xray lists FDR records thread by thread (threads in its map's order,
 * each thread's blocks in file order) and basic records in file order, then
 * stable-sorts them by TSC: records are ordered by (TSC, rank of the thread,
 * offset), with rank 0 for every thread of a basic log. */
void xray_rank_threads(struct xray_state *state)
{
    g_free(state->rank);
    state->rank = g_new0(uint32_t, state->threads->len ? state->threads->len : 1);
    if (state->header.type != 0)
        llvm_thread_order(state, state->rank);
}

static gint compare_run_threads(gconstpointer a, gconstpointer b)
{
    return sorted_compare_u32(&((const struct xray_run *)a)->thread, &((const struct xray_run *)b)->thread);
}

/* Groups the runs by thread, each thread's in file order (g_array_sort is
 * stable); a thread's run_count is still 0 from the scan. */
static void group_runs(struct xray_state *state)
{
    g_array_sort(state->runs, compare_run_threads);
    struct xray_thread *t = (struct xray_thread *)(void *)state->threads->data;
    for (guint i = 0; i < state->runs->len; i++)
        t[g_array_index(state->runs, struct xray_run, i).thread].run_count++;
    uint32_t next = 0;
    for (guint i = 0; i < state->threads->len; i++) {
        t[i].first_run = next;
        next += t[i].run_count;
    }
}

void xray_scan(struct xray_state *state)
{
    struct scan scan = { .state = state, .threads = g_array_new(FALSE, FALSE, sizeof(struct scan_thread)),
                         .size = stream_size(state->stream),
                         .thread_ids = g_hash_table_new_full(keyed_hash_int64, g_int64_equal, g_free, NULL) };
    scan.budget = scan.size / LIMIT_XRAY_INDEX_SHARE + LIMIT_XRAY_INDEX_FIXED_BYTES;
    scan.table_budget = limit_table_budget((unsigned long long)state->trace->st.st_size);
    xray_id_map_init(&scan.function_ids);
    if (state->header.type == 0)
        scan_basic(&scan);
    else if (state->header.version == 1)
        scan_fdr_v1(&scan);
    else
        scan_fdr_extents(&scan);
    g_array_free(scan.threads, TRUE);
    g_hash_table_destroy(scan.thread_ids);
    xray_id_map_clear(&scan.function_ids);
    group_runs(state);
    xray_rank_threads(state);
}
