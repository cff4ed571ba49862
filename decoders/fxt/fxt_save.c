/* The persistent index of an FXT trace: the side tables of the index pass,
 * saved so a second mount needs no scan.  The bytes come from a
 * checksummed file but are checked like trace data: every count against
 * the bytes left, every index against its table, every offset against the
 * trace's size. */
#include <string.h>
#include "fxt.h"
#include "trace.h"
#include "tracefs_limits.h"

/* ---- writing ---- */

static void put(GByteArray *out, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    g_byte_array_append(out, b, 8);
}

static void put_bytes(GByteArray *out, const void *data, size_t len)
{
    put(out, len);
    g_byte_array_append(out, data, (guint)len);
}

static void put_regs(GByteArray *out, const GArray *regs)
{
    put(out, regs->len);
    for (guint i = 0; i < regs->len; i++) {
        const struct fxt_reg *r = &g_array_index(regs, struct fxt_reg, i);
        put(out, r->offset);
        put(out, r->value);
        put(out, r->value2);
    }
}

static void put_reg_table(GByteArray *out, GHashTable *table)
{
    put(out, g_hash_table_size(table));
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, table);
    while (g_hash_table_iter_next(&iter, &key, &value)) {
        put(out, *(uint64_t *)key);
        put_regs(out, value);
    }
}

static void put_names(GByteArray *out, GHashTable *names)
{
    put(out, g_hash_table_size(names));
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, names);
    while (g_hash_table_iter_next(&iter, &key, &value)) {
        put(out, *(uint64_t *)key);
        put(out, GPOINTER_TO_UINT(value));
    }
}

static void put_offsets(GByteArray *out, const GArray *offsets)
{
    put(out, offsets->len);
    for (guint i = 0; i < offsets->len; i++)
        put(out, g_array_index(offsets, uint64_t, i));
}

int fxt_save(struct trace *trace, GByteArray *out)
{
    const struct fxt_state *s = trace->format_state;
    put(out, s->big_endian);
    put(out, s->data_start);
    put(out, s->data_end);
    put(out, s->pool->len);
    for (guint i = 0; i < s->pool->len; i++) {
        struct fxt_str str = fxt_pool_string(s, i);
        put_bytes(out, str.data, str.len);
    }
    put(out, s->providers->len);
    for (guint i = 0; i < s->providers->len; i++) {
        const struct fxt_provider *p = g_ptr_array_index(s->providers, i);
        put(out, p->id);
        put(out, p->has_id);
        put_bytes(out, p->name, strlen(p->name));
        put(out, p->event_count);
        put_regs(out, p->ticks);
        put(out, p->provider_events->len);
        for (guint e = 0; e < p->provider_events->len; e++)
            put(out, g_array_index(p->provider_events, uint32_t, e));
    }
    put_regs(out, s->provider_switches);
    put_reg_table(out, s->string_regs);
    put_reg_table(out, s->thread_regs);
    put(out, s->threads->len);
    for (guint i = 0; i < s->threads->len; i++) {
        const struct fxt_thread *t = g_ptr_array_index(s->threads, i);
        put(out, t->pid);
        put(out, t->tid);
        put(out, t->events);
        put(out, t->first_ns);
        put(out, t->last_ns);
        put_regs(out, t->runs);
    }
    put(out, s->counters->len);
    for (guint i = 0; i < s->counters->len; i++) {
        const struct fxt_counter *c = g_ptr_array_index(s->counters, i);
        put(out, c->name_string);
        put(out, c->id);
        put(out, c->columns->len);
        for (guint k = 0; k < c->columns->len; k++)
            put(out, g_array_index(c->columns, uint32_t, k));
    }
    put(out, s->blobs->len);
    for (guint i = 0; i < s->blobs->len; i++) {
        const struct fxt_blob *b = g_ptr_array_index(s->blobs, i);
        put(out, b->name_string);
        put_regs(out, b->segments);
    }
    put_offsets(out, s->kobjects);
    put_offsets(out, s->uobjects);
    put(out, g_hash_table_size(s->cpus));
    GHashTableIter iter;
    gpointer key;
    g_hash_table_iter_init(&iter, s->cpus);
    while (g_hash_table_iter_next(&iter, &key, NULL))
        put(out, GPOINTER_TO_UINT(key));
    put_names(out, s->process_names);
    put_names(out, s->thread_names);
    for (unsigned i = 0; i < 16; i++)
        put(out, s->record_counts[i]);
    for (unsigned i = 0; i < FXT_EV_COUNT; i++)
        put(out, s->event_counts[i]);
    put(out, s->unknown_records);
    put(out, s->bad_records);
    put(out, s->log_records);
    put(out, s->sched_records);
    put(out, s->first_ns);
    put(out, s->last_ns);
    put(out, s->have_time);
    return 0;
}

/* ---- reading ---- */

struct in {
    const uint8_t *data;
    size_t pos, size;
    gboolean bad;
};

