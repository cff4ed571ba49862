/* The engine's common files over a format's event iterator.  The record
 * views are thin: event_json.c and perfetto_writer.c render, the iterator
 * resumes from the cursor.  /summary.csv and the totals of /info.json come
 * from one walk of the events (event_walk.c), done the first time either
 * is read or sized, and kept (bounded by LIMIT_SUMMARY_NAMES rows). */
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include "event_files.h"
#include "event_json.h"
#include "event_walk.h"
#include "format.h"
#include "perfetto_writer.h"
#include "saved_bytes.h"
#include "text.h"
#include "thread_presence.h"
#include "thread_value.h"
#include "trace.h"
#include "tracefs_limits.h"
#include "tree.h"

struct event_files {
    struct trace *trace;
    const struct trace_event_iterator *events;
    pthread_mutex_t lock;      /* pthread's: TSan does not see GLib's futex-based GMutex */
    gboolean walked;
    gboolean walk_saveable;    /* walked, and may be saved: it added no /errors line (a saved copy
                                  loses nothing) and its summary fits saved_summary_max */
    gboolean walk_loaded;      /* the walk came from the saved index */
    gboolean walk_in_index;    /* the saved index holds it (loaded, or saved since) */
    uint32_t walk_segments;    /* the segments this mount's walk joined (1: one pass; 0: none) */
    struct event_totals totals;
    GString *summary;          /* /summary.csv */
    GString *info;             /* /info.json, rendered on first use */
    /* Where the sizing may cut the files (the iterator's cuts, taken once
     * when the files are added): iterator cursors, word[0] increasing. */
    struct view_cursor *cuts;
    uint32_t cut_count;
    /* Which threads have events between which cuts: a thread's file jumps
     * over the stretches without its events.  NULL when the files are not
     * cut. */
    struct thread_presence *presence;
};

/* A thread's file is cut at every THREAD_CUT_STRIDE-th cut only: each
 * segment that holds some of its events costs a checkpoint, and a trace
 * may have many threads. */
#define THREAD_CUT_STRIDE 16u

/* The cuts a view uses: those numbered stride - 1, 2 * stride - 1 ... */
static uint32_t view_cut_stride(const struct view *view)
{
    return view->arg[0] ? THREAD_CUT_STRIDE : 1;
}

/* The word[0] of the view's first cut after `word0`; UINT64_MAX: none. */
static uint64_t next_cut(const struct event_files *files, uint32_t stride, uint64_t word0)
{
    uint32_t lo = 0, hi = files->cut_count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (files->cuts[mid].word[0] <= word0)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t used = (uint64_t)lo + (stride - 1 - lo % stride);
    return used < files->cut_count ? files->cuts[used].word[0] : UINT64_MAX;
}

/* What a thread's event scratch keeps between records: an event of the
 * usual size needs no allocation, a big one's memory is given back. */
#define SCRATCH_KEPT_BYTES (16u << 10)
#define SCRATCH_KEPT_ARGS 64u

static void scratch_free(void *data)
{
    trace_event_scratch_clear(data);
    g_free(data);
}

static GPrivate thread_scratch_key = G_PRIVATE_INIT(scratch_free);

/* The calling thread's scratch: made once per thread, not per record (each
 * made and freed its arrays and a first block, a sixth of the time of
 * rendering XRay's events.jsonl).  Give it back with scratch_done. */
static struct trace_event_scratch *thread_scratch(void)
{
    struct trace_event_scratch *scratch = thread_value(&thread_scratch_key, sizeof *scratch);
    if (!scratch->full_blocks)
        trace_event_scratch_init(scratch);
    return scratch;
}

static void scratch_done(struct trace_event_scratch *scratch)
{
    trace_event_scratch_trim(scratch, SCRATCH_KEPT_BYTES, SCRATCH_KEPT_ARGS);
}

/* view_ops.segments of the common files: the view's cuts, with the export
 * word each file has there. */
static uint32_t view_cuts(const struct view *view, struct view_cursor *cursors, uint32_t max, uint64_t export_word)
{
    const struct event_files *files = view->context;
    uint32_t stride = view_cut_stride(view), count = 0;
    for (uint64_t i = stride - 1; i < files->cut_count && count < max; i += stride) {
        cursors[count] = files->cuts[i];
        cursors[count].word[TRACE_EVENT_EXPORT_WORD] = export_word;
        count++;
    }
    return count;
}

