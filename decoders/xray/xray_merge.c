/* The records of an XRay log in llvm-xray's time order, without a table
 * per record: a k-way merge of the runs (each thread's records, whose TSCs
 * never go back), ordered by (TSC, llvm's rank of the thread, offset), which
 * is where llvm's stable sort by TSC puts them.  The index pass walks the
 * merge once and keeps a checkpoint (every run's position, and every
 * thread's Chrome stack node) every state->spacing records, and for each
 * thread one every thread->spacing of its records; a view resumes at the
 * checkpoint before the record it wants.  Each thread keeps its last merges,
 * so a sequential read merges every record once. */
#include <string.h>
#include "sorted_search.h"
#include "tracefs_limits.h"
#include "xray_format.h"

#define CACHED_MERGES 2
#define READER_BYTES_TOTAL (256u << 10)
/* Recent (parent, function) -> trie node lookups: a program's hot call
 * paths repeat, and each enter record would otherwise hash into the trie. */
#define TRIE_MEMO_SLOTS 256u

struct trie_memo_slot {
    uint32_t parent, func_id;
    uint32_t node;                /* UINT32_MAX: empty */
};

struct run_cursor {
    struct xray_position at;      /* before head */
    struct xray_position after;   /* after head */
    struct xray_record head;
    struct xray_reader reader;
};

struct xray_merge {
    const struct xray_state *state;
    uint64_t serial;
    uint32_t thread;              /* UINT32_MAX: every run */
    uint32_t first_run, run_count;
    uint64_t ordinal;             /* records taken so far */
    uint64_t next_checkpoint;     /* ordinal of the next checkpoint (UINT64_MAX: none) */
    gboolean chrome;              /* chrome_nodes are followed */
    gboolean building;            /* the index pass: the trie grows */
    struct run_cursor *cursors;
    uint32_t *heap;               /* live cursors, a min-heap by key */
    uint32_t heap_len;
    uint32_t *chrome_nodes;       /* per thread */
    struct trie_memo_slot *trie_memo;   /* TRIE_MEMO_SLOTS, with chrome_nodes */
    uint64_t used;                /* for the cache's LRU */
};

static gboolean before(const struct xray_merge *m, uint32_t a, uint32_t b)
{
    const struct xray_record *x = &m->cursors[a].head, *y = &m->cursors[b].head;
    if (x->tsc != y->tsc)
        return x->tsc < y->tsc;
    const uint32_t *rank = m->state->rank;
    if (rank[x->thread] != rank[y->thread])
        return rank[x->thread] < rank[y->thread];
    return x->offset < y->offset;
}

static void sift_down(struct xray_merge *m, uint32_t i)
{
    uint32_t *h = m->heap, n = m->heap_len;
    if (n <= 2) {   /* a log of one or two threads: one comparison at most */
        if (i == 0 && n == 2 && before(m, h[1], h[0])) {
            uint32_t t = h[0];
            h[0] = h[1];
            h[1] = t;
        }
        return;
    }
    for (;;) {
        uint32_t least = i, l = 2 * i + 1, r = l + 1;
        if (l < n && before(m, h[l], h[least]))
            least = l;
        if (r < n && before(m, h[r], h[least]))
            least = r;
        if (least == i)
            return;
        uint32_t t = h[i];
        h[i] = h[least];
        h[least] = t;
        i = least;
    }
}

/* Decodes the head of cursor c from its position `at`; FALSE when the run is done. */
static gboolean load_head(struct xray_merge *m, uint32_t c)
{
    struct run_cursor *cursor = &m->cursors[c];
    cursor->after = cursor->at;
    return xray_decode_next(m->state, &cursor->reader, &cursor->after, &cursor->head);
}

static void build_heap(struct xray_merge *m)
{
    m->heap_len = 0;
    for (uint32_t c = 0; c < m->run_count; c++)
        if (load_head(m, c))
            m->heap[m->heap_len++] = c;
    for (uint32_t i = m->heap_len / 2; i-- > 0;)
        sift_down(m, i);
}