static uint64_t get(struct in *in)
{
    if (in->bad || in->size - in->pos < 8) {
        in->bad = TRUE;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)in->data[in->pos + i] << (8 * i);
    in->pos += 8;
    return v;
}

/* A count of items of at least `item_bytes` each: never more than the bytes left. */
static uint64_t get_count(struct in *in, size_t item_bytes, uint64_t limit)
{
    uint64_t n = get(in);
    if (n > (in->size - in->pos) / item_bytes || n > limit)
        in->bad = TRUE;
    return in->bad ? 0 : n;
}

static const uint8_t *get_bytes(struct in *in, size_t *len)
{
    uint64_t n = get(in);
    if (in->bad || n > in->size - in->pos) {
        in->bad = TRUE;
        *len = 0;
        return NULL;
    }
    const uint8_t *p = in->data + in->pos;
    in->pos += n;
    *len = (size_t)n;
    return p;
}

static uint64_t get_below(struct in *in, uint64_t bound)
{
    uint64_t v = get(in);
    if (v >= bound)
        in->bad = TRUE;
    return in->bad ? 0 : v;
}

static void get_regs(struct in *in, GArray *regs, uint64_t offset_bound)
{
    uint64_t n = get_count(in, 24, UINT32_MAX);
    for (uint64_t i = 0; i < n && !in->bad; i++) {
        struct fxt_reg r;
        r.offset = get_below(in, offset_bound);
        r.value = get(in);
        r.value2 = get(in);
        g_array_append_val(regs, r);
    }
}

static void get_reg_table(struct in *in, struct fxt_state *s, GHashTable *table, uint64_t value_bound)
{
    uint64_t n = get_count(in, 16, UINT32_MAX);
    for (uint64_t i = 0; i < n && !in->bad; i++) {
        uint64_t key = get(in);
        uint64_t count = get_count(in, 24, UINT32_MAX);
        for (uint64_t k = 0; k < count && !in->bad; k++) {
            uint64_t offset = get_below(in, s->data_end + 1);
            uint64_t value = value_bound ? get_below(in, value_bound) : get(in);
            uint64_t value2 = get(in);
            fxt_reg_push(table, key, offset, value, value2);
        }
    }
}

static void get_names(struct in *in, struct fxt_state *s, GHashTable *names)
{
    uint64_t n = get_count(in, 16, UINT32_MAX);
    for (uint64_t i = 0; i < n && !in->bad; i++) {
        uint64_t *koid = g_new(uint64_t, 1);
        *koid = get(in);
        g_hash_table_replace(names, koid, GUINT_TO_POINTER((guint)get_below(in, s->pool->len)));
    }
}

static void get_offsets(struct in *in, struct fxt_state *s, GArray *offsets)
{
    uint64_t n = get_count(in, 8, UINT32_MAX);
    for (uint64_t i = 0; i < n && !in->bad; i++) {
        uint64_t offset = get_below(in, s->data_end);
        g_array_append_val(offsets, offset);
    }
}

static void get_providers(struct in *in, struct fxt_state *s)
{
    uint64_t n = get_count(in, 40, LIMIT_FXT_PROVIDERS + 1);
    for (uint64_t i = 0; i < n && !in->bad; i++) {
        uint32_t id = (uint32_t)get(in);
        gboolean has_id = get(in) != 0;
        size_t len;
        const uint8_t *name = get_bytes(in, &len);
        if (in->bad || (!has_id) != (i == 0) || (has_id && g_hash_table_contains(s->provider_slots, GUINT_TO_POINTER(id + 1)))) {
            in->bad = TRUE;
            return;
        }
        uint32_t slot = fxt_provider_slot(s, id, has_id);
        struct fxt_provider *p = g_ptr_array_index(s->providers, slot);
        g_free(p->name);
        p->name = g_strndup((const char *)name, len);
        p->event_count = get(in);
        get_regs(in, p->ticks, s->data_end + 1);
        uint64_t events = get_count(in, 8, LIMIT_FXT_PROVIDER_EVENTS);
        for (uint64_t e = 0; e < events; e++) {
            uint32_t event = (uint32_t)get(in);
            g_array_append_val(p->provider_events, event);
        }
    }
    if (s->providers->len == 0)
        in->bad = TRUE;
}

