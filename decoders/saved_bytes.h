/* Writing and reading a format's side tables for the persistent index
 * (format.h's save/load hooks).  The reader never trusts a count or a
 * length: a short or inconsistent buffer sets `bad` and reads as zeros. */
#ifndef TRACEFS_SAVED_BYTES_H
#define TRACEFS_SAVED_BYTES_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

void saved_put(GByteArray *out, const void *data, size_t size);
void saved_put_u64(GByteArray *out, uint64_t value);
/* A length and the bytes; NULL is kept apart from "". */
void saved_put_string(GByteArray *out, const char *text);
void saved_put_gstring(GByteArray *out, const GString *text);
/* A count and the elements of an array of plain structs. */
void saved_put_array(GByteArray *out, const GArray *array);

struct saved_reader {
    const uint8_t *data;
    size_t size, at;
    gboolean bad;
};

void saved_reader_init(struct saved_reader *reader, const uint8_t *data, size_t size);
gboolean saved_take(struct saved_reader *reader, void *out, size_t size);
uint64_t saved_get_u64(struct saved_reader *reader);
/* A string saved by saved_put_string, g_malloc'd; NULL when NULL was saved
 * or on error (then `bad`).  Longer than max_length or holding a NUL: bad. */
char *saved_get_string(struct saved_reader *reader, size_t max_length);
GString *saved_get_gstring(struct saved_reader *reader, size_t max_length);
/* Fills `array` (of element_size elements) with at most max_count saved ones. */
gboolean saved_get_array(struct saved_reader *reader, GArray *array, uint64_t max_count);
/* TRUE when everything was read, nothing left over and nothing bad. */
gboolean saved_reader_done(const struct saved_reader *reader);

#endif
