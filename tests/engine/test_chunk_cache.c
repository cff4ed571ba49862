/* The chunk cache: budget, pins, concurrent loads of one chunk. */
#include <errno.h>
#include <string.h>
#include <glib.h>
#include "chunk_cache.h"
#include "resident_memory.h"
#include "tracefs_limits.h"

#define CHUNK 1024

struct counting_owner {
    gint loads;
    gint fail_index;      /* -1: never fail */
};

static int fill_chunk(void *owner, uint64_t index, uint8_t *out, size_t size)
{
    struct counting_owner *counting = owner;
    g_atomic_int_inc(&counting->loads);
    if ((gint)index == counting->fail_index)
        return -EIO;
    g_usleep(200);   /* widen the window in which concurrent gets meet */
    memset(out, (int)(index & 0xff), size);
    return 0;
}

static void test_eviction_under_budget(void)
{
    struct chunk_cache *cache = chunk_cache_new(4 * CHUNK);
    struct counting_owner owner = { 0, -1 };
    uint64_t id = chunk_cache_new_owner(cache);
    for (uint64_t i = 0; i < 10; i++) {
        struct chunk chunk;
        void *pin;
        g_assert_cmpint(chunk_cache_get(cache, id, i, CHUNK, fill_chunk, &owner, &chunk, &pin), ==, 0);
        g_assert_cmpuint(chunk.size, ==, CHUNK);
        g_assert_cmpuint(chunk.data[CHUNK - 1], ==, i);
        chunk_cache_release(cache, pin);
    }
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(cache, &stats);
    g_assert_cmpuint(stats.bytes_held, <=, 4 * CHUNK);
    g_assert_cmpuint(stats.evictions, ==, 6);
    g_assert_cmpuint(stats.misses, ==, 10);
    /* The most recent chunks are still there: a hit, no load. */
    struct chunk chunk;
    void *pin;
    g_assert_cmpint(chunk_cache_get(cache, id, 9, CHUNK, fill_chunk, &owner, &chunk, &pin), ==, 0);
    chunk_cache_release(cache, pin);
    g_assert_cmpint(owner.loads, ==, 10);
    /* The oldest was evicted: loaded again. */
    g_assert_cmpint(chunk_cache_get(cache, id, 0, CHUNK, fill_chunk, &owner, &chunk, &pin), ==, 0);
    chunk_cache_release(cache, pin);
    g_assert_cmpint(owner.loads, ==, 11);
    chunk_cache_free(cache);
}

/* A chunk loaded into a full cache takes the buffer of the chunk evicted
 * for it when it fits (no fresh mapping to fault in); a smaller or more
 * than twice larger one is not taken, and the held bytes stay within the budget
 * whatever the sizes. */
static void test_evicted_buffers_are_recycled(void)
{
    enum { BIG = 96 * 1024 };
    struct chunk_cache *cache = chunk_cache_new(2 * BIG);
    struct counting_owner owner = { 0, -1 };
    uint64_t id = chunk_cache_new_owner(cache);
    size_t sizes[] = { BIG, BIG - 100, BIG, BIG + 5000, 1000, BIG, 3 * BIG / 2, BIG, BIG };
    for (uint64_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        struct chunk chunk;
        void *pin;
        g_assert_cmpint(chunk_cache_get(cache, id, i, sizes[i], fill_chunk, &owner, &chunk, &pin), ==, 0);
        g_assert_cmpuint(chunk.size, ==, sizes[i]);
        for (size_t at = 0; at < chunk.size; at += 997)
            g_assert_cmpuint(chunk.data[at], ==, i);
        chunk_cache_release(cache, pin);
        struct chunk_cache_stats stats;
        chunk_cache_get_stats(cache, &stats);
        g_assert_cmpuint(stats.bytes_held, <=, 2 * BIG * 9 / 8 + 3 * BIG / 2 * 9 / 8);
    }
    chunk_cache_forget_owner(cache, id);
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(cache, &stats);
    g_assert_cmpuint(stats.recycled, >=, 2);
    g_assert_cmpuint(stats.recycled, <, stats.evictions);
    g_assert_cmpuint(stats.bytes_held, ==, 0);
    chunk_cache_free(cache);
}

