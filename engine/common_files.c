/* The files every mounted trace has, whatever its format. */
#include <pthread.h>
#include <string.h>
#include "chunk_cache.h"
#include "common_files.h"
#include "event_files.h"
#include "format.h"
#include "index_file.h"
#include "stream.h"
#include "text.h"
#include "trace.h"
#include "workers.h"

/* The mount's kernel read-ahead, one per process (a daemon serves one
 * mount, a folder's traces included). */
static uint64_t read_ahead_bytes;
static const char *read_ahead_unset = "not mounted";

void common_files_set_read_ahead(uint64_t bytes, const char *why_unset)
{
    read_ahead_bytes = bytes;
    read_ahead_unset = why_unset;
}

/* The chunk tables of the trace's streams, made at open and fixed after. */
static void count_stream_chunks(struct trace *trace, uint64_t *chunks, uint64_t *window_bytes)
{
    *chunks = *window_bytes = 0;
    for (guint i = 0; i < trace->streams->len; i++) {
        const struct stream *stream = trace->streams->pdata[i];
        size_t count = stream_chunk_count(stream);
        *chunks += count;
        for (size_t k = 0; k < count; k++)
            if (stream_chunk_owns_window(stream_chunk(stream, 0), k))
                *window_bytes += stream_chunk(stream, k)->window_size;
    }
}

static GString *render_stats(struct trace *trace)
{
    struct chunk_cache_stats stats, text;
    chunk_cache_get_stats(trace->cache, &stats);
    chunk_cache_get_stats(trace->text_cache, &text);
    uint64_t errors = trace_error_count(trace);
    double sizing_seconds, save_seconds;
    const char *sizing = trace_sizing_state(trace, &sizing_seconds, &save_seconds);
    char read_ahead[128];
    if (read_ahead_unset)
        g_snprintf(read_ahead, sizeof read_ahead, "unchanged (%s)", read_ahead_unset);
    else
        g_snprintf(read_ahead, sizeof read_ahead, "%" G_GUINT64_FORMAT, read_ahead_bytes >> 10);
    uint32_t known, stretches;
    uint64_t skipped;
    event_files_presence_counts(trace->event_files, &known, &stretches, &skipped);
    uint64_t stream_chunks, stream_window_bytes;
    count_stream_chunks(trace, &stream_chunks, &stream_window_bytes);
    GString *out = g_string_new(NULL);
    g_string_append_printf(out,
        "cache_hits %" G_GUINT64_FORMAT "\n"
        "cache_misses %" G_GUINT64_FORMAT "\n"
        "cache_evictions %" G_GUINT64_FORMAT "\n"
        "cache_load_errors %" G_GUINT64_FORMAT "\n"
        "cache_bytes_held %" G_GUINT64_FORMAT "\n"
        "cache_bytes_peak %" G_GUINT64_FORMAT "\n"
        "cache_bytes_budget %" G_GUINT64_FORMAT "\n"
        "cache_chunks_held %" G_GUINT64_FORMAT "\n"
        "cache_chunk_budget %" G_GUINT64_FORMAT "\n"
        "text_cache_hits %" G_GUINT64_FORMAT "\n"
        "text_cache_misses %" G_GUINT64_FORMAT "\n"
        "text_cache_evictions %" G_GUINT64_FORMAT "\n"
        "text_cache_bytes_held %" G_GUINT64_FORMAT "\n"
        "text_cache_bytes_peak %" G_GUINT64_FORMAT "\n"
        "text_cache_budget %" G_GUINT64_FORMAT "\n"
        "index_seconds %.6f\n"
        "index_source %s\n"
        "saved_index %s\n"
        "index_save %s\n"
        "tree_nodes %" G_GUINT64_FORMAT "\n"
        "errors %" G_GUINT64_FORMAT "\n"
        "threads %u\n"
        "sizing_events %s\n"
        "sizing_seconds %.6f\n"
        "index_save_seconds %.6f\n"
        "sizing_segments %" G_GINT64_FORMAT "\n"
        "memory_ceiling %" G_GUINT64_FORMAT "\n"
        "cache_bytes_allowed %" G_GUINT64_FORMAT "\n"
        "text_cache_bytes_allowed %" G_GUINT64_FORMAT "\n"
        "cache_waits %" G_GUINT64_FORMAT "\n"
        "text_cache_waits %" G_GUINT64_FORMAT "\n"
        "cache_recycled %" G_GUINT64_FORMAT "\n"
        "text_cache_recycled %" G_GUINT64_FORMAT "\n"
        "read_ahead_kb %s\n"
        "event_walk %s\n"
        "event_walk_segments %u\n"
        "thread_stretches_known %u of %u\n"
        "thread_stretches_skipped %" G_GUINT64_FORMAT "\n"
        "stream_chunks %" G_GUINT64_FORMAT "\n"
        "stream_window_bytes %" G_GUINT64_FORMAT "\n",
        stats.hits, stats.misses, stats.evictions, stats.load_errors, stats.bytes_held,
        stats.peak_bytes_held, stats.bytes_budget + text.bytes_budget, stats.chunks_held, stats.bytes_budget,
        text.hits, text.misses, text.evictions, text.bytes_held, text.peak_bytes_held, text.bytes_budget,
        trace->index_seconds,
        trace->index_state, trace->saved_index_status, index_file_save_status(trace),
        tree_node_count(trace->tree), errors, workers_threads(trace->workers), sizing, sizing_seconds, save_seconds,
        __atomic_load_n(&trace->segments_sized, __ATOMIC_RELAXED), stats.ceiling, stats.bytes_allowed,
        text.bytes_allowed, stats.waits, text.waits, stats.recycled, text.recycled, read_ahead,
        event_files_walk_state(trace->event_files),
        event_files_walk_segments(trace->event_files), known, stretches, skipped, stream_chunks,
        stream_window_bytes);
    return out;
}