static struct xray_merge *merge_new(const struct xray_state *state, uint32_t thread, gboolean chrome)
{
    struct xray_merge *m = g_new0(struct xray_merge, 1);
    m->state = state;
    m->serial = state->serial;
    m->thread = thread;
    m->run_count = state->runs->len;   /* every run, from the first */
    if (thread != UINT32_MAX) {
        const struct xray_thread *t = &g_array_index(state->threads, struct xray_thread, thread);
        m->first_run = t->first_run;
        m->run_count = t->run_count;
    }
    m->chrome = chrome;
    m->cursors = g_new0(struct run_cursor, m->run_count ? m->run_count : 1);
    m->heap = g_new(uint32_t, m->run_count ? m->run_count : 1);
    size_t reader_bytes = CLAMP(READER_BYTES_TOTAL / (m->run_count ? m->run_count : 1), 64u, 16u << 10);
    for (uint32_t c = 0; c < m->run_count; c++)
        xray_reader_init(&m->cursors[c].reader, reader_bytes);
    if (chrome) {
        m->chrome_nodes = g_new(uint32_t, state->threads->len ? state->threads->len : 1);
        m->trie_memo = g_new(struct trie_memo_slot, TRIE_MEMO_SLOTS);
        for (uint32_t i = 0; i < TRIE_MEMO_SLOTS; i++)
            m->trie_memo[i].node = UINT32_MAX;
    }
    return m;
}

void xray_merge_free(struct xray_merge *m)
{
    if (!m)
        return;
    for (uint32_t c = 0; c < m->run_count; c++)
        xray_reader_free(&m->cursors[c].reader);
    g_free(m->cursors);
    g_free(m->heap);
    g_free(m->chrome_nodes);
    g_free(m->trie_memo);
    g_free(m);
}

/* The ordinal of the first checkpoint after the merge's place. */
static uint64_t next_checkpoint_after(const struct xray_merge *m)
{
    const struct xray_state *state = m->state;
    if (m->building)
        return UINT64_MAX;
    if (m->thread == UINT32_MAX) {
        const GArray *ordinals = state->checkpoint_ordinals;
        size_t after = sorted_count_upto(ordinals->data, ordinals->len, sizeof(guint64), 0, m->ordinal);
        return after < ordinals->len ? g_array_index(ordinals, guint64, after) : UINT64_MAX;
    }
    const struct xray_thread *t = &g_array_index(state->threads, struct xray_thread, m->thread);
    if (t->spacing == 0 || t->records == 0)
        return UINT64_MAX;
    uint64_t next = (m->ordinal / t->spacing + 1) * t->spacing;
    return next < t->records ? next : UINT64_MAX;
}

static void start_from_runs(struct xray_merge *m)
{
    for (uint32_t c = 0; c < m->run_count; c++)
        m->cursors[c].at = g_array_index(m->state->runs, struct xray_run, m->first_run + c).start;
    if (m->chrome)
        for (guint t = 0; t < m->state->threads->len; t++)
            m->chrome_nodes[t] = UINT32_MAX;
    m->ordinal = 0;
    build_heap(m);
    m->next_checkpoint = next_checkpoint_after(m);
}

/* The last global checkpoint at or before ordinal. */
uint64_t xray_checkpoint_before(const struct xray_state *state, uint64_t ordinal)
{
    const GArray *ordinals = state->checkpoint_ordinals;   /* [0] == 0 */
    size_t after = sorted_count_upto(ordinals->data, ordinals->len, sizeof(guint64), 0, ordinal);
    return after ? after - 1 : 0;
}