static uint32_t jsonl_segments(const struct view *view, struct view_cursor *cursors, uint32_t max)
{
    return view_cuts(view, cursors, max, 0);
}

static uint32_t chrome_segments(const struct view *view, struct view_cursor *cursors, uint32_t max)
{
    struct view_cursor after;
    memset(&after, 0, sizeof after);
    event_chrome_cut(&after);
    return view_cuts(view, cursors, max, after.word[TRACE_EVENT_EXPORT_WORD]);
}

static uint32_t perfetto_segments(const struct view *view, struct view_cursor *cursors, uint32_t max)
{
    return view_cuts(view, cursors, max, 0);
}

/* The iterator's cuts, checked: a list that does not rise is not used. */
static void take_cuts(struct event_files *files)
{
    if (!files->events->cuts)
        return;
    struct view_cursor *cuts = g_new0(struct view_cursor, LIMIT_VIEW_SEGMENTS - 1);
    uint32_t count = MIN(files->events->cuts(files->trace, cuts, LIMIT_VIEW_SEGMENTS - 1), LIMIT_VIEW_SEGMENTS - 1);
    struct view_cursor first;
    trace_event_begin(files->events, files->trace, &first);
    uint64_t previous = first.word[0];
    for (uint32_t i = 0; i < count; i++) {
        if (cuts[i].word[0] <= previous) {
            count = 0;
            break;
        }
        previous = cuts[i].word[0];
        cuts[i].word[TRACE_EVENT_EXPORT_WORD] = 0;
    }
    if (count == 0) {
        g_free(cuts);
        return;
    }
    files->cuts = g_renew(struct view_cursor, cuts, count);
    files->cut_count = count;
    files->presence = thread_presence_new(first.word[0], files->cuts, count);
}

/* ---- the record views: arg[0] 0 or one thread's number + 1, arg[1] pid, arg[2] tid ---- */

static void export_begin(const struct view *view, struct view_cursor *cursor)
{
    const struct event_files *files = view->context;
    event_export_begin(files->trace, files->events, cursor);
}

/* A thread's file learns which threads each stretch holds while it is
 * sized (it reads every event of the stretches it does not skip), as the
 * walk does, and skips by what they learned.  (events.jsonl could learn
 * too, at a cost to its sizing.) */
static gboolean uses_presence(const struct view *view)
{
    const struct event_files *files = view->context;
    return view->arg[0] != 0 && files->presence;
}

/* The next event of the view, each event seen told to the learner (the
 * sizing's, if this thread has one).  A thread's search for its next event
 * jumps over the stretches known to hold none of its events, and ends at
 * a cut: no record spans a segment's start. */
static enum view_step jsonl_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    const struct event_files *files = view->context;
    struct trace_event_filter filter = { .one_thread = view->arg[0] != 0, .pid = (int64_t)view->arg[1],
                                         .tid = (int64_t)view->arg[2] };
    uint64_t stop = filter.one_thread ? next_cut(files, view_cut_stride(view), cursor->word[0]) : UINT64_MAX;
    gboolean skips = uses_presence(view);
    struct presence_learner *learner = skips ? thread_presence_learner(files->presence) : NULL;
    uint64_t stretch_end = 0;       /* where the cursor's stretch ends: checked again past it */
    struct trace_event_scratch *scratch = thread_scratch();
    enum view_step step;
    for (;;) {
        if (skips && cursor->word[0] >= stretch_end) {
            if (!thread_presence_skip(files->presence, (uint32_t)(view->arg[0] - 1), cursor, &stretch_end)) {
                step = VIEW_END;
                break;
            }
            if (cursor->word[0] >= stop) {
                step = VIEW_RECORD;   /* empty: a segment starts here */
                break;
            }
        }
        uint64_t word0 = cursor->word[0];
        struct trace_event event;
        trace_event_scratch_reset(scratch);
        step = files->events->next(files->trace, cursor, &event, scratch);
        if (step != VIEW_RECORD)
            break;
        if (learner)
            thread_presence_learn_event(learner, word0, event.pid, event.tid);
        if (trace_event_filter_accepts(&filter, &event)) {
            event_json_line(&event, out);
            break;
        }
        if (cursor->word[0] >= stop)
            break;                    /* empty: a segment may start here */
    }
    scratch_done(scratch);
    return step;
}

