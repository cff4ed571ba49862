/* The made-up trace of the common-event tests (see synthetic_events.h). */
#include <string.h>
#include "event_json.h"
#include "perfetto_writer.h"
#include "synthetic_events.h"
#include "trace.h"

struct gen_thread {
    int64_t pid, tid;
    uint32_t depth;
    uint64_t busy_until;   /* the end of its last complete event */
};

struct open_async {
    uint32_t thread;
    uint64_t id;
};

struct gen {
    GRand *rand;
    GArray *events;
    uint64_t now;
    struct gen_thread threads[6];
    GArray *open_flows;    /* uint64_t */
    GArray *open_asyncs;   /* struct open_async */
    uint64_t next_id;
};

static const char *const names[] = {
    "draw", "wait \"quoted\"", "new\nline", "bad\xffutf8", "caf\xc3\xa9", "", "read", "write", "tab\there",
};
static const char *const cats[] = { "", "gfx", "io", "a,b" };

static void free_event(struct synthetic_event *e)
{
    g_bytes_unref(e->cat);
    g_bytes_unref(e->name);
    for (guint i = 0; i < e->args->len; i++) {
        struct synthetic_arg *a = &g_array_index(e->args, struct synthetic_arg, i);
        g_free(a->key);
        if (a->s)
            g_bytes_unref(a->s);
    }
    g_array_free(e->args, TRUE);
}

static struct synthetic_event *add(struct gen *g, enum trace_event_kind kind, const struct gen_thread *thread,
                                   const char *cat, const char *name)
{
    struct synthetic_event e;
    memset(&e, 0, sizeof e);
    e.base.seq = g->events->len;
    e.base.kind = kind;
    e.base.has_ts = TRUE;
    e.base.ts = g->now;
    e.base.pid = thread->pid;
    e.base.tid = thread->tid;
    e.cat = g_bytes_new(cat, strlen(cat));
    e.name = g_bytes_new(name, strlen(name));
    e.args = g_array_new(FALSE, TRUE, sizeof(struct synthetic_arg));
    g_array_append_val(g->events, e);
    return &g_array_index(g->events, struct synthetic_event, g->events->len - 1);
}

static struct synthetic_arg *add_arg(struct synthetic_event *e, const char *key, enum trace_arg_type type)
{
    struct synthetic_arg a = { .key = g_strdup(key), .type = type };
    g_array_append_val(e->args, a);
    return &g_array_index(e->args, struct synthetic_arg, e->args->len - 1);
}

static void add_every_arg_type(struct synthetic_event *e)
{
    add_arg(e, "i", TRACE_ARG_INT)->i = -5;
    add_arg(e, "big_i", TRACE_ARG_INT)->i = INT64_MIN;
    add_arg(e, "u", TRACE_ARG_UINT)->u = 42;
    add_arg(e, "big_u", TRACE_ARG_UINT)->u = (UINT64_C(1) << 63) + 5;
    add_arg(e, "d", TRACE_ARG_DOUBLE)->d = 0.25;
    add_arg(e, "s", TRACE_ARG_STRING)->s = g_bytes_new("str \"q\"\xfe\n", 9);
    add_arg(e, "p", TRACE_ARG_POINTER)->u = UINT64_C(0x7ffd1234abcd);
    add_arg(e, "b", TRACE_ARG_BOOL)->i = 1;
    add_arg(e, "nothing", TRACE_ARG_NULL);
    add_arg(e, "k\xc3\xa9y \"q\"", TRACE_ARG_INT)->i = 7;
    add_arg(e, "nul", TRACE_ARG_STRING)->s = g_bytes_new("a\0b", 3);
}

static const char *pick(struct gen *g, const char *const *pool, size_t n)
{
    return pool[g_rand_int_range(g->rand, 0, (gint32)n)];
}

/* The thread's clock: after the global one, and after its last complete
 * event, so that nothing on the thread starts inside a complete event it
 * does not nest in. */
static struct gen_thread *step_thread(struct gen *g, struct gen_thread *thread)
{
    g->now += (uint64_t)g_rand_int_range(g->rand, 0, 40);
    if (g->now < thread->busy_until)
        g->now = thread->busy_until;
    return thread;
}

