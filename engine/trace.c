/* Opening a trace: detect its format, run the index pass, add the common
 * files.  The trace is opened read-only and never written. */
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "chunk_cache.h"
#include "common_files.h"
#include "folder.h"
#include "format.h"
#include "index_file.h"
#include "progress.h"
#include "resident_memory.h"
#include "input_file.h"
#include "tracefs_limits.h"
#include "stream.h"
#include "trace.h"
#include "load_ahead.h"
#include "workers.h"
#include "event_files.h"

#define PROBE_HEAD_BYTES 4096
/* 1 / the share of the cache budget given to kept text (trace.h). */
#define TRACE_TEXT_CACHE_SHARE 4

/* Where the calling thread's errors go instead of /errors (view_sizing.c:
 * a segment's errors join /errors in segment order, so that /errors is the
 * same for any thread count). */
static __thread struct trace_error_list *deferred_errors;

void trace_errors_defer(struct trace_error_list *into)
{
    deferred_errors = into;
}

/* line NULL: counted, not listed. */
static void add_error_line(struct trace *trace, const char *line)
{
    pthread_mutex_lock(&trace->errors_lock);
    trace->error_count++;
    if (trace->error_count <= LIMIT_ERRORS_KEPT && line)
        g_string_append(trace->errors, line);
    else if (trace->error_count == LIMIT_ERRORS_KEPT + 1)
        g_string_append_printf(trace->errors, "(further errors are counted in /.tracefs/stats, not listed)\n");
    pthread_mutex_unlock(&trace->errors_lock);
}

void trace_errors_replay(struct trace *trace, const struct trace_error_list *list)
{
    for (guint i = 0; list->lines && i < list->lines->len; i++)
        add_error_line(trace, list->lines->pdata[i]);
    for (uint64_t i = 0; i < list->unlisted; i++)
        add_error_line(trace, NULL);
}

void trace_error_list_clear(struct trace_error_list *list)
{
    if (list->lines)
        g_ptr_array_free(list->lines, TRUE);
    memset(list, 0, sizeof *list);
}

uint64_t trace_error_count(struct trace *trace)
{
    pthread_mutex_lock(&trace->errors_lock);
    uint64_t count = trace->error_count;
    pthread_mutex_unlock(&trace->errors_lock);
    return count;
}

void trace_error(struct trace *trace, const char *where, uint64_t offset, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *message = g_strdup_vprintf(format, args);
    va_end(args);
    char *line = g_strdup_printf("%s offset %" G_GUINT64_FORMAT ": %s\n", where, offset, message);
    g_free(message);
    /* A hostile view could report an error per record: deferred lines are
     * bounded like /errors itself, the rest only counted. */
    struct trace_error_list *list = deferred_errors;
    if (list) {
        if (!list->lines)
            list->lines = g_ptr_array_new_with_free_func(g_free);
        if (list->lines->len < LIMIT_ERRORS_KEPT) {
            g_ptr_array_add(list->lines, line);
        } else {
            list->unlisted++;
            g_free(line);
        }
        return;
    }
    add_error_line(trace, line);
    g_free(line);
}

void trace_fail(struct trace *trace, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_free(trace->fatal);
    trace->fatal = g_strdup_vprintf(format, args);
    va_end(args);
}

struct load_ahead *trace_loaders(struct trace *trace)
{
    /* A folder's traces share its workers, and would each start loaders. */
    if (trace->options.shared_workers)
        return NULL;
    pthread_mutex_lock(&trace->loaders_lock);
    if (!trace->loaders && !trace->loaders_stopped)
        trace->loaders = load_ahead_start(workers_threads(trace->workers));
    struct load_ahead *loaders = trace->loaders;
    pthread_mutex_unlock(&trace->loaders_lock);
    return loaders;
}

struct stream *trace_add_stream(struct trace *trace, struct stream *stream)
{
    stream_count_loads(stream, &trace->bytes_loaded);
    g_ptr_array_add(trace->streams, stream);
    return stream;
}

gboolean trace_changed(struct trace *trace)
{
    for (guint i = 0; i < trace->streams->len; i++)
        if (stream_file_changed(trace->streams->pdata[i]))
            return TRUE;
    return FALSE;
}

