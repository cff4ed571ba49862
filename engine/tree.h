/* The directory tree of a mounted trace.  Built once by the format's index
 * pass, immutable afterwards, so lookups need no locks.
 *
 * Inode numbers: a node made with tree_add_* has inode node_id + 1 (the root
 * is node 0, inode 1).  Families (big generated listings such as a million
 * calls/<n>.json) have inodes (1 << 63) | (family id << 40) | entry key and
 * cost no memory per entry (family id < 2^16, key < 2^40).  Inodes inside a
 * graft carry the graft number + 1 in bits 32..62 (nodes) or a family slot
 * the graft was given when its trace was opened (families). */
#ifndef TRACEFS_TREE_H
#define TRACEFS_TREE_H

#include <glib.h>
#include <stdint.h>
#include "view.h"

typedef uint32_t node_id;
#define TREE_ROOT ((node_id)0)
#define TREE_NO_NODE ((node_id)UINT32_MAX)

enum node_kind { NODE_DIR, NODE_FILE, NODE_SYMLINK };

struct tree;

/* A family: a directory's generated entries.  Entry keys are the decoder's
 * own numbers (< 2^40), e.g. call numbers.  The listing of one directory is
 * entries 0..count-1 (an entry's position), each mapped to a key. */
struct family;
struct family_ops {
    /* Entries in the directory `dir_key` (the key of the parent entry for a
     * nested family; 0 for a family attached to a node). */
    uint64_t (*count)(const struct family *family, uint64_t dir_key);
    /* Key of the n-th entry of directory dir_key. */
    uint64_t (*entry_key)(const struct family *family, uint64_t dir_key, uint64_t n);
    /* Name of the entry with this key (a valid file name). */
    void (*name)(const struct family *family, uint64_t key, GString *out);
    /* Key of the entry named `name` in dir_key; FALSE when there is none. */
    gboolean (*lookup)(const struct family *family, uint64_t dir_key, const char *name, uint64_t *key);
    /* Content of a file entry (unused when `entries` is set). */
    void (*view)(const struct family *family, uint64_t key, struct view *out);
};

struct family {
    const struct family_ops *ops;
    void *context;
    uint64_t arg[2];
    /* When non-NULL every entry is a directory whose listing is this family
     * with dir_key = the entry's key (e.g. frames/<n>.mem/<addr>). */
    struct family *entries;
    /* Optional, with `entries`: only the keys it accepts are directories,
     * the others are files served by ops->view (one directory mixing files
     * and subdirectories, e.g. frames/<n> beside frames/<n>.mem/). */
    gboolean (*entry_is_dir)(const struct family *family, uint64_t key);
    /* private */
    uint32_t id;
};

struct tree *tree_new(void);
void tree_free(struct tree *tree);

/* Names are made safe (no '/', no control characters, not "." or "..",
 * not empty, at most LIMIT_NAME_BYTES) by escaping, never dropped; a name
 * already present in the directory gets a "~2", "~3"... suffix.  Return the
 * new node, or TREE_NO_NODE when the tree is full (LIMIT_TREE_NODES).  The
 * _len forms take a name with its length, so that a NUL in a name from the
 * trace is escaped ("%00") instead of ending it. */
node_id tree_add_dir(struct tree *tree, node_id parent, const char *name);
node_id tree_add_dir_len(struct tree *tree, node_id parent, const char *name, size_t len);
/* A new directory named by a number in decimal: every format names its
 * threads/<tid> (and FXT its cpus/<n>) this way. */
node_id tree_add_number_dir(struct tree *tree, node_id parent, int64_t number);
/* The existing directory called name, or a new one. */
node_id tree_dir(struct tree *tree, node_id parent, const char *name);
node_id tree_add_view(struct tree *tree, node_id parent, const char *name, const struct view *view);
node_id tree_add_view_len(struct tree *tree, node_id parent, const char *name, size_t len, const struct view *view);
/* A file with fixed content; takes ownership of text (g_malloc'd). */
node_id tree_add_text(struct tree *tree, node_id parent, const char *name, char *text, size_t len);
node_id tree_add_string(struct tree *tree, node_id parent, const char *name, GString *text); /* frees text */
node_id tree_add_symlink(struct tree *tree, node_id parent, const char *name, const char *target);
node_id tree_add_symlink_len(struct tree *tree, node_id parent, const char *name, size_t len, const char *target);
/* Attaches generated entries to a directory node; the tree takes ownership
 * of a copy of *family (and of family->entries, g_malloc'd). */
void tree_add_family(struct tree *tree, node_id parent, const struct family *family);

/* Makes any string a safe file name: '/', '%' and control characters
 * (newline, NUL...) as %XX ("%2F", "%25", "%0A", "%00"), the leading '.'
 * of "." and ".." as "%2E", empty as "%00". */
void tree_safe_name(const char *raw, GString *out);
void tree_safe_name_len(const char *raw, size_t len, GString *out);

/* ---- queries (after building; used by the FUSE layer and `tracefs ls`) ---- */
typedef uint64_t tree_ino;
#define TREE_ROOT_INO ((tree_ino)1)

