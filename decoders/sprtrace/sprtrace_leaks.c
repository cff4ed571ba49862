/* What `sp-rtrace-postproc -l` keeps (filter.c: fcall_remove_freed), its
 * leak summary, and the backtrace groups of `-lc` in postproc's order.
 * The live allocations are kept only while the index pass runs; what stays
 * is four bits per call (leaked; the pair code of an allocation and the
 * free that ends it, for the events' async slices, which names the pair
 * after its allocation), the names the codes refer to, the groups and
 * their calls as varint gaps. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "keyed_hash.h"
#include "proto_wire.h"
#include "sorted_search.h"
#include "sprtrace.h"
#include "stream.h"
#include "tracefs_limits.h"

/* A live allocation: key (resource id, res_id) and what un-leaking it takes. */
struct live {
    uint64_t hi, lo;
    uint32_t call, resource;
    int32_t ref_count, res_size;
    uint32_t name;             /* pair_name_index of its function */
};

/* Leaked allocations per resource index (slot 0: calls without one). */
struct sums {
    int32_t count;
    uint32_t total;
};

struct sprt_leaks {
    GHashTable *live;          /* struct live, key and value */
    GArray *sums;              /* struct sums */
    GHashTable *names;         /* pair_names' strings -> their index + 1 */
};

static guint live_hash(gconstpointer p)
{
    const struct live *k = p;
    return keyed_hash_u64(k->lo ^ keyed_mix64(k->hi));
}

static gboolean live_equal(gconstpointer a, gconstpointer b)
{
    const struct live *x = a, *y = b;
    return x->hi == y->hi && x->lo == y->lo;
}

struct sprt_leaks *sprt_leaks_new(void)
{
    struct sprt_leaks *leaks = g_new0(struct sprt_leaks, 1);
    leaks->live = g_hash_table_new_full(live_hash, live_equal, g_free, NULL);
    leaks->sums = g_array_new(FALSE, TRUE, sizeof(struct sums));
    leaks->names = g_hash_table_new(keyed_hash_string, g_str_equal);
    return leaks;
}

void sprt_leaks_free(struct sprt_leaks *leaks)
{
    g_hash_table_unref(leaks->live);
    g_array_unref(leaks->sums);
    g_hash_table_unref(leaks->names);
    g_free(leaks);
}

static void clear_leak(struct sprt_state *state, uint32_t index)
{
    uint8_t *byte = &state->leak_bits->data[index >> 3];
    uint8_t bit = (uint8_t)(1u << (index & 7));
    if (*byte & bit) {
        *byte &= (uint8_t)~bit;
        state->leak_count--;
    }
}

/* The index pass has made room for the codes of every call so far. */
static void set_pair(struct sprt_state *state, uint32_t index, uint8_t code)
{
    uint64_t bit = (uint64_t)index * SPRT_PAIR_BITS;
    unsigned word = (unsigned)code << (bit % 8);
    state->pair_codes->data[bit / 8] |= (uint8_t)word;
    if (word >> 8)
        state->pair_codes->data[bit / 8 + 1] |= (uint8_t)(word >> 8);
}

/* An allocation function's place in pair_names, which takes the first
 * LIMIT_SPRT_PAIR_NAMES names in call order; SPRT_NONE for a name that
 * comes later or is too long (its pairs are named after their resource
 * type, so that no pair ever carries another function's name). */
static uint32_t pair_name_index(struct sprt_leaks *leaks, struct sprt_state *state, const char *name,
                                size_t name_len)
{
    if (name_len > LIMIT_SPRT_PAIR_NAME_BYTES)
        return SPRT_NONE;
    char key[LIMIT_SPRT_PAIR_NAME_BYTES + 1];
    memcpy(key, name, name_len);
    key[name_len] = '\0';
    gpointer found = g_hash_table_lookup(leaks->names, key);
    if (found)
        return GPOINTER_TO_UINT(found) - 1;
    if (state->pair_names->len >= LIMIT_SPRT_PAIR_NAMES)
        return SPRT_NONE;
    char *copy = g_strdup(key);
    g_ptr_array_add(state->pair_names, copy);
    g_hash_table_insert(leaks->names, copy, GUINT_TO_POINTER(state->pair_names->len));
    return state->pair_names->len - 1;
}

/* Marks both calls of a pair with the code of its allocation's name. */
static void mark_pair(struct sprt_state *state, uint32_t alloc, uint32_t free, uint32_t name)
{
    uint8_t code = SPRT_PAIR_BY_RESOURCE;
    if (name < SPRT_PAIR_CODED_NAMES) {
        code = (uint8_t)(name + 1);
    } else if (name != SPRT_NONE &&
               state->pair_escapes->len + 2 <= sprt_pair_escape_limit(stream_size(state->stream))) {
        code = SPRT_PAIR_ESCAPED;
        struct sprt_pair_escape escapes[2] = { { alloc, name }, { free, name } };
        g_array_append_vals(state->pair_escapes, escapes, 2);
    }
    set_pair(state, alloc, code);
    set_pair(state, free, code);
}

