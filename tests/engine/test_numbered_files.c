/* Numbered files (engine/numbered_files.h): names, lookups, the view of
 * each file, and entry keys n * kinds + kind (inodes the decoders' own
 * families had, so saved view indexes still apply). */
#include <string.h>
#include <glib.h>
#include "numbered_files.h"

#define KEY_MASK ((UINT64_C(1) << 40) - 1)

/* The view records which file it was asked for. */
static void record_view(void *context, uint64_t n, unsigned kind, struct view *out)
{
    *out = (struct view){ .context = context, .arg = { n, kind, 0 } };
}

static const struct numbered_files frames = { { "", ".json" }, 0, record_view };
static const struct numbered_files calls = { { ".json", NULL }, 1, record_view };

static gboolean collect(void *data, const char *name, const struct tree_entry_info *entry, uint64_t next)
{
    (void)entry;
    (void)next;
    if (strcmp(name, ".") && strcmp(name, ".."))
        g_string_append_printf(data, "%s ", name);
    return TRUE;
}

static void check_file(struct tree *tree, tree_ino dir, const char *name, uint64_t n, unsigned kind, uint64_t key)
{
    struct tree_entry_info entry;
    struct view view;
    g_assert_true(tree_lookup(tree, dir, name, &entry));
    g_assert_cmpint(entry.kind, ==, NODE_FILE);
    g_assert_cmpuint(entry.ino & KEY_MASK, ==, key);
    g_assert_true(tree_file_view(tree, entry.ino, &view));
    g_assert_cmpuint(view.arg[0], ==, n);
    g_assert_cmpuint(view.arg[1], ==, kind);
}

static void test_two_suffixes(void)
{
    struct tree *tree = tree_new();
    int context;
    numbered_files_add(tree, tree_add_dir(tree, TREE_ROOT, "frames"), &frames, &context, 3);
    struct tree_entry_info dir, entry;
    g_assert_true(tree_resolve(tree, "frames", &dir));
    GString *names = g_string_new(NULL);
    tree_readdir(tree, dir.ino, 0, collect, names);
    g_assert_cmpstr(names->str, ==, "0 0.json 1 1.json 2 2.json ");
    check_file(tree, dir.ino, "0", 0, 0, 0);
    check_file(tree, dir.ino, "2.json", 2, 1, 5);
    g_assert_false(tree_lookup(tree, dir.ino, "3", &entry));
    g_assert_false(tree_lookup(tree, dir.ino, "3.json", &entry));
    g_assert_false(tree_lookup(tree, dir.ino, "01", &entry));
    g_assert_false(tree_lookup(tree, dir.ino, "1.jso", &entry));
    g_string_free(names, TRUE);
    tree_free(tree);
}

static void test_counting_from_one(void)
{
    struct tree *tree = tree_new();
    numbered_files_add(tree, tree_add_dir(tree, TREE_ROOT, "calls"), &calls, NULL, 2);
    struct tree_entry_info dir, entry;
    g_assert_true(tree_resolve(tree, "calls", &dir));
    GString *names = g_string_new(NULL);
    tree_readdir(tree, dir.ino, 0, collect, names);
    g_assert_cmpstr(names->str, ==, "1.json 2.json ");
    check_file(tree, dir.ino, "1.json", 1, 0, 1);
    check_file(tree, dir.ino, "2.json", 2, 0, 2);
    g_assert_false(tree_lookup(tree, dir.ino, "0.json", &entry));
    g_assert_false(tree_lookup(tree, dir.ino, "3.json", &entry));
    g_assert_false(tree_lookup(tree, dir.ino, "1", &entry));
    g_string_free(names, TRUE);
    tree_free(tree);
}

static void test_empty(void)
{
    struct tree *tree = tree_new();
    numbered_files_add(tree, tree_add_dir(tree, TREE_ROOT, "calls"), &calls, NULL, 0);
    struct tree_entry_info dir, entry;
    g_assert_true(tree_resolve(tree, "calls", &dir));
    GString *names = g_string_new(NULL);
    tree_readdir(tree, dir.ino, 0, collect, names);
    g_assert_cmpstr(names->str, ==, "");
    g_assert_false(tree_lookup(tree, dir.ino, "1.json", &entry));
    g_string_free(names, TRUE);
    tree_free(tree);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/numbered_files/two_suffixes", test_two_suffixes);
    g_test_add_func("/numbered_files/counting_from_one", test_counting_from_one);
    g_test_add_func("/numbered_files/empty", test_empty);
    return g_test_run();
}
