/* The tree: concrete nodes in an array (inode = id + 1), plus families of
 * generated entries whose inodes encode (family id, key). */
#include <pthread.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "keyed_hash.h"
#include "chunk_cache.h"
#include "tracefs_limits.h"
#include "trace.h"
#include "tree.h"
#include "workers.h"

#define FAMILY_BIT (1ull << 63)
#define FAMILY_KEY_BITS 40
#define FAMILY_KEY_MASK ((1ull << FAMILY_KEY_BITS) - 1)
#define FAMILY_ID_BITS 16
#define FAMILY_ID_MASK ((1ull << FAMILY_ID_BITS) - 1)
/* Inodes inside a grafted sub-trace (folders of traces): a node's inode
 * carries the graft number + 1 in bits 32..62 (node ids are below 2^32);
 * a family entry's carries a family slot of this tree, a range of which
 * each graft takes when its trace is opened (graft_slots). */
#define GRAFT_SHIFT 32
#define NODE_INO_MASK ((1ull << GRAFT_SHIFT) - 1)
#define FAMILY_SLOTS (1u << FAMILY_ID_BITS)
#define INDEX_STRIPES 64

struct node {
    char *name;
    uint32_t graft;              /* graft number + 1 for a graft directory */
    node_id parent;
    enum node_kind kind;
    GArray *children;            /* node_id, dirs only */
    struct family *family;       /* generated entries, dirs only */
    struct view view;            /* files */
    GBytes *bytes;               /* fixed content of text files */
    char *target;                /* symlinks */
    struct view_index *index;    /* built on first use */
};

struct name_key {
    node_id parent;
    const char *name;
};

struct tree {
    GPtrArray *nodes;            /* struct node * */
    GHashTable *by_name;         /* struct name_key * (in node) -> node_id + 1 */
    /* A name given more than once in a directory: the next "~<n>" to try
     * (struct suffix_key * -> n), so that D equal names cost D lookups, not D^2. */
    GHashTable *next_suffix;
    GPtrArray *families;         /* struct family * */
    pthread_mutex_t stripes[INDEX_STRIPES];
    pthread_mutex_t family_index_lock;
    GHashTable *family_indexes;  /* ino -> struct view_index * */
    gint indexes_built;
    GPtrArray *grafts;           /* struct graft * */
    /* Family slot -> graft number + 1 (0: this tree's own family or
     * unused), FAMILY_SLOTS entries, made with the first graft. */
    guint *slot_grafts;
    guint next_slot;
    pthread_mutex_t slots_lock;
};

struct graft {
    node_id node;
    struct tree_graft_source source;
    pthread_mutex_t lock;
    gboolean tried;
    struct trace *trace;         /* NULL until opened, or when it failed */
    guint family_base;           /* its families' first slot */
};

static guint name_key_hash(gconstpointer p)
{
    const struct name_key *key = p;
    return keyed_hash_u64(keyed_hash_bytes(key->name, strlen(key->name)) ^ key->parent);
}

static gboolean name_key_equal(gconstpointer a, gconstpointer b)
{
    const struct name_key *x = a, *y = b;
    return x->parent == y->parent && strcmp(x->name, y->name) == 0;
}

/* next_suffix's keys own their name. */
static void free_suffix_key(gpointer p)
{
    struct name_key *key = p;
    g_free((char *)key->name);
    g_free(key);
}

static void view_index_free(gpointer p)
{
    view_index_clear(p);
    g_free(p);
}

struct tree *tree_new(void)
{
    struct tree *tree = g_new0(struct tree, 1);
    tree->nodes = g_ptr_array_new();
    tree->by_name = g_hash_table_new_full(name_key_hash, name_key_equal, g_free, NULL);
    tree->next_suffix = g_hash_table_new_full(name_key_hash, name_key_equal, free_suffix_key, NULL);
    tree->families = g_ptr_array_new();
    for (int i = 0; i < INDEX_STRIPES; i++)
        pthread_mutex_init(&tree->stripes[i], NULL);
    pthread_mutex_init(&tree->family_index_lock, NULL);
    tree->family_indexes = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, view_index_free);
    tree->grafts = g_ptr_array_new();
    pthread_mutex_init(&tree->slots_lock, NULL);
    struct node *root = g_new0(struct node, 1);
    root->name = g_strdup("");
    root->kind = NODE_DIR;
    root->children = g_array_new(FALSE, FALSE, sizeof(node_id));
    g_ptr_array_add(tree->nodes, root);
    return tree;
}

