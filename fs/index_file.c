/* The persistent index file (see index_file.h).
 *
 * Layout, little-endian:
 *   magic "TRACEFS-INDEX\n\0\0"   16 bytes
 *   u32 layout version, string tracefs version, u64 executable size and
 *   mtime (ns), string format name,
 *   u32 format index_version
 *   key: string real path, u64 size, i64 mtime s, i64 mtime ns, u64 inode, u64 device,
 *        u64 ctime ns, u64 content fingerprint (CRC-32 of the file, sampled past 1 MiB)
 *   u8 has format state, u64 length, bytes
 *   u64 index-pass error count, u64 length, the index pass's /errors text
 *   u64 tree fingerprint, u64 view section length, view section:
 *     u64 count, then per view: u64 inode, u64 size, u8 failed,
 *     u32 checkpoints, then per checkpoint u64 offset + 4 u64 cursor words
 *   u32 CRC-32 of everything before it
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
#include "format.h"
#include "index_cache.h"
#include "index_file.h"
#include "input_file.h"
#include "saved_bytes.h"
#include "trace.h"
#include "tracefs_limits.h"

#define INDEX_MAGIC "TRACEFS-INDEX\n\0\0"
#define INDEX_LAYOUT_VERSION 1u

/* ---- writing ---- */

static void put_bytes(GByteArray *out, const void *data, size_t len) { g_byte_array_append(out, data, (guint)len); }
static void put_u8(GByteArray *out, uint8_t v) { put_bytes(out, &v, 1); }
static void put_u32(GByteArray *out, uint32_t v)
{
    uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
    put_bytes(out, b, 4);
}
static void put_u64(GByteArray *out, uint64_t v)
{
    put_u32(out, (uint32_t)v);
    put_u32(out, (uint32_t)(v >> 32));
}
static void put_string(GByteArray *out, const char *s)
{
    put_u32(out, (uint32_t)strlen(s));
    put_bytes(out, s, strlen(s));
}

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
static uLong file_fingerprint(uLong crc, int fd, uint64_t size)
{
    if (size <= FINGERPRINT_WHOLE_BYTES)
        return crc_range(crc, fd, 0, (size_t)size);
    crc = crc_range(crc, fd, 0, FINGERPRINT_EDGE_BYTES);
    crc = crc_range(crc, fd, size - FINGERPRINT_EDGE_BYTES, FINGERPRINT_EDGE_BYTES);
    for (unsigned i = 1; i < FINGERPRINT_BLOCKS; i++)
        crc = crc_range(crc, fd, size / FINGERPRINT_BLOCKS * i, FINGERPRINT_BLOCK_BYTES);
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
    uLong crc = crc32(0, NULL, 0);
    for (guint i = 0; i < names->len; i++) {
        const char *name = names->pdata[i];
        struct stat st;
        int fd = input_open_at(trace->fd, name, INPUT_REGULAR, &st);
        if (fd < 0)
            continue;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
            crc = crc32(crc, (const Bytef *)name, (uInt)strlen(name));
            crc = crc32(crc, (const Bytef *)&st.st_size, sizeof st.st_size);
            crc = file_fingerprint(crc, fd, (uint64_t)st.st_size);
        }
        close(fd);
    }
    g_ptr_array_free(names, TRUE);
    return crc;
}

static uint64_t trace_fingerprint(struct trace *trace)
{
    if (trace->is_directory)
        return directory_fingerprint(trace);
    return file_fingerprint(crc32(0, NULL, 0), trace->fd, (uint64_t)trace->st.st_size);
}

