/* Calls without a table per call.  A call is listed where it starts: the
 * views walk the records of one checkpoint interval from the call stacks the
 * checkpoint keeps, and a call still open at the next checkpoint takes its
 * end from that checkpoint's stack (struct xray_long_call, filled in by the
 * index pass when the call completed). */
#include <string.h>
#include "keyed_hash.h"
#include "tracefs_limits.h"
#include "xray_format.h"

#define CALL_CUT (UINT64_MAX - 1)
#define READER_BYTES (64u << 10)   /* the window of a one-run walk */

static guint hash_func_id(gconstpointer key)
{
    return keyed_hash_u64(GPOINTER_TO_UINT(key));
}

void xray_call_stack_init(struct call_stack *stack)
{
    *stack = (struct call_stack){ .frames = g_array_new(FALSE, FALSE, sizeof(struct call_frame)) };
}

void xray_call_stack_clear(struct call_stack *stack)
{
    g_clear_pointer(&stack->frames, g_array_unref);
    g_clear_pointer(&stack->deep_counts, g_hash_table_unref);
}

static guint deep_count(const struct call_stack *stack, uint32_t func_id)
{
    if (!stack->deep_counts)
        return 0;
    return GPOINTER_TO_UINT(g_hash_table_lookup(stack->deep_counts, GUINT_TO_POINTER(func_id)));
}

static void count_frame(struct call_stack *stack, uint32_t func_id)
{
    if (!stack->deep_counts)
        stack->deep_counts = g_hash_table_new(hash_func_id, g_direct_equal);
    g_hash_table_insert(stack->deep_counts, GUINT_TO_POINTER(func_id),
                        GUINT_TO_POINTER(deep_count(stack, func_id) + 1));
}

/* An entry at count 0 is removed: the table holds no more entries than
 * the stack holds frames. */
static void uncount_frame(struct call_stack *stack, uint32_t func_id)
{
    guint count = deep_count(stack, func_id);
    if (count <= 1)
        g_hash_table_remove(stack->deep_counts, GUINT_TO_POINTER(func_id));
    else
        g_hash_table_insert(stack->deep_counts, GUINT_TO_POINTER(func_id), GUINT_TO_POINTER(count - 1));
}

void xray_call_stack_uncount(struct call_stack *stack, guint len)
{
    for (guint d = MAX(len, CALL_STACK_SCANNED); d < stack->frames->len; d++)
        uncount_frame(stack, g_array_index(stack->frames, struct call_frame, d).func_id);
}

/* How many frames from the bottom an exit of func_id has to look at: the
 * frames counted hold none of it when its count is 0. */
static guint exit_search_depth(const struct call_stack *stack, uint32_t func_id)
{
    const GArray *frames = stack->frames;
    if (frames->len <= CALL_STACK_SCANNED
        || g_array_index(frames, struct call_frame, frames->len - 1).func_id == func_id)
        return frames->len;
    return deep_count(stack, func_id) ? frames->len : CALL_STACK_SCANNED;
}

enum call_step xray_call_step(struct call_stack *stack, const struct xray_record *r, guint *closed)
{
    GArray *frames = stack->frames;
    if (r->kind == XRAY_ENTER || r->kind == XRAY_ENTER_ARG) {
        if (frames->len >= LIMIT_XRAY_STACK_DEPTH)
            return CALL_REFUSED;
        if (frames->len >= CALL_STACK_SCANNED)
            count_frame(stack, r->func_id);
        struct call_frame f = { .func_id = r->func_id, .slot = UINT32_MAX, .long_call = UINT32_MAX,
                                .start_tsc = r->tsc };
        g_array_append_val(frames, f);
        return CALL_PUSHED;
    }
    if (r->kind != XRAY_EXIT && r->kind != XRAY_TAIL_EXIT)
        return CALL_OTHER;
    guint depth = exit_search_depth(stack, r->func_id);
    while (depth > 0 && g_array_index(frames, struct call_frame, depth - 1).func_id != r->func_id)
        depth--;
    if (depth == 0)
        return CALL_UNMATCHED;
    *closed = depth - 1;
    return CALL_CLOSED;
}

