/* Writing and reading a format's side tables for the persistent index
 * (format.h's save/load hooks).  The reader never trusts a count or a
 * length: a short or inconsistent buffer sets `bad` and reads as zeros. */
#ifndef TRACEFS_SAVED_BYTES_H
#define TRACEFS_SAVED_BYTES_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

/* What a format's save hook writes.  Small fields are copied; a block of
 * SAVED_BLOCK_BYTES or more is kept by reference and written from where it
 * is, so saving a table does not hold it twice (the memory rule allows the
 * tables once: a hostile rr trace fills its 4 MiB budget with frames).  Such
 * a block must stay unchanged until the writer is written out or joined,
 * which index_file_save does before it returns. */
#define SAVED_BLOCK_BYTES ((size_t)64 << 10)

struct saved_block {
    size_t bytes_before;     /* how much of `bytes` comes before it */
    const uint8_t *data;
    size_t size;
};

struct saved_writer {
    GByteArray *bytes;
    GArray *blocks;          /* struct saved_block, in order */
    size_t size;             /* of everything written */
};

struct saved_writer *saved_writer_new(void);
void saved_writer_free(struct saved_writer *writer);
/* Calls `piece` with each stretch of the output in order; stops at the
 * first nonzero return and returns it. */
int saved_writer_foreach(const struct saved_writer *writer,
                         int (*piece)(const uint8_t *data, size_t size, void *context), void *context);
/* The whole output in one array (for tests and small states). */
GByteArray *saved_writer_join(const struct saved_writer *writer);
/* The whole output in one array, and the writer freed: its bytes are taken
 * as they are when it holds no blocks, joined into a copy when it does. */
GByteArray *saved_writer_finish(struct saved_writer *writer);

void saved_put(struct saved_writer *out, const void *data, size_t size);
void saved_put_u64(struct saved_writer *out, uint64_t value);
/* A length and the bytes, which may hold NULs. */
void saved_put_bytes(struct saved_writer *out, const void *data, size_t size);
/* A length and the bytes; NULL is kept apart from "". */
void saved_put_string(struct saved_writer *out, const char *text);
void saved_put_gstring(struct saved_writer *out, const GString *text);
/* A count and the elements of an array of plain structs. */
void saved_put_array(struct saved_writer *out, const GArray *array);
/* A count and the elements of a uint32 array, each as a uint64 word. */
void saved_put_u32_array(struct saved_writer *out, const GArray *values);

struct saved_reader {
    const uint8_t *data;
    size_t size, at;
    gboolean bad;
    gboolean mapped;   /* data is a private read-only file mapping */
};

void saved_reader_init(struct saved_reader *reader, const uint8_t *data, size_t size);
/* For a format's load hook, whose bytes are the mapped index file
 * (format.h): the pages of big blocks copied out are released behind the
 * copy, so a remount does not hold the tables twice. */
void saved_reader_init_mapped(struct saved_reader *reader, const uint8_t *data, size_t size);
/* Drops the whole pages of [start, start + length) of a private read-only
 * file mapping from memory; they stay in the page cache and read again
 * from it if touched.  Never for other memory: its contents would be lost. */
void saved_release_mapped(const void *start, size_t length);
gboolean saved_take(struct saved_reader *reader, void *out, size_t size);
uint64_t saved_get_u64(struct saved_reader *reader);
/* A value below `bound`; any other is bad and reads as 0. */
uint64_t saved_get_below(struct saved_reader *reader, uint64_t bound);
/* A count of items of at least item_bytes each (0: any size).  More than
 * max_count, or more than the bytes left can hold, is bad and reads as 0, so
 * a count read here is safe to allocate for. */
uint64_t saved_get_count(struct saved_reader *reader, size_t item_bytes, uint64_t max_count);
/* Bytes saved by saved_put_bytes, in place in the reader's data (valid as
 * long as it is).  Longer than max_length: bad, and NULL. */
const char *saved_get_bytes(struct saved_reader *reader, size_t max_length, size_t *length);
/* A string saved by saved_put_string, g_malloc'd; NULL when NULL was saved
 * or on error (then `bad`).  Longer than max_length or holding a NUL: bad. */
char *saved_get_string(struct saved_reader *reader, size_t max_length);
GString *saved_get_gstring(struct saved_reader *reader, size_t max_length);
/* Bytes saved by saved_put_bytes as a g_malloc'd NUL-terminated copy that
 * may hold NULs (a name from the trace), its length in *length; NULL when
 * longer than max_length or on error (then `bad`). */
char *saved_get_name(struct saved_reader *reader, size_t max_length, size_t *length);
/* Fills `array` (of element_size elements) with at most max_count saved ones. */
gboolean saved_get_array(struct saved_reader *reader, GArray *array, uint64_t max_count);
/* Appends to `values` (uint32) at most max_count saved by saved_put_u32_array;
 * a word above UINT32_MAX is bad. */
gboolean saved_get_u32_array(struct saved_reader *reader, GArray *values, uint64_t max_count);
/* TRUE when everything was read, nothing left over and nothing bad. */
gboolean saved_reader_done(const struct saved_reader *reader);

#endif
