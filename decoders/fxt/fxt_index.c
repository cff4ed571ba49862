/* The FXT index pass: one sequential read that records every registration
 * (providers, strings, threads, tick rates) by offset and gathers what the
 * tree lists (threads, counters, blobs, objects, cpus). */
#include <inttypes.h>
#include "fxt.h"
#include "trace.h"
#include "tracefs_limits.h"

/* The item of `items` whose index + 1 `by` holds under key, or NULL. */
static gpointer item_by(GHashTable *by, gconstpointer key, GPtrArray *items)
{
    gpointer found = g_hash_table_lookup(by, key);
    return found ? g_ptr_array_index(items, GPOINTER_TO_UINT(found) - 1) : NULL;
}

/* The thread of an event: events come in runs of one thread, so the one
 * found last is tried before the key is printed and hashed. */
static struct fxt_thread *thread_of(struct fxt_state *state, const struct fxt_record *rec, char key[48])
{
    struct fxt_thread *last = state->last_thread;
    if (last && last->pid == rec->pid && last->tid == rec->tid)
        return last;
    g_snprintf(key, 48, "%" PRIu64 "/%" PRIu64, rec->pid, rec->tid);
    return item_by(state->thread_by_koids, key, state->threads);
}

static void thread_seen(struct fxt_state *state, const struct fxt_record *rec)
{
    char key[48];
    struct fxt_thread *thread = thread_of(state, rec, key);
    if (!thread) {
        if (state->threads->len >= LIMIT_FXT_THREADS)
            return;
        thread = g_new0(struct fxt_thread, 1);
        thread->pid = rec->pid;
        thread->tid = rec->tid;
        thread->first_ns = rec->ts_ns;
        thread->runs = g_array_new(FALSE, FALSE, sizeof(struct fxt_reg));
        g_ptr_array_add(state->threads, thread);
        g_hash_table_insert(state->thread_by_koids, g_strdup(key), GUINT_TO_POINTER(state->threads->len));
        state->table_bytes += LIMIT_FXT_THREAD_BYTES;
    }
    state->last_thread = thread;
    thread->events++;
    fxt_note_span_event(state, thread, rec);
    struct fxt_reg *last = thread->runs->len ? &g_array_index(thread->runs, struct fxt_reg, thread->runs->len - 1) : NULL;
    if (last && rec->offset - last->value <= FXT_THREAD_RUN_GAP && thread->run_events < FXT_THREAD_RUN_EVENTS) {
        last->value = rec->offset;
        thread->run_events++;
    } else {
        /* Its seq: the common events before it (its own is already counted). */
        uint64_t seq = fxt_event_total(state) - (rec->event_type < FXT_EV_COUNT ? 1 : 0);
        struct fxt_reg run = { rec->offset, rec->offset, seq };
        g_array_append_val(thread->runs, run);
        state->table_bytes += sizeof run;
        thread->run_events = 1;
    }
    thread->first_ns = MIN(thread->first_ns, rec->ts_ns);
    thread->last_ns = MAX(thread->last_ns, rec->ts_ns);
}

static void counter_seen(struct fxt_state *state, const struct fxt_record *rec)
{
    uint32_t name = fxt_intern(state, rec->name.data, rec->name.len);
    char key[48];
    g_snprintf(key, sizeof key, "%u/%" PRIu64, name, rec->extra);
    struct fxt_counter *counter = item_by(state->counter_by_key, key, state->counters);
    if (!counter) {
        if (state->counters->len >= LIMIT_FXT_COUNTERS)
            return;
        counter = g_new0(struct fxt_counter, 1);
        counter->name_string = name;
        counter->id = rec->extra;
        counter->columns = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        g_ptr_array_add(state->counters, counter);
        g_hash_table_insert(state->counter_by_key, g_strdup(key), GUINT_TO_POINTER(state->counters->len));
        state->table_bytes += sizeof *counter + sizeof key + 2 * FXT_KEPT_OVERHEAD;
    }
    for (uint32_t i = 0; i < rec->arg_count; i++) {
        uint32_t column = fxt_intern(state, rec->args[i].name.data, rec->args[i].name.len);
        gboolean known = FALSE;
        for (guint c = 0; c < counter->columns->len && !known; c++)
            known = g_array_index(counter->columns, uint32_t, c) == column;
        if (!known && counter->columns->len < LIMIT_FXT_COUNTER_COLUMNS) {
            g_array_append_val(counter->columns, column);
            state->table_bytes += sizeof column;
        }
    }
}

