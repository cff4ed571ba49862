/* XRay's common events (engine/trace_event.h): one per record, in the
 * order of events.yaml (the merge of xray_merge.c), seq = record number.
 *
 * Enters and exits are paired as llvm-xray account pairs them
 * (xray_call_step): an exit closes the innermost open frame of its
 * function.  Such an enter is a `begin` and its exit the `end`.  Every
 * other function record is an `instant` with `unmatched: true`, so begins
 * and ends balance on every thread: an exit that closes nothing, an enter
 * never exited, an enter cut (an exit of a function below it closed it
 * with its callee's frames), an enter past LIMIT_XRAY_STACK_DEPTH.
 *
 * Whether an enter is closed lies ahead of it.  The index pass's
 * checkpoints hold each thread's open calls and whether each completes
 * (struct xray_long_call); so the records of one checkpoint interval are
 * walked once from its checkpoint's stacks, and each gets one bit (paired
 * or not), kept per thread of the daemon for the interval being read.
 * Nothing per record outlives that.
 *
 * Cursor: word[0] = the next record's number; the merge resumes from the
 * checkpoint before it (as events.yaml does), so the common files are cut
 * where events is, at the merge's global checkpoints. */
#include <string.h>
#include "text.h"
#include "trace_event.h"
#include "tracefs_limits.h"
#include "xray_format.h"

#define FROM_CHECKPOINT UINT32_MAX   /* the slot xray_checkpoint_stack gives a frame */

/* The pairing of one checkpoint interval's records. */
struct interval_pairing {
    const struct xray_state *state;
    uint64_t serial;
    uint64_t k;               /* UINT64_MAX: none yet */
    uint64_t start, count;    /* its records */
    guint8 *unpaired;         /* one bit per record of the interval */
    struct call_stack *stacks;   /* per log thread; frames NULL before its first record */
    uint32_t stack_count;
};

/* The stacks are needed only while an interval is paired: each reader
 * thread keeps this cache, and a log with many threads would otherwise
 * hold a stack per log thread in every reader thread. */
static void pairing_free_stacks(struct interval_pairing *p)
{
    for (uint32_t t = 0; t < p->stack_count && p->stacks; t++)
        xray_call_stack_clear(&p->stacks[t]);
    g_free(p->stacks);
    p->stacks = NULL;
    p->stack_count = 0;
}

static void pairing_clear(struct interval_pairing *p)
{
    pairing_free_stacks(p);
    g_free(p->unpaired);
    *p = (struct interval_pairing){ .k = UINT64_MAX };
}

static void pairing_free(gpointer data)
{
    pairing_clear(data);
    g_free(data);
}

static GPrivate pairing_key = G_PRIVATE_INIT(pairing_free);

static void mark(struct interval_pairing *p, uint64_t index)
{
    if (index < p->count)
        p->unpaired[index / 8] |= (guint8)(1u << (index % 8));
}

/* The thread's stack as the checkpoint holds it, on its first record. */
static struct call_stack *stack_of(struct interval_pairing *p, uint32_t thread)
{
    struct call_stack *stack = &p->stacks[thread];
    if (!stack->frames) {
        xray_call_stack_init(stack);
        xray_call_stack_at_checkpoint(p->state, p->k, thread, stack);
    }
    return stack;
}

/* An enter before the interval was a begin exactly when its call
 * completes, so its exit is an end exactly then too. */
static void pair_record(struct interval_pairing *p, const struct xray_record *r, uint32_t index)
{
    struct call_stack *stack = stack_of(p, r->thread);
    GArray *frames = stack->frames;
    guint closed;
    switch (xray_call_step(stack, r, &closed)) {
    case CALL_PUSHED:
        g_array_index(frames, struct call_frame, frames->len - 1).slot = index;
        return;
    case CALL_REFUSED:
    case CALL_UNMATCHED:
        mark(p, index);
        return;
    case CALL_CLOSED: {
        for (guint d = closed + 1; d < frames->len; d++) {   /* cut */
            const struct call_frame *f = &g_array_index(frames, struct call_frame, d);
            if (f->slot != FROM_CHECKPOINT)
                mark(p, f->slot);
        }
        const struct call_frame *f = &g_array_index(frames, struct call_frame, closed);
        if (f->slot == FROM_CHECKPOINT && xray_long_call_end(p->state, f->long_call) == XRAY_CALL_OPEN)
            mark(p, index);
        xray_call_stack_truncate(stack, closed);
        return;
    }
    default:
        return;
    }
}

