/* The directory of saved indexes (see index_cache.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include "index_cache.h"
#include "trace.h"

/* The default cap: 2 GiB, or a tenth of the free space when that is less. */
#define INDEX_CACHE_DEFAULT_MAX (2ull << 30)
#define INDEX_CACHE_FREE_SHARE 10u
/* How long a save waits for another mount's save to release the directory. */
#define INDEX_CACHE_LOCK_WAIT_US (10 * G_USEC_PER_SEC)
#define INDEX_CACHE_HASH_CHARS 32u
#define INDEX_CACHE_SUFFIX_CHARS 6u
#define INDEX_CACHE_LOCK_NAME ".lock"

char *index_cache_dir(const struct trace_options *options)
{
    if (options->index_dir)
        return g_strdup(options->index_dir);
    return g_build_filename(g_get_user_cache_dir(), "tracefs", NULL);
}

enum index_cache_kind index_cache_kind(const char *name)
{
    if (strspn(name, "0123456789abcdef") != INDEX_CACHE_HASH_CHARS ||
        strncmp(name + INDEX_CACHE_HASH_CHARS, ".index", 6) != 0)
        return INDEX_CACHE_OTHER;
    const char *tail = name + INDEX_CACHE_HASH_CHARS + 6;
    if (*tail == '\0')
        return INDEX_CACHE_INDEX;
    if (*tail == '.' && strlen(tail + 1) == INDEX_CACHE_SUFFIX_CHARS)
        return INDEX_CACHE_TEMPORARY;
    return INDEX_CACHE_OTHER;
}

const char *index_cache_untrusted(const struct stat *st, gboolean directory)
{
    if (directory && !S_ISDIR(st->st_mode))
        return "refused (the index directory is not a directory)";
    if (!directory && !S_ISREG(st->st_mode))
        return "refused (not a regular file)";
    if (st->st_uid != geteuid())
        return directory ? "refused (the index directory is not owned by you)" : "refused (not owned by you)";
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return directory ? "refused (the index directory is writable by group or others)"
                         : "refused (writable by group or others)";
    return NULL;
}

int index_cache_open_dir(const char *dir, const char **refused)
{
    *refused = NULL;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    *refused = index_cache_untrusted(&st, TRUE);
    if (*refused) {
        close(fd);
        return -EPERM;
    }
    return fd;
}

uint64_t index_cache_limit(int dirfd, uint64_t index_max)
{
    if (index_max)
        return index_max;
    uint64_t limit = INDEX_CACHE_DEFAULT_MAX;
    struct statvfs vfs;
    if (fstatvfs(dirfd, &vfs) == 0)
        limit = MIN(limit, (uint64_t)vfs.f_bavail * vfs.f_frsize / INDEX_CACHE_FREE_SHARE);
    return limit;
}

static void file_free(gpointer data)
{
    struct index_cache_file *file = data;
    g_free(file->name);
    g_free(file);
}

