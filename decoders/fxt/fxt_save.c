/* The persistent index of an FXT trace: the side tables of the index pass,
 * saved so a second mount needs no scan.  The bytes come from a
 * checksummed file but are checked like trace data: every count against
 * the bytes left and its limit, every index against its table, every
 * offset against the trace's size. */
#include <string.h>
#include "fxt.h"
#include "saved_bytes.h"
#include "trace.h"
#include "tracefs_limits.h"

/* get_regs' value_bound when the values name no table. */
#define ANY_VALUE 0
/* A uint64 count or field of the layout: the least an item can take. */
#define WORD 8u

/* ---- writing ---- */

static void put_pool(struct saved_writer *out, const struct fxt_state *s)
{
    saved_put_u64(out, s->pool->len);
    for (guint i = 0; i < s->pool->len; i++) {
        struct fxt_str str = fxt_pool_string(s, i);
        saved_put_bytes(out, str.data, str.len);
    }
}

static void put_providers(struct saved_writer *out, const struct fxt_state *s)
{
    saved_put_u64(out, s->providers->len);
    for (guint i = 0; i < s->providers->len; i++) {
        const struct fxt_provider *p = g_ptr_array_index(s->providers, i);
        saved_put_u64(out, p->id);
        saved_put_u64(out, p->has_id);
        saved_put_gstring(out, p->name);
        saved_put_u64(out, p->event_count);
        saved_put_array(out, p->ticks);
        saved_put_u32_array(out, p->provider_events);
    }
}

/* A table of uint64 keys, in key order: each key, then its registrations
 * (an array) or its pool id (names). */
static void put_keyed(struct saved_writer *out, GHashTable *table, gboolean arrays)
{
    GArray *keys = fxt_sorted_keys(table);
    saved_put_u64(out, keys->len);
    for (guint i = 0; i < keys->len; i++) {
        uint64_t key = g_array_index(keys, uint64_t, i);
        gpointer value = g_hash_table_lookup(table, &key);
        saved_put_u64(out, key);
        if (arrays)
            saved_put_array(out, value);
        else
            saved_put_u64(out, GPOINTER_TO_UINT(value));
    }
    g_array_unref(keys);
}

static void put_threads(struct saved_writer *out, const struct fxt_state *s)
{
    saved_put_u64(out, s->threads->len);
    for (guint i = 0; i < s->threads->len; i++) {
        const struct fxt_thread *t = g_ptr_array_index(s->threads, i);
        saved_put_u64(out, t->pid);
        saved_put_u64(out, t->tid);
        saved_put_u64(out, t->events);
        saved_put_u64(out, t->first_ns);
        saved_put_u64(out, t->last_ns);
        saved_put_array(out, t->runs);
    }
}

static void put_counters(struct saved_writer *out, const struct fxt_state *s)
{
    saved_put_u64(out, s->counters->len);
    for (guint i = 0; i < s->counters->len; i++) {
        const struct fxt_counter *c = g_ptr_array_index(s->counters, i);
        saved_put_u64(out, c->name_string);
        saved_put_u64(out, c->id);
        saved_put_u32_array(out, c->columns);
    }
}

static void put_blobs(struct saved_writer *out, const struct fxt_state *s)
{
    saved_put_u64(out, s->blobs->len);
    for (guint i = 0; i < s->blobs->len; i++) {
        const struct fxt_blob *b = g_ptr_array_index(s->blobs, i);
        saved_put_u64(out, b->name_string);
        saved_put_array(out, b->segments);
    }
}

static void put_cpus(struct saved_writer *out, GHashTable *cpus)
{
    saved_put_u64(out, g_hash_table_size(cpus));
    GHashTableIter iter;
    gpointer key;
    g_hash_table_iter_init(&iter, cpus);
    while (g_hash_table_iter_next(&iter, &key, NULL))
        saved_put_u64(out, GPOINTER_TO_UINT(key));
}

