/* The tree: concrete nodes in an array (inode = id + 1), plus families of
 * generated entries whose inodes encode (family id, key). */
#include <pthread.h>
#include <errno.h>
#include <string.h>
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
/* Inodes inside a grafted sub-trace (folders of traces) carry the graft
 * number + 1 in bits 56..62; 0 there means this tree's own inode. */
#define GRAFT_SHIFT 56
#define GRAFT_BITS_MASK (0x7full << GRAFT_SHIFT)
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
    GPtrArray *families;         /* struct family * */
    pthread_mutex_t stripes[INDEX_STRIPES];
    pthread_mutex_t family_index_lock;
    GHashTable *family_indexes;  /* ino -> struct view_index * */
    gint indexes_built;
    GPtrArray *grafts;           /* struct graft * */
};

struct graft {
    node_id node;
    tree_graft_open_fn open;
    void *context;
    pthread_mutex_t lock;
    gboolean tried;
    struct trace *trace;         /* NULL until opened, or when it failed */
};

static guint name_key_hash(gconstpointer p)
{
    const struct name_key *key = p;
    return g_str_hash(key->name) * 31u + key->parent;
}

static gboolean name_key_equal(gconstpointer a, gconstpointer b)
{
    const struct name_key *x = a, *y = b;
    return x->parent == y->parent && strcmp(x->name, y->name) == 0;
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
    tree->families = g_ptr_array_new();
    for (int i = 0; i < INDEX_STRIPES; i++)
        pthread_mutex_init(&tree->stripes[i], NULL);
    pthread_mutex_init(&tree->family_index_lock, NULL);
    tree->family_indexes = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, view_index_free);
    tree->grafts = g_ptr_array_new();
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
    g_ptr_array_free(tree->nodes, TRUE);
    g_hash_table_destroy(tree->by_name);
    g_hash_table_destroy(tree->family_indexes);
    for (int i = 0; i < INDEX_STRIPES; i++)
        pthread_mutex_destroy(&tree->stripes[i]);
    pthread_mutex_destroy(&tree->family_index_lock);
    g_free(tree);
}

