/* Numbered files as a family (numbered_files.h).  family->arg[0] is the
 * count of numbers, arg[1] the static description. */
#include <inttypes.h>
#include "numbered_files.h"

static const struct numbered_files *files_of(const struct family *family)
{
    return (const struct numbered_files *)(uintptr_t)family->arg[1];
}

static unsigned kinds(const struct numbered_files *files)
{
    return files->suffix[1] ? 2 : 1;
}

static uint64_t numbered_count(const struct family *family, uint64_t dir_key)
{
    (void)dir_key;
    return family->arg[0] * kinds(files_of(family));
}

static uint64_t numbered_key(const struct family *family, uint64_t dir_key, uint64_t n)
{
    (void)dir_key;
    const struct numbered_files *files = files_of(family);
    return files->first * kinds(files) + n;
}

static void numbered_name(const struct family *family, uint64_t key, GString *out)
{
    const struct numbered_files *files = files_of(family);
    g_string_append_printf(out, "%" PRIu64 "%s", key / kinds(files), files->suffix[key % kinds(files)]);
}

static gboolean numbered_lookup(const struct family *family, uint64_t dir_key, const char *name, uint64_t *key)
{
    (void)dir_key;
    const struct numbered_files *files = files_of(family);
    for (unsigned kind = 0; kind < kinds(files); kind++) {
        uint64_t n;
        if (tree_parse_number_name(name, files->suffix[kind], &n) && n >= files->first &&
            n - files->first < family->arg[0]) {
            *key = n * kinds(files) + kind;
            return TRUE;
        }
    }
    return FALSE;
}

static void numbered_view(const struct family *family, uint64_t key, struct view *out)
{
    const struct numbered_files *files = files_of(family);
    files->view(family->context, key / kinds(files), (unsigned)(key % kinds(files)), out);
}

static const struct family_ops numbered_ops = {
    .count = numbered_count, .entry_key = numbered_key, .name = numbered_name,
    .lookup = numbered_lookup, .view = numbered_view,
};

void numbered_files_add(struct tree *tree, node_id dir, const struct numbered_files *files, void *context,
                        uint64_t count)
{
    struct family family = { .ops = &numbered_ops, .context = context,
                             .arg = { count, (uint64_t)(uintptr_t)files } };
    tree_add_family(tree, dir, &family);
}