char *trace_read_problem(struct trace *trace, int rc)
{
    for (guint i = 0; i < trace->streams->len; i++)
        if (stream_file_changed(trace->streams->pdata[i]))
            return g_strdup_printf("%s: the trace changed since it was mounted (its size or modification "
                                   "time differ): its bytes are no longer the ones indexed",
                                   stream_name(trace->streams->pdata[i]));
    for (guint i = 0; i < trace->streams->len; i++) {
        uint64_t file_offset, stream_offset;
        if (stream_failed_chunk(trace->streams->pdata[i], &file_offset, &stream_offset))
            return g_strdup_printf("%s: the chunk at file offset %" G_GUINT64_FORMAT " (stream offset %"
                                   G_GUINT64_FORMAT ") cannot be read or decompressed: the trace is damaged there",
                                   stream_name(trace->streams->pdata[i]), file_offset, stream_offset);
    }
    if (rc == -EIO && g_strcmp0(trace->saved_index_status, "used") == 0)
        return g_strdup("rendering the file again did not give the bytes its sizing gave: the saved index "
                        "disagrees with the trace (remove it, or mount with -o noindex)");
    if (rc == -EIO)
        return g_strdup("rendering the file again did not give the bytes its sizing gave");
    return g_strdup(g_strerror(-rc));
}

struct stream *trace_file_stream(struct trace *trace)
{
    if (trace->is_directory)
        return NULL;
    for (guint i = 0; i < trace->streams->len; i++)
        if (strcmp(stream_name(trace->streams->pdata[i]), "file") == 0)
            return trace->streams->pdata[i];
    return trace_add_stream(trace, stream_new_file(trace->cache, "file", trace->fd, (uint64_t)trace->st.st_size));
}

int trace_open_member(struct trace *trace, const char *name, uint64_t *size)
{
    if (!trace->is_directory)
        return -ENOTDIR;
    struct stat st;
    int fd = input_open_at(trace->fd, name, INPUT_REGULAR, &st);
    if (fd < 0)
        return fd;
    *size = (uint64_t)st.st_size;
    /* The index pass reads a directory's members one by one, and the
     * sizing that follows needs the others too (rr's data beside its
     * events): the kernel reads their first part ahead meanwhile, instead
     * of each worker of the sizing waiting on the disk for its own chunks.
     * Not on a remount: the ls that follows it should not wait on that. */
    if (trace->index_pass_running)
        posix_fadvise(fd, 0, (off_t)MIN(*size, (uint64_t)LIMIT_MEMBER_READ_AHEAD_BYTES), POSIX_FADV_WILLNEED);
    g_array_append_val(trace->member_fds, fd);
    return fd;
}

const char *trace_member_strerror(int rc)
{
    return input_strerror(rc, INPUT_REGULAR);
}

void trace_info_add(struct trace *trace, const char *key, const char *json_value)
{
    GString *member = g_string_new(NULL);
    text_json_cstring(member, key);
    g_string_append_printf(member, ": %s", json_value);
    g_ptr_array_add(trace->info, g_string_free(member, FALSE));
}

void trace_info_add_number(struct trace *trace, const char *key, uint64_t value)
{
    char number[32];
    g_snprintf(number, sizeof number, "%" G_GUINT64_FORMAT, value);
    trace_info_add(trace, key, number);
}

void trace_info_add_string(struct trace *trace, const char *key, const char *value)
{
    GString *json = g_string_new(NULL);
    text_json_cstring(json, value);
    trace_info_add(trace, key, json->str);
    g_string_free(json, TRUE);
}

static const struct format *best_format(const struct probe_input *input)
{
    const struct format *best = NULL;
    int best_score = 0;
    for (size_t i = 0; format_table[i]; i++) {
        int score = format_table[i]->probe(input);
        if (score > best_score) {
            best = format_table[i];
            best_score = score;
        }
    }
    return best;
}

static const struct format *detect_format(struct trace *trace, const uint8_t *head, size_t head_size)
{
    struct probe_input input = {
        .path = trace->path, .is_directory = trace->is_directory, .fd = trace->fd,
        .size = trace->is_directory ? 0 : (uint64_t)trace->st.st_size,
        .head = head, .head_size = head_size,
    };
    return best_format(&input);
}

const struct format *trace_probe(const char *path)
{
    struct stat st;
    int fd = input_open_at(AT_FDCWD, path, INPUT_REGULAR | INPUT_DIRECTORY, &st);
    if (fd < 0)
        return NULL;
    gboolean directory = S_ISDIR(st.st_mode);
    uint8_t head[PROBE_HEAD_BYTES];
    ssize_t n = directory ? 0 : pread(fd, head, sizeof head, 0);
    struct probe_input input = {
        .path = path, .is_directory = directory, .fd = fd, .size = directory ? 0 : (uint64_t)st.st_size,
        .head = head, .head_size = n > 0 ? (size_t)n : 0,
    };
    const struct format *format = best_format(&input);
    close(fd);
    return format;
}