/* A view's text blocks differ in size by up to half: an evicted buffer up
 * to twice the size asked is taken, a bigger one is not. */
static void test_recycled_buffer_up_to_twice(void)
{
    enum { BIG = 96 * 1024 };
    struct chunk_cache *cache = chunk_cache_new(2 * BIG + BIG / 8);
    struct counting_owner owner = { 0, -1 };
    uint64_t id = chunk_cache_new_owner(cache);
    size_t sizes[] = { BIG, BIG, BIG * 3 / 5, BIG / 4 };
    uint64_t recycled[] = { 0, 0, 1, 1 };
    for (uint64_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        struct chunk chunk;
        void *pin;
        g_assert_cmpint(chunk_cache_get(cache, id, i, sizes[i], fill_chunk, &owner, &chunk, &pin), ==, 0);
        g_assert_cmpuint(chunk.data[sizes[i] - 1], ==, i);
        chunk_cache_release(cache, pin);
        struct chunk_cache_stats stats;
        chunk_cache_get_stats(cache, &stats);
        g_assert_cmpuint(stats.recycled, ==, recycled[i]);
        g_assert_cmpuint(stats.bytes_held, <=, 2 * BIG + BIG / 8);
    }
    chunk_cache_free(cache);
}

/* A chunk evicted for a reservation (a worker's record growing) leaves its
 * buffer for the next load, which then needs no fresh mapping; spares are
 * bounded, and the budget holds. */
static void test_spare_buffer_after_reserve(void)
{
    enum { BIG = 96 * 1024 };
    struct chunk_cache *cache = chunk_cache_new(2 * BIG);
    struct counting_owner owner = { 0, -1 };
    uint64_t id = chunk_cache_new_owner(cache);
    struct chunk chunk;
    void *pin;
    for (uint64_t i = 0; i < 2; i++) {
        g_assert_cmpint(chunk_cache_get(cache, id, i, BIG, fill_chunk, &owner, &chunk, &pin), ==, 0);
        chunk_cache_release(cache, pin);
    }
    chunk_cache_reserve(cache, BIG);      /* evicts chunk 0 */
    chunk_cache_unreserve(cache, BIG);
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(cache, &stats);
    g_assert_cmpuint(stats.evictions, ==, 1);
    g_assert_cmpuint(stats.recycled, ==, 0);
    g_assert_cmpint(chunk_cache_get(cache, id, 2, BIG - 10, fill_chunk, &owner, &chunk, &pin), ==, 0);
    g_assert_cmpuint(chunk.data[0], ==, 2);
    g_assert_cmpuint(chunk.data[BIG - 11], ==, 2);
    chunk_cache_release(cache, pin);
    chunk_cache_get_stats(cache, &stats);
    g_assert_cmpuint(stats.recycled, ==, 1);
    g_assert_cmpuint(stats.bytes_held, <=, 2 * BIG);
    /* Many evictions with no load to take their buffers: the spares stay
     * within their bound (checked by ASan's leak report and the budget). */
    for (int round = 0; round < 8; round++) {
        g_assert_cmpint(chunk_cache_get(cache, id, 10 + (uint64_t)round, BIG / 4 + (size_t)round * 1000, fill_chunk,
                                        &owner, &chunk, &pin), ==, 0);
        chunk_cache_release(cache, pin);
        chunk_cache_reserve(cache, 2 * BIG);
        chunk_cache_unreserve(cache, 2 * BIG);
    }
    chunk_cache_get_stats(cache, &stats);
    g_assert_cmpuint(stats.bytes_held, <=, 2 * BIG);
    chunk_cache_forget_owner(cache, id);
    chunk_cache_free(cache);
}