static gint older_first(gconstpointer a, gconstpointer b)
{
    const struct index_cache_file *x = *(struct index_cache_file *const *)a;
    const struct index_cache_file *y = *(struct index_cache_file *const *)b;
    if (x->last_use.tv_sec != y->last_use.tv_sec)
        return x->last_use.tv_sec < y->last_use.tv_sec ? -1 : 1;
    if (x->last_use.tv_nsec != y->last_use.tv_nsec)
        return x->last_use.tv_nsec < y->last_use.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Our files whose names start with `prefix`, oldest first. */
static GPtrArray *list_matching(int dirfd, const char *prefix)
{
    GPtrArray *files = g_ptr_array_new_with_free_func(file_free);
    int fd = dup(dirfd);
    DIR *dir = fd < 0 ? NULL : fdopendir(fd);
    if (!dir) {
        if (fd >= 0)
            close(fd);
        return files;
    }
    rewinddir(dir);
    for (struct dirent *entry; (entry = readdir(dir));) {
        enum index_cache_kind kind = index_cache_kind(entry->d_name);
        struct stat st;
        if (kind == INDEX_CACHE_OTHER || !g_str_has_prefix(entry->d_name, prefix) ||
            fstatat(dirfd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        struct index_cache_file *file = g_new(struct index_cache_file, 1);
        *file = (struct index_cache_file){ g_strdup(entry->d_name), kind, (uint64_t)st.st_size, st.st_mtim };
        g_ptr_array_add(files, file);
    }
    closedir(dir);
    g_ptr_array_sort(files, older_first);
    return files;
}

GPtrArray *index_cache_list(int dirfd)
{
    return list_matching(dirfd, "");
}

static gboolean same_file(int dirfd, const char *name, int fd)
{
    struct stat by_name, by_fd;
    return fstatat(dirfd, name, &by_name, AT_SYMLINK_NOFOLLOW) == 0 && fstat(fd, &by_fd) == 0 &&
           by_name.st_ino == by_fd.st_ino && by_name.st_dev == by_fd.st_dev;
}

gboolean index_cache_remove_stale(int dirfd, const char *name)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT;
    /* Locked: a live save is writing it.  Once locked here, the name is
     * checked to still be this file (its writer may have renamed it). */
    gboolean stale = flock(fd, LOCK_EX | LOCK_NB) == 0 && same_file(dirfd, name, fd);
    if (stale)
        stale = unlinkat(dirfd, name, 0) == 0 || errno == ENOENT;
    close(fd);
    return stale;
}

void index_cache_remove_stale_temporaries(int dirfd, const char *prefix)
{
    GPtrArray *files = list_matching(dirfd, prefix);
    for (guint i = 0; i < files->len; i++) {
        struct index_cache_file *file = files->pdata[i];
        if (file->kind == INDEX_CACHE_TEMPORARY)
            index_cache_remove_stale(dirfd, file->name);
    }
    g_ptr_array_free(files, TRUE);
}

/* The directory's lock is an flock on its lock file (an flock on the
 * directory itself is refused where flock is emulated with POSIX locks,
 * NFS).  Waits a bounded time for other saves.  Where no lock can be had at
 * all, the save goes on unlocked: the temporaries' own locks still keep
 * live writes from being removed, only the cap is then approximate.
 * Returns the lock's fd (close to release), -1 without one, -2 busy. */
static int lock_directory(int dirfd)
{
    int fd = openat(dirfd, INDEX_CACHE_LOCK_NAME, O_RDWR | O_CREAT | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    gint64 deadline = g_get_monotonic_time() + INDEX_CACHE_LOCK_WAIT_US;
    while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        if ((errno != EWOULDBLOCK && errno != EINTR) || g_get_monotonic_time() > deadline) {
            gboolean busy = errno == EWOULDBLOCK || errno == EINTR;
            close(fd);
            return busy ? -2 : -1;
        }
        g_usleep(20 * 1000);
    }
    return fd;
}

/* Removes stale temporaries, then the least recently used indexes, until
 * `incoming` more bytes fit under `limit`.  The file `target` is about to
 * be replaced, so its bytes do not count.  FALSE when they cannot fit. */
static gboolean make_room(int dirfd, const char *target, uint64_t incoming, uint64_t limit)
{
    GPtrArray *files = index_cache_list(dirfd);
    uint64_t total = 0;
    for (guint i = 0; i < files->len; i++) {
        struct index_cache_file *file = files->pdata[i];
        if (file->kind == INDEX_CACHE_TEMPORARY && index_cache_remove_stale(dirfd, file->name))
            file->size = 0;
        if (strcmp(file->name, target) != 0)
            total += file->size;
    }
    for (guint i = 0; i < files->len && total + incoming > limit; i++) {
        struct index_cache_file *file = files->pdata[i];
        if (file->kind != INDEX_CACHE_INDEX || strcmp(file->name, target) == 0)
            continue;
        if (unlinkat(dirfd, file->name, 0) == 0 || errno == ENOENT)
            total -= file->size;
    }
    g_ptr_array_free(files, TRUE);
    return total + incoming <= limit;
}

/* A new temporary `<name>.XXXXXX`, locked before anything else can see it
 * unlocked for long: a cleaner that opened it first holds the lock only
 * while it checks, and the name is then checked to still be ours. */
static int create_temporary(int dirfd, const char *name, char **temporary)
{
    static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    for (int attempt = 0; attempt < 100; attempt++) {
        char suffix[INDEX_CACHE_SUFFIX_CHARS + 1];
        for (unsigned i = 0; i < INDEX_CACHE_SUFFIX_CHARS; i++)
            suffix[i] = letters[g_random_int_range(0, (gint32)sizeof letters - 1)];
        suffix[INDEX_CACHE_SUFFIX_CHARS] = '\0';
        char *candidate = g_strdup_printf("%s.%s", name, suffix);
        int fd = openat(dirfd, candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) {
            int rc = -errno;
            g_free(candidate);
            return rc;
        }
        if (fd >= 0 && flock(fd, LOCK_EX) == 0 && same_file(dirfd, candidate, fd)) {
            *temporary = candidate;
            return fd;
        }
        if (fd >= 0)
            close(fd);
        g_free(candidate);
    }
    return -EEXIST;
}

/* For the tests of killed saves: a pause between writing and renaming. */
static void test_pause(void)
{
    const char *pause = g_getenv("TRACEFS_TEST_SAVE_PAUSE_MS");
    if (pause && *pause)
        g_usleep((gulong)strtoul(pause, NULL, 10) * 1000);
}

static int write_temporary(int dirfd, const char *name, int (*writer)(int fd, void *context), void *context)
{
    char *temporary = NULL;
    int fd = create_temporary(dirfd, name, &temporary);
    if (fd < 0)
        return fd;
    int rc = writer(fd, context);
    test_pause();
    if (rc == 0 && renameat(dirfd, temporary, dirfd, name) < 0)
        rc = -errno;
    if (rc < 0)
        unlinkat(dirfd, temporary, 0);
    if (close(fd) < 0 && rc == 0)
        rc = -errno;          /* renamed already: a late error leaves a damaged file the checksum refuses */
    g_free(temporary);
    return rc;
}

static char *human_size(uint64_t bytes)
{
    return g_format_size_full(bytes, G_FORMAT_SIZE_IEC_UNITS);
}

int index_cache_store(const char *dir, const char *name, uint64_t size, uint64_t index_max,
                      int (*writer)(int fd, void *context), void *context, char **why)
{
    *why = NULL;
    if (g_mkdir_with_parents(dir, 0700) < 0) {
        *why = g_strdup(g_strerror(errno));
        return -1;
    }
    const char *refused = NULL;
    int dirfd = index_cache_open_dir(dir, &refused);
    if (dirfd < 0) {
        *why = g_strdup(refused ? refused : g_strerror(-dirfd));
        return -1;
    }
    uint64_t limit = index_cache_limit(dirfd, index_max);
    int rc = 0, lock = -1;
    if (size > limit) {
        char *need = human_size(size), *cap = human_size(limit);
        *why = g_strdup_printf("the index (%s) is larger than the cap (index_max %s)", need, cap);
        g_free(need);
        g_free(cap);
    } else if ((lock = lock_directory(dirfd)) == -2) {
        *why = g_strdup("the index directory stayed locked by another save");
    } else if (!make_room(dirfd, name, size, limit)) {
        *why = g_strdup("other saves in progress fill the cap (index_max)");
    } else if ((rc = write_temporary(dirfd, name, writer, context)) < 0) {
        *why = g_strdup(g_strerror(-rc));
    }
    if (lock >= 0)
        close(lock);          /* releases the directory's lock */
    close(dirfd);
    return *why ? -1 : 0;
}
