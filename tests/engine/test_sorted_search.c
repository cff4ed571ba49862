/* decoders/sorted_search.c: the counts agree with a linear scan, for
 * unsigned and signed members, repeated keys, and empty arrays. */
#include <glib.h>
#include "sorted_search.h"

struct item {
    uint32_t other;
    uint64_t key;
    int64_t time;
};

static size_t linear_count(const struct item *items, size_t count, uint64_t key, gboolean upto)
{
    size_t n = 0;
    while (n < count && (items[n].key < key || (upto && items[n].key == key)))
        n++;
    return n;
}

static size_t linear_count_signed(const struct item *items, size_t count, int64_t key)
{
    size_t n = 0;
    while (n < count && items[n].time < key)
        n++;
    return n;
}

static void test_against_linear(void)
{
    /* Keys with repeats and the extremes; times crossing zero. */
    static const uint64_t keys[] = { 0, 0, 3, 7, 7, 7, 10, UINT64_MAX - 1, UINT64_MAX };
    static const int64_t times[] = { INT64_MIN, -5, -5, -1, 0, 0, 4, 9, INT64_MAX };
    struct item items[G_N_ELEMENTS(keys)];
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        items[i] = (struct item){ .other = 99, .key = keys[i], .time = times[i] };
    GArray *array = g_array_new(FALSE, FALSE, sizeof(struct item));
    for (size_t count = 0; count <= G_N_ELEMENTS(items); count++) {
        g_array_set_size(array, 0);
        g_array_append_vals(array, items, (guint)count);
        static const uint64_t probes[] = { 0, 1, 3, 6, 7, 8, 10, 11, UINT64_MAX - 1, UINT64_MAX };
        for (size_t p = 0; p < G_N_ELEMENTS(probes); p++) {
            g_assert_cmpuint(SORTED_BELOW(array, struct item, key, probes[p]), ==,
                             linear_count(items, count, probes[p], FALSE));
            g_assert_cmpuint(SORTED_UPTO(array, struct item, key, probes[p]), ==,
                             linear_count(items, count, probes[p], TRUE));
        }
        static const int64_t when[] = { INT64_MIN, INT64_MIN + 1, -6, -5, -1, 0, 1, 4, 9, INT64_MAX };
        for (size_t p = 0; p < G_N_ELEMENTS(when); p++)
            g_assert_cmpuint(sorted_count_below_signed(items, count, sizeof(struct item),
                                                       G_STRUCT_OFFSET(struct item, time), when[p]),
                             ==, linear_count_signed(items, count, when[p]));
    }
    g_array_free(array, TRUE);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sorted_search/against_linear", test_against_linear);
    return g_test_run();
}
