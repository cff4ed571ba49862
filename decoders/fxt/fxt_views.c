/* The views of the FXT tree.  Every record view's cursor is a file offset
 * (word 0) plus a little view-specific state; records that do not belong to
 * a view yield zero bytes, so no per-event memory is kept anywhere. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "fxt.h"
#include "sorted_search.h"
#include "text.h"
#include "thread_value.h"
#include "trace.h"

/* What a record view does with a record it read (unknown ones and the
 * bad bodies the index pass reported are skipped); `cursor` is already
 * past it. */
typedef void (*record_fn)(const struct view *view, struct view_cursor *cursor, const struct fxt_record *rec,
                          GString *out);

/* Decodes the record at *offset, advances past it and gives it to
 * `render`.  VIEW_END at the end, VIEW_ERROR when the trace no longer
 * reads as it did at index time. */
static enum view_step read_next(const struct view *view, uint64_t *offset, struct view_cursor *cursor,
                                GString *out, record_fn render)
{
    const struct fxt_state *state = view->context;
    struct fxt_reader reader;
    fxt_reader_open(&reader, state);
    enum view_step step = VIEW_RECORD;
    switch (fxt_read_record(&reader, *offset, FALSE)) {
    case FXT_READ_END:
        step = VIEW_END;
        break;
    case FXT_READ_BAD_HEADER:
        trace_error(state->trace, "fxt", *offset, "%s (while rendering)", reader.why);
        step = VIEW_ERROR;
        break;
    case FXT_READ_BAD_BODY:   /* reported by the index pass; skipped here */
        *offset = reader.next;
        break;
    case FXT_READ_OK:
        *offset = reader.next;
        if (!reader.record.unknown)
            render(view, cursor, &reader.record, out);
        break;
    }
    fxt_reader_close(&reader);
    return step;
}

void fxt_add_view(struct trace *trace, node_id dir, const char *name, size_t len, const struct view_ops *ops,
                  uint64_t arg0, uint64_t arg1, uint64_t arg2)
{
    struct view view = { .ops = ops, .context = trace->format_state, .arg = { arg0, arg1, arg2 } };
    tree_add_view_len(trace->tree, dir, name, len, &view);
}

/* A thread's files jump over the stretches without its events: where a
 * scan of its events at *offset may continue, offset itself or the start
 * of its next run of events; FALSE after its last. */
static gboolean thread_skip(const struct fxt_state *state, uint64_t thread, uint64_t *offset)
{
    const GArray *runs = ((const struct fxt_thread *)g_ptr_array_index(state->threads, thread))->runs;
    /* The first run that ends at or after offset. */
    size_t at = SORTED_BELOW(runs, struct fxt_reg, value, *offset);
    if (at == runs->len)
        return FALSE;
    *offset = MAX(*offset, g_array_index(runs, struct fxt_reg, at).offset);
    return TRUE;
}

static gboolean thread_event(const struct fxt_state *state, const struct fxt_record *rec, uint64_t thread)
{
    const struct fxt_thread *t = g_ptr_array_index(state->threads, thread);
    return rec->type == FXT_EVENT && rec->pid == t->pid && rec->tid == t->tid;
}

static gboolean line_matches(const struct view *view, const struct fxt_state *state, const struct fxt_record *rec)
{
    switch ((enum fxt_filter)view->arg[0]) {
    case FXT_FILTER_EVENTS:
        return rec->type == FXT_EVENT;
    case FXT_FILTER_PROVIDER:
        return rec->type == FXT_EVENT && rec->provider == view->arg[1];
    case FXT_FILTER_THREAD:
        return thread_event(state, rec, view->arg[1]);
    case FXT_FILTER_LOGS:
        return rec->type == FXT_LOG;
    case FXT_FILTER_CPU:
        return rec->type == FXT_SCHED && rec->cpu == view->arg[1];
    }
    return FALSE;
}

static void offset_begin(const struct view *view, struct view_cursor *cursor)
{
    const struct fxt_state *state = view->context;
    cursor->word[0] = state->data_start;
}

static void line_record(const struct view *view, struct view_cursor *cursor, const struct fxt_record *rec,
                        GString *out)
{
    (void)cursor;
    if (!line_matches(view, view->context, rec))
        return;
    if (rec->type == FXT_EVENT)
        (view->arg[2] ? fxt_render_event_json : fxt_render_event_line)(rec, out);
    else if (rec->type == FXT_LOG)
        fxt_render_log_line(rec, out);
    else
        fxt_render_sched_line(rec, out);
}

