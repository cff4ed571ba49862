/* The index pass: one sequential read of the packets, the way
 * sp-rtrace-postproc's parse_binary.c reads them, into side tables. */
#include <string.h>
#include "keyed_hash.h"
#include "sprtrace.h"
#include "trace.h"
#include "stream.h"
#include "tracefs_limits.h"

struct index_pass {
    struct trace *trace;
    struct sprt_state *state;
    uint32_t prev_call;                    /* postproc's fcall_prev */
    GHashTable *traces;                    /* frames bytes -> trace number + 1, keyed (keyed_hash.h) */
    GArray *trace_hash;                    /* uint32 per trace */
    struct sprt_leaks *leaks;
    uint64_t table_bytes, table_budget;    /* the header tables' entries and strings */
};

static int read_handshake(struct trace *trace, struct sprt_state *state, uint64_t *packets_start)
{
    struct sprt_log *log = &state->log;
    uint8_t hs[2 + 255];
    uint64_t size = stream_size(state->stream);
    if (size < 2 || stream_read_exact(state->stream, 0, hs, 2) != 0 || hs[0] != 0xF0) {
        trace_fail(trace, "not an sp-rtrace binary log (no 0xF0 handshake)");
        return -1;
    }
    unsigned len = hs[1];
    if (len < 5 || 2u + len > size || stream_read_exact(state->stream, 2, hs + 2, len) != 0) {
        trace_fail(trace, "sp-rtrace handshake size %u runs past the end of the file", len);
        return -1;
    }
    unsigned arch_len = hs[4];
    if (3u + arch_len + 2 > len) {
        trace_fail(trace, "sp-rtrace handshake architecture length %u runs past the handshake", arch_len);
        return -1;
    }
    log->vmajor = hs[2];
    log->vminor = hs[3];
    state->arch = g_strndup((const char *)hs + 5, arch_len);
    uint8_t endian = hs[5 + arch_len], ptr = hs[6 + arch_len];
    if (endian > 1 || (ptr != 4 && ptr != 8)) {
        trace_fail(trace, "sp-rtrace handshake: endianness %u / pointer size %u unsupported", endian, ptr);
        return -1;
    }
    if (log->vmajor < 1 || log->vmajor > 2) {
        trace_fail(trace, "sp-rtrace protocol %u.%u unsupported (1.x and 2.0 are)", log->vmajor, log->vminor);
        return -1;
    }
    log->big_endian = endian == 1;
    log->pointer_size = ptr;
    *packets_start = 2u + len;
    uint8_t head[4];
    if (log->vmajor == 1 && log->vminor == 0 && stream_read_exact(state->stream, *packets_start, head, 4) == 0
        && g_ascii_isupper(head[2]) && g_ascii_isupper(head[3])) {
        trace_fail(trace, "sp-rtrace 2010 pre-release log (claims protocol 1.0, arch %s, but uses unaligned "
                   "[size:u16][type:2 chars] packets such as \"%c%c\"): this layout predates the documented "
                   "protocol and is not supported", state->arch, head[2], head[3]);
        return -1;
    }
    return 0;
}

/* postproc's bt_hash: decides the order of `-lc` groups of equal size. */
static uint32_t backtrace_hash(struct sprt_reader *r, uint32_t frames)
{
    uint64_t hash = 0;
    for (uint32_t i = 0; i < frames; i++) {
        uint64_t value = sprt_pointer(r);
        while (value) {
            hash ^= value & 0xffff;
            value >>= 3;
        }
    }
    return (uint32_t)hash;
}

