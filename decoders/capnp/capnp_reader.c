/* Cap'n Proto pointers: struct, list and far pointers resolved with every
 * offset and size checked against its segment, a traversal budget and a
 * nesting limit. */
#include <glib.h>
#include <string.h>

#include "capnp.h"
#include "text.h"
#include "tracefs_limits.h"

static int fail(struct capnp_message *msg, const char *why)
{
    msg->error = why;
    return -1;
}

static uint64_t word_at(const struct capnp_message *msg, uint32_t segment, uint64_t index)
{
    return load_le64(msg->segments[segment].words + index * 8);
}

static int charge(struct capnp_message *msg, uint64_t words)
{
    if (words == 0)
        words = 1;   /* even empty objects cost something: loops must end */
    if (msg->traversal_left < words)
        return fail(msg, "traversal limit exceeded (pointer loop?)");
    msg->traversal_left -= words;
    return 0;
}

/* Follows a far pointer if needed.  Out: the pointer word describing the
 * object (its tag) and the object's first word. */
static int resolve(struct capnp_message *msg, uint32_t segment, uint64_t pointer_word,
                   uint64_t *tag, uint32_t *out_segment, uint64_t *out_word)
{
    uint64_t w = word_at(msg, segment, pointer_word);
    if ((w & 3) == 2) {
        uint64_t pad_segment = w >> 32;
        uint64_t pad_offset = (w >> 3) & 0x1fffffff;
        int double_pad = (int)((w >> 2) & 1);
        if (pad_segment >= msg->segment_count ||
            pad_offset + 1 + (uint64_t)double_pad > msg->segments[pad_segment].word_count)
            return fail(msg, "far pointer out of bounds");
        uint64_t pad = word_at(msg, (uint32_t)pad_segment, pad_offset);
        if (!double_pad) {
            if ((pad & 3) == 2)
                return fail(msg, "far pointer to a far pointer");
            segment = (uint32_t)pad_segment;
            pointer_word = pad_offset;
            w = pad;
        } else {
            if ((pad & 3) != 2 || ((pad >> 2) & 1))
                return fail(msg, "bad double-far landing pad");
            uint64_t content_segment = pad >> 32;
            if (content_segment >= msg->segment_count)
                return fail(msg, "far pointer to a missing segment");
            *tag = word_at(msg, (uint32_t)pad_segment, pad_offset + 1);
            *out_segment = (uint32_t)content_segment;
            *out_word = (pad >> 3) & 0x1fffffff;
            return 0;
        }
    }
    int64_t offset = (int32_t)(uint32_t)w >> 2;
    int64_t target = (int64_t)pointer_word + 1 + offset;
    if (target < 0)
        return fail(msg, "pointer before its segment");
    *tag = w;
    *out_segment = segment;
    *out_word = (uint64_t)target;
    return 0;
}

static int in_segment(const struct capnp_message *msg, uint32_t segment, uint64_t word, uint64_t words)
{
    uint64_t size = msg->segments[segment].word_count;
    return word <= size && words <= size - word;
}

static void empty_struct(struct capnp_message *msg, struct capnp_struct *out, uint16_t depth)
{
    memset(out, 0, sizeof *out);
    out->msg = msg;
    out->depth = depth;
}

static int make_struct(struct capnp_message *msg, uint64_t tag, uint32_t segment, uint64_t word,
                       uint16_t depth, struct capnp_struct *out)
{
    uint32_t data_words = (uint32_t)((tag >> 32) & 0xffff);
    uint16_t ptr_count = (uint16_t)(tag >> 48);
    if (depth > LIMIT_CAPNP_DEPTH)
        return fail(msg, "nesting limit exceeded");
    if (!in_segment(msg, segment, word, (uint64_t)data_words + ptr_count))
        return fail(msg, "struct out of bounds");
    if (charge(msg, (uint64_t)data_words + ptr_count) < 0)
        return -1;
    out->msg = msg;
    out->segment = segment;
    out->data = msg->segments[segment].words + word * 8;
    out->data_bytes = data_words * 8;
    out->pointers = out->data + out->data_bytes;
    out->pointer_word = (uint32_t)(word + data_words);
    out->ptr_count = ptr_count;
    out->depth = depth;
    return 0;
}

int capnp_root(struct capnp_message *msg, struct capnp_struct *out)
{
    empty_struct(msg, out, 0);
    if (msg->segment_count == 0 || msg->segments[0].word_count == 0)
        return fail(msg, "empty message");
    if (word_at(msg, 0, 0) == 0)
        return 0;
    uint64_t tag, word;
    uint32_t segment;
    if (resolve(msg, 0, 0, &tag, &segment, &word) < 0)
        return -1;
    if ((tag & 3) != 0)
        return fail(msg, "root is not a struct");
    return make_struct(msg, tag, segment, word, 0, out);
}

uint64_t capnp_u64(const struct capnp_struct *s, uint32_t byte_offset)
{
    if ((uint64_t)byte_offset + 8 > s->data_bytes)
        return 0;
    return load_le64(s->data + byte_offset);
}

uint32_t capnp_u32(const struct capnp_struct *s, uint32_t byte_offset)
{
    if ((uint64_t)byte_offset + 4 > s->data_bytes)
        return 0;
    return load_le32(s->data + byte_offset);
}

uint16_t capnp_u16(const struct capnp_struct *s, uint32_t byte_offset)
{
    if ((uint64_t)byte_offset + 2 > s->data_bytes)
        return 0;
    return load_le16(s->data + byte_offset);
}

int capnp_bool(const struct capnp_struct *s, uint32_t bit_offset)
{
    if (bit_offset / 8 >= s->data_bytes)
        return 0;
    return (s->data[bit_offset / 8] >> (bit_offset % 8)) & 1;
}

