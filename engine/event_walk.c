/* The walk behind /summary.csv and /info.json's totals (event_walk.h). */
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include "event_walk.h"
#include "keyed_hash.h"
#include "stream.h"
#include "text.h"
#include "thread_presence.h"
#include "trace.h"
#include "trace_event.h"
#include "tracefs_limits.h"
#include "workers.h"

struct name_row {
    char *name;
    size_t len;
    uint64_t count, total_dur, max_dur;
    gboolean has_dur;
    struct name_row *joined;   /* a segment's row: the joined walk's row of its name */
};

struct open_slice {
    struct name_row *row;      /* NULL: its end adds no duration (the begin had no time) */
    uint64_t ts;
};

struct early_end {
    uint64_t ts;
    gboolean has_ts;
};

/* A thread's open begins. */
struct walk_thread {
    int64_t pid, tid;
    GArray *open;              /* struct open_slice, at most LIMIT_SUMMARY_DEPTH */
    uint64_t deeper;           /* begins open above those: their ends add nothing */
    /* A segment's: its ends that found the stack empty (they close begins
     * of the segments before), and the deepest its stack grew. */
    GArray *early_ends;        /* struct early_end; NULL: none */
    guint depth_reached;
};

enum walk_kind {
    WALK_WHOLE,                /* every event in one pass */
    WALK_SEGMENT,              /* the events between two cuts */
    WALK_JOINED,               /* the segments' walks joined */
};

struct walk {
    enum walk_kind kind;
    GHashTable *rows;          /* struct name_row, its own key (name and len) */
    struct name_row other;     /* names past LIMIT_SUMMARY_NAMES */
    gboolean overflow;
    GHashTable *threads;       /* struct walk_thread, its own key (pid and tid) */
    struct walk_thread *last;  /* the last event's thread: events come in runs */
    struct event_totals totals;
    /* Not a whole walk's: a limit was met that the serial walk meets at a
     * point the join cannot place. */
    gboolean unjoinable;
    int64_t held, published;   /* a segment's: bytes its rows and stacks hold, and what it told the join */
    int64_t row_bytes;         /* of those, its rows' (they go first, when they join) */
};

/* What a walk's entries cost, about, for the segments' budget. */
#define WALK_ROW_BYTES 96
#define WALK_THREAD_BYTES 128

static guint row_hash(gconstpointer key)
{
    const struct name_row *row = key;
    return (guint)keyed_hash_bytes(row->name, row->len);
}

static gboolean row_equal(gconstpointer a, gconstpointer b)
{
    const struct name_row *x = a, *y = b;
    return x->len == y->len && memcmp(x->name, y->name, x->len) == 0;
}

static void row_free(gpointer data)
{
    struct name_row *row = data;
    g_free(row->name);
    g_free(row);
}

static guint thread_hash(gconstpointer key)
{
    const struct walk_thread *t = key;
    return keyed_hash_u64(keyed_mix64((uint64_t)t->pid) + (uint64_t)t->tid);
}

static gboolean thread_equal(gconstpointer a, gconstpointer b)
{
    const struct walk_thread *x = a, *y = b;
    return x->pid == y->pid && x->tid == y->tid;
}

static void thread_free(gpointer data)
{
    struct walk_thread *t = data;
    g_array_unref(t->open);
    if (t->early_ends)
        g_array_unref(t->early_ends);
    g_free(t);
}

static void walk_init(struct walk *w, enum walk_kind kind)
{
    memset(w, 0, sizeof *w);
    w->kind = kind;
    w->rows = g_hash_table_new_full(row_hash, row_equal, row_free, NULL);
    w->threads = g_hash_table_new_full(thread_hash, thread_equal, thread_free, NULL);
}

static void walk_clear(struct walk *w)
{
    g_clear_pointer(&w->rows, g_hash_table_destroy);
    g_clear_pointer(&w->threads, g_hash_table_destroy);
    w->last = NULL;
}

/* Looked up with the event's bytes in place: a walk of millions of events
 * allocates only for a name it has not seen. */