int fxt_save(struct trace *trace, struct saved_writer *out)
{
    const struct fxt_state *s = trace->format_state;
    saved_put_u64(out, s->big_endian);
    saved_put_u64(out, s->data_start);
    saved_put_u64(out, s->data_end);
    put_pool(out, s);
    put_providers(out, s);
    saved_put_array(out, s->provider_switches);
    put_keyed(out, s->string_regs, TRUE);
    put_keyed(out, s->thread_regs, TRUE);
    put_threads(out, s);
    put_counters(out, s);
    put_blobs(out, s);
    saved_put_array(out, s->kobjects);
    saved_put_array(out, s->uobjects);
    put_cpus(out, s->cpus);
    put_keyed(out, s->process_names, FALSE);
    put_keyed(out, s->thread_names, FALSE);
    saved_put(out, &s->totals, sizeof s->totals);
    saved_put_array(out, s->unmatched_ends);
    saved_put_array(out, s->unended_begins);
    return 0;
}

/* ---- reading ---- */

/* Registrations whose offsets lie below offset_bound and whose values, unless
 * value_bound is ANY_VALUE, index a table of value_bound entries. */
static void get_regs(struct saved_reader *r, GArray *regs, uint64_t offset_bound, uint64_t value_bound)
{
    if (!saved_get_array(r, regs, UINT32_MAX))
        return;
    for (guint i = 0; i < regs->len; i++) {
        const struct fxt_reg *reg = &g_array_index(regs, struct fxt_reg, i);
        if (reg->offset >= offset_bound || (value_bound != ANY_VALUE && reg->value >= value_bound))
            r->bad = TRUE;
    }
}

/* Pool ids (uint32), each naming a string of the pool. */
static void get_pool_ids(struct saved_reader *r, const struct fxt_state *s, GArray *ids, uint64_t max_count)
{
    if (!saved_get_u32_array(r, ids, max_count))
        return;
    for (guint i = 0; i < ids->len; i++)
        if (g_array_index(ids, uint32_t, i) >= s->pool->len)
            r->bad = TRUE;
}

/* The new state already holds string 0, "", as the saved pool does; the
 * pool holds distinct strings, so each must intern as the next id. */
static void get_pool(struct saved_reader *r, struct fxt_state *s)
{
    uint64_t strings = saved_get_count(r, WORD, UINT32_MAX);
    for (uint64_t i = 0; i < strings && !r->bad; i++) {
        size_t length;
        const char *bytes = saved_get_bytes(r, FXT_RECORD_MAX_BYTES, &length);
        if (!r->bad && fxt_intern(s, bytes, length) != i)
            r->bad = TRUE;
    }
}

/* Only the first provider is the anonymous one (id 0, slot 0 of every
 * state), and no id comes twice. */
static gboolean provider_fits(const struct fxt_state *s, uint32_t id, gboolean has_id, gboolean first)
{
    if (has_id == first)
        return FALSE;
    return has_id ? !g_hash_table_contains(s->provider_slots, GUINT_TO_POINTER(id + 1)) : id == 0;
}

static void get_provider(struct saved_reader *r, struct fxt_state *s, gboolean first)
{
    uint32_t id = (uint32_t)saved_get_below(r, (uint64_t)UINT32_MAX + 1);
    gboolean has_id = saved_get_u64(r) != 0;
    GString *name = saved_get_gstring(r, FXT_RECORD_MAX_BYTES);
    if (r->bad || !name || !provider_fits(s, id, has_id, first)) {
        if (name)
            g_string_free(name, TRUE);
        r->bad = TRUE;
        return;
    }
    uint32_t slot = first ? 0 : fxt_provider_slot(s, id);   /* may move s->providers' array */
    struct fxt_provider *p = g_ptr_array_index(s->providers, slot);
    g_string_free(p->name, TRUE);
    p->name = name;
    p->event_count = saved_get_u64(r);
    get_regs(r, p->ticks, s->data_end + 1, ANY_VALUE);
    saved_get_u32_array(r, p->provider_events, LIMIT_FXT_PROVIDER_EVENTS);
}

static void get_providers(struct saved_reader *r, struct fxt_state *s)
{
    /* id, has_id, name length, event count, ticks count, events count */
    uint64_t n = saved_get_count(r, 6 * WORD, LIMIT_FXT_PROVIDERS + 1);
    for (uint64_t i = 0; i < n && !r->bad; i++)
        get_provider(r, s, i == 0);
    if (n == 0)
        r->bad = TRUE;
}

