/* sp-rtrace-postproc's text (writer.c + sp_rtrace_formatter.c of the
 * version matching the log's protocol), and the calls' JSON. */
#include <time.h>
#include "sprtrace.h"
#include "trace.h"
#include "stream.h"
#include "text.h"
#include "thread_value.h"
#include "tracefs_limits.h"

/* 1.x logs were post-processed by sp-rtrace 1.6.1, 2.0 logs by 2.0.1: the
 * header's version/origin and the heap wording are those tools' constants. */
static gboolean new_postproc(const struct sprt_state *state)
{
    return state->log.vmajor >= 2;
}

static void render_heap(const struct sprt_state *state, GString *out)
{
    static const char *const old_names[10] = {
        "non-mapped space allocated from system", "number of free chunks", "number of fastbin blocks",
        "number of mapped regions", "space in mapped regions", "maximum total allocated space",
        "space available in freed fastbin blocks", "total allocated space", "total free space",
        "top-most, releasable (via malloc_trim) space",
    };
    static const char *const new_names[10] = {
        "non-mapped space allocated from system", "count of free chunks", "count of freed fastbin blocks",
        "count of mapped regions", "space in mapped regions", "maximum total allocated space",
        "space available in freed fastbin blocks", "total allocated space, both normal and mmapped",
        "total free space", "space ideally releasable via malloc_trim",
    };
    const char *const *names = new_postproc(state) ? new_names : old_names;
    g_string_append(out, "## heap status information:\n");
    g_string_append_printf(out, "##   heap bottom 0x%" G_GINT64_MODIFIER "x\n", state->log.heap_bottom);
    g_string_append_printf(out, "##   heap top 0x%" G_GINT64_MODIFIER "x\n", state->log.heap_top);
    g_string_append_printf(out, "##   lowest block 0x%" G_GINT64_MODIFIER "x\n", state->log.lowest_block);
    g_string_append_printf(out, "##   highest block 0x%" G_GINT64_MODIFIER "x\n", state->log.highest_block);
    for (int i = 0; i < 10; i++)
        g_string_append_printf(out, "##   %s %d\n", names[i], state->log.heap[i]);
}

void sprt_render_environment(struct sprt_state *state)
{
    GString *out = g_string_new(NULL);
    for (guint i = 0; i < state->files->len; i++) {
        const struct sprt_file *f = &g_array_index(state->files, struct sprt_file, i);
        g_string_append_printf(out, "& %s : %s\n", f->name, f->path);
    }
    if (state->log.have_hinfo)
        render_heap(state, out);
    for (guint i = 0; i < state->modules->len; i++) {
        const struct sprt_module *m = &g_array_index(state->modules, struct sprt_module, i);
        g_string_append_printf(out, "## tracing module: [%x] %s (%d.%d)\n", m->id, m->name, (int)m->vmajor,
                               (int)m->vminor);
    }
    for (guint i = 0; i < state->contexts->len; i++) {
        const struct sprt_named *c = &g_array_index(state->contexts, struct sprt_named, i);
        g_string_append_printf(out, "@ %x : %s\n", c->id, c->name);
    }
    for (guint i = 0; i < state->resources->len; i++) {
        const struct sprt_resource *r = &g_array_index(state->resources, struct sprt_resource, i);
        uint32_t id = state->resources->len == 1 ? 1 : r->id;   /* a lone resource shows as the first bit */
        g_string_append_printf(out, "<%x> : %s (%s)%s\n", id >= 1 && id <= 32 ? 1u << (id - 1) : 0u, r->type,
                               r->desc, r->flags ? " [refcount]" : "");
    }
    for (guint i = 0; i < state->mmaps->len; i++) {
        const struct sprt_mmap *m = &g_array_index(state->mmaps, struct sprt_mmap, i);
        g_string_append_printf(out, ": %s => 0x%" G_GINT64_MODIFIER "x-0x%" G_GINT64_MODIFIER "x\n", m->path,
                               m->from, m->to);
    }
    state->environment = out;
}

