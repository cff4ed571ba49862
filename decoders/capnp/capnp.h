/* A small, bounds-checked Cap'n Proto reader: packed stream framing,
 * segment tables, struct/list/far pointers, with a traversal limit (words
 * of objects visited) and a nesting limit, so that pointer loops and
 * absurd sizes in a damaged trace end as errors, never as crashes. */
#ifndef TRACEFS_CAPNP_H
#define TRACEFS_CAPNP_H

#include <stddef.h>
#include <stdint.h>

struct stream;

struct capnp_segment {
    const uint8_t *words;
    uint32_t word_count;
};

struct capnp_message {
    uint8_t *buffer;               /* owned: all segments, unpacked, then the segment table */
    size_t buffer_bytes;           /* the block's size (capnp_message_clear may keep it) */
    struct capnp_segment *segments;
    uint32_t segment_count;
    uint64_t traversal_left;       /* words that may still be visited */
    const char *error;             /* why the last operation failed */
};

/* Reads one packed message at `offset`; on success sets *end to the byte
 * after it.  Returns 0, 1 at a clean end of stream, or -1 (msg->error). */
int capnp_read_packed(struct stream *stream, uint64_t offset, struct capnp_message *msg, uint64_t *end);
/* The same, but a message of more than keep_words words (and at most
 * LIMIT_RR_CAPNP_WORDS) is read past without being held: 2, with *end
 * after it and msg empty. */
int capnp_read_packed_bounded(struct stream *stream, uint64_t offset, uint64_t keep_words, struct capnp_message *msg,
                              uint64_t *end);
/* Reads one unpacked-then-packed message from memory (the `version` file). */
int capnp_read_packed_bytes(const uint8_t *data, size_t size, struct capnp_message *msg, size_t *end);
void capnp_message_clear(struct capnp_message *msg);
/* Tests: unpack with the portable code even where the CPU has the vector
 * instructions that unpacking uses (nonzero), or go back to choosing. */
void capnp_unpack_force_scalar(int scalar);

struct capnp_struct {
    struct capnp_message *msg;
    uint32_t segment;
    const uint8_t *data;
    uint32_t data_bytes;
    const uint8_t *pointers;       /* pointer section (ptr_count words) */
    uint32_t pointer_word;         /* word index of pointer 0 in segment */
    uint16_t ptr_count;
    uint16_t depth;
};

struct capnp_list {
    struct capnp_message *msg;
    uint32_t segment;
    const uint8_t *start;          /* first element (after the tag for composites) */
    uint32_t start_word;
    uint32_t count;
    uint32_t struct_data_words;    /* composite lists */
    uint16_t struct_ptr_count;
    uint8_t element_size;          /* capnp size code 0..7 */
    uint16_t depth;
};

/* The root struct. */
int capnp_root(struct capnp_message *msg, struct capnp_struct *out);

/* Data-section fields; bytes beyond a smaller struct read as 0. */
uint64_t capnp_u64(const struct capnp_struct *s, uint32_t byte_offset);
uint32_t capnp_u32(const struct capnp_struct *s, uint32_t byte_offset);
uint16_t capnp_u16(const struct capnp_struct *s, uint32_t byte_offset);
int capnp_bool(const struct capnp_struct *s, uint32_t bit_offset);

/* Pointer fields.  A null pointer gives an empty struct/list and returns 0;
 * -1 on a bad pointer (reason in msg->error). */
int capnp_get_struct(const struct capnp_struct *s, uint16_t index, struct capnp_struct *out);
int capnp_get_list(const struct capnp_struct *s, uint16_t index, struct capnp_list *out);
/* Data/Text: bytes of a byte list (size code 2); *data is NULL and *size 0
 * for a null pointer and on failure (what callers that show "" rely on). */
int capnp_get_data(const struct capnp_struct *s, uint16_t index, const uint8_t **data, size_t *size);
int capnp_is_null(const struct capnp_struct *s, uint16_t index);

/* Elements. */
int capnp_list_struct(const struct capnp_list *list, uint32_t i, struct capnp_struct *out);
uint32_t capnp_list_u32(const struct capnp_list *list, uint32_t i);
/* Data element i of a List(Data). */
int capnp_list_data(const struct capnp_list *list, uint32_t i, const uint8_t **data, size_t *size);

#endif
