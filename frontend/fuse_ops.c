/* Low-level FUSE handlers, in the manner of libfuse's hello_ll.c.  The tree
 * never changes while mounted, so inode numbers come straight from it,
 * attributes and entries get long timeouts, and the kernel page cache is
 * kept across opens. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "chunk_cache.h"
#include "fuse_ops.h"
#include "read_ahead.h"
#include "tracefs_limits.h"
#include "trace.h"

#define TIMEOUT_SECONDS 86400.0
#define READDIR_BUFFER_MAX (1u << 20)

static struct trace *trace_of(fuse_req_t req)
{
    return fuse_req_userdata(req);
}

/* The read bits a trace gives its files: its own, for each of owner,
 * group and others (a directory trace's where it can also be searched),
 * so that a 0600 trace is no more readable through an allow_other mount
 * than it is on disk; the mount has default_permissions, so the kernel
 * enforces them.  Directories get search where they get read. */
static mode_t readable_bits(const struct stat *source)
{
    mode_t read = source->st_mode & 0444;
    if (S_ISDIR(source->st_mode))
        read &= (source->st_mode & 0111) << 2;
    return read;
}

static int fill_stat(struct trace *trace, const struct tree_entry_info *entry, struct stat *st)
{
    const struct stat *source = tree_ino_source(trace->tree, entry->ino);
    if (!source)
        source = &trace->st;
    mode_t read = readable_bits(source);
    memset(st, 0, sizeof *st);
    st->st_ino = entry->ino;
    st->st_uid = source->st_uid;
    st->st_gid = source->st_gid;
    st->st_atim = source->st_mtim;
    st->st_mtim = source->st_mtim;
    st->st_ctim = source->st_mtim;
    st->st_blksize = 65536;
    switch (entry->kind) {
    case NODE_DIR:
        st->st_mode = S_IFDIR | read | (read >> 2);
        st->st_nlink = 2;
        return 0;
    case NODE_SYMLINK: {
        const char *target = tree_symlink_target(trace->tree, entry->ino);
        st->st_mode = S_IFLNK | 0777;
        st->st_nlink = 1;
        st->st_size = target ? (off_t)strlen(target) : 0;
        return 0;
    }
    case NODE_FILE: {
        uint64_t size = 0;
        int rc = tree_file_size(trace, entry->ino, &size);
        if (rc < 0)
            return rc;
        st->st_mode = S_IFREG | read;
        st->st_nlink = 1;
        st->st_size = (off_t)size;
        st->st_blocks = (blkcnt_t)((size + 511) / 512);
        return 0;
    }
    }
    return -EIO;
}

static double attr_timeout(struct trace *trace, const struct tree_entry_info *entry)
{
    return entry->kind == NODE_FILE && tree_file_is_dynamic(trace->tree, entry->ino) ? 0.0 : TIMEOUT_SECONDS;
}

static void tracefs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    struct trace *trace = trace_of(req);
    struct tree_entry_info entry;
    if (!tree_lookup(trace->tree, parent, name, &entry)) {
        /* A negative entry is as stable as a positive one. */
        struct fuse_entry_param negative = { .ino = 0, .entry_timeout = TIMEOUT_SECONDS };
        fuse_reply_entry(req, &negative);
        return;
    }
    struct fuse_entry_param param;
    memset(&param, 0, sizeof param);
    int rc = fill_stat(trace, &entry, &param.attr);
    if (rc < 0) {
        fuse_reply_err(req, -rc);
        return;
    }
    param.ino = entry.ino;
    param.generation = 1;
    param.attr_timeout = attr_timeout(trace, &entry);
    param.entry_timeout = TIMEOUT_SECONDS;
    fuse_reply_entry(req, &param);
}

static void tracefs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)fi;
    struct trace *trace = trace_of(req);
    struct tree_entry_info entry;
    struct stat st;
    if (!tree_stat_ino(trace->tree, ino, &entry)) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    int rc = fill_stat(trace, &entry, &st);
    if (rc < 0)
        fuse_reply_err(req, -rc);
    else
        fuse_reply_attr(req, &st, attr_timeout(trace, &entry));
}

static void tracefs_readlink(fuse_req_t req, fuse_ino_t ino)
{
    const char *target = tree_symlink_target(trace_of(req)->tree, ino);
    if (target)
        fuse_reply_readlink(req, target);
    else
        fuse_reply_err(req, EINVAL);
}