/* Places the merge at the last checkpoint at or before ordinal. */
static void start_from_checkpoint(struct xray_merge *m, uint64_t ordinal)
{
    const struct xray_state *state = m->state;
    if (m->thread == UINT32_MAX) {
        if (state->checkpoint_ordinals->len == 0 || ordinal == 0) {
            start_from_runs(m);
            return;
        }
        uint64_t k = xray_checkpoint_before(state, ordinal);
        const uint32_t *words = &g_array_index(state->checkpoints, uint32_t, k * state->checkpoint_words);
        for (uint32_t c = 0; c < m->run_count; c++)
            memcpy(&m->cursors[c].at, words + c * XRAY_POSITION_WORDS, sizeof(struct xray_position));
        if (m->chrome)
            memcpy(m->chrome_nodes, words + (uint64_t)m->run_count * XRAY_POSITION_WORDS,
                   state->threads->len * sizeof(uint32_t));
        m->ordinal = g_array_index(state->checkpoint_ordinals, guint64, k);
    } else {
        const struct xray_thread *t = &g_array_index(state->threads, struct xray_thread, m->thread);
        if (t->spacing == 0 || t->records == 0 || ordinal == 0) {
            start_from_runs(m);
            return;
        }
        uint64_t k = MIN(ordinal, t->records - 1) / t->spacing;
        const struct xray_position *p = &g_array_index(state->thread_checkpoints, struct xray_position,
                                                       t->first_checkpoint + k * t->run_count);
        for (uint32_t c = 0; c < m->run_count; c++)
            m->cursors[c].at = p[c];
        m->ordinal = k * t->spacing;
    }
    build_heap(m);
    m->next_checkpoint = next_checkpoint_after(m);
}

/* TRUE when the merge's runs (and Chrome nodes) stand where the checkpoint
 * at its ordinal, global or the thread's, puts them. */
static gboolean checkpoint_agrees(const struct xray_merge *m)
{
    const struct xray_state *state = m->state;
    const struct xray_position *positions;
    const uint32_t *nodes = NULL;
    if (m->thread == UINT32_MAX) {
        uint64_t k = xray_checkpoint_before(state, m->ordinal);
        const uint32_t *words = &g_array_index(state->checkpoints, uint32_t, k * state->checkpoint_words);
        positions = (const struct xray_position *)words;
        nodes = words + (uint64_t)m->run_count * XRAY_POSITION_WORDS;
    } else {
        const struct xray_thread *t = &g_array_index(state->threads, struct xray_thread, m->thread);
        positions = &g_array_index(state->thread_checkpoints, struct xray_position,
                                   t->first_checkpoint + m->ordinal / t->spacing * t->run_count);
    }
    for (uint32_t c = 0; c < m->run_count; c++)
        if (memcmp(&m->cursors[c].at, &positions[c], sizeof positions[c]) != 0)
            return FALSE;
    return !m->chrome || !nodes || memcmp(m->chrome_nodes, nodes, state->threads->len * sizeof(uint32_t)) == 0;
}

/* A merge that goes on to a checkpoint's record must be where the
 * checkpoint says: a read that starts there starts from it.  With the
 * index pass's own checkpoints it is; a saved index that passed its
 * checksum yet disagrees with the log is caught here, and the checkpoint
 * wins, so the records are the same whichever way a reader came. */
static gboolean went_past_checkpoint(struct xray_merge *m)
{
    if (m->ordinal < m->next_checkpoint)
        return FALSE;
    if (m->ordinal == m->next_checkpoint && checkpoint_agrees(m)) {
        m->next_checkpoint = next_checkpoint_after(m);
        return FALSE;
    }
    return TRUE;
}

/* TRUE when a checkpoint lies after the merge's place and at or before ordinal. */
static gboolean checkpoint_between(const struct xray_merge *m, uint64_t ordinal)
{
    const struct xray_state *state = m->state;
    /* A reader going on from where the merge stands (every record of a
     * sequential read) needs no search. */
    if (ordinal <= m->ordinal)
        return FALSE;
    if (m->thread == UINT32_MAX) {
        if (state->checkpoint_ordinals->len == 0)
            return FALSE;
        return g_array_index(state->checkpoint_ordinals, guint64, xray_checkpoint_before(state, ordinal)) > m->ordinal;
    }
    uint64_t spacing = g_array_index(state->threads, struct xray_thread, m->thread).spacing;
    return spacing && ordinal / spacing > m->ordinal / spacing;
}

static uint32_t xray_chrome_lookup(const struct xray_state *state, uint32_t parent, uint32_t func_id)
{
    uint64_t key = ((uint64_t)parent << 32) | func_id;
    gpointer found = state->trie ? g_hash_table_lookup(state->trie, &key) : NULL;
    return found ? (uint32_t)(GPOINTER_TO_SIZE(found) - 1) : UINT32_MAX;
}

