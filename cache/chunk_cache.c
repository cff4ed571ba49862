/* LRU of decompressed chunks under one byte budget.
 *
 * One mutex guards the table and the LRU list; decompression runs outside
 * it.  A chunk being loaded is in the table in state LOADING, so a second
 * reader of the same chunk waits on the condition variable instead of
 * decompressing it again.  Pinned chunks (refs > 0) are never evicted, nor
 * is the chunk released last (unless released as spent, see
 * chunk_cache_release_spent): the budget may be exceeded by what readers
 * hold pinned and by that one chunk, which was pinned a moment before, so
 * the peak is no higher.  Without it a budget below one chunk (-o
 * cache_size=1M and rr's 1 MiB chunks) dropped every chunk as its reader
 * let go, and decoding record by record decompressed the chunk again for
 * each record (rr big-0's /events: 1,118 s instead of 0.27 s). */
#include <pthread.h>
#include <errno.h>
#include <string.h>
#include <glib.h>
#include "chunk_cache.h"
#include "resident_memory.h"
#include "tracefs_limits.h"

enum chunk_state { CHUNK_LOADING, CHUNK_READY };

struct cache_key {
    uint64_t owner_id;
    uint64_t chunk_index;
};

struct cache_entry {
    struct cache_key key;
    enum chunk_state state;
    uint8_t *data;
    size_t size;
    size_t capacity;          /* of data: size, or a recycled buffer's size */
    unsigned refs;
    GList lru_link;           /* in cache->lru when unpinned and ready */
};

struct chunk_cache {
    pthread_mutex_t lock;
    pthread_cond_t loaded;
    GHashTable *entries;      /* cache_key -> cache_entry */
    GQueue lru;               /* head = most recently released; spent chunks at the tail */
    uint64_t next_owner;
    struct chunk_cache_stats stats;
    chunk_cache_resident_fn resident;
    gint64 resident_checked_at;   /* monotonic microseconds; 0: never */
    /* Buffers of evicted chunks for the next loads (park_buffer_locked),
     * oldest first. */
    struct spare_buffer {
        uint8_t *data;
        size_t capacity;
    } spare[LIMIT_CACHE_SPARE_BUFFERS];
    unsigned spare_count;
    size_t spare_bytes;
};

static guint key_hash(gconstpointer p)
{
    const struct cache_key *k = p;
    uint64_t h = k->owner_id * 0x9E3779B97F4A7C15ull ^ (k->chunk_index + 0x632BE59BD9B4E019ull);
    return (guint)(h ^ (h >> 32));
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
    const struct cache_key *x = a, *y = b;
    return x->owner_id == y->owner_id && x->chunk_index == y->chunk_index;
}

static void entry_free(struct cache_entry *entry)
{
    g_free(entry->data);
    g_free(entry);
}

struct chunk_cache *chunk_cache_new(uint64_t budget_bytes)
{
    struct chunk_cache *cache = g_new0(struct chunk_cache, 1);
    pthread_mutex_init(&cache->lock, NULL);
    pthread_cond_init(&cache->loaded, NULL);
    cache->entries = g_hash_table_new(key_hash, key_equal);
    g_queue_init(&cache->lru);
    cache->stats.bytes_budget = budget_bytes;
    cache->stats.bytes_allowed = budget_bytes;
    cache->next_owner = 1;
    return cache;
}

void chunk_cache_free(struct chunk_cache *cache)
{
    if (!cache)
        return;
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, cache->entries);
    while (g_hash_table_iter_next(&it, NULL, &value))
        entry_free(value);
    g_hash_table_destroy(cache->entries);
    for (unsigned i = 0; i < cache->spare_count; i++)
        g_free(cache->spare[i].data);
    pthread_cond_destroy(&cache->loaded);
    pthread_mutex_destroy(&cache->lock);
    g_free(cache);
}

uint64_t chunk_cache_new_owner(struct chunk_cache *cache)
{
    pthread_mutex_lock(&cache->lock);
    uint64_t id = cache->next_owner++;
    pthread_mutex_unlock(&cache->lock);
    return id;
}

/* Keeps an evicted chunk's buffer for a later load, or frees it.  Above
 * the mmap threshold (64 KiB, frontend/main.c) a fresh buffer is a new
 * mapping whose first touch faults in and zeroes every page, and freeing
 * one unmaps it, which stops every thread of the process for a TLB flush:
 * a text block evicted to make room for a worker's record and a block
 * loaded a moment later cost both, hundreds of times a second. */
