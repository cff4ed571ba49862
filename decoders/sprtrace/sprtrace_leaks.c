/* What `sp-rtrace-postproc -l` keeps (filter.c: fcall_remove_freed), its
 * leak summary, and the backtrace groups of `-lc` in postproc's order. */
#include <stdlib.h>
#include <strings.h>
#include "sprtrace.h"
#include "tracefs_limits.h"

struct live {
    uint32_t call;
    int32_t ref_count;
};

/* postproc's res_compare: same resource record and id, or two records with
 * the same id; a call without a known resource never matches one with. */
static uint64_t live_key_hi(const struct sprt_state *state, const struct sprt_call *call)
{
    if (call->resource == SPRT_NONE)
        return UINT64_MAX;
    return g_array_index(state->resources, struct sprt_resource, call->resource).id;
}

struct key { uint64_t hi, lo; };

static guint key_hash(gconstpointer p)
{
    const struct key *k = p;
    return (guint)(k->lo ^ (k->lo >> 32) ^ (k->hi * 0x9e3779b1u));
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
    const struct key *x = a, *y = b;
    return x->hi == y->hi && x->lo == y->lo;
}


static uint32_t resource_flags(const struct sprt_state *state, const struct sprt_call *call)
{
    if (call->resource == SPRT_NONE)
        return 0;
    return g_array_index(state->resources, struct sprt_resource, call->resource).flags;
}

static void remove_freed(struct sprt_state *state, GArray *res_ids)
{
    GHashTable *live = g_hash_table_new_full(key_hash, key_equal, g_free, g_free);
    for (guint i = 0; i < state->calls->len; i++) {
        struct sprt_call *call = &g_array_index(state->calls, struct sprt_call, i);
        if (call->type != SPRT_ALLOC && call->type != SPRT_FREE)
            continue;
        struct key k = { live_key_hi(state, call), g_array_index(res_ids, uint64_t, i) };
        struct live *found = g_hash_table_lookup(live, &k);
        gboolean refcount = (resource_flags(state, call) & 1) != 0;
        if (call->type == SPRT_ALLOC) {
            if (found && refcount) {
                found->ref_count++;
                call->leak = 0;
                continue;
            }
            struct live *entry = g_new(struct live, 1);
            entry->call = i;
            entry->ref_count = 1;
            g_hash_table_replace(live, g_memdup2(&k, sizeof k), entry);
            continue;
        }
        if (found) {
            found->ref_count--;
            if (found->ref_count == 0 || !refcount) {
                g_array_index(state->calls, struct sprt_call, found->call).leak = 0;
                g_hash_table_remove(live, &k);
            }
        }
        call->leak = 0;
    }
    g_hash_table_unref(live);
}

/* filter_sum_leaks indexes by id - 1, write_leaks reads ffs(id) - 1: with
 * ids 1, 2, 3 the third resource shows the first one's sums.  Kept, since
 * `leaks` is postproc's text. */
static void summarise(struct sprt_state *state)
{
    int32_t count[LIMIT_SPRT_RESOURCE_ID] = { 0 }, total[LIMIT_SPRT_RESOURCE_ID] = { 0 };
    gboolean single = state->resources->len == 1;
    for (guint i = 0; i < state->calls->len; i++) {
        const struct sprt_call *call = &g_array_index(state->calls, struct sprt_call, i);
        if (!call->leak || call->type != SPRT_ALLOC)
            continue;
        uint32_t id = 1;
        if (call->resource != SPRT_NONE && !single)
            id = g_array_index(state->resources, struct sprt_resource, call->resource).id;
        if (id < 1 || id > LIMIT_SPRT_RESOURCE_ID)
            continue;
        count[id - 1]++;
        total[id - 1] = (int32_t)((uint32_t)total[id - 1] + (uint32_t)call->res_size);
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

/* leaks_sort: the hash table's buckets in order, first-seen order inside a
 * bucket, then a stable sort by total size, ascending. */
static void build_groups(struct sprt_state *state, const GArray *trace_hash)
{
    uint32_t n = state->trace_count;
    uint32_t *last = g_new(uint32_t, n);
    struct sprt_group *groups = g_new0(struct sprt_group, n);
    for (uint32_t t = 0; t < n; t++) {
        last[t] = SPRT_NONE;
        groups[t].trace = t;
        groups[t].first_call = SPRT_NONE;
        groups[t].hash = g_array_index(trace_hash, uint32_t, t);
    }
    for (guint i = 0; i < state->calls->len; i++) {
        struct sprt_call *call = &g_array_index(state->calls, struct sprt_call, i);
        if (!call->leak || call->trace == SPRT_NONE || call->trace >= n)
            continue;
        struct sprt_group *g = &groups[call->trace];
        if (last[call->trace] == SPRT_NONE)
            g->first_call = i;
        else
            g_array_index(state->calls, struct sprt_call, last[call->trace]).next_leak = i;
        last[call->trace] = i;
        g->leak_count++;
        g->leak_size = (int32_t)((uint32_t)g->leak_size + (uint32_t)call->res_size);
    }
    for (uint32_t t = 0; t < n; t++)
        if (groups[t].first_call != SPRT_NONE)
            g_array_append_val(state->groups, groups[t]);
    if (state->groups->len > 1)
        qsort(state->groups->data, state->groups->len, sizeof(struct sprt_group), compare_groups);
    g_free(groups);
    g_free(last);
}

void sprt_compute_leaks(struct sprt_state *state, const GArray *trace_hash)
{
    remove_freed(state, state->res_ids);
    summarise(state);
    build_groups(state, trace_hash);
    g_array_unref(state->res_ids);
    state->res_ids = NULL;
}
