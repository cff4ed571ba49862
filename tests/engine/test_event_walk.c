/* engine/event_walk.c: the walk behind summary.csv and info.json's totals
 * gives the same summary, totals and /errors with 2 and 7 threads as with
 * one, when it joins its segments (slices open across cuts, ends closing
 * begins of earlier segments, ends with nothing open, begins and ends
 * without a time) and when it must walk again in one pass (a stack as
 * deep as LIMIT_SUMMARY_DEPTH across a cut, more names than the summary
 * keeps, events that fail); and it learns every stretch's threads. */
#include <glib.h>
#include <pthread.h>
#include <string.h>
#include "event_walk.h"
#include "thread_presence.h"
#include "trace.h"
#include "trace_event.h"
#include "tracefs_limits.h"
#include "workers.h"

struct made_event {
    enum trace_event_kind kind;
    int64_t tid;
    gboolean has_ts;
    uint64_t ts, dur;
    char name[24];
};

/* The events of the trace under test; word[0] of a cursor is an event's number. */
struct made_trace {
    GArray *events;            /* struct made_event */
    uint64_t fail_at;          /* next() fails here (UINT64_MAX: never) */
    uint64_t warn_at;          /* next() reports an error here and goes on */
};

static struct made_trace made;

static enum view_step made_next(struct trace *trace, struct view_cursor *cursor, struct trace_event *event,
                                struct trace_event_scratch *scratch)
{
    (void)scratch;
    uint64_t at = cursor->word[0];
    if (at >= made.events->len)
        return VIEW_END;
    if (at == made.fail_at) {
        trace_error(trace, "made", at, "the events fail here");
        return VIEW_ERROR;
    }
    if (at == made.warn_at)
        trace_error(trace, "made", at, "an odd event");
    const struct made_event *e = &g_array_index(made.events, struct made_event, at);
    memset(event, 0, sizeof *event);
    *event = (struct trace_event){ .seq = at, .has_ts = e->has_ts, .ts = e->ts, .kind = e->kind, .pid = 1,
                                   .tid = e->tid, .cat = "", .name = e->name, .name_len = strlen(e->name) };
    if (e->kind == TRACE_EVENT_COMPLETE) {
        event->has_dur = TRUE;
        event->dur = e->dur;
    }
    cursor->word[0] = at + 1;
    return VIEW_RECORD;
}

static const struct trace_event_iterator made_iterator = { .next = made_next };

static void add_event(enum trace_event_kind kind, int64_t tid, gboolean has_ts, uint64_t ts, const char *name)
{
    struct made_event e = { .kind = kind, .tid = tid, .has_ts = has_ts, .ts = ts, .dur = ts % 7 };
    g_strlcpy(e.name, name, sizeof e.name);
    g_array_append_val(made.events, e);
}

static void made_reset(void)
{
    if (made.events)
        g_array_unref(made.events);
    made.events = g_array_new(FALSE, FALSE, sizeof(struct made_event));
    made.fail_at = made.warn_at = UINT64_MAX;
}

struct walked {
    struct event_totals totals;
    GString *summary;
    GString *errors;
    uint32_t segments;
    uint32_t known, stretches;
};

/* One walk with `threads` threads, cut every `stride` events. */
static struct walked walk_with(unsigned threads, uint32_t stride)
{
    struct trace *trace = g_new0(struct trace, 1);
    pthread_mutex_init(&trace->errors_lock, NULL);
    trace->errors = g_string_new(NULL);
    trace->workers = workers_new(threads);
    struct view_cursor cuts[LIMIT_VIEW_SEGMENTS - 1];
    uint32_t cut_count = 0;
    for (uint64_t at = stride; at < made.events->len && cut_count < G_N_ELEMENTS(cuts); at += stride) {
        memset(&cuts[cut_count], 0, sizeof cuts[cut_count]);
        cuts[cut_count++].word[0] = at;
    }
    struct thread_presence *presence = thread_presence_new(0, cuts, cut_count);
    for (int64_t tid = 0; tid < 8; tid++)
        thread_presence_add_thread(presence, 1, tid);
    struct walked out = { 0 };
    out.summary = event_walk(trace, &made_iterator, cuts, cut_count, presence, &out.totals, &out.segments);
    out.errors = g_string_new(trace->errors->str);
    uint64_t skipped;
    thread_presence_counts(presence, &out.known, &out.stretches, &skipped);
    thread_presence_free(presence);
    workers_free(trace->workers);
    g_string_free(trace->errors, TRUE);
    pthread_mutex_destroy(&trace->errors_lock);
    g_free(trace);
    return out;
}