void tree_free(struct tree *tree)
{
    if (!tree)
        return;
    for (guint i = 0; i < tree->nodes->len; i++) {
        struct node *node = tree->nodes->pdata[i];
        g_free(node->name);
        if (node->children)
            g_array_free(node->children, TRUE);
        if (node->bytes)
            g_bytes_unref(node->bytes);
        g_free(node->target);
        if (node->index)
            view_index_free(node->index);
        g_free(node);
    }
    /* Nested families are registered too: each is freed once, here. */
    for (guint i = 0; i < tree->families->len; i++)
        g_free(tree->families->pdata[i]);
    g_ptr_array_free(tree->families, TRUE);
    for (guint i = 0; i < tree->grafts->len; i++) {
        struct graft *graft = tree->grafts->pdata[i];
        pthread_mutex_destroy(&graft->lock);
        g_free(graft);
    }
    g_ptr_array_free(tree->grafts, TRUE);
    g_free(tree->slot_grafts);
    pthread_mutex_destroy(&tree->slots_lock);
    g_ptr_array_free(tree->nodes, TRUE);
    g_hash_table_destroy(tree->by_name);
    g_hash_table_destroy(tree->next_suffix);
    g_hash_table_destroy(tree->family_indexes);
    for (int i = 0; i < INDEX_STRIPES; i++)
        pthread_mutex_destroy(&tree->stripes[i]);
    pthread_mutex_destroy(&tree->family_index_lock);
    g_free(tree);
}

void tree_safe_name(const char *raw, GString *out)
{
    tree_safe_name_len(raw, raw ? strlen(raw) : 0, out);
}

/* '/' and '%' would break the path and the escapes; a newline splits the
 * lines of `ls`, `find` and every script reading them, and the other
 * control characters (a NUL, a carriage return, a terminal escape) mangle
 * a terminal: all as %XX. */
static gboolean needs_escape(unsigned char c)
{
    return c == '/' || c == '%' || c < 0x20 || c == 0x7f;
}

void tree_safe_name_len(const char *raw, size_t len, GString *out)
{
    if (!raw || len == 0) {
        g_string_append(out, "%00");
        return;
    }
    size_t start = out->len;
    if ((len == 1 && raw[0] == '.') || (len == 2 && raw[0] == '.' && raw[1] == '.')) {
        g_string_append(out, "%2E");
        raw++;
        len--;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)raw[i];
        if (needs_escape(c))
            g_string_append_printf(out, "%%%02X", c);
        else
            g_string_append_c(out, (char)c);
    }
    if (out->len - start > LIMIT_NAME_BYTES - 8) {
        /* Keep names within NAME_MAX, leaving room for a "~N" suffix; cut
         * on a UTF-8 boundary and never inside a %XX escape. */
        size_t cut = start + LIMIT_NAME_BYTES - 8;
        while (cut > start && ((unsigned char)out->str[cut] & 0xC0) == 0x80)
            cut--;
        if (cut - start >= 1 && out->str[cut - 1] == '%')
            cut -= 1;
        else if (cut - start >= 2 && out->str[cut - 2] == '%')
            cut -= 2;
        g_string_truncate(out, cut);
    }
}

static struct node *node_at(struct tree *tree, node_id id)
{
    return id < tree->nodes->len ? tree->nodes->pdata[id] : NULL;
}

static node_id find_child(struct tree *tree, node_id parent, const char *name)
{
    struct name_key key = { parent, name };
    gpointer value = g_hash_table_lookup(tree->by_name, &key);
    return value ? (node_id)(GPOINTER_TO_SIZE(value) - 1) : TREE_NO_NODE;
}

/* Makes `name`, taken in `parent`, "name~<n>" with the least n >= 2 not
 * taken.  Nodes are never removed, so every n below the one tried last
 * for this name is still taken: the search goes on from there. */
static void add_suffix(struct tree *tree, node_id parent, GString *name)
{
    struct name_key probe = { parent, name->str };
    gpointer next = g_hash_table_lookup(tree->next_suffix, &probe);
    struct name_key *key = g_new(struct name_key, 1);
    *key = (struct name_key){ parent, g_strdup(name->str) };
    size_t base_len = name->len;
    unsigned n = next ? GPOINTER_TO_UINT(next) : 2;
    for (;; n++) {
        g_string_truncate(name, base_len);
        g_string_append_printf(name, "~%u", n);
        if (find_child(tree, parent, name->str) == TREE_NO_NODE)
            break;
    }
    g_hash_table_replace(tree->next_suffix, key, GUINT_TO_POINTER(n + 1));
}

static node_id add_node_len(struct tree *tree, node_id parent, const char *raw_name, size_t raw_len,
                            enum node_kind kind)
{
    struct node *dir = node_at(tree, parent);
    if (!dir || dir->kind != NODE_DIR || tree->nodes->len >= LIMIT_TREE_NODES)
        return TREE_NO_NODE;
    GString *name = g_string_new(NULL);
    tree_safe_name_len(raw_name, raw_len, name);
    if (find_child(tree, parent, name->str) != TREE_NO_NODE)
        add_suffix(tree, parent, name);
    struct node *node = g_new0(struct node, 1);
    node->name = g_string_free(name, FALSE);
    node->parent = parent;
    node->kind = kind;
    if (kind == NODE_DIR)
        node->children = g_array_new(FALSE, FALSE, sizeof(node_id));
    node_id id = tree->nodes->len;
    g_ptr_array_add(tree->nodes, node);
    g_array_append_val(dir->children, id);
    struct name_key *key = g_new(struct name_key, 1);
    *key = (struct name_key){ parent, node->name };
    g_hash_table_insert(tree->by_name, key, GSIZE_TO_POINTER((gsize)id + 1));
    return id;
}

