/* The FXT side tables: interned strings and the registration logs that let
 * any record be decoded alone from its offset. */
#include "keyed_hash.h"
#include "fxt.h"
#include "sorted_search.h"
#include "trace.h"

static void provider_free(gpointer data)
{
    struct fxt_provider *provider = data;
    g_string_free(provider->name, TRUE);
    g_array_free(provider->ticks, TRUE);
    g_array_free(provider->provider_events, TRUE);
    g_free(provider);
}

static void thread_free(gpointer data)
{
    struct fxt_thread *thread = data;
    g_free(thread->dir_name);
    g_clear_pointer(&thread->runs, g_array_unref);
    g_clear_pointer(&thread->open_offsets, g_array_unref);
    g_free(thread);
}

static void counter_free(gpointer data)
{
    struct fxt_counter *counter = data;
    g_array_free(counter->columns, TRUE);
    g_free(counter);
}

static void blob_free(gpointer data)
{
    struct fxt_blob *blob = data;
    g_array_free(blob->segments, TRUE);
    g_free(blob);
}

struct fxt_state *fxt_state_new(struct trace *trace, struct stream *stream)
{
    static uint64_t generations;
    struct fxt_state *state = g_new0(struct fxt_state, 1);
    state->generation = __atomic_add_fetch(&generations, 1, __ATOMIC_RELAXED);
    state->trace = trace;
    state->stream = stream;
    state->pool = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    state->pool_ids = g_hash_table_new(keyed_hash_gbytes, g_bytes_equal);
    state->providers = g_ptr_array_new_with_free_func(provider_free);
    state->provider_slots = g_hash_table_new(g_direct_hash, g_direct_equal);
    state->provider_switches = g_array_new(FALSE, FALSE, sizeof(struct fxt_reg));
    state->string_regs = g_hash_table_new_full(keyed_hash_int64, g_int64_equal, g_free, (GDestroyNotify)g_array_unref);
    state->thread_regs = g_hash_table_new_full(keyed_hash_int64, g_int64_equal, g_free, (GDestroyNotify)g_array_unref);
    state->threads = g_ptr_array_new_with_free_func(thread_free);
    state->thread_by_koids = g_hash_table_new_full(keyed_hash_string, g_str_equal, g_free, NULL);
    state->counters = g_ptr_array_new_with_free_func(counter_free);
    state->counter_by_key = g_hash_table_new_full(keyed_hash_string, g_str_equal, g_free, NULL);
    state->blobs = g_ptr_array_new_with_free_func(blob_free);
    state->blob_by_name = g_hash_table_new(g_direct_hash, g_direct_equal);
    state->kobjects = g_array_new(FALSE, FALSE, sizeof(struct fxt_object));
    state->uobjects = g_array_new(FALSE, FALSE, sizeof(struct fxt_object));
    state->unmatched_ends = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    state->unended_begins = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    state->cpus = g_hash_table_new(g_direct_hash, g_direct_equal);
    state->process_names = g_hash_table_new_full(keyed_hash_int64, g_int64_equal, g_free, NULL);
    state->thread_names = g_hash_table_new_full(keyed_hash_int64, g_int64_equal, g_free, NULL);
    fxt_intern(state, "", 0);
    /* Slot 0: the provider of the records before any provider record,
     * apart from every real id, so in no table. */
    g_ptr_array_add(state->providers, fxt_provider_new(0, FALSE));
    return state;
}