static struct trace *trace_new(const char *path, const struct trace_options *options)
{
    struct trace *trace = g_new0(struct trace, 1);
    trace->path = g_strdup(path);
    trace->fd = -1;
    trace->options = *options;
    if (!trace->options.cache_bytes)
        trace->options.cache_bytes = LIMIT_DEFAULT_CACHE_BYTES;
    trace->streams = g_ptr_array_new_with_free_func((GDestroyNotify)stream_free);
    trace->info = g_ptr_array_new_with_free_func(g_free);
    trace->readme = g_string_new(NULL);
    trace->errors = g_string_new(NULL);
    trace->member_fds = g_array_new(FALSE, FALSE, sizeof(int));
    pthread_mutex_init(&trace->errors_lock, NULL);
    pthread_mutex_init(&trace->sizing_lock, NULL);
    pthread_mutex_init(&trace->loaders_lock, NULL);
    pthread_cond_init(&trace->sizing_done, NULL);
    return trace;
}

uint64_t trace_source_bytes(const struct trace *trace)
{
    if (!trace->is_directory)
        return (uint64_t)trace->st.st_size;
    uint64_t total = 0;
    GDir *dir = g_dir_open(trace->path, 0, NULL);
    for (const char *name; dir && (name = g_dir_read_name(dir));) {
        struct stat st;
        if (fstatat(trace->fd, name, &st, 0) == 0 && S_ISREG(st.st_mode))
            total += (uint64_t)st.st_size;
    }
    if (dir)
        g_dir_close(dir);
    return total;
}

/* Opens the path read-only; *message is set on failure. */
static gboolean open_source(struct trace *trace, uint8_t *head, size_t *head_size, char **message)
{
    const unsigned kinds = INPUT_REGULAR | INPUT_DIRECTORY;
    trace->fd = input_open_at(AT_FDCWD, trace->path, kinds, &trace->st);
    if (trace->fd < 0) {
        *message = g_strdup_printf("%s: %s", trace->path, input_strerror(trace->fd, kinds));
        trace->fd = -1;
        return FALSE;
    }
    trace->is_directory = S_ISDIR(trace->st.st_mode);
    trace->source_bytes = trace_source_bytes(trace);
    trace->view_checkpoint_bytes = limit_view_checkpoint_bytes(trace->source_bytes);
    trace->real_path = realpath(trace->path, NULL);
    *head_size = 0;
    if (!trace->is_directory) {
        ssize_t n = pread(trace->fd, head, PROBE_HEAD_BYTES, 0);
        *head_size = n > 0 ? (size_t)n : 0;
    }
    return TRUE;
}

static const struct format *choose_format(struct trace *trace, const uint8_t *head, size_t head_size, char **message)
{
    if (trace->options.format_name) {
        const struct format *format = format_find(trace->options.format_name);
        if (!format) {
            char *names = format_names();
            *message = g_strdup_printf("%s: unknown format '%s' (known: %s)", trace->path,
                                       trace->options.format_name, names);
            g_free(names);
        }
        return format;
    }
    const struct format *format = detect_format(trace, head, head_size);
    /* A directory no format claims is a folder of traces. */
    if (!format && trace->is_directory && !trace->options.inside_folder)
        format = &folder_format;
    if (!format) {
        char *names = format_names();
        *message = g_strdup_printf("%s: not a recognised trace (tried %s)", trace->path, names);
        g_free(names);
    }
    return format;
}

/* Renders /events once so its size and checkpoints exist before the first
 * `tail` or `cat` asks (a no-op when the saved index already had them),
 * and saves the index with them.  A stat or read of /events meanwhile
 * waits on the file's index lock (tree_view_index), or sizes it itself if
 * it came first: either way once. */
static void size_main_view(void *data, uint64_t unused)
{
    (void)unused;
    struct trace *trace = data;
    gint64 start = g_get_monotonic_time();
    /* On a terminal only: a foreground mount (-f); a daemon's stderr is not one. */
    struct progress *progress = progress_start(trace, PROGRESS_SIZING);
    struct tree_entry_info entry;
    if (tree_resolve(trace->tree, "events", &entry) && entry.kind == NODE_FILE)
        tree_view_index(trace, entry.ino);
    progress_stop(progress);
    gint64 sized = g_get_monotonic_time();
    if (!workers_stopping(trace->workers)) {
        /* Reads size other files while this saves; the save counts the
         * views built when it ends, but only those built before it began
         * are surely in the file: the unmount's save adds the others. */
        uint64_t built = tree_view_indexes_built(trace->tree);
        if (strcmp(trace->index_state, "loaded") != 0 && trace->index_saved_views == 0)
            index_file_save(trace);
        else
            trace_save_index_if_changed(trace);
        trace->index_saved_views = MIN(trace->index_saved_views, built);
    }
    pthread_mutex_lock(&trace->sizing_lock);
    trace->sizing_seconds = (double)(sized - start) / 1e6;
    trace->index_save_seconds = (double)(g_get_monotonic_time() - sized) / 1e6;
    trace->sizing_state = TRACE_SIZING_DONE;
    pthread_cond_broadcast(&trace->sizing_done);
    pthread_mutex_unlock(&trace->sizing_lock);
}