void xray_trie_index(struct xray_state *state, uint32_t id)
{
    const struct xray_stack_node *node = &g_array_index(state->stack_nodes, struct xray_stack_node, id);
    uint64_t key = ((uint64_t)node->parent << 32) | node->func_id;
    g_hash_table_insert(state->trie, g_memdup2(&key, sizeof key), GSIZE_TO_POINTER((gsize)id + 1));
}

/* llvm gives equal call paths of different threads the same stack id (its
 * "siblings"): one trie shared by all threads is the same thing. */
static uint32_t chrome_insert(struct xray_state *state, uint32_t parent, uint32_t func_id)
{
    uint32_t found = xray_chrome_lookup(state, parent, func_id);
    if (found != UINT32_MAX)
        return found;
    struct xray_stack_node node = { func_id, parent };
    g_array_append_val(state->stack_nodes, node);
    xray_trie_index(state, state->stack_nodes->len - 1);
    return state->stack_nodes->len - 1;
}

/* The trie node below parent for func_id (made while building); nodes
 * never change once made, so a remembered one stays right. */
static uint32_t chrome_child(struct xray_merge *m, uint32_t parent, uint32_t func_id)
{
    uint32_t hash = (uint32_t)(((parent * UINT64_C(0x9E3779B97F4A7C15)) ^ func_id) * UINT64_C(0x9E3779B97F4A7C15) >> 56);
    struct trie_memo_slot *slot = &m->trie_memo[hash % TRIE_MEMO_SLOTS];
    if (slot->node != UINT32_MAX && slot->parent == parent && slot->func_id == func_id)
        return slot->node;
    uint32_t node = m->building ? chrome_insert((struct xray_state *)m->state, parent, func_id)
                                : xray_chrome_lookup(m->state, parent, func_id);
    if (node != UINT32_MAX)
        *slot = (struct trie_memo_slot){ parent, func_id, node };
    return node;
}

/* llvm-xray convert --output-format=trace_event: an enter goes down the
 * trie; an exit closes frames up to the exited function or the root.  The
 * node shown is the one after an enter, before an exit. */
static uint32_t chrome_follow(struct xray_merge *m, const struct xray_record *r)
{
    uint32_t *cursor = &m->chrome_nodes[r->thread];
    if (r->kind == XRAY_ENTER || r->kind == XRAY_ENTER_ARG) {
        *cursor = chrome_child(m, *cursor, r->func_id);
        return *cursor;
    }
    if (r->kind != XRAY_EXIT && r->kind != XRAY_TAIL_EXIT)
        return UINT32_MAX;
    uint32_t shown = *cursor;
    const GArray *nodes = m->state->stack_nodes;
    while (*cursor != UINT32_MAX && *cursor < nodes->len) {
        const struct xray_stack_node *node = &g_array_index(nodes, struct xray_stack_node, *cursor);
        *cursor = node->parent;
        if (node->func_id == r->func_id)
            break;
    }
    return shown;
}

gboolean xray_merge_next(struct xray_merge *m, struct xray_record *out, uint32_t *stack_node)
{
    if (stack_node)
        *stack_node = UINT32_MAX;
    if (m->heap_len == 0)
        return FALSE;
    uint32_t top = m->heap[0];
    struct run_cursor *cursor = &m->cursors[top];
    *out = cursor->head;
    cursor->at = cursor->after;
    if (!load_head(m, top))
        m->heap[0] = m->heap[--m->heap_len];
    sift_down(m, 0);
    m->ordinal++;
    if (m->chrome && out->thread < m->state->threads->len) {
        uint32_t node = chrome_follow(m, out);
        if (stack_node)
            *stack_node = node;
    }
    return TRUE;
}

/* Each thread's last merges, freed when the thread ends. */
struct merge_cache {
    struct xray_merge *slots[CACHED_MERGES];
    uint64_t clock;
};

