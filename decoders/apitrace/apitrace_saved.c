/* The persistent index: the side tables of the index pass (chunk table,
 * signatures, the counts, checkpoints with the calls pending at each, the
 * calls never left, threads, blobs) saved so that a second mount skips the
 * scan.  The bytes come from a checksummed file but are checked like trace
 * data all the same. */
#include <string.h>
#include "apitrace.h"
#include "saved_bytes.h"
#include "saved_stream.h"
#include "sorted_search.h"
#include "stream.h"
#include "trace.h"
#include "tracefs_limits.h"

/* ---- writing ---- */
static void put_named_values(struct saved_writer *out, const GPtrArray *list)
{
    saved_put_u64(out, list->len);
    for (guint i = 0; i < list->len; i++) {
        const struct at_named_values *sig = list->pdata[i];
        saved_put_u64(out, sig->id);
        saved_put_u64(out, sig->count);
        for (uint32_t k = 0; k < sig->count; k++) {
            saved_put_string(out, sig->values[k].name);
            saved_put_u64(out, sig->values[k].value);
        }
        saved_put_u64(out, sig->def_end);
    }
}

static void put_sigs(struct saved_writer *out, struct at_state *state)
{
    saved_put_u64(out, state->functions->len);
    for (guint i = 0; i < state->functions->len; i++) {
        const struct at_function *f = state->functions->pdata[i];
        saved_put_u64(out, f->id);
        saved_put_bytes(out, f->name, f->name_len);
        saved_put_u64(out, f->arg_count);
        for (uint32_t k = 0; k < f->arg_count; k++)
            saved_put_string(out, f->arg_names[k]);
        saved_put_u64(out, f->def_end);
        saved_put_u64(out, f->call_count);
    }
    put_named_values(out, state->enum_list);
    put_named_values(out, state->bitmask_list);
    saved_put_u64(out, state->struct_list->len);
    for (guint i = 0; i < state->struct_list->len; i++) {
        const struct at_struct *s = state->struct_list->pdata[i];
        saved_put_u64(out, s->id);
        saved_put_string(out, s->name);
        saved_put_u64(out, s->count);
        for (uint32_t k = 0; k < s->count; k++)
            saved_put_string(out, s->member_names[k]);
        saved_put_u64(out, s->def_end);
    }
    /* By id: the table's hash is keyed per process, and the same trace
     * must save the same bytes.  Sorted as copies, by their first member. */
    G_STATIC_ASSERT(offsetof(struct at_frame, id) == 0);
    GArray *frames = g_array_sized_new(FALSE, FALSE, sizeof(struct at_frame), g_hash_table_size(state->frames.all));
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, state->frames.all);
    while (g_hash_table_iter_next(&it, NULL, &value))
        g_array_append_vals(frames, value, 1);
    g_array_sort(frames, sorted_compare_u64);
    saved_put_u64(out, frames->len);
    for (guint i = 0; i < frames->len; i++) {
        const struct at_frame *f = &g_array_index(frames, struct at_frame, i);
        saved_put_u64(out, f->id);
        saved_put_string(out, f->module);
        saved_put_string(out, f->function);
        saved_put_string(out, f->filename);
        saved_put_u64(out, (uint64_t)(int64_t)f->line);
        saved_put_u64(out, (uint64_t)f->offset);
        saved_put_u64(out, f->def_end);
    }
    g_array_unref(frames);
}

static void put_pending(struct saved_writer *out, const GArray *list)
{
    saved_put_u64(out, list->len);
    for (guint i = 0; i < list->len; i++) {
        const struct at_pending *p = &g_array_index(list, struct at_pending, i);
        saved_put_u64(out, p->enter_offset);
        saved_put_u64(out, p->number);
        saved_put_u64(out, p->function);
        saved_put_u64(out, p->thread);
        saved_put_u64(out, p->flags);
    }
}