/* The PINF time as the tool printed it with TZ=UTC (it uses localtime). */
void sprt_render_header(const struct sprt_state *state, const char *filter, GString *out)
{
    time_t secs = (time_t)state->log.secs;
    struct tm tm;
    gmtime_r(&secs, &tm);
    g_string_append_printf(out, "version=%s, arch=%s, timestamp=%d.%d.%d %02d:%02d:%02d, process=%s, pid=%d, ",
                           new_postproc(state) ? "2.0" : "1.4", state->arch, tm.tm_year + 1900, tm.tm_mon + 1,
                           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, state->process, (int)state->log.pid);
    if (filter)
        g_string_append_printf(out, "filter=%s, ", filter);
    if (state->log.have_depth && state->log.backtrace_depth != -1)
        g_string_append_printf(out, "backtrace depth=%d, ", state->log.backtrace_depth);
    g_string_append_printf(out, "origin=%s, \n", new_postproc(state) ? "sp-rtrace 1.8" : "sp-rtrace 1.6");
    g_string_append_len(out, state->environment->str, (gssize)state->environment->len);
}

/* A view reads three packets a call (call, arguments, backtrace), a
 * malloc and a free each, a sixth of rendering /events: each thread keeps
 * the buffers of its last packets, up to LIMIT_SPRT_KEPT_PACKET_BYTES
 * each, for the next ones.  A buffer's capacity is stored before its data. */
#define SPRT_PACKET_HEADER 16

struct kept_packets {
    uint8_t *buffer[LIMIT_SPRT_KEPT_PACKETS];
};

static void kept_packets_free(gpointer data)
{
    struct kept_packets *kept = data;
    for (unsigned i = 0; i < LIMIT_SPRT_KEPT_PACKETS; i++)
        g_free(kept->buffer[i]);
    g_free(kept);
}

static GPrivate kept_packets_of_thread = G_PRIVATE_INIT(kept_packets_free);

static size_t buffer_capacity(const uint8_t *buffer)
{
    size_t capacity;
    memcpy(&capacity, buffer, sizeof capacity);
    return capacity;
}

static uint8_t *packet_buffer_get(uint32_t size)
{
    struct kept_packets *kept = thread_value(&kept_packets_of_thread, sizeof *kept);
    for (unsigned i = 0; i < LIMIT_SPRT_KEPT_PACKETS; i++) {
        uint8_t *buffer = kept->buffer[i];
        if (buffer && buffer_capacity(buffer) >= size) {
            kept->buffer[i] = NULL;
            return buffer + SPRT_PACKET_HEADER;
        }
    }
    size_t capacity = MAX((size_t)size, (size_t)256);
    uint8_t *buffer = g_malloc(SPRT_PACKET_HEADER + capacity);
    memcpy(buffer, &capacity, sizeof capacity);
    return buffer + SPRT_PACKET_HEADER;
}

void sprt_packet_free(uint8_t *data)
{
    if (!data)
        return;
    uint8_t *buffer = data - SPRT_PACKET_HEADER;
    if (buffer_capacity(buffer) <= LIMIT_SPRT_KEPT_PACKET_BYTES) {
        struct kept_packets *kept = thread_value(&kept_packets_of_thread, sizeof *kept);
        for (unsigned i = 0; i < LIMIT_SPRT_KEPT_PACKETS; i++) {
            if (!kept->buffer[i]) {
                kept->buffer[i] = buffer;
                return;
            }
        }
    }
    g_free(buffer);
}

uint8_t *sprt_read_packet(struct trace *trace, const struct sprt_state *state, uint64_t offset, uint32_t size)
{
    uint8_t *data = packet_buffer_get(size);
    if (stream_read_exact(state->stream, offset, data, size) != 0) {
        trace_error(trace, "packet", offset, "cannot read %u bytes (file changed?)", size);
        sprt_packet_free(data);
        return NULL;
    }
    return data;
}

