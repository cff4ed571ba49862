/* Binary search over arrays of structs sorted by a 64-bit member. */
#include <stdbool.h>
#include <string.h>
#include "sorted_search.h"

#define SIGN_BIT ((uint64_t)1 << 63)

/* How many items come first whose member is below key (or equal to it,
 * with `upto`).  Members and key are XORed with `flip`: SIGN_BIT puts
 * int64_t values in the order of their uint64_t bits. */
static size_t count_first(const void *items, size_t count, size_t size, size_t field, uint64_t key, bool upto,
                          uint64_t flip)
{
    size_t lo = 0, hi = count;
    key ^= flip;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t value;
        memcpy(&value, (const uint8_t *)items + mid * size + field, sizeof value);
        value ^= flip;
        if (value < key || (upto && value == key))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t sorted_count_below(const void *items, size_t count, size_t size, size_t field, uint64_t key)
{
    return count_first(items, count, size, field, key, false, 0);
}

size_t sorted_count_upto(const void *items, size_t count, size_t size, size_t field, uint64_t key)
{
    return count_first(items, count, size, field, key, true, 0);
}

size_t sorted_count_below_signed(const void *items, size_t count, size_t size, size_t field, int64_t key)
{
    return count_first(items, count, size, field, (uint64_t)key, false, SIGN_BIT);
}

int sorted_compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int sorted_compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}
