/* The persistent index file (see index_file.h).
 *
 * Layout, in saved_bytes words (u64) and byte strings (a u64 length, then
 * the bytes), like the formats' own state:
 *   magic "TRACEFS-INDEX\n\0\0"   16 bytes
 *   layout version, string tracefs version, executable size and mtime (ns),
 *   string format name, the format's index_version (the one version check
 *   of the format's state: it carries no magic of its own)
 *   key: string real path, size, mtime s, mtime ns, inode, device,
 *        ctime ns, content fingerprint (CRC-32 of the file, sampled past 1 MiB)
 *   has format state, bytes: the format's save()
 *   index-pass error count, bytes: the index pass's /errors text
 *   tree fingerprint, view section length, view section:
 *     count, then per view: inode, size, failed,
 *     checkpoints, then per checkpoint offset + 4 cursor words
 *   bytes: the common files' walk (event_files_save_walk: info.json's
 *     totals and summary.csv, then the threads each stretch holds)
 *   u32 CRC-32 (little-endian) of everything before it
 */
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zlib.h>
#include "event_files.h"
#include "format.h"
#include "index_cache.h"
#include "index_file.h"
#include "input_file.h"
#include "saved_bytes.h"
#include "trace.h"
#include "tracefs_limits.h"

#define INDEX_MAGIC "TRACEFS-INDEX\n\0\0"
#define INDEX_LAYOUT_VERSION 4u
/* Longest path or version string read back from a header. */
#define INDEX_STRING_MAX (64u << 10)

/* ---- writing ---- */

#define FINGERPRINT_WHOLE_BYTES (1u << 20)
#define FINGERPRINT_EDGE_BYTES (64u << 10)
#define FINGERPRINT_BLOCK_BYTES 4096u
#define FINGERPRINT_BLOCKS 16u

static uLong crc_range(uLong crc, int fd, uint64_t offset, size_t len)
{
    uint8_t buf[FINGERPRINT_EDGE_BYTES];
    while (len > 0) {
        ssize_t n = pread(fd, buf, MIN(len, sizeof buf), (off_t)offset);
        if (n <= 0)
            return crc ^ 0xdeadbeef;
        crc = crc32(crc, buf, (uInt)n);
        offset += (uint64_t)n;
        len -= (size_t)n;
    }
    return crc;
}

/* What the file says, not only its metadata: mtime has clock-tick
 * granularity, so a file rewritten at the same size within one tick (and
 * given the same inode) would otherwise match a stale index.  Small files
 * are hashed whole; large ones at both ends and 16 blocks between. */
struct byte_range {
    uint64_t offset;
    size_t len;
};

#define FINGERPRINT_RANGES (FINGERPRINT_BLOCKS + 1u)

static unsigned fingerprint_ranges(uint64_t size, struct byte_range ranges[FINGERPRINT_RANGES])
{
    if (size <= FINGERPRINT_WHOLE_BYTES) {
        ranges[0] = (struct byte_range){ 0, (size_t)size };
        return 1;
    }
    unsigned count = 0;
    ranges[count++] = (struct byte_range){ 0, FINGERPRINT_EDGE_BYTES };
    ranges[count++] = (struct byte_range){ size - FINGERPRINT_EDGE_BYTES, FINGERPRINT_EDGE_BYTES };
    for (unsigned i = 1; i < FINGERPRINT_BLOCKS; i++)
        ranges[count++] = (struct byte_range){ size / FINGERPRINT_BLOCKS * i, FINGERPRINT_BLOCK_BYTES };
    return count;
}

/* Asks the kernel for all of a file's ranges at once: read one after the
 * other from a cold page cache, each waits for the disk in turn (about
 * 5 ms of a cold remount of rr 100M, whose members are sampled one by
 * one). */
static void fingerprint_prefetch(int fd, uint64_t size)
{
    struct byte_range ranges[FINGERPRINT_RANGES];
    unsigned count = fingerprint_ranges(size, ranges);
    for (unsigned i = 0; i < count; i++)
        posix_fadvise(fd, (off_t)ranges[i].offset, (off_t)ranges[i].len, POSIX_FADV_WILLNEED);
}