static uint32_t checkpoint_top(const struct xray_state *state, uint64_t k, uint32_t thread)
{
    if (k >= state->checkpoint_ordinals->len)
        return UINT32_MAX;
    return g_array_index(state->checkpoints, uint32_t,
                         (k + 1) * state->checkpoint_words - state->threads->len + thread);
}

void xray_checkpoint_stack(const struct xray_state *state, uint64_t k, uint32_t thread, GArray *frames)
{
    g_array_set_size(frames, 0);
    const GArray *longs = state->long_calls;
    for (uint32_t at = checkpoint_top(state, k, thread); at < longs->len && frames->len < LIMIT_XRAY_STACK_DEPTH;) {
        const struct xray_long_call *l = &g_array_index(longs, struct xray_long_call, at);
        struct call_frame f = { .func_id = l->func_id, .slot = UINT32_MAX, .long_call = at,
                                .start_interval = UINT32_MAX };
        g_array_append_val(frames, f);
        at = l->parent;   /* the loader checked parents come first */
    }
    for (guint i = 0, j = frames->len; i + 1 < j; i++, j--) {   /* bottom first */
        struct call_frame t = g_array_index(frames, struct call_frame, i);
        g_array_index(frames, struct call_frame, i) = g_array_index(frames, struct call_frame, j - 1);
        g_array_index(frames, struct call_frame, j - 1) = t;
    }
}

void xray_call_stack_at_checkpoint(const struct xray_state *state, uint64_t k, uint32_t thread,
                                   struct call_stack *stack)
{
    xray_call_stack_truncate(stack, 0);
    xray_checkpoint_stack(state, k, thread, stack->frames);
    for (guint d = CALL_STACK_SCANNED; d < stack->frames->len; d++)
        count_frame(stack, g_array_index(stack->frames, struct call_frame, d).func_id);
}

/* ---- the calls of one interval ---- */

struct interval_cache {
    const struct xray_state *state;
    uint64_t serial;
    uint32_t thread, func_id;
    uint64_t k;
    GArray *calls;            /* struct xray_call */
    struct call_stack *stacks;   /* per thread */
    uint32_t stack_count;
};

static void cache_clear(struct interval_cache *cache)
{
    for (uint32_t t = 0; t < cache->stack_count; t++)
        xray_call_stack_clear(&cache->stacks[t]);
    g_free(cache->stacks);
    g_clear_pointer(&cache->calls, g_array_unref);
}

static void cache_free(gpointer data)
{
    cache_clear(data);
    g_free(data);
}

/* Each thread's last interval, freed when the thread ends. */
static GPrivate cache_key = G_PRIVATE_INIT(cache_free);

static void cache_reset(struct interval_cache *cache, const struct xray_state *state)
{
    cache_clear(cache);
    *cache = (struct interval_cache){ .state = state, .serial = state->serial, .k = UINT64_MAX };
    cache->calls = g_array_new(FALSE, FALSE, sizeof(struct xray_call));
    cache->stack_count = state->threads->len;
    cache->stacks = g_new(struct call_stack, cache->stack_count ? cache->stack_count : 1);
    for (uint32_t t = 0; t < cache->stack_count; t++)
        xray_call_stack_init(&cache->stacks[t]);
}

static void collect_record(struct interval_cache *cache, uint32_t func_id, gboolean all_functions,
                           const struct xray_record *r)
{
    struct call_stack *stack = &cache->stacks[r->thread];
    GArray *frames = stack->frames;
    guint closed;
    switch (xray_call_step(stack, r, &closed)) {
    case CALL_PUSHED:
        if (all_functions || r->func_id == func_id) {
            struct xray_call call = { .start_tsc = r->tsc, .end_tsc = XRAY_CALL_OPEN, .enter_offset = r->offset,
                                      .func_id = r->func_id, .depth = frames->len - 1, .thread = r->thread,
                                      .enter_kind = r->kind };
            g_array_append_val(cache->calls, call);
            g_array_index(frames, struct call_frame, frames->len - 1).slot = cache->calls->len - 1;
        }
        break;
    case CALL_CLOSED:
        for (guint d = closed; d < frames->len; d++) {
            const struct call_frame *f = &g_array_index(frames, struct call_frame, d);
            if (f->slot == UINT32_MAX)
                continue;
            struct xray_call *call = &g_array_index(cache->calls, struct xray_call, f->slot);
            call->end_tsc = d == closed ? MAX(r->tsc, call->start_tsc) : CALL_CUT;
        }
        xray_call_stack_truncate(stack, closed);
        break;
    default:
        break;
    }
}

