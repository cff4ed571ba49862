/* rr's common events (engine/trace_event.h): one per frame, except that a
 * syscall's entering frame and its exiting frame make one complete event.
 *
 * Pairing keeps no table: at an entering frame the iterator reads ahead
 * for the thread's next frame, at most LIMIT_RR_SYSCALL_PAIR_FRAMES frames;
 * if that is the exit of the same syscall the event is complete, and the
 * exit's distance is set in a bitmap of the frames ahead that are already
 * told, carried in the cursor (so a resumed walk skips exactly the frames
 * the first one skipped).  An entering frame whose exit is not found
 * within the bound, and an exit nobody claimed, are instants.
 *
 * Cursor: word[0] frame index (low 32 bits; frames < LIMIT_RR_FRAMES) and
 * seq (high 32 bits); word[1] the frame's offset in the events stream;
 * word[2] bit j: frame index + j is a paired exit, already yielded.  After
 * an event the cursor is past the paired exits right after it. */
#include <string.h>
#include "rr.h"
#include "trace.h"
#include "trace_event.h"
#include "tracefs_limits.h"

G_STATIC_ASSERT(LIMIT_RR_FRAMES <= (1ull << 32));
G_STATIC_ASSERT(LIMIT_RR_SYSCALL_PAIR_FRAMES <= 64);

static void rr_events_begin(struct trace *trace, struct view_cursor *cursor)
{
    struct rr_frame_pos pos;
    rr_frame_checkpoint(trace->format_state, 0, &pos);
    cursor->word[1] = pos.offset;
}

gboolean rr_frame_enters_syscall(const struct rr_frame *f)
{
    return f->event == RR_EV_SYSCALL && f->sys_state < RR_SYSCALL_EXITING;
}

gboolean rr_frame_exits_syscall_of(const struct rr_frame *f, int32_t tid, int32_t number, uint16_t arch)
{
    return f->tid == tid && f->event == RR_EV_SYSCALL && f->sys_state == RR_SYSCALL_EXITING &&
           f->sys_number == number && f->sys_arch == arch;
}

/* The distance (1..LIMIT) to the thread's next frame when it is the exit of
 * `enter`'s syscall, with its time; 0 otherwise.  `pos` is the frame after
 * `enter`. */
static unsigned find_exit(struct rr_state *state, struct rr_frame_pos pos, const struct rr_frame *enter,
                          double *exit_sec)
{
    for (unsigned d = 1; d <= LIMIT_RR_SYSCALL_PAIR_FRAMES && pos.index < state->frame_count; d++) {
        struct rr_frame f;
        const char *why = NULL;
        if (rr_frame_read(state, &pos, &f, &why) < 0) {
            rr_frame_release(&f);
            return 0;   /* the walk itself reports it when it gets there */
        }
        gboolean same_thread = f.tid == enter->tid;
        gboolean exit = rr_frame_exits_syscall_of(&f, enter->tid, enter->sys_number, enter->sys_arch);
        *exit_sec = f.monotonic_sec;
        rr_frame_release(&f);
        if (same_thread)
            return exit ? d : 0;
    }
    return 0;
}

static uint64_t ns_since(double start_sec, double sec)
{
    double ns = (sec - start_sec) * 1e9;
    return ns > 0 ? (uint64_t)(ns + 0.5) : 0;
}

static int32_t process_of(const struct rr_state *state, int32_t tid)
{
    gpointer found;
    if (state->pid_of && g_hash_table_lookup_extended(state->pid_of, GINT_TO_POINTER(tid), NULL, &found))
        return GPOINTER_TO_INT(found);
    return tid;
}

static void set_text(struct trace_event *event, struct trace_event_scratch *scratch, const char *cat,
                     const GString *name)
{
    trace_event_set_cat(event, scratch, cat, strlen(cat));
    trace_event_set_name(event, scratch, name->str, name->len);
}

/* Names and category of a frame: a syscall joined to its exit is named by
 * the syscall alone, and the category of an event that is neither a
 * syscall nor a signal is its name (which has no ": detail") in lower case. */
static void describe(const struct rr_frame *f, gboolean joined, struct trace_event *event,
                     struct trace_event_scratch *scratch)
{
    GString *name = g_string_new(NULL);
    if (f->event == RR_EV_SYSCALL) {
        rr_syscall_name(name, f->sys_arch, f->sys_number);
        if (!joined)
            g_string_append(name, f->sys_state == RR_SYSCALL_EXITING ? " (exit)" : " (enter)");
        set_text(event, scratch, "syscall", name);
    } else if (f->event == RR_EV_SIGNAL || f->event == RR_EV_SIGNAL_DELIVERY || f->event == RR_EV_SIGNAL_HANDLER) {
        rr_dump_event_name(f, name);
        set_text(event, scratch, "signal", name);
    } else {
        rr_dump_event_name(f, name);
        char *cat = g_ascii_strdown(name->str, (gssize)name->len);
        set_text(event, scratch, cat, name);
        g_free(cat);
    }
    g_string_free(name, TRUE);
}

/* The first frame's time, read once: `fallback` when it cannot be read.
 * Read again for every event, it was a second frame to unpack per event
 * and a chunk the reading threads kept taking turns on.  Threads that
 * read it at once store the same bits. */
