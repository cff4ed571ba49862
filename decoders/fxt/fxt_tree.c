/* The FXT tree: what the index pass found, laid out as directories. */
#include <inttypes.h>
#include <string.h>
#include "keyed_hash.h"
#include "fxt.h"
#include "numbered_files.h"
#include "text.h"
#include "trace.h"
#include "sorted_search.h"

static uint32_t name_of(GHashTable *names, uint64_t koid)
{
    return GPOINTER_TO_UINT(g_hash_table_lookup(names, &koid));
}

/* strings/<n>: every distinct string, numbered in first-seen order. */
static void strings_view(void *context, uint64_t n, unsigned kind, struct view *out)
{
    (void)kind;
    const struct fxt_state *state = context;
    view_init_bytes(out, g_ptr_array_index(state->pool, (guint)n));
}

static const struct numbered_files strings_files = { { "", NULL }, 0, strings_view };

static void add_thread_info(struct trace *trace, struct fxt_state *state, node_id dir, const struct fxt_thread *t)
{
    GString *json = g_string_new(NULL);
    g_string_append_printf(json, "{\n  \"pid\": %" PRIu64 ",\n  \"tid\": %" PRIu64 ",\n  \"name\": ", t->pid, t->tid);
    struct fxt_str name = fxt_pool_string(state, name_of(state->thread_names, t->tid));
    text_json_string(json, name.data, name.len);
    g_string_append(json, ",\n  \"process_name\": ");
    name = fxt_pool_string(state, name_of(state->process_names, t->pid));
    text_json_string(json, name.data, name.len);
    g_string_append_printf(json, ",\n  \"events\": %" PRIu64 ",\n  \"first_ts_ns\": %" PRIu64
                           ",\n  \"last_ts_ns\": %" PRIu64 "\n}\n", t->events, t->first_ns, t->last_ns);
    tree_add_string(trace->tree, dir, "info.json", json);
}

static void add_threads(struct trace *trace, struct fxt_state *state)
{
    node_id threads = tree_add_dir(trace->tree, TREE_ROOT, "threads");
    GHashTable *used = g_hash_table_new(keyed_hash_string, g_str_equal);
    for (guint i = 0; i < state->threads->len; i++) {
        struct fxt_thread *t = g_ptr_array_index(state->threads, i);
        t->dir_name = g_strdup_printf("%" PRIu64, t->tid);
        if (g_hash_table_contains(used, t->dir_name)) {
            g_free(t->dir_name);
            t->dir_name = g_strdup_printf("%" PRIu64 "-%" PRIu64, t->tid, t->pid);
        }
        g_hash_table_add(used, t->dir_name);
        node_id dir = tree_add_dir(trace->tree, threads, t->dir_name);
        fxt_add_lines(trace, dir, "events", FXT_FILTER_THREAD, i, FALSE);
        fxt_add_view(trace, dir, "spans", 5, &fxt_spans_ops, 0, i, 0);
        add_thread_info(trace, state, dir, t);
    }
    g_hash_table_destroy(used);
}

static void add_processes(struct trace *trace, struct fxt_state *state)
{
    node_id processes = tree_add_dir(trace->tree, TREE_ROOT, "processes");
    GHashTable *dirs = g_hash_table_new_full(keyed_hash_int64, g_int64_equal, g_free, NULL);
    /* Processes named by kernel objects, then those only seen in events. */
    GArray *pids = fxt_sorted_keys(state->process_names);
    for (guint i = 0; i < state->threads->len; i++)
        g_array_append_val(pids, ((struct fxt_thread *)g_ptr_array_index(state->threads, i))->pid);
    for (guint i = 0; i < pids->len; i++) {
        uint64_t pid = g_array_index(pids, uint64_t, i);
        if (g_hash_table_contains(dirs, &pid))
            continue;
        char name[24];
        g_snprintf(name, sizeof name, "%" PRIu64, pid);
        node_id dir = tree_add_dir(trace->tree, processes, name);
        g_hash_table_insert(dirs, g_memdup2(&pid, sizeof pid), GUINT_TO_POINTER(dir + 1));
        struct fxt_str pname = fxt_pool_string(state, name_of(state->process_names, pid));
        GString *text = g_string_new_len(pname.data, pname.len);
        g_string_append_c(text, '\n');
        tree_add_string(trace->tree, dir, "name", text);
        tree_add_dir(trace->tree, dir, "threads");
    }
    for (guint i = 0; i < state->threads->len; i++) {
        const struct fxt_thread *t = g_ptr_array_index(state->threads, i);
        node_id dir = GPOINTER_TO_UINT(g_hash_table_lookup(dirs, &t->pid)) - 1;
        char *target = g_strdup_printf("../../../threads/%s", t->dir_name);
        tree_add_symlink(trace->tree, tree_dir(trace->tree, dir, "threads"), t->dir_name, target);
        g_free(target);
    }
    g_array_free(pids, TRUE);
    g_hash_table_destroy(dirs);
}