static void get_threads(struct in *in, struct fxt_state *s)
{
    uint64_t n = get_count(in, 48, LIMIT_FXT_THREADS);
    for (uint64_t i = 0; i < n && !in->bad; i++) {
        struct fxt_thread *t = g_new0(struct fxt_thread, 1);
        t->pid = get(in);
        t->tid = get(in);
        t->events = get(in);
        t->first_ns = get(in);
        t->last_ns = get(in);
        t->runs = g_array_new(FALSE, FALSE, sizeof(struct fxt_reg));
        g_ptr_array_add(s->threads, t);
        get_regs(in, t->runs, s->data_end);
        char key[48];
        g_snprintf(key, sizeof key, "%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT, t->pid, t->tid);
        if (g_hash_table_contains(s->thread_by_koids, key))
            in->bad = TRUE;
        g_hash_table_insert(s->thread_by_koids, g_strdup(key), GUINT_TO_POINTER(s->threads->len));
    }
}

static void get_counters(struct in *in, struct fxt_state *s)
{
    uint64_t n = get_count(in, 24, LIMIT_FXT_COUNTERS);
    for (uint64_t i = 0; i < n && !in->bad; i++) {
        struct fxt_counter *c = g_new0(struct fxt_counter, 1);
        c->columns = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        g_ptr_array_add(s->counters, c);
        c->name_string = (uint32_t)get_below(in, s->pool->len);
        c->id = get(in);
        uint64_t columns = get_count(in, 8, LIMIT_FXT_COUNTER_COLUMNS);
        for (uint64_t k = 0; k < columns; k++) {
            uint32_t column = (uint32_t)get_below(in, s->pool->len);
            g_array_append_val(c->columns, column);
        }
    }
}

static void get_blobs(struct in *in, struct fxt_state *s)
{
    uint64_t n = get_count(in, 16, UINT32_MAX);
    for (uint64_t i = 0; i < n && !in->bad; i++) {
        struct fxt_blob *b = g_new0(struct fxt_blob, 1);
        b->segments = g_array_new(FALSE, FALSE, sizeof(struct fxt_reg));
        g_ptr_array_add(s->blobs, b);
        b->name_string = (uint32_t)get_below(in, s->pool->len);
        get_regs(in, b->segments, s->data_end);
        /* Segments must lie in the trace and follow each other in the blob. */
        for (guint k = 0; k < b->segments->len && !in->bad; k++) {
            const struct fxt_reg *seg = &g_array_index(b->segments, struct fxt_reg, k);
            if (seg->value > s->data_end - seg->offset || seg->value2 != b->size)
                in->bad = TRUE;
            b->size += seg->value;
        }
    }
}

static void get_counts(struct in *in, struct fxt_state *s)
{
    for (unsigned i = 0; i < 16; i++)
        s->record_counts[i] = get(in);
    for (unsigned i = 0; i < FXT_EV_COUNT; i++)
        s->event_counts[i] = get(in);
    s->unknown_records = get(in);
    s->bad_records = get(in);
    s->log_records = get(in);
    s->sched_records = get(in);
    s->first_ns = get(in);
    s->last_ns = get(in);
    s->have_time = get(in) != 0;
}

/* Every registration value that names a table entry must name one. */
static gboolean regs_valid(const struct fxt_state *s)
{
    for (guint i = 0; i < s->provider_switches->len; i++)
        if (g_array_index(s->provider_switches, struct fxt_reg, i).value >= s->providers->len)
            return FALSE;
    return TRUE;
}

int fxt_load(struct trace *trace, const uint8_t *data, size_t size)
{
    struct stream *stream = trace_file_stream(trace);
    if (!stream)
        return -1;
    struct fxt_state *s = fxt_state_new(trace, stream);
    trace->format_state = s;
    struct in in = { data, 0, size, FALSE };
    s->big_endian = get(&in) != 0;
    s->data_start = get(&in);
    s->data_end = get(&in);
    if (s->data_end > stream_size(stream) || s->data_start > s->data_end)
        return -1;
    uint64_t strings = get_count(&in, 8, UINT32_MAX);
    /* The new state already holds string 0, "", as the saved pool does. */
    for (uint64_t i = 0; i < strings && !in.bad; i++) {
        size_t len;
        const uint8_t *bytes = get_bytes(&in, &len);
        if (!in.bad && fxt_intern(s, (const char *)bytes, len) != i)
            in.bad = TRUE;   /* the pool holds distinct strings */
    }
    if (in.bad || s->pool->len == 0)
        return -1;
    get_providers(&in, s);
    get_regs(&in, s->provider_switches, s->data_end + 1);
    get_reg_table(&in, s, s->string_regs, s->pool->len);
    get_reg_table(&in, s, s->thread_regs, 0);
    get_threads(&in, s);
    get_counters(&in, s);
    get_blobs(&in, s);
    get_offsets(&in, s, s->kobjects);
    get_offsets(&in, s, s->uobjects);
    uint64_t cpus = get_count(&in, 8, UINT32_MAX);
    for (uint64_t i = 0; i < cpus && !in.bad; i++) {
        uint64_t key = get_below(&in, (uint64_t)UINT32_MAX + 1);   /* cpu + 1 */
        if (key == 0)
            in.bad = TRUE;
        g_hash_table_add(s->cpus, GUINT_TO_POINTER((guint)key));
    }
    get_names(&in, s, s->process_names);
    get_names(&in, s, s->thread_names);
    get_counts(&in, s);
    if (in.bad || in.pos != in.size || !regs_valid(s))
        return -1;
    fxt_build_tree(trace, s);
    return 0;
}
