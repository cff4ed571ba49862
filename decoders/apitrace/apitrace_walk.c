/* Walks through the call stream in dump order, from a checkpoint of the
 * index pass, with no table per call.
 *
 * A walker holds what the index pass held at the same place: the next
 * event's offset, how many calls were entered, left and frame-ending, and
 * the calls pending (entered, not yet left; with several threads their
 * enters and leaves interleave).  An enter adds a pending call, a leave of a
 * pending call yields it; a leave of a call not pending is ignored as the
 * index pass ignored it.  Calls never left are not kept pending: the index
 * lists them (`unfinished`) and they come out after the last event.
 *
 * Views keep only the dump-order position in their cursor; the walker state
 * where a view's record stopped is remembered (a few slots, keyed by that
 * position) so that the next record resumes it instead of walking again from
 * a checkpoint.  Either way the output is the same. */
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include "apitrace.h"
#include "apitrace_details.h"
#include "sorted_search.h"
#include "trace.h"
#include "tracefs_limits.h"

#define MEMO_SLOTS 16

#define WALK_FROM_STREAM_END UINT64_MAX

struct memo_slot {
    uint64_t stamp;                     /* last use, by the memo's clock; 0: never used */
    struct at_checkpoint at;            /* the walker's position (at.done) */
    uint64_t origin;                    /* the walker's */
    struct at_pending_list pending;
};

/* The calls one walk from a checkpoint found, for calls/<n>.json: `ls -l
 * calls` sizes every call in turn, and without this each would walk from
 * its checkpoint again (about 500 calls each, 1000 times per block).
 * Each slot's calls are sorted by number for the lookup. */
#define BLOCK_SLOTS 4

struct block_slot {
    const struct at_checkpoint *from;   /* NULL: the stream start */
    uint64_t stamp;                     /* as memo_slot's */
    GArray *calls;                      /* struct at_call, in dump order */
};

struct at_walk_memo {
    pthread_mutex_t lock;       /* pthread, as in the engine: TSan cannot see GLib's futex GMutex */
    uint64_t clock;
    struct memo_slot slot[MEMO_SLOTS];
    struct block_slot block[BLOCK_SLOTS];
};

static void pending_reserve(struct at_pending_list *list, size_t count)
{
    if (count <= list->capacity)
        return;
    list->capacity = MAX(count, MAX(2 * list->capacity, 8));
    list->items = g_renew(struct at_pending, list->items, list->capacity);
}

static void pending_append(struct at_pending_list *list, const struct at_pending *items, size_t count)
{
    pending_reserve(list, list->len + count);
    if (count)
        memcpy(list->items + list->len, items, count * sizeof *items);
    list->len += count;
}

static void pending_add(struct at_pending_list *list, const struct at_pending *call)
{
    if (list->len == list->capacity)
        pending_reserve(list, list->len + 1);
    list->items[list->len++] = *call;
}

/* Most calls leave before the next enters: the call dropped is then the
 * last, and nothing moves. */
static void pending_remove(struct at_pending_list *list, size_t i)
{
    memmove(list->items + i, list->items + i + 1, (list->len - i - 1) * sizeof *list->items);
    list->len--;
}

static void pending_free(struct at_pending_list *list)
{
    g_free(list->items);
    *list = (struct at_pending_list){ NULL, 0, 0 };
}