static void on_call(struct index_pass *pass, const uint8_t *data, uint32_t size, uint64_t offset)
{
    struct sprt_state *state = pass->state;
    struct sprt_call_fields f;
    if (!sprt_parse_call(state, data, size, &f)) {
        trace_error(pass->trace, "CALL", offset, "packet of %u bytes is smaller than its fields", size);
        return;
    }
    if (state->call_count >= LIMIT_SPRT_CALLS) {
        trace_error(pass->trace, "CALL", offset, "more than %u calls: the rest are not listed", LIMIT_SPRT_CALLS);
        return;
    }
    struct sprt_call call = {
        .index = state->call_count, .call_offset = offset, .call_size = size,
        .resource = sprt_resource_at(state, f.res_type, offset),
        .context = f.context, .res_size = f.res_size, .res_id = f.res_id,
        .type = (uint8_t)(f.type <= 2 ? f.type : 0), .leak = 1,
    };
    if (f.type == SPRT_ALLOC) {
        state->log.lowest_block = MIN(state->log.lowest_block, f.res_id);
        state->log.highest_block = MAX(state->log.highest_block, f.res_id);
    }
    if (call.index % SPRT_CALLS_PER_CHECKPOINT == 0) {
        uint64_t header = offset - 8;
        g_array_append_val(state->checkpoints, header);
    }
    uint8_t zero = 0;
    if (call.index % 8 == 0)
        g_byte_array_append(state->leak_bits, &zero, 1);
    while (state->pair_codes->len < SPRT_PAIR_CODE_BYTES(call.index + 1))
        g_byte_array_append(state->pair_codes, &zero, 1);
    state->leak_bits->data[call.index >> 3] |= (uint8_t)(1u << (call.index & 7));
    state->leak_count++;
    state->call_count++;
    sprt_leaks_call(pass->leaks, state, &call, f.name, f.name_len);
    pass->prev_call = call.index;
}

/* The number of a BTRC packet's backtrace among those seen so far;
 * SPRT_NONE for a new one, or frames that do not fit the packet. */
static uint32_t trace_of(void *context, const uint8_t *data, size_t size)
{
    struct index_pass *pass = context;
    struct sprt_reader r;
    sprt_reader_init(&r, pass->state, data, size);
    uint64_t bytes = (uint64_t)sprt_u32(&r) * pass->state->log.pointer_size;
    if (r.bad || bytes > size - 4)
        return SPRT_NONE;
    GBytes *key = g_bytes_new_static(data, 4 + (size_t)bytes);
    gpointer found = g_hash_table_lookup(pass->traces, key);
    g_bytes_unref(key);
    return found ? GPOINTER_TO_UINT(found) - 1 : SPRT_NONE;
}

static void on_backtrace(struct index_pass *pass, uint32_t prev_call, const uint8_t *data, uint32_t size,
                         uint64_t offset)
{
    if (prev_call == SPRT_NONE) {
        trace_error(pass->trace, "BTRC", offset, "backtrace without a CALL before it: ignored");
        return;
    }
    struct sprt_reader r;
    sprt_reader_init(&r, pass->state, data, size);
    uint32_t frames = sprt_u32(&r);
    uint64_t bytes = (uint64_t)frames * pass->state->log.pointer_size;
    if (r.bad || bytes > size - 4) {
        trace_error(pass->trace, "BTRC", offset, "%u frames do not fit in a %u-byte packet: backtrace ignored",
                    frames, size);
        return;
    }
    if (trace_of(pass, data, size) != SPRT_NONE)
        return;
    uint32_t number = pass->state->trace_count++;
    g_hash_table_insert(pass->traces, g_bytes_new(data, 4 + (size_t)bytes), GUINT_TO_POINTER(number + 1));
    uint32_t hash = backtrace_hash(&r, frames);
    g_array_append_val(pass->trace_hash, hash);
}

/* The tables' strings are the log's own bytes: without a budget a log of
 * MMAP packets with long paths kept its whole size in memory.  Counts an
 * entry and its strings against limit_table_budget() of the log, the
 * strings twice: the environment text (sprt_render_environment) holds
 * them again.  Appends the entry to its table when it fits, else frees its
 * strings and says so once; TRUE when kept. */
static gboolean keep_entry(struct index_pass *pass, unsigned t, uint64_t offset, void *entry)
{
    const struct sprt_table *table = &sprt_tables[t];
    char **name = sprt_entry_string(entry, table->name), **string = sprt_entry_string(entry, table->string);
    uint64_t strings = (name ? strlen(*name) + 1 : 0) + (string ? strlen(*string) + 1 : 0);
    uint64_t cost = table->entry_size + 2 * sizeof(void *) + 2 * strings;
    if (pass->table_bytes + cost <= pass->table_budget) {
        pass->table_bytes += cost;
        g_array_append_vals(pass->state->tables[t], entry, 1);
        return TRUE;
    }
    if (pass->table_bytes <= pass->table_budget)
        trace_error(pass->trace, table->what, offset,
                    "the MMAP, MINF, CTXR, FILE and RESR packets reach their budget of %" G_GUINT64_FORMAT
                    " bytes (%u MiB + 1/%u of the log's size); later ones are ignored", pass->table_budget,
                    LIMIT_TABLE_FLOOR_BYTES >> 20, LIMIT_TABLE_FILE_DIVISOR);
    pass->table_bytes = pass->table_budget + 1;
    g_free(name ? *name : NULL);
    g_free(string ? *string : NULL);
    return FALSE;
}