void trace_size_main_view(struct trace *trace)
{
    pthread_mutex_lock(&trace->sizing_lock);
    gboolean start = trace->sizing_state == TRACE_SIZING_NONE;
    if (start)
        trace->sizing_state = TRACE_SIZING_RUNNING;
    pthread_mutex_unlock(&trace->sizing_lock);
    if (start)
        workers_submit(trace->workers, size_main_view, trace);
}

void trace_stop_sizing(struct trace *trace)
{
    workers_stop(trace->workers);
    pthread_mutex_lock(&trace->sizing_lock);
    while (trace->sizing_state == TRACE_SIZING_RUNNING)
        pthread_cond_wait(&trace->sizing_done, &trace->sizing_lock);
    pthread_mutex_unlock(&trace->sizing_lock);
}

const char *trace_sizing_state(struct trace *trace, double *seconds, double *save_seconds)
{
    pthread_mutex_lock(&trace->sizing_lock);
    int state = trace->sizing_state;
    *seconds = trace->sizing_seconds;
    *save_seconds = trace->index_save_seconds;
    pthread_mutex_unlock(&trace->sizing_lock);
    return state == TRACE_SIZING_RUNNING ? "running" : state == TRACE_SIZING_DONE ? "done" : "none";
}


/* The format's index pass (its tables only); remembers which errors it
 * found so they can be saved with the index. */
static int run_index_pass(struct trace *trace)
{
    trace->index_pass_running = TRUE;
    struct load_ahead *loaders = load_ahead_start(workers_threads(trace->workers));
    load_ahead_begin(loaders);
    int rc = trace->format->index(trace);
    load_ahead_end(loaders);
    load_ahead_stop(loaders);
    trace->index_pass_running = FALSE;
    pthread_mutex_lock(&trace->errors_lock);
    trace->index_error_count = trace->error_count;
    trace->index_errors_length = trace->errors->len;
    pthread_mutex_unlock(&trace->errors_lock);
    return rc;
}

/* Rebuilds the format's tables from a saved index; on failure frees what
 * the load made, for the index pass. */
static gboolean load_saved_state(struct trace *trace, const struct saved_index *saved)
{
    if (!saved->has_format_state || !trace->format->load)
        return FALSE;
    if (trace->format->load(trace, saved->format_state, saved->format_state_size) == 0) {
        pthread_mutex_lock(&trace->errors_lock);
        g_string_append_len(trace->errors, saved->errors, (gssize)saved->errors_size);
        trace->error_count = trace->index_error_count = saved->error_count;
        trace->index_errors_length = saved->errors_size;
        pthread_mutex_unlock(&trace->errors_lock);
        return TRUE;
    }
    if (trace->format->close)
        trace->format->close(trace);
    trace->format_state = NULL;
    return FALSE;
}

/* The caches keep the process under the memory rule (chunk_cache_set_ceiling);
 * a folder's traces share its caches and so its ceiling. */
static void set_memory_ceiling(struct trace *trace)
{
    if (trace->options.shared_cache || !resident_memory_is_meaningful())
        return;
    uint64_t ceiling = limit_memory_ceiling(trace->options.cache_bytes, trace->source_bytes);
    chunk_cache_set_ceiling(trace->cache, ceiling, NULL);
    chunk_cache_set_ceiling(trace->text_cache, ceiling, NULL);
}