static void tracefs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    struct tree_entry_info entry;
    if (!tree_stat_ino(trace_of(req)->tree, ino, &entry)) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    if (entry.kind != NODE_DIR) {
        fuse_reply_err(req, ENOTDIR);
        return;
    }
    fi->cache_readdir = 1;
    fi->keep_cache = 1;
    fuse_reply_open(req, fi);
}

struct readdir_buffer {
    fuse_req_t req;
    char *data;
    size_t size, used;
};

static gboolean readdir_add(void *data, const char *name, const struct tree_entry_info *entry, uint64_t next)
{
    struct readdir_buffer *buffer = data;
    struct stat st = { .st_ino = entry->ino };
    st.st_mode = entry->kind == NODE_DIR ? S_IFDIR : entry->kind == NODE_SYMLINK ? S_IFLNK : S_IFREG;
    size_t need = fuse_add_direntry(buffer->req, NULL, 0, name, NULL, 0);
    if (buffer->used + need > buffer->size)
        return FALSE;
    fuse_add_direntry(buffer->req, buffer->data + buffer->used, buffer->size - buffer->used, name, &st, (off_t)next);
    buffer->used += need;
    return TRUE;
}

/* Streams a directory from `offset` on: a million entries never sit in
 * memory at once. */
static void tracefs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, struct fuse_file_info *fi)
{
    (void)fi;
    struct readdir_buffer buffer = { req, NULL, MIN(size, (size_t)READDIR_BUFFER_MAX), 0 };
    buffer.data = g_malloc(buffer.size);
    tree_readdir(trace_of(req)->tree, ino, (uint64_t)offset, readdir_add, &buffer);
    fuse_reply_buf(req, buffer.data, buffer.used);
    g_free(buffer.data);
}

static void tracefs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    read_ahead_apply();
    struct trace *trace = trace_of(req);
    struct tree_entry_info entry;
    if (!tree_stat_ino(trace->tree, ino, &entry)) {
        fuse_reply_err(req, ENOENT);
        return;
    }
    if (entry.kind == NODE_DIR) {
        fuse_reply_err(req, EISDIR);
        return;
    }
    if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
        fuse_reply_err(req, EROFS);
        return;
    }
    if (tree_file_is_dynamic(trace->tree, ino))
        fi->direct_io = 1;
    else
        fi->keep_cache = 1;
    fuse_reply_open(req, fi);
}

/* Each FUSE thread's buffer for its reads' replies, counted against the
 * cache of the mount's trace until the thread ends. */
struct read_buffer {
    char *data;
    struct chunk_cache *charged;
};

static void read_buffer_free(void *data)
{
    struct read_buffer *buffer = data;
    if (buffer->charged)
        chunk_cache_unreserve(buffer->charged, LIMIT_KEPT_READ_BUFFER_BYTES);
    g_free(buffer->data);
    g_free(buffer);
}

static GPrivate thread_read_buffer = G_PRIVATE_INIT(read_buffer_free);

/* A request above LIMIT_KEPT_READ_BUFFER_BYTES gets a buffer of its own
 * in *own.  NULL: out of memory. */
static char *read_buffer_get(struct trace *trace, size_t size, char **own)
{
    *own = NULL;
    if (size > LIMIT_KEPT_READ_BUFFER_BYTES)
        return *own = g_try_malloc(size);
    struct read_buffer *buffer = g_private_get(&thread_read_buffer);
    if (buffer)
        return buffer->data;
    char *data = g_try_malloc(LIMIT_KEPT_READ_BUFFER_BYTES);
    if (!data)
        return NULL;
    buffer = g_new(struct read_buffer, 1);
    *buffer = (struct read_buffer){ data, trace->cache };
    if (buffer->charged)
        chunk_cache_reserve(buffer->charged, LIMIT_KEPT_READ_BUFFER_BYTES);
    g_private_set(&thread_read_buffer, buffer);
    return data;
}

/* While the cache holds more than it may (what it holds cannot be
 * evicted: decoder windows, chunks being read), the thread's buffer is
 * given back after its read, so that an idle thread holds nothing. */
static void read_buffer_settle(void)
{
    struct read_buffer *buffer = g_private_get(&thread_read_buffer);
    if (!buffer || !buffer->charged)
        return;
    struct chunk_cache_stats stats;
    chunk_cache_get_stats(buffer->charged, &stats);
    if (stats.bytes_held > stats.bytes_allowed)
        g_private_replace(&thread_read_buffer, NULL);
}