static struct spare_buffer take_spare_at_locked(struct chunk_cache *cache, unsigned i)
{
    struct spare_buffer spare = cache->spare[i];
    cache->spare_bytes -= spare.capacity;
    cache->spare_count--;
    memmove(&cache->spare[i], &cache->spare[i + 1], (cache->spare_count - i) * sizeof cache->spare[0]);
    return spare;
}

static void park_buffer_locked(struct chunk_cache *cache, uint8_t *data, size_t capacity)
{
    if (!data || capacity > LIMIT_CACHE_SPARE_BYTES) {
        g_free(data);
        return;
    }
    /* The oldest spares make room: sizes drift as a reader moves on. */
    while (cache->spare_count == LIMIT_CACHE_SPARE_BUFFERS || cache->spare_bytes + capacity > LIMIT_CACHE_SPARE_BYTES)
        g_free(take_spare_at_locked(cache, 0).data);
    cache->spare[cache->spare_count++] = (struct spare_buffer){ data, capacity };
    cache->spare_bytes += capacity;
}

static void remove_entry_locked(struct chunk_cache *cache, struct cache_entry *entry)
{
    g_hash_table_remove(cache->entries, &entry->key);
    cache->stats.bytes_held -= entry->capacity;
    cache->stats.chunks_held--;
    park_buffer_locked(cache, entry->data, entry->capacity);
    entry->data = NULL;
    entry_free(entry);
}

/* Buffers are allocated a little larger than asked, in steps of an eighth
 * of the size's power of two, so that an evicted text block (its spacing
 * and a part of a record) fits the next one of the same spacing. */
static size_t buffer_capacity(size_t size)
{
    size_t step = 1;
    while (step <= size / 16)
        step <<= 1;
    return size + (step - size % step) % step;
}

/* A recycled buffer may be up to twice the size asked: a view's text
 * blocks differ in size by up to half (segments thin their checkpoints
 * apart), and a buffer that does not fit is freed while a new one is
 * mapped and faulted in page by page (XRay big.fdr-tsc's `cat` with read-
 * ahead: 27,000 faults with an eighth's slack, 7,600 with this).  The
 * cache counts a buffer's capacity, so the slack stays within its budget. */
static gboolean buffer_fits(size_t capacity, size_t size)
{
    return capacity >= size && capacity - size <= size;
}

/* A buffer a load is waiting for: the first victim's that fits it, or a
 * spare one. */
struct recycled_buffer {
    size_t size;              /* wanted; 0: none wanted */
    uint8_t *data;
    size_t capacity;
};

/* Evicts unpinned chunks from the LRU's tail until within what is
 * allowed, keeping the head (the chunk released last, unless it was
 * spent).  A victim's buffer that fits `recycle` is handed to it; the
 * others are parked or freed (park_buffer_locked). */
static void evict_locked(struct chunk_cache *cache, struct recycled_buffer *recycle)
{
    uint64_t limit = MIN(cache->stats.bytes_budget, cache->stats.bytes_allowed);
    while (cache->stats.bytes_held > limit && cache->lru.tail != cache->lru.head) {
        struct cache_entry *victim = cache->lru.tail->data;
        g_queue_unlink(&cache->lru, &victim->lru_link);
        if (recycle && recycle->size && !recycle->data && victim->data && buffer_fits(victim->capacity, recycle->size)) {
            recycle->data = victim->data;
            recycle->capacity = victim->capacity;
            victim->data = NULL;
        }
        remove_entry_locked(cache, victim);
        cache->stats.evictions++;
    }
}

static void take_spare_locked(struct chunk_cache *cache, struct recycled_buffer *recycle)
{
    for (unsigned i = cache->spare_count; i-- > 0;) {
        if (buffer_fits(cache->spare[i].capacity, recycle->size)) {
            struct spare_buffer spare = take_spare_at_locked(cache, i);
            recycle->data = spare.data;
            recycle->capacity = spare.capacity;
            return;
        }
    }
}

/* Sets what the cache may hold from the process's resident memory: half
 * the room under the ceiling more than it holds (the chunk and text caches
 * both grow into it), or less by the excess over it. */
static void follow_ceiling_locked(struct chunk_cache *cache)
{
    if (!cache->stats.ceiling)
        return;
    gint64 now = g_get_monotonic_time();
    if (cache->resident_checked_at && now - cache->resident_checked_at < LIMIT_CACHE_RESIDENT_CHECK_MICROSECONDS)
        return;
    cache->resident_checked_at = now;
    uint64_t resident = cache->resident(), held = cache->stats.bytes_held, ceiling = cache->stats.ceiling;
    uint64_t allowed;
    if (resident == 0)
        allowed = cache->stats.bytes_budget;
    else if (resident > ceiling)
        allowed = held > resident - ceiling ? held - (resident - ceiling) : 0;
    else
        allowed = held + (ceiling - resident) / 2;
    cache->stats.bytes_allowed = MIN(allowed, cache->stats.bytes_budget);
}

