/* The persistent index of an XRay log: segments, runs, the merge's
 * checkpoints, the calls, the stack trie and the event lists, so that a
 * remount skips the index pass.  What derives from them (thread links,
 * per-function stats, the trie's hash, llvm's thread order) is rebuilt on
 * load, and every saved number is checked like trace data. */
#include <string.h>
#include <sys/stat.h>
#include "saved_bytes.h"
#include "tracefs_limits.h"
#include "xray_format.h"

/* Which binary the names (and the index pass's errors about it) came from:
 * a saved index applies only to the same one. */
static char *binary_identity(const struct xray_state *state)
{
    struct stat st;
    if (!state->binary_path || stat(state->binary_path, &st) != 0)
        return g_strdup(state->binary_path ? state->binary_path : "");
    return g_strdup_printf("%s:%lld:%lld:%lld", state->binary_path, (long long)st.st_size,
                           (long long)st.st_mtime, (long long)st.st_ino);
}

int xray_save(struct trace *trace, struct saved_writer *out)
{
    const struct xray_state *state = trace->format_state;
    if (!state)
        return -1;
    GArray *const *arrays[] = XRAY_STATE_ARRAYS(state);
    uint64_t bytes = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(arrays); i++)
        bytes += (uint64_t)(*arrays[i])->len * g_array_get_element_size(*arrays[i]);
    if (bytes > LIMIT_XRAY_SAVED_BYTES)
        return -1;
    saved_put(out, &state->header, sizeof state->header);
    char *binary = binary_identity(state);
    saved_put_string(out, binary);
    g_free(binary);
    saved_put_u64(out, state->unmatched_exits);
    saved_put_u64(out, state->records);
    saved_put_u64(out, state->first_tsc);
    saved_put_u64(out, state->last_tsc);
    saved_put_u64(out, state->calls);
    saved_put_u64(out, state->checkpoint_words);
    for (size_t i = 0; i < G_N_ELEMENTS(arrays); i++)
        saved_put_array(out, *arrays[i]);
    return 0;
}

/* A position of a run of `thread` whose start holds `start_left` records. */
static gboolean position_valid(const struct xray_state *state, const struct xray_position *p, uint32_t thread,
                               uint32_t start_left)
{
    if (p->segment >= state->segments->len || p->left > start_left)
        return FALSE;
    const struct xray_segment *s = &g_array_index(state->segments, struct xray_segment, p->segment);
    return s->thread == thread && p->offset >= s->offset && p->offset <= s->end;
}

static gboolean segments_valid(const struct xray_state *state, uint64_t file_size)
{
    guint n = state->segments->len;
    for (guint i = 0; i < n; i++) {
        const struct xray_segment *s = &g_array_index(state->segments, struct xray_segment, i);
        if (s->offset > s->end || s->end > file_size || s->thread >= state->threads->len)
            return FALSE;
        if (s->next != UINT32_MAX &&
            (s->next <= i || s->next >= n || g_array_index(state->segments, struct xray_segment, s->next).thread != s->thread))
            return FALSE;   /* chains go forward: no cycles */
    }
    return TRUE;
}

/* Threads own contiguous runs in order; the runs' records add up. */
static gboolean runs_valid(const struct xray_state *state)
{
    uint64_t next_run = 0, total = 0, positions = 0;
    for (guint t = 0; t < state->threads->len; t++) {
        const struct xray_thread *thread = &g_array_index(state->threads, struct xray_thread, t);
        if (thread->first_run != next_run || (uint64_t)thread->first_run + thread->run_count > state->runs->len ||
            thread->spacing < LIMIT_XRAY_THREAD_CHECKPOINT_RECORDS || thread->first_checkpoint != positions)
            return FALSE;
        next_run += thread->run_count;
        uint64_t records = 0;
        for (uint32_t c = 0; c < thread->run_count; c++) {
            const struct xray_run *run = &g_array_index(state->runs, struct xray_run, thread->first_run + c);
            if (run->thread != t || !position_valid(state, &run->start, t, run->start.left))
                return FALSE;
            records += run->start.left;
        }
        if (records != thread->records)
            return FALSE;
        total += records;
        uint64_t count = records ? (records - 1) / thread->spacing + 1 : 0;
        positions += count * thread->run_count;
        if (positions > state->thread_checkpoints->len)
            return FALSE;
        for (uint64_t k = 0; k < count * thread->run_count; k++) {
            const struct xray_run *run = &g_array_index(state->runs, struct xray_run, thread->first_run + k % thread->run_count);
            if (!position_valid(state, &g_array_index(state->thread_checkpoints, struct xray_position, thread->first_checkpoint + k),
                                t, run->start.left))
                return FALSE;
        }
    }
    return next_run == state->runs->len && total == state->records && positions == state->thread_checkpoints->len &&
           state->runs->len <= LIMIT_XRAY_RUNS;
}

