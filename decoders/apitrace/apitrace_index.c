/* The index pass over the decompressed call stream: header, properties,
 * then every enter/leave event, keeping the tables apitrace.h lists.  Calls
 * never left print at the end, in call order, as `apitrace dump` does; the
 * others print when their leave is read. */
#include <inttypes.h>
#include <string.h>
#include "apitrace.h"
#include "apitrace_details.h"
#include "trace.h"
#include "tracefs_limits.h"
#include "sorted_search.h"

#define AT_MAX_VERSION 6

static int compare_property(gconstpointer a, gconstpointer b)
{
    const struct at_property *x = *(struct at_property *const *)a, *y = *(struct at_property *const *)b;
    return strcmp(x->name, y->name);
}

static void property_free(gpointer data)
{
    struct at_property *p = data;
    g_free(p->name);
    g_free(p->value);
    g_free(p);
}

/* Properties as apitrace keeps them: a std::map (sorted, last value wins).
 * They count against the table budget; past it they are read (to find the
 * first event) and dropped. */
static void keep_property(struct at_state *state, const struct at_reader *reader, char *name, size_t name_size,
                          char *value, size_t value_size)
{
    /* By the bytes read: a NUL inside makes strlen() shorter than what is held. */
    uint64_t cost = name_size + value_size + sizeof(struct at_property) + 3 * 32;
    if (state->kept_bytes + cost > state->table_budget) {
        trace_error(state->trace, "stream", at_reader_offset(reader),
                    "property %.64s not kept: the header's properties pass the table budget of %" PRIu64
                    " bytes", name, state->table_budget);
        g_free(name);
        g_free(value);
        return;
    }
    state->kept_bytes += cost;
    for (guint i = 0; i < state->properties->len; i++) {
        struct at_property *p = state->properties->pdata[i];
        if (strcmp(p->name, name) == 0) {
            g_free(p->value);
            p->value = value;
            g_free(name);
            return;
        }
    }
    struct at_property *p = g_new(struct at_property, 1);
    p->name = name;
    p->value = value;
    g_ptr_array_add(state->properties, p);
}

static int read_header(struct at_state *state, struct at_reader *reader)
{
    if (stream_size(state->stream) == 0) {
        trace_fail(state->trace, "apitrace: nothing readable in the %s container (cut off or damaged at its start)",
                   state->container);
        return -1;
    }
    if (!at_uint(reader, &state->version)) {
        trace_fail(state->trace, "apitrace: stream too short for a version number");
        return -1;
    }
    if (state->version > AT_MAX_VERSION) {
        trace_fail(state->trace, "apitrace: unsupported trace format version %" PRIu64, state->version);
        return -1;
    }
    state->semantic_version = state->version;
    if (state->version < 6) {
        state->first_event = at_reader_offset(reader);
        return 0;
    }
    if (!at_uint(reader, &state->semantic_version) || state->semantic_version > state->version) {
        trace_fail(state->trace, "apitrace: bad semantic version");
        return -1;
    }
    for (unsigned n = 0;; n++) {
        size_t name_size = 0, value_size = 0;
        char *name = at_string(reader, &name_size);
        if (!name || n > LIMIT_APITRACE_PROPERTIES) {
            g_free(name);
            trace_fail(state->trace, "apitrace: damaged properties in the stream header");
            return -1;
        }
        if (!name[0]) {
            g_free(name);
            break;
        }
        char *value = at_string(reader, &value_size);
        if (!value) {
            trace_fail(state->trace, "apitrace: damaged property %s", name);
            g_free(name);
            return -1;
        }
        keep_property(state, reader, name, name_size, value, value_size);
    }
    g_ptr_array_sort(state->properties, compare_property);
    state->first_event = at_reader_offset(reader);
    return 0;
}

struct index_pass {
    struct at_state *state;
    struct at_reader reader;
    GArray *pending;           /* struct at_pending by number (never-left calls included) */
    uint64_t next_call, done, frames;
    uint64_t next_checkpoint;  /* call number from which the next checkpoint is due */
    uint64_t spacing;          /* calls between checkpoints (doubled when they are thinned) */
    GHashTable *threads_seen;
    gboolean threads_capped;
    /* The thread noted last, plus one (0: none): calls come in runs on a
     * thread, and a hash lookup per call was 5% of the pass. */
    uint64_t last_thread;
};