static uLong file_fingerprint(uLong crc, int fd, uint64_t size)
{
    struct byte_range ranges[FINGERPRINT_RANGES];
    unsigned count = fingerprint_ranges(size, ranges);
    for (unsigned i = 0; i < count; i++)
        crc = crc_range(crc, fd, ranges[i].offset, ranges[i].len);
    return crc;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory trace (rr): every regular member's name, size and content. */
static uLong directory_fingerprint(struct trace *trace)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    GDir *dir = g_dir_open(trace->path, 0, NULL);
    for (const char *name; dir && (name = g_dir_read_name(dir));)
        g_ptr_array_add(names, g_strdup(name));
    if (dir)
        g_dir_close(dir);
    if (names->len > 1)
        qsort(names->pdata, names->len, sizeof(gpointer), compare_names);
    /* Every member's ranges are asked for before any is read. */
    int *fds = g_new(int, MAX(names->len, 1));
    for (guint i = 0; i < names->len; i++) {
        struct stat st;
        fds[i] = input_open_at(trace->fd, names->pdata[i], INPUT_REGULAR, &st);
        if (fds[i] >= 0 && fstat(fds[i], &st) == 0 && S_ISREG(st.st_mode))
            fingerprint_prefetch(fds[i], (uint64_t)st.st_size);
    }
    uLong crc = crc32(0, NULL, 0);
    for (guint i = 0; i < names->len; i++) {
        const char *name = names->pdata[i];
        struct stat st;
        if (fds[i] < 0)
            continue;
        if (fstat(fds[i], &st) == 0 && S_ISREG(st.st_mode)) {
            crc = crc32(crc, (const Bytef *)name, (uInt)strlen(name));
            crc = crc32(crc, (const Bytef *)&st.st_size, sizeof st.st_size);
            crc = file_fingerprint(crc, fds[i], (uint64_t)st.st_size);
        }
        close(fds[i]);
    }
    g_free(fds);
    g_ptr_array_free(names, TRUE);
    return crc;
}

static uint64_t trace_fingerprint(struct trace *trace)
{
    if (trace->is_directory)
        return directory_fingerprint(trace);
    fingerprint_prefetch(trace->fd, (uint64_t)trace->st.st_size);
    return file_fingerprint(crc32(0, NULL, 0), trace->fd, (uint64_t)trace->st.st_size);
}

static void put_key(struct saved_writer *out, struct trace *trace)
{
    saved_put_string(out, trace->real_path ? trace->real_path : trace->path);
    saved_put_u64(out, trace->is_directory ? 0 : (uint64_t)trace->st.st_size);
    saved_put_u64(out, (uint64_t)trace->st.st_mtim.tv_sec);
    saved_put_u64(out, (uint64_t)trace->st.st_mtim.tv_nsec);
    saved_put_u64(out, (uint64_t)trace->st.st_ino);
    saved_put_u64(out, (uint64_t)trace->st.st_dev);
    saved_put_u64(out, (uint64_t)trace->st.st_ctim.tv_sec * 1000000000ull + (uint64_t)trace->st.st_ctim.tv_nsec);
    saved_put_u64(out, trace_fingerprint(trace));
}

/* The running executable's size and mtime: an index written by another
 * build (a decoder changed, same version string) is not trusted. */
static void executable_identity(uint64_t *size, uint64_t *mtime_ns)
{
    struct stat st;
    if (stat("/proc/self/exe", &st) < 0)
        memset(&st, 0, sizeof st);
    *size = (uint64_t)st.st_size;
    *mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
}

static void put_header(struct saved_writer *out, struct trace *trace)
{
    uint64_t exe_size, exe_mtime;
    executable_identity(&exe_size, &exe_mtime);
    saved_put(out, INDEX_MAGIC, 16);
    saved_put_u64(out, INDEX_LAYOUT_VERSION);
    saved_put_string(out, TRACEFS_VERSION);
    saved_put_u64(out, exe_size);
    saved_put_u64(out, exe_mtime);
    saved_put_string(out, trace->format->name);
    saved_put_u64(out, trace->format->index_version);
    put_key(out, trace);
}