gssize at_find_pending(const struct at_pending *list, size_t count, uint64_t number)
{
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (list[mid].number == number)
            return (gssize)mid;
        if (list[mid].number < number)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static const struct at_pending *unfinished_call(const struct at_state *state, uint64_t number)
{
    const struct at_pending *list = (const struct at_pending *)state->unfinished->data;
    gssize i = at_find_pending(list, state->unfinished->len, number);
    return i < 0 ? NULL : &list[i];
}

static const struct at_checkpoint *checkpoint(const struct at_state *state, guint i)
{
    return &g_array_index(state->checkpoints, struct at_checkpoint, i);
}

/* The calls pending at checkpoint c; NULL when none (the shared array may
 * then have no storage at all). */
static const struct at_pending *pending_list(const struct at_state *state, const struct at_checkpoint *c)
{
    return c->pending_count ? &g_array_index(state->checkpoint_pending, struct at_pending, c->pending_first) : NULL;
}

/* A walker at the position `at` holds, its at->pending_count calls pending
 * copied from `pending` (at->pending_first aside). */
static void start_walk(struct at_walker *walker, struct at_state *state, const struct at_checkpoint *at,
                       const struct at_pending *pending)
{
    *walker = (struct at_walker){ .state = state, .offset = at->offset, .next_call = at->next_call,
                                  .done = at->done, .frames = at->frames };
    if (pending)                       /* NULL: none (among the calls never left) */
        pending_append(&walker->pending, pending, at->pending_count);
}

/* A walker at checkpoint `from`, or at the first event. */
static void start_at(struct at_walker *walker, struct at_state *state, const struct at_checkpoint *from)
{
    const struct at_checkpoint first = { .offset = state->first_event };
    uint64_t origin = from ? (uint64_t)(from - checkpoint(state, 0)) + 1 : 0;
    if (!from)
        from = &first;
    start_walk(walker, state, from, pending_list(state, from));
    walker->origin = origin;
}

/* The last checkpoint whose count at `field` (offsetof a non-decreasing
 * uint64_t member) is <= value, or NULL. */
static const struct at_checkpoint *last_checkpoint(const struct at_state *state, size_t field, uint64_t value)
{
    size_t after = sorted_count_upto(state->checkpoints->data, state->checkpoints->len, sizeof(struct at_checkpoint),
                                     field, value);
    return after ? checkpoint(state, (guint)after - 1) : NULL;
}
#define LAST_CHECKPOINT(state, field, value) last_checkpoint((state), offsetof(struct at_checkpoint, field), (value))

uint64_t at_checkpoint_after(const struct at_state *state, uint64_t pos)
{
    size_t after = SORTED_UPTO(state->checkpoints, struct at_checkpoint, done, pos);
    return after < state->checkpoints->len ? checkpoint(state, (guint)after)->done : UINT64_MAX;
}

void at_walk_finish(struct at_walker *walker)
{
    if (walker->reading)
        at_reader_finish(&walker->reader);
    walker->reading = FALSE;
    pending_free(&walker->pending);
}

static gboolean walk_failed(struct at_walker *walker, const char *why)
{
    if (!walker->failed)
        trace_error(walker->state->trace, "stream", walker->offset, "%s", why);
    walker->failed = TRUE;
    return FALSE;
}

/* Reads the enter event after its tag byte: into the render scratch's
 * details when the walk renders (FALSE there: read it again without), else
 * into `plain`.  The same bytes either way: rendering changes only where
 * the values' text goes. */
static struct at_function *read_enter(struct at_walker *walker, struct at_details *plain, gboolean render,
                                      struct at_details **details, uint64_t *thread)
{
    struct at_state *state = walker->state;
    struct at_reader *reader = &walker->reader;
    uint64_t number = walker->next_call;
    *thread = 0;
    if (state->version >= 4 && !at_uint(reader, thread))
        return NULL;
    struct at_function *sig = at_function_sig(state, reader, FALSE);
    if (!sig)
        return NULL;
    if (render) {
        *details = at_walk_enter_details(walker->render, walker->render_style, number, walker->offset);
    } else {
        at_details_init(plain, number, FALSE);
        *details = plain;
    }
    gboolean ok = at_call_details(state, reader, *details);
    if (render)
        at_walk_entered(walker->render, sig, ok);
    return ok ? sig : NULL;
}

static gboolean walk_enter(struct at_walker *walker)
{
    struct at_state *state = walker->state;
    struct at_details plain, *details;
    uint64_t thread, number = walker->next_call;
    struct at_function *sig = NULL;
    if (walker->render)
        sig = read_enter(walker, &plain, TRUE, &details, &thread);
    if (!sig) {
        at_reader_seek(&walker->reader, walker->offset + 1);   /* after the tag byte */
        sig = read_enter(walker, &plain, FALSE, &details, &thread);
    }
    if (!sig)
        return walk_failed(walker, "enter event no longer readable");
    walker->next_call++;
    if (unfinished_call(state, number))
        return TRUE;
    struct at_pending call = at_entered_call(walker->offset, number, sig, thread, details);
    pending_add(&walker->pending, &call);
    return TRUE;
}

/* Reads a leave event's details (the reader after its call number); in
 * *leave at least its return value, as a fresh at_details would hold it
 * (all the walk takes from a leave).  When the walk renders and the call
 * is the one whose enter it rendered, the details go into that call's,
 * rendering. */
static gboolean read_leave(struct at_walker *walker, uint64_t number, const struct at_pending *pending,
                           struct at_details *leave)
{
    struct at_state *state = walker->state;
    struct at_reader *reader = &walker->reader;
    struct at_details *rendered = walker->render && pending
                                      ? at_walk_leave_details(walker->render, number, pending->enter_offset) : NULL;
    at_details_init(leave, number, FALSE);
    if (rendered) {
        uint64_t after_number = at_reader_offset(reader), ret_before = rendered->ret_offset;
        gboolean ok = at_call_details(state, reader, rendered);
        at_walk_left(walker->render, walker->offset, ok);
        if (ok) {
            /* The leave's own return value, if it has one (a later offset
             * than the enter's): all the walk reads of a leave. */
            if (rendered->ret_offset != ret_before) {
                leave->ret_offset = rendered->ret_offset;
                leave->ret_has_int = rendered->ret_has_int;
                leave->ret_int = rendered->ret_int;
            }
            return TRUE;
        }
        at_reader_seek(reader, after_number);
    }
    return at_call_details(state, reader, leave);
}

gboolean at_walk_next(struct at_walker *walker, struct at_call *call)
{
    struct at_state *state = walker->state;
    while (!walker->failed) {
        if (walker->offset >= state->events_end) {
            if (walker->done < state->stream_done)
                return walk_failed(walker, "calls left missing from the stream");
            uint64_t i = walker->done - state->stream_done;
            if (i >= state->unfinished->len)
                return FALSE;
            const struct at_pending *p = &g_array_index(state->unfinished, struct at_pending, i);
            *call = (struct at_call){ p->number, p->enter_offset, AT_NO_OFFSET, p->function, p->thread, p->flags };
            walker->done++;
            if (p->flags & AT_FLAG_END_FRAME)
                walker->frames++;
            return TRUE;
        }
        if (!walker->reading) {
            at_reader_init(&walker->reader, state->stream, walker->offset);
            walker->reading = TRUE;
        }
        int c = at_getc(&walker->reader);
        if (c == 0x00) {
            if (!walk_enter(walker))
                return FALSE;
            walker->offset = at_reader_offset(&walker->reader);
            continue;
        }
        uint64_t number;
        if (c != 0x01 || !at_uint(&walker->reader, &number))
            return walk_failed(walker, "event no longer readable");
        gssize i = at_find_pending(walker->pending.items, walker->pending.len, number);
        struct at_details details;
        if (!read_leave(walker, number, i < 0 ? NULL : &walker->pending.items[i], &details))
            return walk_failed(walker, "leave event no longer readable");
        uint64_t leave = walker->offset;
        walker->offset = at_reader_offset(&walker->reader);
        if (i < 0)
            continue;
        const struct at_pending *p = &walker->pending.items[i];
        *call = (struct at_call){ p->number, p->enter_offset, leave, p->function, p->thread, p->flags };
        pending_remove(&walker->pending, (size_t)i);
        if (call->function < state->functions->len)
            at_note_ret(&call->flags, state->functions->pdata[call->function], &details);
        walker->done++;
        if (call->flags & AT_FLAG_END_FRAME)
            walker->frames++;
        return TRUE;
    }
    return FALSE;
}

/* A walker at dump-order position `pos` (clamped to order_count). */
static void at_walk_seek(struct at_walker *walker, struct at_state *state, uint64_t pos)
{
    pos = MIN(pos, state->order_count);
    if (pos >= state->stream_done) {
        /* Among the calls never left: no stream to read. */
        const struct at_checkpoint end = { state->events_end, state->call_count, pos, state->stream_frames, 0, 0 };
        start_walk(walker, state, &end, NULL);
        walker->origin = WALK_FROM_STREAM_END;
        for (uint64_t i = 0; i < pos - state->stream_done && i < state->unfinished->len; i++)
            if (g_array_index(state->unfinished, struct at_pending, i).flags & AT_FLAG_END_FRAME)
                walker->frames++;
        return;
    }
    start_at(walker, state, LAST_CHECKPOINT(state, done, pos));
    struct at_call call;
    while (walker->done < pos && at_walk_next(walker, &call))
        ;
}

/* Where a seek to pos starts its walk (as at_walk_seek does). */
static uint64_t seek_origin(const struct at_state *state, uint64_t pos)
{
    if (MIN(pos, state->order_count) >= state->stream_done)
        return WALK_FROM_STREAM_END;
    const struct at_checkpoint *from = LAST_CHECKPOINT(state, done, pos);
    return from ? (uint64_t)(from - checkpoint(state, 0)) + 1 : 0;
}

/* TRUE when the remembered walker stands exactly where checkpoint
 * `origin` (1 + its number) puts a walk: there it may go on as if it had
 * started from it. */
static gboolean memo_at_checkpoint(const struct at_state *state, const struct memo_slot *s, uint64_t origin)
{
    if (origin == 0 || origin == WALK_FROM_STREAM_END)
        return FALSE;
    const struct at_checkpoint *c = checkpoint(state, (guint)(origin - 1));
    const struct at_pending *pending = pending_list(state, c);
    return s->at.offset == c->offset && s->at.next_call == c->next_call && s->at.done == c->done &&
           s->at.frames == c->frames && s->pending.len == c->pending_count &&
           (c->pending_count == 0 || memcmp(s->pending.items, pending, c->pending_count * sizeof *pending) == 0);
}

/* A remembered walker is taken only when it started where a seek to pos
 * would, or stands on that checkpoint as it says: with the index pass's
 * own checkpoints it always does, but a saved index that passed its
 * checksum and disagrees with the trace would otherwise give a sequential
 * reader other calls than one that starts at pos. */
void at_walk_resume(struct at_walker *walker, struct at_state *state, uint64_t pos)
{
    struct at_walk_memo *memo = state->memo;
    uint64_t origin = seek_origin(state, pos);
    pthread_mutex_lock(&memo->lock);
    for (unsigned i = 0; i < MEMO_SLOTS; i++) {
        struct memo_slot *s = &memo->slot[i];
        if (!s->stamp || s->at.done != pos)
            continue;
        if (s->origin != origin && !memo_at_checkpoint(state, s, origin))
            continue;
        s->origin = origin;
        start_walk(walker, state, &s->at, s->pending.items);
        walker->origin = origin;
        s->stamp = ++memo->clock;
        pthread_mutex_unlock(&memo->lock);
        return;
    }
    pthread_mutex_unlock(&memo->lock);
    at_walk_seek(walker, state, pos);
}

void at_walk_park(struct at_walker *walker)
{
    struct at_walk_memo *memo = walker->state->memo;
    if (walker->failed) {
        at_walk_finish(walker);
        return;
    }
    pthread_mutex_lock(&memo->lock);
    struct memo_slot *victim = &memo->slot[0];
    for (unsigned i = 0; i < MEMO_SLOTS; i++) {
        struct memo_slot *s = &memo->slot[i];
        if (s->stamp && s->at.done == walker->done && s->origin == walker->origin) {
            victim = NULL;     /* already known */
            s->stamp = ++memo->clock;
            break;
        }
        if (s->stamp < victim->stamp)
            victim = s;
    }
    if (victim) {
        pending_free(&victim->pending);
        *victim = (struct memo_slot){ ++memo->clock,
                                      { walker->offset, walker->next_call, walker->done, walker->frames, 0,
                                        walker->pending.len },
                                      walker->origin, walker->pending };
        walker->pending = (struct at_pending_list){ NULL, 0, 0 };
    }
    pthread_mutex_unlock(&memo->lock);
    at_walk_finish(walker);
}

void at_walk_memo_init(struct at_state *state)
{
    state->memo = g_new0(struct at_walk_memo, 1);
    pthread_mutex_init(&state->memo->lock, NULL);
}

void at_walk_memo_free(struct at_state *state)
{
    if (!state->memo)
        return;
    for (unsigned i = 0; i < MEMO_SLOTS; i++)
        pending_free(&state->memo->slot[i].pending);
    for (unsigned i = 0; i < BLOCK_SLOTS; i++)
        g_clear_pointer(&state->memo->block[i].calls, g_array_unref);
    pthread_mutex_destroy(&state->memo->lock);
    g_free(state->memo);
    state->memo = NULL;
}

uint64_t at_frame_start(struct at_state *state, uint64_t frame)
{
    if (frame == 0)
        return 0;
    struct at_walker walker;
    start_at(&walker, state, LAST_CHECKPOINT(state, frames, frame - 1));
    struct at_call call;
    while (walker.frames < frame && at_walk_next(&walker, &call))
        ;
    uint64_t pos = walker.done;
    at_walk_park(&walker);
    return pos;
}

static gboolean pending_at(const struct at_state *state, guint i, uint64_t number)
{
    const struct at_checkpoint *c = checkpoint(state, i);
    return at_find_pending(pending_list(state, c), c->pending_count, number) >= 0;
}

/* Calls entered before the checkpoint after `from`. */
static uint64_t block_end_call(const struct at_state *state, const struct at_checkpoint *from)
{
    guint next = from ? (guint)(from - checkpoint(state, 0)) + 1 : 0;
    return next < state->checkpoints->len ? checkpoint(state, next)->next_call : state->call_count;
}

static gboolean block_lookup(struct at_state *state, const struct at_checkpoint *from, uint64_t number,
                             struct at_call *call)
{
    struct at_walk_memo *memo = state->memo;
    gboolean found = FALSE;
    pthread_mutex_lock(&memo->lock);
    for (unsigned i = 0; i < BLOCK_SLOTS && !found; i++) {
        struct block_slot *b = &memo->block[i];
        if (!b->stamp || b->from != from)
            continue;
        b->stamp = ++memo->clock;
        size_t at = SORTED_BELOW(b->calls, struct at_call, number, number);   /* sorted by number */
        if (at < b->calls->len && g_array_index(b->calls, struct at_call, at).number == number) {
            *call = g_array_index(b->calls, struct at_call, at);
            found = TRUE;
        }
    }
    pthread_mutex_unlock(&memo->lock);
    return found;
}

/* Keeps `calls` (taking it) for the block starting at `from`. */
static void block_store(struct at_state *state, const struct at_checkpoint *from, GArray *calls)
{
    G_STATIC_ASSERT(offsetof(struct at_call, number) == 0);
    g_array_sort(calls, sorted_compare_u64);   /* by number */
    struct at_walk_memo *memo = state->memo;
    pthread_mutex_lock(&memo->lock);
    struct block_slot *victim = &memo->block[0];
    for (unsigned i = 0; i < BLOCK_SLOTS; i++) {
        struct block_slot *b = &memo->block[i];
        if (b->stamp && b->from == from) {
            victim = b;
            break;
        }
        if (b->stamp < victim->stamp)
            victim = b;
    }
    g_clear_pointer(&victim->calls, g_array_unref);
    *victim = (struct block_slot){ from, ++memo->clock, calls };
    pthread_mutex_unlock(&memo->lock);
}

gboolean at_find_call(struct at_state *state, uint64_t number, struct at_call *call)
{
    if (number >= state->call_count)
        return FALSE;
    const struct at_pending *p = unfinished_call(state, number);
    if (p) {
        *call = (struct at_call){ p->number, p->enter_offset, AT_NO_OFFSET, p->function, p->thread, p->flags };
        return TRUE;
    }
    const struct at_checkpoint *from = LAST_CHECKPOINT(state, next_call, number);
    /* Still pending at later checkpoints (a long call while other threads
     * ran): start from the last of them, before its leave. */
    guint lo = from ? (guint)(from - checkpoint(state, 0)) + 1 : 0, hi = state->checkpoints->len;
    if (lo < hi && pending_at(state, lo, number)) {
        while (hi - lo > 1) {
            guint mid = lo + (hi - lo) / 2;
            if (pending_at(state, mid, number))
                lo = mid;
            else
                hi = mid;
        }
        from = checkpoint(state, lo);
    }
    if (block_lookup(state, from, number, call))
        return TRUE;
    struct at_walker walker;
    start_at(&walker, state, from);
    gboolean found = FALSE;
    GArray *seen = g_array_new(FALSE, FALSE, sizeof(struct at_call));
    /* On to the end of this checkpoint's block, so that its other calls are
     * found in `seen` next time. */
    uint64_t block_end = block_end_call(state, from);
    while (walker.offset < state->events_end && (!found || walker.next_call < block_end) &&
           seen->len < 4 * LIMIT_APITRACE_CHECKPOINT_CALLS) {
        struct at_call next;
        if (!at_walk_next(&walker, &next))
            break;
        g_array_append_val(seen, next);
        if (!found && next.number == number) {
            *call = next;
            found = TRUE;
        }
    }
    if (!walker.failed)
        block_store(state, from, seen);
    else
        g_array_free(seen, TRUE);
    while (!found && !walker.failed && walker.offset < state->events_end && at_walk_next(&walker, call))
        found = call->number == number;
    if (!found && !walker.failed) {
        /* Its leave was damaged (the index pass stopped there). */
        gssize i = at_find_pending(walker.pending.items, walker.pending.len, number);
        if (i >= 0) {
            p = &walker.pending.items[i];
            *call = (struct at_call){ p->number, p->enter_offset, AT_NO_OFFSET, p->function, p->thread, p->flags };
            found = TRUE;
        }
    }
    at_walk_finish(&walker);
    return found;
}

gboolean at_next_enter(struct at_state *state, struct at_reader *reader, uint64_t *offset, uint64_t *number,
                       struct at_call *call)
{
    while (*offset < state->events_end && *number < state->call_count) {
        if (at_reader_offset(reader) != *offset)
            at_reader_seek(reader, *offset);
        int c = at_getc(reader);
        uint64_t thread = 0, leave_no;
        struct at_details details;
        at_details_init(&details, *number, FALSE);
        if (c == 0x00) {
            struct at_function *sig;
            if ((state->version >= 4 && !at_uint(reader, &thread)) || !(sig = at_function_sig(state, reader, FALSE)) ||
                !at_call_details(state, reader, &details))
                break;
            *call = (struct at_call){ *number, *offset, AT_NO_OFFSET, sig->index,
                                      (uint32_t)(details.has_thread ? details.thread : thread), sig->flags };
            ++*number;
            *offset = at_reader_offset(reader);
            return TRUE;
        }
        if (c != 0x01 || !at_uint(reader, &leave_no) || !at_call_details(state, reader, &details))
            break;
        *offset = at_reader_offset(reader);
    }
    if (*offset < state->events_end && *number < state->call_count)
        trace_error(state->trace, "stream", *offset, "event no longer readable");
    return FALSE;
}
