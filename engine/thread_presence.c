/* Which threads have events in which stretches between the common files'
 * cuts (thread_presence.h). */
#include <string.h>
#include <pthread.h>
#include "keyed_hash.h"
#include "saved_bytes.h"
#include "thread_presence.h"
#include "thread_value.h"
#include "tracefs_limits.h"

struct presence_key {
    int64_t pid, tid;
    uint32_t number;
};

struct thread_presence {
    uint64_t begin;
    const struct view_cursor *cuts;
    uint32_t cut_count;
    uint32_t stretches;        /* cut_count + 1 */
    GHashTable *numbers;       /* struct presence_key, its own key (pid and tid) */
    uint32_t threads;          /* numbered, up to LIMIT_PRESENCE_THREADS */
    uint32_t words;            /* 64-bit words per stretch's row */
    pthread_mutex_t lock;      /* publishing rows (pthread's: TSan does not see GLib's GMutex) */
    uint8_t *known;            /* per stretch; set (release) once its row is written, never after */
    uint64_t *bits;            /* stretches x words, made at the first row learned */
    uint64_t skipped;          /* stretches jumped over, for .tracefs/stats */
};

#define RECENT_THREADS 16u

/* What the calling thread learns for one sizing segment. */
struct presence_learner {
    const struct thread_presence *presence;   /* NULL: not learning */
    uint32_t first, count;     /* the stretches it covers */
    uint64_t *rows;            /* count x words */
    gboolean first_partial;    /* begun inside its first stretch: that one is not seen whole */
    uint32_t current;          /* the stretch of the last event, and where it ends */
    uint64_t current_end;
    /* Threads looked up lately, by the low bits of pid ^ tid: a trace's
     * threads take turns (rr's frames), and a hash lookup per event cost
     * the sizing of rr's /events 3 %. */
    struct presence_key recent[RECENT_THREADS];   /* number + 1; 0: empty */
};

static void learner_clear(struct presence_learner *learner)
{
    g_free(learner->rows);
    memset(learner, 0, sizeof *learner);
}

static void learner_free(void *data)
{
    learner_clear(data);
    g_free(data);
}

static GPrivate learner_key = G_PRIVATE_INIT(learner_free);

static guint key_hash(gconstpointer key)
{
    const struct presence_key *k = key;
    return keyed_hash_u64(keyed_mix64((uint64_t)k->pid) + (uint64_t)k->tid);
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
    const struct presence_key *x = a, *y = b;
    return x->pid == y->pid && x->tid == y->tid;
}

struct thread_presence *thread_presence_new(uint64_t begin, const struct view_cursor *cuts, uint32_t cut_count)
{
    for (uint32_t i = 0; i < cut_count; i++)
        if (cuts[i].word[0] <= (i ? cuts[i - 1].word[0] : begin))
            return NULL;
    struct thread_presence *presence = g_new0(struct thread_presence, 1);
    presence->begin = begin;
    presence->cuts = cuts;
    presence->cut_count = cut_count;
    presence->stretches = cut_count + 1;
    presence->numbers = g_hash_table_new_full(key_hash, key_equal, g_free, NULL);
    presence->known = g_new0(uint8_t, presence->stretches);
    pthread_mutex_init(&presence->lock, NULL);
    return presence;
}

void thread_presence_free(struct thread_presence *presence)
{
    if (!presence)
        return;
    g_hash_table_unref(presence->numbers);
    g_free(presence->known);
    g_free(presence->bits);
    pthread_mutex_destroy(&presence->lock);
    g_free(presence);
}

uint32_t thread_presence_add_thread(struct thread_presence *presence, int64_t pid, int64_t tid)
{
    struct presence_key probe = { pid, tid, 0 };
    const struct presence_key *found = g_hash_table_lookup(presence->numbers, &probe);
    if (found)
        return found->number;
    if (presence->threads >= LIMIT_PRESENCE_THREADS)
        return UINT32_MAX;
    struct presence_key *key = g_new(struct presence_key, 1);
    *key = (struct presence_key){ pid, tid, presence->threads++ };
    g_hash_table_add(presence->numbers, key);
    presence->words = (presence->threads + 63) / 64;
    return key->number;
}