static void walked_free(struct walked *w)
{
    g_string_free(w->summary, TRUE);
    g_string_free(w->errors, TRUE);
}

/* The same results with 1, 2 and 7 threads; returns the segments the
 * 2-thread walk joined. */
static uint32_t check_same(uint32_t stride)
{
    struct walked one = walk_with(1, stride);
    g_assert_cmpuint(one.segments, ==, 1);
    uint32_t joined = 0;
    for (unsigned threads = 2; threads <= 7; threads += 5) {
        struct walked many = walk_with(threads, stride);
        g_assert_cmpstr(many.summary->str, ==, one.summary->str);
        g_assert_cmpstr(many.errors->str, ==, one.errors->str);
        g_assert_cmpmem(&many.totals, sizeof many.totals, &one.totals, sizeof one.totals);
        if (threads == 2)
            joined = many.segments;
        walked_free(&many);
    }
    walked_free(&one);
    return joined;
}

/* Slices across cuts, ends that close begins two segments back, ends with
 * nothing open, begins and ends without a time. */
static void test_slices_across_cuts(void)
{
    made_reset();
    add_event(TRACE_EVENT_BEGIN, 1, TRUE, 0, "outer");        /* segment 0: [0, 3) */
    add_event(TRACE_EVENT_BEGIN, 1, TRUE, 5, "inner");
    add_event(TRACE_EVENT_END, 2, TRUE, 6, "");               /* nothing open on 2: no row */
    add_event(TRACE_EVENT_INSTANT, 1, TRUE, 7, "mark");       /* segment 1: [3, 6) */
    add_event(TRACE_EVENT_BEGIN, 2, FALSE, 0, "untimed");
    add_event(TRACE_EVENT_END, 2, TRUE, 9, "");               /* closes an untimed begin: no duration */
    add_event(TRACE_EVENT_END, 1, TRUE, 15, "");              /* segment 2: closes inner (10) */
    add_event(TRACE_EVENT_COMPLETE, 1, TRUE, 16, "work");
    add_event(TRACE_EVENT_END, 1, FALSE, 0, "");              /* closes outer without a time */
    add_event(TRACE_EVENT_END, 1, TRUE, 30, "");              /* segment 3: nothing open */
    add_event(TRACE_EVENT_BEGIN, 3, TRUE, 31, "outer");
    add_event(TRACE_EVENT_END, 3, TRUE, 40, "");
    g_assert_cmpuint(check_same(3), ==, 4);
    struct walked w = walk_with(2, 3);
    g_assert_cmpstr(w.summary->str, ==,
                    EVENT_SUMMARY_HEADER "inner,1,10,10\nmark,1,,\nouter,2,9,9\nuntimed,1,,\nwork,1,2,2\n");
    g_assert_cmpuint(w.totals.events, ==, 12);
    g_assert_cmpuint(w.totals.threads, ==, 3);
    g_assert_cmpuint(w.totals.first_ts, ==, 0);
    g_assert_cmpuint(w.totals.last_end, ==, 40);
    g_assert_false(w.totals.failed);
    g_assert_cmpuint(w.known, ==, w.stretches);
    walked_free(&w);
}