static void get_reg_table(struct saved_reader *r, struct fxt_state *s, GHashTable *table, uint64_t value_bound)
{
    uint64_t n = saved_get_count(r, 2 * WORD, UINT32_MAX);   /* key, count */
    for (uint64_t i = 0; i < n && !r->bad; i++) {
        uint64_t key = saved_get_u64(r);
        if (g_hash_table_contains(table, &key)) {
            r->bad = TRUE;
            return;
        }
        get_regs(r, fxt_reg_array(table, key), s->data_end + 1, value_bound);
    }
}

static void get_thread(struct saved_reader *r, struct fxt_state *s)
{
    struct fxt_thread *t = g_new0(struct fxt_thread, 1);
    t->runs = g_array_new(FALSE, FALSE, sizeof(struct fxt_reg));
    g_ptr_array_add(s->threads, t);
    t->pid = saved_get_u64(r);
    t->tid = saved_get_u64(r);
    t->events = saved_get_u64(r);
    t->first_ns = saved_get_u64(r);
    t->last_ns = saved_get_u64(r);
    get_regs(r, t->runs, s->data_end, ANY_VALUE);
    /* A run's seq (value2) never goes back, nor passes its thread's start. */
    const struct fxt_reg *runs = (const struct fxt_reg *)t->runs->data;
    for (guint i = 1; i < t->runs->len; i++)
        if (runs[i].value2 < runs[i - 1].value2 || runs[i].offset <= runs[i - 1].offset)
            r->bad = TRUE;
    char key[48];
    g_snprintf(key, sizeof key, "%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT, t->pid, t->tid);
    if (g_hash_table_contains(s->thread_by_koids, key)) {
        r->bad = TRUE;
        return;
    }
    g_hash_table_insert(s->thread_by_koids, g_strdup(key), GUINT_TO_POINTER(s->threads->len));
}

static void get_threads(struct saved_reader *r, struct fxt_state *s)
{
    /* pid, tid, events, first and last time, runs count */
    /* No more threads than the index pass's budget pays for. */
    uint64_t affordable = limit_table_budget((uint64_t)s->trace->st.st_size) / LIMIT_FXT_THREAD_BYTES + 1;
    uint64_t n = saved_get_count(r, 6 * WORD, MIN(LIMIT_FXT_THREADS, affordable));
    for (uint64_t i = 0; i < n && !r->bad; i++)
        get_thread(r, s);
}

static void get_counters(struct saved_reader *r, struct fxt_state *s)
{
    uint64_t n = saved_get_count(r, 3 * WORD, LIMIT_FXT_COUNTERS);   /* name, id, columns count */
    for (uint64_t i = 0; i < n && !r->bad; i++) {
        struct fxt_counter *c = g_new0(struct fxt_counter, 1);
        c->columns = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        g_ptr_array_add(s->counters, c);
        c->name_string = (uint32_t)saved_get_below(r, s->pool->len);
        c->id = saved_get_u64(r);
        get_pool_ids(r, s, c->columns, LIMIT_FXT_COUNTER_COLUMNS);
    }
}

/* Segments must lie in the trace and follow each other in the blob. */
static void check_segments(struct saved_reader *r, const struct fxt_state *s, struct fxt_blob *b)
{
    for (guint k = 0; k < b->segments->len && !r->bad; k++) {
        const struct fxt_reg *seg = &g_array_index(b->segments, struct fxt_reg, k);
        if (seg->value > s->data_end - seg->offset || seg->value2 != b->size)
            r->bad = TRUE;
        b->size += seg->value;
    }
}

static void get_blobs(struct saved_reader *r, struct fxt_state *s)
{
    uint64_t n = saved_get_count(r, 2 * WORD, UINT32_MAX);   /* name, segments count */
    for (uint64_t i = 0; i < n && !r->bad; i++) {
        struct fxt_blob *b = g_new0(struct fxt_blob, 1);
        b->segments = g_array_new(FALSE, FALSE, sizeof(struct fxt_reg));
        g_ptr_array_add(s->blobs, b);
        b->name_string = (uint32_t)saved_get_below(r, s->pool->len);
        get_regs(r, b->segments, s->data_end, ANY_VALUE);
        check_segments(r, s, b);
    }
}

/* Items that start with the offset of a record in the trace: uint64
 * offsets, struct fxt_object. */
G_STATIC_ASSERT(offsetof(struct fxt_object, offset) == 0);
static void get_offsets(struct saved_reader *r, const struct fxt_state *s, GArray *items, uint64_t max_count)
{
    if (!saved_get_array(r, items, max_count))
        return;
    guint size = g_array_get_element_size(items);
    for (guint i = 0; i < items->len; i++) {
        uint64_t offset;
        memcpy(&offset, items->data + (size_t)i * size, sizeof offset);
        if (offset >= s->data_end)
            r->bad = TRUE;
    }
}

static void get_cpus(struct saved_reader *r, GHashTable *cpus)
{
    uint64_t n = saved_get_count(r, WORD, UINT32_MAX);
    for (uint64_t i = 0; i < n && !r->bad; i++) {
        uint64_t key = saved_get_below(r, (uint64_t)UINT32_MAX + 1);
        if (key == 0)
            r->bad = TRUE;   /* keys are cpu + 1, so that none is NULL */
        g_hash_table_add(cpus, GUINT_TO_POINTER((guint)key));
    }
}

static void get_names(struct saved_reader *r, const struct fxt_state *s, GHashTable *names)
{
    uint64_t n = saved_get_count(r, 2 * WORD, UINT32_MAX);   /* koid, pool id */
    for (uint64_t i = 0; i < n && !r->bad; i++) {
        uint64_t koid = saved_get_u64(r);
        guint name = (guint)saved_get_below(r, s->pool->len);
        g_hash_table_replace(names, g_memdup2(&koid, sizeof koid), GUINT_TO_POINTER(name));
    }
}

/* The tables after the pool; providers come first, as registrations of
 * provider switches name them. */
static void get_tables(struct saved_reader *r, struct fxt_state *s)
{
    get_providers(r, s);
    if (r->bad)
        return;   /* and with no providers, a bound of 0 would be ANY_VALUE */
    get_regs(r, s->provider_switches, s->data_end + 1, s->providers->len);
    get_reg_table(r, s, s->string_regs, s->pool->len);
    get_reg_table(r, s, s->thread_regs, ANY_VALUE);
    get_threads(r, s);
    get_counters(r, s);
    get_blobs(r, s);
    get_offsets(r, s, s->kobjects, LIMIT_FXT_OBJECT_FILES);
    get_offsets(r, s, s->uobjects, LIMIT_FXT_OBJECT_FILES);
    get_cpus(r, s->cpus);
    get_names(r, s, s->process_names);
    get_names(r, s, s->thread_names);
    saved_take(r, &s->totals, sizeof s->totals);
    get_offsets(r, s, s->unmatched_ends, LIMIT_FXT_UNMATCHED_ENDS);
    get_offsets(r, s, s->unended_begins, LIMIT_FXT_UNMATCHED_ENDS);
    for (guint i = 1; i < s->unended_begins->len && !r->bad; i++)
        if (g_array_index(s->unended_begins, uint64_t, i) <= g_array_index(s->unended_begins, uint64_t, i - 1))
            r->bad = TRUE;
}

int fxt_load(struct trace *trace, const uint8_t *data, size_t size)
{
    struct stream *stream = trace_file_stream(trace);
    if (!stream)
        return -1;
    struct fxt_state *s = fxt_state_new(trace, stream);
    trace->format_state = s;
    struct saved_reader r;
    saved_reader_init_mapped(&r, data, size);
    s->big_endian = saved_get_u64(&r) != 0;
    s->data_start = saved_get_u64(&r);
    s->data_end = saved_get_u64(&r);
    if (r.bad || s->data_end > stream_size(stream) || s->data_start > s->data_end)
        return -1;
    get_pool(&r, s);
    if (r.bad)
        return -1;
    get_tables(&r, s);
    return saved_reader_done(&r) ? 0 : -1;
}
