/* The Cap'n Proto reader (decoders/capnp) on messages built here word by
 * word and packed: fields, text, lists and far pointers read back, and a
 * damaged message (bad pointer, missing segment, loop, short input) ends in
 * an error, never past its bytes. */
#include <string.h>
#include <glib.h>
#include "capnp/capnp.h"

static uint64_t struct_pointer(int32_t offset, uint16_t data_words, uint16_t ptr_count)
{
    return ((uint64_t)(uint32_t)offset << 2) | (uint64_t)data_words << 32 | (uint64_t)ptr_count << 48;
}

static uint64_t list_pointer(int32_t offset, unsigned size_code, uint32_t count)
{
    return 1 | ((uint64_t)(uint32_t)offset << 2) | (uint64_t)size_code << 32 | (uint64_t)count << 35;
}

static uint64_t far_pointer(uint32_t segment, uint32_t offset)
{
    return 2 | (uint64_t)offset << 3 | (uint64_t)segment << 32;
}

static void put_word(GByteArray *out, uint64_t word)
{
    uint8_t bytes[8];
    for (int i = 0; i < 8; i++)
        bytes[i] = (uint8_t)(word >> (8 * i));
    g_byte_array_append(out, bytes, 8);
}

/* Packs whole words: a tag of the nonzero bytes, then those bytes (and the
 * run count of 0 after a 0x00 or 0xff tag). */
static GByteArray *pack(const GByteArray *words)
{
    GByteArray *out = g_byte_array_new();
    for (guint at = 0; at < words->len; at += 8) {
        uint8_t tag = 0;
        for (int i = 0; i < 8; i++)
            if (words->data[at + i])
                tag |= (uint8_t)(1u << i);
        g_byte_array_append(out, &tag, 1);
        for (int i = 0; i < 8; i++)
            if (words->data[at + i])
                g_byte_array_append(out, &words->data[at + i], 1);
        if (tag == 0 || tag == 0xff) {
            uint8_t run = 0;
            g_byte_array_append(out, &run, 1);
        }
    }
    return out;
}

/* A message of the given segments (arrays of words), packed. */
static GByteArray *message(const uint64_t *const *segments, const uint32_t *sizes, uint32_t count)
{
    GByteArray *words = g_byte_array_new();
    uint32_t table[1 + 64] = { count - 1 };
    for (uint32_t i = 0; i < count; i++)
        table[1 + i] = sizes[i];
    uint32_t table_words = (count + 2) / 2;
    for (uint32_t i = 0; i < table_words; i++)
        put_word(words, table[2 * i] | (uint64_t)table[2 * i + 1] << 32);
    for (uint32_t s = 0; s < count; s++)
        for (uint32_t i = 0; i < sizes[s]; i++)
            put_word(words, segments[s][i]);
    GByteArray *packed = pack(words);
    g_byte_array_free(words, TRUE);
    return packed;
}

static int read_message(const GByteArray *packed, struct capnp_message *msg)
{
    size_t end = 0;
    int rc = capnp_read_packed_bytes(packed->data, packed->len, msg, &end);
    if (rc == 0)
        g_assert_cmpuint(end, ==, packed->len);
    return rc;
}

/* root { u64 @0, u32 @8, u16 @12, bool @bit 112; text @p0; List(UInt32) @p1;
 *        child @p2 { u64 } } */
static void test_fields(void)
{
    const char text[] = "hello";
    uint64_t text_word = 0;
    memcpy(&text_word, text, sizeof text);   /* little-endian host */
    const uint64_t words[] = {
        struct_pointer(0, 2, 3),
        UINT64_C(0x1122334455667788),
        7u | (uint64_t)0xbeef << 32 | (uint64_t)1 << 48,
        list_pointer(2, 2, sizeof text),
        list_pointer(2, 4, 3),
        struct_pointer(3, 1, 0),
        text_word,
        5u | (uint64_t)6 << 32,
        9u,
        UINT64_C(42),
    };
    const uint64_t *segments[] = { words };
    uint32_t sizes[] = { G_N_ELEMENTS(words) };
    GByteArray *packed = message(segments, sizes, 1);
    struct capnp_message msg;
    g_assert_cmpint(read_message(packed, &msg), ==, 0);
    struct capnp_struct root;
    g_assert_cmpint(capnp_root(&msg, &root), ==, 0);
    g_assert_cmpuint(capnp_u64(&root, 0), ==, UINT64_C(0x1122334455667788));
    g_assert_cmpuint(capnp_u32(&root, 8), ==, 7);
    g_assert_cmpuint(capnp_u16(&root, 12), ==, 0xbeef);
    g_assert_cmpint(capnp_bool(&root, 112), ==, 1);
    g_assert_cmpuint(capnp_u64(&root, 16), ==, 0);   /* past the data section: 0 */
    const uint8_t *data;
    size_t size;
    g_assert_cmpint(capnp_get_data(&root, 0, &data, &size), ==, 0);
    g_assert_cmpuint(size, ==, sizeof text);
    g_assert_cmpmem(data, size, text, sizeof text);
    struct capnp_list list;
    g_assert_cmpint(capnp_get_list(&root, 1, &list), ==, 0);
    g_assert_cmpuint(list.count, ==, 3);
    g_assert_cmpuint(capnp_list_u32(&list, 0), ==, 5);
    g_assert_cmpuint(capnp_list_u32(&list, 2), ==, 9);
    g_assert_cmpuint(capnp_list_u32(&list, 3), ==, 0);
    struct capnp_struct child;
    g_assert_cmpint(capnp_get_struct(&root, 2, &child), ==, 0);
    g_assert_cmpuint(capnp_u64(&child, 0), ==, 42);
    g_assert_true(capnp_is_null(&root, 3));
    g_assert_cmpint(capnp_get_struct(&root, 3, &child), ==, 0);   /* null: an empty struct */
    g_assert_cmpuint(child.data_bytes, ==, 0);
    capnp_message_clear(&msg);
    g_byte_array_free(packed, TRUE);
}