static node_id add_node(struct tree *tree, node_id parent, const char *raw_name, enum node_kind kind)
{
    return add_node_len(tree, parent, raw_name, raw_name ? strlen(raw_name) : 0, kind);
}

node_id tree_add_dir(struct tree *tree, node_id parent, const char *name)
{
    return add_node(tree, parent, name, NODE_DIR);
}

node_id tree_add_dir_len(struct tree *tree, node_id parent, const char *name, size_t len)
{
    return add_node_len(tree, parent, name, len, NODE_DIR);
}

node_id tree_add_number_dir(struct tree *tree, node_id parent, int64_t number)
{
    char name[24];
    g_snprintf(name, sizeof name, "%" PRId64, number);
    return tree_add_dir(tree, parent, name);
}

node_id tree_dir(struct tree *tree, node_id parent, const char *name)
{
    GString *safe = g_string_new(NULL);
    tree_safe_name(name, safe);
    node_id id = find_child(tree, parent, safe->str);
    g_string_free(safe, TRUE);
    if (id != TREE_NO_NODE && node_at(tree, id)->kind == NODE_DIR)
        return id;
    return tree_add_dir(tree, parent, name);
}

node_id tree_add_view(struct tree *tree, node_id parent, const char *name, const struct view *view)
{
    return tree_add_view_len(tree, parent, name, name ? strlen(name) : 0, view);
}

node_id tree_add_view_len(struct tree *tree, node_id parent, const char *name, size_t len, const struct view *view)
{
    node_id id = add_node_len(tree, parent, name, len, NODE_FILE);
    if (id != TREE_NO_NODE)
        node_at(tree, id)->view = *view;
    return id;
}

node_id tree_add_text(struct tree *tree, node_id parent, const char *name, char *text, size_t len)
{
    node_id id = add_node(tree, parent, name, NODE_FILE);
    if (id == TREE_NO_NODE) {
        g_free(text);
        return id;
    }
    struct node *node = node_at(tree, id);
    node->bytes = g_bytes_new_take(text, len);
    view_init_bytes(&node->view, node->bytes);
    return id;
}

node_id tree_add_string(struct tree *tree, node_id parent, const char *name, GString *text)
{
    size_t len = text->len;
    return tree_add_text(tree, parent, name, g_string_free(text, FALSE), len);
}

node_id tree_add_symlink(struct tree *tree, node_id parent, const char *name, const char *target)
{
    return tree_add_symlink_len(tree, parent, name, name ? strlen(name) : 0, target);
}

node_id tree_add_symlink_len(struct tree *tree, node_id parent, const char *name, size_t len, const char *target)
{
    node_id id = add_node_len(tree, parent, name, len, NODE_SYMLINK);
    if (id != TREE_NO_NODE)
        node_at(tree, id)->target = g_strdup(target);
    return id;
}

static struct family *register_family(struct tree *tree, const struct family *family)
{
    struct family *copy = g_new(struct family, 1);
    *copy = *family;
    copy->id = tree->families->len;
    g_ptr_array_add(tree->families, copy);
    if (family->entries) {
        copy->entries = register_family(tree, family->entries);
        g_free(family->entries);
    }
    return copy;
}

void tree_add_family(struct tree *tree, node_id parent, const struct family *family)
{
    struct node *dir = node_at(tree, parent);
    if (!dir || dir->kind != NODE_DIR || dir->family || tree->families->len >= (1u << FAMILY_ID_BITS))
        return;
    dir->family = register_family(tree, family);
}

/* ---- queries ---- */

static gboolean is_family_ino(tree_ino ino) { return (ino & FAMILY_BIT) != 0; }

static struct family *family_of(struct tree *tree, tree_ino ino)
{
    uint64_t id = (ino >> FAMILY_KEY_BITS) & FAMILY_ID_MASK;
    return id < tree->families->len ? tree->families->pdata[id] : NULL;
}

static tree_ino family_ino(const struct family *family, uint64_t key)
{
    return FAMILY_BIT | ((uint64_t)family->id << FAMILY_KEY_BITS) | (key & FAMILY_KEY_MASK);
}

static enum node_kind family_entry_kind(const struct family *family, uint64_t key)
{
    if (!family->entries)
        return NODE_FILE;
    return !family->entry_is_dir || family->entry_is_dir(family, key) ? NODE_DIR : NODE_FILE;
}

static struct node *node_of(struct tree *tree, tree_ino ino)
{
    if (ino == 0 || is_family_ino(ino))
        return NULL;
    return node_at(tree, (node_id)(ino - 1));
}

static gboolean local_stat_ino(struct tree *tree, tree_ino ino, struct tree_entry_info *out)
{
    if (is_family_ino(ino)) {
        struct family *family = family_of(tree, ino);
        if (!family)
            return FALSE;
        *out = (struct tree_entry_info){ ino, family_entry_kind(family, ino & FAMILY_KEY_MASK), TREE_ROOT_INO };
        return TRUE;
    }
    struct node *node = node_of(tree, ino);
    if (!node)
        return FALSE;
    *out = (struct tree_entry_info){ ino, node->kind, (tree_ino)node->parent + 1 };
    return TRUE;
}