/* At least `width` digits, zero-padded, as printf's "%0*u". */
static void append_padded(GString *out, unsigned value, unsigned width)
{
    for (unsigned digits = text_decimal_digits(value); digits < width; digits++)
        text_append_c(out, '0');
    text_append_u64(out, value);
}

/* "HH:MM:SS.mmm".  The views print millions of calls: their fixed pieces
 * and numbers go through text.h's appends, not printf, which with a
 * buffer per packet was most of rendering /events. */
static void append_time(GString *out, uint32_t timestamp)
{
    unsigned hours = timestamp / (1000 * 60 * 60), rest = timestamp % (1000 * 60 * 60);
    append_padded(out, hours, 2);
    g_string_append_c(out, ':');
    append_padded(out, rest / 60000, 2);
    g_string_append_c(out, ':');
    append_padded(out, rest % 60000 / 1000, 2);
    g_string_append_c(out, '.');
    append_padded(out, rest % 1000, 3);
}

static const char *call_resource_name(const struct sprt_state *state, const struct sprt_call *call)
{
    if (call->resource == SPRT_NONE)
        return NULL;
    return g_array_index(state->resources, struct sprt_resource, call->resource).type;
}

static gboolean render_args(struct trace *trace, const struct sprt_state *state, const struct sprt_call *call,
                            GString *out, gboolean json)
{
    if (!call->args_offset)
        return TRUE;
    uint8_t *data = sprt_read_packet(trace, state, call->args_offset, call->args_size);
    if (!data)
        return FALSE;
    struct sprt_reader r;
    sprt_reader_init(&r, state, data, call->args_size);
    uint32_t argc = sprt_u32(&r);
    for (uint32_t i = 0; i < argc && !r.bad; i++) {
        const char *name, *value;
        size_t name_len, value_len;
        sprt_string(&r, &name, &name_len);
        sprt_string(&r, &value, &value_len);
        if (r.bad)
            break;
        if (json) {
            g_string_append(out, i ? ", " : "");
            text_json_string(out, name, name_len);
            g_string_append(out, ": ");
            text_json_string(out, value, value_len);
        } else {
            text_append(out, "\t$", 2);
            text_append(out, name, name_len);
            text_append(out, " = ", 3);
            text_append(out, value, value_len);
            g_string_append_c(out, '\n');
        }
    }
    sprt_packet_free(data);
    return TRUE;
}

uint8_t *sprt_load_call(struct trace *trace, const struct sprt_state *state, const struct sprt_call *call,
                        struct sprt_call_fields *f)
{
    uint8_t *data = sprt_read_packet(trace, state, call->call_offset, call->call_size);
    if (!data)
        return NULL;
    sprt_parse_call(state, data, call->call_size, f);
    return data;
}

const char *sprt_call_type_name(const struct sprt_call *call)
{
    static const char *const types[3] = { "undefined", "free", "alloc" };
    return types[call->type <= 2 ? call->type : 0];
}

gboolean sprt_render_call(struct trace *trace, const struct sprt_state *state, const struct sprt_call *call,
                          gboolean with_backtrace, GString *out)
{
    struct sprt_call_fields f;
    uint8_t *data = sprt_load_call(trace, state, call, &f);
    if (!data)
        return FALSE;
    text_append_u64(out, (uint64_t)call->index + 1);
    text_append(out, ". ", 2);
    if (f.context) {
        g_string_append_c(out, '@');
        text_append_hex(out, f.context);
        g_string_append_c(out, ' ');
    }
    if (f.timestamp) {
        g_string_append_c(out, '[');
        append_time(out, f.timestamp);
        text_append(out, "] ", 2);
    }
    text_append(out, f.name, f.name_len);
    const char *res = call_resource_name(state, call);
    if (res && state->resources->len != 1) {
        g_string_append_c(out, '<');
        text_append_cstring(out, res);
        g_string_append_c(out, '>');
    }
    if (f.type == SPRT_ALLOC) {
        g_string_append_c(out, '(');
        text_append_i64(out, f.res_size);
        text_append(out, ") = 0x", 6);
    } else {
        text_append(out, "(0x", 3);
    }
    text_append_hex(out, f.res_id);
    text_append(out, f.type == SPRT_ALLOC ? "\n" : ")\n", f.type == SPRT_ALLOC ? 1 : 2);
    sprt_packet_free(data);
    if (!render_args(trace, state, call, out, FALSE))
        return FALSE;
    if (with_backtrace && call->bt_offset)
        return sprt_render_frames(trace, state, call, FALSE, out);
    return TRUE;
}