struct trace *trace_open(const char *path, const struct trace_options *options, char **message)
{
    struct trace *trace = trace_new(path, options);
    uint8_t head[PROBE_HEAD_BYTES];
    size_t head_size = 0;
    *message = NULL;
    if (!open_source(trace, head, &head_size, message) ||
        !(trace->format = choose_format(trace, head, head_size, message))) {
        trace_close(trace);
        return NULL;
    }
    uint64_t text_budget = trace->options.cache_bytes / TRACE_TEXT_CACHE_SHARE;
    trace->cache = trace->options.shared_cache ? trace->options.shared_cache
                                               : chunk_cache_new(trace->options.cache_bytes - text_budget);
    trace->text_cache = trace->options.shared_text_cache ? trace->options.shared_text_cache
                                                         : chunk_cache_new(text_budget);
    trace->workers = trace->options.shared_workers ? trace->options.shared_workers
                                                   : workers_new(trace->options.threads);
    set_memory_ceiling(trace);
    trace->tree = tree_new();
    gint64 start = g_get_monotonic_time();
    struct saved_index saved;
    const char *why = NULL;
    gboolean have_saved = index_file_load(trace, &saved, &why);
    gboolean loaded = have_saved && load_saved_state(trace, &saved);
    if (!loaded && trace->options.require_saved_index) {
        *message = g_strdup_printf("%s: the saved index was not used (%s)", trace->path,
                                   have_saved ? "rejected by the format" : why);
        saved_index_clear(&saved);
        trace_close(trace);
        return NULL;
    }
    struct progress *progress = loaded ? NULL : progress_start(trace, PROGRESS_INDEXING);
    if (!loaded && run_index_pass(trace) < 0) {
        progress_stop(progress);
        *message = g_strdup_printf("%s: %s", trace->path,
                                   trace->fatal ? trace->fatal : "cannot be read as this format");
        saved_index_clear(&saved);
        trace_close(trace);
        return NULL;
    }
    /* The same tables either way, so the same tree; its errors come after
     * the index pass's (saved or found) on both paths. */
    if (trace->format->build_tree)
        trace->format->build_tree(trace);
    trace->index_seconds = (double)(g_get_monotonic_time() - start) / 1e6;
    trace->index_state = loaded ? "loaded" : "scanned";
    trace->saved_index_status = have_saved ? "used" : why;
    common_files_add(trace);
    if (have_saved) {
        index_file_apply_views(trace, &saved);
        index_file_apply_walk(trace, &saved);
    }
    saved_index_clear(&saved);
    progress_stop(progress);
    /* A mount sizes /events after it answers (trace_size_main_view) and
     * saves the index then. */
    if (trace->options.size_main_view)
        return trace;
    if (!loaded)
        index_file_save(trace);
    else
        trace_save_index_if_changed(trace);
    return trace;
}

void trace_save_index_if_changed(struct trace *trace)
{
    /* A scanned index never saved (an unmount that came before the
     * background sizing of /events ended) is worth saving without views:
     * the index pass is the costly part of the next mount. */
    gboolean never_saved = trace->format->save && strcmp(trace->index_state, "loaded") != 0 &&
                           !trace->index_save_status[0];
    if (never_saved || tree_view_indexes_built(trace->tree) > trace->index_saved_views ||
        event_files_walk_unsaved(trace->event_files))
        index_file_save(trace);
}

void trace_close(struct trace *trace)
{
    if (!trace)
        return;
    if (!trace->options.shared_workers)
        trace_stop_sizing(trace);
    view_forget_kept_record();
    if (trace->format && trace->format->close)
        trace->format->close(trace);
    trace->format_state = NULL;
    tree_free(trace->tree);
    if (!trace->options.shared_workers)
        workers_free(trace->workers);
    /* After the workers, whose read-ahead hands the loaders their work. */
    pthread_mutex_lock(&trace->loaders_lock);
    load_ahead_stop(trace->loaders);
    trace->loaders = NULL;
    trace->loaders_stopped = TRUE;
    pthread_mutex_unlock(&trace->loaders_lock);
    event_files_free(trace->event_files);
    g_ptr_array_free(trace->streams, TRUE);
    if (!trace->options.shared_cache)
        chunk_cache_free(trace->cache);
    if (!trace->options.shared_text_cache && trace->text_cache)
        chunk_cache_free(trace->text_cache);
    for (guint i = 0; i < trace->member_fds->len; i++)
        close(g_array_index(trace->member_fds, int, i));
    g_array_free(trace->member_fds, TRUE);
    if (trace->fd >= 0)
        close(trace->fd);
    g_ptr_array_free(trace->info, TRUE);
    g_string_free(trace->readme, TRUE);
    g_string_free(trace->errors, TRUE);
    pthread_mutex_destroy(&trace->errors_lock);
    pthread_mutex_destroy(&trace->sizing_lock);
    pthread_mutex_destroy(&trace->loaders_lock);
    pthread_cond_destroy(&trace->sizing_done);
    g_free(trace->fatal);
    g_free(trace->real_path);
    g_free(trace->path);
    g_free(trace);
}