static struct name_row *walk_row(struct walk *w, const char *name, size_t len)
{
    struct name_row probe = { .name = (char *)name, .len = len };
    struct name_row *row = g_hash_table_lookup(w->rows, &probe);
    if (row)
        return row;
    if (g_hash_table_size(w->rows) >= LIMIT_SUMMARY_NAMES) {
        w->overflow = TRUE;
        w->unjoinable = w->kind != WALK_WHOLE;
        return &w->other;
    }
    row = g_new0(struct name_row, 1);
    /* Every byte: a name with a NUL inside stays apart from its prefix
     * (g_strndup would stop there and make rows the sort cannot order). */
    row->name = g_malloc(len + 1);
    memcpy(row->name, name, len);
    row->name[len] = '\0';
    row->len = len;
    g_hash_table_add(w->rows, row);
    w->held += WALK_ROW_BYTES + (int64_t)len;
    w->row_bytes += WALK_ROW_BYTES + (int64_t)len;
    return row;
}

static void row_add_dur(struct name_row *row, uint64_t dur)
{
    row->has_dur = TRUE;
    row->total_dur += dur;
    row->max_dur = MAX(row->max_dur, dur);
}

/* The thread's open begins; NULL past LIMIT_SUMMARY_THREADS threads. */
static struct walk_thread *walk_thread_of(struct walk *w, int64_t pid, int64_t tid)
{
    if (w->last && w->last->pid == pid && w->last->tid == tid)
        return w->last;
    struct walk_thread probe = { .pid = pid, .tid = tid };
    struct walk_thread *thread = g_hash_table_lookup(w->threads, &probe);
    if (!thread) {
        if (g_hash_table_size(w->threads) >= LIMIT_SUMMARY_THREADS) {
            w->unjoinable = w->unjoinable || w->kind != WALK_WHOLE;
            return NULL;
        }
        thread = g_new0(struct walk_thread, 1);
        thread->pid = pid;
        thread->tid = tid;
        thread->open = g_array_new(FALSE, FALSE, sizeof(struct open_slice));
        g_hash_table_add(w->threads, thread);
        w->held += WALK_THREAD_BYTES;
    }
    w->last = thread;
    return thread;
}

/* A begin past LIMIT_SUMMARY_DEPTH open ones is only counted: its end
 * adds no duration. */
static void walk_begin(struct walk *w, struct walk_thread *thread, struct name_row *row, uint64_t ts)
{
    if (thread->open->len >= LIMIT_SUMMARY_DEPTH) {
        thread->deeper++;
        return;
    }
    struct open_slice open = { row, ts };
    g_array_append_val(thread->open, open);
    thread->depth_reached = MAX(thread->depth_reached, thread->open->len);
    w->held += (int64_t)sizeof open;
}

/* An end is counted under the name of the begin it closes. */
static void walk_end(struct walk *w, struct walk_thread *thread, gboolean has_ts, uint64_t ts)
{
    if (thread->deeper) {
        thread->deeper--;
        return;
    }
    if (thread->open->len == 0) {
        if (w->kind == WALK_SEGMENT) {
            if (!thread->early_ends)
                thread->early_ends = g_array_new(FALSE, FALSE, sizeof(struct early_end));
            struct early_end end = { ts, has_ts };
            g_array_append_val(thread->early_ends, end);
            w->held += (int64_t)sizeof end;
        }
        return;
    }
    struct open_slice open = g_array_index(thread->open, struct open_slice, thread->open->len - 1);
    g_array_set_size(thread->open, thread->open->len - 1);
    w->held -= (int64_t)sizeof open;
    if (open.row && has_ts && ts >= open.ts)
        row_add_dur(open.row, ts - open.ts);
}

static void walk_event(struct walk *w, const struct trace_event *event)
{
    struct event_totals *totals = &w->totals;
    totals->events++;
    if (event->has_ts) {
        totals->first_ts = totals->has_ts ? MIN(totals->first_ts, event->ts) : event->ts;
        totals->last_ts = totals->has_ts ? MAX(totals->last_ts, event->ts) : event->ts;
        totals->has_ts = TRUE;
        uint64_t end = event->ts + (event->has_dur ? event->dur : 0);
        totals->last_end = MAX(totals->last_end, end);
    }
    struct walk_thread *thread = walk_thread_of(w, event->pid, event->tid);
    if (event->kind == TRACE_EVENT_END) {
        if (thread)
            walk_end(w, thread, event->has_ts, event->ts);
        return;
    }
    struct name_row *row = walk_row(w, event->name, event->name_len);
    row->count++;
    if (event->kind == TRACE_EVENT_COMPLETE && event->has_dur)
        row_add_dur(row, event->dur);
    if (event->kind == TRACE_EVENT_BEGIN && thread)
        walk_begin(w, thread, event->has_ts ? row : NULL, event->ts);
}

