/* A compressed stream's chunk table in a saved index: a format whose trace
 * is a chunked container (apitrace's) saves the table its index pass built,
 * so that a second mount reads no container header.  The layout is the
 * stream layer's (cache/codec.h's chunk_entry), not the format's. */
#ifndef TRACEFS_SAVED_STREAM_H
#define TRACEFS_SAVED_STREAM_H

#include <stdint.h>
#include "saved_bytes.h"

struct stream;
struct chunk_cache;

/* The codec, the count, then per chunk its offsets, sizes, seek point and
 * flags (and its 32 KiB window where it has one). */
void saved_put_stream(struct saved_writer *out, const struct stream *stream);
/* The bytes saved_put_stream writes for `stream`. */
uint64_t saved_stream_bytes(const struct stream *stream);
/* A new stream `name` over fd from a table saved by saved_put_stream, each
 * chunk checked against file_size, the stream layer's limits and the chunk
 * before it; NULL (and reader->bad) when the table is bad or empty. */
struct stream *saved_get_stream(struct saved_reader *reader, struct chunk_cache *cache, const char *name, int fd,
                                uint64_t file_size);

#endif