static gboolean local_lookup(struct tree *tree, tree_ino dir, const char *name, struct tree_entry_info *out)
{
    struct family *family;
    uint64_t dir_key = 0;
    if (is_family_ino(dir)) {
        struct family *parent = family_of(tree, dir);
        if (!parent || family_entry_kind(parent, dir & FAMILY_KEY_MASK) != NODE_DIR)
            return FALSE;
        family = parent->entries;
        dir_key = dir & FAMILY_KEY_MASK;
    } else {
        struct node *node = node_of(tree, dir);
        if (!node || node->kind != NODE_DIR)
            return FALSE;
        node_id child = find_child(tree, (node_id)(dir - 1), name);
        if (child != TREE_NO_NODE)
            return local_stat_ino(tree, (tree_ino)child + 1, out);
        family = node->family;
    }
    uint64_t key;
    if (!family || !family->ops->lookup(family, dir_key, name, &key) || key > FAMILY_KEY_MASK)
        return FALSE;
    *out = (struct tree_entry_info){ family_ino(family, key), family_entry_kind(family, key), dir };
    return TRUE;
}

static gboolean readdir_family(struct tree *tree, struct family *family, uint64_t dir_key, tree_ino dir,
                               uint64_t position, uint64_t first, tree_readdir_fn fn, void *data)
{
    (void)tree;
    uint64_t count = family->ops->count(family, dir_key);
    GString *name = g_string_new(NULL);
    gboolean more = TRUE;
    for (uint64_t n = position - first; more && n < count; n++) {
        uint64_t key = family->ops->entry_key(family, dir_key, n);
        g_string_truncate(name, 0);
        family->ops->name(family, key, name);
        struct tree_entry_info entry = { family_ino(family, key), family_entry_kind(family, key), dir };
        more = fn(data, name->str, &entry, first + n + 1);
    }
    g_string_free(name, TRUE);
    return more;
}

static void local_readdir(struct tree *tree, tree_ino dir, uint64_t from, tree_readdir_fn fn, void *data)
{
    struct tree_entry_info self;
    if (!local_stat_ino(tree, dir, &self) || self.kind != NODE_DIR)
        return;
    struct tree_entry_info parent = { self.parent, NODE_DIR, self.parent };
    if (from == 0 && !fn(data, ".", &self, 1))
        return;
    if (from <= 1 && !fn(data, "..", &parent, 2))
        return;
    uint64_t position = MAX(from, 2);
    if (is_family_ino(dir)) {
        struct family *family = family_of(tree, dir)->entries;
        readdir_family(tree, family, dir & FAMILY_KEY_MASK, dir, position, 2, fn, data);
        return;
    }
    struct node *node = node_of(tree, dir);
    uint64_t first_family = 2 + node->children->len;
    for (; position < first_family; position++) {
        node_id child = g_array_index(node->children, node_id, position - 2);
        struct tree_entry_info entry;
        local_stat_ino(tree, (tree_ino)child + 1, &entry);
        if (!fn(data, node_at(tree, child)->name, &entry, position + 1))
            return;
    }
    if (node->family)
        readdir_family(tree, node->family, 0, dir, position, first_family, fn, data);
}

static gboolean local_file_view(struct tree *tree, tree_ino ino, struct view *out)
{
    if (is_family_ino(ino)) {
        struct family *family = family_of(tree, ino);
        if (!family || family_entry_kind(family, ino & FAMILY_KEY_MASK) != NODE_FILE)
            return FALSE;
        family->ops->view(family, ino & FAMILY_KEY_MASK, out);
        return TRUE;
    }
    struct node *node = node_of(tree, ino);
    if (!node || node->kind != NODE_FILE)
        return FALSE;
    *out = node->view;
    return TRUE;
}

static const char *local_symlink_target(struct tree *tree, tree_ino ino)
{
    struct node *node = node_of(tree, ino);
    return node && node->kind == NODE_SYMLINK ? node->target : NULL;
}

gboolean tree_resolve(struct tree *tree, const char *path, struct tree_entry_info *out)
{
    if (!tree_stat_ino(tree, TREE_ROOT_INO, out))
        return FALSE;
    gchar **parts = g_strsplit(path ? path : "", "/", -1);
    gboolean found = TRUE;
    for (gchar **part = parts; found && *part; part++) {
        if (**part == '\0' || strcmp(*part, ".") == 0)
            continue;
        struct tree_entry_info next;
        found = tree_lookup(tree, out->ino, *part, &next);
        if (found)
            *out = next;
    }
    g_strfreev(parts);
    return found;
}

uint64_t tree_node_count(struct tree *tree)
{
    return tree->nodes->len;
}

/* Sizes a view; NULL when the trace file changed under the mount: what was
 * rendered may have ended early or mixed old and new bytes, and must not be
 * served as if it were right.  (Decoders may end a view on a read error as
 * if it were the end, so every sizing is checked, not just failed ones.) */
/* Family files (a frame, a call) keep no text (keep_text FALSE): a walk
 * over a million of them would flush the text of the files that matter. */