struct tree_entry_info {
    tree_ino ino;
    enum node_kind kind;
    tree_ino parent;
};

gboolean tree_stat_ino(struct tree *tree, tree_ino ino, struct tree_entry_info *out);
gboolean tree_lookup(struct tree *tree, tree_ino dir, const char *name, struct tree_entry_info *out);
/* Calls fn for entries from position `from` on, until fn returns FALSE.
 * Positions 0 and 1 are "." and "..". */
typedef gboolean (*tree_readdir_fn)(void *data, const char *name, const struct tree_entry_info *entry, uint64_t next_position);
void tree_readdir(struct tree *tree, tree_ino dir, uint64_t from, tree_readdir_fn fn, void *data);
/* The view of a file inode; FALSE when it is not a file. */
gboolean tree_file_view(struct tree *tree, tree_ino ino, struct view *out);
const char *tree_symlink_target(struct tree *tree, tree_ino ino);
/* Resolves a path like "threads/12/events" from the root. */
gboolean tree_resolve(struct tree *tree, const char *path, struct tree_entry_info *out);
uint64_t tree_node_count(struct tree *tree);

/* The file's sized view index, built on first use (thread-safe).  For a
 * small family file (no checkpoints) it is built anew on each call and
 * valid only until this thread's next call. */
const struct view_index *tree_view_index(struct trace *trace, tree_ino ino);
/* Size and content of any file inode, static or dynamic: what the FUSE
 * layer and `tracefs cat` serve.  Negative errno on failure. */
int tree_file_size(struct trace *trace, tree_ino ino, uint64_t *size);
ssize_t tree_file_read(struct trace *trace, tree_ino ino, uint64_t offset, void *buf, size_t len);
/* The same, lending what it can from the text cache (see view_read_lent):
 * the FUSE layer's read, which releases `lent` after its reply. */
ssize_t tree_file_read_lent(struct trace *trace, tree_ino ino, uint64_t offset, void *buf, size_t len,
                            struct view_lent *lent);
gboolean tree_file_is_dynamic(struct tree *tree, tree_ino ino);
/* The path of one of the tree's own inodes, for messages ("calls/12.json"). */
void tree_ino_path(struct tree *tree, tree_ino ino, GString *out);

#endif

#ifndef TRACEFS_TREE_HELPERS
#define TRACEFS_TREE_HELPERS
/* Parses "<decimal><suffix>" strictly (no sign, no leading zeros except "0"),
 * so that every number has exactly one name: for family lookups. */
gboolean tree_parse_number_name(const char *name, const char *suffix, uint64_t *value);
#endif

#ifndef TRACEFS_TREE_GRAFTS
#define TRACEFS_TREE_GRAFTS
/* ---- grafts: a directory showing another trace's tree (folders of traces) ---- */
/* Traces in one folder.  Inodes leave room for 2^31; this bounds the
 * folder's tables (a node and ~200 bytes each), not the encoding. */
#define TREE_MAX_GRAFTS (1u << 20)
#include <sys/stat.h>
struct tree_graft_source {
    /* Opens graft `number`'s trace; NULL when it cannot be opened (the
     * opener reports why).  Called once, on first access, from any thread. */
    struct trace *(*open)(void *context, uint32_t number);
    /* Called instead of showing an opened trace the tree cannot hold (its
     * families do not fit in the 2^16 this tree gives all its grafts). */
    void (*refused)(void *context, uint32_t number, const char *why);
    void *context;
    /* Owner, mode and times of the trace (its target, for a symlink): what
     * the graft's directory and everything in it are shown with. */
    struct stat st;
};
/* Adds directory `name` whose content is a trace opened lazily.  Returns the
 * graft number, or -1 when TREE_MAX_GRAFTS are used. */
int tree_add_graft(struct tree *tree, node_id parent, const char *name,
                   const struct tree_graft_source *source, node_id *out);
/* The graft's trace if it has been opened, else NULL. */
struct trace *tree_graft_trace(struct tree *tree, uint32_t number);
/* The stat of the trace an inode shows: its graft's source.st, or NULL for
 * the tree's own inodes (the mounted trace's). */
const struct stat *tree_ino_source(struct tree *tree, tree_ino ino);
#endif

/* ---- persistence (engine/index_file.c) ---- */
/* A fingerprint of the tree's shape (names, kinds, families): saved view
 * indexes apply only to a tree with the same fingerprint. */
uint64_t tree_fingerprint(struct tree *tree);
typedef void (*tree_view_index_fn)(void *data, tree_ino ino, const struct view_index *index);
/* Every view index built so far. */
void tree_foreach_view_index(struct tree *tree, tree_view_index_fn fn, void *data);
/* Installs an index for a file (takes ownership of *index's checkpoints);
 * FALSE when ino is not a file or already has one. */
gboolean tree_set_view_index(struct tree *tree, tree_ino ino, struct view_index *index);
/* How many view indexes have been built since the tree was made. */
uint64_t tree_view_indexes_built(struct tree *tree);