static enum view_step lines_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    if (view->arg[0] == FXT_FILTER_THREAD && !thread_skip(view->context, view->arg[1], &cursor->word[0]))
        return VIEW_END;
    return read_next(view, &cursor->word[0], cursor, out, line_record);
}

/* Segments start where runs of a thread's events start (record starts the
 * index pass knows), evenly chosen among them.  A record is one FXT
 * record, word[0] its offset.  A thread's own files are not cut: their
 * `next` jumps over other threads' records, across any cut. */
static gboolean run_cut(const void *context, uint64_t i, struct view_cursor *cursor)
{
    cursor->word[0] = g_array_index((const GArray *)context, struct fxt_reg, i).offset;
    return TRUE;
}

static uint32_t lines_segments(const struct view *view, struct view_cursor *cursors, uint32_t max)
{
    const struct fxt_state *state = view->context;
    if (view->arg[0] == FXT_FILTER_THREAD)
        return 0;
    uint64_t records = 0;
    for (unsigned i = 0; i < G_N_ELEMENTS(state->totals.records); i++)
        records += state->totals.records[i];
    GArray *starts = fxt_run_starts(state);
    uint32_t count = view_segment_cuts(records, starts->len, max, run_cut, starts, cursors);
    g_array_free(starts, TRUE);
    return count;
}

static const struct view_ops lines_ops = { .begin = offset_begin, .next = lines_next, .segments = lines_segments };

/* view->arg: [0] filter, [1] filter argument, [2] json flag. */
void fxt_add_lines(struct trace *trace, node_id dir, const char *name, enum fxt_filter filter, uint64_t arg, gboolean json)
{
    fxt_add_view(trace, dir, name, strlen(name), &lines_ops, filter, arg, json);
}

/* ---- spans: begin/end pairs and complete events of one thread ---- */

/* A span's end is found by a scan forward over its thread's events; the
 * scan passes the begins nested in the span and closes them all before
 * it, so it keeps their ends too (up to SPAN_ENDS_KEPT): N nested spans
 * cost one scan instead of N scans of up to N records (32,000 nested
 * begins: 21 s for one thread's spans).  Each reader thread keeps its
 * last scan's ends. */
#define SPAN_ENDS_KEPT 4096u

struct span_end {
    uint64_t after_begin;     /* the offset just past the begin record */
    uint64_t end_ns;
    uint64_t ended;           /* 0: the span never ends */
};

struct span_ends {
    uint64_t generation, thread;   /* whose scan this is */
    GArray *ends;                  /* struct span_end, by after_begin */
    GArray *open;                  /* scratch: indexes of the kept begins still open */
    uint64_t uncounted;            /* scratch: open begins past SPAN_ENDS_KEPT, above those */
};

static void span_ends_free(gpointer data)
{
    struct span_ends *kept = data;
    g_array_unref(kept->ends);
    g_array_unref(kept->open);
    g_free(kept);
}

static GPrivate span_ends_key = G_PRIVATE_INIT(span_ends_free);

static void keep_begin(struct span_ends *kept, uint64_t after_begin)
{
    struct span_end end = { after_begin, 0, 0 };
    guint index = kept->ends->len;
    g_array_append_val(kept->ends, end);
    g_array_append_val(kept->open, index);
}

/* Past SPAN_ENDS_KEPT begins the rest only count: they are nested deepest,
 * so they close before any kept one.  FALSE once the first begin ends. */
static gboolean span_step(struct span_ends *kept, const struct fxt_record *rec, uint64_t next)
{
    if (rec->event_type == FXT_EV_DUR_BEGIN) {
        if (kept->ends->len < SPAN_ENDS_KEPT && !kept->uncounted)
            keep_begin(kept, next);
        else
            kept->uncounted++;
    } else if (rec->event_type == FXT_EV_DUR_END) {
        if (kept->uncounted) {
            kept->uncounted--;
            return TRUE;
        }
        guint index = g_array_index(kept->open, guint, kept->open->len - 1);
        struct span_end *end = &g_array_index(kept->ends, struct span_end, index);
        end->end_ns = rec->ts_ns;
        end->ended = 1;
        g_array_set_size(kept->open, kept->open->len - 1);
    }
    return kept->open->len > 0;
}

/* This thread's event records from `offset` on, each given to span_step
 * until it returns FALSE or the records end. */
