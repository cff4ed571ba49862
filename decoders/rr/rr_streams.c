/* The `version` file and the four chunked brotli streams. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rr.h"
#include "saved_stream.h"
#include "stream.h"
#include "text.h"
#include "trace.h"
#include "tracefs_limits.h"

static GBytes *copy_data(const struct capnp_struct *s, uint16_t index)
{
    const uint8_t *data;
    size_t size;
    if (capnp_get_data(s, index, &data, &size) < 0)
        return NULL;
    return g_bytes_new(data, size);
}

/* XSAVE area size: CPUID(0xD, 0).EBX from the recorded CPUID results. */
static uint32_t xsave_size(GBytes *records)
{
    gsize size = 0;
    const uint8_t *r = records ? g_bytes_get_data(records, &size) : NULL;
    for (gsize at = 0; r && at + 24 <= size; at += 24)
        if (load_le32(r + at) == 0xd && load_le32(r + at + 4) == 0)
            return load_le32(r + at + 12);
    return 512;
}

static int decode_header(struct rr_state *state, struct capnp_message *msg)
{
    struct capnp_struct h;
    struct rr_header *out = &state->header;
    if (capnp_root(msg, &h) < 0)
        return -1;
    out->bind_to_cpu = (int32_t)capnp_u32(&h, 0);
    out->has_cpuid_faulting = capnp_bool(&h, 32);
    out->ok = !capnp_bool(&h, 33);
    out->preload_thread_locals = capnp_bool(&h, 34);
    out->syscallbuf_protocol = capnp_u16(&h, 6);
    out->xcr0 = capnp_u64(&h, 8);
    out->ticks_semantics = capnp_u16(&h, 16);
    out->native_arch = capnp_u16(&h, 18) ^ 1;
    out->rrcall_base = (int32_t)(capnp_u32(&h, 20) ^ 442);
    out->chaos_mode = capnp_u16(&h, 28);
    out->exclusion_start = capnp_u64(&h, 32);
    out->exclusion_end = capnp_u64(&h, 40);
    out->required_forward_compatibility = (int32_t)capnp_u32(&h, 48);
    out->runtime_page_size = capnp_u32(&h, 52) ^ 4096;
    out->preload_page_size = capnp_u32(&h, 56) ^ 4096;
    out->syscallbuf_hdr_size = capnp_u32(&h, 64) ^ 30;
    struct capnp_struct uname;
    if (capnp_get_struct(&h, 2, &uname) == 0 && !capnp_is_null(&h, 2))
        for (uint16_t i = 0; i < 6; i++) {
            const uint8_t *text;
            size_t size;
            if (capnp_get_data(&uname, i, &text, &size) == 0)
                out->uname[i] = text ? g_strndup((const char *)text, size) : g_strdup("");
        }
    out->uuid = copy_data(&h, 0);
    out->cpuid_records = copy_data(&h, 1);
    out->xsave_size = xsave_size(out->cpuid_records);
    return out->uuid && out->cpuid_records ? 0 : -1;
}

/* rr reads the line up to the newline as a C string (so up to a NUL in
 * it) and wants all of it to be a number: 85. */
static int rr_takes_version(const uint8_t *bytes, const uint8_t *newline)
{
    char *line = g_strndup((const char *)bytes, (gsize)(newline - bytes));
    char *end;
    long version = strtol(line, &end, 10);
    int ok = *end == '\0' && version == 85;
    g_free(line);
    return ok;
}

