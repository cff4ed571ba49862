/* The index pass over the decompressed call stream: header, properties,
 * then every enter/leave event.  Keeps per call where its events lie and
 * the flags apitrace's parser derives, and the order `apitrace dump`
 * prints calls in (when their leave event is read; calls never left at
 * the end, in call order). */
#include <inttypes.h>
#include <string.h>
#include "apitrace.h"
#include "apitrace_details.h"
#include "trace.h"
#include "tracefs_limits.h"

#define AT_MAX_VERSION 6

static int compare_property(gconstpointer a, gconstpointer b)
{
    const struct at_property *x = *(struct at_property *const *)a, *y = *(struct at_property *const *)b;
    return strcmp(x->name, y->name);
}

void at_property_free(gpointer data)
{
    struct at_property *p = data;
    g_free(p->name);
    g_free(p->value);
    g_free(p);
}

/* Properties as apitrace keeps them: a std::map (sorted, last value wins). */
static void add_property(struct at_state *state, char *name, char *value)
{
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
    state->properties = g_ptr_array_new_with_free_func(at_property_free);
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
        char *name = at_string(reader);
        if (!name || n > LIMIT_APITRACE_PROPERTIES) {
            g_free(name);
            trace_fail(state->trace, "apitrace: damaged properties in the stream header");
            return -1;
        }
        if (!name[0]) {
            g_free(name);
            break;
        }
        char *value = at_string(reader);
        if (!value) {
            g_free(name);
            trace_fail(state->trace, "apitrace: damaged property %s", name);
            return -1;
        }
        add_property(state, name, value);
    }
    g_ptr_array_sort(state->properties, compare_property);
    state->first_event = at_reader_offset(reader);
    return 0;
}

struct index_pass {
    struct at_state *state;
    struct at_reader reader;
    GArray *calls;             /* struct at_call */
    GArray *order;             /* uint32_t */
    uint64_t next_pending;     /* lowest call number that may still be pending */
};

static gboolean is_get_error(const struct at_function *sig)
{
    return sig->arg_count == 0 && strcmp(sig->name, "glGetError") == 0;
}

static void note_ret(struct at_call *call, const struct at_function *sig, const struct at_details *details)
{
    if (details->ret_offset == AT_NO_OFFSET || !is_get_error(sig))
        return;
    /* glGetError() = GL_NO_ERROR is verbose, any other result is not. */
    if (details->ret_has_int && details->ret_int == 0)
        call->flags |= AT_FLAG_VERBOSE;
    else
        call->flags &= ~(uint32_t)AT_FLAG_VERBOSE;
}

static gboolean index_enter(struct index_pass *pass, uint64_t event_offset)
{
    struct at_state *state = pass->state;
    uint64_t thread = 0, number = pass->calls->len;
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
        trace_error(state->trace, "stream", event_offset, "call %" PRIu64 ": bad function signature", number);
        return FALSE;
    }
    struct at_details details;
    at_details_init(&details, number, TRUE);
    details.blobs = state->blobs;
    if (!at_call_details(state, &pass->reader, &details)) {
        trace_error(state->trace, "stream", event_offset, "call %" PRIu64 " (%s): %s", number, sig->name, details.why);
        return FALSE;
    }
    if (details.has_thread)
        thread = details.thread;
    struct at_call call = {
        .enter_offset = event_offset, .leave_offset = AT_NO_OFFSET, .function = sig->index,
        .thread = (uint32_t)thread, .flags = sig->flags | (details.fake ? AT_FLAG_FAKE : 0),
        .state = AT_CALL_PENDING,
    };
    note_ret(&call, sig, &details);
    sig->call_count++;
    g_array_append_val(pass->calls, call);
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
    struct at_call *call = number < pass->calls->len ? &g_array_index(pass->calls, struct at_call, number) : NULL;
    gboolean known = call && call->state == AT_CALL_PENDING;
    struct at_details details;
    at_details_init(&details, number, TRUE);
    details.blobs = known ? state->blobs : NULL;
    if (!at_call_details(state, &pass->reader, &details)) {
        trace_error(state->trace, "stream", event_offset, "leave of call %" PRIu64 ": %s", number, details.why);
        if (known)
            call->state = AT_CALL_LOST;   /* apitrace drops such a call too */
        return FALSE;
    }
    if (!known) {
        trace_error(state->trace, "stream", event_offset, "leave for unknown call %" PRIu64, number);
        return TRUE;
    }
    call->leave_offset = event_offset;
    call->state = AT_CALL_DONE;
    note_ret(call, state->functions->pdata[call->function], &details);
    uint32_t n32 = (uint32_t)number;
    g_array_append_val(pass->order, n32);
    return TRUE;
}

static void scan_events(struct index_pass *pass)
{
    struct at_state *state = pass->state;
    for (;;) {
        uint64_t event_offset = at_reader_offset(&pass->reader);
        int c = at_getc(&pass->reader);
        gboolean ok;
        if (c < 0) {
            if (pass->reader.error)
                trace_error(state->trace, "stream", event_offset, "stream unreadable (damaged chunk)");
            return;
        }
        if (c == 0x00)
            ok = index_enter(pass, event_offset);
        else if (c == 0x01)
            ok = index_leave(pass, event_offset);
        else {
            trace_error(state->trace, "stream", event_offset, "unknown event 0x%02x", (unsigned)c);
            ok = FALSE;
        }
        if (!ok)
            return;
    }
}

/* Calls never left come out at the end, marked incomplete, in call order. */
static void finish_order(struct index_pass *pass)
{
    for (guint i = 0; i < pass->calls->len; i++) {
        struct at_call *call = &g_array_index(pass->calls, struct at_call, i);
        if (call->state != AT_CALL_PENDING)
            continue;
        call->flags |= AT_FLAG_INCOMPLETE;
        g_array_append_val(pass->order, i);
    }
}

static void find_frames_and_threads(struct at_state *state)
{
    GArray *ends = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    state->threads = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (uint64_t pos = 0; pos < state->order_count; pos++) {
        const struct at_call *call = &state->calls[state->order[pos]];
        if (call->flags & AT_FLAG_END_FRAME)
            g_array_append_val(ends, pos);
        if (!g_hash_table_contains(seen, GUINT_TO_POINTER(call->thread + 1))) {
            g_hash_table_add(seen, GUINT_TO_POINTER(call->thread + 1));
            g_array_append_val(state->threads, call->thread);
        }
    }
    g_hash_table_destroy(seen);
    state->frame_count = ends->len;
    state->frame_ends = (uint64_t *)g_array_free(ends, FALSE);
}

static gint compare_u32(gconstpointer a, gconstpointer b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int at_index_stream(struct at_state *state)
{
    struct index_pass pass = { .state = state };
    at_reader_init(&pass.reader, state->stream, 0);
    if (read_header(state, &pass.reader) < 0) {
        at_reader_finish(&pass.reader);
        return -1;
    }
    state->blobs = g_array_new(FALSE, FALSE, sizeof(struct at_blob));
    pass.calls = g_array_new(FALSE, FALSE, sizeof(struct at_call));
    pass.order = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    scan_events(&pass);
    at_reader_finish(&pass.reader);
    finish_order(&pass);
    state->call_count = pass.calls->len;
    state->calls = (struct at_call *)g_array_free(pass.calls, FALSE);
    state->order_count = pass.order->len;
    state->order = (uint32_t *)g_array_free(pass.order, FALSE);
    at_finish_index(state);
    return 0;
}

void at_finish_index(struct at_state *state)
{
    find_frames_and_threads(state);
    g_array_sort(state->threads, compare_u32);
    if (!state->api)
        state->api = "Unknown";
}