static void merge_cache_free(gpointer data)
{
    struct merge_cache *cache = data;
    for (int i = 0; i < CACHED_MERGES; i++)
        xray_merge_free(cache->slots[i]);
    g_free(cache);
}

static GPrivate merge_cache_key = G_PRIVATE_INIT(merge_cache_free);
/* The same pointer as merge_cache_key's (which frees it when the thread
 * ends), read without g_private_get's call for each record a view renders. */
static _Thread_local struct merge_cache *thread_merge_cache;

static struct merge_cache *merge_cache(void)
{
    struct merge_cache *cache = thread_merge_cache;
    if (cache)
        return cache;
    cache = thread_value(&merge_cache_key, sizeof *cache);
    thread_merge_cache = cache;
    return cache;
}

struct xray_merge *xray_merge_at(const struct xray_state *state, uint32_t thread, uint64_t ordinal,
                                 gboolean track_chrome)
{
    struct merge_cache *cache = merge_cache();
    struct xray_merge **cached = cache->slots;
    int slot = -1, victim = 0;
    for (int i = 0; i < CACHED_MERGES; i++) {
        struct xray_merge *m = cached[i];
        if (m && m->state == state && m->serial == state->serial && m->thread == thread &&
            (m->chrome || !track_chrome) && m->ordinal <= ordinal) {
            slot = i;
            break;
        }
        if (!m || (cached[victim] && m->used < cached[victim]->used))
            victim = i;
    }
    struct xray_merge *m;
    if (slot < 0) {
        xray_merge_free(cached[victim]);
        m = cached[victim] = merge_new(state, thread, track_chrome);
        start_from_checkpoint(m, ordinal);
    } else {
        m = cached[slot];
        if (checkpoint_between(m, ordinal) || went_past_checkpoint(m))
            start_from_checkpoint(m, ordinal);
    }
    struct xray_record skipped;
    while (m->ordinal < ordinal && xray_merge_next(m, &skipped, NULL)) {
    }
    m->used = ++cache->clock;
    return m;
}

void xray_merge_forget(const struct xray_state *state)
{
    struct merge_cache *cache = g_private_get(&merge_cache_key);
    for (int i = 0; cache && i < CACHED_MERGES; i++)
        if (cache->slots[i] && cache->slots[i]->state == state) {
            xray_merge_free(cache->slots[i]);
            cache->slots[i] = NULL;
        }
}

/* ---- the index pass's walk ---- */

/* A merge of thread t's runs from global checkpoint k, and how many of
 * its records lie before checkpoint k + 1 (the calls views walk these). */
struct xray_merge *xray_merge_interval(const struct xray_state *state, uint32_t thread, uint64_t k, uint64_t *count)
{
    const struct xray_thread *t = &g_array_index(state->threads, struct xray_thread, thread);
    struct xray_merge *m = merge_new(state, thread, FALSE);
    const uint32_t *words = &g_array_index(state->checkpoints, uint32_t, k * state->checkpoint_words);
    const uint32_t *next = k + 1 < state->checkpoint_ordinals->len ? words + state->checkpoint_words : NULL;
    uint64_t before = 0, after = 0;
    for (uint32_t c = 0; c < t->run_count; c++) {
        struct xray_position p;
        memcpy(&p, words + (uint64_t)(t->first_run + c) * XRAY_POSITION_WORDS, sizeof p);
        m->cursors[c].at = p;
        before += p.left;
        if (next) {
            memcpy(&p, next + (uint64_t)(t->first_run + c) * XRAY_POSITION_WORDS, sizeof p);
            after += p.left;
        }
    }
    *count = before > after ? before - after : 0;
    build_heap(m);
    return m;
}

/* A merge of every run placed at global checkpoint k, owned by the caller
 * (xray_merge_free): the events' pairing walks whole intervals with it. */
struct xray_merge *xray_merge_checkpoint(const struct xray_state *state, uint64_t k)
{
    struct xray_merge *m = merge_new(state, UINT32_MAX, FALSE);
    uint64_t ordinal = k < state->checkpoint_ordinals->len ? g_array_index(state->checkpoint_ordinals, guint64, k) : 0;
    start_from_checkpoint(m, ordinal);
    return m;
}