/* Enters still open at the interval's end: the next checkpoint's stack
 * (the same frames) says whether they complete. */
static void pair_open_calls(struct interval_pairing *p)
{
    GArray *next = g_array_new(FALSE, FALSE, sizeof(struct call_frame));
    for (uint32_t t = 0; t < p->stack_count; t++) {
        GArray *frames = p->stacks[t].frames;
        if (!frames)
            continue;
        xray_checkpoint_stack(p->state, p->k + 1, t, next);
        for (guint d = 0; d < frames->len; d++) {
            const struct call_frame *f = &g_array_index(frames, struct call_frame, d);
            if (f->slot == FROM_CHECKPOINT)
                continue;
            uint32_t l = d < next->len ? g_array_index(next, struct call_frame, d).long_call : UINT32_MAX;
            if (xray_long_call_end(p->state, l) == XRAY_CALL_OPEN)
                mark(p, f->slot);
        }
    }
    g_array_free(next, TRUE);
}

static gboolean pair_interval(struct interval_pairing *p, const struct xray_state *state, uint64_t k)
{
    pairing_clear(p);
    const GArray *at = state->checkpoint_ordinals;
    *p = (struct interval_pairing){ .state = state, .serial = state->serial, .k = k };
    p->start = g_array_index(at, guint64, k);
    uint64_t end = k + 1 < at->len ? g_array_index(at, guint64, k + 1) : state->records;
    p->count = end > p->start ? end - p->start : 0;
    p->unpaired = g_malloc0(p->count / 8 + 1);
    p->stack_count = state->threads->len;
    p->stacks = g_new0(struct call_stack, p->stack_count ? p->stack_count : 1);
    struct xray_merge *m = xray_merge_checkpoint(state, k);
    struct xray_record r;
    uint64_t i = 0;
    for (; i < p->count && xray_merge_next(m, &r, NULL); i++)
        if (r.thread < p->stack_count)
            pair_record(p, &r, (uint32_t)i);
    xray_merge_free(m);
    if (i < p->count) {
        pairing_free_stacks(p);
        p->k = UINT64_MAX;   /* the log changed: nothing cached */
        return FALSE;
    }
    pair_open_calls(p);
    pairing_free_stacks(p);
    return TRUE;
}

/* Whether record `ordinal` is paired (a begin or an end); FALSE in *ok when
 * its interval can no longer be read. */
static gboolean record_paired(const struct xray_state *state, uint64_t ordinal, gboolean *ok)
{
    struct interval_pairing *p = thread_value(&pairing_key, sizeof *p);   /* no state: nothing cached */
    *ok = TRUE;
    gboolean cached = p->state == state && p->serial == state->serial && p->k != UINT64_MAX;
    if (!cached || ordinal < p->start || ordinal - p->start >= p->count)
        *ok = pair_interval(p, state, xray_checkpoint_before(state, ordinal));
    if (!*ok || ordinal < p->start || ordinal - p->start >= p->count)
        return FALSE;
    uint64_t index = ordinal - p->start;
    return !(p->unpaired[index / 8] & (1u << (index % 8)));
}

/* ---- the events ---- */

/* The name the tree shows (functions/<name>): the symbol, else the id. */
static void set_function_name(const struct xray_state *state, uint32_t func_id, struct trace_event *event,
                              struct trace_event_scratch *scratch)
{
    const char *symbol = xray_symbols_name(state->symbols, (int32_t)func_id);
    if (symbol) {
        event->name = symbol;   /* the symbol table is immutable */
        event->name_len = strlen(symbol);
        return;
    }
    char id[20];
    trace_event_set_name(event, scratch, id, text_format_u64(id, func_id));
}

static void add_payload(const struct xray_state *state, const struct xray_record *r, struct trace_event *event,
                        struct trace_event_scratch *scratch)
{
    trace_event_add_uint(event, scratch, "size", 4, r->payload_size);
    if (r->kind == XRAY_TYPED)
        trace_event_add_uint(event, scratch, "type", 4, r->event_type);
    uint32_t shown = MIN(r->payload_size, LIMIT_XRAY_EVENT_DATA_ARG);
    char *bytes = g_malloc(shown ? shown : 1);
    if (stream_read_exact(state->stream, r->payload_offset, bytes, shown) == 0)
        trace_event_add_string(event, scratch, "data", 4, bytes, shown);
    else
        trace_event_add_null(event, scratch, "data", 4);
    g_free(bytes);
    if (shown < r->payload_size)
        trace_event_add_bool(event, scratch, "data_truncated", 14, TRUE);
}