static struct view_index *build_index(struct trace *trace, const struct view *view, gboolean keep_text)
{
    struct view_index *index = g_new0(struct view_index, 1);
    if (keep_text && trace->text_cache) {
        struct chunk_cache_stats stats;
        chunk_cache_get_stats(trace->text_cache, &stats);
        /* Half the text cache: the rest holds what readers render and the
         * read-ahead, whose blocks would otherwise evict the kept blocks a
         * `cat` has not reached yet, one by one ahead of it. */
        view_index_build_keeping_text(trace, view, trace->text_cache, stats.bytes_budget / 2, index);
    } else {
        view_index_build(trace, view, index);
    }
    /* A sizing cut short by the unmount (workers stopping) is not the
     * file's size either. */
    if (trace_changed(trace) || workers_stopping(trace->workers)) {
        view_index_free(index);
        return NULL;
    }
    return index;
}

/* The index of a small family file lives in the calling thread until its
 * next call: the caller uses it at once (size, or one read). */
static const struct view_index *small_family_index(struct view_index *built)
{
    static __thread struct view_index scratch;
    scratch = *built;
    g_free(built);
    return &scratch;
}

const struct view_index *tree_view_index(struct trace *trace, tree_ino ino)
{
    struct tree *tree = trace->tree;
    struct view view;
    if (!local_file_view(tree, ino, &view))
        return NULL;
    pthread_mutex_t *stripe = &tree->stripes[(ino ^ (ino >> 17)) % INDEX_STRIPES];
    if (!is_family_ino(ino)) {
        struct node *node = node_of(tree, ino);
        struct view_index *index = g_atomic_pointer_get(&node->index);
        if (index)
            return index;
        pthread_mutex_lock(stripe);
        if (!node->index) {
            index = build_index(trace, &view, TRUE);
            if (index) {
                g_atomic_pointer_set(&node->index, index);
                g_atomic_int_inc(&tree->indexes_built);
            }
        }
        pthread_mutex_unlock(stripe);
        return node->index;
    }
    pthread_mutex_lock(&tree->family_index_lock);
    struct view_index *index = g_hash_table_lookup(tree->family_indexes, &ino);
    pthread_mutex_unlock(&tree->family_index_lock);
    if (index)
        return index;
    pthread_mutex_lock(stripe);
    pthread_mutex_lock(&tree->family_index_lock);
    index = g_hash_table_lookup(tree->family_indexes, &ino);
    pthread_mutex_unlock(&tree->family_index_lock);
    if (!index && (index = build_index(trace, &view, FALSE)) != NULL) {
        if (index->checkpoint_count == 0) {
            /* A small file (one interval): sized again when asked, so that
             * `ls -lR` over a million-entry family costs no memory. */
            pthread_mutex_unlock(stripe);
            return small_family_index(index);
        }
        g_atomic_int_inc(&tree->indexes_built);
        gint64 *key = g_new(gint64, 1);
        *key = (gint64)ino;
        pthread_mutex_lock(&tree->family_index_lock);
        g_hash_table_insert(tree->family_indexes, key, index);
        pthread_mutex_unlock(&tree->family_index_lock);
    }
    pthread_mutex_unlock(stripe);
    return index;
}

gboolean tree_parse_number_name(const char *name, const char *suffix, uint64_t *value)
{
    size_t len = strlen(name), suffix_len = suffix ? strlen(suffix) : 0;
    if (len <= suffix_len || (suffix_len && strcmp(name + len - suffix_len, suffix) != 0))
        return FALSE;
    size_t digits = len - suffix_len;
    if (digits > 19 || (digits > 1 && name[0] == '0'))
        return FALSE;
    uint64_t v = 0;
    for (size_t i = 0; i < digits; i++) {
        if (name[i] < '0' || name[i] > '9')
            return FALSE;
        v = v * 10 + (uint64_t)(name[i] - '0');
    }
    *value = v;
    return TRUE;
}

gboolean tree_file_is_dynamic(struct tree *tree, tree_ino ino)
{
    struct view view;
    return tree_file_view(tree, ino, &view) && view.ops->dynamic;
}

/* The node's path from the root, without a leading '/'. */
static void node_path(struct tree *tree, node_id id, GString *out)
{
    struct node *node = node_at(tree, id);
    if (!node || id == TREE_ROOT)
        return;
    node_path(tree, node->parent, out);
    if (out->len)
        g_string_append_c(out, '/');
    g_string_append(out, node->name);
}

void tree_ino_path(struct tree *tree, tree_ino ino, GString *out)
{
    if (!is_family_ino(ino)) {
        node_path(tree, (node_id)(ino - 1), out);
        return;
    }
    struct family *family = family_of(tree, ino);
    /* A family's directory is the node it is attached to; a nested
     * family's (frames/<n>.mem/) is known only by its key's parent. */
    for (guint i = 0; family && i < tree->nodes->len; i++) {
        struct node *node = tree->nodes->pdata[i];
        if (node->family == family) {
            node_path(tree, i, out);
            g_string_append_c(out, '/');
            family->ops->name(family, ino & FAMILY_KEY_MASK, out);
            return;
        }
    }
    g_string_append_printf(out, "inode %" G_GUINT64_FORMAT, (uint64_t)ino);
}