static GString *render_errors(struct trace *trace)
{
    pthread_mutex_lock(&trace->errors_lock);
    GString *out = g_string_new_len(trace->errors->str, (gssize)trace->errors->len);
    pthread_mutex_unlock(&trace->errors_lock);
    return out;
}

/* Dynamic files render their whole (small) text on every call. */
static GString *render_dynamic(const struct view *view)
{
    return view->arg[0] ? render_stats(view->context) : render_errors(view->context);
}

static uint64_t dynamic_size(const struct view *view)
{
    GString *text = render_dynamic(view);
    uint64_t size = text->len;
    g_string_free(text, TRUE);
    return size;
}

static ssize_t dynamic_read_at(const struct view *view, uint64_t offset, void *buf, size_t len)
{
    GString *text = render_dynamic(view);
    ssize_t n = 0;
    if (offset < text->len) {
        n = (ssize_t)MIN((uint64_t)len, text->len - offset);
        memcpy(buf, text->str + offset, (size_t)n);
    }
    g_string_free(text, TRUE);
    return n;
}

static const struct view_ops dynamic_view_ops = {
    .size = dynamic_size, .read_at = dynamic_read_at, .dynamic = TRUE,
};

static void add_info_json(struct trace *trace)
{
    if (trace->event_files) {
        struct view view;
        event_files_info_view(trace->event_files, &view);
        tree_add_view(trace->tree, TREE_ROOT, "info.json", &view);
        return;
    }
    GString *json = g_string_new("{\n  \"format\": ");
    text_json_cstring(json, trace->format->name);
    g_string_append(json, ",\n  \"source\": ");
    text_json_cstring(json, trace->real_path ? trace->real_path : trace->path);
    g_string_append_printf(json, ",\n  \"source_size\": %" G_GUINT64_FORMAT,
                           trace->is_directory ? 0 : (uint64_t)trace->st.st_size);
    for (guint i = 0; i < trace->info->len; i++)
        g_string_append_printf(json, ",\n  %s", (const char *)trace->info->pdata[i]);
    g_string_append_printf(json, ",\n  \"index_errors\": %" G_GUINT64_FORMAT "\n}\n", trace->error_count);
    tree_add_string(trace->tree, TREE_ROOT, "info.json", json);
}

static void add_readme(struct trace *trace)
{
    GString *text = g_string_new(NULL);
    g_string_append_printf(text, "%s\n\nA %s, mounted read-only by tracefs %s.\n\n",
                           trace->real_path ? trace->real_path : trace->path,
                           trace->format->description, TRACEFS_VERSION);
    if (trace->readme->len)
        g_string_append_printf(text, "%s\n", trace->readme->str);
    g_string_append(text,
        "Everywhere:\n"
        "  info.json         what this trace is: format, source, counts, time span\n"
        "  errors            decode problems, one line each (empty when the trace is clean)\n"
        "  .tracefs/stats    chunk cache hits, misses, evictions, bytes held; index time\n"
        "  .tracefs/streams/ the trace's byte streams as the decoder reads them (decompressed)\n");
    if (trace->event_files)
        g_string_append(text,
            "Common events (docs/events.md), the same in every format:\n"
            "  events.jsonl                  every event, one JSON object a line\n"
            "  threads/<tid>/events.jsonl    one thread's events\n"
            "  summary.csv                   per name: count, total and max duration\n"
            "  export/chrome.json            Chrome Trace Event JSON\n"
            "  export/trace.perfetto-trace   Perfetto TrackEvent protobuf (ui.perfetto.dev)\n");
    tree_add_string(trace->tree, TREE_ROOT, "README", text);
}

/* The decompressed streams, byte for byte: for looking under a decoder
 * (xxd, cmp against a format tool's own unpacking) and for measuring the
 * codec alone (scripts/bench). */
static void add_streams(struct trace *trace, node_id hidden)
{
    if (trace->streams->len == 0)
        return;
    node_id dir = tree_dir(trace->tree, hidden, "streams");
    for (guint i = 0; i < trace->streams->len; i++) {
        struct stream *stream = trace->streams->pdata[i];
        struct view view;
        view_init_stream_range(&view, stream, 0, stream_size(stream));
        tree_add_view(trace->tree, dir, stream_name(stream), &view);
    }
}

void common_files_add(struct trace *trace)
{
    event_files_add(trace);
    add_info_json(trace);
    add_readme(trace);
    struct view view = { .ops = &dynamic_view_ops, .context = trace };
    tree_add_view(trace->tree, TREE_ROOT, "errors", &view);
    node_id hidden = tree_dir(trace->tree, TREE_ROOT, ".tracefs");
    view.arg[0] = 1;
    tree_add_view(trace->tree, hidden, "stats", &view);
    add_streams(trace, hidden);
}