/* ---- the segments, joined ---- */

struct walk_segment {
    struct view_cursor start;
    uint64_t stop;             /* word[0] that ends it; UINT64_MAX: the events' end */
    struct walk walk;          /* its rows join as it ends, its threads after the segments before */
    struct trace_error_list errors;
    gboolean done;
};

struct parallel_walk {
    struct trace *trace;
    const struct trace_event_iterator *events;
    struct thread_presence *presence;
    struct walk_segment *segments;
    uint32_t count;
    pthread_mutex_t lock;      /* over joined and next_join; pthread's for TSan */
    struct walk joined;
    uint32_t next_join;        /* the segments before it have joined their threads */
    int64_t held;              /* what the segments hold (atomic) */
    int64_t held_max;
    gboolean unjoinable;       /* atomic: the walk is done again in one pass */
};

/* Events between two looks at the other segments and the budget. */
#define WALK_POLL_EVENTS 1024u

/* TRUE when a segment should stop: the walk will be done again anyway, or
 * the trace is closing.  Tells the join what the segment holds. */
static int64_t publish_held(struct parallel_walk *p, struct walk *w)
{
    int64_t delta = w->held - w->published;
    w->published = w->held;
    return __atomic_add_fetch(&p->held, delta, __ATOMIC_RELAXED);
}

static gboolean segment_gives_up(struct parallel_walk *p, struct walk *w)
{
    if (publish_held(p, w) > p->held_max || w->unjoinable)
        __atomic_store_n(&p->unjoinable, TRUE, __ATOMIC_RELAXED);
    return __atomic_load_n(&p->unjoinable, __ATOMIC_RELAXED) || workers_stopping(p->trace->workers);
}

/* Walks the events from `cursor` to the first cursor at or past `stop`,
 * telling `presence` what it sees.  VIEW_RECORD: it got there; VIEW_END:
 * the events ended; VIEW_ERROR: they failed, or the walk gave up. */
static enum view_step walk_range(struct trace *trace, const struct trace_event_iterator *events, struct walk *w,
                                 struct view_cursor cursor, uint64_t stop, struct thread_presence *presence,
                                 struct parallel_walk *parallel)
{
    struct trace_event_scratch scratch;
    trace_event_scratch_init(&scratch);
    struct presence_learner *learner = NULL;
    if (presence) {
        thread_presence_learn_begin(presence, cursor.word[0], stop);
        learner = thread_presence_learner(presence);
    }
    stream_hold_begin();
    enum view_step step = VIEW_RECORD;
    for (uint64_t n = 1; cursor.word[0] < stop; n++) {
        if (n % WALK_POLL_EVENTS == 0 &&
            (parallel ? segment_gives_up(parallel, w) : workers_stopping(trace->workers))) {
            step = VIEW_ERROR;
            break;
        }
        struct trace_event event;
        uint64_t word0 = cursor.word[0];
        trace_event_scratch_reset(&scratch);
        step = events->next(trace, &cursor, &event, &scratch);
        if (step != VIEW_RECORD)
            break;
        if (learner)
            thread_presence_learn_event(learner, word0, event.pid, event.tid);
        walk_event(w, &event);
    }
    stream_hold_end();
    trace_event_scratch_clear(&scratch);
    return step;
}

/* A segment's rows go into the joined walk's (in any order: they add up),
 * and its open begins then point to the joined rows. */
static void join_rows(struct walk *joined, struct walk *segment)
{
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, segment->rows);
    while (g_hash_table_iter_next(&iter, NULL, &value)) {
        struct name_row *row = value, *to = walk_row(joined, row->name, row->len);
        to->count += row->count;
        if (row->has_dur) {
            to->has_dur = TRUE;
            to->total_dur += row->total_dur;
            to->max_dur = MAX(to->max_dur, row->max_dur);
        }
        row->joined = to;
    }
    g_hash_table_iter_init(&iter, segment->threads);
    while (g_hash_table_iter_next(&iter, NULL, &value)) {
        GArray *open = ((struct walk_thread *)value)->open;
        for (guint i = 0; i < open->len; i++) {
            struct open_slice *slice = &g_array_index(open, struct open_slice, i);
            slice->row = slice->row ? slice->row->joined : NULL;
        }
    }
    g_clear_pointer(&segment->rows, g_hash_table_destroy);
    struct event_totals *to = &joined->totals, *from = &segment->totals;
    to->events += from->events;
    if (from->has_ts) {
        to->first_ts = to->has_ts ? MIN(to->first_ts, from->first_ts) : from->first_ts;
        to->last_ts = to->has_ts ? MAX(to->last_ts, from->last_ts) : from->last_ts;
        to->has_ts = TRUE;
        to->last_end = MAX(to->last_end, from->last_end);
    }
}

