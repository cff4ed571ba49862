/* A first touch of a fresh 4 KiB page is a fault, and the kernel zeroes
 * the page: filling XRay's 160 MB of tables for a 25 MB log took 40,000
 * faults, most of a remount's time.  With 2 MiB pages that is 80. */
#include <stdint.h>
#include <sys/mman.h>
#include "huge_pages.h"

#define HUGE_PAGE_BYTES ((uintptr_t)2 << 20)

void huge_pages_advise(void *start, size_t length)
{
#ifdef MADV_HUGEPAGE
    if (!start)
        return;
    uintptr_t from = ((uintptr_t)start + HUGE_PAGE_BYTES - 1) & ~(HUGE_PAGE_BYTES - 1);
    uintptr_t to = ((uintptr_t)start + length) & ~(HUGE_PAGE_BYTES - 1);
    if (to > from)
        (void)madvise((void *)from, to - from, MADV_HUGEPAGE);
#else
    (void)start;
    (void)length;
#endif
}