/* A header table's packet (on_packet passes no other), at most LIMIT_SPRT_TABLE_ENTRIES of each. */
static void on_table_packet(struct index_pass *pass, uint32_t type, struct sprt_reader *r, uint64_t offset)
{
    struct sprt_state *state = pass->state;
    unsigned t = 0;
    while (sprt_tables[t].packet != type)
        t++;
    if (state->tables[t]->len >= LIMIT_SPRT_TABLE_ENTRIES) {
        trace_error(pass->trace, sprt_tables[t].what, offset, "more than %u such packets: ignored",
                    LIMIT_SPRT_TABLE_ENTRIES);
        return;
    }
    if (type == T_MMAP) {
        struct sprt_mmap m = { .from = sprt_pointer(r) };
        m.to = sprt_pointer(r);
        m.path = sprt_string_dup(r);
        keep_entry(pass, SPRT_MMAPS, offset, &m);
    } else if (type == T_CTXR) {
        struct sprt_named c = { .id = sprt_u32(r) };
        c.name = sprt_name_dup(r, &c.name_len);
        keep_entry(pass, SPRT_CONTEXTS, offset, &c);
    } else if (type == T_MINF) {
        struct sprt_module m = { .id = sprt_u32(r) };
        uint32_t version = sprt_u32(r);
        m.vmajor = version >> 16;
        m.vminor = version & 0xffff;
        m.name = sprt_string_dup(r);
        keep_entry(pass, SPRT_MODULES, offset, &m);
    } else if (type == T_FILE) {
        struct sprt_file f = { 0 };
        f.name = sprt_name_dup(r, &f.name_len);
        f.path = sprt_string_dup(r);
        keep_entry(pass, SPRT_FILES, offset, &f);
    } else {
        struct sprt_resource res = { .id = sprt_u32(r), .offset = offset };
        if (state->log.vmajor > 1 || state->log.vminor >= 3)
            res.flags = sprt_u32(r);
        res.type = sprt_name_dup(r, &res.type_len);
        res.desc = sprt_string_dup(r);
        if (!keep_entry(pass, SPRT_RESOURCES, offset, &res))
            return;
        sprt_link_resource(state, state->resources->len - 1);
        if (res.id > LIMIT_SPRT_RESOURCE_ID)
            trace_error(pass->trace, "RESR", offset, "resource id %u above %u: calls cannot refer to it",
                        res.id, LIMIT_SPRT_RESOURCE_ID);
    }
}

static void on_pinf(struct sprt_state *state, struct sprt_reader *r)
{
    state->log.have_pinfo = TRUE;
    state->log.pid = sprt_u32(r);
    state->log.secs = sprt_u32(r);
    state->log.usecs = sprt_u32(r);
    state->log.have_depth = state->log.vmajor > 1 || state->log.vminor >= 2;
    if (state->log.have_depth)
        state->log.backtrace_depth = (int32_t)sprt_u32(r);
    g_free(state->process);
    state->process = sprt_string_dup(r);
}

/* 1.x writes heap bottom/top as pointers, 2.0 as dwords (notes, point 6):
 * the packet's size tells which, whatever the version claims. */
static void on_hinf(struct sprt_log *log, struct sprt_reader *r)
{
    gboolean pointers = r->size >= 2u * log->pointer_size + 40u;
    log->have_hinfo = TRUE;
    log->heap_bottom = pointers ? sprt_pointer(r) : sprt_u32(r);
    log->heap_top = pointers ? sprt_pointer(r) : sprt_u32(r);
    for (int i = 0; i < 10; i++)
        log->heap[i] = (int32_t)sprt_u32(r);
}