static void add_flow_or_async_end(struct gen *g, struct gen_thread *t, int r)
{
    if (r < 88 && g->open_flows->len) {
        uint64_t id = g_array_index(g->open_flows, uint64_t, 0);
        gboolean end = g_rand_boolean(g->rand);
        struct synthetic_event *e = add(g, end ? TRACE_EVENT_FLOW_END : TRACE_EVENT_FLOW_STEP, t, "flow", "hop");
        e->base.has_id = TRUE;
        e->base.id = id;
        if (end)
            g_array_remove_index(g->open_flows, 0);
        return;
    }
    for (guint i = 0; i < g->open_asyncs->len; i++) {
        struct open_async *a = &g_array_index(g->open_asyncs, struct open_async, i);
        if (g->threads[a->thread].pid != t->pid)
            continue;
        gboolean end = g_rand_boolean(g->rand);
        struct synthetic_event *e = add(g, end ? TRACE_EVENT_ASYNC_END : TRACE_EVENT_ASYNC_INSTANT, t, "net",
                                        end ? "request" : "progress");
        e->base.has_id = TRUE;
        e->base.id = a->id;
        if (end)
            g_array_remove_index(g->open_asyncs, i);
        return;
    }
    add(g, TRACE_EVENT_INSTANT, t, "gfx", "idle");
}

static void add_one(struct gen *g, uint32_t step, uint32_t count)
{
    struct gen_thread *t = step_thread(g, &g->threads[g_rand_int_range(g->rand, 0, G_N_ELEMENTS(g->threads))]);
    /* A burst of distinct names and keys: more than a segment's interning
     * table holds, so the writer falls back to inline strings. */
    uint32_t burst = count / 3;
    if (step >= burst && step < burst + 1300) {
        char name[32], key[32];
        g_snprintf(name, sizeof name, "burst_%u", step);
        g_snprintf(key, sizeof key, "key_%u", step);
        add_arg(add(g, TRACE_EVENT_INSTANT, t, "burst", name), key, TRACE_ARG_UINT)->u = step;
        return;
    }
    int r = g_rand_int_range(g->rand, 0, 100);
    if (r < 25 && t->depth < 6) {
        struct synthetic_event *e = add(g, TRACE_EVENT_BEGIN, t, pick(g, cats, G_N_ELEMENTS(cats)),
                                        pick(g, names, G_N_ELEMENTS(names)));
        add_arg(e, "depth", TRACE_ARG_UINT)->u = t->depth;
        t->depth++;
    } else if (r < 45 && t->depth > 0) {
        add(g, TRACE_EVENT_END, t, "", "");
        t->depth--;
    } else if (r < 60) {
        struct synthetic_event *e = add(g, TRACE_EVENT_COMPLETE, t, pick(g, cats, G_N_ELEMENTS(cats)),
                                        pick(g, names, G_N_ELEMENTS(names)));
        e->base.has_dur = TRUE;
        e->base.dur = (uint64_t)g_rand_int_range(g->rand, 0, 30);
        t->busy_until = g->now + e->base.dur;
    } else if (r < 70) {
        struct synthetic_event *e = add(g, TRACE_EVENT_INSTANT, t, "gfx", pick(g, names, G_N_ELEMENTS(names)));
        if (r < 64)
            add_every_arg_type(e);
    } else if (r < 78) {
        gboolean fps = g_rand_boolean(g->rand);
        struct synthetic_event *e = add(g, TRACE_EVENT_COUNTER, t, "mem", fps ? "fps" : "heap");
        if (fps) {
            add_arg(e, "value", TRACE_ARG_DOUBLE)->d = g_rand_int_range(g->rand, 0, 600) / 10.0;
        } else {
            add_arg(e, "used", TRACE_ARG_INT)->i = g_rand_int_range(g->rand, -10, 100000);
            add_arg(e, "free", TRACE_ARG_UINT)->u = (uint64_t)g_rand_int_range(g->rand, 0, 100000);
            add_arg(e, "label", TRACE_ARG_STRING)->s = g_bytes_new("not a number", 12);
        }
    } else if (r < 84) {
        struct synthetic_event *e = add(g, TRACE_EVENT_FLOW_BEGIN, t, "flow", "send");
        e->base.has_id = TRUE;
        e->base.id = ++g->next_id;
        g_array_append_val(g->open_flows, e->base.id);
    } else if (r < 90) {
        struct synthetic_event *e = add(g, TRACE_EVENT_ASYNC_BEGIN, t, "net", "request");
        e->base.has_id = TRUE;
        e->base.id = ++g->next_id;
        struct open_async a = { (uint32_t)(t - g->threads), e->base.id };
        g_array_append_val(g->open_asyncs, a);
    } else {
        add_flow_or_async_end(g, t, r);
    }
}