/* Calls still open at the interval's end complete where the next
 * checkpoint's stack says (or never). */
static void close_from_next_checkpoint(struct interval_cache *cache, const struct xray_state *state, uint32_t thread,
                                       GArray *scratch)
{
    GArray *frames = cache->stacks[thread].frames;
    xray_checkpoint_stack(state, cache->k + 1, thread, scratch);
    for (guint d = 0; d < frames->len; d++) {
        const struct call_frame *f = &g_array_index(frames, struct call_frame, d);
        if (f->slot == UINT32_MAX)
            continue;
        struct xray_call *call = &g_array_index(cache->calls, struct xray_call, f->slot);
        uint32_t l = d < scratch->len ? g_array_index(scratch, struct call_frame, d).long_call : UINT32_MAX;
        uint64_t end = xray_long_call_end(state, l);
        call->end_tsc = end == XRAY_CALL_OPEN ? CALL_CUT : MAX(end, call->start_tsc);
    }
}

static void drop_incomplete(struct interval_cache *cache)
{
    guint kept = 0;
    for (guint i = 0; i < cache->calls->len; i++) {
        const struct xray_call *c = &g_array_index(cache->calls, struct xray_call, i);
        if (c->end_tsc == XRAY_CALL_OPEN || c->end_tsc == CALL_CUT)
            continue;
        g_array_index(cache->calls, struct xray_call, kept++) = *c;
    }
    g_array_set_size(cache->calls, kept);
}

static void collect(struct interval_cache *cache, const struct xray_state *state, uint32_t thread, uint32_t func_id,
                    uint64_t k)
{
    g_array_set_size(cache->calls, 0);
    cache->thread = thread;
    cache->func_id = func_id;
    cache->k = k;
    if (k >= state->checkpoint_ordinals->len)
        return;
    uint32_t first = thread == UINT32_MAX ? 0 : thread;
    uint32_t last = thread == UINT32_MAX ? state->threads->len : thread + 1;
    for (uint32_t t = first; t < last; t++)
        xray_call_stack_at_checkpoint(state, k, t, &cache->stacks[t]);
    struct xray_record r;
    if (thread == UINT32_MAX) {
        uint64_t start = g_array_index(state->checkpoint_ordinals, guint64, k);
        uint64_t end = k + 1 < state->checkpoint_ordinals->len
                           ? g_array_index(state->checkpoint_ordinals, guint64, k + 1) : state->records;
        struct xray_merge *m = xray_merge_at(state, UINT32_MAX, start, FALSE);
        for (uint64_t i = start; i < end && xray_merge_next(m, &r, NULL); i++)
            if (r.thread < state->threads->len)
                collect_record(cache, func_id, FALSE, &r);
    } else {
        uint64_t count;
        struct xray_merge *m = xray_merge_interval(state, thread, k, &count);
        for (uint64_t i = 0; i < count && xray_merge_next(m, &r, NULL); i++)
            if (r.thread == thread)
                collect_record(cache, func_id, TRUE, &r);
        xray_merge_free(m);
    }
    GArray *scratch = g_array_new(FALSE, FALSE, sizeof(struct call_frame));
    for (uint32_t t = first; t < last; t++)
        close_from_next_checkpoint(cache, state, t, scratch);
    g_array_free(scratch, TRUE);
    drop_incomplete(cache);
}

const GArray *xray_interval_calls(const struct xray_state *state, uint32_t thread, uint32_t func_id, uint64_t k)
{
    struct interval_cache *cache = thread_value(&cache_key, sizeof *cache);
    if (cache->state != state || cache->serial != state->serial)
        cache_reset(cache, state);
    if (cache->k != k || cache->thread != thread || cache->func_id != func_id)
        collect(cache, state, thread, func_id, k);
    return cache->calls;
}

