/* A stream: the logical bytes a decoder reads, whatever their storage.
 * Either a plain file read through the chunk cache in fixed blocks, or a
 * table of compressed chunks decompressed on demand into the chunk cache.
 * All reads are bounds-checked and thread-safe. */
#ifndef TRACEFS_STREAM_H
#define TRACEFS_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <glib.h>
#include "codec.h"

struct chunk_cache;
struct stream;

/* pread until len bytes, the end of the file, or an error (EINTR retried).
 * Returns bytes read or a negative errno.  For containers' framing reads. */
ssize_t file_pread_full(int fd, void *buf, size_t len, uint64_t offset);

/* A plain file: `fd` is borrowed (owned by the trace) and must stay open. */
struct stream *stream_new_file(struct chunk_cache *cache, const char *name, int fd, uint64_t size);

/* The most chunks a container file of file_bytes may index: the table
 * within a quarter of the tables' floor and 1 % of the file
 * (limit_table_budget), so that a file of tiny blocks (an rr or snappy
 * block, a zstd frame, every few bytes) cannot hold an entry per few bytes
 * against the memory rule.  Real containers have a block per tens of KiB
 * or more; past it a container stops with an /errors line. */
uint64_t stream_chunk_budget(uint64_t file_bytes);
/* Entries a chunk of `size` decoded bytes takes in a stream's table: its
 * sub-chunks, or 1.  What a container counts against stream_chunk_budget. */
uint64_t stream_chunk_parts(enum codec codec, uint64_t size);
/* The same budget in bytes: a table's entries and the windows they hold. */
uint64_t stream_table_budget_bytes(uint64_t file_bytes);

/* TRUE for the entry of a chunk table that holds its window; the sub-chunks
 * after a gzip chunk's first share it. */
gboolean stream_chunk_owns_window(const struct chunk_entry *chunks, size_t index);

/* A compressed stream over `fd`.  Takes ownership of `chunks` (g_malloc'd,
 * sorted by stream_offset, contiguous) and of the windows they point to
 * (each g_malloc'd; sub-chunks' shared as stream_chunk_owns_window says).
 * A brotli or zstd chunk above LIMIT_SUBCHUNK_THRESHOLD, a gzip chunk
 * above LIMIT_GZIP_SUBCHUNK_THRESHOLD, becomes sub-chunks
 * (chunk_entry.part), which stream_chunk() then lists; a chunk that stays
 * whole above LIMIT_CHUNK_BYTES ends the stream there. */
struct stream *stream_new_chunked(struct chunk_cache *cache, const char *name, int fd,
                                  enum codec codec, struct chunk_entry *chunks, size_t chunk_count);

void stream_free(struct stream *stream);

/* Loading ahead of a sequential reader: between these two calls, the
 * calling thread's cursors, on entering a chunk, hand the chunks after it
 * not handed out yet (LIMIT_STREAM_LOAD_AHEAD_*, within an eighth of the
 * cache) to `load_ahead`, which has stream_load_ahead(stream, chunk) run
 * on another thread.  They do not nest. */
typedef void (*stream_load_ahead_fn)(void *data, struct stream *stream, size_t chunk);
void stream_load_ahead_begin(stream_load_ahead_fn load_ahead, void *data);
void stream_load_ahead_end(void);
/* Loads the chunk into the cache, unpinned, unless it is there or being
 * loaded (or is a sub-chunk, whose decoder window would be held twice).
 * A chunk that fails is not remembered as damaged (the reader, if it gets
 * there, loads it again and fails itself): what a reader reports never
 * depends on what was loaded ahead of it. */
void stream_load_ahead(struct stream *stream, size_t chunk);

/* Puts a whole chunk's bytes, decoded elsewhere (a container's scan of
 * its file), into the cache, unpinned, so that its first reader does not
 * decode it again.  FALSE when it is held already, is a sub-chunk, or
 * `size` is not its size. */
gboolean stream_seed_chunk(struct stream *stream, size_t chunk, const uint8_t *data, size_t size);

/* Drops the stream's chunks from the cache: the next reads decode them
 * from the file again (how tests check a table's seek points). */
void stream_forget_cached(struct stream *stream);

/* Counts, into *counter (atomically), every byte this stream reads from its
 * file: how indexing progress is measured. */
void stream_count_loads(struct stream *stream, gint64 *counter);

/* TRUE when the stream's file is no longer the one it was made from
 * (size or mtime changed): what was read from it cannot be trusted. */
gboolean stream_file_changed(const struct stream *stream);

/* TRUE when a chunk of the stream could not be read or decompressed while
 * its file was unchanged (the trace is damaged there); gives the last such
 * chunk's offsets in the file and in the stream. */
gboolean stream_failed_chunk(const struct stream *stream, uint64_t *file_offset, uint64_t *stream_offset);

const char *stream_name(const struct stream *stream);
uint64_t stream_size(const struct stream *stream);
enum codec stream_codec(const struct stream *stream);
size_t stream_chunk_count(const struct stream *stream);
const struct chunk_entry *stream_chunk(const struct stream *stream, size_t index);

/* Copies up to `len` bytes at `offset` into buf.  Returns the number of bytes
 * copied (short only at the end of the stream) or a negative errno (-EIO when
 * a chunk cannot be read or decompressed). */
ssize_t stream_read(struct stream *stream, uint64_t offset, void *buf, size_t len);

/* Reads exactly len bytes; returns 0, -ENODATA when the stream ends first,
 * or another negative errno. */
int stream_read_exact(struct stream *stream, uint64_t offset, void *buf, size_t len);

/* A sequential reader that keeps the current chunk pinned: the fast path for
 * index passes and record decoding.  Not shared between threads. */
struct stream_cursor {
    struct stream *stream;
    uint64_t offset;          /* next byte to read */
    /* private */
    const uint8_t *chunk_data;
    uint64_t chunk_start, chunk_end;
    void *pin;
};

void stream_cursor_init(struct stream_cursor *cursor, struct stream *stream, uint64_t offset);
void stream_cursor_finish(struct stream_cursor *cursor);   /* releases the pin */
/* Between these two calls (they nest), a finished cursor's chunk stays
 * pinned for the calling thread's next cursor on it: for a loop that reads
 * record after record.  The last end releases every such pin. */
void stream_hold_begin(void);
void stream_hold_end(void);
/* Reads exactly len bytes at the cursor and advances; 0, -ENODATA or -errno. */
int stream_cursor_read(struct stream_cursor *cursor, void *buf, size_t len);
/* Pointer to the next len bytes when they lie inside one chunk (no copy),
 * else NULL (use stream_cursor_read).  Does not advance. */
const uint8_t *stream_cursor_peek(struct stream_cursor *cursor, size_t len);
void stream_cursor_seek(struct stream_cursor *cursor, uint64_t offset);

#endif
