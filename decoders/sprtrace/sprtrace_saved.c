/* The persistent index of an sp-rtrace log: the call table, the named
 * tables and the leak groups, so that a remount skips the packet scan.
 * The environment text is rendered again from what is loaded, and every
 * saved offset and index is checked like log data. */
#include <string.h>
#include "saved_bytes.h"
#include "sprtrace.h"
#include "stream.h"
#include "trace.h"
#include "tracefs_limits.h"

#define SPRT_SAVE_MAGIC 0x31535053u    /* "SPS1" */
#define SAVED_STRING_MAX (1u << 20)

static void put_header(struct saved_writer *out, const struct sprt_state *s)
{
    uint64_t numbers[] = {
        SPRT_SAVE_MAGIC, s->vmajor, s->vminor, (uint64_t)s->big_endian, s->pointer_size,
        (uint64_t)s->have_pinfo, s->pid, s->secs, s->usecs, (uint64_t)(int64_t)s->backtrace_depth,
        (uint64_t)s->have_depth, (uint64_t)s->have_hinfo, s->heap_bottom, s->heap_top,
        s->lowest_block, s->highest_block, s->trace_count,
    };
    saved_put(out, numbers, sizeof numbers);
    saved_put(out, s->heap, sizeof s->heap);
    saved_put_string(out, s->arch);
    saved_put_string(out, s->process);
}

static gboolean get_header(struct saved_reader *r, struct sprt_state *s)
{
    uint64_t numbers[17];
    if (!saved_take(r, numbers, sizeof numbers) || numbers[0] != SPRT_SAVE_MAGIC ||
        numbers[1] > 255 || numbers[2] > 255 || (numbers[4] != 4 && numbers[4] != 8))
        return FALSE;
    s->vmajor = (uint8_t)numbers[1];
    s->vminor = (uint8_t)numbers[2];
    s->big_endian = numbers[3] != 0;
    s->pointer_size = (unsigned)numbers[4];
    s->have_pinfo = numbers[5] != 0;
    s->pid = (uint32_t)numbers[6];
    s->secs = (uint32_t)numbers[7];
    s->usecs = (uint32_t)numbers[8];
    s->backtrace_depth = (int32_t)numbers[9];
    s->have_depth = numbers[10] != 0;
    s->have_hinfo = numbers[11] != 0;
    s->heap_bottom = numbers[12];
    s->heap_top = numbers[13];
    s->lowest_block = numbers[14];
    s->highest_block = numbers[15];
    s->trace_count = (uint32_t)numbers[16];
    saved_take(r, s->heap, sizeof s->heap);
    s->arch = saved_get_string(r, SAVED_STRING_MAX);
    s->process = saved_get_string(r, SAVED_STRING_MAX);
    return !r->bad && s->have_pinfo && s->arch && numbers[16] <= LIMIT_SPRT_CALLS;
}

static void put_tables(struct saved_writer *out, const struct sprt_state *s)
{
    saved_put_u64(out, s->resources->len);
    for (guint i = 0; i < s->resources->len; i++) {
        const struct sprt_resource *res = &g_array_index(s->resources, struct sprt_resource, i);
        uint64_t numbers[] = { res->id, res->flags, res->leak_count, (uint64_t)(int64_t)res->leak_size };
        saved_put(out, numbers, sizeof numbers);
        saved_put_string(out, res->type);
        saved_put_string(out, res->desc);
    }
    saved_put_u64(out, s->contexts->len);
    for (guint i = 0; i < s->contexts->len; i++) {
        const struct sprt_named *c = &g_array_index(s->contexts, struct sprt_named, i);
        saved_put_u64(out, c->id);
        saved_put_string(out, c->name);
    }
    saved_put_u64(out, s->modules->len);
    for (guint i = 0; i < s->modules->len; i++) {
        const struct sprt_module *m = &g_array_index(s->modules, struct sprt_module, i);
        uint64_t numbers[] = { m->id, m->vmajor, m->vminor };
        saved_put(out, numbers, sizeof numbers);
        saved_put_string(out, m->name);
    }
    saved_put_u64(out, s->mmaps->len);
    for (guint i = 0; i < s->mmaps->len; i++) {
        const struct sprt_mmap *m = &g_array_index(s->mmaps, struct sprt_mmap, i);
        uint64_t numbers[] = { m->from, m->to };
        saved_put(out, numbers, sizeof numbers);
        saved_put_string(out, m->path);
    }
    saved_put_u64(out, s->files->len);
    for (guint i = 0; i < s->files->len; i++) {
        const struct sprt_file *f = &g_array_index(s->files, struct sprt_file, i);
        saved_put_string(out, f->name);
        saved_put_string(out, f->path);
    }
}

/* A table's saved length: bounded as the index pass bounds it. */
static guint get_count(struct saved_reader *r)
{
    uint64_t count = saved_get_u64(r);
    if (count > LIMIT_SPRT_TABLE_ENTRIES)
        r->bad = TRUE;
    return r->bad ? 0 : (guint)count;
}