/* Random nesting on 8 threads, cut every 7 to every 500 events. */
static void test_random_events(void)
{
    made_reset();
    GRand *rand = g_rand_new_with_seed(7);
    uint32_t depth[8] = { 0 };
    uint64_t now = 0;
    for (int i = 0; i < 20000; i++) {
        int64_t tid = g_rand_int_range(rand, 0, 8);
        now += (uint64_t)g_rand_int_range(rand, 0, 3);
        gboolean has_ts = g_rand_int_range(rand, 0, 20) != 0;
        char name[24];
        g_snprintf(name, sizeof name, "n%d", g_rand_int_range(rand, 0, 40));
        int pick = g_rand_int_range(rand, 0, 10);
        if (pick < 4) {
            add_event(TRACE_EVENT_BEGIN, tid, has_ts, now, name);
            depth[tid]++;
        } else if (pick < 8) {
            add_event(TRACE_EVENT_END, tid, has_ts, now, "");    /* sometimes with nothing open */
            depth[tid] -= depth[tid] > 0;
        } else {
            add_event(pick == 8 ? TRACE_EVENT_COMPLETE : TRACE_EVENT_INSTANT, tid, has_ts, now, name);
        }
    }
    g_rand_free(rand);
    const uint32_t strides[] = { 7, 100, 500 };
    for (guint i = 0; i < G_N_ELEMENTS(strides); i++)
        g_assert_cmpuint(check_same(strides[i]), >, 1);
}

/* A stack LIMIT_SUMMARY_DEPTH deep across a cut: the join cannot tell
 * which begins the serial walk times, so the walk goes again in one pass. */
static void test_deep_stack(void)
{
    made_reset();
    for (uint32_t i = 0; i < LIMIT_SUMMARY_DEPTH + 20; i++)
        add_event(TRACE_EVENT_BEGIN, 1, TRUE, i, i % 2 ? "odd" : "even");
    for (uint32_t i = 0; i < LIMIT_SUMMARY_DEPTH + 20; i++)
        add_event(TRACE_EVENT_END, 1, TRUE, 1000 + i, "");
    g_assert_cmpuint(check_same(50), ==, 1);
    /* Shallower than the limit, it joins. */
    made_reset();
    for (uint32_t i = 0; i < LIMIT_SUMMARY_DEPTH - 1; i++)
        add_event(TRACE_EVENT_BEGIN, 1, TRUE, i, i % 2 ? "odd" : "even");
    for (uint32_t i = 0; i < LIMIT_SUMMARY_DEPTH - 1; i++)
        add_event(TRACE_EVENT_END, 1, TRUE, 1000 + i, "");
    g_assert_cmpuint(check_same(50), >, 1);
}

/* More names than the summary keeps: the first ones in trace order keep
 * their rows, as in one pass. */
static void test_too_many_names(void)
{
    made_reset();
    for (uint32_t i = 0; i < LIMIT_SUMMARY_NAMES + 100; i++) {
        char name[24];
        g_snprintf(name, sizeof name, "f%u", (LIMIT_SUMMARY_NAMES + 100 - i) * 7919u % 1000003u);
        add_event(TRACE_EVENT_COMPLETE, 1, TRUE, i, name);
    }
    g_assert_cmpuint(check_same(1000), ==, 1);
    struct walked w = walk_with(2, 1000);
    g_assert_nonnull(strstr(w.summary->str, "(other names),100,"));
    walked_free(&w);
}

/* Events that fail end the walk where one pass ends it, with its error
 * once; an error that does not end them is reported once, in order. */
static void test_errors(void)
{
    made_reset();
    for (int i = 0; i < 3000; i++)
        add_event(i % 3 == 0 ? TRACE_EVENT_BEGIN : i % 3 == 1 ? TRACE_EVENT_INSTANT : TRACE_EVENT_END, i % 5, TRUE,
                  (uint64_t)i, "x");
    made.warn_at = 1234;
    g_assert_cmpuint(check_same(100), >, 1);
    struct walked w = walk_with(2, 100);
    g_assert_nonnull(strstr(w.errors->str, "offset 1234: an odd event"));
    g_assert_cmpuint(w.known, ==, w.stretches - 1);      /* the stretch that reported it is not known */
    walked_free(&w);
    made.fail_at = 2222;
    g_assert_cmpuint(check_same(100), ==, 1);
    w = walk_with(7, 100);
    g_assert_true(w.totals.failed);
    g_assert_cmpuint(w.totals.events, ==, 2222);
    walked_free(&w);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/event_walk/slices_across_cuts", test_slices_across_cuts);
    g_test_add_func("/event_walk/random_events", test_random_events);
    g_test_add_func("/event_walk/deep_stack", test_deep_stack);
    g_test_add_func("/event_walk/too_many_names", test_too_many_names);
    g_test_add_func("/event_walk/errors", test_errors);
    int rc = g_test_run();
    g_array_unref(made.events);
    return rc;
}