void at_note_ret(uint32_t *flags, const struct at_function *sig, const struct at_details *details)
{
    if (details->ret_offset == AT_NO_OFFSET || sig->arg_count != 0 || strcmp(sig->name, "glGetError") != 0)
        return;
    /* glGetError() = GL_NO_ERROR is verbose, any other result is not. */
    if (details->ret_has_int && details->ret_int == 0)
        *flags |= AT_FLAG_VERBOSE;
    else
        *flags &= ~(uint32_t)AT_FLAG_VERBOSE;
}

struct at_pending at_entered_call(uint64_t offset, uint64_t number, const struct at_function *sig, uint64_t thread,
                                  const struct at_details *details)
{
    struct at_pending call = { offset, (uint32_t)number, sig->index,
                               (uint32_t)(details->has_thread ? details->thread : thread),
                               sig->flags | (details->fake ? AT_FLAG_FAKE : 0) };
    at_note_ret(&call.flags, sig, details);
    return call;
}

static void add_checkpoint(struct index_pass *pass, uint64_t event_offset)
{
    struct at_state *state = pass->state;
    struct at_checkpoint c = { event_offset, pass->next_call, pass->done, pass->frames,
                               state->checkpoint_pending->len, pass->pending->len };
    g_array_append_val(state->checkpoints, c);
    g_array_append_vals(state->checkpoint_pending, pass->pending->data, pass->pending->len);
    pass->next_checkpoint = pass->next_call + pass->spacing;
}

/* What the index keeps, as counted against the table budget: signatures
 * and properties, and the arrays that grow with the calls. */
static uint64_t table_bytes(const struct index_pass *pass)
{
    const struct at_state *state = pass->state;
    return state->kept_bytes + (uint64_t)pass->pending->len * sizeof(struct at_pending) +
           (uint64_t)state->checkpoints->len * sizeof(struct at_checkpoint) +
           (uint64_t)state->checkpoint_pending->len * sizeof(struct at_pending) +
           (uint64_t)state->blobs->len * sizeof(struct at_blob) +
           (uint64_t)state->threads->len * (sizeof(uint32_t) + 32);
}

/* Moves the checkpoints' runs of pending calls, in order, to the front of
 * checkpoint_pending, leaving out the calls listed in `drop` (by number;
 * NULL: none). */
static void pack_checkpoint_pending(struct at_state *state, const GArray *drop)
{
    GArray *pending = state->checkpoint_pending;
    uint64_t kept = 0;
    for (guint k = 0; k < state->checkpoints->len; k++) {
        struct at_checkpoint *c = &g_array_index(state->checkpoints, struct at_checkpoint, k);
        uint64_t first = kept;
        for (uint64_t j = c->pending_first; j < c->pending_first + c->pending_count; j++) {
            struct at_pending p = g_array_index(pending, struct at_pending, j);
            if (!drop || at_find_pending((const struct at_pending *)drop->data, drop->len, p.number) < 0)
                g_array_index(pending, struct at_pending, kept++) = p;
        }
        c->pending_first = first;
        c->pending_count = kept - first;
    }
    g_array_set_size(pending, (guint)kept);
}

/* Keeps every other checkpoint (with its pending calls) and doubles the
 * spacing: views then decode up to twice as far, to the same bytes. */
static void thin_checkpoints(struct index_pass *pass)
{
    GArray *checkpoints = pass->state->checkpoints;
    guint kept = 0;
    for (guint i = 0; i < checkpoints->len; i += 2)
        g_array_index(checkpoints, struct at_checkpoint, kept++) = g_array_index(checkpoints, struct at_checkpoint, i);
    g_array_set_size(checkpoints, kept);
    pack_checkpoint_pending(pass->state, NULL);
    pass->spacing *= 2;
}

/* Whether the tables fit their budget, thinning checkpoints where they
 * take their share of it. */
static gboolean tables_fit(struct index_pass *pass)
{
    struct at_state *state = pass->state;
    while (table_bytes(pass) > state->table_budget && state->checkpoints->len > 1 &&
           (state->checkpoints->len * sizeof(struct at_checkpoint) +
            state->checkpoint_pending->len * sizeof(struct at_pending)) * LIMIT_APITRACE_CHECKPOINT_SHARE >=
               state->table_budget)
        thin_checkpoints(pass);
    return table_bytes(pass) <= state->table_budget && !state->over_budget &&
           (uint64_t)pass->pending->len * sizeof(struct at_pending) * LIMIT_APITRACE_PENDING_SHARE <=
               state->table_budget;
}