/* ---- durations, thread by thread ---- */

/* Steps the thread's call stack over a record; a call it closes is
 * reported with its duration. */
static void step_duration(struct call_stack *stack, const struct xray_record *r, xray_duration_fn fn, void *data)
{
    guint closed;
    if (xray_call_step(stack, r, &closed) != CALL_CLOSED)
        return;
    const struct call_frame *f = &g_array_index(stack->frames, struct call_frame, closed);
    fn(f->func_id, MAX(r->tsc, f->start_tsc) - f->start_tsc, data);
    xray_call_stack_truncate(stack, closed);
}

/* The threads' walks, shared by the walkers: each claims the next thread,
 * the ones with the most records first. */
struct duration_walk {
    const struct xray_state *state;
    uint32_t *order;          /* thread indexes, most records first */
    guint next;               /* into order; taken atomically */
    xray_duration_fn fn;
    void *data;
};

static void walk_thread(const struct xray_state *state, uint32_t t, struct xray_reader *reader,
                        struct call_stack *stack, xray_duration_fn fn, void *data)
{
    xray_call_stack_truncate(stack, 0);
    const struct xray_thread *thread = &g_array_index(state->threads, struct xray_thread, t);
    struct xray_record r;
    if (thread->run_count == 1 && thread->first_run < state->runs->len) {
        /* A thread of one run lists its records in decode order: the
         * merge's heap and copies are not needed for it. */
        struct xray_position pos = g_array_index(state->runs, struct xray_run, thread->first_run).start;
        while (xray_decode_next(state, reader, &pos, &r))
            step_duration(stack, &r, fn, data);
        return;
    }
    struct xray_merge *m = xray_merge_at(state, t, 0, FALSE);
    while (xray_merge_next(m, &r, NULL))
        step_duration(stack, &r, fn, data);
}

static gpointer walk_claimed_threads(gpointer data)
{
    struct duration_walk *walk = data;
    struct call_stack stack;
    xray_call_stack_init(&stack);
    struct xray_reader reader;
    xray_reader_init(&reader, READER_BYTES);
    for (;;) {
        guint i = __atomic_fetch_add(&walk->next, 1, __ATOMIC_RELAXED);
        if (i >= walk->state->threads->len)
            break;
        walk_thread(walk->state, walk->order[i], &reader, &stack, walk->fn, walk->data);
    }
    xray_reader_free(&reader);
    xray_call_stack_clear(&stack);
    return NULL;
}

static gint more_records_first(gconstpointer a, gconstpointer b, gpointer data)
{
    const struct xray_state *state = data;
    const struct xray_thread *x = &g_array_index(state->threads, struct xray_thread, *(const uint32_t *)a);
    const struct xray_thread *y = &g_array_index(state->threads, struct xray_thread, *(const uint32_t *)b);
    if (x->records != y->records)
        return x->records > y->records ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Threads of its own, joined before it returns, rather than the worker
 * pool's: this runs in the index pass, before a mount forks, and a pool
 * thread started here could hold the pool's lock at the fork. */
void xray_walk_durations(const struct xray_state *state, unsigned walkers, xray_duration_fn fn, void *data)
{
    guint count = state->threads->len;
    struct duration_walk walk = { state, g_new(uint32_t, count + 1), 0, fn, data };
    for (guint t = 0; t < count; t++)
        walk.order[t] = t;
    g_qsort_with_data(walk.order, (gint)count, sizeof(uint32_t), more_records_first, (gpointer)state);
    GThread *helpers[LIMIT_WORKER_THREADS];
    unsigned started = 0;
    while (started + 1 < MIN(walkers, MIN(count, LIMIT_WORKER_THREADS))) {
        helpers[started] = g_thread_try_new("xray-durations", walk_claimed_threads, &walk, NULL);
        if (!helpers[started])
            break;
        started++;
    }
    walk_claimed_threads(&walk);
    for (unsigned i = 0; i < started; i++)
        g_thread_join(helpers[i]);
    g_free(walk.order);
}