/* Everything still open is closed, as an iterator must leave it. */
static void close_all(struct gen *g)
{
    for (guint k = 0; k < G_N_ELEMENTS(g->threads); k++) {
        struct gen_thread *t = &g->threads[k];
        while (t->depth > 0) {
            step_thread(g, t);
            add(g, TRACE_EVENT_END, t, "", "");
            t->depth--;
        }
    }
    while (g->open_flows->len) {
        struct synthetic_event *e = add(g, TRACE_EVENT_FLOW_END, step_thread(g, &g->threads[0]), "flow", "hop");
        e->base.has_id = TRUE;
        e->base.id = g_array_index(g->open_flows, uint64_t, 0);
        g_array_remove_index(g->open_flows, 0);
    }
    while (g->open_asyncs->len) {
        struct open_async *a = &g_array_index(g->open_asyncs, struct open_async, 0);
        struct synthetic_event *e = add(g, TRACE_EVENT_ASYNC_END, step_thread(g, &g->threads[a->thread]), "net",
                                        "request");
        e->base.has_id = TRUE;
        e->base.id = a->id;
        g_array_remove_index(g->open_asyncs, 0);
    }
}

struct synthetic_trace *synthetic_trace_new(uint32_t count, uint32_t seed)
{
    struct gen g = {
        .rand = g_rand_new_with_seed(seed),
        .events = g_array_new(FALSE, TRUE, sizeof(struct synthetic_event)),
        .now = 1000,
        /* A pid beyond int32 (Perfetto's descriptors cannot hold it) and a
         * tid beyond 2^53 (JSON lines write it as a string). */
        .threads = { { 100, 101, 0, 0 }, { 100, 102, 0, 0 }, { 200, 201, 0, 0 }, { 200, 202, 0, 0 },
                     { INT64_C(3000000000), 7, 0, 0 }, { 300, INT64_C(1) << 60, 0, 0 } },
        .open_flows = g_array_new(FALSE, FALSE, sizeof(uint64_t)),
        .open_asyncs = g_array_new(FALSE, FALSE, sizeof(struct open_async)),
    };
    for (uint32_t step = 0; step < count; step++)
        add_one(&g, step, count);
    close_all(&g);
    g_rand_free(g.rand);
    g_array_free(g.open_flows, TRUE);
    g_array_free(g.open_asyncs, TRUE);
    struct synthetic_trace *trace = g_new0(struct synthetic_trace, 1);
    trace->events = g.events;
    trace->fail_at = UINT64_MAX;
    return trace;
}

void synthetic_trace_free(struct synthetic_trace *trace)
{
    if (!trace)
        return;
    for (guint i = 0; i < trace->events->len; i++)
        free_event(&g_array_index(trace->events, struct synthetic_event, i));
    g_array_free(trace->events, TRUE);
    g_free(trace);
}

/* ---- the iterator: cursor word 0 = the next event's index ---- */

static void synthetic_begin(struct trace *trace, struct view_cursor *cursor)
{
    (void)trace;
    cursor->word[0] = 0;
}

static const char *bytes_of(GBytes *bytes, size_t *len)
{
    gsize size;
    const char *data = g_bytes_get_data(bytes, &size);
    *len = size;
    return data;
}