/* An /errors line for a size or read that failed, saying why. */
static void report_failure(struct trace *trace, const char *what, uint64_t offset, tree_ino ino, int rc)
{
    GString *path = g_string_new(NULL);
    tree_ino_path(trace->tree, ino, path);
    char *problem = trace_read_problem(trace, rc);
    trace_error(trace, what, offset, "%s: %s: %s", path->str, g_strerror(-rc), problem);
    g_free(problem);
    g_string_free(path, TRUE);
}

static int local_file_size(struct trace *trace, tree_ino ino, uint64_t *size)
{
    struct view view;
    if (!local_file_view(trace->tree, ino, &view))
        return -EISDIR;
    if (view.ops->dynamic) {
        *size = view.ops->size(&view);
        return 0;
    }
    const struct view_index *index = tree_view_index(trace, ino);
    if (!index) {
        report_failure(trace, "size", 0, ino, -EIO);
        return -EIO;
    }
    *size = index->size;
    return 0;
}

static ssize_t local_file_read(struct trace *trace, tree_ino ino, uint64_t offset, void *buf, size_t len,
                               struct view_lent *lent)
{
    struct view view;
    if (!local_file_view(trace->tree, ino, &view))
        return -EISDIR;
    if (view.ops->dynamic)
        return view.ops->read_at(&view, offset, buf, len);
    const struct view_index *index = tree_view_index(trace, ino);
    ssize_t n = index ? view_read_lent(trace, &view, index, offset, buf, len, lent) : -EIO;
    if (n < 0)
        report_failure(trace, "read", offset, ino, (int)n);
    return n;
}

/* ---- persistence ---- */

static uint64_t fnv1a(uint64_t hash, const void *data, size_t len)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < len; i++)
        hash = (hash ^ p[i]) * 0x100000001b3ull;
    return hash;
}

uint64_t tree_fingerprint(struct tree *tree)
{
    uint64_t hash = 0xcbf29ce484222325ull;
    for (guint i = 0; i < tree->nodes->len; i++) {
        struct node *node = tree->nodes->pdata[i];
        uint32_t fields[3] = { node->parent, node->kind, node->family ? node->family->id + 1 : 0 };
        hash = fnv1a(hash, fields, sizeof fields);
        hash = fnv1a(hash, node->name, strlen(node->name) + 1);
        if (node->bytes) {
            uint64_t size = g_bytes_get_size(node->bytes);
            hash = fnv1a(hash, &size, sizeof size);
        }
    }
    uint64_t families = tree->families->len;
    return fnv1a(hash, &families, sizeof families);
}

static gint compare_inos(gconstpointer a, gconstpointer b)
{
    gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
    return (x > y) - (x < y);
}

void tree_foreach_view_index(struct tree *tree, tree_view_index_fn fn, void *data)
{
    for (guint i = 0; i < tree->nodes->len; i++) {
        struct node *node = tree->nodes->pdata[i];
        struct view_index *index = g_atomic_pointer_get(&node->index);
        if (index && node->view.ops && !node->view.ops->size)
            fn(data, (tree_ino)i + 1, index);
    }
    /* In inode order: the hash table's order depends on the order the
     * views were sized in, and the saved index must not. */
    pthread_mutex_lock(&tree->family_index_lock);
    GArray *inos = g_array_new(FALSE, FALSE, sizeof(gint64));
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, tree->family_indexes);
    while (g_hash_table_iter_next(&it, &key, NULL))
        g_array_append_val(inos, *(gint64 *)key);
    g_array_sort(inos, compare_inos);
    for (guint i = 0; i < inos->len; i++) {
        gint64 ino = g_array_index(inos, gint64, i);
        fn(data, (tree_ino)ino, g_hash_table_lookup(tree->family_indexes, &ino));
    }
    g_array_free(inos, TRUE);
    pthread_mutex_unlock(&tree->family_index_lock);
}

gboolean tree_set_view_index(struct tree *tree, tree_ino ino, struct view_index *index)
{
    struct view view;
    if (!local_file_view(tree, ino, &view) || view.ops->dynamic || view.ops->size)
        return FALSE;
    struct view_index *copy = g_new(struct view_index, 1);
    *copy = *index;
    if (!is_family_ino(ino)) {
        struct node *node = node_of(tree, ino);
        if (node->index) {
            g_free(copy);
            return FALSE;
        }
        g_atomic_pointer_set(&node->index, copy);
        return TRUE;
    }
    pthread_mutex_lock(&tree->family_index_lock);
    gboolean fresh = !g_hash_table_contains(tree->family_indexes, &ino);
    if (fresh) {
        gint64 *key = g_new(gint64, 1);
        *key = (gint64)ino;
        g_hash_table_insert(tree->family_indexes, key, copy);
    }
    pthread_mutex_unlock(&tree->family_index_lock);
    if (!fresh)
        g_free(copy);
    return fresh;
}

uint64_t tree_view_indexes_built(struct tree *tree)
{
    return (uint64_t)g_atomic_int_get(&tree->indexes_built);
}