static void tracefs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, struct fuse_file_info *fi)
{
    (void)fi;
    if (offset < 0) {
        fuse_reply_err(req, EINVAL);
        return;
    }
    char *own;
    char *buf = read_buffer_get(trace_of(req), size ? size : 1, &own);
    if (!buf) {
        fuse_reply_err(req, ENOMEM);
        return;
    }
    /* Bytes still in the text cache go out from there, pinned until the
     * reply has copied them into the kernel. */
    struct view_lent lent = { 0 };
    ssize_t n = tree_file_read_lent(trace_of(req), ino, (uint64_t)offset, buf, size, &lent);
    if (n < 0) {
        fuse_reply_err(req, (int)-n);
    } else if (lent.count == 0) {
        fuse_reply_buf(req, buf, (size_t)n);
    } else {
        struct iovec iov[2 * VIEW_LENT_PIECES + 1];
        fuse_reply_iov(req, iov, (int)view_lent_iov(&lent, buf, (size_t)n, iov));
    }
    view_lent_release(&lent);
    g_free(own);
    read_buffer_settle();
}

static void tracefs_statfs(fuse_req_t req, fuse_ino_t ino)
{
    (void)ino;
    struct statvfs st = { .f_bsize = 65536, .f_frsize = 65536, .f_namemax = LIMIT_NAME_BYTES,
                          .f_files = tree_node_count(trace_of(req)->tree), .f_flag = ST_RDONLY };
    fuse_reply_statfs(req, &st);
}

static void tracefs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
    (void)ino; (void)name; (void)size;
    fuse_reply_err(req, ENODATA);
}

static void tracefs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
    (void)ino;
    if (size == 0)
        fuse_reply_xattr(req, 0);
    else
        fuse_reply_buf(req, NULL, 0);
}

/* Every operation that would change the tree: the trace is read-only. */
static void reply_erofs(fuse_req_t req) { fuse_reply_err(req, EROFS); }

static void tracefs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{ (void)ino; (void)attr; (void)to_set; (void)fi; reply_erofs(req); }
static void tracefs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{ (void)parent; (void)name; (void)mode; (void)rdev; reply_erofs(req); }
static void tracefs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{ (void)parent; (void)name; (void)mode; reply_erofs(req); }
static void tracefs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{ (void)parent; (void)name; reply_erofs(req); }
static void tracefs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{ (void)link; (void)parent; (void)name; reply_erofs(req); }
static void tracefs_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                           const char *newname, unsigned int flags)
{ (void)parent; (void)name; (void)newparent; (void)newname; (void)flags; reply_erofs(req); }
static void tracefs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{ (void)ino; (void)newparent; (void)newname; reply_erofs(req); }
static void tracefs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                          struct fuse_file_info *fi)
{ (void)ino; (void)buf; (void)size; (void)off; (void)fi; reply_erofs(req); }
static void tracefs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
                             size_t size, int flags)
{ (void)ino; (void)name; (void)value; (void)size; (void)flags; reply_erofs(req); }
static void tracefs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{ (void)ino; (void)name; reply_erofs(req); }
static void tracefs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                           struct fuse_file_info *fi)
{ (void)parent; (void)name; (void)mode; (void)fi; reply_erofs(req); }
static void tracefs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
                              struct fuse_file_info *fi)
{ (void)ino; (void)mode; (void)offset; (void)length; (void)fi; reply_erofs(req); }

const struct fuse_lowlevel_ops tracefs_operations = {
    .lookup = tracefs_lookup,
    .getattr = tracefs_getattr,
    .readlink = tracefs_readlink,
    .opendir = tracefs_opendir,
    .readdir = tracefs_readdir,
    .open = tracefs_open,
    .read = tracefs_read,
    .statfs = tracefs_statfs,
    .getxattr = tracefs_getxattr,
    .listxattr = tracefs_listxattr,
    .setattr = tracefs_setattr,
    .mknod = tracefs_mknod,
    .mkdir = tracefs_mkdir,
    .unlink = tracefs_unlink,
    .rmdir = tracefs_unlink,
    .symlink = tracefs_symlink,
    .rename = tracefs_rename,
    .link = tracefs_link,
    .write = tracefs_write,
    .setxattr = tracefs_setxattr,
    .removexattr = tracefs_removexattr,
    .create = tracefs_create,
    .fallocate = tracefs_fallocate,
};