static gboolean checkpoints_valid(const struct xray_state *state)
{
    uint32_t runs = state->runs->len, threads = state->threads->len;
    uint64_t words = (uint64_t)runs * XRAY_POSITION_WORDS + 2 * (uint64_t)threads;
    uint64_t count = state->checkpoint_ordinals->len;
    if (state->checkpoint_words != words || (uint64_t)state->checkpoints->len != count * words ||
        (state->records != 0) != (count != 0))
        return FALSE;
    for (uint64_t k = 0; k < count; k++) {
        uint64_t ordinal = g_array_index(state->checkpoint_ordinals, guint64, k);
        if (ordinal >= state->records || (k == 0 && ordinal != 0) ||
            (k > 0 && ordinal <= g_array_index(state->checkpoint_ordinals, guint64, k - 1)))
            return FALSE;
        const uint32_t *w = &g_array_index(state->checkpoints, uint32_t, k * words);
        for (uint32_t c = 0; c < runs; c++) {
            struct xray_position p;
            memcpy(&p, w + c * XRAY_POSITION_WORDS, sizeof p);
            const struct xray_run *run = &g_array_index(state->runs, struct xray_run, c);
            if (!position_valid(state, &p, run->thread, run->start.left))
                return FALSE;
        }
        for (uint32_t t = 0; t < threads; t++) {
            uint32_t node = w[words - 2 * threads + t], top = w[words - threads + t];
            if ((node != UINT32_MAX && node >= state->stack_nodes->len) ||
                (top != UINT32_MAX && top >= state->long_calls->len))
                return FALSE;
        }
    }
    return TRUE;
}

static gboolean events_valid(const struct xray_state *state, const GArray *events, uint64_t file_size)
{
    for (guint i = 0; i < events->len; i++) {
        uint64_t offset = g_array_index(events, guint64, i);
        uint8_t r[16];
        if (offset >= file_size || stream_read_exact(state->stream, offset, r, 16) != 0)
            return FALSE;
        int32_t size = (int32_t)load_le32(r + 1);
        if (size < 0 || (uint64_t)size > file_size - offset - 16)
            return FALSE;
    }
    return TRUE;
}

static gboolean calls_valid(const struct xray_state *state)
{
    for (guint i = 0; i < state->long_calls->len; i++) {
        uint32_t parent = g_array_index(state->long_calls, struct xray_long_call, i).parent;
        if (parent != UINT32_MAX && parent >= i)   /* parents come first: no cycles */
            return FALSE;
    }
    for (guint i = 0; i < state->stack_nodes->len; i++) {
        uint32_t parent = g_array_index(state->stack_nodes, struct xray_stack_node, i).parent;
        if (parent != UINT32_MAX && parent >= i)
            return FALSE;
    }
    return TRUE;
}

static gboolean functions_valid(const struct xray_state *state)
{
    for (guint i = 0; i < state->functions->len; i++) {
        const struct xray_function_stats *s = &g_array_index(state->functions, struct xray_function_stats, i);
        if (i > 0 && s->func_id <= g_array_index(state->functions, struct xray_function_stats, i - 1).func_id)
            return FALSE;
        if (s->first_interval == UINT64_MAX)
            continue;
        if (s->first_interval > state->function_intervals->len ||
            s->interval_count > state->function_intervals->len - s->first_interval)
            return FALSE;
    }
    for (guint i = 0; i < state->function_intervals->len; i++)
        if (g_array_index(state->function_intervals, uint32_t, i) >= state->checkpoint_ordinals->len)
            return FALSE;
    return TRUE;
}

static gboolean same_binary(struct saved_reader *r, const struct xray_state *state)
{
    char *saved = saved_get_string(r, 1u << 16);
    char *binary = binary_identity(state);
    gboolean same = saved && strcmp(saved, binary) == 0;
    g_free(binary);
    g_free(saved);
    return same;
}

int xray_load(struct trace *trace, const uint8_t *data, size_t size)
{
    struct xray_state *state = xray_state_new(trace);
    if (!state)
        return -1;
    struct saved_reader r;
    saved_reader_init_mapped(&r, data, size);
    struct xray_header header;
    if (!saved_take(&r, &header, sizeof header) ||
        memcmp(&header, &state->header, sizeof header) != 0 || !same_binary(&r, state))
        return -1;
    state->unmatched_exits = saved_get_u64(&r);
    state->records = saved_get_below(&r, LIMIT_XRAY_RECORDS + 1);
    state->first_tsc = saved_get_u64(&r);
    state->last_tsc = saved_get_u64(&r);
    state->calls = saved_get_u64(&r);
    state->checkpoint_words = (uint32_t)saved_get_below(&r, UINT32_MAX);
    uint64_t file_size = stream_size(state->stream);
    uint64_t events_max = file_size / 16 + 1;
    GArray **arrays[] = XRAY_STATE_ARRAYS(state);
    const uint64_t max_counts[] = {
        LIMIT_XRAY_THREADS, file_size / 8 + 1, LIMIT_XRAY_RUNS, state->records + 1, file_size, file_size,
        state->records, state->records, file_size, state->records, events_max, events_max };
    G_STATIC_ASSERT(G_N_ELEMENTS(max_counts) == G_N_ELEMENTS(arrays));
    for (size_t i = 0; i < G_N_ELEMENTS(arrays); i++)
        if (!saved_get_array(&r, *arrays[i], max_counts[i]))
            return -1;
    if (!saved_reader_done(&r))
        return -1;
    if (!segments_valid(state, file_size) || !runs_valid(state) || !checkpoints_valid(state) ||
        !calls_valid(state) || !functions_valid(state) || !events_valid(state, state->custom_events, file_size) ||
        !events_valid(state, state->typed_events, file_size))
        return -1;
    xray_rank_threads(state);
    for (guint i = 0; i < state->stack_nodes->len; i++)   /* the trie's hash, from its nodes */
        xray_trie_index(state, i);
    return 0;
}
