/* The tree of an apitrace trace (besides the common files). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "apitrace.h"
#include "apitrace_views.h"
#include "numbered_files.h"
#include "trace.h"
#include "tree.h"

static uint64_t identity_key(const struct family *family, uint64_t dir_key, uint64_t n)
{
    (void)family;
    (void)dir_key;
    return n;
}

/* A view over the trace's state. */
static struct view state_view(void *state, const struct view_ops *ops, uint64_t arg0, uint64_t arg1)
{
    return (struct view){ .ops = ops, .context = state, .arg = { arg0, arg1, 0 } };
}

/* ---- calls/<n>.json, frames/<n> and frames/<n>.json ---- */
static void calls_view(void *context, uint64_t n, unsigned kind, struct view *out)
{
    (void)kind;
    *out = state_view(context, &at_call_json_ops, n, 0);
}

static void frames_view(void *context, uint64_t n, unsigned kind, struct view *out)
{
    if (kind)
        *out = state_view(context, &at_frame_json_ops, n, 0);
    else
        *out = state_view(context, &at_list_ops, AT_CALL_DUMP | AT_LIST_FRAME, n);
}

static const struct numbered_files calls_files = { { ".json", NULL }, 0, calls_view };
static const struct numbered_files frames_files = { { "", ".json" }, 0, frames_view };

/* ---- blobs/<call>.<arg> (blobs sorted by call, then argument) ---- */
static uint64_t blobs_count(const struct family *family, uint64_t dir_key)
{
    (void)dir_key;
    return ((const struct at_state *)family->context)->blobs->len;
}

static void blobs_name(const struct family *family, uint64_t key, GString *out)
{
    const struct at_state *state = family->context;
    const struct at_blob *blob = &g_array_index(state->blobs, struct at_blob, key);
    if (blob->arg >= 0)
        g_string_printf(out, "%" PRIu64 ".%" PRId64, blob->call, blob->arg);
    else
        g_string_printf(out, "%" PRIu64 ".ret", blob->call);
}

/* By call, then argument. */
static int compare_blob(const void *a, const void *b)
{
    const struct at_blob *x = a, *y = b;
    if (x->call != y->call)
        return x->call < y->call ? -1 : 1;
    if (x->arg != y->arg)
        return x->arg < y->arg ? -1 : 1;
    return 0;
}

static gboolean blobs_lookup(const struct family *family, uint64_t dir_key, const char *name, uint64_t *key)
{
    const struct at_state *state = family->context;
    const char *dot = strchr(name, '.');
    uint64_t call, arg_u = 0;
    int64_t arg;
    (void)dir_key;
    if (!dot || !tree_parse_number_name(name, dot, &call))
        return FALSE;
    if (strcmp(dot + 1, "ret") == 0)
        arg = -1;
    else if (tree_parse_number_name(dot + 1, "", &arg_u) && arg_u < INT64_MAX)
        arg = (int64_t)arg_u;
    else
        return FALSE;
    const struct at_blob wanted = { .call = call, .arg = arg }, *blobs = (const struct at_blob *)state->blobs->data;
    const struct at_blob *found = blobs ? bsearch(&wanted, blobs, state->blobs->len, sizeof wanted, compare_blob) : NULL;
    if (!found)
        return FALSE;
    *key = (uint64_t)(found - blobs);
    return TRUE;
}

static void blobs_view(const struct family *family, uint64_t key, struct view *out)
{
    const struct at_state *state = family->context;
    const struct at_blob *blob = &g_array_index(state->blobs, struct at_blob, key);
    view_init_stream_range(out, state->stream, blob->offset, blob->size);
}

static const struct family_ops blobs_ops = { blobs_count, identity_key, blobs_name, blobs_lookup, blobs_view };

