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

/* A min-heap of mmap indexes: the first mmap among those that hold the
 * place the sweep has reached (ended ones are dropped when on top). */
static void heap_push(GArray *heap, uint32_t mmap)
{
    g_array_append_val(heap, mmap);
    uint32_t *h = (uint32_t *)heap->data;
    for (guint at = heap->len - 1; at > 0 && h[(at - 1) / 2] > h[at]; at = (at - 1) / 2) {
        uint32_t parent = h[(at - 1) / 2];
        h[(at - 1) / 2] = h[at];
        h[at] = parent;
    }
}

static void heap_pop(GArray *heap)
{
    uint32_t *h = (uint32_t *)heap->data;
    h[0] = h[heap->len - 1];
    g_array_set_size(heap, heap->len - 1);
    for (guint at = 0;;) {
        guint least = at, left = 2 * at + 1, right = left + 1;
        if (left < heap->len && h[left] < h[least])
            least = left;
        if (right < heap->len && h[right] < h[least])
            least = right;
        if (least == at)
            return;
        uint32_t swap = h[at];
        h[at] = h[least];
        h[least] = swap;
        at = least;
    }
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
    GArray *heap = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    gboolean *holds = g_new0(gboolean, state->mmaps->len ? state->mmaps->len : 1);
    for (guint at = 0; at < ends->len;) {
        uint64_t place = g_array_index(ends, struct endpoint, at).at;
        for (; at < ends->len && g_array_index(ends, struct endpoint, at).at == place; at++) {
            const struct endpoint *e = &g_array_index(ends, struct endpoint, at);
            holds[e->mmap] = e->starts;
            if (e->starts)
                heap_push(heap, e->mmap);
        }
        while (heap->len && !holds[g_array_index(heap, uint32_t, 0)])
            heap_pop(heap);
        struct sprt_module_span span = { place, heap->len ? g_array_index(heap, uint32_t, 0) : NO_MMAP };
        if (!spans->len || g_array_index(spans, struct sprt_module_span, spans->len - 1).mmap != span.mmap)
            g_array_append_val(spans, span);
    }
    g_free(holds);
    g_array_unref(heap);
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
