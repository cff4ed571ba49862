/* Per-reader-thread state of the decoders: views are rendered by many
 * threads at once, and a decoder that keeps what a read decoded for the
 * next read (packet buffers, a scan's results, call stacks) keeps it per
 * thread, freed by the key's destroy function when the thread ends. */
#ifndef TRACEFS_THREAD_VALUE_H
#define TRACEFS_THREAD_VALUE_H

#include <glib.h>
#include <stddef.h>

/* The calling thread's value under key, zeroed when first made. */
static inline void *thread_value(GPrivate *key, size_t size)
{
    void *value = g_private_get(key);
    if (!value) {
        value = g_malloc0(size);
        g_private_set(key, value);
    }
    return value;
}

#endif