/* The root in segment 1 through a far pointer; its list of structs. */
static void test_far_pointer_and_struct_list(void)
{
    const uint64_t segment0[] = { far_pointer(1, 0) };
    const uint64_t segment1[] = {
        struct_pointer(0, 0, 1),
        list_pointer(0, 7, 2),
        struct_pointer(2, 1, 0),   /* the composite tag: 2 elements of one word */
        11u,
        12u,
    };
    const uint64_t *segments[] = { segment0, segment1 };
    uint32_t sizes[] = { 1, G_N_ELEMENTS(segment1) };
    GByteArray *packed = message(segments, sizes, 2);
    struct capnp_message msg;
    g_assert_cmpint(read_message(packed, &msg), ==, 0);
    struct capnp_struct root, element;
    g_assert_cmpint(capnp_root(&msg, &root), ==, 0);
    struct capnp_list list;
    g_assert_cmpint(capnp_get_list(&root, 0, &list), ==, 0);
    g_assert_cmpuint(list.count, ==, 2);
    g_assert_cmpint(capnp_list_struct(&list, 1, &element), ==, 0);
    g_assert_cmpuint(capnp_u64(&element, 0), ==, 12);
    g_assert_cmpint(capnp_list_struct(&list, 2, &element), ==, -1);
    g_assert_nonnull(msg.error);
    capnp_message_clear(&msg);
    g_byte_array_free(packed, TRUE);
}

static void expect_root_error(const uint64_t *const *segments, const uint32_t *sizes, uint32_t count)
{
    GByteArray *packed = message(segments, sizes, count);
    struct capnp_message msg;
    g_assert_cmpint(read_message(packed, &msg), ==, 0);
    struct capnp_struct root;
    g_assert_cmpint(capnp_root(&msg, &root), ==, -1);
    g_assert_nonnull(msg.error);
    capnp_message_clear(&msg);
    g_byte_array_free(packed, TRUE);
}

static void test_bad_pointers(void)
{
    const uint64_t out_of_segment[] = { struct_pointer(5, 1, 0) };
    const uint64_t before_segment[] = { struct_pointer(-3, 1, 0) };
    const uint64_t missing_segment[] = { far_pointer(4, 0) };
    const uint64_t not_a_struct[] = { list_pointer(0, 2, 0) };
    const uint64_t *cases[] = { out_of_segment, before_segment, missing_segment, not_a_struct };
    uint32_t one = 1;
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++)
        expect_root_error(&cases[i], &one, 1);
}

/* A struct whose pointer points at itself: following it ends at the
 * nesting limit or the traversal budget, not in a loop. */
static void test_pointer_loop(void)
{
    const uint64_t words[] = { struct_pointer(0, 0, 1), struct_pointer(-1, 0, 1) };
    const uint64_t *segments[] = { words };
    uint32_t sizes[] = { 2 };
    GByteArray *packed = message(segments, sizes, 1);
    struct capnp_message msg;
    g_assert_cmpint(read_message(packed, &msg), ==, 0);
    struct capnp_struct s, next;
    g_assert_cmpint(capnp_root(&msg, &s), ==, 0);
    int steps = 0;
    while (capnp_get_struct(&s, 0, &next) == 0 && steps < 100000) {
        s = next;
        steps++;
    }
    g_assert_cmpint(steps, <, 100000);
    g_assert_nonnull(msg.error);
    capnp_message_clear(&msg);
    g_byte_array_free(packed, TRUE);
}

/* Cut inputs: every prefix of a message fails or reads as the end. */
static void test_short_input(void)
{
    const uint64_t words[] = { struct_pointer(0, 1, 0), UINT64_C(0x0102030405060708) };
    const uint64_t *segments[] = { words };
    uint32_t sizes[] = { 2 };
    GByteArray *packed = message(segments, sizes, 1);
    for (guint cut = 0; cut < packed->len; cut++) {
        struct capnp_message msg;
        size_t end = 0;
        int rc = capnp_read_packed_bytes(packed->data, cut, &msg, &end);
        g_assert_true(cut == 0 ? rc == 1 : rc == -1);
        g_assert_cmpuint(end, <=, cut);
        capnp_message_clear(&msg);
    }
    g_byte_array_free(packed, TRUE);
}