static void scan_spans(const struct fxt_state *state, uint64_t thread, uint64_t offset, struct span_ends *kept)
{
    struct fxt_reader reader, *r = &reader;
    fxt_reader_open(r, state);
    while (thread_skip(state, thread, &offset)) {
        enum fxt_read_result res = fxt_read_record(r, offset, TRUE);
        if (res == FXT_READ_END || res == FXT_READ_BAD_HEADER)
            break;
        offset = r->next;
        if (res == FXT_READ_OK && !r->record.unknown && thread_event(state, &r->record, thread) &&
            !span_step(kept, &r->record, r->next))
            break;
    }
    fxt_reader_close(r);
}

static const struct span_end *kept_end(const struct span_ends *kept, uint64_t after_begin)
{
    size_t at = SORTED_BELOW(kept->ends, struct span_end, after_begin, after_begin);
    if (at == kept->ends->len)
        return NULL;
    const struct span_end *end = &g_array_index(kept->ends, struct span_end, at);
    return end->after_begin == after_begin ? end : NULL;
}

/* The end of the span whose begin record ends at `offset`.  FALSE when it
 * never ends. */
static gboolean find_span_end(const struct fxt_state *state, uint64_t thread, uint64_t offset, uint64_t *end_ns)
{
    struct span_ends *kept = thread_value(&span_ends_key, sizeof *kept);
    if (!kept->ends) {
        kept->ends = g_array_new(FALSE, FALSE, sizeof(struct span_end));
        kept->open = g_array_new(FALSE, FALSE, sizeof(guint));
    }
    const struct span_end *end = kept->generation == state->generation && kept->thread == thread
                                     ? kept_end(kept, offset) : NULL;
    if (!end) {
        kept->generation = state->generation;
        kept->thread = thread;
        g_array_set_size(kept->ends, 0);
        g_array_set_size(kept->open, 0);
        kept->uncounted = 0;
        keep_begin(kept, offset);
        scan_spans(state, thread, offset, kept);
        end = kept_end(kept, offset);
    }
    *end_ns = end->end_ns;
    return end->ended != 0;
}

static void span_line(GString *out, const struct fxt_record *rec, gboolean has_dur, int64_t dur, uint64_t depth)
{
    g_string_append_printf(out, "%" PRIu64 " ", rec->ts_ns);
    if (has_dur)
        g_string_append_printf(out, "%" PRId64, dur);
    else
        g_string_append_c(out, '-');
    g_string_append_printf(out, " %" PRIu64 " ", depth);
    if (rec->category.len)
        fxt_render_token(out, rec->category, 0);
    g_string_append_c(out, ':');
    fxt_render_token(out, rec->name, 0);
    g_string_append_c(out, '\n');
}

static void span_record(const struct view *view, struct view_cursor *cursor, const struct fxt_record *rec,
                        GString *out)
{
    const struct fxt_state *state = view->context;
    if (!thread_event(state, rec, view->arg[1]))
        return;
    uint64_t end_ns = 0;
    switch (rec->event_type) {
    case FXT_EV_DUR_BEGIN: {
        gboolean ended = find_span_end(state, view->arg[1], cursor->word[0], &end_ns);
        span_line(out, rec, ended, (int64_t)(end_ns - rec->ts_ns), cursor->word[1]);
        cursor->word[1]++;
        break;
    }
    case FXT_EV_DUR_END:
        if (cursor->word[1] > 0)
            cursor->word[1]--;
        break;
    case FXT_EV_DUR_COMPLETE:
        span_line(out, rec, TRUE, (int64_t)(rec->extra_ns - rec->ts_ns), cursor->word[1]);
        break;
    default:
        break;
    }
}

/* view->arg[1]: the thread; cursor word[1]: the depth of open spans. */
static enum view_step spans_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    if (!thread_skip(view->context, view->arg[1], &cursor->word[0]))
        return VIEW_END;
    return read_next(view, &cursor->word[0], cursor, out, span_record);
}

const struct view_ops fxt_spans_ops = { .begin = offset_begin, .next = spans_next };

/* ---- counters/<name>.<id>.csv ---- */

static void csv_field(GString *out, struct fxt_str s)
{
    text_csv_field(out, s.data, s.len, FALSE);
}

