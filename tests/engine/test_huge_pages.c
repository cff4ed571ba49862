/* huge_pages_advise: a table it advised is backed by huge pages when the
 * kernel offers them, whatever the table's alignment; small or absent
 * tables are left alone. */
#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "huge_pages.h"

#define TABLE_BYTES (16u << 20)

static gboolean huge_pages_offered(void)
{
    gchar *setting = NULL;
    if (!g_file_get_contents("/sys/kernel/mm/transparent_hugepage/enabled", &setting, NULL, NULL))
        return FALSE;
    gboolean offered = strstr(setting, "[never]") == NULL;
    g_free(setting);
    return offered;
}

/* The line starting with field in /proc/self/smaps for the mapping that
 * holds address, or FALSE. */
static gboolean smaps_line_at(const void *address, const char *field, char *line, size_t size)
{
    FILE *smaps = fopen("/proc/self/smaps", "r");
    if (!smaps)
        return FALSE;
    gboolean inside = FALSE, found = FALSE;
    while (!found && fgets(line, (int)size, smaps)) {
        unsigned long from, to;
        if (sscanf(line, "%lx-%lx ", &from, &to) == 2)   /* a mapping's first line */
            inside = (uintptr_t)address >= from && (uintptr_t)address < to;
        else
            found = inside && g_str_has_prefix(line, field);
    }
    fclose(smaps);
    return found;
}

/* AnonHugePages of the mapping that holds address, in KiB (-1: not found). */
static long huge_kib_at(const void *address)
{
    char line[512];
    long kib;
    if (!smaps_line_at(address, "AnonHugePages:", line, sizeof line) ||
        sscanf(line, "AnonHugePages: %ld kB", &kib) != 1)
        return -1;
    return kib;
}

/* Whether the mapping that holds address was advised (VmFlags "hg"). */
static gboolean advised_at(const void *address)
{
    char line[512];
    return smaps_line_at(address, "VmFlags:", line, sizeof line) && strstr(line, " hg") != NULL;
}

static void test_advised_table_gets_huge_pages(void)
{
    if (!huge_pages_offered()) {
        g_test_skip("transparent huge pages are off on this machine");
        return;
    }
    /* A table as malloc hands it out: page-aligned plus a header, not
     * aligned to 2 MiB.  The kernel may lack a free huge page for a moment
     * (fragmented memory): a few tries. */
    long kib = 0;
    for (int attempt = 0; attempt < 5 && kib <= 0; attempt++) {
        uint8_t *mapping = mmap(NULL, TABLE_BYTES + 4096, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        g_assert_true(mapping != MAP_FAILED);
        uint8_t *table = mapping + 16;
        huge_pages_advise(table, TABLE_BYTES);
        memset(table, 0xab, TABLE_BYTES);
        /* The advice splits the mapping: its 2 MiB-aligned middle is a
         * mapping of its own, so ask about an address there. */
        kib = huge_kib_at(table + TABLE_BYTES / 2);
        g_assert_cmpuint(table[TABLE_BYTES - 1], ==, 0xab);
        munmap(mapping, TABLE_BYTES + 4096);
    }
    if (kib < 0) {
        g_test_skip("no /proc/self/smaps");
        return;
    }
    g_assert_cmpint(kib, >=, 2048);
}

static void test_small_or_absent_table_left_alone(void)
{
    huge_pages_advise(NULL, TABLE_BYTES);
    uint8_t small[64] = { 0 };
    huge_pages_advise(small, sizeof small);
    huge_pages_advise(small, 0);
    g_assert_cmpuint(small[0], ==, 0);

    /* 2 MiB starting just past a 2 MiB boundary holds no whole huge page:
     * advising any of it would cover bytes outside the table. */
    uint8_t *mapping = mmap(NULL, 8u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    g_assert_true(mapping != MAP_FAILED);
    uint8_t *boundary = (uint8_t *)(((uintptr_t)mapping + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1));
    huge_pages_advise(boundary + 16, 2u << 20);
    g_assert_false(advised_at(boundary + (1u << 20)));
    /* The same length from the boundary itself is one whole huge page. */
    huge_pages_advise(boundary, 2u << 20);
    if (huge_pages_offered())
        g_assert_true(advised_at(boundary + (1u << 20)));
    munmap(mapping, 8u << 20);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/huge-pages/advised-table-gets-huge-pages", test_advised_table_gets_huge_pages);
    g_test_add_func("/huge-pages/small-or-absent-table-left-alone", test_small_or_absent_table_left_alone);
    return g_test_run();
}
