/* The tree of an XRay log, built after the index pass. */
#include <inttypes.h>
#include "numbered_files.h"
#include "xray_format.h"

static void add_record_view(struct xray_state *state, node_id dir, const char *name, const struct view_ops *ops,
                            uint64_t a0, uint64_t a1, uint64_t a2)
{
    struct view view = { .ops = ops, .context = state, .arg = { a0, a1, a2 } };
    tree_add_view(state->trace->tree, dir, name, &view);
}

static void add_threads(struct xray_state *state)
{
    struct tree *tree = state->trace->tree;
    node_id threads = tree_dir(tree, TREE_ROOT, "threads");
    for (guint t = 0; t < state->threads->len; t++) {
        const struct xray_thread *thread = &g_array_index(state->threads, struct xray_thread, t);
        node_id dir = tree_add_number_dir(tree, threads, thread->tid);   /* same tid in two processes gets "~2" */
        add_record_view(state, dir, "events", &xray_events_ops, t, 0, 0);
        add_record_view(state, dir, "calls", &xray_thread_calls_ops, t, 0, 0);
        add_record_view(state, dir, "stack", &xray_thread_calls_ops, t, 0, 1);
        GString *info = g_string_new(NULL);
        g_string_append_printf(info, "{\"tid\": %" PRId32 ", \"pid\": %" PRId32 ", \"records\": %" PRIu64
                               ", \"calls\": %" PRIu64 ", \"first_ns\": %" PRIu64 ", \"last_ns\": %" PRIu64 "}\n",
                               thread->tid, thread->pid, thread->records, thread->calls,
                               xray_tsc_ns(state, thread->first_tsc), xray_tsc_ns(state, thread->last_tsc));
        tree_add_string(tree, dir, "info.json", info);
    }
}

/* functions/account.csv: the layout of llvm-xray account --format=csv --sort=funcid. */
static void append_account_row(const struct xray_state *state, GString *out, const struct xray_function_stats *s)
{
    g_string_append_printf(out, "%" PRId32 ",%" PRIu64 ",%e,%e,%e,%e,%e,%e,\"<invalid>:0:0\",\"",
                           (int32_t)s->func_id, s->count, s->min, s->median, s->p90, s->p99, s->max, s->sum);
    xray_function_label(state, s->func_id, out);
    g_string_append(out, "\"\n");
}

static void add_functions(struct xray_state *state)
{
    struct tree *tree = state->trace->tree;
    node_id functions = tree_dir(tree, TREE_ROOT, "functions");
    GString *csv = g_string_new("funcid,count,min,median,90%ile,99%ile,max,sum,debug,function\n");
    for (guint i = 0; i < state->functions->len; i++) {
        const struct xray_function_stats *s = &g_array_index(state->functions, struct xray_function_stats, i);
        const char *symbol = xray_symbols_name(state->symbols, (int32_t)s->func_id);
        char id[16];
        g_snprintf(id, sizeof id, "%" PRIu32, s->func_id);
        node_id dir = tree_add_dir(tree, functions, symbol ? symbol : id);
        GString *stats = g_string_new(NULL);
        g_string_append_printf(stats, "id %s\ncount %" PRIu64 "\nmin %e\nmedian %e\np90 %e\np99 %e\nmax %e\nsum %e\n",
                               id, s->count, s->min, s->median, s->p90, s->p99, s->max, s->sum);
        tree_add_string(tree, dir, "stats", stats);
        add_record_view(state, dir, "calls", &xray_function_calls_ops, i, 0, 0);
        append_account_row(state, csv, s);
    }
    tree_add_string(tree, functions, "account.csv", csv);
}

/* customevents/<n> and typedevents/<n>: payload bytes, numbered files (no node per event). */
static void payload_view(const struct xray_state *state, enum xray_kind kind, uint64_t n, struct view *out)
{
    const GArray *events = kind == XRAY_CUSTOM ? state->custom_events : state->typed_events;
    struct xray_record record = { 0 };
    if (n < events->len) {
        record.kind = kind;
        record.offset = g_array_index(events, guint64, n);
        if (!xray_decode_extra(state, &record))
            record.payload_size = 0;
    }
    view_init_stream_range(out, state->stream, record.payload_offset, record.payload_size);
}

