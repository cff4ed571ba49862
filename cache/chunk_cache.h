/* One LRU cache of decompressed chunks for the whole process, with a byte
 * budget.  Thread-safe: a chunk wanted by many readers at once is loaded
 * once; a reader pins the chunk it parses so it cannot be evicted under it. */
#ifndef TRACEFS_CHUNK_CACHE_H
#define TRACEFS_CHUNK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct chunk_cache;

/* A pinned chunk: data stays valid until chunk_cache_release(). */
struct chunk {
    const uint8_t *data;
    size_t size;
};

/* Fills `out` (already sized to `size` bytes) with the chunk's content.
 * Returns 0, or a negative errno (-EIO for corrupt data). */
typedef int (*chunk_load_fn)(void *owner, uint64_t chunk_index, uint8_t *out, size_t size);

struct chunk_cache_stats {
    uint64_t hits, misses, evictions, load_errors;
    uint64_t waits;           /* gets that waited for another thread's load of the chunk */
    uint64_t recycled;        /* loads into the buffer of a chunk evicted for them */
    uint64_t bytes_held, bytes_budget, chunks_held, peak_bytes_held;
    uint64_t bytes_allowed;   /* the budget, or less while the process is near its ceiling */
    uint64_t ceiling;         /* resident bytes the process keeps under, or 0 */
};

struct chunk_cache *chunk_cache_new(uint64_t budget_bytes);
void chunk_cache_free(struct chunk_cache *cache);

/* Returns a new owner id: chunks are keyed by (owner id, chunk index). */
uint64_t chunk_cache_new_owner(struct chunk_cache *cache);

/* Gets chunk `chunk_index` of `owner_id`, loading it with `load` (size
 * bytes) when absent.  On success pins it and returns 0; *pin is passed to
 * chunk_cache_release() afterwards. */
int chunk_cache_get(struct chunk_cache *cache, uint64_t owner_id, uint64_t chunk_index,
                    size_t size, chunk_load_fn load, void *owner,
                    struct chunk *out, void **pin);
void chunk_cache_release(struct chunk_cache *cache, void *pin);
/* Releases a chunk its reader is done with (a sequential reader has
 * copied all of it): once unpinned it is the first to be evicted,
 * before chunks loaded ahead of that reader and not read yet, which plain
 * LRU would evict first (they were used before it). */
void chunk_cache_release_spent(struct chunk_cache *cache, void *pin);
/* Loads the chunk, unpinned, when it is neither held nor being loaded:
 * work done ahead of a reader never waits for another thread's load nor
 * repeats it.  Returns 1 when it loaded the chunk, 0 when there was
 * nothing to do, or a negative errno from `load`. */
int chunk_cache_prefetch(struct chunk_cache *cache, uint64_t owner_id, uint64_t chunk_index,
                         size_t size, chunk_load_fn load, void *owner);
/* true when the chunk is held or being loaded: a load ahead asked of
 * another thread for it would wake that thread for nothing. */
bool chunk_cache_holds(struct chunk_cache *cache, uint64_t owner_id, uint64_t chunk_index);

/* Counts `bytes` of memory a loader holds while it works (a streaming
 * decoder's window) against the budget, evicting to make room; the
 * loader gives them back with chunk_cache_unreserve when done. */
void chunk_cache_reserve(struct chunk_cache *cache, uint64_t bytes);
void chunk_cache_unreserve(struct chunk_cache *cache, uint64_t bytes);
/* For a buffer that grows (a worker's rendered record): reserves what
 * `held` exceeds *charged by and sets *charged to held; nothing when cache
 * is NULL.  The holder unreserves *charged when done. */
void chunk_cache_charge(struct chunk_cache *cache, uint64_t *charged, uint64_t held);

/* The memory rule bounds the whole process, and what is not cache (the
 * index, checkpoints, readers' working state, malloc's arenas) is known
 * only as a whole: with a ceiling, the cache grows only into half the room
 * the process has under it, and evicts when the process is over it, so the
 * caches yield to the rest.  `resident` reads the process's resident bytes
 * (NULL: resident_memory_bytes); it is read at most every
 * LIMIT_CACHE_RESIDENT_CHECK_MICROSECONDS, on a load or a reservation. */
typedef uint64_t (*chunk_cache_resident_fn)(void);
void chunk_cache_set_ceiling(struct chunk_cache *cache, uint64_t ceiling_bytes, chunk_cache_resident_fn resident);

/* Drops every unpinned chunk of an owner (the owner is going away). */
void chunk_cache_forget_owner(struct chunk_cache *cache, uint64_t owner_id);
/* Gives every unpinned chunk of from_owner to to_owner, its index moved by
 * index_offset (text kept under a segment's owner joins the view's). */
void chunk_cache_move_owner(struct chunk_cache *cache, uint64_t from_owner, uint64_t to_owner, uint64_t index_offset);

void chunk_cache_get_stats(struct chunk_cache *cache, struct chunk_cache_stats *out);

#endif