static void test_pinned_chunks_survive(void)
{
    /* A budget smaller than one chunk: pinned data must stay valid. */
    struct chunk_cache *cache = chunk_cache_new(CHUNK / 2);
    struct counting_owner owner = { 0, -1 };
    uint64_t id = chunk_cache_new_owner(cache);
    struct chunk first, second;
    void *pin_first, *pin_second;
    g_assert_cmpint(chunk_cache_get(cache, id, 1, CHUNK, fill_chunk, &owner, &first, &pin_first), ==, 0);
    g_assert_cmpint(chunk_cache_get(cache, id, 2, CHUNK, fill_chunk, &owner, &second, &pin_second), ==, 0);
    g_assert_cmpuint(first.data[0], ==, 1);
    g_assert_cmpuint(second.data[0], ==, 2);
    chunk_cache_release(cache, pin_first);
    chunk_cache_release(cache, pin_second);
    /* Only the chunk released last stays (see the next test). */
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(cache, &stats);
    g_assert_cmpuint(stats.bytes_held, ==, CHUNK);
    g_assert_cmpuint(stats.chunks_held, ==, 1);
    chunk_cache_free(cache);
}

/* A budget below one chunk (-o cache_size=1M against 1 MiB chunks) keeps the
 * chunk released last, so that decoding record by record, each record
 * pinning and releasing the same chunk, loads it once, not once per record. */
static void test_budget_below_one_chunk_keeps_last(void)
{
    struct chunk_cache *cache = chunk_cache_new(CHUNK / 2);
    struct counting_owner owner = { 0, -1 };
    uint64_t id = chunk_cache_new_owner(cache);
    struct chunk chunk;
    void *pin;
    for (int record = 0; record < 100; record++) {
        g_assert_cmpint(chunk_cache_get(cache, id, 5, CHUNK, fill_chunk, &owner, &chunk, &pin), ==, 0);
        g_assert_cmpuint(chunk.data[0], ==, 5);
        chunk_cache_release(cache, pin);
    }
    g_assert_cmpint(owner.loads, ==, 1);
    /* The next chunk takes its place: never more than one kept. */
    g_assert_cmpint(chunk_cache_get(cache, id, 6, CHUNK, fill_chunk, &owner, &chunk, &pin), ==, 0);
    chunk_cache_release(cache, pin);
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(cache, &stats);
    g_assert_cmpuint(stats.chunks_held, ==, 1);
    g_assert_cmpuint(stats.evictions, ==, 1);
    g_assert_cmpint(chunk_cache_get(cache, id, 6, CHUNK, fill_chunk, &owner, &chunk, &pin), ==, 0);
    chunk_cache_release(cache, pin);
    g_assert_cmpint(owner.loads, ==, 2);
    chunk_cache_free(cache);
}

/* A sequential reader's spent chunks are evicted before the chunks loaded
 * ahead of it, though those were used earlier: plain LRU would evict the
 * next chunk the reader wants. */
static void test_spent_chunks_evicted_first(void)
{
    struct chunk_cache *cache = chunk_cache_new(3 * CHUNK);
    struct counting_owner owner = { 0, -1 };
    uint64_t id = chunk_cache_new_owner(cache);
    for (uint64_t i = 1; i <= 3; i++)                  /* loaded ahead */
        g_assert_cmpint(chunk_cache_prefetch(cache, id, i, CHUNK, fill_chunk, &owner), ==, 1);
    struct chunk chunk;
    void *pin;
    g_assert_cmpint(chunk_cache_get(cache, id, 3, CHUNK, fill_chunk, &owner, &chunk, &pin), ==, 0);
    chunk_cache_release_spent(cache, pin);
    g_assert_cmpint(chunk_cache_prefetch(cache, id, 4, CHUNK, fill_chunk, &owner), ==, 1);
    g_assert_false(chunk_cache_holds(cache, id, 3));
    g_assert_true(chunk_cache_holds(cache, id, 1));     /* the oldest, not read yet */
    g_assert_true(chunk_cache_holds(cache, id, 2));
    /* Released normally, the read chunk would have stayed and 1 gone. */
    g_assert_cmpint(chunk_cache_get(cache, id, 2, CHUNK, fill_chunk, &owner, &chunk, &pin), ==, 0);
    chunk_cache_release(cache, pin);
    g_assert_cmpint(chunk_cache_prefetch(cache, id, 5, CHUNK, fill_chunk, &owner), ==, 1);
    g_assert_false(chunk_cache_holds(cache, id, 1));
    g_assert_true(chunk_cache_holds(cache, id, 2));
    g_assert_cmpint(owner.loads, ==, 5);
    chunk_cache_free(cache);
}