/* Threads get a threads/<n>/ directory up to a limit and within the
 * table budget: a damaged trace naming a new thread per call must not
 * grow the table, or the tree, with the trace. */
static void note_thread(struct index_pass *pass, uint32_t thread, uint64_t event_offset)
{
    if (pass->last_thread == (uint64_t)thread + 1)
        return;
    if (g_hash_table_contains(pass->threads_seen, GUINT_TO_POINTER(thread + 1))) {
        pass->last_thread = (uint64_t)thread + 1;
        return;
    }
    struct at_state *state = pass->state;
    if (state->threads->len >= LIMIT_APITRACE_THREADS ||
        (state->threads->len + 1) * (uint64_t)LIMIT_APITRACE_THREAD_BYTES > state->table_budget / 4) {
        if (!pass->threads_capped)
            trace_error(state->trace, "stream", event_offset,
                        "more than %u threads: the rest have no threads/ directory (%u at most, and %u bytes each of "
                        "a quarter of the table budget)", state->threads->len, LIMIT_APITRACE_THREADS,
                        LIMIT_APITRACE_THREAD_BYTES);
        pass->threads_capped = TRUE;
        return;
    }
    g_hash_table_add(pass->threads_seen, GUINT_TO_POINTER(thread + 1));
    g_array_append_val(state->threads, thread);
}

static gboolean index_enter(struct index_pass *pass, uint64_t event_offset)
{
    struct at_state *state = pass->state;
    uint64_t thread = 0, number = pass->next_call;
    if (number >= LIMIT_APITRACE_CALLS - 1) {
        trace_error(state->trace, "stream", event_offset, "too many calls");
        return FALSE;
    }
    if (state->version >= 4 && !at_uint(&pass->reader, &thread)) {
        trace_error(state->trace, "stream", event_offset, "call %" PRIu64 ": cut off in its enter event", number);
        return FALSE;
    }
    struct at_function *sig = at_function_sig(state, &pass->reader, TRUE);
    if (!sig) {
        if (!state->over_budget)
            trace_error(state->trace, "stream", event_offset, "call %" PRIu64 ": bad function signature", number);
        return FALSE;
    }
    struct at_details details;
    at_details_init(&details, number, TRUE);
    details.blobs = state->blobs;
    if (!at_call_details(state, &pass->reader, &details)) {
        if (!state->over_budget)
            trace_error(state->trace, "stream", event_offset, "call %" PRIu64 " (%s): %s", number, sig->name,
                        details.why);
        return FALSE;
    }
    struct at_pending call = at_entered_call(event_offset, number, sig, thread, &details);
    sig->call_count++;
    g_array_append_val(pass->pending, call);
    pass->next_call++;
    return TRUE;
}

static gboolean index_leave(struct index_pass *pass, uint64_t event_offset)
{
    struct at_state *state = pass->state;
    uint64_t number;
    if (!at_uint(&pass->reader, &number)) {
        trace_error(state->trace, "stream", event_offset, "leave event cut off");
        return FALSE;
    }
    gssize i = at_find_pending((const struct at_pending *)pass->pending->data, pass->pending->len, number);
    gboolean known = i >= 0;
    struct at_details details;
    at_details_init(&details, number, TRUE);
    details.blobs = known ? state->blobs : NULL;
    if (!at_call_details(state, &pass->reader, &details)) {
        if (!state->over_budget)
            trace_error(state->trace, "stream", event_offset, "leave of call %" PRIu64 ": %s", number, details.why);
        if (known)   /* apitrace drops such a call too */
            g_array_remove_index(pass->pending, (guint)i);
        return FALSE;
    }
    if (!known) {
        trace_error(state->trace, "stream", event_offset, "leave for unknown call %" PRIu64, number);
        return TRUE;
    }
    struct at_pending call = g_array_index(pass->pending, struct at_pending, i);
    g_array_remove_index(pass->pending, (guint)i);
    at_note_ret(&call.flags, state->functions->pdata[call.function], &details);
    pass->done++;
    if (call.flags & AT_FLAG_END_FRAME)
        pass->frames++;
    note_thread(pass, call.thread, event_offset);
    return TRUE;
}