static gint blob_order(gconstpointer a, gconstpointer b)
{
    const struct at_blob *x = a, *y = b;
    int c = compare_blob(x, y);
    if (c)
        return c;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Sorted by name; of several values of one argument the last (the leave
 * event's) wins, as in apitrace. */
void at_sort_blobs(struct at_state *state)
{
    g_array_sort(state->blobs, blob_order);
    guint kept = 0;
    for (guint i = 0; i < state->blobs->len; i++) {
        const struct at_blob *b = &g_array_index(state->blobs, struct at_blob, i);
        if (kept > 0 && compare_blob(&g_array_index(state->blobs, struct at_blob, kept - 1), b) == 0)
            kept--;
        g_array_index(state->blobs, struct at_blob, kept++) = *b;
    }
    g_array_set_size(state->blobs, kept);
}

/* ---- fixed files ---- */
static void add_names_json(GString *out, const char *key, char **names, uint32_t count)
{
    g_string_append_printf(out, "  \"%s\": [", key);
    for (uint32_t i = 0; i < count; i++) {
        if (i)
            g_string_append(out, ", ");
        text_json_cstring(out, names[i]);
    }
    g_string_append(out, "]\n}\n");
}

/* sigs/<kind>/<id>.json */
static void add_signature_file(struct trace *trace, node_id dir, uint64_t id, GString *text)
{
    char name[32];
    g_snprintf(name, sizeof name, "%" PRIu64 ".json", id);
    tree_add_string(trace->tree, dir, name, text);
}

/* An enum's values (signed) or a bitmask's flags (unsigned). */
static void add_named_values(struct trace *trace, node_id dir, const GPtrArray *list, gboolean is_enum)
{
    for (guint i = 0; i < list->len; i++) {
        const struct at_named_values *sig = list->pdata[i];
        GString *text = g_string_new(NULL);
        g_string_append_printf(text, "{\n  \"id\": %" PRIu64 ",\n  \"%s\": {", sig->id, is_enum ? "values" : "flags");
        for (uint32_t k = 0; k < sig->count; k++) {
            g_string_append(text, k ? ", " : "");
            text_json_cstring(text, sig->values[k].name);
            g_string_append(text, ": ");
            if (is_enum)
                text_append_i64(text, (int64_t)sig->values[k].value);
            else
                text_append_u64(text, sig->values[k].value);
        }
        g_string_append(text, "}\n}\n");
        add_signature_file(trace, dir, sig->id, text);
    }
}

static void add_signatures(struct trace *trace, struct at_state *state)
{
    node_id sigs = tree_add_dir(trace->tree, TREE_ROOT, "signatures");
    node_id functions = tree_add_dir(trace->tree, sigs, "functions");
    for (guint i = 0; i < state->functions->len; i++) {
        const struct at_function *f = state->functions->pdata[i];
        GString *text = g_string_new(NULL);
        g_string_append_printf(text, "{\n  \"id\": %" PRIu64 ",\n  \"name\": ", f->id);
        text_json_string(text, f->name, f->name_len);
        g_string_append_printf(text, ",\n  \"flags\": %u,\n  \"calls\": %" PRIu64 ",\n", f->flags, f->call_count);
        add_names_json(text, "args", f->arg_names, f->arg_count);
        add_signature_file(trace, functions, f->id, text);
    }
    add_named_values(trace, tree_add_dir(trace->tree, sigs, "enums"), state->enum_list, TRUE);
    add_named_values(trace, tree_add_dir(trace->tree, sigs, "bitmasks"), state->bitmask_list, FALSE);
    node_id structs = tree_add_dir(trace->tree, sigs, "structs");
    for (guint i = 0; i < state->struct_list->len; i++) {
        const struct at_struct *s = state->struct_list->pdata[i];
        GString *text = g_string_new(NULL);
        g_string_append_printf(text, "{\n  \"id\": %" PRIu64 ",\n  \"name\": ", s->id);
        text_json_cstring(text, s->name);
        g_string_append(text, ",\n");
        add_names_json(text, "members", s->member_names, s->count);
        add_signature_file(trace, structs, s->id, text);
    }
}

static void add_functions(struct trace *trace, struct at_state *state)
{
    node_id dir = tree_add_dir(trace->tree, TREE_ROOT, "functions");
    for (guint i = 0; i < state->functions->len; i++) {
        const struct at_function *f = state->functions->pdata[i];
        node_id fdir = tree_add_dir_len(trace->tree, dir, f->name, f->name_len);   /* a NUL in it is escaped */
        if (fdir == TREE_NO_NODE)
            return;
        struct view view = state_view(state, &at_function_calls_ops, f->index, 0);
        tree_add_view(trace->tree, fdir, "calls", &view);
        GString *count = g_string_new(NULL);
        g_string_printf(count, "%" PRIu64 "\n", f->call_count);
        tree_add_string(trace->tree, fdir, "count", count);
    }
}

static void add_threads(struct trace *trace, struct at_state *state)
{
    node_id dir = tree_add_dir(trace->tree, TREE_ROOT, "threads");
    for (guint i = 0; i < state->threads->len; i++) {
        uint32_t tid = g_array_index(state->threads, uint32_t, i);
        node_id tdir = tree_add_number_dir(trace->tree, dir, tid);
        uint64_t flags = AT_CALL_DUMP_VERBOSE | AT_LIST_THREAD | ((uint64_t)tid << 32);
        struct view view = state_view(state, &at_list_ops, flags, 0);
        tree_add_view(trace->tree, tdir, "events", &view);
    }
}

static void add_properties(struct trace *trace, struct at_state *state)
{
    GString *text = g_string_new("{");
    for (guint i = 0; i < state->properties->len; i++) {
        const struct at_property *p = state->properties->pdata[i];
        g_string_append(text, i ? ",\n  " : "\n  ");
        text_json_cstring(text, p->name);
        g_string_append(text, ": ");
        text_json_cstring(text, p->value);
    }
    g_string_append(text, state->properties->len ? "\n}\n" : "}\n");
    tree_add_string(trace->tree, TREE_ROOT, "properties.json", text);
}

static void add_info(struct trace *trace, struct at_state *state)
{
    trace_info_add_string(trace, "container", state->container);
    trace_info_add_number(trace, "version", state->version);
    trace_info_add_number(trace, "semantic_version", state->semantic_version);
    trace_info_add_string(trace, "api", state->api);
    trace_info_add_number(trace, "calls", state->call_count);
    trace_info_add_number(trace, "frames", state->frame_count);
    trace_info_add_number(trace, "threads", state->threads->len);
    trace_info_add_number(trace, "functions", state->functions->len);
    trace_info_add_number(trace, "blobs", state->blobs->len);
    trace_info_add_number(trace, "stream_bytes", stream_size(state->stream));
    trace_info_add_number(trace, "container_bytes", (uint64_t)trace->st.st_size);
    g_string_append_printf(trace->readme,
        "An apitrace trace (format version %" PRIu64 ", %s container, API %s): %" PRIu64
        " calls in %" PRIu64 " frames.\n"
        "events is `apitrace dump` (verbose calls hidden), events-verbose is `apitrace dump -v "
        "--thread-ids=yes`; calls appear when they return, as apitrace prints them.\n"
        "frames/<n> holds one frame's calls as events does, frames/<n>.json its call numbers; "
        "calls/<n>.json one call with typed arguments; threads/<tid>/events one thread's calls; "
        "functions/<name>/{calls,count}; signatures/; blobs/<call>.<arg> blob arguments; "
        "properties.json; apitrace-info.json `apitrace info TRACE`; raw/stream the decompressed stream.\n",
        state->version, state->container, state->api, state->call_count, state->frame_count);
}

void at_build_tree(struct trace *trace)
{
    struct at_state *state = trace->format_state;
    struct view view = state_view(state, &at_list_ops, AT_CALL_DUMP | AT_LIST_HEADER, 0);
    tree_add_view(trace->tree, TREE_ROOT, "events", &view);
    view = state_view(state, &at_list_ops, AT_CALL_DUMP_VERBOSE | AT_LIST_HEADER, 0);
    tree_add_view(trace->tree, TREE_ROOT, "events-verbose", &view);
    numbered_files_add(trace->tree, tree_add_dir(trace->tree, TREE_ROOT, "calls"), &calls_files, state,
                       state->call_count);
    numbered_files_add(trace->tree, tree_add_dir(trace->tree, TREE_ROOT, "frames"), &frames_files, state,
                       state->frame_count);
    struct family blobs = { .ops = &blobs_ops, .context = state };
    tree_add_family(trace->tree, tree_add_dir(trace->tree, TREE_ROOT, "blobs"), &blobs);
    add_threads(trace, state);
    add_functions(trace, state);
    add_signatures(trace, state);
    add_properties(trace, state);
    node_id raw = tree_add_dir(trace->tree, TREE_ROOT, "raw");
    view_init_stream_range(&view, state->stream, 0, stream_size(state->stream));
    tree_add_view(trace->tree, raw, "stream", &view);
    add_info(trace, state);
    at_add_tool_info(state);
}