static void event_seen(struct fxt_state *state, const struct fxt_record *rec)
{
    if (rec->event_type < FXT_EV_COUNT)
        state->totals.events[rec->event_type]++;
    ((struct fxt_provider *)g_ptr_array_index(state->providers, rec->provider))->event_count++;
    thread_seen(state, rec);
    if (rec->event_type == FXT_EV_COUNTER)
        counter_seen(state, rec);
    if (!state->totals.have_time || rec->ts_ns < state->totals.first_ns)
        state->totals.first_ns = rec->ts_ns;
    if (!state->totals.have_time || rec->ts_ns > state->totals.last_ns)
        state->totals.last_ns = rec->ts_ns;
    state->totals.have_time = TRUE;
}

static void blob_seen(struct fxt_state *state, const struct fxt_record *rec)
{
    uint32_t name = fxt_intern(state, rec->name.data, rec->name.len);
    struct fxt_blob *blob = item_by(state->blob_by_name, GUINT_TO_POINTER(name + 1), state->blobs);
    if (!blob) {
        blob = g_new0(struct fxt_blob, 1);
        blob->name_string = name;
        blob->segments = g_array_new(FALSE, FALSE, sizeof(struct fxt_reg));
        g_ptr_array_add(state->blobs, blob);
        g_hash_table_insert(state->blob_by_name, GUINT_TO_POINTER(name + 1), GUINT_TO_POINTER(state->blobs->len));
        state->table_bytes += sizeof *blob + 2 * FXT_KEPT_OVERHEAD;
    }
    if (rec->payload_len == 0)
        return;
    struct fxt_reg segment = { rec->offset + rec->payload_offset, rec->payload_len, blob->size };
    g_array_append_val(blob->segments, segment);
    state->table_bytes += sizeof segment;
    blob->size += rec->payload_len;
}

/* Appends a registration to `regs` unless the one in force already says
 * the same: a trace that registers its strings again (every buffer, every
 * copy) then keeps one entry per distinct value, not one per record. */
static void keep_reg(struct fxt_state *state, GArray *regs, uint64_t offset, uint64_t value, uint64_t value2)
{
    if (regs->len) {
        const struct fxt_reg *last = &g_array_index(regs, struct fxt_reg, regs->len - 1);
        if (last->value == value && last->value2 == value2)
            return;
    }
    struct fxt_reg reg = { offset, value, value2 };
    g_array_append_val(regs, reg);
    state->table_bytes += sizeof reg;
}

static void switch_provider(struct fxt_state *state, const struct fxt_record *rec, gboolean set_name)
{
    if (state->providers->len >= LIMIT_FXT_PROVIDERS
        && !g_hash_table_contains(state->provider_slots, GUINT_TO_POINTER((uint32_t)rec->extra + 1))) {
        trace_error(state->trace, "fxt", rec->offset, "more than %u providers: provider %" PRIu64 " ignored",
                    LIMIT_FXT_PROVIDERS, rec->extra);
        return;
    }
    uint32_t slot = fxt_provider_slot(state, (uint32_t)rec->extra);
    if (set_name) {
        struct fxt_provider *provider = g_ptr_array_index(state->providers, slot);
        g_string_truncate(provider->name, 0);
        g_string_append_len(provider->name, rec->name.data, (gssize)rec->name.len);
    }
    keep_reg(state, state->provider_switches, rec->offset, slot, 0);
    state->current_provider = slot;
}

static void metadata_seen(struct fxt_state *state, const struct fxt_record *rec)
{
    switch (rec->sub_type) {
    case 1: switch_provider(state, rec, TRUE); break;
    case 2: switch_provider(state, rec, FALSE); break;
    case 3: {
        struct fxt_provider *provider =
            item_by(state->provider_slots, GUINT_TO_POINTER((uint32_t)rec->extra + 1), state->providers);
        if (provider && provider->provider_events->len < LIMIT_FXT_PROVIDER_EVENTS) {
            uint32_t event = rec->cpu;
            g_array_append_val(provider->provider_events, event);
            state->table_bytes += sizeof event;
        }
        break;
    }
    case 4:
        if (rec->cpu == 0 && rec->extra != 0x16547846)
            trace_error(state->trace, "fxt", rec->offset, "magic number record with a wrong magic");
        break;
    default: break;
    }
}

/* Objects past the file limit get no file, so their offsets are not kept. */
static void object_seen(struct fxt_state *state, GArray *objects, const struct fxt_record *rec)
{
    if (objects->len < LIMIT_FXT_OBJECT_FILES) {
        struct fxt_object object = { rec->offset, rec->extra };
        g_array_append_val(objects, object);
        state->table_bytes += sizeof object;
    } else if (!state->objects_capped) {
        state->objects_capped = TRUE;
        trace_error(state->trace, "fxt", rec->offset, "more than %u object records of one kind: no files for the rest",
                    LIMIT_FXT_OBJECT_FILES);
    }
}

