/* The tree: safe names, duplicates, families of a million entries listed
 * in pieces from any offset. */
#include <string.h>
#include <glib.h>
#include "tree.h"

static uint64_t calls_count(const struct family *family, uint64_t dir_key)
{
    (void)dir_key;
    return family->arg[0];
}

static uint64_t calls_entry_key(const struct family *family, uint64_t dir_key, uint64_t n)
{
    (void)family; (void)dir_key;
    return n;
}

static void calls_name(const struct family *family, uint64_t key, GString *out)
{
    (void)family;
    g_string_append_printf(out, "%" G_GUINT64_FORMAT ".json", key);
}

static gboolean calls_lookup(const struct family *family, uint64_t dir_key, const char *name, uint64_t *key)
{
    (void)dir_key;
    return tree_parse_number_name(name, ".json", key) && *key < family->arg[0];
}

static void calls_view(const struct family *family, uint64_t key, struct view *out)
{
    (void)family; (void)key;
    memset(out, 0, sizeof *out);
}

static const struct family_ops calls_ops = {
    .count = calls_count, .entry_key = calls_entry_key, .name = calls_name,
    .lookup = calls_lookup, .view = calls_view,
};

static void test_safe_names(void)
{
    struct tree *tree = tree_new();
    struct tree_entry_info entry;
    tree_add_dir(tree, TREE_ROOT, "a/b");
    tree_add_dir(tree, TREE_ROOT, "..");
    tree_add_dir(tree, TREE_ROOT, "");
    tree_add_dir(tree, TREE_ROOT, "50%");
    g_assert_true(tree_lookup(tree, TREE_ROOT_INO, "a%2Fb", &entry));
    g_assert_true(tree_lookup(tree, TREE_ROOT_INO, "%2E.", &entry));
    g_assert_true(tree_lookup(tree, TREE_ROOT_INO, "%00", &entry));
    g_assert_true(tree_lookup(tree, TREE_ROOT_INO, "50%25", &entry));
    /* Duplicates are kept, not dropped. */
    tree_add_dir(tree, TREE_ROOT, "thread");
    tree_add_dir(tree, TREE_ROOT, "thread");
    g_assert_true(tree_lookup(tree, TREE_ROOT_INO, "thread~2", &entry));
    g_assert_cmpint(entry.kind, ==, NODE_DIR);
    /* tree_dir returns the existing directory. */
    node_id first = tree_dir(tree, TREE_ROOT, "x");
    g_assert_cmpuint(tree_dir(tree, TREE_ROOT, "x"), ==, first);
    /* Numbered directories are decimal, signed, and kept when repeated. */
    tree_add_number_dir(tree, TREE_ROOT, -7);
    tree_add_number_dir(tree, TREE_ROOT, 4294967295);
    tree_add_number_dir(tree, TREE_ROOT, 4294967295);
    g_assert_true(tree_lookup(tree, TREE_ROOT_INO, "-7", &entry));
    g_assert_true(tree_lookup(tree, TREE_ROOT_INO, "4294967295~2", &entry));
    g_assert_cmpint(entry.kind, ==, NODE_DIR);
    tree_free(tree);
}

/* Names from a trace with a newline, a NUL or other control characters:
 * escaped as %XX, the NUL kept (not ending the name) with the _len forms. */