/* ---- grafts: folders of traces ---- */

int tree_add_graft(struct tree *tree, node_id parent, const char *name,
                   const struct tree_graft_source *source, node_id *out)
{
    if (tree->grafts->len >= TREE_MAX_GRAFTS)
        return -1;
    node_id id = tree_add_dir(tree, parent, name);
    if (id == TREE_NO_NODE)
        return -1;
    if (!tree->slot_grafts)
        tree->slot_grafts = g_new0(guint, FAMILY_SLOTS);
    struct graft *graft = g_new0(struct graft, 1);
    graft->node = id;
    graft->source = *source;
    pthread_mutex_init(&graft->lock, NULL);
    g_ptr_array_add(tree->grafts, graft);
    node_at(tree, id)->graft = tree->grafts->len;
    if (out)
        *out = id;
    return (int)tree->grafts->len - 1;
}

struct trace *tree_graft_trace(struct tree *tree, uint32_t number)
{
    if (number >= tree->grafts->len)
        return NULL;
    struct graft *graft = tree->grafts->pdata[number];
    pthread_mutex_lock(&graft->lock);
    struct trace *trace = graft->trace;
    pthread_mutex_unlock(&graft->lock);
    return trace;
}

/* Gives graft `tagged` the family slots its trace needs; FALSE when this
 * tree has not that many left. */
static gboolean reserve_family_slots(struct tree *tree, uint32_t tagged, struct graft *graft, struct trace *sub)
{
    guint count = sub->tree->families->len;
    pthread_mutex_lock(&tree->slots_lock);
    if (tree->next_slot == 0)
        tree->next_slot = tree->families->len;   /* this tree's own families come first */
    gboolean room = count <= FAMILY_SLOTS - tree->next_slot;
    if (room) {
        graft->family_base = tree->next_slot;
        for (guint i = 0; i < count; i++)
            g_atomic_int_set(&tree->slot_grafts[tree->next_slot + i], tagged);
        tree->next_slot += count;
    }
    pthread_mutex_unlock(&tree->slots_lock);
    return room;
}

/* The sub-trace of graft `number + 1`, opened on first use. */
static struct trace *graft_open(struct tree *tree, uint32_t tagged)
{
    if (tagged == 0 || tagged > tree->grafts->len)
        return NULL;
    struct graft *graft = tree->grafts->pdata[tagged - 1];
    pthread_mutex_lock(&graft->lock);
    if (!graft->tried) {
        struct trace *sub = graft->source.open(graft->source.context, tagged - 1);
        if (sub && !reserve_family_slots(tree, tagged, graft, sub)) {
            graft->source.refused(graft->source.context, tagged - 1,
                                  "not shown: the folder's traces use all of its 65,536 directories of generated entries");
            trace_close(sub);
            sub = NULL;
        }
        graft->trace = sub;
        graft->tried = TRUE;
    }
    struct trace *trace = graft->trace;
    pthread_mutex_unlock(&graft->lock);
    return trace;
}

/* The graft number + 1 an inode of this tree belongs to, 0 for its own. */
static uint32_t graft_bits(struct tree *tree, tree_ino ino)
{
    if (!is_family_ino(ino))
        return (uint32_t)(ino >> GRAFT_SHIFT);
    uint64_t slot = (ino >> FAMILY_KEY_BITS) & FAMILY_ID_MASK;
    return tree->slot_grafts ? g_atomic_int_get(&tree->slot_grafts[slot]) : 0;
}

/* The sub-trace's own inode for an inode of graft `tagged`. */
static tree_ino graft_inner(struct tree *tree, uint32_t tagged, tree_ino ino)
{
    if (!is_family_ino(ino))
        return ino & NODE_INO_MASK;
    struct graft *graft = tree->grafts->pdata[tagged - 1];
    uint64_t slot = (ino >> FAMILY_KEY_BITS) & FAMILY_ID_MASK;
    return FAMILY_BIT | ((slot - graft->family_base) << FAMILY_KEY_BITS) | (ino & FAMILY_KEY_MASK);
}

/* A sub-trace inode as this tree shows it: its root is the graft directory. */
static tree_ino graft_tag(struct tree *tree, uint32_t tagged, tree_ino inner)
{
    struct graft *graft = tree->grafts->pdata[tagged - 1];
    if (inner == TREE_ROOT_INO)
        return (tree_ino)graft->node + 1;
    if (!is_family_ino(inner))
        return inner | ((uint64_t)tagged << GRAFT_SHIFT);
    uint64_t id = (inner >> FAMILY_KEY_BITS) & FAMILY_ID_MASK;
    return FAMILY_BIT | ((graft->family_base + id) << FAMILY_KEY_BITS) | (inner & FAMILY_KEY_MASK);
}

/* Where a directory inode's listing lives: a graft directory lists its
 * sub-trace's root. */