/* Each element goes into its array as soon as it is read, so that the
 * state's free function owns whatever strings a bad buffer left half read. */
static gboolean get_tables(struct saved_reader *r, struct sprt_state *s)
{
    guint n = get_count(r);
    for (guint i = 0; i < n && !r->bad; i++) {
        uint64_t numbers[4];
        saved_take(r, numbers, sizeof numbers);
        struct sprt_resource res = { (uint32_t)numbers[0], (uint32_t)numbers[1], NULL, NULL, numbers[2],
                                     (int32_t)numbers[3] };
        res.type = saved_get_string(r, SAVED_STRING_MAX);
        res.desc = saved_get_string(r, SAVED_STRING_MAX);
        g_array_append_val(s->resources, res);
        if (!res.type || !res.desc)
            r->bad = TRUE;
    }
    n = get_count(r);
    for (guint i = 0; i < n && !r->bad; i++) {
        struct sprt_named c = { (uint32_t)saved_get_u64(r), NULL };
        c.name = saved_get_string(r, SAVED_STRING_MAX);
        g_array_append_val(s->contexts, c);
    }
    n = get_count(r);
    for (guint i = 0; i < n && !r->bad; i++) {
        uint64_t numbers[3];
        saved_take(r, numbers, sizeof numbers);
        struct sprt_module m = { (uint32_t)numbers[0], (uint32_t)numbers[1], (uint32_t)numbers[2], NULL };
        m.name = saved_get_string(r, SAVED_STRING_MAX);
        g_array_append_val(s->modules, m);
    }
    n = get_count(r);
    for (guint i = 0; i < n && !r->bad; i++) {
        uint64_t numbers[2];
        saved_take(r, numbers, sizeof numbers);
        struct sprt_mmap m = { numbers[0], numbers[1], NULL };
        m.path = saved_get_string(r, SAVED_STRING_MAX);
        g_array_append_val(s->mmaps, m);
    }
    n = get_count(r);
    for (guint i = 0; i < n && !r->bad; i++) {
        struct sprt_file f = { NULL, NULL };
        f.name = saved_get_string(r, SAVED_STRING_MAX);
        f.path = saved_get_string(r, SAVED_STRING_MAX);
        g_array_append_val(s->files, f);
    }
    return !r->bad;
}

static gboolean packet_in_file(uint64_t offset, uint32_t size, uint64_t file_size)
{
    return offset <= file_size && size <= file_size - offset;
}

static gboolean calls_valid(const struct sprt_state *s, uint64_t file_size)
{
    guint calls = s->calls->len;
    for (guint i = 0; i < calls; i++) {
        const struct sprt_call *c = &g_array_index(s->calls, struct sprt_call, i);
        if (!packet_in_file(c->call_offset, c->call_size, file_size) ||
            !packet_in_file(c->args_offset, c->args_size, file_size) ||
            !packet_in_file(c->bt_offset, c->bt_size, file_size) || c->type > 2 || c->leak > 1 ||
            (c->trace != SPRT_NONE && c->trace >= s->trace_count) ||
            (c->next_leak != SPRT_NONE && (c->next_leak >= calls || c->next_leak <= i)) ||
            (c->resource != SPRT_NONE && c->resource >= s->resources->len))
            return FALSE;
    }
    for (guint i = 0; i < s->groups->len; i++) {
        const struct sprt_group *g = &g_array_index(s->groups, struct sprt_group, i);
        /* The scan makes a group only for a trace with a leak: an empty
         * one would have `leaks-compressed` print the frames of no call. */
        if (g->trace >= s->trace_count || g->first_call == SPRT_NONE || g->first_call >= calls)
            return FALSE;
    }
    return TRUE;
}

int sprt_save(struct trace *trace, struct saved_writer *out)
{
    const struct sprt_state *s = trace->format_state;
    if (!s)
        return -1;
    put_header(out, s);
    put_tables(out, s);
    saved_put_array(out, s->calls);
    saved_put_array(out, s->groups);
    saved_put_gstring(out, s->leak_summary);
    return 0;
}

int sprt_load(struct trace *trace, const uint8_t *data, size_t size)
{
    struct sprt_state *s = sprt_state_new(trace);
    trace->format_state = s;
    if (!s->stream)
        return -1;
    struct saved_reader r;
    saved_reader_init_mapped(&r, data, size);
    if (!get_header(&r, s) || !get_tables(&r, s) || !saved_get_array(&r, s->calls, LIMIT_SPRT_CALLS) ||
        !saved_get_array(&r, s->groups, s->trace_count))
        return -1;
    s->leak_summary = saved_get_gstring(&r, (size_t)LIMIT_SPRT_TABLE_ENTRIES * 2 * SAVED_STRING_MAX);
    if (!saved_reader_done(&r) || !s->leak_summary || !calls_valid(s, stream_size(s->stream)))
        return -1;
    sprt_render_environment(s);
    sprt_build_tree(trace, s);
    return 0;
}