struct view_writer {
    struct saved_writer *out;
    uint64_t count;
};

static void put_view(void *data, tree_ino ino, const struct view_index *index)
{
    struct view_writer *writer = data;
    if (index->failed)
        return;          /* sized on a read error: size it again next time */
    saved_put_u64(writer->out, ino);
    saved_put_u64(writer->out, index->size);
    saved_put_u64(writer->out, 0);
    saved_put_u64(writer->out, index->checkpoint_count);
    for (uint32_t i = 0; i < index->checkpoint_count; i++) {
        saved_put_u64(writer->out, index->checkpoints[i].offset);
        for (int w = 0; w < 4; w++)
            saved_put_u64(writer->out, index->checkpoints[i].cursor.word[w]);
    }
    writer->count++;
}

/* The count, then the views: the count goes in first as 0 and is set once
 * known, so the section is written once and taken whole, not copied. */
static GByteArray *view_section(struct trace *trace)
{
    struct view_writer writer = { saved_writer_new(), 0 };
    saved_put_u64(writer.out, 0);
    tree_foreach_view_index(trace->tree, put_view, &writer);
    GByteArray *views = saved_writer_finish(writer.out);
    memcpy(views->data, &writer.count, sizeof writer.count);
    return views;
}

/* `<32 hex>.index`: the start of the SHA-256 of the trace's real path. */
static char *index_file_name(struct trace *trace)
{
    const char *key = trace->real_path ? trace->real_path : trace->path;
    char *digest = g_compute_checksum_for_string(G_CHECKSUM_SHA256, key, -1);
    char *name = g_strdup_printf("%.32s.index", digest);
    g_free(digest);
    return name;
}

char *index_file_path(struct trace *trace)
{
    char *dir = index_cache_dir(&trace->options);
    char *name = index_file_name(trace);
    char *path = g_build_filename(dir, name, NULL);
    g_free(dir);
    g_free(name);
    return path;
}

static int write_all(int fd, const uint8_t *data, size_t size)
{
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n < 0 && errno != EINTR)
            return -errno;
        if (n > 0)
            done += (size_t)n;
    }
    return 0;
}

struct checksummed_file {
    int fd;
    uLong crc;
};

static int write_piece(const uint8_t *data, size_t size, void *context)
{
    struct checksummed_file *file = context;
    file->crc = crc32_z(file->crc, data, size);
    return write_all(file->fd, data, size);
}

/* The header, the format's bytes (written from where they are: an XRay
 * log's tables run to hundreds of MB, and joining them into one buffer
 * first would be a second copy of them), the rest, then the CRC-32 of it all. */
static int write_pieces(int fd, const struct saved_writer *head, const struct saved_writer *state,
                        const struct saved_writer *rest)
{
    struct checksummed_file file = { fd, crc32_z(0, NULL, 0) };
    int rc = saved_writer_foreach(head, write_piece, &file);
    if (rc == 0 && state)
        rc = saved_writer_foreach(state, write_piece, &file);
    if (rc == 0)
        rc = saved_writer_foreach(rest, write_piece, &file);
    uint8_t trailer[4];
    for (int i = 0; i < 4; i++)
        trailer[i] = (uint8_t)(file.crc >> (8 * i));
    return rc == 0 ? write_all(fd, trailer, sizeof trailer) : rc;
}

struct index_pieces {
    const struct saved_writer *head, *state, *rest;
};

static int write_index_pieces(int fd, void *context)
{
    const struct index_pieces *pieces = context;
    return write_pieces(fd, pieces->head, pieces->state, pieces->rest);
}

void index_file_encode(struct trace *trace, const uint8_t *body, size_t size, GByteArray *out)
{
    struct saved_writer *head = saved_writer_new();
    put_header(head, trace);
    GByteArray *bytes = saved_writer_finish(head);
    g_byte_array_append(out, bytes->data, bytes->len);
    g_byte_array_free(bytes, TRUE);
    if (size)
        g_byte_array_append(out, body, (guint)size);
    uint32_t crc = (uint32_t)crc32(0, out->data, out->len);
    uint8_t trailer[4] = { (uint8_t)crc, (uint8_t)(crc >> 8), (uint8_t)(crc >> 16), (uint8_t)(crc >> 24) };
    g_byte_array_append(out, trailer, sizeof trailer);
}