static void jsonl_segment_begin(const struct view *view, const struct view_cursor *start, uint64_t stop)
{
    const struct event_files *files = view->context;
    if (uses_presence(view))
        thread_presence_learn_begin(files->presence, start->word[0], stop);
}

static void jsonl_segment_end(const struct view *view, gboolean whole)
{
    const struct event_files *files = view->context;
    if (uses_presence(view))
        thread_presence_learn_end(files->presence, whole);
}

static enum view_step chrome_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    const struct event_files *files = view->context;
    struct trace_event_scratch *scratch = thread_scratch();
    enum view_step step = event_chrome_next(files->trace, files->events, cursor, scratch, out);
    scratch_done(scratch);
    return step;
}

/* One record is one export segment (up to PERFETTO_SEGMENT_EVENTS events,
 * ended at each cut), so the writer made here serves a thousand events. */
static enum view_step perfetto_next(const struct view *view, struct view_cursor *cursor, GString *out)
{
    const struct event_files *files = view->context;
    struct trace_event_scratch *scratch = thread_scratch();
    struct perfetto_writer *writer = perfetto_writer_new();
    perfetto_writer_set_names(writer, files->trace, files->events);
    uint64_t stop = next_cut(files, 1, cursor->word[0]);
    enum view_step step =
        perfetto_export_next_until(files->trace, files->events, stop, cursor, scratch, writer, out);
    perfetto_writer_free(writer);
    scratch_done(scratch);
    return step;
}

static const struct view_ops jsonl_ops = { .begin = export_begin,
                                           .next = jsonl_next,
                                           .segments = jsonl_segments,
                                           .segment_begin = jsonl_segment_begin,
                                           .segment_end = jsonl_segment_end };
static const struct view_ops chrome_ops = { .begin = export_begin, .next = chrome_next,
                                            .segments = chrome_segments };
static const struct view_ops perfetto_ops = { .begin = export_begin, .next = perfetto_next,
                                              .segments = perfetto_segments };

/* A summary bigger than this share of the tables' budget is walked again
 * on the next mount rather than saved (the saved index stays within it). */
#define SAVED_SUMMARY_SHARE 4u

static uint64_t saved_summary_max(const struct trace *trace)
{
    return limit_table_budget(trace->is_directory ? 0 : (unsigned long long)trace->st.st_size) / SAVED_SUMMARY_SHARE;
}

static void ensure_walked(struct event_files *files)
{
    pthread_mutex_lock(&files->lock);
    if (!files->walked) {
        uint64_t errors = trace_error_count(files->trace);
        files->summary = event_walk(files->trace, files->events, files->cuts, files->cut_count, files->presence,
                                    &files->totals, &files->walk_segments);
        files->walked = TRUE;
        gboolean clean = !files->totals.failed && trace_error_count(files->trace) == errors;
        files->walk_saveable = clean && files->summary->len <= saved_summary_max(files->trace);
    }
    pthread_mutex_unlock(&files->lock);
}

/* ---- the walk in the saved index: info.json and summary.csv of a
 * remount come without walking every event again ---- */

void event_files_save_walk(struct event_files *files, struct saved_writer *out)
{
    /* A walk under way holds the lock for seconds: the save goes without it. */
    gboolean saved = FALSE;
    if (files && pthread_mutex_trylock(&files->lock) == 0) {
        if (files->walk_saveable) {
            const struct event_totals *t = &files->totals;
            saved_put_u64(out, 1);
            saved_put_u64(out, t->events);
            saved_put_u64(out, t->threads);
            saved_put_u64(out, t->has_ts);
            saved_put_u64(out, t->first_ts);
            saved_put_u64(out, t->last_ts);
            saved_put_u64(out, t->last_end);
            saved_put_bytes(out, files->summary->str, files->summary->len);
            saved = files->walk_in_index = TRUE;
        }
        pthread_mutex_unlock(&files->lock);
    }
    if (!saved)
        saved_put_u64(out, 0);
    thread_presence_save(files ? files->presence : NULL, out);
}

/* Checked like trace data: flags 0 or 1, counts within their limits, and
 * a summary that is the header and whole lines within its bound. */