static void on_packet(struct index_pass *pass, uint32_t type, const uint8_t *data, uint32_t size, uint64_t offset)
{
    struct sprt_reader r;
    sprt_reader_init(&r, pass->state, data, size);
    /* ARGS, OCFG and FILE packets pass over the CALL before them; any
     * other ends it (a CALL then starts the next). */
    uint32_t prev_call = pass->prev_call;
    if (type != T_ARGS && type != T_OCFG && type != T_FILE)
        pass->prev_call = SPRT_NONE;
    switch (type) {
    case T_CALL: on_call(pass, data, size, offset); return;
    case T_BTRC: on_backtrace(pass, prev_call, data, size, offset); return;
    case T_ARGS:
        if (prev_call == SPRT_NONE)
            trace_error(pass->trace, "ARGS", offset, "arguments without a CALL before them: ignored");
        return;
    case T_OCFG: case T_NLIB: return;
    case T_FILE: case T_MMAP: case T_CTXR: case T_MINF: case T_RESR:
        on_table_packet(pass, type, &r, offset);
        break;
    case T_PINF: on_pinf(pass->state, &r); break;
    case T_HINF: on_hinf(&pass->state->log, &r); break;
    default:
        trace_error(pass->trace, "packet", offset, "unknown packet type 0x%08x (%u bytes): skipped", type, size);
        return;
    }
    if (r.bad)
        trace_error(pass->trace, "packet", offset, "%.4s packet of %u bytes is smaller than its fields",
                    (const char *)&type, size);
}

static void read_packets(struct index_pass *pass, uint64_t start)
{
    struct sprt_state *state = pass->state;
    uint64_t end = stream_size(state->stream);
    struct stream_cursor cursor;
    stream_cursor_init(&cursor, state->stream, start);
    GByteArray *buffer = g_byte_array_new();
    while (cursor.offset < end) {
        uint64_t at = cursor.offset;
        uint8_t head[8];
        if (stream_cursor_read(&cursor, head, 8) != 0) {
            trace_error(pass->trace, "packet", at, "truncated packet header (%" G_GUINT64_FORMAT " bytes left)", end - at);
            break;
        }
        uint32_t type, size;
        int header = sprt_packet_header(state, head, at, end, &type, &size);
        if (header == SPRT_HEAD_SHORT) {
            trace_error(pass->trace, "packet", at, "packet size %u smaller than its type field", size);
            break;
        }
        if (header == SPRT_HEAD_PAST_END) {
            trace_error(pass->trace, "packet", at, "packet size %u runs past the end of the file", size);
            break;
        }
        g_byte_array_set_size(buffer, size);
        if (stream_cursor_read(&cursor, buffer->data, size) != 0) {
            trace_error(pass->trace, "packet", at, "cannot read %u bytes", size);
            break;
        }
        on_packet(pass, type, buffer->data, size, at + 8);
    }
    g_byte_array_unref(buffer);
    stream_cursor_finish(&cursor);
}

int sprt_index(struct trace *trace)
{
    struct sprt_state *state = sprt_state_new(trace);
    uint64_t start;
    if (!state->stream) {
        trace_fail(trace, "cannot read the sp-rtrace log");
        return -1;
    }
    if (read_handshake(trace, state, &start) != 0)
        return -1;
    struct index_pass pass = { .trace = trace, .state = state, .prev_call = SPRT_NONE,
                               .table_budget = limit_table_budget((uint64_t)trace->st.st_size) };
    pass.traces = g_hash_table_new_full(keyed_hash_gbytes, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL);
    pass.trace_hash = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    pass.leaks = sprt_leaks_new();
    state->log.lowest_block = state->log.pointer_size == 4 ? UINT32_MAX : UINT64_MAX;
    read_packets(&pass, start);
    int result = 0;
    if (!state->log.have_pinfo) {
        trace_fail(trace, "sp-rtrace log without a process information (PINF) packet");
        result = -1;
    } else {
        sprt_leaks_summarise(pass.leaks, state);
        result = sprt_build_groups(trace, state, trace_of, &pass, pass.trace_hash);
        if (result != 0)
            trace_fail(trace, "cannot read the sp-rtrace log again to group its leaks");
    }
    sprt_leaks_free(pass.leaks);
    g_hash_table_unref(pass.traces);
    g_array_unref(pass.trace_hash);
    return result;
}