void chunk_cache_set_ceiling(struct chunk_cache *cache, uint64_t ceiling_bytes, chunk_cache_resident_fn resident)
{
    pthread_mutex_lock(&cache->lock);
    cache->stats.ceiling = ceiling_bytes;
    cache->resident = resident ? resident : resident_memory_bytes;
    cache->resident_checked_at = 0;
    cache->stats.bytes_allowed = cache->stats.bytes_budget;
    pthread_mutex_unlock(&cache->lock);
}

static void pin_locked(struct chunk_cache *cache, struct cache_entry *entry)
{
    if (entry->refs++ == 0 && entry->state == CHUNK_READY)
        g_queue_unlink(&cache->lru, &entry->lru_link);
}

static int load_entry(struct chunk_cache *cache, struct cache_entry *entry,
                      chunk_load_fn load, void *owner)
{
    uint8_t *data = entry->data ? entry->data : g_try_malloc(MAX(entry->capacity, (size_t)1));
    entry->data = NULL;
    int rc = data ? load(owner, entry->key.chunk_index, data, entry->size) : -ENOMEM;
    pthread_mutex_lock(&cache->lock);
    if (rc < 0) {
        g_free(data);
        cache->stats.bytes_held -= entry->capacity;
        cache->stats.load_errors++;
        /* Waiters retry the load themselves and get the same error. */
        g_hash_table_remove(cache->entries, &entry->key);
        pthread_cond_broadcast(&cache->loaded);
        pthread_mutex_unlock(&cache->lock);
        g_free(entry);
        return rc;
    }
    entry->data = data;
    entry->state = CHUNK_READY;
    cache->stats.chunks_held++;
    pthread_cond_broadcast(&cache->loaded);
    pthread_mutex_unlock(&cache->lock);
    return 0;
}

/* Puts a LOADING entry for `key` in the table, pinned once, and makes
 * room for it; called with the lock held. */
static struct cache_entry *start_load_locked(struct chunk_cache *cache, const struct cache_key *key, size_t size)
{
    struct cache_entry *entry = g_new0(struct cache_entry, 1);
    entry->key = *key;
    entry->state = CHUNK_LOADING;
    entry->size = size;
    entry->capacity = buffer_capacity(size);
    entry->refs = 1;
    entry->lru_link.data = entry;
    g_hash_table_insert(cache->entries, &entry->key, entry);
    cache->stats.misses++;
    /* Counted from before its load: the buffer a loader (a worker, a
     * FUSE thread) fills is memory held too, and evictions make room
     * for it first, so that loads under way never take the cache past
     * its budget. */
    cache->stats.bytes_held += entry->capacity;
    if (cache->stats.bytes_held > cache->stats.peak_bytes_held)
        cache->stats.peak_bytes_held = cache->stats.bytes_held;
    follow_ceiling_locked(cache);
    struct recycled_buffer recycle = { .size = size };
    evict_locked(cache, &recycle);
    if (!recycle.data)
        take_spare_locked(cache, &recycle);
    if (recycle.data) {
        /* Held as its own capacity; the eviction that found it may have
         * left room for a new buffer that is no longer needed. */
        cache->stats.bytes_held = cache->stats.bytes_held - entry->capacity + recycle.capacity;
        entry->data = recycle.data;
        entry->capacity = recycle.capacity;
        cache->stats.recycled++;
        evict_locked(cache, NULL);
    }
    return entry;
}

int chunk_cache_get(struct chunk_cache *cache, uint64_t owner_id, uint64_t chunk_index,
                    size_t size, chunk_load_fn load, void *owner,
                    struct chunk *out, void **pin)
{
    struct cache_key key = { owner_id, chunk_index };
    pthread_mutex_lock(&cache->lock);
    for (;;) {
        struct cache_entry *entry = g_hash_table_lookup(cache->entries, &key);
        if (entry && entry->state == CHUNK_READY) {
            pin_locked(cache, entry);
            cache->stats.hits++;
            pthread_mutex_unlock(&cache->lock);
            *out = (struct chunk){ entry->data, entry->size };
            *pin = entry;
            return 0;
        }
        if (entry) {                      /* another thread is loading it */
            cache->stats.waits++;
            pthread_cond_wait(&cache->loaded, &cache->lock);
            continue;
        }
        entry = start_load_locked(cache, &key, size);
        pthread_mutex_unlock(&cache->lock);
        int rc = load_entry(cache, entry, load, owner);
        if (rc < 0)
            return rc;
        *out = (struct chunk){ entry->data, entry->size };
        *pin = entry;
        return 0;
    }
}