void index_file_encode_state(struct trace *trace, const uint8_t *state, size_t size, GByteArray *out)
{
    struct saved_writer *body = saved_writer_new();
    saved_put_u64(body, TRUE);
    saved_put_bytes(body, state, size);
    saved_put_u64(body, 0);          /* no index-pass errors */
    saved_put_bytes(body, "", 0);    /* and no text of them */
    GByteArray *bytes = saved_writer_finish(body);
    index_file_encode(trace, bytes->data, bytes->len, out);
    g_byte_array_free(bytes, TRUE);
}

/* Everything after the format state: the index pass's errors, the views'
 * sizes and seek points, and the walk of the events (info.json's totals,
 * summary.csv).  The writer may refer to the bytes of `kept` (big blocks
 * are not copied): free them after it is written. */
static struct saved_writer *errors_and_views(struct trace *trace, GByteArray *kept[3])
{
    struct saved_writer *out = saved_writer_new();
    GByteArray *errors = kept[0] = g_byte_array_new();
    pthread_mutex_lock(&trace->errors_lock);
    uint64_t error_count = trace->index_error_count;
    g_byte_array_append(errors, (const guint8 *)trace->errors->str, (guint)trace->index_errors_length);
    pthread_mutex_unlock(&trace->errors_lock);
    saved_put_u64(out, error_count);
    saved_put_bytes(out, errors->data, errors->len);
    GByteArray *views = kept[1] = view_section(trace);
    saved_put_u64(out, tree_fingerprint(trace->tree));
    saved_put_bytes(out, views->data, views->len);
    struct saved_writer *walk = saved_writer_new();
    event_files_save_walk(trace->event_files, walk);
    GByteArray *walk_bytes = kept[2] = saved_writer_finish(walk);
    saved_put_bytes(out, walk_bytes->data, walk_bytes->len);
    return out;
}

/* A save that fails (a full, read-only or refused index directory) says so
 * once per process on stderr, and in each trace's .tracefs/stats. */
static void note_save(struct trace *trace, int rc, const char *why)
{
    static gint said;
    if (rc == 0) {
        g_strlcpy(trace->index_save_status, "saved", sizeof trace->index_save_status);
        return;
    }
    g_snprintf(trace->index_save_status, sizeof trace->index_save_status, "failed (%s)", why);
    if (g_atomic_int_compare_and_exchange(&said, 0, 1)) {
        char *dir = index_cache_dir(&trace->options);
        fprintf(stderr, "tracefs: the index was not saved in %s: %s\n", dir, why);
        g_free(dir);
    }
}

int index_file_save(struct trace *trace)
{
    if (trace->options.no_index)
        return 0;
    struct saved_writer *state = saved_writer_new();
    gboolean has_state = trace->format->save && trace->format->save(trace, state) == 0;
    struct saved_writer *head = saved_writer_new();
    put_header(head, trace);
    saved_put_u64(head, has_state);
    saved_put_u64(head, has_state ? state->size : 0);
    GByteArray *kept[3];
    struct saved_writer *rest = errors_and_views(trace, kept);
    struct index_pieces pieces = { head, has_state ? state : NULL, rest };
    uint64_t size = head->size + (has_state ? state->size : 0) + rest->size + 4;
    char *dir = index_cache_dir(&trace->options), *name = index_file_name(trace), *why = NULL;
    int rc = index_cache_store(dir, name, size, trace->options.index_max, write_index_pieces, &pieces, &why);
    note_save(trace, rc, why);
    g_free(why);
    g_free(name);
    g_free(dir);
    saved_writer_free(rest);
    g_byte_array_free(kept[0], TRUE);
    g_byte_array_free(kept[1], TRUE);
    g_byte_array_free(kept[2], TRUE);
    saved_writer_free(head);
    saved_writer_free(state);
    trace->index_saved_views = tree_view_indexes_built(trace->tree);
    return rc;
}

const char *index_file_save_status(struct trace *trace)
{
    if (trace->options.no_index)
        return "off";
    return trace->index_save_status[0] ? trace->index_save_status : "none";
}

