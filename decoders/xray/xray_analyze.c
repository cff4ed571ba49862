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
    GArray **stacks;          /* per thread: struct frame */
    uint64_t event_cap;       /* custom and typed events listed */
    gboolean events_full;
    gboolean any;             /* a record was seen */
};

static void call_step(struct xray_state *state, struct walker *w, const struct xray_record *r)
{
    GArray *stack = w->stacks[r->thread];
    GArray *calls = state->calls;
    if (r->kind == XRAY_ENTER || r->kind == XRAY_ENTER_ARG) {
        if (stack->len >= LIMIT_XRAY_STACK_DEPTH) {
            state->unmatched_exits++;
            return;
        }
        struct xray_call call = { .start_tsc = r->tsc, .end_tsc = CALL_OPEN, .enter_offset = r->offset,
                                  .func_id = r->func_id, .depth = stack->len, .thread = r->thread,
                                  .enter_kind = r->kind };
        g_array_append_val(calls, call);
        struct frame f = { r->func_id, calls->len - 1 };
        g_array_append_val(stack, f);
        return;
    }
    if (r->kind != XRAY_EXIT && r->kind != XRAY_TAIL_EXIT)
        return;
    guint depth = stack->len;
    while (depth > 0 && g_array_index(stack, struct frame, depth - 1).func_id != r->func_id)
        depth--;
    if (depth == 0) {
        state->unmatched_exits++;
        return;
    }
    struct xray_call *call = &g_array_index(calls, struct xray_call, g_array_index(stack, struct frame, depth - 1).call);
    call->end_tsc = MAX(r->tsc, call->start_tsc);
    g_array_set_size(stack, depth - 1);
}

static void list_event(struct xray_state *state, struct walker *w, const struct xray_record *r)
{
    if (r->kind != XRAY_CUSTOM && r->kind != XRAY_TYPED)
        return;
    if (state->custom_events->len + state->typed_events->len >= w->event_cap) {
        if (!w->events_full)
            trace_error(state->trace, "log", r->offset, "more than %llu custom and typed events: the rest are "
                        "not listed under customevents/ and typedevents/", (unsigned long long)w->event_cap);
        w->events_full = TRUE;
        return;
    }
    guint64 offset = r->offset;
    g_array_append_val(r->kind == XRAY_CUSTOM ? state->custom_events : state->typed_events, offset);
}

static void visit(struct xray_state *state, const struct xray_record *r, uint32_t stack_node, void *data)
{
    (void)stack_node;
    struct walker *w = data;
    struct xray_thread *thread = &g_array_index(state->threads, struct xray_thread, r->thread);
    if (!w->stacks[r->thread]->len && thread->first_tsc == 0 && thread->last_tsc == 0)
        thread->first_tsc = r->tsc;   /* the first record of the thread (tsc 0 aside) */
    thread->last_tsc = r->tsc;
    if (!w->any)
        state->first_tsc = r->tsc;
    w->any = TRUE;
    state->last_tsc = r->tsc;
    call_step(state, w, r);
    list_event(state, w, r);
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
 * linear on average, where sorting every function's durations was the
 * largest cost of a remount. */
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
    struct walker w = { .stacks = g_new(GArray *, thread_count ? thread_count : 1),
                        .event_cap = stream_size(state->stream) / LIMIT_XRAY_EVENT_LOG_BYTES + 65536 };
    for (guint t = 0; t < thread_count; t++)
        w.stacks[t] = g_array_new(FALSE, FALSE, sizeof(struct frame));
    xray_merge_build(state, visit, &w);
    for (guint t = 0; t < thread_count; t++)
        g_array_free(w.stacks[t], TRUE);
    g_free(w.stacks);
    compact_calls(state);
}

/* What follows from the records and calls (after the index pass or a load). */
void xray_derive(struct xray_state *state)
{
    uint32_t thread_count = state->threads->len;
    struct xray_thread *threads = (struct xray_thread *)(void *)state->threads->data;
    uint64_t no_first = 0;
    uint64_t *first_call = thread_count ? &threads[0].first_call : &no_first;
    state->next_call = thread_links(thread_count ? state->calls->len : 0, thread_count, state->calls->data,
                                    sizeof(struct xray_call), offsetof(struct xray_call, thread), first_call,
                                    sizeof *threads);
    build_function_stats(state);
}