/* Under a budget below one chunk, a spent chunk that is the only one
 * unpinned stays, as the chunk released last does. */
static void test_spent_chunk_alone_stays(void)
{
    struct chunk_cache *cache = chunk_cache_new(CHUNK / 2);
    struct counting_owner owner = { 0, -1 };
    uint64_t id = chunk_cache_new_owner(cache);
    struct chunk chunk;
    void *pin;
    for (int record = 0; record < 10; record++) {
        g_assert_cmpint(chunk_cache_get(cache, id, 7, CHUNK, fill_chunk, &owner, &chunk, &pin), ==, 0);
        chunk_cache_release_spent(cache, pin);
    }
    g_assert_cmpint(owner.loads, ==, 1);
    chunk_cache_free(cache);
}

static void test_load_error_is_not_cached(void)
{
    struct chunk_cache *cache = chunk_cache_new(8 * CHUNK);
    struct counting_owner owner = { 0, 3 };
    uint64_t id = chunk_cache_new_owner(cache);
    struct chunk chunk;
    void *pin;
    g_assert_cmpint(chunk_cache_get(cache, id, 3, CHUNK, fill_chunk, &owner, &chunk, &pin), ==, -EIO);
    g_assert_cmpint(chunk_cache_get(cache, id, 3, CHUNK, fill_chunk, &owner, &chunk, &pin), ==, -EIO);
    g_assert_cmpint(owner.loads, ==, 2);
    chunk_cache_free(cache);
}

struct reader {
    struct chunk_cache *cache;
    uint64_t owner_id;
    struct counting_owner *owner;
    gint mismatches;
};

static gpointer read_many(gpointer data)
{
    struct reader *reader = data;
    for (int round = 0; round < 2000; round++) {
        uint64_t index = (uint64_t)g_random_int_range(0, 16);
        struct chunk chunk;
        void *pin;
        if (chunk_cache_get(reader->cache, reader->owner_id, index, CHUNK, fill_chunk, reader->owner, &chunk, &pin) != 0) {
            g_atomic_int_inc(&reader->mismatches);
            continue;
        }
        if (chunk.data[0] != index || chunk.data[CHUNK - 1] != index)
            g_atomic_int_inc(&reader->mismatches);
        chunk_cache_release(reader->cache, pin);
    }
    return NULL;
}

static void test_concurrent_gets(void)
{
    struct chunk_cache *cache = chunk_cache_new(6 * CHUNK);
    struct counting_owner owner = { 0, -1 };
    struct reader reader = { cache, chunk_cache_new_owner(cache), &owner, 0 };
    GThread *threads[8];
    for (int i = 0; i < 8; i++)
        threads[i] = g_thread_new("reader", read_many, &reader);
    for (int i = 0; i < 8; i++)
        g_thread_join(threads[i]);
    g_assert_cmpint(reader.mismatches, ==, 0);
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(cache, &stats);
    g_assert_cmpuint(stats.hits + stats.misses, ==, 8 * 2000);
    g_assert_cmpuint(stats.chunks_held * CHUNK, <=, 6 * CHUNK);
    chunk_cache_free(cache);
}

static gpointer get_same_chunk(gpointer data)
{
    struct reader *reader = data;
    struct chunk chunk;
    void *pin;
    if (chunk_cache_get(reader->cache, reader->owner_id, 7, CHUNK, fill_chunk, reader->owner, &chunk, &pin) == 0)
        chunk_cache_release(reader->cache, pin);
    return NULL;
}

static void test_one_load_for_many_readers(void)
{
    struct chunk_cache *cache = chunk_cache_new(64 * CHUNK);
    struct counting_owner owner = { 0, -1 };
    struct reader reader = { cache, chunk_cache_new_owner(cache), &owner, 0 };
    GThread *threads[16];
    for (int i = 0; i < 16; i++)
        threads[i] = g_thread_new("reader", get_same_chunk, &reader);
    for (int i = 0; i < 16; i++)
        g_thread_join(threads[i]);
    g_assert_cmpint(owner.loads, ==, 1);
    chunk_cache_free(cache);
}