/* ---- reading: every field bounds-checked ---- */

static gboolean get_magic(struct saved_reader *r)
{
    uint8_t magic[16];
    return saved_take(r, magic, sizeof magic) && memcmp(magic, INDEX_MAGIC, sizeof magic) == 0;
}

static gboolean get_string_equals(struct saved_reader *r, const char *expect)
{
    size_t length;
    const char *bytes = saved_get_bytes(r, INDEX_STRING_MAX, &length);
    return bytes && length == strlen(expect) && memcmp(bytes, expect, length) == 0;
}

/* The header is small (a path and a few numbers); it is read from the
 * file's first bytes without mapping the rest. */
#define INDEX_HEADER_READ_BYTES (64u << 10)

gboolean index_file_read_key(int fd, struct index_file_key *key)
{
    memset(key, 0, sizeof *key);
    uint8_t *buf = g_malloc(INDEX_HEADER_READ_BYTES);
    ssize_t n = pread(fd, buf, INDEX_HEADER_READ_BYTES, 0);
    struct saved_reader r;
    saved_reader_init(&r, buf, n > 0 ? (size_t)n : 0);
    gboolean ok = get_magic(&r) && saved_get_u64(&r) == INDEX_LAYOUT_VERSION;
    uint64_t exe_size, exe_mtime;
    executable_identity(&exe_size, &exe_mtime);
    if (ok) {
        key->this_build = get_string_equals(&r, TRACEFS_VERSION);
        key->this_build &= saved_get_u64(&r) == exe_size;
        key->this_build &= saved_get_u64(&r) == exe_mtime;
        key->format = saved_get_string(&r, INDEX_STRING_MAX);
        saved_get_u64(&r);
        key->trace_path = saved_get_string(&r, INDEX_STRING_MAX);
        key->size = saved_get_u64(&r);
        key->mtime_s = (int64_t)saved_get_u64(&r);
        key->mtime_ns = (int64_t)saved_get_u64(&r);
        key->ino = saved_get_u64(&r);
        key->dev = saved_get_u64(&r);
        key->ctime_ns = saved_get_u64(&r);
        ok = !r.bad && key->format && key->trace_path;
    }
    g_free(buf);
    if (!ok)
        index_file_key_clear(key);
    return ok;
}

void index_file_key_clear(struct index_file_key *key)
{
    g_free(key->format);
    g_free(key->trace_path);
    memset(key, 0, sizeof *key);
}

/* The metadata half of the key (the content fingerprint is left to the
 * mount: ctime already moves with every write). */
const char *index_file_key_state(const struct index_file_key *key)
{
    struct stat st;
    if (stat(key->trace_path, &st) < 0)
        return "gone";
    gboolean same = (S_ISDIR(st.st_mode) ? 0 : (uint64_t)st.st_size) == key->size &&
                    st.st_mtim.tv_sec == key->mtime_s && st.st_mtim.tv_nsec == key->mtime_ns &&
                    (uint64_t)st.st_ino == key->ino && (uint64_t)st.st_dev == key->dev &&
                    (uint64_t)st.st_ctim.tv_sec * 1000000000ull + (uint64_t)st.st_ctim.tv_nsec == key->ctime_ns;
    return same ? "current" : "changed";
}

static gboolean key_matches(struct saved_reader *r, struct trace *trace)
{
    gboolean ok = get_string_equals(r, trace->real_path ? trace->real_path : trace->path);
    ok &= saved_get_u64(r) == (trace->is_directory ? 0 : (uint64_t)trace->st.st_size);
    ok &= saved_get_u64(r) == (uint64_t)trace->st.st_mtim.tv_sec;
    ok &= saved_get_u64(r) == (uint64_t)trace->st.st_mtim.tv_nsec;
    ok &= saved_get_u64(r) == (uint64_t)trace->st.st_ino;
    ok &= saved_get_u64(r) == (uint64_t)trace->st.st_dev;
    ok &= saved_get_u64(r) == (uint64_t)trace->st.st_ctim.tv_sec * 1000000000ull + (uint64_t)trace->st.st_ctim.tv_nsec;
    ok &= !r->bad && saved_get_u64(r) == trace_fingerprint(trace);
    return ok && !r->bad;
}