/* A segment's threads after every segment before it: its early ends close
 * the begins carried to it, then its open begins are carried on.  Its
 * own pairs were timed as the serial walk times them unless a begin of
 * it lay LIMIT_SUMMARY_DEPTH deep counting what was carried. */
static void join_threads(struct walk *joined, struct walk *segment)
{
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, segment->threads);
    while (g_hash_table_iter_next(&iter, NULL, &value)) {
        const struct walk_thread *from = value;
        struct walk_thread *to = walk_thread_of(joined, from->pid, from->tid);
        if (!to)
            return;
        if (from->depth_reached && to->open->len + to->deeper + from->depth_reached > LIMIT_SUMMARY_DEPTH) {
            joined->unjoinable = TRUE;
            return;
        }
        for (guint i = 0; from->early_ends && i < from->early_ends->len; i++) {
            const struct early_end *end = &g_array_index(from->early_ends, struct early_end, i);
            walk_end(joined, to, end->has_ts, end->ts);
        }
        for (guint i = 0; i < from->open->len; i++) {
            const struct open_slice *open = &g_array_index(from->open, struct open_slice, i);
            walk_begin(joined, to, open->row, open->ts);
        }
        to->deeper += from->deeper;
    }
}

/* The segment is walked: its rows join at once, its threads in order
 * (those of the segments after it that are done already follow it). */
static void segment_done(struct parallel_walk *p, struct walk_segment *segment)
{
    pthread_mutex_lock(&p->lock);
    if (!__atomic_load_n(&p->unjoinable, __ATOMIC_RELAXED)) {
        join_rows(&p->joined, &segment->walk);
        segment->walk.held -= segment->walk.row_bytes;
        publish_held(p, &segment->walk);
    }
    segment->done = TRUE;
    while (p->next_join < p->count && p->segments[p->next_join].done) {
        struct walk *next = &p->segments[p->next_join].walk;
        if (!__atomic_load_n(&p->unjoinable, __ATOMIC_RELAXED))
            join_threads(&p->joined, next);
        __atomic_add_fetch(&p->held, -next->published, __ATOMIC_RELAXED);
        walk_clear(next);
        p->next_join++;
    }
    if (p->joined.unjoinable)
        __atomic_store_n(&p->unjoinable, TRUE, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&p->lock);
}

static void walk_one_segment(void *data, uint64_t i)
{
    struct parallel_walk *p = data;
    struct walk_segment *segment = &p->segments[i];
    walk_init(&segment->walk, WALK_SEGMENT);
    if (!__atomic_load_n(&p->unjoinable, __ATOMIC_RELAXED)) {
        trace_errors_defer(&segment->errors);
        enum view_step step =
            walk_range(p->trace, p->events, &segment->walk, segment->start, segment->stop, p->presence, p);
        trace_errors_defer(NULL);
        gboolean reached = step == VIEW_RECORD || (step == VIEW_END && segment->stop == UINT64_MAX);
        /* A segment that ended early or failed ends the serial walk there:
         * the segments after it are not part of it. */
        if (!reached || segment_gives_up(p, &segment->walk))
            __atomic_store_n(&p->unjoinable, TRUE, __ATOMIC_RELAXED);
        if (p->presence)
            thread_presence_learn_end(p->presence, reached && !segment->errors.lines && segment->errors.unlisted == 0);
    }
    segment_done(p, segment);
}

/* The segments' walk; FALSE when it must be done again in one pass. */
static gboolean walk_segments(struct parallel_walk *p, const struct view_cursor *cuts)
{
    for (uint32_t i = 0; i < p->count; i++) {
        if (i == 0)
            trace_event_begin(p->events, p->trace, &p->segments[0].start);
        else
            p->segments[i].start = cuts[i - 1];
        p->segments[i].stop = i + 1 < p->count ? cuts[i].word[0] : UINT64_MAX;
    }
    workers_for(p->trace->workers, p->count, walk_one_segment, p);
    gboolean joined = !p->unjoinable && !p->joined.overflow && p->next_join == p->count;
    for (uint32_t i = 0; i < p->count; i++) {
        if (joined)
            trace_errors_replay(p->trace, &p->segments[i].errors);
        trace_error_list_clear(&p->segments[i].errors);
    }
    return joined;
}