int at_save(struct trace *trace, struct saved_writer *out)
{
    struct at_state *state = trace->format_state;
    if (!state || !state->stream)
        return -1;
    saved_put_string(out, state->container);
    saved_put_u64(out, state->version);
    saved_put_u64(out, state->semantic_version);
    saved_put_u64(out, state->first_event);
    saved_put_u64(out, stream_chunk_count(state->stream) > 0);
    if (stream_chunk_count(state->stream) > 0)
        saved_put_stream(out, state->stream);
    saved_put_u64(out, state->properties->len);
    for (guint i = 0; i < state->properties->len; i++) {
        const struct at_property *p = state->properties->pdata[i];
        saved_put_string(out, p->name);
        saved_put_string(out, p->value);
    }
    put_sigs(out, state);
    saved_put_u64(out, state->call_count);
    saved_put_u64(out, state->order_count);
    saved_put_u64(out, state->frame_count);
    saved_put_u64(out, state->events_end);
    saved_put_u64(out, state->stream_done);
    saved_put_u64(out, state->stream_frames);
    saved_put_u64(out, state->bulk_bytes);
    saved_put_u32_array(out, state->threads);
    saved_put_array(out, state->checkpoints);
    put_pending(out, state->checkpoint_pending);
    put_pending(out, state->unfinished);
    saved_put_array(out, state->blobs);
    return 0;
}

/* ---- reading ---- */
/* A name; a NULL one only where `may_be_null` (else the data is bad). */
static char *get_str(struct saved_reader *r, gboolean may_be_null)
{
    char *s = saved_get_string(r, LIMIT_APITRACE_NAME_BYTES);
    if (!s && !may_be_null) {
        r->bad = TRUE;
        return g_strdup("");
    }
    return s;
}

/* A function's name, which may hold NULs. */
static char *get_name(struct saved_reader *r, size_t *length)
{
    char *name = saved_get_name(r, LIMIT_APITRACE_NAME_BYTES, length);
    return name ? name : g_strdup("");
}

/* The container's chunk table, as the index pass built it. */
static struct stream *get_stream(struct saved_reader *r, struct trace *trace)
{
    struct stream *stream = saved_get_stream(r, trace->cache, "stream", trace->fd, (uint64_t)trace->st.st_size);
    return stream ? trace_add_stream(trace, stream) : NULL;
}

/* A saved table names each id once (the map takes the signature all the
 * same: the frames' map owns them, and a bad load frees the state). */
static void put_new_id(struct saved_reader *r, struct at_id_map *map, uint64_t id, void *sig)
{
    if (at_id_map_get(map, id))
        r->bad = TRUE;
    at_id_map_put(map, id, sig);
}

static gboolean get_functions(struct saved_reader *r, struct at_state *state)
{
    uint64_t n = saved_get_count(r, 32, LIMIT_APITRACE_CALLS);
    for (uint64_t i = 0; i < n && !r->bad; i++) {
        struct at_function *f = g_new0(struct at_function, 1);
        f->id = saved_get_u64(r);
        f->name = get_name(r, &f->name_len);
        uint64_t args = saved_get_count(r, 8, LIMIT_APITRACE_SIG_ENTRIES);
        f->arg_count = (uint32_t)args;
        f->arg_names = g_new0(char *, args + 1);
        for (uint64_t k = 0; k < args; k++)
            f->arg_names[k] = get_str(r, FALSE);
        f->def_end = saved_get_u64(r);
        f->call_count = saved_get_u64(r);
        if (at_id_map_get(&state->function_ids, f->id))
            r->bad = TRUE;
        at_add_function(state, f);
    }
    return !r->bad;
}

/* Enums or bitmasks: id, count, (name, value) pairs, def_end. */
static void get_named_values(struct saved_reader *r, struct at_id_map *map, GPtrArray *list, gboolean is_enum)
{
    uint64_t n = saved_get_count(r, 24, LIMIT_APITRACE_CALLS);
    for (uint64_t i = 0; i < n && !r->bad; i++) {
        struct at_named_values *sig = g_new0(struct at_named_values, 1);
        sig->id = saved_get_u64(r);
        uint64_t count = saved_get_count(r, 16, LIMIT_APITRACE_SIG_ENTRIES);
        sig->values = g_new0(struct at_named_value, count ? count : 1);
        sig->count = (uint32_t)count;
        for (uint64_t k = 0; k < count; k++) {
            sig->values[k].name = get_str(r, FALSE);
            sig->values[k].value = saved_get_u64(r);
        }
        sig->def_end = saved_get_u64(r);
        at_index_named_values(sig, is_enum);
        g_ptr_array_add(list, sig);
        put_new_id(r, map, sig->id, sig);
    }
}

