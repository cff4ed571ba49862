/* The index pass's walk of the records in time order (xray_merge_build):
 * thread spans, event lists, the Chrome stack trie, the calls' counts and
 * per-function aggregates, and at each checkpoint the open calls; then the
 * per-function stats as llvm-xray account computes them. */
#include <math.h>
#include <string.h>
#include "tracefs_limits.h"
#include "xray_format.h"
#include "xray_idmap.h"
#include "sorted_search.h"
#include "workers.h"

struct function_sum {
    uint32_t func_id;
    uint32_t last_interval;   /* the last interval appended to intervals, or UINT32_MAX */
    uint64_t count;
    uint64_t least, most;
    unsigned __int128 sum;
    GArray *intervals;        /* uint32, in the order calls complete */
    uint32_t *coarse;         /* COARSE_BUCKETS counts of durations, or NULL past the walker's budget */
};

/* Each function's durations are counted in buckets as wide as a 32nd to
 * a 64th of their values (exact below 64) while the index pass walks the
 * records: that places its median, p90 and p99 closely enough for one more
 * walk to find them exactly (exact_ranks), where without it two were
 * needed.  A bucket holds the durations of one bit length whose 5 bits
 * after the leading one are alike. */
#define COARSE_SUB_BITS 5u
#define COARSE_EXACT (1u << COARSE_SUB_BITS)
#define COARSE_BUCKETS (COARSE_EXACT + (64u - COARSE_SUB_BITS) * COARSE_EXACT)

static uint32_t coarse_bucket(uint64_t duration)
{
    if (duration < COARSE_EXACT)
        return (uint32_t)duration;
    unsigned shift = 63u - (unsigned)__builtin_clzll(duration) - COARSE_SUB_BITS;
    return (uint32_t)(duration >> shift) + shift * COARSE_EXACT;
}

/* The least and the greatest duration coarse_bucket puts in `bucket`. */
static void coarse_bounds(uint32_t bucket, uint64_t *least, uint64_t *most)
{
    if (bucket < COARSE_EXACT) {
        *least = *most = bucket;
        return;
    }
    unsigned shift = bucket / COARSE_EXACT - 1;
    *least = (uint64_t)(bucket % COARSE_EXACT + COARSE_EXACT) << shift;
    *most = *least + ((1ull << shift) - 1);
}

struct walker {
    struct call_stack *stacks;   /* per thread */
    uint64_t unindexed;       /* open frames with no long call yet */
    uint64_t started, completed;
    uint64_t unpaired;        /* exits that closed no frame, enters past the depth limit */
    struct xray_id_map function_ids;   /* func id -> index into sums */
    GArray *sums;             /* struct function_sum */
    uint64_t interval_entries, interval_budget;
    gboolean intervals_dropped;
    uint64_t coarse_bytes, coarse_budget;
    uint64_t event_cap;       /* custom and typed events listed */
    gboolean events_full;
    gboolean any;             /* a record was seen */
};

static struct function_sum *function_sum(struct walker *w, uint32_t func_id)
{
    uint32_t found = xray_id_map_get(&w->function_ids, func_id);
    if (found != XRAY_ID_NONE)
        return &g_array_index(w->sums, struct function_sum, found);
    struct function_sum fresh = { .func_id = func_id, .last_interval = UINT32_MAX, .least = UINT64_MAX,
                                  .intervals = g_array_new(FALSE, FALSE, sizeof(uint32_t)) };
    if (w->coarse_bytes + COARSE_BUCKETS * sizeof(uint32_t) <= w->coarse_budget) {
        fresh.coarse = g_new0(uint32_t, COARSE_BUCKETS);
        w->coarse_bytes += COARSE_BUCKETS * sizeof(uint32_t);
    }
    g_array_append_val(w->sums, fresh);
    xray_id_map_set(&w->function_ids, func_id, w->sums->len - 1);
    return &g_array_index(w->sums, struct function_sum, w->sums->len - 1);
}

/* The intervals a function's calls start in tell its calls file where to
 * look; past their budget every function's file looks everywhere. */
static void note_interval(struct walker *w, struct function_sum *f, uint32_t interval)
{
    if (w->intervals_dropped || f->last_interval == interval)
        return;
    f->last_interval = interval;
    if (++w->interval_entries * sizeof(uint32_t) > w->interval_budget) {
        w->intervals_dropped = TRUE;
        for (guint i = 0; i < w->sums->len; i++)
            g_array_set_size(g_array_index(w->sums, struct function_sum, i).intervals, 0);
        return;
    }
    g_array_append_val(f->intervals, interval);
}