void fxt_close(struct trace *trace)
{
    struct fxt_state *state = trace->format_state;
    if (!state)
        return;
    g_hash_table_destroy(state->pool_ids);
    g_ptr_array_free(state->pool, TRUE);
    g_ptr_array_free(state->providers, TRUE);
    g_hash_table_destroy(state->provider_slots);
    g_array_free(state->provider_switches, TRUE);
    g_hash_table_destroy(state->string_regs);
    g_hash_table_destroy(state->thread_regs);
    g_ptr_array_free(state->threads, TRUE);
    g_hash_table_destroy(state->thread_by_koids);
    g_ptr_array_free(state->counters, TRUE);
    g_hash_table_destroy(state->counter_by_key);
    g_ptr_array_free(state->blobs, TRUE);
    g_hash_table_destroy(state->blob_by_name);
    g_array_free(state->kobjects, TRUE);
    g_array_free(state->uobjects, TRUE);
    g_array_free(state->unmatched_ends, TRUE);
    g_array_free(state->unended_begins, TRUE);
    g_hash_table_destroy(state->cpus);
    g_hash_table_destroy(state->process_names);
    g_hash_table_destroy(state->thread_names);
    g_free(state);
}

uint32_t fxt_intern(struct fxt_state *state, const char *data, size_t len)
{
    GBytes *bytes = g_bytes_new(data, len);
    gpointer found = g_hash_table_lookup(state->pool_ids, bytes);
    if (found) {
        g_bytes_unref(bytes);
        return GPOINTER_TO_UINT(found) - 1;
    }
    uint32_t id = state->pool->len;
    state->table_bytes += len + FXT_KEPT_OVERHEAD;
    g_ptr_array_add(state->pool, bytes);
    g_hash_table_insert(state->pool_ids, bytes, GUINT_TO_POINTER(id + 1));
    return id;
}

struct fxt_str fxt_pool_string(const struct fxt_state *state, uint32_t id)
{
    struct fxt_str s = { "", 0 };
    if (id >= state->pool->len)
        return s;
    gsize len = 0;
    s.data = g_bytes_get_data(g_ptr_array_index(state->pool, id), &len);
    s.len = (uint32_t)len;
    if (!s.data)
        s.data = "";
    return s;
}

struct fxt_provider *fxt_provider_new(uint32_t id, gboolean has_id)
{
    struct fxt_provider *provider = g_new0(struct fxt_provider, 1);
    provider->id = id;
    provider->has_id = has_id;
    provider->name = g_string_new(NULL);
    provider->ticks = g_array_new(FALSE, FALSE, sizeof(struct fxt_reg));
    provider->provider_events = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    return provider;
}

uint32_t fxt_provider_slot(struct fxt_state *state, uint32_t id)
{
    gpointer key = GUINT_TO_POINTER(id + 1);
    gpointer found = g_hash_table_lookup(state->provider_slots, key);
    if (found)
        return GPOINTER_TO_UINT(found) - 1;
    uint32_t slot = state->providers->len;
    g_ptr_array_add(state->providers, fxt_provider_new(id, TRUE));
    g_hash_table_insert(state->provider_slots, key, GUINT_TO_POINTER(slot + 1));
    return slot;
}

GArray *fxt_reg_array(GHashTable *regs, uint64_t key)
{
    GArray *array = g_hash_table_lookup(regs, &key);
    if (array)
        return array;
    array = g_array_new(FALSE, FALSE, sizeof(struct fxt_reg));
    g_hash_table_insert(regs, g_memdup2(&key, sizeof key), array);
    return array;
}

/* The registration in force at `offset` (the last one before it). */
static const struct fxt_reg *fxt_reg_find(const GArray *regs, uint64_t offset)
{
    /* First registration at or after offset; the one before it holds. */
    size_t at = SORTED_BELOW(regs, struct fxt_reg, offset, offset);
    return at == 0 ? NULL : &g_array_index(regs, struct fxt_reg, at - 1);
}

/* A record names its strings and threads by index, and the next records
 * name the same few again: a thread's small direct-mapped memo of (table,
 * key) -> registrations, with the one found last, spares the hash lookup
 * and the binary search that were a fifth of rendering /events.  The
 * state's generation tells one trace's tables from a later one's at the
 * same address; arrays only grow while a state lives. */
#define REGS_MEMO_SLOTS 256
struct regs_memo_slot {
    uint64_t generation;     /* 0: empty */
    const GHashTable *table;
    uint64_t key;
    const GArray *array;
    guint found;             /* index of the registration found last */
};
static _Thread_local struct regs_memo_slot regs_memo[REGS_MEMO_SLOTS];