/* Packs words as Cap'n Proto's packer may: a zero word's run counts the
 * zero words after it, and a 0xff word's run takes up to `literal` raw
 * words after it whatever they hold (a packer's choice). */
static GByteArray *pack_runs(const uint8_t *words, size_t count, GRand *rand)
{
    GByteArray *out = g_byte_array_new();
    for (size_t i = 0; i < count;) {
        const uint8_t *w = words + i * 8;
        uint8_t tag = 0;
        for (int b = 0; b < 8; b++)
            if (w[b])
                tag |= (uint8_t)(1u << b);
        g_byte_array_append(out, &tag, 1);
        for (int b = 0; b < 8; b++)
            if (w[b])
                g_byte_array_append(out, &w[b], 1);
        i++;
        uint8_t run = 0;
        if (tag == 0x00) {
            while (i < count && run < 255 && memcmp(words + i * 8, "\0\0\0\0\0\0\0\0", 8) == 0) {
                run++;
                i++;
            }
            g_byte_array_append(out, &run, 1);
        } else if (tag == 0xff) {
            size_t wanted = (size_t)g_rand_int_range(rand, 0, 256);
            run = (uint8_t)MIN(wanted, count - i);
            g_byte_array_append(out, &run, 1);
            g_byte_array_append(out, words + i * 8, (guint)run * 8);
            i += run;
        }
    }
    return out;
}

/* A one-segment message of `count` words: zero words (often in runs),
 * full words and words with some zero bytes, as a frame's are. */
static GByteArray *random_words(GRand *rand, uint32_t count)
{
    GByteArray *words = g_byte_array_new();
    put_word(words, (uint64_t)count << 32);
    for (uint32_t i = 0; i < count; i++) {
        uint8_t w[8];
        int kind = g_rand_int_range(rand, 0, 10);
        for (int b = 0; b < 8; b++) {
            gboolean zero = kind < 3 || (kind < 8 && g_rand_boolean(rand));
            w[b] = zero ? 0 : (uint8_t)g_rand_int_range(rand, 1, 256);
        }
        g_byte_array_append(words, w, 8);
    }
    return words;
}

static int read_with(gboolean scalar, const uint8_t *data, size_t size, struct capnp_message *msg, size_t *end)
{
    capnp_unpack_force_scalar(scalar);
    int rc = capnp_read_packed_bytes(data, size, msg, end);
    capnp_unpack_force_scalar(0);
    return rc;
}

/* The portable unpacker and the vector one (where the CPU has it) give
 * the message's words back, and fail alike on every cut of the input. */
static void test_unpack_paths(void)
{
    GRand *rand = g_rand_new_with_seed(85);
    for (int round = 0; round < 200; round++) {
        uint32_t count = (uint32_t)g_rand_int_range(rand, 1, round < 150 ? 64 : 2000);
        GByteArray *words = random_words(rand, count);
        GByteArray *packed = pack_runs(words->data, words->len / 8, rand);
        for (int scalar = 0; scalar < 2; scalar++) {
            struct capnp_message msg;
            size_t end = 0;
            g_assert_cmpint(read_with(scalar, packed->data, packed->len, &msg, &end), ==, 0);
            g_assert_cmpuint(end, ==, packed->len);
            g_assert_cmpuint(msg.segment_count, ==, 1);
            g_assert_cmpmem(msg.segments[0].words, (size_t)count * 8, words->data + 8, (size_t)count * 8);
            capnp_message_clear(&msg);
        }
        for (guint cut = 0; round < 40 && cut < packed->len; cut++) {
            struct capnp_message vector, scalar;
            size_t vector_end = 0, scalar_end = 0;
            int vector_rc = read_with(FALSE, packed->data, cut, &vector, &vector_end);
            int scalar_rc = read_with(TRUE, packed->data, cut, &scalar, &scalar_end);
            g_assert_cmpint(vector_rc, ==, scalar_rc);
            g_assert_cmpint(vector_rc, !=, 0);
            g_assert_cmpuint(vector_end, ==, scalar_end);
            g_assert_cmpstr(vector.error, ==, scalar.error);
            capnp_message_clear(&vector);
            capnp_message_clear(&scalar);
        }
        g_byte_array_free(packed, TRUE);
        g_byte_array_free(words, TRUE);
    }
    g_rand_free(rand);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/capnp/fields", test_fields);
    g_test_add_func("/capnp/far-pointer-and-struct-list", test_far_pointer_and_struct_list);
    g_test_add_func("/capnp/bad-pointers", test_bad_pointers);
    g_test_add_func("/capnp/pointer-loop", test_pointer_loop);
    g_test_add_func("/capnp/short-input", test_short_input);
    g_test_add_func("/capnp/unpack-paths", test_unpack_paths);
    return g_test_run();
}