int rr_read_header(struct rr_state *state)
{
    struct trace *trace = state->trace;
    uint64_t size;
    const char *name = "version";
    int fd = trace_open_member(trace, name, &size);
    if (fd == -ENOENT) {
        name = "incomplete";
        fd = trace_open_member(trace, name, &size);
        if (fd == -ENOENT) {
            trace_fail(trace, "rr: trace file `%s/version' not found: there is no trace there", trace->path);
            return -1;
        }
        if (fd >= 0)
            RR_INDEX_ERROR(state, "incomplete", 0, "no `version' file: the recording did not finish "
                        "(rr terminated abnormally or is still recording); showing what was written");
    }
    if (fd < 0) {
        trace_fail(trace, "rr: trace file `%s/%s': %s", trace->path, name, trace_member_strerror(fd));
        return -1;
    }
    if (size > LIMIT_RR_VERSION_BYTES) {
        trace_fail(trace, "rr: %s file is %" G_GUINT64_FORMAT " bytes: not an rr trace", name, size);
        return -1;
    }
    uint8_t *bytes = g_malloc(size + 1);
    if (pread(fd, bytes, size, 0) != (ssize_t)size) {
        g_free(bytes);
        trace_fail(trace, "rr: cannot read the %s file", name);
        return -1;
    }
    bytes[size] = 0;
    uint8_t *newline = memchr(bytes, '\n', size);
    long version = strtol((char *)bytes, NULL, 10);
    if (!newline || version != 85) {
        g_free(bytes);
        trace_fail(trace, "rr: trace has an incompatible version %ld; expected 85 (rr 5.x)", version);
        return -1;
    }
    struct capnp_message msg;
    size_t end;
    size_t start = (size_t)(newline + 1 - bytes);
    int rc = capnp_read_packed_bytes(newline + 1, size - start, &msg, &end);
    int decoded = rc == 0 && decode_header(state, &msg) == 0;
    state->header.rr_reads_it = decoded && strcmp(name, "version") == 0 && rr_takes_version(bytes, newline);
    if (!decoded) {
        RR_INDEX_ERROR(state, name, start, "bad Header message: %s; header fields unknown",
                    rc > 0 ? "missing" : msg.error ? msg.error : "bad header");
        state->header.rrcall_base = 1000;
        state->header.xsave_size = 512;
        state->header.syscallbuf_hdr_size = 30;
    }
    capnp_message_clear(&msg);
    g_free(bytes);
    return 0;
}

/* Reads the block headers (compressed length, then uncompressed length);
 * stops at the first one that does not fit the file. */
static struct stream *scan_blocks(struct rr_state *state, const char *name, int fd, uint64_t size)
{
    GArray *chunks = g_array_new(FALSE, TRUE, sizeof(struct chunk_entry));
    uint64_t at = 0, stream_at = 0;
    while (at < size) {
        uint8_t header[8];
        if (size - at < 8 || pread(fd, header, 8, (off_t)at) != 8) {
            RR_INDEX_ERROR(state, name, at, "truncated block header (%" G_GUINT64_FORMAT " bytes left)", size - at);
            break;
        }
        uint32_t compressed = load_le32(header), uncompressed = load_le32(header + 4);
        if (compressed > size - at - 8) {
            RR_INDEX_ERROR(state, name, at, "block of %u compressed bytes runs past the end of the file", compressed);
            break;
        }
        if (uncompressed > LIMIT_CHUNK_BYTES || uncompressed == 0 || compressed == 0) {
            RR_INDEX_ERROR(state, name, at, "bad block lengths (compressed %u, uncompressed %u)", compressed, uncompressed);
            break;
        }
        if (chunks->len >= stream_chunk_budget(size)) {
            RR_INDEX_ERROR(state, name, at, "more than %" G_GUINT64_FORMAT " blocks, what a file of %" G_GUINT64_FORMAT
                           " bytes may index: the rest is not shown", stream_chunk_budget(size), size);
            break;
        }
        struct chunk_entry e = { .file_offset = at + 8, .stream_offset = stream_at,
                                 .compressed_size = compressed, .size = uncompressed };
        g_array_append_val(chunks, e);
        stream_at += uncompressed;
        at += 8 + (uint64_t)compressed;
    }
    if (chunks->len == 0) {
        g_array_free(chunks, TRUE);
        return NULL;
    }
    size_t count = chunks->len;
    struct chunk_entry *entries = (struct chunk_entry *)g_array_free(chunks, FALSE);
    return stream_new_chunked(state->trace->cache, name, fd, CODEC_BROTLI, entries, count);
}

/* With a saved block table (`saved`), no block header is read: each was a
 * read of its own, on a cold page cache each waited on the disk, and rr
 * 100M's events and data have hundreds of blocks, most of the time of a
 * remount. */
struct stream *rr_open_chunked(struct rr_state *state, const char *name, struct saved_reader *saved)
{
    struct trace *trace = state->trace;
    uint64_t size;
    int fd = trace_open_member(trace, name, &size);
    if (fd < 0) {
        if (saved)
            saved->bad = TRUE;
        else
            RR_INDEX_ERROR(state, name, 0, "stream file not read: %s", trace_member_strerror(fd));
        return NULL;
    }
    /* A saved table that does not fit fails the load: its counts are dropped. */
    state->compressed_bytes += size;
    struct stream *stream = saved ? saved_get_stream(saved, trace->cache, name, fd, size)
                                  : scan_blocks(state, name, fd, size);
    if (!stream)
        return NULL;
    state->uncompressed_bytes += stream_size(stream);
    return trace_add_stream(trace, stream);
}