struct mapping {
    void *address;
    size_t length;
};

static void unmap(gpointer data)
{
    struct mapping *mapping = data;
    munmap(mapping->address, mapping->length);
    g_free(mapping);
}

/* The saved index mapped rather than read: a big one (an XRay log's tables
 * run to hundreds of MB) is then neither copied by read() nor held twice
 * in anonymous memory while the format copies its tables out.  Only a file
 * of this user's, writable by no one else, in a directory the same holds
 * for, is read: a forged index with a valid checksum changes what a mount
 * serves.  Its mtime is touched: the cap evicts the least recently used. */
static GBytes *map_file(struct trace *trace, const char **why)
{
    char *dir = index_cache_dir(&trace->options), *name = index_file_name(trace);
    int dirfd = index_cache_open_dir(dir, why);
    int fd = dirfd < 0 ? -1 : openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    GBytes *bytes = NULL;
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && !(*why = index_cache_untrusted(&st, FALSE)) && st.st_size > 0 &&
        (uint64_t)st.st_size <= SIZE_MAX) {
        void *address = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (address != MAP_FAILED) {
            madvise(address, (size_t)st.st_size, MADV_SEQUENTIAL);
            struct mapping *mapping = g_new(struct mapping, 1);
            *mapping = (struct mapping){ address, (size_t)st.st_size };
            bytes = g_bytes_new_with_free_func(address, (size_t)st.st_size, unmap, mapping);
            futimens(fd, NULL);
        }
    }
    if (fd >= 0)
        close(fd);
    if (dirfd >= 0) {
        char *prefix = g_strconcat(name, ".", NULL);
        index_cache_remove_stale_temporaries(dirfd, prefix);   /* a killed save of this trace's */
        g_free(prefix);
        close(dirfd);
    }
    g_free(name);
    g_free(dir);
    return bytes;
}

/* The checksum touches every page of the mapping; releasing them behind it
 * keeps a big index from being resident whole before the format copies its
 * tables out (which releases them again, saved_reader_init_mapped). */
static uint32_t checksum_releasing(const uint8_t *data, size_t size)
{
    const size_t piece = (size_t)8 << 20;
    uLong crc = crc32_z(0, NULL, 0);
    for (size_t at = 0; at < size; at += piece) {
        size_t length = size - at < piece ? size - at : piece;
        crc = crc32_z(crc, data + at, length);
        saved_release_mapped(data + at, length);
    }
    return (uint32_t)crc;
}

/* A refused index or directory is worth one line on stderr per process:
 * someone else can write where this user's indexes live. */
static void note_refusal(struct trace *trace, const char *refused)
{
    static gint said;
    if (g_atomic_int_compare_and_exchange(&said, 0, 1)) {
        char *path = index_file_path(trace);
        fprintf(stderr, "tracefs: %s: saved index %s\n", path, refused);
        g_free(path);
    }
}

