/* Big tables copied out of a saved index: backed by huge pages where the
 * kernel leaves that to the program (transparent_hugepage=madvise, as on
 * Debian 12). */
#ifndef TRACEFS_HUGE_PAGES_H
#define TRACEFS_HUGE_PAGES_H

#include <stddef.h>

/* Asks for huge pages over the 2 MiB-aligned part of [start, start+length).
 * Only a hint: nothing changes where huge pages are off or unavailable. */
void huge_pages_advise(void *start, size_t length);

#endif
