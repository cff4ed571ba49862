/* The mmap a backtrace address falls in, as a scan of the MMAP table in
 * log order answers it (the first that holds it), found by a binary
 * search: the table is cut once into spans, each naming that first mmap
 * (a scan per frame took the table's size times the frames: a log of
 * 40,000 mmaps and 200,000 frames, 12 s for one calls/<n>.json). */
#include <stddef.h>

#include "sorted_search.h"
#include "sprtrace.h"

#define NO_MMAP UINT32_MAX

struct endpoint {
    uint64_t at;
    uint32_t mmap;
    gboolean starts;
};

static int compare_endpoints(const void *a, const void *b)
{
    const struct endpoint *x = a, *y = b;
    return (x->at > y->at) - (x->at < y->at);
}

/* Mmap indexes as the tree's keys. */
static gint compare_mmaps(gconstpointer a, gconstpointer b)
{
    return (GPOINTER_TO_UINT(a) > GPOINTER_TO_UINT(b)) - (GPOINTER_TO_UINT(a) < GPOINTER_TO_UINT(b));
}

static GArray *mmap_endpoints(const GArray *mmaps)
{
    GArray *ends = g_array_sized_new(FALSE, FALSE, sizeof(struct endpoint), 2 * mmaps->len);
    for (guint i = 0; i < mmaps->len; i++) {
        const struct sprt_mmap *m = &g_array_index(mmaps, struct sprt_mmap, i);
        if (m->from >= m->to)
            continue;
        struct endpoint start = { m->from, i, TRUE }, end = { m->to, i, FALSE };
        g_array_append_val(ends, start);
        g_array_append_val(ends, end);
    }
    g_array_sort(ends, compare_endpoints);
    return ends;
}

void sprt_index_modules(struct sprt_state *state)
{
    GArray *ends = mmap_endpoints(state->mmaps);
    GArray *spans = g_array_new(FALSE, FALSE, sizeof(struct sprt_module_span));
    /* The mmaps that hold the place the sweep has reached: its first node is the first in log order. */
    GTree *holding = g_tree_new(compare_mmaps);
    for (guint at = 0; at < ends->len;) {
        uint64_t place = g_array_index(ends, struct endpoint, at).at;
        for (; at < ends->len && g_array_index(ends, struct endpoint, at).at == place; at++) {
            const struct endpoint *e = &g_array_index(ends, struct endpoint, at);
            if (e->starts)
                g_tree_insert(holding, GUINT_TO_POINTER(e->mmap), NULL);
            else
                g_tree_remove(holding, GUINT_TO_POINTER(e->mmap));
        }
        GTreeNode *first = g_tree_node_first(holding);
        struct sprt_module_span span = { place, first ? GPOINTER_TO_UINT(g_tree_node_key(first)) : NO_MMAP };
        if (!spans->len || g_array_index(spans, struct sprt_module_span, spans->len - 1).mmap != span.mmap)
            g_array_append_val(spans, span);
    }
    g_tree_destroy(holding);
    g_array_unref(ends);
    state->module_spans = spans;
}

const struct sprt_mmap *sprt_module_of(const struct sprt_state *state, uint64_t address)
{
    size_t after = SORTED_UPTO(state->module_spans, struct sprt_module_span, from, address);
    if (after == 0)
        return NULL;
    uint32_t mmap = g_array_index(state->module_spans, struct sprt_module_span, after - 1).mmap;
    return mmap == NO_MMAP ? NULL : &g_array_index(state->mmaps, struct sprt_mmap, mmap);
}
