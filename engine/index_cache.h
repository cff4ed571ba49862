/* The directory of saved indexes ($XDG_CACHE_HOME/tracefs or -o index_dir=):
 * whether it may be trusted, how big it may grow, and storing a file in it.
 *
 * Its files are `<32 hex>.index` (one per trace) and, while a save runs,
 * `<32 hex>.index.XXXXXX` temporaries.  A save holds an flock on its
 * temporary from creation to rename, so a temporary whose lock can be taken
 * was left by a killed save and may be removed.  Saves also hold an flock
 * on the directory's `.lock` file, so that concurrent mounts evict against
 * one total.
 * Recency is the file's mtime, set when the index is written and touched
 * when it is used (atime is unreliable under relatime and noatime). */
#ifndef TRACEFS_INDEX_CACHE_H
#define TRACEFS_INDEX_CACHE_H

#include <glib.h>
#include <stdint.h>
#include <sys/stat.h>

struct trace_options;

enum index_cache_kind { INDEX_CACHE_OTHER, INDEX_CACHE_INDEX, INDEX_CACHE_TEMPORARY };

struct index_cache_file {
    char *name;                   /* inside the directory */
    enum index_cache_kind kind;
    uint64_t size;
    struct timespec last_use;     /* mtime */
};

/* The directory the options name (g_free). */
char *index_cache_dir(const struct trace_options *options);
/* What a name in the directory is. */
enum index_cache_kind index_cache_kind(const char *name);
/* Why a saved index or its directory must not be trusted (a static
 * "refused (...)" line), or NULL: it must be this user's and writable by
 * no one else, since a forged index with a valid checksum changes what a
 * mount serves. */
const char *index_cache_untrusted(const struct stat *st, gboolean directory);
/* Opens the directory read-only: its fd, or -errno (-EPERM with *refused
 * set when it is not trusted). */
int index_cache_open_dir(const char *dir, const char **refused);
/* The cap on the directory's total size: `index_max`, or when 0 the smaller
 * of 2 GiB and 10 % of the free space on its filesystem. */
uint64_t index_cache_limit(int dirfd, uint64_t index_max);
/* Our files in the directory (struct index_cache_file, owned), oldest first. */
GPtrArray *index_cache_list(int dirfd);
/* Removes the temporary if no save holds it (TRUE when it is gone). */
gboolean index_cache_remove_stale(int dirfd, const char *name);
/* Removes stale temporaries whose names start with `prefix` (all when ""). */
void index_cache_remove_stale_temporaries(int dirfd, const char *prefix);

/* Writes `size` bytes through `write` (which returns 0 or -errno) to `name`
 * in `dir`, creating the directory (0700) when missing: under the
 * directory's lock, stale temporaries are removed and least recently used
 * indexes until the new file fits under the cap, then a locked temporary
 * is written and renamed over `name`.  Returns 0, or -1 with *why set
 * (g_free). */
int index_cache_store(const char *dir, const char *name, uint64_t size, uint64_t index_max,
                      int (*writer)(int fd, void *context), void *context, char **why);

#endif