static double first_frame_seconds(struct rr_state *state, double fallback)
{
    int known = __atomic_load_n(&state->first_frame_known, __ATOMIC_ACQUIRE);
    if (known == 0) {
        struct rr_frame first;
        const char *why = NULL;
        known = rr_frame_load(state, 0, &first, &why) == 0 ? 1 : 2;
        uint64_t bits = 0;
        if (known == 1)
            memcpy(&bits, &first.monotonic_sec, sizeof bits);
        rr_frame_release(&first);
        __atomic_store_n(&state->first_frame_bits, bits, __ATOMIC_RELAXED);
        __atomic_store_n(&state->first_frame_known, known, __ATOMIC_RELEASE);
    }
    if (known == 2)
        return fallback;
    uint64_t bits = __atomic_load_n(&state->first_frame_bits, __ATOMIC_RELAXED);
    double seconds;
    memcpy(&seconds, &bits, sizeof seconds);
    return seconds;
}

/* Moves past the joined exits right ahead (the next call would skip them),
 * so that a cursor after an event is at the frame of the next one, where
 * the cuts' cursors are.  An unreadable frame is left for the next call to
 * report. */
static void skip_told(struct rr_state *state, struct rr_frame_pos *pos, uint64_t *told)
{
    while ((*told & 1) && pos->index < state->frame_count) {
        struct rr_frame_pos ahead = *pos;
        struct rr_frame f;
        const char *why = NULL;
        int rc = rr_frame_read(state, &ahead, &f, &why);
        rr_frame_release(&f);
        if (rc < 0)
            return;
        *pos = ahead;
        *told >>= 1;
    }
}

static enum view_step rr_events_next(struct trace *trace, struct view_cursor *cursor, struct trace_event *event,
                                     struct trace_event_scratch *scratch)
{
    struct rr_state *state = trace->format_state;
    uint64_t seq = cursor->word[0] >> 32;
    struct rr_frame_pos pos = { cursor->word[0] & 0xffffffffu, cursor->word[1], 0 };
    uint64_t told = cursor->word[2];
    struct rr_frame f;
    const char *why = NULL;
    for (;;) {
        if (pos.index >= state->frame_count)
            return VIEW_END;
        uint64_t k = pos.index;
        if (rr_frame_read(state, &pos, &f, &why) < 0) {
            rr_frame_release(&f);
            return rr_frame_error(state, "events.jsonl", 0, k, why);
        }
        gboolean skip = told & 1;
        told >>= 1;
        if (!skip)
            break;
        rr_frame_release(&f);
    }
    double start_sec = first_frame_seconds(state, f.monotonic_sec);

    trace_event_start(event, seq, TRACE_EVENT_INSTANT);
    event->has_ts = TRUE;
    event->ts = ns_since(start_sec, f.monotonic_sec);
    event->tid = f.tid;
    event->pid = process_of(state, f.tid);
    double exit_sec = 0;
    unsigned d = rr_frame_enters_syscall(&f) ? find_exit(state, pos, &f, &exit_sec) : 0;
    if (d) {
        event->kind = TRACE_EVENT_COMPLETE;
        event->has_dur = TRUE;
        uint64_t end = ns_since(start_sec, exit_sec);
        event->dur = end > event->ts ? end - event->ts : 0;
        told |= UINT64_C(1) << (d - 1);
    }
    describe(&f, d != 0, event, scratch);
    trace_event_add_uint(event, scratch, "global_time", 11, f.time);
    trace_event_add_int(event, scratch, "ticks", 5, f.ticks);
    if (f.event == RR_EV_SYSCALL) {
        trace_event_add_int(event, scratch, "number", 6, f.sys_number);
        trace_event_add_uint(event, scratch, "arch", 4, f.sys_arch);
    }
    rr_frame_release(&f);
    skip_told(state, &pos, &told);
    cursor->word[0] = (seq + 1) << 32 | pos.index;
    cursor->word[1] = pos.offset;
    cursor->word[2] = told;
    return VIEW_RECORD;
}

/* The common files are cut at frame checkpoints, evenly chosen so that a
 * segment covers LIMIT_SEGMENT_MIN_RECORDS frames or more (an export
 * segment ends at each cut, and each costs the export its descriptors and
 * interned strings again): a checkpoint counts the exits joined before
 * it and marks those of its block joined to earlier frames, which give the
 * seq and the told bits there (trace_event_iterator.cuts).  A checkpoint
 * whose first frame is itself a joined exit is passed over: no event
 * starts there (view_segment_cuts chooses among the others). */
static gboolean frame_cut(const void *context, uint64_t block, struct view_cursor *cursor)
{
    const struct rr_state *state = context;
    const struct rr_checkpoint *c = &g_array_index(state->checkpoints, struct rr_checkpoint, block);
    uint64_t frame = block * LIMIT_RR_FRAME_CHECKPOINT;
    if ((c->joined_mask & 1) || c->joined_before >= frame)
        return FALSE;
    cursor->word[0] = (frame - c->joined_before) << 32 | frame;
    cursor->word[1] = c->offset;
    cursor->word[2] = c->joined_mask;
    return TRUE;
}

static uint32_t rr_event_cuts(struct trace *trace, struct view_cursor *cursors, uint32_t max)
{
    return rr_frame_cuts(trace->format_state, frame_cut, cursors, max);
}

static void rr_threads(struct trace *trace, void (*fn)(void *, int64_t, int64_t, const char *), void *data)
{
    const struct rr_state *state = trace->format_state;
    for (guint i = 0; i < rr_thread_dirs(state); i++) {
        int32_t tid = g_array_index(state->tids, int32_t, i);
        fn(data, process_of(state, tid), tid, NULL);
    }
}

const struct trace_event_iterator rr_event_iterator = {
    .begin = rr_events_begin,
    .next = rr_events_next,
    .threads = rr_threads,
    .cuts = rr_event_cuts,
    .clock = "ns since the first frame (the frames' monotonic real_time)",
};