static gboolean reg_holds_at(const GArray *regs, guint i, uint64_t offset)
{
    const struct fxt_reg *items = (const struct fxt_reg *)regs->data;
    return i < regs->len && items[i].offset < offset && (i + 1 == regs->len || items[i + 1].offset >= offset);
}

const struct fxt_reg *fxt_regs_lookup(const struct fxt_state *state, GHashTable *regs, uint64_t key, uint64_t offset)
{
    struct regs_memo_slot *slot = &regs_memo[(key ^ (key >> 15) ^ (uintptr_t)regs >> 4) % REGS_MEMO_SLOTS];
    if (slot->generation != state->generation || slot->table != regs || slot->key != key) {
        const GArray *array = g_hash_table_lookup(regs, &key);
        if (!array)
            return NULL;
        *slot = (struct regs_memo_slot){ state->generation, regs, key, array, 0 };
    }
    if (reg_holds_at(slot->array, slot->found, offset))
        return &g_array_index(slot->array, struct fxt_reg, slot->found);
    const struct fxt_reg *reg = fxt_reg_find(slot->array, offset);
    if (reg)
        slot->found = (guint)(reg - (const struct fxt_reg *)slot->array->data);
    return reg;
}

uint32_t fxt_provider_at(const struct fxt_state *state, uint64_t offset)
{
    /* A provider record switches from its own offset on, itself included. */
    const struct fxt_reg *reg = fxt_reg_find(state->provider_switches, offset + 1);
    return reg ? (uint32_t)reg->value : UINT32_MAX;
}

uint64_t fxt_event_total(const struct fxt_state *state)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < FXT_EV_COUNT; i++)
        total += state->totals.events[i];
    return total;
}

uint64_t fxt_ticks_to_ns(const struct fxt_state *state, uint32_t slot, uint64_t offset, uint64_t ticks)
{
    if (slot >= state->providers->len)
        return ticks;
    const struct fxt_provider *provider = g_ptr_array_index(state->providers, slot);
    const struct fxt_reg *reg = fxt_reg_find(provider->ticks, offset);
    /* A provider without its own initialization record uses one written
     * before any provider record (slot 0, the trace-wide section). */
    if (!reg && slot != 0)
        reg = fxt_reg_find(((const struct fxt_provider *)g_ptr_array_index(state->providers, 0))->ticks, offset);
    if (!reg || reg->value == 0 || reg->value == 1000000000u)
        return ticks;
    unsigned __int128 ns = (unsigned __int128)ticks * 1000000000u / reg->value;
    return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

GArray *fxt_sorted_keys(GHashTable *table)
{
    GArray *keys = g_array_sized_new(FALSE, FALSE, sizeof(uint64_t), g_hash_table_size(table));
    GHashTableIter iter;
    gpointer key;
    g_hash_table_iter_init(&iter, table);
    while (g_hash_table_iter_next(&iter, &key, NULL))
        g_array_append_val(keys, *(uint64_t *)key);
    g_array_sort(keys, sorted_compare_u64);
    return keys;
}

GArray *fxt_run_starts(const struct fxt_state *state)
{
    GArray *starts = g_array_new(FALSE, FALSE, sizeof(struct fxt_reg));
    for (guint t = 0; t < state->threads->len; t++) {
        const struct fxt_thread *thread = g_ptr_array_index(state->threads, t);
        g_array_append_vals(starts, thread->runs->data, thread->runs->len);
    }
    g_array_sort(starts, sorted_compare_u64);   /* by offset, their first member */
    guint unique = 0;
    for (guint i = 0; i < starts->len; i++) {
        struct fxt_reg run = g_array_index(starts, struct fxt_reg, i);
        if (run.offset > state->data_start && run.offset < state->data_end &&
            (unique == 0 || run.offset > g_array_index(starts, struct fxt_reg, unique - 1).offset))
            g_array_index(starts, struct fxt_reg, unique++) = run;
    }
    g_array_set_size(starts, unique);
    return starts;
}
