/* Probe, the index pass, load, and close. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "format.h"
#include "rr.h"
#include "saved_bytes.h"
#include "thread_presence.h"
#include "trace.h"
#include "tracefs_limits.h"

static int member_exists(int dir_fd, const char *name)
{
    struct stat st;
    return fstatat(dir_fd, name, &st, 0) == 0 && S_ISREG(st.st_mode);
}

static int rr_probe(const struct probe_input *input)
{
    if (!input->is_directory)
        return 0;
    int has_version = member_exists(input->fd, "version") || member_exists(input->fd, "incomplete");
    int has_streams = member_exists(input->fd, "events") && member_exists(input->fd, "data");
    if (has_version && has_streams)
        return 95;
    return has_streams ? 60 : 0;
}

static struct rr_state *state_new(struct trace *trace)
{
    struct rr_state *state = g_new0(struct rr_state, 1);
    trace->format_state = state;
    state->trace = trace;
    char *real = realpath(trace->path, NULL);
    state->dir_real_path = g_strdup(real ? real : trace->path);
    free(real);
    state->checkpoints = g_array_new(FALSE, TRUE, sizeof(struct rr_checkpoint));
    state->mmaps = g_array_new(FALSE, TRUE, sizeof(struct rr_mmap));
    state->tasks = g_array_new(FALSE, TRUE, sizeof(struct rr_task));
    state->tids = g_array_new(FALSE, TRUE, sizeof(int32_t));
    state->thread_spans = g_array_new(FALSE, TRUE, sizeof(struct rr_thread_span));
    return state;
}

/* Everything but the frame scan: the header and the block tables.  From
 * a saved index (`saved`; NULL when indexing) the events' and data's
 * tables are read from it where rr_save kept them: a flag before each, 0
 * when it kept none, and then the block headers are read as the index
 * pass reads them. */
static int open_streams(struct rr_state *state, struct saved_reader *saved)
{
    if (rr_read_header(state) < 0)
        return -1;
    struct stream **streams[] = { &state->events, &state->data, &state->mmaps_stream, &state->tasks_stream };
    const char *names[] = { "events", "data", "mmaps", "tasks" };
    for (size_t i = 0; i < G_N_ELEMENTS(streams); i++) {
        gboolean kept = saved && i < 2 && saved_get_below(saved, 2);
        if (saved && saved->bad)
            return -1;
        *streams[i] = rr_open_chunked(state, names[i], kept ? saved : NULL);
        if (saved && saved->bad)
            return -1;
    }
    return 0;
}

static int rr_index(struct trace *trace)
{
    struct rr_state *state = state_new(trace);
    if (open_streams(state, NULL) < 0)
        return -1;
    rr_index_side_streams(state);
    rr_index_frames(state);
    rr_finish_side_streams(state);
    rr_presence_init(state);
    return 0;
}

static int rr_load(struct trace *trace, const uint8_t *data, size_t size)
{
    struct rr_state *state = state_new(trace);
    state->from_saved_index = 1;
    struct saved_reader r;
    saved_reader_init_mapped(&r, data, size);
    if (open_streams(state, &r) < 0)
        return -1;
    rr_index_side_streams(state);
    if (rr_load_frames(state, &r) < 0)
        return -1;
    rr_finish_side_streams(state);
    state->from_saved_index = 0;
    return 0;
}

static void rr_close(struct trace *trace)
{
    struct rr_state *state = trace->format_state;
    if (!state)
        return;
    for (guint i = 0; state->mmaps && i < state->mmaps->len; i++) {
        struct rr_mmap *m = &g_array_index(state->mmaps, struct rr_mmap, i);
        g_free(m->fsname);
        g_free(m->backing_file);
    }
    for (guint i = 0; state->tasks && i < state->tasks->len; i++)
        rr_task_free(&g_array_index(state->tasks, struct rr_task, i));
    g_clear_pointer(&state->mmaps, g_array_unref);
    g_clear_pointer(&state->tasks, g_array_unref);
    g_clear_pointer(&state->checkpoints, g_array_unref);
    g_clear_pointer(&state->tids, g_array_unref);
    g_clear_pointer(&state->thread_spans, g_array_unref);
    g_clear_pointer(&state->presence, thread_presence_free);
    g_clear_pointer(&state->presence_cuts, g_free);
    trace_error_list_clear(&state->side_errors);
    g_clear_pointer(&state->header.uuid, g_bytes_unref);
    g_clear_pointer(&state->header.cpuid_records, g_bytes_unref);
    g_clear_pointer(&state->pid_of, g_hash_table_destroy);
    g_clear_pointer(&state->process_mmaps, g_array_unref);
    g_clear_pointer(&state->ps_rows, g_array_unref);
    g_clear_pointer(&state->ps_tree_order, g_array_unref);
    for (int i = 0; i < 6; i++)
        g_free(state->header.uname[i]);
    g_free(state->dir_real_path);
    g_free(state);
}

extern const struct trace_event_iterator rr_event_iterator;

guint rr_thread_dirs(const struct rr_state *state)
{
    uint64_t affordable = limit_table_budget(state->compressed_bytes) / LIMIT_RR_THREAD_BYTES;
    return (guint)MIN(state->tids->len, MIN(affordable, LIMIT_RR_THREAD_DIRS));
}

const struct format format_rr = {
    .name = "rr",
    .description = "rr record/replay trace directory (TRACE_VERSION 85)",
    .probe = rr_probe,
    .index = rr_index,
    .build_tree = rr_build_tree,
    .close = rr_close,
    .save = rr_save,
    .load = rr_load,
    .index_version = 7,
    .events = &rr_event_iterator,
};
