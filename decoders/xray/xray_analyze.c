/* From the time-sorted records: the completed calls of every thread, the
 * per-function duration statistics (as llvm-xray account computes them) and
 * the stack trie of the Chrome export (as llvm-xray convert builds it). */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "tracefs_limits.h"
#include "xray_format.h"

struct frame {
    uint32_t func_id;
    uint64_t call;            /* index into state->calls */
};

#define CALL_OPEN UINT64_MAX

struct walker {
    struct xray_state *state;
    GArray **stacks;          /* per thread: struct frame */
    uint32_t *chrome_cursor;  /* per thread: stack trie node, UINT32_MAX at the root */
    GHashTable *trie;         /* (parent, func) -> node + 1 */
};

static uint32_t trie_node(struct walker *w, uint32_t thread, uint32_t parent, uint32_t func_id)
{
    /* llvm gives equal call paths of different threads the same stack id
     * (its "siblings"): one trie shared by all threads is the same thing. */
    (void)thread;
    uint64_t key = ((uint64_t)parent << 32) | func_id;
    gpointer found = g_hash_table_lookup(w->trie, &key);
    if (found)
        return (uint32_t)(GPOINTER_TO_SIZE(found) - 1);
    struct xray_stack_node node = { func_id, parent };
    g_array_append_val(w->state->stack_nodes, node);
    uint32_t id = w->state->stack_nodes->len - 1;
    g_hash_table_insert(w->trie, g_memdup2(&key, sizeof key), GSIZE_TO_POINTER((gsize)id + 1));
    return id;
}

/* llvm-xray convert --output-format=trace_event: an exit closes frames up
 * to the exited function or the root. */
static void chrome_step(struct walker *w, struct xray_ref *ref)
{
    uint32_t *cursor = &w->chrome_cursor[ref->thread];
    if (ref->kind == XRAY_ENTER || ref->kind == XRAY_ENTER_ARG) {
        *cursor = trie_node(w, ref->thread, *cursor, ref->func_id);
        ref->stack_node = *cursor;
    } else if (ref->kind == XRAY_EXIT || ref->kind == XRAY_TAIL_EXIT) {
        ref->stack_node = *cursor;
        const GArray *nodes = w->state->stack_nodes;
        while (*cursor != UINT32_MAX) {
            const struct xray_stack_node *node = &g_array_index(nodes, struct xray_stack_node, *cursor);
            *cursor = node->parent;
            if (node->func_id == ref->func_id)
                break;
        }
    }
}

static void call_step(struct walker *w, const struct xray_ref *ref, uint64_t index)
{
    GArray *stack = w->stacks[ref->thread];
    GArray *calls = w->state->calls;
    if (ref->kind == XRAY_ENTER || ref->kind == XRAY_ENTER_ARG) {
        if (stack->len >= LIMIT_XRAY_STACK_DEPTH) {
            w->state->unmatched_exits++;
            return;
        }
        struct xray_call call = { .start_tsc = ref->tsc, .end_tsc = CALL_OPEN, .enter_ref = index,
                                  .func_id = ref->func_id, .depth = stack->len, .thread = ref->thread };
        g_array_append_val(calls, call);
        struct frame f = { ref->func_id, calls->len - 1 };
        g_array_append_val(stack, f);
        return;
    }
    if (ref->kind != XRAY_EXIT && ref->kind != XRAY_TAIL_EXIT)
        return;
    guint depth = stack->len;
    while (depth > 0 && g_array_index(stack, struct frame, depth - 1).func_id != ref->func_id)
        depth--;
    if (depth == 0) {
        w->state->unmatched_exits++;
        return;
    }
    struct xray_call *call = &g_array_index(calls, struct xray_call, g_array_index(stack, struct frame, depth - 1).call);
    call->end_tsc = MAX(ref->tsc, call->start_tsc);
    g_array_set_size(stack, depth - 1);
}

/* Drops the calls that never completed, keeping start order. */
static void compact_calls(struct xray_state *state)
{
    GArray *calls = state->calls;
    guint kept = 0;
    for (guint i = 0; i < calls->len; i++) {
        const struct xray_call *c = &g_array_index(calls, struct xray_call, i);
        if (c->end_tsc == CALL_OPEN) {
            state->unmatched_exits++;
            continue;
        }
        struct xray_thread *t = &g_array_index(state->threads, struct xray_thread, c->thread);
        t->calls++;
        g_array_index(calls, struct xray_call, kept++) = *c;
    }
    g_array_set_size(calls, kept);
}