/* ---- summary.csv ---- */

static void csv_row(GString *out, const struct name_row *row)
{
    g_string_append_c(out, ',');
    g_string_append_printf(out, "%" PRIu64 ",", row->count);
    if (row->has_dur)
        g_string_append_printf(out, "%" PRIu64 ",%" PRIu64 "\n", row->total_dur, row->max_dur);
    else
        g_string_append(out, ",\n");
}

static gint row_compare(gconstpointer a, gconstpointer b)
{
    const struct name_row *x = *(struct name_row *const *)a, *y = *(struct name_row *const *)b;
    int c = memcmp(x->name, y->name, MIN(x->len, y->len));
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static GString *walk_csv(struct walk *w)
{
    GString *out = g_string_new(EVENT_SUMMARY_HEADER);
    GPtrArray *rows = g_ptr_array_new();
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, w->rows);
    while (g_hash_table_iter_next(&iter, NULL, &value))
        g_ptr_array_add(rows, value);
    g_ptr_array_sort(rows, row_compare);
    for (guint i = 0; i < rows->len; i++) {
        const struct name_row *row = rows->pdata[i];
        text_csv_field(out, row->name, row->len, TRUE);
        csv_row(out, row);
    }
    g_ptr_array_unref(rows);
    if (w->overflow) {
        g_string_append(out, "(other names)");
        csv_row(out, &w->other);
    }
    return out;
}

/* Takes the walk's totals and summary, and frees it. */
static GString *walk_results(struct walk *w, struct event_totals *totals)
{
    *totals = w->totals;
    totals->threads = g_hash_table_size(w->threads);
    GString *summary = walk_csv(w);
    walk_clear(w);
    return summary;
}

static GString *walk_whole(struct trace *trace, const struct trace_event_iterator *events,
                           struct thread_presence *presence, struct event_totals *totals)
{
    struct walk w;
    walk_init(&w, WALK_WHOLE);
    struct view_cursor cursor;
    trace_event_begin(events, trace, &cursor);
    uint64_t errors = trace_error_count(trace);
    w.totals.failed = walk_range(trace, events, &w, cursor, UINT64_MAX, presence, NULL) == VIEW_ERROR;
    if (w.overflow)
        trace_error(trace, "summary.csv", 0, "more than %u distinct event names: the rest are one row",
                    LIMIT_SUMMARY_NAMES);
    if (presence)
        thread_presence_learn_end(presence, !w.totals.failed && trace_error_count(trace) == errors);
    return walk_results(&w, totals);
}

/* The segments may hold this share of the tables' budget beside the
 * joined walk; past it the walk is done in one pass. */
#define WALK_HELD_SHARE 4u

GString *event_walk(struct trace *trace, const struct trace_event_iterator *events, const struct view_cursor *cuts,
                    uint32_t cut_count, struct thread_presence *presence, struct event_totals *totals,
                    uint32_t *segments)
{
    *segments = 1;
    if (cut_count == 0 || !trace->workers || workers_threads(trace->workers) < 2)
        return walk_whole(trace, events, presence, totals);
    uint64_t file_bytes = trace->is_directory ? 0 : (uint64_t)trace->st.st_size;
    struct parallel_walk p = { .trace = trace, .events = events, .presence = presence, .count = cut_count + 1,
                               .held_max = (int64_t)(limit_table_budget(file_bytes) / WALK_HELD_SHARE) };
    p.segments = g_new0(struct walk_segment, p.count);
    pthread_mutex_init(&p.lock, NULL);
    walk_init(&p.joined, WALK_JOINED);
    gboolean joined = walk_segments(&p, cuts);
    pthread_mutex_destroy(&p.lock);
    g_free(p.segments);
    if (joined) {
        *segments = p.count;
        return walk_results(&p.joined, totals);
    }
    walk_clear(&p.joined);
    if (workers_stopping(trace->workers)) {
        memset(totals, 0, sizeof *totals);
        totals->failed = TRUE;
        return g_string_new(EVENT_SUMMARY_HEADER);
    }
    return walk_whole(trace, events, presence, totals);
}