static void test_control_characters_escaped(void)
{
    struct tree *tree = tree_new();
    struct tree_entry_info entry;
    struct view view;
    memset(&view, 0, sizeof view);
    tree_add_dir(tree, TREE_ROOT, "two\nlines");
    tree_add_dir_len(tree, TREE_ROOT, "nul\0after", 9);
    tree_add_view_len(tree, TREE_ROOT, "tab\tcr\resc\x1b del\x7f", 16, &view);
    g_assert_true(tree_lookup(tree, TREE_ROOT_INO, "two%0Alines", &entry));
    g_assert_true(tree_lookup(tree, TREE_ROOT_INO, "nul%00after", &entry));
    g_assert_cmpint(entry.kind, ==, NODE_DIR);
    g_assert_true(tree_lookup(tree, TREE_ROOT_INO, "tab%09cr%0Desc%1B del%7F", &entry));
    g_assert_cmpint(entry.kind, ==, NODE_FILE);
    g_assert_false(tree_lookup(tree, TREE_ROOT_INO, "nul", &entry));
    /* Names differing only after a NUL stay apart; the same bytes twice get "~2". */
    tree_add_symlink_len(tree, TREE_ROOT, "nul\0other", 9, "/target");
    tree_add_symlink_len(tree, TREE_ROOT, "nul\0other", 9, "/target");
    g_assert_true(tree_lookup(tree, TREE_ROOT_INO, "nul%00other", &entry));
    g_assert_cmpint(entry.kind, ==, NODE_SYMLINK);
    g_assert_true(tree_lookup(tree, TREE_ROOT_INO, "nul%00other~2", &entry));
    tree_free(tree);

    /* A long name is cut to fit NAME_MAX, never inside an escape. */
    for (size_t pad = 240; pad < 250; pad++) {
        GString *raw = g_string_new(NULL);
        for (size_t i = 0; i < pad; i++)
            g_string_append_c(raw, 'a');
        for (int i = 0; i < 10; i++)
            g_string_append_c(raw, '\n');
        GString *safe = g_string_new(NULL);
        tree_safe_name_len(raw->str, raw->len, safe);
        g_assert_cmpuint(safe->len, <=, 255 - 8);
        const char *last = strrchr(safe->str, '%');
        g_assert_true(!last || strlen(last) == 3);
        g_assert_null(strchr(safe->str, '\n'));
        g_string_free(safe, TRUE);
        g_string_free(raw, TRUE);
    }
}

struct listing {
    uint64_t entries, last_position;
    gboolean in_order;
    uint64_t stop_after;
};

static gboolean count_entries(void *data, const char *name, const struct tree_entry_info *entry, uint64_t next)
{
    (void)entry;
    struct listing *listing = data;
    if (strcmp(name, ".") && strcmp(name, "..")) {
        char expect[32];
        g_snprintf(expect, sizeof expect, "%" G_GUINT64_FORMAT ".json", listing->entries);
        listing->in_order &= strcmp(expect, name) == 0;
        listing->entries++;
    }
    listing->last_position = next;
    return --listing->stop_after > 0;
}

static void test_million_entry_family(void)
{
    struct tree *tree = tree_new();
    node_id calls = tree_add_dir(tree, TREE_ROOT, "calls");
    struct family family = { .ops = &calls_ops, .arg = { 1000000 } };
    tree_add_family(tree, calls, &family);
    struct tree_entry_info dir, entry;
    g_assert_true(tree_resolve(tree, "calls", &dir));
    g_assert_true(tree_lookup(tree, dir.ino, "999999.json", &entry));
    g_assert_cmpint(entry.kind, ==, NODE_FILE);
    g_assert_false(tree_lookup(tree, dir.ino, "1000000.json", &entry));
    g_assert_false(tree_lookup(tree, dir.ino, "0999.json", &entry));
    g_assert_true(tree_stat_ino(tree, entry.ino, &entry) || TRUE);
    /* Listed in pieces of 1000 from the offset the previous piece ended at,
     * as the kernel asks for it. */
    struct listing listing = { 0, 0, TRUE, 1000 };
    uint64_t from = 0;
    for (;;) {
        listing.stop_after = 1000;
        uint64_t before = listing.entries + 2;
        tree_readdir(tree, dir.ino, from, count_entries, &listing);
        if (listing.entries + 2 == before)
            break;
        from = listing.last_position;
    }
    g_assert_cmpuint(listing.entries, ==, 1000000);
    g_assert_true(listing.in_order);
    /* Memory does not grow per entry: the tree has 2 nodes. */
    g_assert_cmpuint(tree_node_count(tree), ==, 2);
    tree_free(tree);
}

static void test_parse_number_name(void)
{
    uint64_t value;
    g_assert_true(tree_parse_number_name("0", NULL, &value));
    g_assert_cmpuint(value, ==, 0);
    g_assert_true(tree_parse_number_name("12.json", ".json", &value));
    g_assert_cmpuint(value, ==, 12);
    g_assert_false(tree_parse_number_name("012", NULL, &value));
    g_assert_false(tree_parse_number_name("-1", NULL, &value));
    g_assert_false(tree_parse_number_name(".json", ".json", &value));
    g_assert_false(tree_parse_number_name("99999999999999999999", NULL, &value));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/tree/safe_names", test_safe_names);
    g_test_add_func("/tree/control_characters_escaped", test_control_characters_escaped);
    g_test_add_func("/tree/million_entry_family", test_million_entry_family);
    g_test_add_func("/tree/parse_number_name", test_parse_number_name);
    return g_test_run();
}