gboolean index_file_load(struct trace *trace, struct saved_index *out, const char **why)
{
    memset(out, 0, sizeof *out);
    *why = "no saved index";
    if (trace->options.no_index)
        return FALSE;
    const char *refused = NULL;
    out->file = map_file(trace, &refused);
    if (refused)
        note_refusal(trace, refused);
    if (!out->file) {
        *why = refused ? refused : *why;
        return FALSE;
    }
    gsize size = 0;
    const uint8_t *contents = g_bytes_get_data(out->file, &size);
    *why = "damaged (checksum)";
    if (size < 20 || checksum_releasing(contents, size - 4) != load_le32(contents + size - 4))
        goto unusable;
    struct saved_reader r;
    saved_reader_init(&r, contents, size - 4);
    *why = "foreign version";
    uint64_t exe_size, exe_mtime;
    executable_identity(&exe_size, &exe_mtime);
    if (!get_magic(&r) || saved_get_u64(&r) != INDEX_LAYOUT_VERSION || !get_string_equals(&r, TRACEFS_VERSION) ||
        saved_get_u64(&r) != exe_size || saved_get_u64(&r) != exe_mtime ||
        !get_string_equals(&r, trace->format->name) || saved_get_u64(&r) != trace->format->index_version)
        goto unusable;
    *why = "stale (the trace changed)";
    if (!key_matches(&r, trace))
        goto unusable;
    *why = "damaged (layout)";
    uint64_t has_state = saved_get_u64(&r);
    out->format_state = (const uint8_t *)saved_get_bytes(&r, SIZE_MAX, &out->format_state_size);
    out->has_format_state = has_state == 1 && out->format_state;
    out->error_count = saved_get_u64(&r);
    out->errors = saved_get_bytes(&r, SIZE_MAX, &out->errors_size);
    /* The views (fingerprint + length + section), then the walk; a file
     * may end before either. */
    out->views = r.data + r.at;
    if (!r.bad && r.at < r.size) {
        size_t views_length;
        saved_get_u64(&r);
        saved_get_bytes(&r, SIZE_MAX, &views_length);
    }
    out->views_size = (size_t)(r.data + r.at - out->views);
    if (!r.bad && r.at < r.size)
        out->walk = (const uint8_t *)saved_get_bytes(&r, SIZE_MAX, &out->walk_size);
    if (r.bad || r.at != r.size)
        goto unusable;
    *why = NULL;
    return TRUE;
unusable:
    saved_index_clear(out);
    return FALSE;
}

void saved_index_clear(struct saved_index *index)
{
    if (index->file)
        g_bytes_unref(index->file);
    memset(index, 0, sizeof *index);
}

static gboolean apply_one_view(struct trace *trace, struct saved_reader *r)
{
    tree_ino ino = saved_get_u64(r);
    struct view_index index = { .size = saved_get_u64(r) };
    saved_get_u64(r);                /* failed views are never saved */
    uint64_t count = saved_get_count(r, 5 * sizeof(uint64_t), UINT32_MAX);
    if (r->bad || (count && index.size / count > (1ull << 40)))
        return FALSE;
    index.checkpoint_count = (uint32_t)count;
    index.checkpoints = count ? g_new(struct view_checkpoint, count) : NULL;
    for (uint32_t i = 0; i < count; i++) {
        index.checkpoints[i].offset = saved_get_u64(r);
        for (int w = 0; w < 4; w++)
            index.checkpoints[i].cursor.word[w] = saved_get_u64(r);
        if (index.checkpoints[i].offset > index.size || (i && index.checkpoints[i].offset < index.checkpoints[i - 1].offset))
            r->bad = TRUE;
    }
    if (r->bad || !tree_set_view_index(trace->tree, ino, &index)) {
        g_free(index.checkpoints);
        return !r->bad;
    }
    return TRUE;
}

/* The views section starts with the fingerprint of the tree it was saved
 * for. */
static gboolean saved_for_this_tree(struct trace *trace, const struct saved_index *index)
{
    struct saved_reader r;
    saved_reader_init(&r, index->views, index->views_size);
    return saved_get_u64(&r) == tree_fingerprint(trace->tree) && !r.bad;
}

void index_file_apply_views(struct trace *trace, const struct saved_index *index)
{
    if (!saved_for_this_tree(trace, index))
        return;                        /* saved for another tree shape */
    struct saved_reader r;
    saved_reader_init(&r, index->views, index->views_size);
    saved_get_u64(&r);                 /* the fingerprint, checked */
    uint64_t section = saved_get_u64(&r);
    if (r.bad || section != r.size - r.at)
        return;
    uint64_t count = saved_get_u64(&r);
    for (uint64_t i = 0; i < count && !r.bad; i++)
        if (!apply_one_view(trace, &r))
            break;
    trace->index_saved_views = tree_view_indexes_built(trace->tree);
}

/* Only for the tree it was saved with, as the views: options that change
 * the events (an XRay binary's symbols) change the tree too. */
void index_file_apply_walk(struct trace *trace, const struct saved_index *index)
{
    if (trace->event_files && index->walk_size > 0 && saved_for_this_tree(trace, index))
        event_files_load_walk(trace->event_files, index->walk, index->walk_size);
}