static void csv_value(GString *out, const struct fxt_arg *a)
{
    if (a->type == FXT_ARG_STRING)
        csv_field(out, a->text);
    else if (a->type == FXT_ARG_POINTER || a->type > FXT_ARG_BOOL)
        text_append_u64(out, a->value);   /* a pointer in decimal; 0 for a type newer than the spec */
    else if (a->type != FXT_ARG_NULL)
        fxt_render_arg_value(out, a);     /* numbers and bools as the lines give them */
}

static gboolean same_str(struct fxt_str a, struct fxt_str b)
{
    return a.len == b.len && memcmp(a.data, b.data, a.len) == 0;
}

static void counter_record(const struct view *view, struct view_cursor *cursor, const struct fxt_record *rec,
                           GString *out)
{
    const struct fxt_state *state = view->context;
    const struct fxt_counter *counter = g_ptr_array_index(state->counters, view->arg[1]);
    (void)cursor;
    if (rec->type != FXT_EVENT || rec->event_type != FXT_EV_COUNTER || rec->extra != counter->id ||
        !same_str(rec->name, fxt_pool_string(state, counter->name_string)))
        return;
    g_string_append_printf(out, "%" PRIu64, rec->ts_ns);
    for (guint i = 0; i < counter->columns->len; i++) {
        struct fxt_str column = fxt_pool_string(state, g_array_index(counter->columns, uint32_t, i));
        g_string_append_c(out, ',');
        for (uint32_t a = 0; a < rec->arg_count; a++)
            if (same_str(rec->args[a].name, column)) {
                csv_value(out, &rec->args[a]);
                break;
            }
    }
    g_string_append_c(out, '\n');
}

/* view->arg[1]: the counter; cursor word[1]: the header is written. */
static enum view_step counter_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    const struct fxt_state *state = view->context;
    const struct fxt_counter *counter = g_ptr_array_index(state->counters, view->arg[1]);
    if (cursor->word[1])
        return read_next(view, &cursor->word[0], cursor, out, counter_record);
    cursor->word[1] = 1;
    g_string_append(out, "ts_ns");
    for (guint i = 0; i < counter->columns->len; i++) {
        g_string_append_c(out, ',');
        csv_field(out, fxt_pool_string(state, g_array_index(counter->columns, uint32_t, i)));
    }
    g_string_append_c(out, '\n');
    return VIEW_RECORD;
}

const struct view_ops fxt_counter_ops = { .begin = offset_begin, .next = counter_next };

/* ---- kobjects/<koid>.json, uobjects/<pointer>.json: one record ---- */

static void object_record(const struct view *view, struct view_cursor *cursor, const struct fxt_record *rec,
                          GString *out)
{
    (void)view;
    (void)cursor;
    fxt_render_object_json(rec, out);
}

/* view->arg[0]: the object's record; cursor word[1]: it is written. */
static enum view_step object_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    if (cursor->word[1])
        return VIEW_END;
    cursor->word[1] = 1;
    uint64_t offset = view->arg[0];
    return read_next(view, &offset, cursor, out, object_record);
}

const struct view_ops fxt_object_ops = { .next = object_next };

/* ---- blobs/<name>: the payloads of every blob record of that name ---- */

static uint64_t blob_size(const struct view *view)
{
    const struct fxt_state *state = view->context;
    return ((const struct fxt_blob *)g_ptr_array_index(state->blobs, view->arg[0]))->size;
}

static ssize_t blob_read_at(const struct view *view, uint64_t offset, void *buf, size_t len)
{
    const struct fxt_state *state = view->context;
    const struct fxt_blob *blob = g_ptr_array_index(state->blobs, view->arg[0]);
    size_t done = 0;
    /* Segments: offset = file offset, value = length, value2 = blob offset. */
    for (guint i = 0; i < blob->segments->len && done < len; i++) {
        const struct fxt_reg *seg = &g_array_index(blob->segments, struct fxt_reg, i);
        uint64_t at = offset + done;
        if (at >= seg->value2 + seg->value || at < seg->value2)
            continue;
        uint64_t skip = at - seg->value2;
        size_t n = (size_t)MIN((uint64_t)(len - done), seg->value - skip);
        int rc = stream_read_exact(state->stream, seg->offset + skip, (uint8_t *)buf + done, n);
        if (rc != 0)
            return rc == -ENODATA ? -EIO : rc;
        done += n;
    }
    return (ssize_t)done;
}

/* view->arg[0]: the blob. */
const struct view_ops fxt_blob_ops = { .size = blob_size, .read_at = blob_read_at };
