/* A trace made of just what the stream readers use (its file, a chunk
 * cache, its streams), for tests of compressed_file_* without a decoder. */
#ifndef TRACEFS_TEST_TRACE_FIXTURE_H
#define TRACEFS_TEST_TRACE_FIXTURE_H

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib.h>
#include "chunk_cache.h"
#include "stream.h"
#include "trace.h"

static inline void trace_fixture_open(struct trace *trace, const char *path, uint64_t cache_budget)
{
    *trace = (struct trace){ 0 };
    trace->fd = open(path, O_RDONLY);
    g_assert_cmpint(trace->fd, >=, 0);
    g_assert_cmpint(fstat(trace->fd, &trace->st), ==, 0);
    trace->cache = chunk_cache_new(cache_budget);
    trace->streams = g_ptr_array_new_with_free_func((GDestroyNotify)stream_free);
}

static inline void trace_fixture_close(struct trace *trace)
{
    g_ptr_array_free(trace->streams, TRUE);
    chunk_cache_free(trace->cache);
    close(trace->fd);
}

#endif