static void budget_error(struct at_state *state, uint64_t event_offset)
{
    trace_error(state->trace, "stream", event_offset,
                "the index's tables reach their budget of %" PRIu64 " bytes (%u MiB + 1/%u of the file's size; "
                "calls pending: 1/%u of it): the calls from here on are not shown", state->table_budget,
                LIMIT_TABLE_FLOOR_BYTES >> 20, LIMIT_TABLE_FILE_DIVISOR, LIMIT_APITRACE_PENDING_SHARE);
}

static void scan_events(struct index_pass *pass)
{
    struct at_state *state = pass->state;
    for (;;) {
        uint64_t event_offset = at_reader_offset(&pass->reader);
        state->events_end = event_offset;
        int c = at_getc(&pass->reader);
        gboolean ok;
        if (c < 0) {
            if (pass->reader.error)
                trace_error(state->trace, "stream", event_offset, "stream unreadable (damaged chunk)");
            return;
        }
        if (!tables_fit(pass)) {
            budget_error(state, event_offset);
            return;
        }
        if (c == 0x00) {
            if (pass->next_call >= pass->next_checkpoint && pass->pending->len <= LIMIT_APITRACE_CHECKPOINT_PENDING)
                add_checkpoint(pass, event_offset);
            ok = index_enter(pass, event_offset);
        } else if (c == 0x01) {
            ok = index_leave(pass, event_offset);
        } else {
            trace_error(state->trace, "stream", event_offset, "unknown event 0x%02x", (unsigned)c);
            ok = FALSE;
        }
        if (!ok) {
            if (state->over_budget)
                budget_error(state, event_offset);
            return;
        }
    }
}

/* Calls never left come out at the end, marked incomplete, in call order;
 * the checkpoints forget them (a walk takes them from `unfinished`). */
static void finish_order(struct index_pass *pass)
{
    struct at_state *state = pass->state;
    state->stream_done = pass->done;
    state->stream_frames = pass->frames;
    for (guint i = 0; i < pass->pending->len; i++) {
        struct at_pending *call = &g_array_index(pass->pending, struct at_pending, i);
        call->flags |= AT_FLAG_INCOMPLETE;
        if (call->flags & AT_FLAG_END_FRAME)
            pass->frames++;
        note_thread(pass, call->thread, call->enter_offset);
    }
    g_array_append_vals(state->unfinished, pass->pending->data, pass->pending->len);
    if (state->unfinished->len)
        pack_checkpoint_pending(state, state->unfinished);
}

struct at_state *at_state_new(struct trace *trace)
{
    struct at_state *state = g_new0(struct at_state, 1);
    state->trace = trace;
    trace->format_state = state;
    at_state_init_sigs(state);
    state->properties = g_ptr_array_new_with_free_func(property_free);
    state->blobs = g_array_new(FALSE, FALSE, sizeof(struct at_blob));
    state->checkpoints = g_array_new(FALSE, FALSE, sizeof(struct at_checkpoint));
    state->checkpoint_pending = g_array_new(FALSE, FALSE, sizeof(struct at_pending));
    state->unfinished = g_array_new(FALSE, FALSE, sizeof(struct at_pending));
    state->threads = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    return state;
}

int at_index_stream(struct at_state *state)
{
    struct index_pass pass = { .state = state };
    at_reader_init(&pass.reader, state->stream, 0);
    if (read_header(state, &pass.reader) < 0) {
        at_reader_finish(&pass.reader);
        return -1;
    }
    pass.pending = g_array_new(FALSE, FALSE, sizeof(struct at_pending));
    pass.spacing = LIMIT_APITRACE_CHECKPOINT_CALLS;
    pass.threads_seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    scan_events(&pass);
    state->bulk_bytes = pass.reader.bulk_bytes;
    at_reader_finish(&pass.reader);
    finish_order(&pass);
    state->call_count = pass.next_call;
    state->order_count = pass.done + pass.pending->len;
    state->frame_count = pass.frames;
    g_array_free(pass.pending, TRUE);
    g_hash_table_destroy(pass.threads_seen);
    at_finish_index(state);
    return 0;
}

void at_finish_index(struct at_state *state)
{
    g_array_sort(state->threads, sorted_compare_u32);
    at_sort_blobs(state);
    at_walk_memo_init(state);
    if (!state->api)
        state->api = "Unknown";
}