/* Per thread checkpoints (threads/<tid>/events) are evenly spaced. */
static void place_thread_spacings(struct xray_state *state)
{
    uint32_t threads = state->threads->len;
    uint64_t positions = 0;
    for (uint32_t i = 0; i < threads; i++) {
        struct xray_thread *t = &g_array_index(state->threads, struct xray_thread, i);
        t->spacing = MAX((uint64_t)LIMIT_XRAY_THREAD_CHECKPOINT_RECORDS,
                         (uint64_t)t->run_count * sizeof(struct xray_position) * LIMIT_XRAY_THREAD_CHECKPOINT_SHARE);
        t->first_checkpoint = positions;
        uint64_t count = t->records ? (t->records - 1) / t->spacing + 1 : 0;
        positions += count * t->run_count;
    }
    g_array_set_size(state->thread_checkpoints, (guint)positions);
}

/* Global checkpoints are placed where the records since the last one pay
 * for it: LIMIT_XRAY_CHECKPOINT_SHARE records per byte it takes (its run
 * positions, nodes and the call frames it is first to hold). */
static gboolean checkpoint_due(const struct xray_state *state, uint64_t ordinal, const struct xray_build_hooks *hooks,
                               void *data)
{
    const GArray *placed = state->checkpoint_ordinals;
    if (placed->len == 0)
        return TRUE;
    uint64_t since = ordinal - g_array_index(placed, guint64, placed->len - 1);
    if (since < LIMIT_XRAY_CHECKPOINT_RECORDS)
        return FALSE;
    uint64_t bytes = (uint64_t)state->checkpoint_words * sizeof(uint32_t) + sizeof(guint64) +
                     hooks->pending_bytes(data);
    return since >= bytes * LIMIT_XRAY_CHECKPOINT_SHARE;
}

void xray_merge_build(struct xray_state *state, const struct xray_build_hooks *hooks, void *data)
{
    place_thread_spacings(state);
    uint32_t runs = state->runs->len, threads = state->threads->len;
    state->checkpoint_words = (uint32_t)(runs * XRAY_POSITION_WORDS + 2 * (uint64_t)threads);
    g_array_set_size(state->checkpoints, 0);
    g_array_set_size(state->checkpoint_ordinals, 0);
    uint64_t *seen = g_new0(uint64_t, threads ? threads : 1);
    struct xray_merge *m = merge_new(state, UINT32_MAX, TRUE);
    m->building = TRUE;
    start_from_runs(m);
    struct xray_record record;
    while (m->heap_len) {
        if (checkpoint_due(state, m->ordinal, hooks, data)) {
            g_array_append_val(state->checkpoint_ordinals, m->ordinal);
            for (uint32_t c = 0; c < m->run_count; c++)
                g_array_append_vals(state->checkpoints, &m->cursors[c].at, XRAY_POSITION_WORDS);
            g_array_append_vals(state->checkpoints, m->chrome_nodes, threads);
            hooks->checkpoint(state, data);
        }
        uint32_t t = m->cursors[m->heap[0]].head.thread;
        struct xray_thread *thread = &g_array_index(state->threads, struct xray_thread, t);
        if (seen[t] % thread->spacing == 0 && seen[t] < thread->records) {
            uint64_t at = thread->first_checkpoint + seen[t] / thread->spacing * thread->run_count;
            for (uint32_t c = 0; c < thread->run_count; c++)
                g_array_index(state->thread_checkpoints, struct xray_position, at + c) =
                    m->cursors[thread->first_run + c].at;
        }
        xray_merge_next(m, &record, NULL);
        seen[t]++;
        hooks->visit(state, &record, data);
    }
    /* The walk decodes what the scan counted; should the log have changed
     * in between, the counts follow the walk. */
    state->records = m->ordinal;
    for (uint32_t t = 0; t < threads; t++)
        g_array_index(state->threads, struct xray_thread, t).records =
            MIN(seen[t], g_array_index(state->threads, struct xray_thread, t).records);
    xray_merge_free(m);
    g_free(seen);
}