static void kobject_seen(struct fxt_state *state, const struct fxt_record *rec)
{
    object_seen(state, state->kobjects, rec);
    GHashTable *names = rec->sub_type == 1 ? state->process_names : rec->sub_type == 2 ? state->thread_names : NULL;
    if (!names)
        return;
    state->table_bytes += sizeof rec->extra + FXT_KEPT_OVERHEAD;
    uint32_t name = fxt_intern(state, rec->name.data, rec->name.len);
    g_hash_table_replace(names, g_memdup2(&rec->extra, sizeof rec->extra), GUINT_TO_POINTER(name));
}

static void record_seen(struct fxt_state *state, const struct fxt_record *rec)
{
    uint64_t slot = state->current_provider;   /* the provider in force */
    state->totals.records[rec->type & 15]++;
    if (rec->unknown) {
        state->totals.unknown_records++;
        return;
    }
    switch (rec->type) {
    case FXT_METADATA: metadata_seen(state, rec); break;
    case FXT_INIT: {
        struct fxt_provider *provider = g_ptr_array_index(state->providers, slot);
        keep_reg(state, provider->ticks, rec->offset, rec->extra, 0);
        if (rec->extra == 0)
            trace_error(state->trace, "fxt", rec->offset, "initialization record with 0 ticks per second: 1 tick = 1 ns");
        break;
    }
    case FXT_STRING:
        if (rec->extra != 0)
            keep_reg(state, fxt_reg_array(state->string_regs, (slot << 15) | rec->extra), rec->offset,
                     fxt_intern(state, rec->name.data, rec->name.len), 0);
        break;
    case FXT_THREAD:
        if (rec->extra != 0)
            keep_reg(state, fxt_reg_array(state->thread_regs, (slot << 8) | rec->extra), rec->offset, rec->pid, rec->tid);
        break;
    case FXT_EVENT: event_seen(state, rec); break;
    case FXT_BLOB: blob_seen(state, rec); break;
    case FXT_UOBJECT: object_seen(state, state->uobjects, rec); break;
    case FXT_KOBJECT: kobject_seen(state, rec); break;
    case FXT_SCHED: g_hash_table_add(state->cpus, GUINT_TO_POINTER(rec->cpu + 1)); break;
    default: break;
    }
}

static void scan(struct fxt_state *state)
{
    struct fxt_reader *reader = g_new(struct fxt_reader, 1);
    const struct fxt_record *rec = &reader->record;
    uint64_t offset = state->data_start;
    uint64_t budget = limit_table_budget((uint64_t)state->trace->st.st_size);
    fxt_reader_open(reader, state);
    for (;;) {
        enum fxt_read_result res = fxt_read_record(reader, offset, FALSE);
        if (res == FXT_READ_END)
            break;
        if (res == FXT_READ_BAD_HEADER) {
            trace_error(state->trace, "fxt", offset, "%s: the records after it cannot be found", reader->why);
            state->data_end = offset;
            break;
        }
        if (res == FXT_READ_BAD_BODY) {
            trace_error(state->trace, "fxt", offset, "record type %u skipped: %s", rec->type, reader->why);
            state->totals.bad_records++;
        } else {
            if (rec->warning)
                trace_error(state->trace, "fxt", offset, "%s", rec->warning);
            record_seen(state, rec);
        }
        offset = reader->next;
        if (state->table_bytes > budget) {
            trace_error(state->trace, "fxt", offset, "the index's tables reach their budget of %" PRIu64 " bytes "
                        "(%u MiB + 1/%u of the file's size): the records from here on are not shown", budget,
                        LIMIT_TABLE_FLOOR_BYTES >> 20, LIMIT_TABLE_FILE_DIVISOR);
            state->data_end = offset;
            break;
        }
    }
    fxt_reader_close(reader);
    g_free(reader);
}

int fxt_index(struct trace *trace)
{
    struct stream *stream = trace_file_stream(trace);
    if (!stream) {
        trace_fail(trace, "cannot read the trace file");
        return -1;
    }
    struct fxt_state *state = fxt_state_new(trace, stream);
    trace->format_state = state;
    state->data_end = stream_size(stream);
    uint8_t head[8];
    if (stream_read_exact(stream, 0, head, sizeof head) != 0) {
        trace_fail(trace, "too short for an FXT trace (%" PRIu64 " bytes)", state->data_end);
        return -1;
    }
    if (load_le64(head) != FXT_MAGIC_WORD && load_be64(head) == FXT_MAGIC_WORD)
        state->big_endian = TRUE;
    else if (load_le64(head) != FXT_MAGIC_WORD)
        trace_error(trace, "fxt", 0, "no FXT magic number record at the start");
    /* Records before any provider record belong to the anonymous provider,
     * slot 0 (its switch is in every index: the budget leaves it out). */
    struct fxt_reg anonymous = { 0, 0, 0 };
    g_array_append_val(state->provider_switches, anonymous);
    scan(state);
    fxt_finish_spans(state);
    return 0;
}