int chunk_cache_prefetch(struct chunk_cache *cache, uint64_t owner_id, uint64_t chunk_index,
                         size_t size, chunk_load_fn load, void *owner)
{
    struct cache_key key = { owner_id, chunk_index };
    pthread_mutex_lock(&cache->lock);
    if (g_hash_table_lookup(cache->entries, &key)) {
        pthread_mutex_unlock(&cache->lock);
        return 0;
    }
    struct cache_entry *entry = start_load_locked(cache, &key, size);
    pthread_mutex_unlock(&cache->lock);
    int rc = load_entry(cache, entry, load, owner);
    if (rc < 0)
        return rc;
    chunk_cache_release(cache, entry);
    return 1;
}

bool chunk_cache_holds(struct chunk_cache *cache, uint64_t owner_id, uint64_t chunk_index)
{
    struct cache_key key = { owner_id, chunk_index };
    pthread_mutex_lock(&cache->lock);
    bool held = g_hash_table_lookup(cache->entries, &key) != NULL;
    pthread_mutex_unlock(&cache->lock);
    return held;
}

/* A spent chunk goes to the LRU's tail, where eviction starts; when it is
 * the only unpinned chunk it is also the head, and stays (evict_locked). */
static void release(struct chunk_cache *cache, struct cache_entry *entry, gboolean spent)
{
    if (!entry)
        return;
    pthread_mutex_lock(&cache->lock);
    if (--entry->refs == 0) {
        if (spent)
            g_queue_push_tail_link(&cache->lru, &entry->lru_link);
        else
            g_queue_push_head_link(&cache->lru, &entry->lru_link);
        evict_locked(cache, NULL);
    }
    pthread_mutex_unlock(&cache->lock);
}

void chunk_cache_release(struct chunk_cache *cache, void *pin)
{
    release(cache, pin, FALSE);
}

void chunk_cache_release_spent(struct chunk_cache *cache, void *pin)
{
    release(cache, pin, TRUE);
}

void chunk_cache_reserve(struct chunk_cache *cache, uint64_t bytes)
{
    pthread_mutex_lock(&cache->lock);
    cache->stats.bytes_held += bytes;
    if (cache->stats.bytes_held > cache->stats.peak_bytes_held)
        cache->stats.peak_bytes_held = cache->stats.bytes_held;
    follow_ceiling_locked(cache);
    evict_locked(cache, NULL);
    pthread_mutex_unlock(&cache->lock);
}

void chunk_cache_charge(struct chunk_cache *cache, uint64_t *charged, uint64_t held)
{
    if (!cache || held <= *charged)
        return;
    chunk_cache_reserve(cache, held - *charged);
    *charged = held;
}

void chunk_cache_unreserve(struct chunk_cache *cache, uint64_t bytes)
{
    pthread_mutex_lock(&cache->lock);
    cache->stats.bytes_held -= bytes;
    pthread_mutex_unlock(&cache->lock);
}

void chunk_cache_forget_owner(struct chunk_cache *cache, uint64_t owner_id)
{
    pthread_mutex_lock(&cache->lock);
    for (GList *link = cache->lru.head; link;) {
        struct cache_entry *entry = link->data;
        link = link->next;
        if (entry->key.owner_id == owner_id) {
            g_queue_unlink(&cache->lru, &entry->lru_link);
            remove_entry_locked(cache, entry);
        }
    }
    pthread_mutex_unlock(&cache->lock);
}

void chunk_cache_move_owner(struct chunk_cache *cache, uint64_t from_owner, uint64_t to_owner, uint64_t index_offset)
{
    pthread_mutex_lock(&cache->lock);
    GPtrArray *moved = g_ptr_array_new();
    for (GList *link = cache->lru.head; link; link = link->next) {
        struct cache_entry *entry = link->data;
        if (entry->key.owner_id == from_owner) {
            g_hash_table_steal(cache->entries, &entry->key);
            g_ptr_array_add(moved, entry);
        }
    }
    for (guint i = 0; i < moved->len; i++) {
        struct cache_entry *entry = moved->pdata[i];
        entry->key = (struct cache_key){ to_owner, entry->key.chunk_index + index_offset };
        g_hash_table_insert(cache->entries, &entry->key, entry);
    }
    g_ptr_array_free(moved, TRUE);
    pthread_mutex_unlock(&cache->lock);
}

void chunk_cache_get_stats(struct chunk_cache *cache, struct chunk_cache_stats *out)
{
    pthread_mutex_lock(&cache->lock);
    *out = cache->stats;
    pthread_mutex_unlock(&cache->lock);
}