static gboolean load_walk(struct event_files *files, struct saved_reader *r, struct event_totals *t,
                          GString **summary)
{
    t->events = saved_get_u64(r);
    t->threads = saved_get_below(r, (uint64_t)LIMIT_SUMMARY_THREADS + 1);
    t->has_ts = (gboolean)saved_get_below(r, 2);
    t->first_ts = saved_get_u64(r);
    t->last_ts = saved_get_u64(r);
    t->last_end = saved_get_u64(r);
    size_t length = 0;
    const char *text = saved_get_bytes(r, (size_t)saved_summary_max(files->trace), &length);
    if (r->bad || t->threads > t->events || (t->has_ts && t->first_ts > t->last_ts) ||
        length < strlen(EVENT_SUMMARY_HEADER) || memcmp(text, EVENT_SUMMARY_HEADER, strlen(EVENT_SUMMARY_HEADER)) != 0 ||
        text[length - 1] != '\n')
        return FALSE;
    *summary = g_string_new_len(text, (gssize)length);
    return TRUE;
}

gboolean event_files_walk_unsaved(struct event_files *files)
{
    if (!files || pthread_mutex_trylock(&files->lock) != 0)
        return FALSE;
    gboolean unsaved = files->walk_saveable && !files->walk_in_index;
    pthread_mutex_unlock(&files->lock);
    return unsaved;
}

uint32_t event_files_walk_segments(struct event_files *files)
{
    if (!files || pthread_mutex_trylock(&files->lock) != 0)
        return 0;
    uint32_t segments = files->walk_segments;
    pthread_mutex_unlock(&files->lock);
    return segments;
}

const char *event_files_walk_state(struct event_files *files)
{
    if (!files)
        return "none";
    /* The lock is held through a walk: then one is under way. */
    if (pthread_mutex_trylock(&files->lock) != 0)
        return "walking";
    const char *state = !files->walked ? "none" : files->walk_loaded ? "loaded" : "walked";
    pthread_mutex_unlock(&files->lock);
    return state;
}

void event_files_presence_counts(const struct event_files *files, uint32_t *known, uint32_t *stretches,
                                 uint64_t *skipped)
{
    thread_presence_counts(files ? files->presence : NULL, known, stretches, skipped);
}

gboolean event_files_load_walk(struct event_files *files, const uint8_t *data, size_t size)
{
    struct saved_reader r;
    saved_reader_init(&r, data, size);
    if (!files)
        return FALSE;
    gboolean has_walk = saved_get_below(&r, 2) == 1;
    struct event_totals totals = { 0 };
    GString *summary = NULL;
    if ((has_walk && !load_walk(files, &r, &totals, &summary)) || !thread_presence_load(files->presence, &r) ||
        r.at != r.size) {
        if (summary)
            g_string_free(summary, TRUE);
        return FALSE;
    }
    pthread_mutex_lock(&files->lock);
    if (has_walk && !files->walked) {
        files->totals = totals;
        files->summary = summary;
        files->walked = files->walk_saveable = files->walk_loaded = files->walk_in_index = TRUE;
        summary = NULL;
    }
    pthread_mutex_unlock(&files->lock);
    if (summary)
        g_string_free(summary, TRUE);
    return TRUE;
}

static uint64_t summary_size(const struct view *view)
{
    struct event_files *files = view->context;
    ensure_walked(files);
    return files->summary->len;
}

static ssize_t summary_read_at(const struct view *view, uint64_t offset, void *buf, size_t len)
{
    struct event_files *files = view->context;
    ensure_walked(files);
    if (offset >= files->summary->len)
        return 0;
    size_t n = (size_t)MIN((uint64_t)len, files->summary->len - offset);
    memcpy(buf, files->summary->str + offset, n);
    return (ssize_t)n;
}

static const struct view_ops summary_ops = { .size = summary_size, .read_at = summary_read_at };

/* ---- /info.json ---- */

static void info_optional(GString *json, const char *key, gboolean has, uint64_t value)
{
    g_string_append_printf(json, ",\n  \"%s\": ", key);
    if (has)
        g_string_append_printf(json, "%" PRIu64, value);
    else
        g_string_append(json, "null");
}

