/* From the time-sorted records: the completed calls of every thread, the
 * per-function duration statistics (as llvm-xray account computes them) and
 * the stack trie of the Chrome export (as llvm-xray convert builds it). */
#include <math.h>
#include "tracefs_limits.h"
#include "xray_format.h"

struct frame {
    uint32_t func_id;
    uint64_t tsc;
    uint64_t ref;
};

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
    if (ref->kind == XRAY_ENTER || ref->kind == XRAY_ENTER_ARG) {
        if (stack->len >= LIMIT_XRAY_STACK_DEPTH) {
            w->state->unmatched_exits++;
            return;
        }
        struct frame f = { ref->func_id, ref->tsc, index };
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
    const struct frame *f = &g_array_index(stack, struct frame, depth - 1);
    struct xray_call call = {
        .start_tsc = f->tsc, .end_tsc = ref->tsc, .enter_ref = f->ref, .func_id = f->func_id,
        .depth = depth - 1, .thread = ref->thread,
    };
    g_array_append_val(w->state->calls, call);
    w->state->unmatched_exits += stack->len - depth;   /* frames left open above it */
    g_array_set_size(stack, depth - 1);
}

static int compare_calls(const void *a, const void *b)
{
    const struct xray_call *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->start_tsc != y->start_tsc)
        return x->start_tsc < y->start_tsc ? -1 : 1;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    return x->enter_ref < y->enter_ref ? -1 : x->enter_ref > y->enter_ref;
}

static gint compare_by_function(gconstpointer a, gconstpointer b, gpointer data)
{
    const struct xray_call *calls = data;
    const struct xray_call *x = &calls[*(const guint64 *)a], *y = &calls[*(const guint64 *)b];
    if (x->func_id != y->func_id)
        return x->func_id < y->func_id ? -1 : 1;
    if (x->start_tsc != y->start_tsc)
        return x->start_tsc < y->start_tsc ? -1 : 1;
    return *(const guint64 *)a < *(const guint64 *)b ? -1 : 1;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
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
    qsort(durations, count, sizeof *durations, compare_u64);
    /* llvm-xray account: nth_element at size/2, floor(size*0.9), floor(size*0.99) */
    double frequency = state->header.cycle_frequency ? (double)state->header.cycle_frequency : 1.0;
    stats.min = (double)durations[0] / frequency;
    stats.max = (double)durations[count - 1] / frequency;
    stats.median = (double)durations[count / 2] / frequency;
    stats.p90 = (double)durations[(uint64_t)floor((double)count * 0.9)] / frequency;
    stats.p99 = (double)durations[(uint64_t)floor((double)count * 0.99)] / frequency;
    stats.sum = sum / frequency;
    g_free(durations);
    g_array_append_val(state->functions, stats);
}

static void build_function_stats(struct xray_state *state)
{
    guint64 n = state->calls->len;
    g_array_set_size(state->calls_by_function, n);
    for (guint64 i = 0; i < n; i++)
        g_array_index(state->calls_by_function, guint64, i) = i;
    const struct xray_call *calls = (const struct xray_call *)(void *)state->calls->data;
    g_array_sort_with_data(state->calls_by_function, compare_by_function, (gpointer)calls);
    for (guint64 i = 0; i < n;) {
        uint32_t func_id = calls[g_array_index(state->calls_by_function, guint64, i)].func_id;
        guint64 j = i;
        while (j < n && calls[g_array_index(state->calls_by_function, guint64, j)].func_id == func_id)
            j++;
        function_stats(state, func_id, i, j - i);
        i = j;
    }
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

    qsort(state->calls->data, state->calls->len, sizeof(struct xray_call), compare_calls);
    for (guint64 i = state->calls->len; i-- > 0;) {
        const struct xray_call *c = &g_array_index(state->calls, struct xray_call, i);
        struct xray_thread *thread = &g_array_index(state->threads, struct xray_thread, c->thread);
        thread->first_call = i;
        thread->calls++;
    }
    build_function_stats(state);
}