static void fill_event(const struct xray_state *state, const struct xray_record *r, uint64_t seq, gboolean paired,
                       struct trace_event *event, struct trace_event_scratch *scratch)
{
    const struct xray_thread *thread = &g_array_index(state->threads, struct xray_thread, r->thread);
    gboolean function = r->kind != XRAY_CUSTOM && r->kind != XRAY_TYPED;
    gboolean enter = r->kind == XRAY_ENTER || r->kind == XRAY_ENTER_ARG;
    enum trace_event_kind kind = TRACE_EVENT_INSTANT;
    if (function && paired)
        kind = enter ? TRACE_EVENT_BEGIN : TRACE_EVENT_END;
    trace_event_start(event, seq, kind);
    event->has_ts = TRUE;
    event->ts = xray_tsc_ns(state, r->tsc) - xray_tsc_ns(state, MIN(state->first_tsc, r->tsc));
    event->pid = thread->pid;
    event->tid = thread->tid;
    const char *kind_name = xray_kind_name(r->kind);
    if (function) {
        event->cat = "function";
        event->cat_len = 8;
        set_function_name(state, r->func_id, event, scratch);
    } else {
        event->cat = r->kind == XRAY_CUSTOM ? "custom" : "typed";
        event->cat_len = strlen(event->cat);
        event->name = kind_name;
        event->name_len = strlen(kind_name);
    }
    trace_event_add_string(event, scratch, "kind", 4, kind_name, strlen(kind_name));
    if (function)
        trace_event_add_uint(event, scratch, "func_id", 7, r->func_id);
    trace_event_add_uint(event, scratch, "cpu", 3, r->cpu);
    trace_event_add_uint(event, scratch, "tsc", 3, r->tsc);
    if (r->has_arg)
        trace_event_add_uint(event, scratch, "arg", 3, r->arg);
    if (!function)
        add_payload(state, r, event, scratch);
    else if (!paired)
        trace_event_add_bool(event, scratch, "unmatched", 9, TRUE);
}

static enum view_step xray_events_next(struct trace *trace, struct view_cursor *cursor, struct trace_event *event,
                                       struct trace_event_scratch *scratch)
{
    const struct xray_state *state = trace->format_state;
    uint64_t seq = cursor->word[0];
    if (seq >= state->records)
        return VIEW_END;
    struct xray_record record;
    gboolean found = xray_merge_next(xray_merge_at(state, UINT32_MAX, seq, FALSE), &record, NULL);
    gboolean ok = FALSE;
    gboolean paired = found && record_paired(state, seq, &ok);
    if (!found || !ok || record.thread >= state->threads->len || !xray_decode_extra(state, &record)) {
        trace_error(trace, "log", found ? record.offset : 0, "record %llu no longer readable (events.jsonl)",
                    (unsigned long long)seq);
        return VIEW_ERROR;
    }
    fill_event(state, &record, seq, paired, event, scratch);
    cursor->word[0] = seq + 1;
    return VIEW_RECORD;
}

static uint32_t xray_event_cuts(struct trace *trace, struct view_cursor *cursors, uint32_t max)
{
    return xray_global_cut_points(trace->format_state, 0, cursors, max);
}

/* The directories threads/ has (xray_tree.c): the tid, "~2", "~3" for
 * the same tid in another process, in thread order. */
static void xray_threads(struct trace *trace, void (*fn)(void *, int64_t, int64_t, const char *), void *data)
{
    const struct xray_state *state = trace->format_state;
    GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint t = 0; t < state->threads->len; t++) {
        const struct xray_thread *thread = &g_array_index(state->threads, struct xray_thread, t);
        gpointer key = GINT_TO_POINTER(thread->tid);
        guint n = GPOINTER_TO_UINT(g_hash_table_lookup(seen, key)) + 1;
        g_hash_table_insert(seen, key, GUINT_TO_POINTER(n));
        char dir[32];
        if (n == 1)
            g_snprintf(dir, sizeof dir, "%d", thread->tid);
        else
            g_snprintf(dir, sizeof dir, "%d~%u", thread->tid, n);
        fn(data, thread->pid, thread->tid, dir);
    }
    g_hash_table_destroy(seen);
}

const struct trace_event_iterator xray_event_iterator = {
    .next = xray_events_next,
    .threads = xray_threads,
    .cuts = xray_event_cuts,
    .clock = "ns since the first record (TSC x 10^9 / the header's cycle frequency; args.tsc is the TSC)",
};