static void add_sum(struct sprt_leaks *leaks, uint32_t resource, int32_t res_size, int sign)
{
    guint slot = resource == SPRT_NONE ? 0 : resource + 1;
    if (slot >= leaks->sums->len)
        g_array_set_size(leaks->sums, slot + 1);
    struct sums *s = &g_array_index(leaks->sums, struct sums, slot);
    s->count += sign;
    s->total += sign > 0 ? (uint32_t)res_size : (uint32_t)-(uint32_t)res_size;
}

/* postproc's res_compare: same resource record and id, or two records with
 * the same id; a call without a known resource never matches one with. */
void sprt_leaks_call(struct sprt_leaks *leaks, struct sprt_state *state, const struct sprt_call *call,
                     const char *name, size_t name_len)
{
    if (call->type != SPRT_ALLOC && call->type != SPRT_FREE)
        return;
    const struct sprt_resource *res = call->resource == SPRT_NONE ? NULL
        : &g_array_index(state->resources, struct sprt_resource, call->resource);
    struct live key = { .hi = res ? res->id : UINT64_MAX, .lo = call->res_id };
    struct live *found = g_hash_table_lookup(leaks->live, &key);
    gboolean refcount = res && (res->flags & 1) != 0;
    if (call->type == SPRT_ALLOC) {
        if (found && refcount) {
            found->ref_count++;
            clear_leak(state, call->index);
            return;
        }
        /* Replacing a live entry leaves its call leaked, as postproc does. */
        struct live *entry = g_memdup2(&key, sizeof key);
        entry->call = call->index;
        entry->resource = call->resource;
        entry->ref_count = 1;
        entry->res_size = call->res_size;
        entry->name = pair_name_index(leaks, state, name, name_len);
        g_hash_table_replace(leaks->live, entry, entry);
        add_sum(leaks, call->resource, call->res_size, 1);
        return;
    }
    if (found) {
        found->ref_count--;
        if (found->ref_count == 0 || !refcount) {
            clear_leak(state, found->call);
            mark_pair(state, found->call, call->index, found->name);
            add_sum(leaks, found->resource, found->res_size, -1);
            g_hash_table_remove(leaks->live, found);
        }
    }
    clear_leak(state, call->index);
}

/* Keeps the names the codes and escapes refer to (the coded ones first,
 * in place), so that the index holds no name of a leak or of a pair past
 * the escapes. */
static void keep_pair_names(struct sprt_state *state)
{
    guint n = state->pair_names->len;
    gboolean *used = g_new0(gboolean, n ? n : 1);
    uint32_t *kept = g_new(uint32_t, n ? n : 1);
    for (guint i = 0; i < n && i < SPRT_PAIR_CODED_NAMES; i++)
        used[i] = TRUE;
    for (guint i = 0; i < state->pair_escapes->len; i++)
        used[g_array_index(state->pair_escapes, struct sprt_pair_escape, i).name] = TRUE;
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < n; i++) {
        if (!used[i])
            continue;
        kept[i] = names->len;
        g_ptr_array_add(names, g_strdup(g_ptr_array_index(state->pair_names, i)));
    }
    for (guint i = 0; i < state->pair_escapes->len; i++) {
        struct sprt_pair_escape *e = &g_array_index(state->pair_escapes, struct sprt_pair_escape, i);
        e->name = kept[e->name];
    }
    g_ptr_array_unref(state->pair_names);
    state->pair_names = names;
    g_free(kept);
    g_free(used);
}

/* filter_sum_leaks indexes by id - 1, write_leaks reads ffs(id) - 1: with
 * ids 1, 2, 3 the third resource shows the first one's sums.  Kept, since
 * `leaks` is postproc's text. */
void sprt_leaks_summarise(struct sprt_leaks *leaks, struct sprt_state *state)
{
    int32_t count[LIMIT_SPRT_RESOURCE_ID] = { 0 }, total[LIMIT_SPRT_RESOURCE_ID] = { 0 };
    gboolean single = state->resources->len == 1;
    for (guint slot = 0; slot < leaks->sums->len; slot++) {
        const struct sums *s = &g_array_index(leaks->sums, struct sums, slot);
        uint32_t id = 1;
        if (slot > 0 && !single)
            id = g_array_index(state->resources, struct sprt_resource, slot - 1).id;
        if (id < 1 || id > LIMIT_SPRT_RESOURCE_ID)
            continue;
        count[id - 1] += s->count;
        total[id - 1] = (int32_t)((uint32_t)total[id - 1] + s->total);
    }
    state->leak_summary = g_string_new(NULL);
    for (guint i = 0; i < state->resources->len; i++) {
        const struct sprt_resource *res = &g_array_index(state->resources, struct sprt_resource, i);
        int slot = ffs((int)(single ? 1 : res->id)) - 1;
        g_string_append_printf(state->leak_summary, "# Resource - %s (%s):\n", res->type, res->desc);
        g_string_append_printf(state->leak_summary, "# %d block(s) leaked with total size of %d bytes\n",
                               slot >= 0 && slot < (int)LIMIT_SPRT_RESOURCE_ID ? count[slot] : 0,
                               slot >= 0 && slot < (int)LIMIT_SPRT_RESOURCE_ID ? total[slot] : 0);
    }
    g_hash_table_remove_all(leaks->live);
    /* Appended as frees ended pairs: the allocations' calls are earlier. */
    g_array_sort(state->pair_escapes, sorted_compare_u32);
    g_hash_table_remove_all(leaks->names);
    keep_pair_names(state);
}