/* The stretch holding word0: the number of cuts at or before it. */
static uint32_t stretch_of(const struct thread_presence *presence, uint64_t word0)
{
    uint32_t lo = 0, hi = presence->cut_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (presence->cuts[mid].word[0] <= word0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static uint64_t stretch_end(const struct thread_presence *presence, uint32_t stretch)
{
    return stretch < presence->cut_count ? presence->cuts[stretch].word[0] : UINT64_MAX;
}

static uint64_t stretch_start(const struct thread_presence *presence, uint32_t stretch)
{
    return stretch == 0 ? presence->begin : presence->cuts[stretch - 1].word[0];
}

static gboolean absent(const struct thread_presence *presence, uint32_t stretch, uint32_t thread)
{
    if (thread >= presence->threads || !__atomic_load_n(&presence->known[stretch], __ATOMIC_ACQUIRE))
        return FALSE;
    const uint64_t *row = presence->bits + (size_t)stretch * presence->words;
    return !(row[thread / 64] >> (thread % 64) & 1);
}

/* A learner that jumps over a stretch learns nothing wrong from it: only
 * a known stretch is jumped over, and a known one is never published
 * again. */
gboolean thread_presence_skip(struct thread_presence *presence, uint32_t thread, struct view_cursor *cursor,
                              uint64_t *stretch_end_out)
{
    uint32_t stretch = stretch_of(presence, cursor->word[0]);
    while (absent(presence, stretch, thread)) {
        __atomic_fetch_add(&presence->skipped, 1, __ATOMIC_RELAXED);
        if (stretch == presence->cut_count)
            return FALSE;
        *cursor = presence->cuts[stretch++];
    }
    *stretch_end_out = stretch_end(presence, stretch);
    return TRUE;
}

void thread_presence_learn_begin(struct thread_presence *presence, uint64_t start, uint64_t stop)
{
    struct presence_learner *learner = thread_value(&learner_key, sizeof *learner);
    learner_clear(learner);
    if (presence->threads == 0)
        return;
    uint32_t first = stretch_of(presence, start);
    uint32_t last = stop == UINT64_MAX ? presence->cut_count : stretch_of(presence, stop - 1);
    if (last < first)
        return;
    learner->presence = presence;
    learner->first = first;
    learner->count = last - first + 1;
    learner->rows = g_new0(uint64_t, (size_t)learner->count * presence->words);
    /* A segment begun inside a stretch does not see all of it. */
    learner->first_partial = start != stretch_start(presence, first);
    learner->current = first;
    learner->current_end = stretch_end(presence, first);
}

struct presence_learner *thread_presence_learner(const struct thread_presence *presence)
{
    struct presence_learner *learner = g_private_get(&learner_key);
    return learner && learner->presence == presence ? learner : NULL;
}

static uint32_t thread_number(struct presence_learner *learner, int64_t pid, int64_t tid)
{
    struct presence_key *recent = &learner->recent[(uint64_t)(pid ^ tid) % RECENT_THREADS];
    if (recent->number != 0 && recent->pid == pid && recent->tid == tid)
        return recent->number - 1;
    struct presence_key probe = { pid, tid, 0 };
    const struct presence_key *found = g_hash_table_lookup(learner->presence->numbers, &probe);
    if (!found)
        return UINT32_MAX;
    *recent = (struct presence_key){ pid, tid, found->number + 1 };
    return found->number;
}

void thread_presence_learn_event(struct presence_learner *learner, uint64_t word0, int64_t pid, int64_t tid)
{
    const struct thread_presence *presence = learner->presence;
    if (word0 >= learner->current_end || word0 < stretch_start(presence, learner->current)) {
        learner->current = stretch_of(presence, word0);
        learner->current_end = stretch_end(presence, learner->current);
    }
    uint32_t at = learner->current - learner->first;
    uint32_t number = thread_number(learner, pid, tid);
    if (at >= learner->count || number == UINT32_MAX)
        return;
    learner->rows[(size_t)at * presence->words + number / 64] |= UINT64_C(1) << (number % 64);
}

void thread_presence_learn_end(struct thread_presence *presence, gboolean whole)
{
    struct presence_learner *learner = g_private_get(&learner_key);
    if (!learner || learner->presence != presence)
        return;
    if (whole) {
        pthread_mutex_lock(&presence->lock);
        if (!presence->bits)
            presence->bits = g_new0(uint64_t, (size_t)presence->stretches * presence->words);
        for (uint32_t i = 0; i < learner->count; i++) {
            uint32_t stretch = learner->first + i;
            if ((i == 0 && learner->first_partial) || presence->known[stretch])
                continue;
            memcpy(presence->bits + (size_t)stretch * presence->words, learner->rows + (size_t)i * presence->words,
                   presence->words * sizeof(uint64_t));
            __atomic_store_n(&presence->known[stretch], 1, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&presence->lock);
    }
    learner_clear(learner);
}

/* Each stretch's flag, and the row of a known one; stretches and threads
 * first, since a row is only meaningful for the same numbering.  The rows
 * are saved only once every stretch is known: which ones a mount learned
 * before a damaged stretch depends on its thread count (workers size the
 * segments past a failing one that a serial pass never reaches), and the
 * saved index does not. */
void thread_presence_save(struct thread_presence *presence, struct saved_writer *out)
{
    saved_put_u64(out, presence ? presence->stretches : 0);
    saved_put_u64(out, presence ? presence->threads : 0);
    if (!presence)
        return;
    pthread_mutex_lock(&presence->lock);
    gboolean all_known = TRUE;
    for (uint32_t i = 0; i < presence->stretches; i++)
        all_known = all_known && presence->known[i];
    for (uint32_t i = 0; i < presence->stretches; i++) {
        saved_put_u64(out, all_known);
        for (uint32_t w = 0; all_known && w < presence->words; w++)
            saved_put_u64(out, presence->bits[(size_t)i * presence->words + w]);
    }
    pthread_mutex_unlock(&presence->lock);
}

gboolean thread_presence_load(struct thread_presence *presence, struct saved_reader *in)
{
    uint64_t stretches = saved_get_u64(in), threads = saved_get_u64(in);
    if (!presence)
        return !in->bad && stretches == 0 && threads == 0;
    if (in->bad || stretches != presence->stretches || threads != presence->threads)
        return FALSE;
    uint8_t *known = g_new0(uint8_t, stretches);
    uint64_t *bits = g_new0(uint64_t, (size_t)stretches * presence->words);
    for (uint32_t i = 0; i < stretches && !in->bad; i++) {
        known[i] = (uint8_t)saved_get_below(in, 2);
        for (uint32_t w = 0; known[i] && w < presence->words; w++)
            bits[(size_t)i * presence->words + w] = saved_get_u64(in);
    }
    /* Bits past the last thread would name no thread: a row with one is forged. */
    uint64_t spare = threads % 64 ? ~UINT64_C(0) << (threads % 64) : 0;
    for (uint32_t i = 0; i < stretches && spare && presence->words; i++)
        if (bits[(size_t)i * presence->words + presence->words - 1] & spare)
            in->bad = TRUE;
    if (!in->bad) {
        pthread_mutex_lock(&presence->lock);
        if (!presence->bits) {
            presence->bits = bits;
            bits = NULL;
            for (uint32_t i = 0; i < stretches; i++)
                __atomic_store_n(&presence->known[i], known[i], __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&presence->lock);
    }
    g_free(known);
    g_free(bits);
    return !in->bad;
}

void thread_presence_counts(const struct thread_presence *presence, uint32_t *known, uint32_t *stretches,
                            uint64_t *skipped)
{
    *known = 0;
    *stretches = presence ? presence->stretches : 0;
    *skipped = presence ? __atomic_load_n(&presence->skipped, __ATOMIC_RELAXED) : 0;
    for (uint32_t i = 0; i < *stretches; i++)
        *known += __atomic_load_n(&presence->known[i], __ATOMIC_RELAXED);
}
