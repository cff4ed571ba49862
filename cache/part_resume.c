/* Kept part decoders (part_resume.h).  A slot is a decoder standing at an
 * offset of a chunk, or the promise of one: the thread making the part
 * that ends there holds it, and the thread wanting the next part waits for
 * it rather than decode the chunk's start again.  Promises only point
 * forward in a chunk, so waits cannot form a cycle. */
#include <pthread.h>
#include "part_resume.h"

/* A few per stream: a sequential reader and the workers reading ahead of
 * it each make one part of a chunk at a time. */
enum { RESUME_SLOTS = 4 };

struct resume_slot {
    gboolean used;
    uint64_t chunk;              /* the chunk's file_offset: its parts share it */
    uint64_t position;           /* output offset in the chunk it stands at, or will */
    struct codec_part_decoder *decoder;   /* NULL: promised, its part in the making */
    uint64_t window;             /* bytes reserved in the cache for a kept decoder */
    uint64_t last_use;
};

struct part_resume {
    struct chunk_cache *cache;
    uint64_t live;               /* windows of the stream's decoders, kept or making a part */
    /* pthread's: TSan does not see GLib's futex-based GMutex */
    pthread_mutex_t lock;
    pthread_cond_t settled;
    uint64_t clock;
    struct resume_slot slots[RESUME_SLOTS];
};

struct part_resume *part_resume_new(struct chunk_cache *cache)
{
    struct part_resume *resume = g_new0(struct part_resume, 1);
    resume->cache = cache;
    pthread_mutex_init(&resume->lock, NULL);
    pthread_cond_init(&resume->settled, NULL);
    return resume;
}

/* A decoder is gone: its window leaves the cache and the stream's
 * decoders; called with the lock held. */
static void release_window_locked(struct part_resume *resume, uint64_t window)
{
    resume->live -= window;
    chunk_cache_unreserve(resume->cache, window);
    pthread_cond_broadcast(&resume->settled);
}

static void drop_kept(struct part_resume *resume, struct resume_slot *slot)
{
    codec_part_decoder_free(slot->decoder);
    if (slot->decoder)
        release_window_locked(resume, slot->window);
    *slot = (struct resume_slot){ 0 };
}

void part_resume_free(struct part_resume *resume)
{
    if (!resume)
        return;
    for (int i = 0; i < RESUME_SLOTS; i++)
        drop_kept(resume, &resume->slots[i]);
    pthread_mutex_destroy(&resume->lock);
    pthread_cond_destroy(&resume->settled);
    g_free(resume);
}

/* What the stream's decoders may take together: a quarter of what the
 * cache may hold (its budget, or less under the memory ceiling). */
static uint64_t decoders_room(const struct part_resume *resume)
{
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(resume->cache, &stats);
    return stats.bytes_allowed / 4;      /* never above bytes_budget / 4 */
}

/* The kept decoder used least recently, or NULL. */
static struct resume_slot *oldest_kept(struct part_resume *resume)
{
    struct resume_slot *oldest = NULL;
    for (int i = 0; i < RESUME_SLOTS; i++) {
        struct resume_slot *slot = &resume->slots[i];
        if (slot->decoder && (!oldest || slot->last_use < oldest->last_use))
            oldest = slot;
    }
    return oldest;
}

void part_resume_admit(struct part_resume *resume, uint64_t window)
{
    uint64_t room = decoders_room(resume);
    pthread_mutex_lock(&resume->lock);
    while (resume->live > 0 && resume->live + window > room) {
        struct resume_slot *kept = oldest_kept(resume);
        if (kept)
            drop_kept(resume, kept);
        else
            pthread_cond_wait(&resume->settled, &resume->lock);
    }
    resume->live += window;
    pthread_mutex_unlock(&resume->lock);
    chunk_cache_reserve(resume->cache, window);
}

/* The slot of `chunk` standing (or to stand) exactly at `position`, else
 * the kept decoder of `chunk` standing furthest before it; NULL for none. */
static struct resume_slot *best_slot(struct part_resume *resume, uint64_t chunk, uint64_t position)
{
    struct resume_slot *best = NULL;
    for (int i = 0; i < RESUME_SLOTS; i++) {
        struct resume_slot *slot = &resume->slots[i];
        if (!slot->used || slot->chunk != chunk || slot->position > position)
            continue;
        if (slot->position == position)
            return slot;
        if (slot->decoder && (!best || slot->position > best->position))
            best = slot;
    }
    return best;
}

/* A slot for a promise: a free one, else the one kept longest unused
 * (its decoder dropped); -1 when every slot is a promise. */
static int promise_slot(struct part_resume *resume, const struct chunk_entry *entry)
{
    int pick = -1;
    uint64_t end = entry->skip + entry->size;
    for (int i = 0; i < RESUME_SLOTS; i++) {
        struct resume_slot *slot = &resume->slots[i];
        if (slot->used && slot->chunk == entry->file_offset && slot->position == end)
            return -1;      /* a decoder stands there already, or will */
    }
    for (int i = 0; i < RESUME_SLOTS && pick < 0; i++)
        if (!resume->slots[i].used)
            pick = i;
    if (pick < 0) {
        struct resume_slot *oldest = oldest_kept(resume);
        if (!oldest)
            return -1;
        pick = (int)(oldest - resume->slots);
        drop_kept(resume, oldest);
    }
    resume->slots[pick] = (struct resume_slot){ .used = TRUE, .chunk = entry->file_offset,
                                                .position = end, .last_use = ++resume->clock };
    return pick;
}

struct codec_part_decoder *part_resume_take(struct part_resume *resume, const struct chunk_entry *entry,
                                            int *ticket)
{
    *ticket = -1;
    pthread_mutex_lock(&resume->lock);
    /* The last part has no next part to promise a decoder to. */
    if (entry->part == CHUNK_PART)
        *ticket = promise_slot(resume, entry);
    struct resume_slot *slot;
    while ((slot = best_slot(resume, entry->file_offset, entry->skip)) && !slot->decoder)
        pthread_cond_wait(&resume->settled, &resume->lock);
    struct codec_part_decoder *decoder = NULL;
    if (slot) {
        decoder = slot->decoder;
        *slot = (struct resume_slot){ 0 };
    }
    pthread_mutex_unlock(&resume->lock);
    return decoder;
}

gboolean part_resume_settle(struct part_resume *resume, int ticket, struct codec_part_decoder *decoder,
                            uint64_t window)
{
    /* Kept decoders stay within the stream's room for decoders (a quarter
     * of the cache), but one alone is kept whatever its window: it takes
     * no more memory kept than making the next part would, and the
     * in-order reader that resumes it would otherwise decode every part
     * from the chunk's start (n^2/2 parts for n). */
    uint64_t room = decoders_room(resume);
    pthread_mutex_lock(&resume->lock);
    uint64_t kept = 0;
    for (int i = 0; i < RESUME_SLOTS; i++)
        kept += resume->slots[i].decoder ? resume->slots[i].window : 0;
    gboolean keep = ticket >= 0 && decoder && (kept == 0 || kept + window <= room);
    if (keep) {
        struct resume_slot *slot = &resume->slots[ticket];
        slot->decoder = decoder;
        slot->window = window;
        slot->last_use = ++resume->clock;
        pthread_cond_broadcast(&resume->settled);
    } else {
        if (ticket >= 0)
            resume->slots[ticket] = (struct resume_slot){ 0 };
        codec_part_decoder_free(decoder);
        release_window_locked(resume, window);      /* wakes the waiters */
    }
    pthread_mutex_unlock(&resume->lock);
    return keep;
}