static int compare_groups(const void *a, const void *b)
{
    const struct sprt_group *x = a, *y = b;
    if (x->leak_size != y->leak_size)
        return x->leak_size < y->leak_size ? -1 : 1;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return x->trace < y->trace ? -1 : x->trace > y->trace;
}

/* Calls after each group's first, as gaps (varints, seven bits a byte,
 * low bits first, as protobuf writes them): pairs are (group, call) in
 * call order.  A first pass measures each group's list. */
static void encode_lists(struct sprt_state *state, const GArray *pairs)
{
    guint n = state->groups->len;
    uint32_t *last = g_new(uint32_t, n);
    uint64_t *length = g_new0(uint64_t, n);
    uint8_t scratch[10];
    for (guint g = 0; g < n; g++)
        last[g] = g_array_index(state->groups, struct sprt_group, g).first_call;
    for (guint i = 0; i < pairs->len; i += 2) {
        uint32_t g = g_array_index(pairs, uint32_t, i), call = g_array_index(pairs, uint32_t, i + 1);
        length[g] += proto_varint_encode(scratch, call - last[g]);
        last[g] = call;
    }
    uint64_t total = 0;
    for (guint g = 0; g < n; g++) {
        struct sprt_group *group = &g_array_index(state->groups, struct sprt_group, g);
        group->list_offset = total;
        total += length[g];
        length[g] = group->list_offset;   /* now the write position */
        last[g] = group->first_call;
    }
    g_byte_array_set_size(state->group_calls, (guint)total);
    for (guint i = 0; i < pairs->len; i += 2) {
        uint32_t g = g_array_index(pairs, uint32_t, i), call = g_array_index(pairs, uint32_t, i + 1);
        length[g] += proto_varint_encode(state->group_calls->data + length[g], call - last[g]);
        last[g] = call;
    }
    g_free(length);
    g_free(last);
}

/* The trace of a leaked call's BTRC packet, SPRT_NONE when it has none. */
static uint32_t call_trace(struct trace *trace, const struct sprt_state *state, const struct sprt_call *call,
                           uint32_t (*trace_of)(void *, const uint8_t *, size_t), void *context, gboolean *failed)
{
    if (!call->bt_offset)
        return SPRT_NONE;
    uint8_t *data = sprt_read_packet(trace, state, call->bt_offset, call->bt_size);
    if (!data) {
        *failed = TRUE;
        return SPRT_NONE;
    }
    uint32_t number = trace_of(context, data, call->bt_size);
    sprt_packet_free(data);
    return number;
}

/* leaks_sort: the hash table's buckets in order, first-seen order inside a
 * bucket, then a stable sort by total size, ascending. */
int sprt_build_groups(struct trace *trace, struct sprt_state *state,
                      uint32_t (*trace_of)(void *context, const uint8_t *data, size_t size), void *context,
                      const GArray *trace_hash)
{
    uint32_t n = state->trace_count;
    uint32_t *group_of = g_new(uint32_t, n ? n : 1);
    for (uint32_t t = 0; t < n; t++)
        group_of[t] = SPRT_NONE;
    GArray *pairs = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    struct sprt_walk walk;
    struct sprt_call call;
    gboolean failed = FALSE;
    sprt_walk_resume(&walk, trace, state, 0, 0);
    /* The leak bits skip the checkpoints of freed calls. */
    for (uint32_t i = sprt_next_leak(state, 0); i < state->call_count && !failed; i = sprt_next_leak(state, i + 1)) {
        if (!sprt_walk_to(&walk, i, &call)) {
            failed = TRUE;
            break;
        }
        uint32_t t = call_trace(trace, state, &call, trace_of, context, &failed);
        if (t == SPRT_NONE || t >= n)
            continue;
        if (group_of[t] == SPRT_NONE) {
            group_of[t] = state->groups->len;
            struct sprt_group g = { .trace = t, .first_call = call.index,
                                    .hash = g_array_index(trace_hash, uint32_t, t) };
            g_array_append_val(state->groups, g);
        } else {
            uint32_t pair[2] = { group_of[t], call.index };
            g_array_append_vals(pairs, pair, 2);
        }
        struct sprt_group *g = &g_array_index(state->groups, struct sprt_group, group_of[t]);
        g->leak_count++;
        g->leak_size = (int32_t)((uint32_t)g->leak_size + (uint32_t)call.res_size);
    }
    g_free(group_of);
    encode_lists(state, pairs);
    g_array_unref(pairs);
    if (state->groups->len > 1)
        qsort(state->groups->data, state->groups->len, sizeof(struct sprt_group), compare_groups);
    return failed ? -1 : 0;
}