static void custom_view(void *context, uint64_t n, unsigned kind, struct view *out)
{
    (void)kind;
    payload_view(context, XRAY_CUSTOM, n, out);
}

static void typed_view(void *context, uint64_t n, unsigned kind, struct view *out)
{
    (void)kind;
    payload_view(context, XRAY_TYPED, n, out);
}

static const struct numbered_files custom_files = { { "", NULL }, 0, custom_view };
static const struct numbered_files typed_files = { { "", NULL }, 0, typed_view };

static void add_events_family(struct xray_state *state, const char *name, const struct numbered_files *files,
                              GArray *events)
{
    if (!events->len)
        return;
    node_id dir = tree_dir(state->trace->tree, TREE_ROOT, name);
    numbered_files_add(state->trace->tree, dir, files, state, events->len);
}

static void add_info(struct xray_state *state)
{
    struct trace *trace = state->trace;
    const struct xray_header *h = &state->header;
    trace_info_add_number(trace, "version", h->version);
    trace_info_add_string(trace, "log_type", h->type == 0 ? "basic" : "fdr");
    trace_info_add(trace, "constant_tsc", (h->bitfield & 1) ? "true" : "false");
    trace_info_add(trace, "nonstop_tsc", (h->bitfield & 2) ? "true" : "false");
    trace_info_add_number(trace, "cycle_frequency", h->cycle_frequency);
    if (h->type == 1)
        trace_info_add_number(trace, "buffer_size", h->buffer_size);
    trace_info_add_number(trace, "records", state->records);
    trace_info_add_number(trace, "threads", state->threads->len);
    trace_info_add_number(trace, "calls", state->calls);
    trace_info_add_number(trace, "custom_events", state->custom_events->len);
    trace_info_add_number(trace, "typed_events", state->typed_events->len);
    trace_info_add_number(trace, "unmatched_frames", state->unmatched_exits);
    trace_info_add(trace, "symbolized", state->symbols ? "true" : "false");
    if (state->records) {
        trace_info_add_number(trace, "first_tsc", state->first_tsc);
        trace_info_add_number(trace, "last_tsc", state->last_tsc);
        trace_info_add_number(trace, "span_ns", xray_tsc_ns(state, state->last_tsc) - xray_tsc_ns(state, state->first_tsc));
    }
}

void xray_build_tree(struct trace *trace)
{
    struct xray_state *state = trace->format_state;
    struct tree *tree = trace->tree;
    xray_prepare_thread_labels(state);
    add_record_view(state, TREE_ROOT, "events.yaml", &xray_yaml_ops, 0, 0, 0);
    add_record_view(state, TREE_ROOT, "events", &xray_events_ops, UINT32_MAX, 0, 0);
    add_threads(state);
    add_functions(state);
    add_record_view(state, tree_dir(tree, TREE_ROOT, "export"), "llvm-xray-trace_event.json", &xray_trace_event_ops, 0, 0, 0);
    add_events_family(state, "customevents", &custom_files, state->custom_events);
    add_events_family(state, "typedevents", &typed_files, state->typed_events);
    add_info(state);
    /* The binary changes every name shown: a node for it also keeps a saved
     * index made without it (or with another layout) from being reused. */
    if (state->symbols && state->binary_path)
        tree_add_symlink(tree, TREE_ROOT, "binary", state->binary_path);
    g_string_append(state->trace->readme,
        "An LLVM XRay log.  events.yaml is `llvm-xray convert --output-format=yaml` (with --symbolize\n"
        "when the binary is known: -o xray_binary=PATH); events lists every record in time order\n"
        "(ns tid cpu kind func-id tsc= [arg=] fn=name); threads/<tid>/ has events, calls\n"
        "(start_ns duration_ns depth func-id [arg=] fn=name) and stack (the calls indented by depth);\n"
        "functions/<name>/ has stats (seconds, as llvm-xray account) and calls; functions/account.csv\n"
        "is llvm-xray account's CSV; export/llvm-xray-trace_event.json is `llvm-xray convert\n"
        "--output-format=trace_event` (export/chrome.json is the common export of events.jsonl);\n"
        "customevents/ and typedevents/ the event payloads; binary links to the binary the names\n"
        "come from.\n");
}