static gint compare_u32(gconstpointer a, gconstpointer b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void swap_u64(uint64_t *a, uint64_t *b)
{
    uint64_t t = *a;
    *a = *b;
    *b = t;
}

/* Puts the k-th smallest of v[0..n) at v[k], smaller ones before it and
 * larger ones after (std::nth_element, which llvm-xray account uses):
 * linear on average, where sorting every function's durations would be
 * the largest cost of a remount. */
static void select_nth(uint64_t *v, uint64_t n, uint64_t k)
{
    uint64_t lo = 0, hi = n - 1;
    while (hi > lo) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (v[mid] < v[lo]) swap_u64(&v[mid], &v[lo]);
        if (v[hi] < v[lo]) swap_u64(&v[hi], &v[lo]);
        if (v[hi] < v[mid]) swap_u64(&v[hi], &v[mid]);
        uint64_t pivot = v[mid];
        uint64_t i = lo, j = hi;
        while (i <= j) {          /* Hoare partition: equal keys split evenly */
            while (v[i] < pivot) i++;
            while (v[j] > pivot) j--;
            if (i <= j) {
                swap_u64(&v[i], &v[j]);
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

static void function_stats(struct xray_state *state, uint32_t func_id, uint64_t first, uint64_t count)
{
    struct xray_function_stats stats = { .func_id = func_id, .count = count, .first_call = first };
    uint64_t *durations = g_new(uint64_t, count);
    const struct xray_call *calls = (const struct xray_call *)(void *)state->calls->data;
    double sum = 0;
    for (uint64_t i = 0; i < count; i++) {
        const struct xray_call *c = &calls[g_array_index(state->calls_by_function, guint64, first + i)];
        durations[i] = c->end_tsc - c->start_tsc;
        sum += (double)durations[i];
    }
    uint64_t least = UINT64_MAX, most = 0;
    for (uint64_t i = 0; i < count; i++) {
        least = MIN(least, durations[i]);
        most = MAX(most, durations[i]);
    }
    /* llvm-xray account: nth_element at size/2, floor(size*0.9), floor(size*0.99);
     * each later rank lies in the part after the one before. */
    uint64_t k50 = count / 2, k90 = (uint64_t)floor((double)count * 0.9), k99 = (uint64_t)floor((double)count * 0.99);
    select_nth(durations, count, k50);
    select_nth(durations + k50, count - k50, k90 - k50);
    select_nth(durations + k90, count - k90, k99 - k90);
    double frequency = state->header.cycle_frequency ? (double)state->header.cycle_frequency : 1.0;
    stats.min = (double)least / frequency;
    stats.max = (double)most / frequency;
    stats.median = (double)durations[k50] / frequency;
    stats.p90 = (double)durations[k90] / frequency;
    stats.p99 = (double)durations[k99] / frequency;
    stats.sum = sum / frequency;
    g_free(durations);
    g_array_append_val(state->functions, stats);
}

/* Groups call indexes by function (counting sort: each function's calls
 * stay thread by thread, in start order) and computes each one's stats. */
static void build_function_stats(struct xray_state *state)
{
    guint64 n = state->calls->len;
    const struct xray_call *calls = (const struct xray_call *)(void *)state->calls->data;
    GHashTable *dense = g_hash_table_new(g_direct_hash, g_direct_equal);   /* func id + 1 -> slot + 1 */
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (guint64 i = 0; i < n; i++) {
        gpointer key = GSIZE_TO_POINTER((gsize)calls[i].func_id + 1);
        if (!g_hash_table_contains(dense, key)) {
            g_array_append_val(ids, calls[i].func_id);
            g_hash_table_insert(dense, key, GSIZE_TO_POINTER((gsize)ids->len));
        }
    }
    g_array_sort(ids, compare_u32);
    guint64 *start = g_new0(guint64, ids->len + 1);
    for (guint k = 0; k < ids->len; k++)
        g_hash_table_insert(dense, GSIZE_TO_POINTER((gsize)g_array_index(ids, uint32_t, k) + 1),
                            GSIZE_TO_POINTER((gsize)k + 1));
    for (guint64 i = 0; i < n; i++)
        start[GPOINTER_TO_SIZE(g_hash_table_lookup(dense, GSIZE_TO_POINTER((gsize)calls[i].func_id + 1)))]++;
    for (guint k = 0; k < ids->len; k++)
        start[k + 1] += start[k];
    g_array_set_size(state->calls_by_function, n);
    guint64 *fill = g_memdup2(start, (ids->len + 1) * sizeof *start);
    for (guint64 i = 0; i < n; i++) {
        gsize slot = GPOINTER_TO_SIZE(g_hash_table_lookup(dense, GSIZE_TO_POINTER((gsize)calls[i].func_id + 1))) - 1;
        g_array_index(state->calls_by_function, guint64, fill[slot]++) = i;
    }
    for (guint k = 0; k < ids->len; k++)
        function_stats(state, g_array_index(ids, uint32_t, k), start[k], start[k + 1] - start[k]);
    g_free(fill);
    g_free(start);
    g_array_free(ids, TRUE);
    g_hash_table_destroy(dense);
}

/* Links each record (and call) to the next one of its thread, so that a
 * thread's files never scan the other threads' records. */
static GArray *thread_links(guint64 n, uint32_t thread_count, const void *items, size_t item_size,
                            size_t thread_offset, uint64_t *first, size_t first_stride)
{
    GArray *next = g_array_sized_new(FALSE, FALSE, sizeof(uint32_t), (guint)n);
    g_array_set_size(next, (guint)n);
    uint32_t *last = g_new(uint32_t, thread_count ? thread_count : 1);
    for (uint32_t t = 0; t < thread_count; t++) {
        last[t] = UINT32_MAX;
        *(uint64_t *)(void *)((char *)first + t * first_stride) = n;
    }
    for (guint64 i = 0; i < n; i++) {
        uint32_t thread;
        memcpy(&thread, (const char *)items + i * item_size + thread_offset, sizeof thread);
        g_array_index(next, uint32_t, i) = UINT32_MAX;
        if (last[thread] == UINT32_MAX)
            *(uint64_t *)(void *)((char *)first + thread * first_stride) = i;
        else
            g_array_index(next, uint32_t, last[thread]) = (uint32_t)i;
        last[thread] = (uint32_t)i;
    }
    g_free(last);
    return next;
}

void xray_analyze(struct xray_state *state)
{
    guint thread_count = state->threads->len;
    struct walker w = { .state = state, .stacks = g_new(GArray *, thread_count ? thread_count : 1),
                        .chrome_cursor = g_new(uint32_t, thread_count ? thread_count : 1),
                        .trie = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL) };
    for (guint t = 0; t < thread_count; t++) {
        w.stacks[t] = g_array_new(FALSE, FALSE, sizeof(struct frame));
        w.chrome_cursor[t] = UINT32_MAX;
    }
    guint64 entries = 0;
    for (guint64 i = 0; i < state->refs->len; i++) {
        uint8_t kind = g_array_index(state->refs, struct xray_ref, i).kind;
        entries += kind == XRAY_ENTER || kind == XRAY_ENTER_ARG;
    }
    g_array_set_size(state->calls, (guint)entries);   /* reserve: no doubling copies */
    g_array_set_size(state->calls, 0);
    for (guint64 i = 0; i < state->refs->len; i++) {
        struct xray_ref *ref = &g_array_index(state->refs, struct xray_ref, i);
        struct xray_thread *thread = &g_array_index(state->threads, struct xray_thread, ref->thread);
        if (!w.stacks[ref->thread]->len && thread->first_tsc == 0 && thread->last_tsc == 0)
            thread->first_tsc = ref->tsc;   /* the first record of the thread (tsc 0 aside) */
        thread->last_tsc = ref->tsc;
        chrome_step(&w, ref);
        call_step(&w, ref, i);
    }
    for (guint t = 0; t < thread_count; t++)
        g_array_free(w.stacks[t], TRUE);
    g_free(w.stacks);
    g_free(w.chrome_cursor);
    g_hash_table_destroy(w.trie);
    compact_calls(state);
}

/* What follows from the records and calls (after the index pass or a load). */
void xray_derive(struct xray_state *state)
{
    uint32_t thread_count = state->threads->len;
    for (guint64 i = 0; i < state->refs->len; i++) {
        uint8_t kind = g_array_index(state->refs, struct xray_ref, i).kind;
        if (kind == XRAY_CUSTOM)
            g_array_append_val(state->custom_events, i);
        else if (kind == XRAY_TYPED)
            g_array_append_val(state->typed_events, i);
    }
    /* A log cut before its first thread has no threads (and no records):
     * no element 0 to take the address of. */
    struct xray_thread *threads = (struct xray_thread *)(void *)state->threads->data;
    uint64_t no_first = 0;
    uint64_t *first_ref = thread_count ? &threads[0].first_ref : &no_first;
    uint64_t *first_call = thread_count ? &threads[0].first_call : &no_first;
    state->next_ref = thread_links(thread_count ? state->refs->len : 0, thread_count, state->refs->data,
                                   sizeof(struct xray_ref), offsetof(struct xray_ref, thread), first_ref, sizeof *threads);
    state->next_call = thread_links(thread_count ? state->calls->len : 0, thread_count, state->calls->data,
                                    sizeof(struct xray_call), offsetof(struct xray_call, thread), first_call,
                                    sizeof *threads);
    build_function_stats(state);
}