static enum view_step synthetic_next(struct trace *trace, struct view_cursor *cursor, struct trace_event *event,
                                     struct trace_event_scratch *scratch)
{
    const struct synthetic_trace *s = trace->format_state;
    uint64_t i = cursor->word[0];
    if (i == s->fail_at)
        return VIEW_ERROR;
    if (i >= s->events->len)
        return VIEW_END;
    const struct synthetic_event *e = &g_array_index(s->events, struct synthetic_event, i);
    trace_event_start(event, e->base.seq, e->base.kind);
    event->has_ts = e->base.has_ts;
    event->ts = e->base.ts;
    event->has_dur = e->base.has_dur;
    event->dur = e->base.dur;
    event->pid = e->base.pid;
    event->tid = e->base.tid;
    event->has_id = e->base.has_id;
    event->id = e->base.id;
    size_t len;
    const char *data = bytes_of(e->cat, &len);
    trace_event_set_cat(event, scratch, data, len);
    data = bytes_of(e->name, &len);
    trace_event_set_name(event, scratch, data, len);
    for (guint k = 0; k < e->args->len; k++) {
        const struct synthetic_arg *a = &g_array_index(e->args, struct synthetic_arg, k);
        size_t key_len = strlen(a->key);
        switch (a->type) {
        case TRACE_ARG_INT: trace_event_add_int(event, scratch, a->key, key_len, a->i); break;
        case TRACE_ARG_UINT: trace_event_add_uint(event, scratch, a->key, key_len, a->u); break;
        case TRACE_ARG_DOUBLE: trace_event_add_double(event, scratch, a->key, key_len, a->d); break;
        case TRACE_ARG_STRING:
            data = bytes_of(a->s, &len);
            trace_event_add_string(event, scratch, a->key, key_len, data, len);
            break;
        case TRACE_ARG_POINTER: trace_event_add_pointer(event, scratch, a->key, key_len, a->u); break;
        case TRACE_ARG_BOOL: trace_event_add_bool(event, scratch, a->key, key_len, a->i != 0); break;
        case TRACE_ARG_NULL:
        default: trace_event_add_null(event, scratch, a->key, key_len); break;
        }
    }
    cursor->word[0] = i + 1;
    return VIEW_RECORD;
}

/* Thread 101 is "main", 202 has a name that is not UTF-8; process 100 is
 * "app"; the others have none. */
static gboolean synthetic_thread_name(struct trace *trace, int64_t pid, int64_t tid, GString *out)
{
    (void)trace;
    (void)pid;
    if (tid == 101)
        g_string_append(out, "main");
    else if (tid == 202)
        g_string_append(out, "w\xe9rker");
    return tid == 101 || tid == 202;
}

static gboolean synthetic_process_name(struct trace *trace, int64_t pid, GString *out)
{
    (void)trace;
    if (pid != 100)
        return FALSE;
    g_string_append(out, "app");
    return TRUE;
}

const struct trace_event_iterator synthetic_iterator = {
    .begin = synthetic_begin,
    .next = synthetic_next,
    .thread_name = synthetic_thread_name,
    .process_name = synthetic_process_name,
};

/* ---- the iterator as record views (what the engine will build) ---- */

static void export_begin(const struct view *view, struct view_cursor *cursor)
{
    event_export_begin(view->context, &synthetic_iterator, cursor);
}

static enum view_step jsonl_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    struct trace_event_filter filter = { view->arg[0] == 1, (int64_t)view->arg[1], (int64_t)view->arg[2] };
    struct trace_event_scratch scratch;
    trace_event_scratch_init(&scratch);
    enum view_step step;
    struct trace_event event;
    while ((step = synthetic_iterator.next(view->context, cursor, &event, &scratch)) == VIEW_RECORD &&
           !trace_event_filter_accepts(&filter, &event))
        trace_event_scratch_reset(&scratch);
    if (step == VIEW_RECORD)
        event_json_line(&event, out);
    trace_event_scratch_clear(&scratch);
    return step;
}

static enum view_step chrome_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    struct trace_event_scratch scratch;
    trace_event_scratch_init(&scratch);
    enum view_step step = event_chrome_next(view->context, &synthetic_iterator, cursor, &scratch, out);
    trace_event_scratch_clear(&scratch);
    return step;
}

static enum view_step perfetto_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    struct trace_event_scratch scratch;
    trace_event_scratch_init(&scratch);
    struct perfetto_writer *writer = perfetto_writer_new();
    enum view_step step = perfetto_export_next(view->context, &synthetic_iterator, cursor, &scratch, writer, out);
    perfetto_writer_free(writer);
    trace_event_scratch_clear(&scratch);
    return step;
}

const struct view_ops synthetic_jsonl_ops = { .begin = export_begin, .next = jsonl_next };
const struct view_ops synthetic_chrome_ops = { .begin = export_begin, .next = chrome_next };
const struct view_ops synthetic_perfetto_ops = { .begin = export_begin, .next = perfetto_next };