static void add_provider_info(struct trace *trace, node_id dir, const struct fxt_provider *p)
{
    GString *json = g_string_new("{\n  \"id\": ");
    if (p->has_id)
        g_string_append_printf(json, "%u", p->id);
    else
        g_string_append(json, "null");
    g_string_append(json, ",\n  \"name\": ");
    text_json_string(json, p->name->str, p->name->len);
    g_string_append_printf(json, ",\n  \"events\": %" PRIu64 ",\n  \"ticks_per_second\": [", p->event_count);
    for (guint i = 0; i < p->ticks->len; i++)
        g_string_append_printf(json, "%s%" PRIu64, i ? ", " : "", g_array_index(p->ticks, struct fxt_reg, i).value);
    /* Provider event records: 0 = its buffer filled up, records were dropped. */
    g_string_append(json, "],\n  \"provider_events\": [");
    for (guint i = 0; i < p->provider_events->len; i++)
        g_string_append_printf(json, "%s%u", i ? ", " : "", g_array_index(p->provider_events, uint32_t, i));
    g_string_append(json, "]\n}\n");
    tree_add_string(trace->tree, dir, "info.json", json);
}

static void add_providers(struct trace *trace, struct fxt_state *state)
{
    node_id providers = tree_add_dir(trace->tree, TREE_ROOT, "providers");
    for (guint i = 0; i < state->providers->len; i++) {
        const struct fxt_provider *p = g_ptr_array_index(state->providers, i);
        if (!p->has_id && p->event_count == 0)
            continue;
        GString *name = g_string_new(p->has_id ? NULL : "none");
        if (p->has_id) {
            g_string_printf(name, "%u-", p->id);
            g_string_append_len(name, p->name->str, (gssize)p->name->len);   /* a NUL in it is escaped */
        }
        node_id dir = tree_add_dir_len(trace->tree, providers, name->str, name->len);
        g_string_free(name, TRUE);
        fxt_add_lines(trace, dir, "events", FXT_FILTER_PROVIDER, i, FALSE);
        fxt_add_lines(trace, dir, "events.jsonl", FXT_FILTER_PROVIDER, i, TRUE);
        add_provider_info(trace, dir, p);
    }
}

static void add_objects(struct trace *trace, const GArray *objects, const char *dir_name, gboolean kernel)
{
    node_id dir = tree_add_dir(trace->tree, TREE_ROOT, dir_name);
    for (guint i = 0; i < objects->len; i++) {
        const struct fxt_object *object = &g_array_index(objects, struct fxt_object, i);
        char name[40];
        g_snprintf(name, sizeof name, kernel ? "%" PRIu64 ".json" : "0x%" PRIx64 ".json", object->id);
        fxt_add_view(trace, dir, name, strlen(name), &fxt_object_ops, object->offset, 0, 0);
    }
}

static void add_blobs(struct trace *trace, struct fxt_state *state)
{
    node_id dir = tree_add_dir(trace->tree, TREE_ROOT, "blobs");
    for (guint i = 0; i < state->blobs->len; i++) {
        const struct fxt_blob *blob = g_ptr_array_index(state->blobs, i);
        struct fxt_str name = fxt_pool_string(state, blob->name_string);   /* a NUL in it is escaped */
        fxt_add_view(trace, dir, name.data, name.len, &fxt_blob_ops, i, 0, 0);
    }
}

static void add_counters(struct trace *trace, struct fxt_state *state)
{
    node_id dir = tree_add_dir(trace->tree, TREE_ROOT, "counters");
    for (guint i = 0; i < state->counters->len; i++) {
        const struct fxt_counter *counter = g_ptr_array_index(state->counters, i);
        struct fxt_str base = fxt_pool_string(state, counter->name_string);
        GString *name = g_string_new_len(base.data, (gssize)base.len);   /* a NUL in it is escaped */
        g_string_append_printf(name, ".%" PRIu64 ".csv", counter->id);
        fxt_add_view(trace, dir, name->str, name->len, &fxt_counter_ops, 0, i, 0);
        g_string_free(name, TRUE);
    }
}