static gboolean get_other_sigs(struct saved_reader *r, struct at_state *state)
{
    get_named_values(r, &state->enums, state->enum_list, TRUE);
    get_named_values(r, &state->bitmasks, state->bitmask_list, FALSE);
    uint64_t n = saved_get_count(r, 32, LIMIT_APITRACE_CALLS);
    for (uint64_t i = 0; i < n && !r->bad; i++) {
        struct at_struct *s = g_new0(struct at_struct, 1);
        s->id = saved_get_u64(r);
        s->name = get_str(r, FALSE);
        uint64_t count = saved_get_count(r, 8, LIMIT_APITRACE_SIG_ENTRIES);
        s->member_names = g_new0(char *, count + 1);
        s->count = (uint32_t)count;
        for (uint64_t k = 0; k < count; k++)
            s->member_names[k] = get_str(r, FALSE);
        s->def_end = saved_get_u64(r);
        g_ptr_array_add(state->struct_list, s);
        put_new_id(r, &state->structs, s->id, s);
    }
    n = saved_get_count(r, 56, LIMIT_APITRACE_CALLS);
    for (uint64_t i = 0; i < n && !r->bad; i++) {
        struct at_frame *f = g_new0(struct at_frame, 1);
        f->id = saved_get_u64(r);
        f->module = get_str(r, TRUE);
        f->function = get_str(r, TRUE);
        f->filename = get_str(r, TRUE);
        f->line = (int32_t)saved_get_u64(r);
        f->offset = (int64_t)saved_get_u64(r);
        f->def_end = saved_get_u64(r);
        put_new_id(r, &state->frames, f->id, f);
    }
    return !r->bad;
}

/* A list of pending calls, each checked (sorted_run checks their order). */
static gboolean get_pending(struct saved_reader *r, struct at_state *state, GArray *list)
{
    uint64_t n = saved_get_count(r, 40, LIMIT_APITRACE_CALLS);
    for (uint64_t i = 0; i < n && !r->bad; i++) {
        uint64_t offset = saved_get_u64(r), number = saved_get_u64(r), function = saved_get_u64(r), thread = saved_get_u64(r),
                 flags = saved_get_u64(r);
        if (offset < state->first_event || offset >= state->events_end || number >= state->call_count ||
            function >= state->functions->len || thread > UINT32_MAX || flags > UINT32_MAX)
            return FALSE;
        struct at_pending p = { offset, (uint32_t)number, (uint32_t)function, (uint32_t)thread, (uint32_t)flags };
        g_array_append_val(list, p);
    }
    return !r->bad;
}

static gboolean sorted_run(const GArray *list, uint64_t first, uint64_t count)
{
    for (uint64_t i = first + 1; i < first + count; i++)
        if (g_array_index(list, struct at_pending, i - 1).number >= g_array_index(list, struct at_pending, i).number)
            return FALSE;
    return TRUE;
}