static void complete_call(struct xray_state *state, struct walker *w, const struct call_frame *f, uint64_t end,
                          uint32_t thread)
{
    end = MAX(end, f->start_tsc);
    if (f->long_call != UINT32_MAX)
        g_array_index(state->long_calls, struct xray_long_call, f->long_call).end_tsc = end;
    uint64_t duration = end - f->start_tsc;
    struct function_sum *s = function_sum(w, f->func_id);
    s->count++;
    s->least = MIN(s->least, duration);
    s->most = MAX(s->most, duration);
    s->sum += duration;
    if (s->coarse)
        s->coarse[coarse_bucket(duration)]++;
    note_interval(w, s, f->start_interval);
    g_array_index(state->threads, struct xray_thread, thread).calls++;
    w->completed++;
}

static void call_record(struct xray_state *state, struct walker *w, const struct xray_record *r)
{
    struct call_stack *stack = &w->stacks[r->thread];
    GArray *frames = stack->frames;
    guint closed;
    switch (xray_call_step(stack, r, &closed)) {
    case CALL_PUSHED: {
        struct call_frame *f = &g_array_index(frames, struct call_frame, frames->len - 1);
        f->start_interval = state->checkpoint_ordinals->len - 1;
        w->started++;
        w->unindexed++;
        break;
    }
    case CALL_REFUSED:
    case CALL_UNMATCHED:
        w->unpaired++;
        break;
    case CALL_CLOSED:
        complete_call(state, w, &g_array_index(frames, struct call_frame, closed), r->tsc, r->thread);
        for (guint d = closed; d < frames->len; d++)
            w->unindexed -= g_array_index(frames, struct call_frame, d).long_call == UINT32_MAX;
        xray_call_stack_truncate(stack, closed);
        break;
    default:
        break;
    }
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

static void visit(struct xray_state *state, const struct xray_record *r, void *data)
{
    struct walker *w = data;
    struct xray_thread *thread = &g_array_index(state->threads, struct xray_thread, r->thread);
    if (!w->stacks[r->thread].frames->len && thread->first_tsc == 0 && thread->last_tsc == 0)
        thread->first_tsc = r->tsc;   /* the first record of the thread (tsc 0 aside) */
    thread->last_tsc = r->tsc;
    if (!w->any)
        state->first_tsc = r->tsc;
    w->any = TRUE;
    state->last_tsc = r->tsc;
    call_record(state, w, r);
    list_event(state, w, r);
}

static uint64_t pending_bytes(const void *data)
{
    const struct walker *w = data;
    return w->unindexed * sizeof(struct xray_long_call);
}

/* Every open frame gets a long call (bottom first, so parents come first);
 * the checkpoint keeps each thread's top one. */
static void at_checkpoint(struct xray_state *state, void *data)
{
    struct walker *w = data;
    for (guint t = 0; t < state->threads->len; t++) {
        GArray *frames = w->stacks[t].frames;
        uint32_t parent = UINT32_MAX;
        for (guint d = 0; d < frames->len; d++) {
            struct call_frame *f = &g_array_index(frames, struct call_frame, d);
            if (f->long_call == UINT32_MAX) {
                struct xray_long_call l = { .end_tsc = XRAY_CALL_OPEN, .func_id = f->func_id, .parent = parent };
                g_array_append_val(state->long_calls, l);
                f->long_call = state->long_calls->len - 1;
            }
            parent = f->long_call;
        }
        g_array_append_val(state->checkpoints, parent);
    }
    w->unindexed = 0;
}

static gint compare_sums(gconstpointer a, gconstpointer b)
{
    return sorted_compare_u32(&((const struct function_sum *)a)->func_id, &((const struct function_sum *)b)->func_id);
}

/* ---- exact ranks: each pass over the records collects the durations
 * inside a rank's range when they fit, and picks the rank among them;
 * otherwise it histograms the range and narrows it to one bucket ---- */

#define RANK_BATCH 512u       /* ranks narrowed by histograms per pass */
/* What one pass's collected durations and histograms take together, in
 * 32-bit words (8 MiB): with few ranks each gets more, and every pass
 * walks all records, so fewer passes pay.  At most half of it holds
 * collected durations, so a histogram has at least 2,048 buckets. */
#define RANK_COUNT_WORDS (2u << 20)
#define RANK_COLLECT_VALUES (RANK_COUNT_WORDS / 4)

struct rank_target {
    uint64_t rank;            /* 0-based, among the function's durations */
    uint64_t lo, hi;          /* the value lies in [lo, hi] */
    uint64_t below;           /* durations < lo */
    uint64_t in_range;        /* durations in [lo, hi] */
    uint32_t buckets;         /* this pass's */
    uint32_t *counts;         /* this pass's histogram, or NULL */
    uint64_t *values;         /* this pass's durations in [lo, hi] (in_range of them), or NULL */
    uint64_t collected;
};

struct rank_pass {
    struct xray_id_map function_ids;   /* func id -> its first target (3 per function) */
    struct rank_target *targets;
};

static uint64_t bucket_width(const struct rank_target *t)
{
    return (t->hi - t->lo) / t->buckets + 1;
}

/* Called by the walkers of every thread at once: each count and each
 * collected duration's slot is taken atomically. */
static void rank_count(uint32_t func_id, uint64_t duration, void *data)
{
    struct rank_pass *pass = data;
    uint32_t first = xray_id_map_get(&pass->function_ids, func_id);
    if (first == XRAY_ID_NONE)
        return;
    for (gsize i = first; i < (gsize)first + 3; i++) {
        struct rank_target *t = &pass->targets[i];
        if (duration < t->lo || duration > t->hi)
            continue;
        if (t->counts) {
            __atomic_fetch_add(&t->counts[(duration - t->lo) / bucket_width(t)], 1, __ATOMIC_RELAXED);
        } else if (t->values) {
            uint64_t slot = __atomic_fetch_add(&t->collected, 1, __ATOMIC_RELAXED);
            if (slot < t->in_range)
                t->values[slot] = duration;
        }
    }
}

static void rank_narrow(struct rank_target *t)
{
    uint64_t width = bucket_width(t), seen = t->below;
    for (uint32_t b = 0; b < t->buckets; b++) {
        if (seen + t->counts[b] > t->rank) {
            t->lo += b * width;
            if (width - 1 < t->hi - t->lo)
                t->hi = t->lo + (width - 1);
            t->below = seen;
            t->in_range = t->counts[b];
            return;
        }
        seen += t->counts[b];
    }
    t->hi = t->lo;   /* unreachable with consistent passes */
}

static void rank_select(struct rank_target *t)
{
    t->collected = MIN(t->collected, t->in_range);
    if (t->collected) {
        qsort(t->values, t->collected, sizeof(uint64_t), sorted_compare_u64);
        t->lo = t->values[MIN(t->rank - t->below, t->collected - 1)];
    }
    t->hi = t->lo;
}

/* Narrows a rank's range to the coarse bucket it falls in. */
static void rank_place(struct rank_target *t, const uint32_t *coarse)
{
    uint64_t seen = 0;
    for (uint32_t b = 0; b < COARSE_BUCKETS; b++) {
        if (seen + coarse[b] > t->rank) {
            uint64_t least, most;
            coarse_bounds(b, &least, &most);
            t->lo = MAX(t->lo, least);
            t->hi = MIN(t->hi, most);
            t->below = seen;
            t->in_range = coarse[b];
            return;
        }
        seen += coarse[b];
    }
}

/* Unresolved ranks whose durations fit collect them; up to RANK_BATCH
 * others share what is left in histograms (no more buckets than their
 * range has values).  Returns how many ranks the pass resolves or
 * narrows. */
static guint start_rank_pass(struct rank_target *targets, guint count)
{
    uint64_t room = RANK_COLLECT_VALUES;
    guint histograms = 0, collecting = 0;
    for (guint i = 0; i < count; i++) {
        struct rank_target *t = &targets[i];
        if (t->lo >= t->hi)
            continue;
        if (t->in_range <= room) {
            t->values = g_new(uint64_t, t->in_range);
            t->collected = 0;
            room -= t->in_range;
            collecting++;
        } else if (histograms < RANK_BATCH) {
            histograms++;
        }
    }
    uint64_t words = RANK_COUNT_WORDS - 2 * (RANK_COLLECT_VALUES - room);
    guint given = 0;
    for (guint i = 0; i < count && given < histograms; i++) {
        struct rank_target *t = &targets[i];
        if (t->lo >= t->hi || t->values)
            continue;
        t->buckets = (uint32_t)MIN(t->hi - t->lo, words / histograms - 1) + 1;
        t->counts = g_new0(uint32_t, t->buckets);
        given++;
    }
    return collecting + given;
}

static void finish_rank_pass(struct rank_target *targets, guint count)
{
    for (guint i = 0; i < count; i++) {
        struct rank_target *t = &targets[i];
        if (t->values)
            rank_select(t);
        else if (t->counts)
            rank_narrow(t);
        g_free(t->values);
        g_free(t->counts);
        t->values = NULL;
        t->counts = NULL;
    }
}

/* Each function's median, p90 and p99 (its sums are in state->functions'
 * order). */
static void exact_ranks(struct xray_state *state, const GArray *sums, double frequency)
{
    guint n = state->functions->len;
    struct rank_pass pass = { .targets = g_new0(struct rank_target, (gsize)n * 3 + 1) };
    /* -o threads=N: the log's threads are walked N at a time. */
    unsigned walkers = workers_threads(state->trace->workers);
    xray_id_map_init(&pass.function_ids);
    for (guint f = 0; f < n; f++) {
        const struct xray_function_stats *s = &g_array_index(state->functions, struct xray_function_stats, f);
        const struct function_sum *sum = &g_array_index(sums, struct function_sum, f);
        /* llvm-xray account: nth_element at size/2, floor(size*0.9), floor(size*0.99) */
        uint64_t ranks[3] = { s->count / 2, (uint64_t)floor((double)s->count * 0.9),
                              (uint64_t)floor((double)s->count * 0.99) };
        for (int q = 0; q < 3; q++) {
            struct rank_target *t = &pass.targets[f * 3 + q];
            *t = (struct rank_target){ .rank = MIN(ranks[q], s->count - 1), .lo = sum->least,
                                       .hi = sum->most, .in_range = s->count };
            if (sum->coarse)
                rank_place(t, sum->coarse);
        }
        xray_id_map_set(&pass.function_ids, s->func_id, f * 3);
    }
    while (start_rank_pass(pass.targets, n * 3)) {
        xray_walk_durations(state, walkers, rank_count, &pass);
        finish_rank_pass(pass.targets, n * 3);
    }
    for (guint f = 0; f < n; f++) {
        struct xray_function_stats *s = &g_array_index(state->functions, struct xray_function_stats, f);
        s->median = (double)pass.targets[f * 3].lo / frequency;
        s->p90 = (double)pass.targets[f * 3 + 1].lo / frequency;
        s->p99 = (double)pass.targets[f * 3 + 2].lo / frequency;
    }
    g_free(pass.targets);
    xray_id_map_clear(&pass.function_ids);
}

static void build_functions(struct xray_state *state, struct walker *w)
{
    g_array_sort(w->sums, compare_sums);
    guint n = w->sums->len;
    double frequency = state->header.cycle_frequency ? (double)state->header.cycle_frequency : 1.0;
    for (guint i = 0; i < n; i++) {
        struct function_sum *f = &g_array_index(w->sums, struct function_sum, i);
        struct xray_function_stats stats = { .func_id = f->func_id, .count = f->count,
                                             .min = (double)f->least / frequency, .max = (double)f->most / frequency,
                                             .sum = (double)f->sum / frequency, .first_interval = UINT64_MAX };
        if (!w->intervals_dropped) {
            g_array_sort(f->intervals, sorted_compare_u32);
            stats.first_interval = state->function_intervals->len;
            for (guint j = 0; j < f->intervals->len; j++) {
                uint32_t k = g_array_index(f->intervals, uint32_t, j);
                if (j == 0 || k != g_array_index(f->intervals, uint32_t, j - 1))
                    g_array_append_val(state->function_intervals, k);
            }
            stats.interval_count = state->function_intervals->len - stats.first_interval;
        }
        g_array_free(f->intervals, TRUE);
        g_array_append_val(state->functions, stats);
    }
    exact_ranks(state, w->sums, frequency);
    for (guint i = 0; i < n; i++)
        g_free(g_array_index(w->sums, struct function_sum, i).coarse);
}

void xray_analyze(struct xray_state *state)
{
    guint thread_count = state->threads->len;
    uint64_t size = stream_size(state->stream);
    struct walker w = { .stacks = g_new(struct call_stack, thread_count ? thread_count : 1),
                        .sums = g_array_new(FALSE, FALSE, sizeof(struct function_sum)),
                        .interval_budget = size / LIMIT_XRAY_INDEX_SHARE + LIMIT_XRAY_INDEX_FIXED_BYTES,
                        .coarse_budget = size / LIMIT_XRAY_COARSE_SHARE + LIMIT_XRAY_COARSE_FIXED_BYTES,
                        .event_cap = size / LIMIT_XRAY_EVENT_LOG_BYTES + 65536 };
    xray_id_map_init(&w.function_ids);
    for (guint t = 0; t < thread_count; t++)
        xray_call_stack_init(&w.stacks[t]);
    struct xray_build_hooks hooks = { .visit = visit, .pending_bytes = pending_bytes, .checkpoint = at_checkpoint };
    xray_merge_build(state, &hooks, &w);
    for (guint t = 0; t < thread_count; t++)
        xray_call_stack_clear(&w.stacks[t]);
    g_free(w.stacks);
    state->calls = w.completed;
    state->unmatched_exits = w.unpaired + (w.started - w.completed);
    build_functions(state, &w);
    g_array_free(w.sums, TRUE);
    xray_id_map_clear(&w.function_ids);
}
