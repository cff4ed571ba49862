/* The saved-index writer and reader: a big array is saved from where it is
 * (not copied), counts and lengths are checked on reading, and a big array
 * read from a mapped index comes out whole while the mapped pages it came
 * from leave memory (a mount must not hold an XRay log's tables twice). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <glib.h>
#include <glib/gstdio.h>
#include "saved_bytes.h"

#define BIG_COUNT (3u << 20)   /* 24 MiB of uint64: three copy pieces */

/* Resident KiB of the mapping that starts at `address`, from smaps. */
static long mapping_rss_kib(const void *address)
{
    FILE *smaps = fopen("/proc/self/smaps", "r");
    g_assert_nonnull(smaps);
    char line[512];
    gboolean inside = FALSE;
    long rss = -1;
    while (fgets(line, sizeof line, smaps)) {
        unsigned long start, end;
        if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
            inside = start == (unsigned long)(uintptr_t)address;
        else if (inside && sscanf(line, "Rss: %ld kB", &rss) == 1)
            break;
    }
    fclose(smaps);
    return rss;
}

static void test_big_array_from_mapping(void)
{
    struct saved_writer *writer = saved_writer_new();
    GArray *values = g_array_sized_new(FALSE, FALSE, sizeof(uint64_t), BIG_COUNT);
    for (uint64_t i = 0; i < BIG_COUNT; i++) {
        uint64_t value = i * 0x9e3779b97f4a7c15ull;
        g_array_append_val(values, value);
    }
    saved_put_string(writer, "header");
    saved_put_array(writer, values);
    saved_put_u64(writer, 7);
    /* The array is written from where it is, not copied into the writer. */
    g_assert_cmpuint(writer->blocks->len, ==, 1);
    g_assert_cmpuint(writer->bytes->len, <, 64);
    GByteArray *saved = saved_writer_join(writer);
    g_assert_cmpuint(saved->len, ==, writer->size);
    saved_writer_free(writer);
    char *path = NULL;
    int fd = g_file_open_tmp("tracefs-saved-XXXXXX", &path, NULL);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(write(fd, saved->data, saved->len), ==, (gssize)saved->len);
    uint8_t *mapped = mmap(NULL, saved->len, PROT_READ, MAP_PRIVATE, fd, 0);
    g_assert_true(mapped != MAP_FAILED);
    for (size_t at = 0; at < saved->len; at += 4096)   /* all resident, as after a checksum */
        (void)*(volatile const uint8_t *)(mapped + at);
    g_assert_cmpint(mapping_rss_kib(mapped), >=, 24 * 1024);

    struct saved_reader reader;
    saved_reader_init_mapped(&reader, mapped, saved->len);
    char *header = saved_get_string(&reader, 64);
    GArray *loaded = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    g_assert_true(saved_get_array(&reader, loaded, BIG_COUNT));
    g_assert_cmpuint(saved_get_u64(&reader), ==, 7);
    g_assert_true(saved_reader_done(&reader));
    g_assert_cmpstr(header, ==, "header");
    g_assert_cmpuint(loaded->len, ==, BIG_COUNT);
    g_assert_true(memcmp(loaded->data, values->data, (size_t)BIG_COUNT * sizeof(uint64_t)) == 0);
    /* Released behind the copy: at most a page per piece and the head stay. */
    g_assert_cmpint(mapping_rss_kib(mapped), <, 64);
    /* And still readable: released pages read again from the file. */
    g_assert_true(memcmp(mapped, saved->data, saved->len) == 0);

    munmap(mapped, saved->len);
    close(fd);
    g_unlink(path);
    g_free(path);
    g_free(header);
    g_array_free(loaded, TRUE);
    g_array_free(values, TRUE);
    g_byte_array_free(saved, TRUE);
}

static void test_counts_checked(void)
{
    struct saved_writer *writer = saved_writer_new();
    saved_put_u64(writer, 1000);          /* claims 1000 elements, holds 2 */
    saved_put_u64(writer, 1);
    saved_put_u64(writer, 2);
    GByteArray *saved = saved_writer_join(writer);
    saved_writer_free(writer);
    struct saved_reader reader;
    saved_reader_init(&reader, saved->data, saved->len);
    GArray *loaded = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    g_assert_false(saved_get_array(&reader, loaded, 1u << 20));
    g_assert_true(reader.bad);
    g_assert_cmpuint(loaded->len, ==, 0);

    saved_reader_init(&reader, saved->data, saved->len);
    g_assert_false(saved_get_array(&reader, loaded, 10));   /* beyond the caller's bound */
    g_assert_cmpuint(saved_get_u64(&reader), ==, 0);          /* bad reads as zeros */
    g_array_free(loaded, TRUE);
    g_byte_array_free(saved, TRUE);
}

/* A name from the trace keeps its NULs through saved_get_name; the C-string
 * reader refuses them; a length past the caller's bound is bad. */
static void test_name_with_nul(void)
{
    struct saved_writer *writer = saved_writer_new();
    saved_put_bytes(writer, "ab\0cd", 5);
    saved_put_bytes(writer, "ab\0cd", 5);
    saved_put_bytes(writer, "abcdef", 6);
    GByteArray *saved = saved_writer_join(writer);
    saved_writer_free(writer);
    struct saved_reader reader;
    saved_reader_init(&reader, saved->data, saved->len);
    size_t length;
    char *name = saved_get_name(&reader, 64, &length);
    g_assert_nonnull(name);
    g_assert_cmpuint(length, ==, 5);
    g_assert_cmpmem(name, 6, "ab\0cd", 6);   /* NUL-terminated after its bytes */
    g_free(name);
    g_assert_null(saved_get_string(&reader, 64));
    g_assert_true(reader.bad);

    saved_reader_init(&reader, saved->data, saved->len);
    g_free(saved_get_name(&reader, 64, &length));
    g_free(saved_get_name(&reader, 64, &length));
    g_assert_null(saved_get_name(&reader, 5, &length));
    g_assert_cmpuint(length, ==, 0);
    g_assert_true(reader.bad);
    g_byte_array_free(saved, TRUE);
}

/* saved_writer_finish gives what saved_writer_join gives: the writer's own
 * bytes when it holds no block, a copy joined around its blocks when it does. */
static void test_finish_equals_join(void)
{
    GArray *big = g_array_new(FALSE, TRUE, sizeof(uint64_t));
    g_array_set_size(big, SAVED_BLOCK_BYTES / sizeof(uint64_t));
    g_array_index(big, uint64_t, 7) = 42;
    for (int with_block = 0; with_block < 2; with_block++) {
        struct saved_writer *writer = saved_writer_new();
        saved_put_string(writer, "head");
        if (with_block)
            saved_put_array(writer, big);
        saved_put_u64(writer, 9);
        g_assert_cmpuint(writer->blocks->len, ==, (guint)with_block);
        GByteArray *joined = saved_writer_join(writer);
        GByteArray *finished = saved_writer_finish(writer);
        g_assert_cmpmem(finished->data, finished->len, joined->data, joined->len);
        g_byte_array_free(joined, TRUE);
        g_byte_array_free(finished, TRUE);
    }
    g_array_free(big, TRUE);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/saved-bytes/big-array-from-mapping", test_big_array_from_mapping);
    g_test_add_func("/saved-bytes/counts-checked", test_counts_checked);
    g_test_add_func("/saved-bytes/name-with-nul", test_name_with_nul);
    g_test_add_func("/saved-bytes/finish-equals-join", test_finish_equals_join);
    return g_test_run();
}