static void append_frame_json(const struct sprt_state *state, uint64_t address, GString *out)
{
    g_string_append(out, "{\"address\": ");
    text_json_hex(out, address);
    const struct sprt_mmap *m = sprt_module_of(state, address);
    if (m) {
        g_string_append(out, ", \"module\": ");
        text_json_cstring(out, m->path);
        g_string_append(out, ", \"offset\": ");
        text_json_hex(out, address - m->from);
    }
    g_string_append(out, "}");
}

gboolean sprt_render_frames(struct trace *trace, const struct sprt_state *state, const struct sprt_call *call,
                            gboolean json, GString *out)
{
    uint8_t *data = sprt_read_packet(trace, state, call->bt_offset, call->bt_size);
    if (!data)
        return FALSE;
    struct sprt_reader r;
    sprt_reader_init(&r, state, data, call->bt_size);
    uint32_t frames = sprt_u32(&r);
    if (json)
        g_string_append(out, "[");
    for (uint32_t i = 0; i < frames; i++) {
        uint64_t address = sprt_pointer(&r);
        if (r.bad)
            break;
        if (json) {
            g_string_append(out, i ? ",\n    " : "\n    ");
            append_frame_json(state, address, out);
        } else {
            text_append(out, "\t0x", 3);
            text_append_hex(out, address);
            g_string_append_c(out, '\n');
        }
    }
    if (json)
        g_string_append(out, frames ? "\n  ]" : "]");
    else
        g_string_append_c(out, '\n');
    sprt_packet_free(data);
    return TRUE;
}

gboolean sprt_render_call_json(struct trace *trace, const struct sprt_state *state, const struct sprt_call *call,
                               GString *out)
{
    struct sprt_call_fields f;
    uint8_t *data = sprt_load_call(trace, state, call, &f);
    if (!data)
        return FALSE;
    g_string_append_printf(out, "{\n  \"index\": %u,\n  \"time\": \"", call->index + 1);
    append_time(out, f.timestamp);
    g_string_append_printf(out, "\",\n  \"timestamp_ms\": %u,\n  \"context\": %u,\n  \"resource\": ", f.timestamp,
                           f.context);
    const char *res = call_resource_name(state, call);
    if (res)
        text_json_cstring(out, res);
    else
        g_string_append(out, "null");
    g_string_append_printf(out, ",\n  \"type\": \"%s\",\n  \"name\": ", sprt_call_type_name(call));
    text_json_string(out, f.name, f.name_len);
    g_string_append_printf(out, ",\n  \"size\": %d,\n  \"id\": ", f.res_size);
    text_json_hex(out, f.res_id);
    g_string_append_printf(out, ",\n  \"leaked\": %s,\n  \"args\": {", call->leak ? "true" : "false");
    sprt_packet_free(data);
    if (!render_args(trace, state, call, out, TRUE))
        return FALSE;
    g_string_append(out, "},\n  \"backtrace\": ");
    if (!call->bt_offset)
        g_string_append(out, "null");
    else if (!sprt_render_frames(trace, state, call, TRUE, out))
        return FALSE;
    g_string_append(out, "\n}\n");
    return TRUE;
}