void tree_safe_name(const char *raw, GString *out)
{
    if (!raw || !*raw) {
        g_string_append(out, "%00");
        return;
    }
    size_t start = out->len;
    if (strcmp(raw, ".") == 0 || strcmp(raw, "..") == 0) {
        g_string_append(out, "%2E");
        raw++;
    }
    for (const char *p = raw; *p; p++) {
        if (*p == '/')
            g_string_append(out, "%2F");
        else if (*p == '%')
            g_string_append(out, "%25");
        else
            g_string_append_c(out, *p);
    }
    if (out->len - start > LIMIT_NAME_BYTES - 8) {
        /* Keep names within NAME_MAX, leaving room for a "~N" suffix;
         * cut on a UTF-8 boundary. */
        size_t cut = start + LIMIT_NAME_BYTES - 8;
        while (cut > start && ((unsigned char)out->str[cut] & 0xC0) == 0x80)
            cut--;
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

static node_id add_node(struct tree *tree, node_id parent, const char *raw_name, enum node_kind kind)
{
    struct node *dir = node_at(tree, parent);
    if (!dir || dir->kind != NODE_DIR || tree->nodes->len >= LIMIT_TREE_NODES)
        return TREE_NO_NODE;
    GString *name = g_string_new(NULL);
    tree_safe_name(raw_name, name);
    size_t base_len = name->len;
    for (unsigned n = 2; find_child(tree, parent, name->str) != TREE_NO_NODE; n++) {
        g_string_truncate(name, base_len);
        g_string_append_printf(name, "~%u", n);
    }
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

node_id tree_add_dir(struct tree *tree, node_id parent, const char *name)
{
    return add_node(tree, parent, name, NODE_DIR);
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
    node_id id = add_node(tree, parent, name, NODE_FILE);
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
    node_id id = add_node(tree, parent, name, NODE_SYMLINK);
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
        view_index_build_keeping_text(trace, view, trace->text_cache, stats.bytes_budget, index);
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
    if (!index)
        return -EIO;
    *size = index->size;
    return 0;
}

static ssize_t local_file_read(struct trace *trace, tree_ino ino, uint64_t offset, void *buf, size_t len)
{
    struct view view;
    if (!local_file_view(trace->tree, ino, &view))
        return -EISDIR;
    if (view.ops->dynamic)
        return view.ops->read_at(&view, offset, buf, len);
    const struct view_index *index = tree_view_index(trace, ino);
    ssize_t n = index ? view_read(trace, &view, index, offset, buf, len) : -EIO;
    if (n < 0)
        trace_error(trace, "read", offset, "inode %" G_GUINT64_FORMAT ": %s (has the trace changed since it was mounted?)",
                    (uint64_t)ino, g_strerror((int)-n));
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

void tree_foreach_view_index(struct tree *tree, tree_view_index_fn fn, void *data)
{
    for (guint i = 0; i < tree->nodes->len; i++) {
        struct node *node = tree->nodes->pdata[i];
        struct view_index *index = g_atomic_pointer_get(&node->index);
        if (index && node->view.ops && !node->view.ops->size)
            fn(data, (tree_ino)i + 1, index);
    }
    pthread_mutex_lock(&tree->family_index_lock);
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, tree->family_indexes);
    while (g_hash_table_iter_next(&it, &key, &value))
        fn(data, (tree_ino) * (gint64 *)key, value);
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
                   tree_graft_open_fn open, void *context, node_id *out)
{
    if (tree->grafts->len >= TREE_MAX_GRAFTS)
        return -1;
    node_id id = tree_add_dir(tree, parent, name);
    if (id == TREE_NO_NODE)
        return -1;
    struct graft *graft = g_new0(struct graft, 1);
    graft->node = id;
    graft->open = open;
    graft->context = context;
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

/* The sub-trace of graft `number + 1`, opened on first use. */
static struct trace *graft_open(struct tree *tree, uint32_t tagged)
{
    if (tagged == 0 || tagged > tree->grafts->len)
        return NULL;
    struct graft *graft = tree->grafts->pdata[tagged - 1];
    pthread_mutex_lock(&graft->lock);
    if (!graft->tried) {
        graft->trace = graft->open(graft->context, tagged - 1);
        graft->tried = TRUE;
    }
    struct trace *trace = graft->trace;
    pthread_mutex_unlock(&graft->lock);
    return trace;
}

static uint32_t graft_bits(tree_ino ino) { return (uint32_t)((ino & GRAFT_BITS_MASK) >> GRAFT_SHIFT); }

/* A sub-trace inode as this tree shows it: its root is the graft directory. */
static tree_ino graft_tag(struct tree *tree, uint32_t tagged, tree_ino inner)
{
    if (inner == TREE_ROOT_INO) {
        struct graft *graft = tree->grafts->pdata[tagged - 1];
        return (tree_ino)graft->node + 1;
    }
    return inner | ((uint64_t)tagged << GRAFT_SHIFT);
}

/* Where a directory inode's listing lives: a graft directory lists its
 * sub-trace's root. */
static struct trace *directory_target(struct tree *tree, tree_ino dir, tree_ino *inner, uint32_t *tagged)
{
    *tagged = graft_bits(dir);
    if (*tagged) {
        *inner = dir & ~GRAFT_BITS_MASK;
        return graft_open(tree, *tagged);
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

gboolean tree_stat_ino(struct tree *tree, tree_ino ino, struct tree_entry_info *out)
{
    uint32_t tagged = graft_bits(ino);
    if (!tagged)
        return local_stat_ino(tree, ino, out);
    struct trace *sub = graft_open(tree, tagged);
    if (!sub || !local_stat_ino(sub->tree, ino & ~GRAFT_BITS_MASK, out))
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
    uint32_t tagged = graft_bits(ino);
    if (!tagged)
        return local_file_view(tree, ino, out);
    struct trace *sub = graft_open(tree, tagged);
    return sub && local_file_view(sub->tree, ino & ~GRAFT_BITS_MASK, out);
}

const char *tree_symlink_target(struct tree *tree, tree_ino ino)
{
    uint32_t tagged = graft_bits(ino);
    if (!tagged)
        return local_symlink_target(tree, ino);
    struct trace *sub = graft_open(tree, tagged);
    return sub ? local_symlink_target(sub->tree, ino & ~GRAFT_BITS_MASK) : NULL;
}

int tree_file_size(struct trace *trace, tree_ino ino, uint64_t *size)
{
    uint32_t tagged = graft_bits(ino);
    if (!tagged)
        return local_file_size(trace, ino, size);
    struct trace *sub = graft_open(trace->tree, tagged);
    return sub ? local_file_size(sub, ino & ~GRAFT_BITS_MASK, size) : -ENOENT;
}

ssize_t tree_file_read(struct trace *trace, tree_ino ino, uint64_t offset, void *buf, size_t len)
{
    uint32_t tagged = graft_bits(ino);
    if (!tagged)
        return local_file_read(trace, ino, offset, buf, len);
    struct trace *sub = graft_open(trace->tree, tagged);
    return sub ? local_file_read(sub, ino & ~GRAFT_BITS_MASK, offset, buf, len) : -ENOENT;
}