static gboolean get_tables(struct saved_reader *r, struct at_state *state)
{
    uint64_t stream_bytes = stream_size(state->stream);
    state->call_count = saved_get_u64(r);
    state->order_count = saved_get_u64(r);
    state->frame_count = saved_get_u64(r);
    state->events_end = saved_get_u64(r);
    state->stream_done = saved_get_u64(r);
    state->stream_frames = saved_get_u64(r);
    state->bulk_bytes = saved_get_u64(r);
    if (r->bad || state->call_count > LIMIT_APITRACE_CALLS || state->events_end > stream_bytes ||
        state->bulk_bytes > stream_bytes ||
        state->first_event > state->events_end || state->stream_done > state->call_count ||
        state->stream_frames > state->stream_done)
        return FALSE;
    /* No more threads than the index pass gives a directory. */
    uint64_t threads_affordable = state->table_budget / 4 / LIMIT_APITRACE_THREAD_BYTES;
    if (!saved_get_u32_array(r, state->threads, MIN(LIMIT_APITRACE_THREADS, threads_affordable)))
        return FALSE;
    if (!saved_get_array(r, state->checkpoints, LIMIT_APITRACE_CALLS) ||
        !get_pending(r, state, state->checkpoint_pending) || !get_pending(r, state, state->unfinished))
        return FALSE;
    for (guint i = 0; i < state->checkpoints->len; i++) {
        const struct at_checkpoint *c = &g_array_index(state->checkpoints, struct at_checkpoint, i);
        const struct at_checkpoint *prev = i ? c - 1 : NULL;
        if (c->offset < state->first_event || c->offset > state->events_end || c->next_call > state->call_count ||
            c->done > state->stream_done || c->frames > state->stream_frames || c->frames > c->done ||
            c->pending_count > LIMIT_APITRACE_CHECKPOINT_PENDING || c->pending_first > LIMIT_APITRACE_CALLS ||
            c->pending_first + c->pending_count > state->checkpoint_pending->len ||
            !sorted_run(state->checkpoint_pending, c->pending_first, c->pending_count) ||
            (prev && (c->offset < prev->offset || c->next_call < prev->next_call || c->done < prev->done ||
                      c->frames < prev->frames)))
            return FALSE;
    }
    uint64_t unfinished_frames = 0;
    for (guint i = 0; i < state->unfinished->len; i++)
        if (g_array_index(state->unfinished, struct at_pending, i).flags & AT_FLAG_END_FRAME)
            unfinished_frames++;
    if (!sorted_run(state->unfinished, 0, state->unfinished->len) ||
        state->order_count != state->stream_done + state->unfinished->len ||
        state->order_count > state->call_count ||
        state->frame_count != state->stream_frames + unfinished_frames)
        return FALSE;
    if (!saved_get_array(r, state->blobs, LIMIT_APITRACE_CALLS))
        return FALSE;
    for (guint i = 0; i < state->blobs->len; i++) {
        const struct at_blob *b = &g_array_index(state->blobs, struct at_blob, i);
        if (b->offset > stream_bytes || b->size > stream_bytes - b->offset)
            return FALSE;
    }
    return saved_reader_done(r);
}

static const char *const container_names[] = { "Snappy", "ZLib", "Zstd", "Brotli", "None" };

int at_load(struct trace *trace, const uint8_t *data, size_t size)
{
    struct saved_reader r;
    saved_reader_init_mapped(&r, data, size);
    struct at_state *state = at_state_new(trace);
    char *container = get_str(&r, FALSE);
    for (guint i = 0; i < G_N_ELEMENTS(container_names); i++)
        if (strcmp(container, container_names[i]) == 0)
            state->container = container_names[i];
    g_free(container);
    state->version = saved_get_u64(&r);
    state->semantic_version = saved_get_u64(&r);
    state->first_event = saved_get_u64(&r);
    uint64_t chunked = saved_get_u64(&r);
    if (r.bad || !state->container || state->version > 6 || chunked > 1)
        return -1;
    state->stream = chunked ? get_stream(&r, trace) : trace_file_stream(trace);
    if (!state->stream)
        return -1;
    uint64_t properties = saved_get_count(&r, 16, LIMIT_APITRACE_PROPERTIES);
    for (uint64_t i = 0; i < properties && !r.bad; i++) {
        struct at_property *p = g_new(struct at_property, 1);
        p->name = get_str(&r, FALSE);
        p->value = get_str(&r, FALSE);
        g_ptr_array_add(state->properties, p);
    }
    if (r.bad || !get_functions(&r, state) || !get_other_sigs(&r, state) || !get_tables(&r, state))
        return -1;
    at_finish_index(state);
    return 0;
}
