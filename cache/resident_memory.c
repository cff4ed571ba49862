/* /proc/self/statm's second field is the resident pages; the file stays
 * open so that a reading is one pread, cheap enough under the cache lock. */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "resident_memory.h"

static int statm_fd = -1;
static pthread_once_t statm_once = PTHREAD_ONCE_INIT;

static void open_statm(void)
{
    statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
}

uint64_t resident_memory_bytes(void)
{
    pthread_once(&statm_once, open_statm);
    if (statm_fd < 0)
        return 0;
    char text[128];
    ssize_t n = pread(statm_fd, text, sizeof text - 1, 0);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    char *end;
    (void)strtoull(text, &end, 10);              /* total size */
    unsigned long long pages = strtoull(end, NULL, 10);
    long page_bytes = sysconf(_SC_PAGESIZE);
    return page_bytes > 0 ? (uint64_t)pages * (uint64_t)page_bytes : 0;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define SHADOW_MEMORY 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SHADOW_MEMORY 1
#endif

bool resident_memory_is_meaningful(void)
{
#ifdef SHADOW_MEMORY
    return false;
#else
    return true;
#endif
}