static void put_key(GByteArray *out, struct trace *trace)
{
    put_string(out, trace->real_path ? trace->real_path : trace->path);
    put_u64(out, trace->is_directory ? 0 : (uint64_t)trace->st.st_size);
    put_u64(out, (uint64_t)trace->st.st_mtim.tv_sec);
    put_u64(out, (uint64_t)trace->st.st_mtim.tv_nsec);
    put_u64(out, (uint64_t)trace->st.st_ino);
    put_u64(out, (uint64_t)trace->st.st_dev);
    put_u64(out, (uint64_t)trace->st.st_ctim.tv_sec * 1000000000ull + (uint64_t)trace->st.st_ctim.tv_nsec);
    put_u64(out, trace_fingerprint(trace));
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

static void put_header(GByteArray *out, struct trace *trace)
{
    uint64_t exe_size, exe_mtime;
    executable_identity(&exe_size, &exe_mtime);
    put_bytes(out, INDEX_MAGIC, 16);
    put_u32(out, INDEX_LAYOUT_VERSION);
    put_string(out, TRACEFS_VERSION);
    put_u64(out, exe_size);
    put_u64(out, exe_mtime);
    put_string(out, trace->format->name);
    put_u32(out, trace->format->index_version);
    put_key(out, trace);
}

struct view_writer {
    struct trace *trace;
    GByteArray *out;
    uint64_t count;
};

static void put_view(void *data, tree_ino ino, const struct view_index *index)
{
    struct view_writer *writer = data;
    if (index->failed)
        return;          /* sized on a read error: size it again next time */
    put_u64(writer->out, ino);
    put_u64(writer->out, index->size);
    put_u8(writer->out, 0);
    put_u32(writer->out, index->checkpoint_count);
    for (uint32_t i = 0; i < index->checkpoint_count; i++) {
        put_u64(writer->out, index->checkpoints[i].offset);
        for (int w = 0; w < 4; w++)
            put_u64(writer->out, index->checkpoints[i].cursor.word[w]);
    }
    writer->count++;
}

static GByteArray *view_section(struct trace *trace)
{
    GByteArray *views = g_byte_array_new();
    struct view_writer writer = { trace, views, 0 };
    put_u64(views, 0);               /* count, patched below */
    tree_foreach_view_index(trace->tree, put_view, &writer);
    for (int i = 0; i < 8; i++)
        views->data[i] = (uint8_t)(writer.count >> (8 * i));
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
static int write_pieces(int fd, const GByteArray *head, const struct saved_writer *state, const GByteArray *rest)
{
    struct checksummed_file file = { fd, crc32_z(0, NULL, 0) };
    int rc = write_piece(head->data, head->len, &file);
    if (rc == 0 && state)
        rc = saved_writer_foreach(state, write_piece, &file);
    if (rc == 0)
        rc = write_piece(rest->data, rest->len, &file);
    uint8_t trailer[4];
    for (int i = 0; i < 4; i++)
        trailer[i] = (uint8_t)(file.crc >> (8 * i));
    return rc == 0 ? write_all(fd, trailer, sizeof trailer) : rc;
}

struct index_pieces {
    const GByteArray *head;
    const struct saved_writer *state;
    const GByteArray *rest;
};

static int write_index_pieces(int fd, void *context)
{
    const struct index_pieces *pieces = context;
    return write_pieces(fd, pieces->head, pieces->state, pieces->rest);
}

void index_file_encode(struct trace *trace, const uint8_t *body, size_t size, GByteArray *out)
{
    put_header(out, trace);
    put_bytes(out, body, size);
    put_u32(out, (uint32_t)crc32(0, out->data, out->len));
}

/* The format-state section: a flag, the length and the bytes. */
static void put_state(GByteArray *out, gboolean has_state, const uint8_t *state, size_t size)
{
    put_u8(out, has_state);
    put_u64(out, has_state ? size : 0);
    if (has_state)
        put_bytes(out, state, size);
}

void index_file_encode_state(struct trace *trace, const uint8_t *state, size_t size, GByteArray *out)
{
    GByteArray *body = g_byte_array_new();
    put_state(body, TRUE, state, size);
    put_u64(body, 0);   /* no index-pass errors */
    put_u64(body, 0);   /* and no text of them */
    index_file_encode(trace, body->data, body->len, out);
    g_byte_array_free(body, TRUE);
}

/* Everything after the format state: the index pass's errors and the
 * views' sizes and seek points. */
static GByteArray *errors_and_views(struct trace *trace)
{
    GByteArray *out = g_byte_array_new();
    pthread_mutex_lock(&trace->errors_lock);
    put_u64(out, trace->index_error_count);
    put_u64(out, trace->index_errors_length);
    put_bytes(out, trace->errors->str, trace->index_errors_length);
    pthread_mutex_unlock(&trace->errors_lock);
    GByteArray *views = view_section(trace);
    put_u64(out, tree_fingerprint(trace->tree));
    put_u64(out, views->len);
    put_bytes(out, views->data, views->len);
    g_byte_array_free(views, TRUE);
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
    GByteArray *head = g_byte_array_new();
    put_header(head, trace);
    put_u8(head, has_state);
    put_u64(head, has_state ? state->size : 0);
    GByteArray *rest = errors_and_views(trace);
    struct index_pieces pieces = { head, has_state ? state : NULL, rest };
    uint64_t size = head->len + (has_state ? state->size : 0) + rest->len + 4;
    char *dir = index_cache_dir(&trace->options), *name = index_file_name(trace), *why = NULL;
    int rc = index_cache_store(dir, name, size, trace->options.index_max, write_index_pieces, &pieces, &why);
    note_save(trace, rc, why);
    g_free(why);
    g_free(name);
    g_free(dir);
    g_byte_array_free(rest, TRUE);
    g_byte_array_free(head, TRUE);
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

struct reader {
    const uint8_t *data;
    size_t size, at;
    gboolean bad;
};

static const uint8_t *take(struct reader *r, size_t len)
{
    if (r->bad || len > r->size - r->at) {
        r->bad = TRUE;
        return NULL;
    }
    const uint8_t *p = r->data + r->at;
    r->at += len;
    return p;
}

static uint64_t get_u64(struct reader *r)
{
    const uint8_t *p = take(r, 8);
    return p ? load_le64(p) : 0;
}

static uint32_t get_u32(struct reader *r)
{
    const uint8_t *p = take(r, 4);
    return p ? load_le32(p) : 0;
}

static gboolean get_string_equals(struct reader *r, const char *expect)
{
    uint32_t len = get_u32(r);
    const uint8_t *p = take(r, len);
    return p && len == strlen(expect) && memcmp(p, expect, len) == 0;
}

static char *get_string_copy(struct reader *r)
{
    uint32_t len = get_u32(r);
    const uint8_t *p = take(r, len);
    return p ? g_strndup((const char *)p, len) : NULL;
}

/* The header is small (a path and a few numbers); it is read from the
 * file's first bytes without mapping the rest. */
#define INDEX_HEADER_READ_BYTES (64u << 10)

gboolean index_file_read_key(int fd, struct index_file_key *key)
{
    memset(key, 0, sizeof *key);
    uint8_t *buf = g_malloc(INDEX_HEADER_READ_BYTES);
    ssize_t n = pread(fd, buf, INDEX_HEADER_READ_BYTES, 0);
    struct reader r = { buf, n > 0 ? (size_t)n : 0, 0, FALSE };
    const uint8_t *magic = take(&r, 16);
    gboolean ok = magic && memcmp(magic, INDEX_MAGIC, 16) == 0 && get_u32(&r) == INDEX_LAYOUT_VERSION;
    uint64_t exe_size, exe_mtime;
    executable_identity(&exe_size, &exe_mtime);
    if (ok) {
        key->this_build = get_string_equals(&r, TRACEFS_VERSION);
        key->this_build &= get_u64(&r) == exe_size;
        key->this_build &= get_u64(&r) == exe_mtime;
        key->format = get_string_copy(&r);
        get_u32(&r);
        key->trace_path = get_string_copy(&r);
        key->size = get_u64(&r);
        key->mtime_s = (int64_t)get_u64(&r);
        key->mtime_ns = (int64_t)get_u64(&r);
        key->ino = get_u64(&r);
        key->dev = get_u64(&r);
        key->ctime_ns = get_u64(&r);
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

static gboolean key_matches(struct reader *r, struct trace *trace)
{
    gboolean ok = get_string_equals(r, trace->real_path ? trace->real_path : trace->path);
    ok &= get_u64(r) == (trace->is_directory ? 0 : (uint64_t)trace->st.st_size);
    ok &= get_u64(r) == (uint64_t)trace->st.st_mtim.tv_sec;
    ok &= get_u64(r) == (uint64_t)trace->st.st_mtim.tv_nsec;
    ok &= get_u64(r) == (uint64_t)trace->st.st_ino;
    ok &= get_u64(r) == (uint64_t)trace->st.st_dev;
    ok &= get_u64(r) == (uint64_t)trace->st.st_ctim.tv_sec * 1000000000ull + (uint64_t)trace->st.st_ctim.tv_nsec;
    ok &= !r->bad && get_u64(r) == trace_fingerprint(trace);
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
    struct reader r = { contents, size, 0, FALSE };
    *why = "damaged (checksum)";
    if (size < 20 || checksum_releasing(r.data, size - 4) != load_le32(r.data + size - 4))
        goto unusable;
    r.size = size - 4;
    const uint8_t *magic = take(&r, 16);
    *why = "foreign version";
    uint64_t exe_size, exe_mtime;
    executable_identity(&exe_size, &exe_mtime);
    if (!magic || memcmp(magic, INDEX_MAGIC, 16) != 0 || get_u32(&r) != INDEX_LAYOUT_VERSION ||
        !get_string_equals(&r, TRACEFS_VERSION) || get_u64(&r) != exe_size || get_u64(&r) != exe_mtime ||
        !get_string_equals(&r, trace->format->name) || get_u32(&r) != trace->format->index_version)
        goto unusable;
    *why = "stale (the trace changed)";
    if (!key_matches(&r, trace))
        goto unusable;
    *why = "damaged (layout)";
    const uint8_t *has_state = take(&r, 1);
    uint64_t state_size = get_u64(&r);
    out->format_state = take(&r, state_size);
    out->format_state_size = state_size;
    out->has_format_state = has_state && *has_state == 1 && out->format_state;
    out->error_count = get_u64(&r);
    uint64_t errors_size = get_u64(&r);
    out->errors = (const char *)take(&r, errors_size);
    out->errors_size = errors_size;
    out->views = r.data + r.at;       /* fingerprint + length + section */
    out->views_size = r.size - r.at;
    if (r.bad)
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

static gboolean apply_one_view(struct trace *trace, struct reader *r)
{
    tree_ino ino = get_u64(r);
    struct view_index index = { .size = get_u64(r) };
    take(r, 1);                      /* failed views are never saved */
    uint32_t count = get_u32(r);
    if (r->bad || count > (r->size - r->at) / 40 || (count && index.size / count > (1ull << 40)))
        return FALSE;
    index.checkpoint_count = count;
    index.checkpoints = count ? g_new(struct view_checkpoint, count) : NULL;
    for (uint32_t i = 0; i < count; i++) {
        index.checkpoints[i].offset = get_u64(r);
        for (int w = 0; w < 4; w++)
            index.checkpoints[i].cursor.word[w] = get_u64(r);
        if (index.checkpoints[i].offset > index.size || (i && index.checkpoints[i].offset < index.checkpoints[i - 1].offset))
            r->bad = TRUE;
    }
    if (r->bad || !tree_set_view_index(trace->tree, ino, &index)) {
        g_free(index.checkpoints);
        return !r->bad;
    }
    return TRUE;
}

void index_file_apply_views(struct trace *trace, const struct saved_index *index)
{
    struct reader r = { index->views, index->views_size, 0, FALSE };
    if (get_u64(&r) != tree_fingerprint(trace->tree))
        return;                        /* saved for another tree shape */
    uint64_t section = get_u64(&r);
    if (r.bad || section != r.size - r.at)
        return;
    uint64_t count = get_u64(&r);
    for (uint64_t i = 0; i < count && !r.bad; i++)
        if (!apply_one_view(trace, &r))
            break;
    trace->index_saved_views = tree_view_indexes_built(trace->tree);
}