/* The process's resident memory as the ceiling test sets it. */
static uint64_t fake_resident;

static uint64_t read_fake_resident(void)
{
    return fake_resident;
}

static void load_and_release(struct chunk_cache *cache, uint64_t id, uint64_t index, struct counting_owner *owner)
{
    struct chunk chunk;
    void *pin;
    g_assert_cmpint(chunk_cache_get(cache, id, index, CHUNK, fill_chunk, owner, &chunk, &pin), ==, 0);
    chunk_cache_release(cache, pin);
}

/* The next load reads the resident memory again. */
static void wait_for_next_reading(void)
{
    g_usleep(2 * LIMIT_CACHE_RESIDENT_CHECK_MICROSECONDS);
}

static void test_ceiling_makes_the_cache_yield(void)
{
    const uint64_t ceiling = 1000 * CHUNK;
    struct chunk_cache *cache = chunk_cache_new(20 * CHUNK);
    chunk_cache_set_ceiling(cache, ceiling, read_fake_resident);
    struct counting_owner owner = { 0, -1 };
    uint64_t id = chunk_cache_new_owner(cache);
    struct chunk_cache_stats stats;

    /* Far under the ceiling: the budget holds. */
    fake_resident = ceiling / 2;
    for (uint64_t i = 0; i < 10; i++) {
        wait_for_next_reading();
        load_and_release(cache, id, i, &owner);
    }
    chunk_cache_get_stats(cache, &stats);
    g_assert_cmpuint(stats.bytes_held, ==, 10 * CHUNK);
    g_assert_cmpuint(stats.bytes_allowed, ==, 20 * CHUNK);
    g_assert_cmpuint(stats.ceiling, ==, ceiling);

    /* The rest of the process grew 4 chunks past the ceiling: the cache
     * gives them back on its next load, which itself takes one more. */
    fake_resident = ceiling + 4 * CHUNK;
    wait_for_next_reading();
    load_and_release(cache, id, 10, &owner);
    chunk_cache_get_stats(cache, &stats);
    g_assert_cmpuint(stats.bytes_allowed, ==, 7 * CHUNK);
    g_assert_cmpuint(stats.bytes_held, ==, 7 * CHUNK);

    /* Two chunks of room under the ceiling: the cache grows into half. */
    fake_resident = ceiling - 2 * CHUNK;
    wait_for_next_reading();
    load_and_release(cache, id, 11, &owner);
    chunk_cache_get_stats(cache, &stats);
    g_assert_cmpuint(stats.bytes_allowed, ==, 9 * CHUNK);
    g_assert_cmpuint(stats.bytes_held, ==, 8 * CHUNK);

    /* Far over: everything goes but the chunk released last. */
    fake_resident = 2 * ceiling;
    wait_for_next_reading();
    load_and_release(cache, id, 12, &owner);
    chunk_cache_get_stats(cache, &stats);
    g_assert_cmpuint(stats.bytes_allowed, ==, 0);
    g_assert_cmpuint(stats.bytes_held, ==, CHUNK);

    /* Resident memory unknown: the budget alone. */
    fake_resident = 0;
    wait_for_next_reading();
    load_and_release(cache, id, 13, &owner);
    chunk_cache_get_stats(cache, &stats);
    g_assert_cmpuint(stats.bytes_allowed, ==, 20 * CHUNK);
    chunk_cache_free(cache);
}

static void test_reservations_follow_the_ceiling(void)
{
    const uint64_t ceiling = 1000 * CHUNK;
    struct chunk_cache *cache = chunk_cache_new(20 * CHUNK);
    chunk_cache_set_ceiling(cache, ceiling, read_fake_resident);
    struct counting_owner owner = { 0, -1 };
    uint64_t id = chunk_cache_new_owner(cache);
    fake_resident = ceiling / 2;
    for (uint64_t i = 0; i < 6; i++)
        load_and_release(cache, id, i, &owner);
    /* A reservation (a loader's window) over the ceiling evicts chunks. */
    fake_resident = ceiling + 3 * CHUNK;
    wait_for_next_reading();
    chunk_cache_reserve(cache, CHUNK);
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(cache, &stats);
    g_assert_cmpuint(stats.bytes_held, ==, 4 * CHUNK);
    chunk_cache_unreserve(cache, CHUNK);
    chunk_cache_free(cache);
}