int capnp_is_null(const struct capnp_struct *s, uint16_t index)
{
    return index >= s->ptr_count || load_le64(s->pointers + (size_t)index * 8) == 0;
}

int capnp_get_struct(const struct capnp_struct *s, uint16_t index, struct capnp_struct *out)
{
    empty_struct(s->msg, out, (uint16_t)(s->depth + 1));
    if (capnp_is_null(s, index))
        return 0;
    uint64_t tag, word;
    uint32_t segment;
    if (resolve(s->msg, s->segment, (uint64_t)s->pointer_word + index, &tag, &segment, &word) < 0)
        return -1;
    if ((tag & 3) != 0)
        return fail(s->msg, "expected a struct pointer");
    return make_struct(s->msg, tag, segment, word, (uint16_t)(s->depth + 1), out);
}

static const uint32_t element_bits[8] = { 0, 1, 8, 16, 32, 64, 64, 0 };

int capnp_get_list(const struct capnp_struct *s, uint16_t index, struct capnp_list *out)
{
    memset(out, 0, sizeof *out);
    out->msg = s->msg;
    out->depth = (uint16_t)(s->depth + 1);
    if (capnp_is_null(s, index))
        return 0;
    struct capnp_message *msg = s->msg;
    if (out->depth > LIMIT_CAPNP_DEPTH)
        return fail(msg, "nesting limit exceeded");
    uint64_t tag, word;
    uint32_t segment;
    if (resolve(msg, s->segment, (uint64_t)s->pointer_word + index, &tag, &segment, &word) < 0)
        return -1;
    if ((tag & 3) != 1)
        return fail(msg, "expected a list pointer");
    uint8_t size_code = (uint8_t)((tag >> 32) & 7);
    uint64_t count = tag >> 35;
    out->segment = segment;
    out->element_size = size_code;
    if (size_code == 7) {
        /* count is the word count of the elements; a tag word precedes them. */
        if (!in_segment(msg, segment, word, count + 1))
            return fail(msg, "list out of bounds");
        uint64_t element_tag = word_at(msg, segment, word);
        if ((element_tag & 3) != 0)
            return fail(msg, "composite list tag is not a struct");
        uint64_t elements = (element_tag >> 2) & 0x3fffffff;
        uint64_t data_words = (element_tag >> 32) & 0xffff;
        uint64_t ptr_count = element_tag >> 48;
        if (elements * (data_words + ptr_count) > count)
            return fail(msg, "composite list larger than its words");
        /* Zero-sized elements take no words: a few bytes could claim 2^30
         * of them, so each element costs a word, as in Cap'n Proto's own
         * reader (its amplification guard). */
        if (charge(msg, MAX(count, elements)) < 0)
            return -1;
        out->count = (uint32_t)elements;
        out->struct_data_words = (uint32_t)data_words;
        out->struct_ptr_count = (uint16_t)ptr_count;
        out->start_word = (uint32_t)(word + 1);
    } else {
        uint64_t words = size_code == 6 ? count : (count * element_bits[size_code] + 63) / 64;
        if (!in_segment(msg, segment, word, words))
            return fail(msg, "list out of bounds");
        if (charge(msg, size_code == 0 ? count : words) < 0)   /* void lists: as above */
            return -1;
        out->count = (uint32_t)count;
        out->start_word = (uint32_t)word;
    }
    out->start = msg->segments[segment].words + (uint64_t)out->start_word * 8;
    return 0;
}

int capnp_get_data(const struct capnp_struct *s, uint16_t index, const uint8_t **data, size_t *size)
{
    struct capnp_list list;
    *data = NULL;
    *size = 0;
    if (capnp_get_list(s, index, &list) < 0)
        return -1;
    if (list.count == 0)
        return 0;
    if (list.element_size != 2)
        return fail(s->msg, "expected a byte list");
    *data = list.start;
    *size = list.count;
    return 0;
}

int capnp_list_struct(const struct capnp_list *list, uint32_t i, struct capnp_struct *out)
{
    empty_struct(list->msg, out, list->depth);
    if (i >= list->count)
        return fail(list->msg, "list index out of range");
    if (list->element_size != 7)
        return fail(list->msg, "expected a struct list");
    uint64_t stride = (uint64_t)list->struct_data_words + list->struct_ptr_count;
    uint64_t word = list->start_word + (uint64_t)i * stride;
    out->segment = list->segment;
    out->data = list->msg->segments[list->segment].words + word * 8;
    out->data_bytes = list->struct_data_words * 8;
    out->pointers = out->data + out->data_bytes;
    out->pointer_word = (uint32_t)(word + list->struct_data_words);
    out->ptr_count = list->struct_ptr_count;
    return 0;
}

uint32_t capnp_list_u32(const struct capnp_list *list, uint32_t i)
{
    if (i >= list->count)
        return 0;
    if (list->element_size == 4)
        return load_le32(list->start + (size_t)i * 4);
    if (list->element_size == 5)
        return (uint32_t)load_le64(list->start + (size_t)i * 8);
    return 0;
}

int capnp_list_data(const struct capnp_list *list, uint32_t i, const uint8_t **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    if (i >= list->count || list->element_size != 6)
        return fail(list->msg, "expected a list of pointers");
    struct capnp_struct holder = {
        .msg = list->msg, .segment = list->segment,
        .pointers = list->start + (size_t)i * 8, .pointer_word = list->start_word + i,
        .ptr_count = (uint16_t)1, .depth = list->depth,
    };
    return capnp_get_data(&holder, 0, data, size);
}
