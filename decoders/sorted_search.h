/* Binary search over the decoders' sorted side tables (offsets, counts,
 * times, addresses), each an array of structs ordered by one 64-bit
 * member: one loop instead of a copy per table. */
#ifndef TRACEFS_SORTED_SEARCH_H
#define TRACEFS_SORTED_SEARCH_H

#include <stddef.h>
#include <stdint.h>

/* `count` items of `size` bytes at `items`, whose uint64_t member at byte
 * `field` never decreases along the array: how many come first whose
 * member is below `key`, which is the index of the first at or above it. */
size_t sorted_count_below(const void *items, size_t count, size_t size, size_t field, uint64_t key);
/* The same for the members at most `key`: the index of the first above it. */
size_t sorted_count_upto(const void *items, size_t count, size_t size, size_t field, uint64_t key);
/* sorted_count_below for an int64_t member. */
size_t sorted_count_below_signed(const void *items, size_t count, size_t size, size_t field, int64_t key);

/* The same over a GArray of `type`, ordered by its 64-bit `member`. */
#define SORTED_MEMBER_CHECK(type, member) ((void)sizeof(char[sizeof(((type *)0)->member) == 8 ? 1 : -1]))
#define SORTED_BELOW(array, type, member, key)                                                                 \
    (SORTED_MEMBER_CHECK(type, member),                                                                        \
     sorted_count_below((array)->data, (array)->len, sizeof(type), offsetof(type, member), (key)))
#define SORTED_UPTO(array, type, member, key)                                                                  \
    (SORTED_MEMBER_CHECK(type, member),                                                                        \
     sorted_count_upto((array)->data, (array)->len, sizeof(type), offsetof(type, member), (key)))
#define SORTED_BELOW_SIGNED(array, type, member, key)                                                          \
    (SORTED_MEMBER_CHECK(type, member),                                                                        \
     sorted_count_below_signed((array)->data, (array)->len, sizeof(type), offsetof(type, member), (key)))

/* qsort / g_array_sort comparisons of the uint32_t or uint64_t at the
 * start of each item. */
int sorted_compare_u32(const void *a, const void *b);
int sorted_compare_u64(const void *a, const void *b);

#endif