static void add_cpus(struct trace *trace, struct fxt_state *state)
{
    node_id dir = tree_add_dir(trace->tree, TREE_ROOT, "cpus");
    GArray *cpus = g_array_new(FALSE, FALSE, sizeof(guint));
    GHashTableIter iter;
    gpointer key;
    g_hash_table_iter_init(&iter, state->cpus);
    while (g_hash_table_iter_next(&iter, &key, NULL)) {
        guint cpu = GPOINTER_TO_UINT(key) - 1;
        g_array_append_val(cpus, cpu);
    }
    g_array_sort(cpus, sorted_compare_u32);
    for (guint i = 0; i < cpus->len; i++) {
        guint cpu = g_array_index(cpus, guint, i);
        node_id cpu_dir = tree_add_number_dir(trace->tree, dir, cpu);
        fxt_add_lines(trace, cpu_dir, "switches", FXT_FILTER_CPU, cpu, FALSE);
    }
    g_array_free(cpus, TRUE);
}

static void add_info(struct trace *trace, struct fxt_state *state)
{
    static const char *const record_names[16] = {
        "metadata", "initialization", "string", "thread", "event", "blob", "userspace_object",
        "kernel_object", "scheduling", "log", "type_10", "type_11", "type_12", "type_13", "type_14", "large",
    };
    trace_info_add_string(trace, "byte_order", state->big_endian ? "big-endian" : "little-endian");
    GString *json = g_string_new("{");
    for (unsigned i = 0; i < FXT_EV_COUNT; i++)
        g_string_append_printf(json, "%s\"%s\": %" PRIu64, i ? ", " : "", fxt_event_type_name(i),
                               state->totals.events[i]);
    g_string_append_c(json, '}');
    trace_info_add_number(trace, "events", fxt_event_total(state));
    trace_info_add(trace, "event_types", json->str);
    g_string_assign(json, "{");
    for (unsigned i = 0; i < 16; i++)
        if (state->totals.records[i])
            g_string_append_printf(json, "%s\"%s\": %" PRIu64, json->len > 1 ? ", " : "", record_names[i],
                                   state->totals.records[i]);
    g_string_append_c(json, '}');
    trace_info_add(trace, "records", json->str);
    g_string_free(json, TRUE);
    trace_info_add_number(trace, "unknown_records_skipped", state->totals.unknown_records);
    trace_info_add_number(trace, "bad_records_skipped", state->totals.bad_records);
    trace_info_add_number(trace, "threads", state->threads->len);
    trace_info_add_number(trace, "strings", state->pool->len);
    trace_info_add_number(trace, "decoded_bytes", state->data_end);
    if (state->totals.have_time) {
        trace_info_add_number(trace, "first_ts_ns", state->totals.first_ns);
        trace_info_add_number(trace, "last_ts_ns", state->totals.last_ns);
    }
    trace_info_add_string(trace, "clock", FXT_CLOCK);
}

static void add_readme(struct trace *trace)
{
    g_string_append(trace->readme,
        "A Fuchsia trace (FXT).  events: every event record, one line each:\n"
        "  <ts_ns> <pid>/<tid> <type> <category>:<name> <dur=N|id=N|-> key=value...\n"
        "providers/<id>-<name>/events, events.jsonl: one provider's events (and as JSON).\n"
        "threads/<tid>/: events, events.jsonl, spans (<start_ns> <dur_ns> <depth> <category>:<name>),\n"
        "info.json.  processes/<pid>/: name, threads/.  strings/<n>: every distinct string.\n"
        "kobjects/<koid>.json, uobjects/<pointer>.json, logs, blobs/<name>, counters/<name>.<id>.csv,\n"
        "cpus/<n>/switches.\n");
}

void fxt_build_tree(struct trace *trace)
{
    struct fxt_state *state = trace->format_state;
    fxt_add_lines(trace, TREE_ROOT, "events", FXT_FILTER_EVENTS, 0, FALSE);
    fxt_add_lines(trace, TREE_ROOT, "logs", FXT_FILTER_LOGS, 0, FALSE);
    add_providers(trace, state);
    add_threads(trace, state);
    add_processes(trace, state);
    numbered_files_add(trace->tree, tree_add_dir(trace->tree, TREE_ROOT, "strings"), &strings_files, state,
                       state->pool->len);
    add_objects(trace, state->kobjects, "kobjects", TRUE);
    add_objects(trace, state->uobjects, "uobjects", FALSE);
    add_blobs(trace, state);
    add_counters(trace, state);
    add_cpus(trace, state);
    add_info(trace, state);
    add_readme(trace);
}