static void test_resident_memory_is_read(void)
{
    if (!resident_memory_is_meaningful())
        return;
    uint64_t before = resident_memory_bytes();
    g_assert_cmpuint(before, >, 0);
    size_t size = 32u << 20;
    char *touched = g_malloc(size);
    memset(touched, 1, size);
    g_assert_cmpuint(resident_memory_bytes(), >=, before + size / 2);
    g_free(touched);
}

/* Work done ahead loads a chunk once, leaves it unpinned and cached, and
 * neither repeats a load nor hides a loader's error. */
static void test_prefetch_loads_once(void)
{
    struct chunk_cache *cache = chunk_cache_new(4 * CHUNK);
    struct counting_owner owner = { 0, 3 };
    uint64_t id = chunk_cache_new_owner(cache);
    g_assert_cmpint(chunk_cache_prefetch(cache, id, 1, CHUNK, fill_chunk, &owner), ==, 1);
    g_assert_cmpint(chunk_cache_prefetch(cache, id, 1, CHUNK, fill_chunk, &owner), ==, 0);
    g_assert_cmpint(owner.loads, ==, 1);
    struct chunk chunk;
    void *pin;
    g_assert_cmpint(chunk_cache_get(cache, id, 1, CHUNK, fill_chunk, &owner, &chunk, &pin), ==, 0);
    g_assert_cmpuint(chunk.data[0], ==, 1);
    chunk_cache_release(cache, pin);
    g_assert_cmpint(owner.loads, ==, 1);
    g_assert_cmpint(chunk_cache_prefetch(cache, id, 3, CHUNK, fill_chunk, &owner), ==, -EIO);
    /* Unpinned: what is prefetched is evicted like any other chunk. */
    for (uint64_t i = 10; i < 20; i++)
        g_assert_cmpint(chunk_cache_prefetch(cache, id, i, CHUNK, fill_chunk, &owner), ==, 1);
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(cache, &stats);
    g_assert_cmpuint(stats.bytes_held, <=, 4 * CHUNK);
    chunk_cache_free(cache);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/chunk_cache/eviction_under_budget", test_eviction_under_budget);
    g_test_add_func("/chunk_cache/evicted_buffers_are_recycled", test_evicted_buffers_are_recycled);
    g_test_add_func("/chunk_cache/recycled_buffer_up_to_twice", test_recycled_buffer_up_to_twice);
    g_test_add_func("/chunk_cache/spare_buffer_after_reserve", test_spare_buffer_after_reserve);
    g_test_add_func("/chunk_cache/pinned_chunks_survive", test_pinned_chunks_survive);
    g_test_add_func("/chunk_cache/budget_below_one_chunk_keeps_last", test_budget_below_one_chunk_keeps_last);
    g_test_add_func("/chunk_cache/spent_chunks_evicted_first", test_spent_chunks_evicted_first);
    g_test_add_func("/chunk_cache/spent_chunk_alone_stays", test_spent_chunk_alone_stays);
    g_test_add_func("/chunk_cache/load_error_is_not_cached", test_load_error_is_not_cached);
    g_test_add_func("/chunk_cache/concurrent_gets", test_concurrent_gets);
    g_test_add_func("/chunk_cache/one_load_for_many_readers", test_one_load_for_many_readers);
    g_test_add_func("/chunk_cache/ceiling_makes_the_cache_yield", test_ceiling_makes_the_cache_yield);
    g_test_add_func("/chunk_cache/reservations_follow_the_ceiling", test_reservations_follow_the_ceiling);
    g_test_add_func("/chunk_cache/resident_memory_is_read", test_resident_memory_is_read);
    g_test_add_func("/chunk_cache/prefetch_loads_once", test_prefetch_loads_once);
    return g_test_run();
}