static struct trace *directory_target(struct tree *tree, tree_ino dir, tree_ino *inner, uint32_t *tagged)
{
    *tagged = graft_bits(tree, dir);
    if (*tagged) {
        struct trace *sub = graft_open(tree, *tagged);
        *inner = graft_inner(tree, *tagged, dir);
        return sub;
    }
    struct node *node = node_of(tree, dir);
    if (node && node->graft) {
        *tagged = node->graft;
        *inner = TREE_ROOT_INO;
        return graft_open(tree, *tagged);
    }
    *inner = dir;
    return NULL;
}

static void tag_entry(struct tree *tree, uint32_t tagged, struct tree_entry_info *entry)
{
    entry->ino = graft_tag(tree, tagged, entry->ino);
    entry->parent = graft_tag(tree, tagged, entry->parent);
}

const struct stat *tree_ino_source(struct tree *tree, tree_ino ino)
{
    uint32_t tagged = graft_bits(tree, ino);
    if (!tagged) {
        struct node *node = node_of(tree, ino);
        tagged = node ? node->graft : 0;
    }
    if (!tagged || tagged > tree->grafts->len)
        return NULL;
    const struct graft *graft = tree->grafts->pdata[tagged - 1];
    return &graft->source.st;
}

gboolean tree_stat_ino(struct tree *tree, tree_ino ino, struct tree_entry_info *out)
{
    uint32_t tagged = graft_bits(tree, ino);
    if (!tagged)
        return local_stat_ino(tree, ino, out);
    struct trace *sub = graft_open(tree, tagged);
    if (!sub || !local_stat_ino(sub->tree, graft_inner(tree, tagged, ino), out))
        return FALSE;
    tag_entry(tree, tagged, out);
    return TRUE;
}

gboolean tree_lookup(struct tree *tree, tree_ino dir, const char *name, struct tree_entry_info *out)
{
    tree_ino inner;
    uint32_t tagged;
    struct trace *sub = directory_target(tree, dir, &inner, &tagged);
    if (!tagged)
        return local_lookup(tree, dir, name, out);
    if (!sub || !local_lookup(sub->tree, inner, name, out))
        return FALSE;
    tag_entry(tree, tagged, out);
    return TRUE;
}

struct tagging_readdir {
    struct tree *tree;
    uint32_t tagged;
    tree_readdir_fn fn;
    void *data;
};

static gboolean readdir_tagged(void *data, const char *name, const struct tree_entry_info *entry, uint64_t next)
{
    struct tagging_readdir *tagging = data;
    struct tree_entry_info outer = *entry;
    tag_entry(tagging->tree, tagging->tagged, &outer);
    return tagging->fn(tagging->data, name, &outer, next);
}

void tree_readdir(struct tree *tree, tree_ino dir, uint64_t from, tree_readdir_fn fn, void *data)
{
    tree_ino inner;
    uint32_t tagged;
    struct trace *sub = directory_target(tree, dir, &inner, &tagged);
    if (!tagged) {
        local_readdir(tree, dir, from, fn, data);
        return;
    }
    if (!sub) {
        /* A trace that failed to open: an empty directory (see /errors). */
        struct tree_entry_info self;
        if (local_stat_ino(tree, dir, &self)) {
            if (from == 0 && !fn(data, ".", &self, 1))
                return;
            if (from <= 1)
                fn(data, "..", &self, 2);
        }
        return;
    }
    struct tagging_readdir tagging = { tree, tagged, fn, data };
    local_readdir(sub->tree, inner, from, readdir_tagged, &tagging);
}

gboolean tree_file_view(struct tree *tree, tree_ino ino, struct view *out)
{
    uint32_t tagged = graft_bits(tree, ino);
    if (!tagged)
        return local_file_view(tree, ino, out);
    struct trace *sub = graft_open(tree, tagged);
    return sub && local_file_view(sub->tree, graft_inner(tree, tagged, ino), out);
}

const char *tree_symlink_target(struct tree *tree, tree_ino ino)
{
    uint32_t tagged = graft_bits(tree, ino);
    if (!tagged)
        return local_symlink_target(tree, ino);
    struct trace *sub = graft_open(tree, tagged);
    return sub ? local_symlink_target(sub->tree, graft_inner(tree, tagged, ino)) : NULL;
}

int tree_file_size(struct trace *trace, tree_ino ino, uint64_t *size)
{
    uint32_t tagged = graft_bits(trace->tree, ino);
    if (!tagged)
        return local_file_size(trace, ino, size);
    struct trace *sub = graft_open(trace->tree, tagged);
    return sub ? local_file_size(sub, graft_inner(trace->tree, tagged, ino), size) : -ENOENT;
}

ssize_t tree_file_read_lent(struct trace *trace, tree_ino ino, uint64_t offset, void *buf, size_t len,
                           struct view_lent *lent)
{
    uint32_t tagged = graft_bits(trace->tree, ino);
    if (!tagged)
        return local_file_read(trace, ino, offset, buf, len, lent);
    struct trace *sub = graft_open(trace->tree, tagged);
    return sub ? local_file_read(sub, graft_inner(trace->tree, tagged, ino), offset, buf, len, lent) : -ENOENT;
}

ssize_t tree_file_read(struct trace *trace, tree_ino ino, uint64_t offset, void *buf, size_t len)
{
    return tree_file_read_lent(trace, ino, offset, buf, len, NULL);
}