static GString *render_info(struct event_files *files)
{
    struct trace *trace = files->trace;
    const struct event_totals *t = &files->totals;
    GString *json = g_string_new("{\n  \"format\": ");
    text_json_cstring(json, trace->format->name);
    g_string_append(json, ",\n  \"source\": ");
    text_json_cstring(json, trace->real_path ? trace->real_path : trace->path);
    g_string_append_printf(json, ",\n  \"size\": %" PRIu64, trace->is_directory ? 0 : (uint64_t)trace->st.st_size);
    g_string_append_printf(json, ",\n  \"events\": %" PRIu64 ",\n  \"threads\": %" PRIu64, t->events, t->threads);
    info_optional(json, "first_ts", t->has_ts, t->first_ts);
    info_optional(json, "last_ts", t->has_ts, t->last_ts);
    info_optional(json, "duration", t->has_ts, t->last_end - t->first_ts);
    g_string_append(json, ",\n  \"clock\": ");
    text_json_cstring(json, files->events->clock ? files->events->clock : "ns");
    g_string_append(json, ",\n  ");
    text_json_cstring(json, trace->format->name);
    g_string_append(json, ": {");
    for (guint i = 0; i < trace->info->len; i++)
        g_string_append_printf(json, "%s\n    %s", i ? "," : "", (const char *)trace->info->pdata[i]);
    g_string_append(json, trace->info->len ? "\n  }" : "}");
    pthread_mutex_lock(&trace->errors_lock);
    uint64_t errors = trace->index_error_count;
    pthread_mutex_unlock(&trace->errors_lock);
    g_string_append_printf(json, ",\n  \"index_errors\": %" PRIu64 "\n}\n", errors);
    return json;
}

static const GString *info_text(struct event_files *files)
{
    ensure_walked(files);
    pthread_mutex_lock(&files->lock);
    if (!files->info)
        files->info = render_info(files);
    pthread_mutex_unlock(&files->lock);
    return files->info;
}

static uint64_t info_size(const struct view *view)
{
    return info_text(view->context)->len;
}

static ssize_t info_read_at(const struct view *view, uint64_t offset, void *buf, size_t len)
{
    const GString *text = info_text(view->context);
    if (offset >= text->len)
        return 0;
    size_t n = (size_t)MIN((uint64_t)len, text->len - offset);
    memcpy(buf, text->str + offset, n);
    return (ssize_t)n;
}

static const struct view_ops info_ops = { .size = info_size, .read_at = info_read_at };

void event_files_info_view(struct event_files *files, struct view *out)
{
    memset(out, 0, sizeof *out);
    out->ops = &info_ops;
    out->context = files;
}

/* ---- the tree ---- */

static void add_thread(void *data, int64_t pid, int64_t tid, const char *dir)
{
    struct event_files *files = data;
    struct tree *tree = files->trace->tree;
    char decimal[24];
    if (!dir) {
        g_snprintf(decimal, sizeof decimal, "%" G_GINT64_FORMAT, tid);
        dir = decimal;
    }
    node_id threads = tree_dir(tree, TREE_ROOT, "threads");
    uint32_t number = files->presence ? thread_presence_add_thread(files->presence, pid, tid) : UINT32_MAX;
    struct view view = { .ops = &jsonl_ops, .context = files,
                         .arg = { (uint64_t)number + 1, (uint64_t)pid, (uint64_t)tid } };
    tree_add_view(tree, tree_dir(tree, threads, dir), "events.jsonl", &view);
}

void event_files_add(struct trace *trace)
{
    const struct trace_event_iterator *events = trace->format ? trace->format->events : NULL;
    if (!events)
        return;
    struct event_files *files = g_new0(struct event_files, 1);
    files->trace = trace;
    files->events = events;
    pthread_mutex_init(&files->lock, NULL);
    take_cuts(files);
    trace->event_files = files;

    struct tree *tree = trace->tree;
    struct view view = { .ops = &jsonl_ops, .context = files };
    tree_add_view(tree, TREE_ROOT, "events.jsonl", &view);
    view.ops = &summary_ops;
    tree_add_view(tree, TREE_ROOT, "summary.csv", &view);
    node_id export = tree_dir(tree, TREE_ROOT, "export");
    view.ops = &chrome_ops;
    tree_add_view(tree, export, "chrome.json", &view);
    view.ops = &perfetto_ops;
    tree_add_view(tree, export, "trace.perfetto-trace", &view);
    if (events->threads)
        events->threads(trace, add_thread, files);
}

void event_files_free(struct event_files *files)
{
    if (!files)
        return;
    if (files->summary)
        g_string_free(files->summary, TRUE);
    if (files->info)
        g_string_free(files->info, TRUE);
    thread_presence_free(files->presence);
    g_free(files->cuts);
    pthread_mutex_destroy(&files->lock);
    g_free(files);
}
