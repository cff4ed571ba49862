/* The "environ" member of /rr-traceinfo.json, without a replay.
 *
 * `rr traceinfo` (5.6.0) replays to its initial exec, then reads the task's
 * memory (read_env, src/util.cc): argc at the stack pointer, argv's words
 * and the NULL after them, then the envp pointers up to a NULL, each a C
 * string.  At that point the replay has set the exec's exiting frame's
 * registers and written back the memory rr recorded with that frame: the
 * whole new [stack] (process_execve, src/record_syscall.cc), then its auxv
 * patches.  The same words and strings are read here from that frame's
 * memory writes, a later write over an earlier one, holes as zeros.  What
 * the writes do not cover (a pointer outside them, a string running out of
 * them) is unknown, and so is where rr's replay stops before reading
 * (check_exec_records): environ is then null, never a guess.  Hostile
 * frames are bounded by LIMIT_RR_ENVIRON_*: their writes and holes, the
 * pages read (each looks at every piece) and the bytes copied. */
#include <string.h>

#include "rr.h"
#include "stream.h"
#include "trace.h"
#include "tracefs_limits.h"

#define PAGE_BYTES 4096u
#define PAGE_SLOTS 4u             /* envp's page and a string's, with room (LRU) */
/* rr's own mappings, skipped by its replay of an exec (AddressSpace.h):
 * its page, and its thread locals one preload page (64 KiB on aarch64) on. */
#define RR_PAGE_ADDR 0x70000000u
#define PROT_EXEC_BIT 4
#define MAP_SHARED_BIT 1
#define ZEROS UINT64_MAX          /* a piece that is a hole */

/* A run of one write's bytes, decoded once: stored bytes at data_offset in
 * `data`, or a hole (zeros).  Reading them again through the frame's
 * message would spend its traversal budget page after page. */
struct piece {
    uint64_t addr, last;          /* first and last byte */
    uint64_t data_offset;         /* or ZEROS */
};

struct page {
    uint64_t base;
    uint64_t used;                /* when last read (the memory's clock); 0: empty */
    uint8_t bytes[PAGE_BYTES];
    uint8_t known[PAGE_BYTES / 8];
};

/* The initial exec's memory as its frame's writes leave it. */
struct memory {
    struct rr_state *state;
    GArray *pieces;               /* struct piece, in the order rr applies them */
    struct page *pages;           /* PAGE_SLOTS */
    uint64_t clock, fills, copied;
    int unreadable;               /* bytes that could not be read from `data` */
    int over_budget;              /* LIMIT_RR_ENVIRON_PAGES or _COPY_BYTES reached */
};

/* Why environ is null: `reported` reasons are damage or a limit (/errors);
 * the others are what the trace is (docs/formats/rr.md). */
struct outcome {
    const char *why;
    int reported;
};

static int fail(struct outcome *o, const char *why, int reported)
{
    o->why = why;
    o->reported = reported;
    return -1;
}

/* ---- the frame's writes ---- */

static void add_piece(struct memory *mem, uint64_t addr, uint64_t size, uint64_t data_offset)
{
    if (!size)
        return;
    struct piece p = { addr, size - 1 > UINT64_MAX - addr ? UINT64_MAX : addr + (size - 1), data_offset };
    g_array_append_val(mem->pieces, p);
}

/* A write as pieces, its holes read as rr reads them (in order, each inside
 * the write); -1 where they are not. */
static int add_write(struct memory *mem, const struct rr_mem_write *w, uint64_t data_offset)
{
    uint64_t pos = 0;
    for (uint32_t h = 0; h < w->holes.count; h++) {
        struct capnp_struct hole;
        if (capnp_list_struct(&w->holes, h, &hole) < 0)
            return -1;
        uint64_t start = capnp_u64(&hole, 0), size = capnp_u64(&hole, 8);
        if (start < pos || start > w->size)
            return -1;
        size = MIN(size, w->size - start);
        add_piece(mem, w->addr + pos, start - pos, data_offset);
        data_offset += start - pos;
        add_piece(mem, w->addr + start, size, ZEROS);
        pos = start + size;
    }
    add_piece(mem, w->addr + pos, w->size - pos, data_offset);
    return 0;
}

static int collect_writes(struct memory *mem, const struct rr_frame *f, struct outcome *o)
{
    uint64_t offset = f->data_offset, holes = 0;
    guint applied = 0;
    for (uint32_t i = 0; i < f->mem_writes.count; i++) {
        struct rr_mem_write w;
        if (rr_mem_write_at(f, i, &w) < 0)
            return fail(o, "a memory write of the exec frame does not decode", 1);
        uint64_t stored = rr_mem_write_stored(&w);
        if (w.addr && w.size) {   /* rr applies no other */
            if (w.tid != f->tid)
                return fail(o, "a memory write of the exec frame is for another task (rr's replay has none)", 0);
            holes += w.holes.count;
            if (++applied > LIMIT_RR_ENVIRON_WRITES || holes > LIMIT_RR_ENVIRON_HOLES)
                return fail(o, "the exec frame has more memory writes or holes than LIMIT_RR_ENVIRON_WRITES "
                            "or LIMIT_RR_ENVIRON_HOLES", 1);
            if (add_write(mem, &w, offset) < 0)
                return fail(o, "a memory write of the exec frame has holes out of order", 1);
        }
        offset += stored;
    }
    return 0;
}

static int fill_page(struct memory *mem, struct page *p, uint64_t base)
{
    if (++mem->fills > LIMIT_RR_ENVIRON_PAGES) {
        mem->over_budget = 1;
        return -1;
    }
    p->base = base;
    memset(p->known, 0, sizeof p->known);
    uint64_t page_last = base + (PAGE_BYTES - 1);
    for (guint i = 0; i < mem->pieces->len; i++) {
        const struct piece *e = &g_array_index(mem->pieces, struct piece, i);
        if (e->addr > page_last || e->last < base)
            continue;
        uint64_t a = MAX(e->addr, base), last = MIN(e->last, page_last);
        size_t len = (size_t)(last - a) + 1;
        uint8_t *to = p->bytes + (a - base);
        if (e->data_offset == ZEROS) {
            memset(to, 0, len);
        } else {
            mem->copied += len;
            if (mem->copied > LIMIT_RR_ENVIRON_COPY_BYTES) {
                mem->over_budget = 1;
                return -1;
            }
            if (!mem->state->data || stream_read_exact(mem->state->data, e->data_offset + (a - e->addr), to, len) != 0) {
                mem->unreadable = 1;
                continue;
            }
        }
        for (uint64_t at = a - base; at <= last - base; at++)
            p->known[at / 8] |= (uint8_t)(1u << (at % 8));
    }
    return 0;
}

static int read_byte(struct memory *mem, uint64_t addr, uint8_t *out)
{
    uint64_t base = addr & ~(uint64_t)(PAGE_BYTES - 1);
    struct page *p = NULL, *oldest = &mem->pages[0];
    for (unsigned i = 0; i < PAGE_SLOTS && !p; i++) {
        if (mem->pages[i].used && mem->pages[i].base == base)
            p = &mem->pages[i];
        if (mem->pages[i].used < oldest->used)
            oldest = &mem->pages[i];
    }
    if (!p) {
        p = oldest;
        p->used = 0;
        if (fill_page(mem, p, base) < 0)
            return -1;
    }
    p->used = ++mem->clock;
    unsigned at = (unsigned)(addr - base);
    if (!(p->known[at / 8] & (1u << (at % 8))))
        return -1;
    *out = p->bytes[at];
    return 0;
}

/* A little-endian word of `width` bytes; -1 where any byte is unknown. */
static int read_word(struct memory *mem, uint64_t addr, unsigned width, uint64_t *out)
{
    uint64_t value = 0;
    for (unsigned i = 0; i < width; i++) {
        uint8_t b;
        if (addr + i < addr || read_byte(mem, addr + i, &b) < 0)
            return -1;
        value |= (uint64_t)b << (8 * i);
    }
    *out = value;
    return 0;
}

/* ---- what rr's replay checks before it reads ---- */

static const struct rr_task *exec_event(const struct rr_state *state, int64_t time)
{
    /* read_task_trace_event: the first EXEC event not before the frame
     * must be at its time. */
    for (guint i = 0; i < state->tasks->len; i++) {
        const struct rr_task *t = &g_array_index(state->tasks, struct rr_task, i);
        if (t->kind == RR_TASK_EXEC && t->frame_time >= time)
            return t->frame_time == time ? t : NULL;
    }
    return NULL;
}

/* process_execve in rr's src/replay_syscall.cc: the exec's mappings, rr's
 * own two skipped, need an executable one, the [stack] first, and nothing
 * MAP_SHARED among those it restores (all but the last). */
static int check_exec_records(const struct rr_state *state, int64_t time, struct outcome *o)
{
    const struct rr_task *exec = exec_event(state, time);
    if (!exec)
        return fail(o, "no exec task event at the exec's time", 0);
    uint64_t locals = RR_PAGE_ADDR + (state->header.native_arch == RR_ARCH_AARCH64 ? 0x10000u : 0x1000u);
    guint first, count, kept = 0;
    rr_data_mmaps_at(state, time, &first, &count);
    const struct rr_mmap *stack = NULL;
    int has_exe = 0, shared = 0;
    for (guint i = first; i < first + count; i++) {
        const struct rr_mmap *m = &g_array_index(state->mmaps, struct rr_mmap, i);
        if (m->start == RR_PAGE_ADDR || m->start == locals)
            continue;
        if (kept++ == 0)
            stack = m;
        if (exec->exe_base ? m->start == exec->exe_base
                           : (m->prot & PROT_EXEC_BIT) && m->fsname[0] && m->fsname[0] != '[')
            has_exe = 1;
        shared += (m->flags & MAP_SHARED_BIT) != 0;
    }
    if (!has_exe)
        return fail(o, "no executable mapping among the exec's mmaps", 0);
    if (strncmp(stack->fsname, "[stack", 6) != 0)
        return fail(o, "the exec's first mapping is not its [stack]", 0);
    const struct rr_mmap *last = &g_array_index(state->mmaps, struct rr_mmap, first + count - 1);
    if (shared > ((last->flags & MAP_SHARED_BIT) != 0))
        return fail(o, "a MAP_SHARED mapping among the exec's mmaps", 0);
    return 0;
}

/* ---- rendering ---- */

/* rr's json_escape: bytes below 32 as \u00xx, backslash and quote escaped,
 * everything else as it is. */
static void append_escaped(GString *out, uint8_t c)
{
    if (c < 32)
        g_string_append_printf(out, "\\u%04x", c);
    else if (c == '\\' || c == '"')
        g_string_append_c(out, '\\'), g_string_append_c(out, (char)c);
    else
        g_string_append_c(out, (char)c);
}

static int append_string(struct memory *mem, uint64_t addr, GString *out, struct outcome *o)
{
    for (;; addr++) {
        uint8_t c;
        if (addr == 0 || read_byte(mem, addr, &c) < 0)   /* 0: wrapped */
            return fail(o, "an environment string runs out of the exec's recorded memory", 0);
        if (!c)
            return 0;
        append_escaped(out, c);
        if (out->len > LIMIT_RR_ENVIRON_BYTES)
            return fail(o, "the environment is larger than LIMIT_RR_ENVIRON_BYTES", 1);
    }
}

/* read_env_arch: words of the frame's arch; remote_ptr arithmetic is 64-bit
 * (an x86 argc + 1 wraps at 32 bits, the address does not). */
static int render(struct memory *mem, const struct rr_exec_registers *regs, GString *out, struct outcome *o)
{
    unsigned width = regs->word_bytes;
    uint64_t argc, word, at = regs->sp;
    if (read_word(mem, at, width, &argc) < 0)
        return fail(o, "argc at the stack pointer is not in the exec's recorded memory", 0);
    at += width == 4 ? (uint64_t)(uint32_t)(argc + 1) * 4 : (argc + 1) * 8;
    if (read_word(mem, at, width, &word) < 0)
        return fail(o, "argv's end is not in the exec's recorded memory", 0);
    if (word != 0)
        return fail(o, "argv does not end with NULL where argc says", 0);
    at += width;
    g_string_append(out, "  \"environ\":[");
    for (uint64_t i = 0;; i++, at += width) {
        if (read_word(mem, at, width, &word) < 0)
            return fail(o, "envp runs out of the exec's recorded memory before its NULL", 0);
        if (!word)
            break;
        g_string_append(out, i ? ",\n    \"" : "\n    \"");
        if (append_string(mem, word, out, o) < 0)
            return -1;
        g_string_append_c(out, '"');
        if (out->len > LIMIT_RR_ENVIRON_BYTES)   /* empty strings too */
            return fail(o, "the environment is larger than LIMIT_RR_ENVIRON_BYTES", 1);
    }
    g_string_append(out, "\n  ]\n");
    return 0;
}

static int environ_of_exec(struct rr_state *state, const struct rr_frame *f, GString *out, struct outcome *o)
{
    struct rr_exec_registers regs;
    if (!rr_frame_is_exec_exit(f))   /* a saved index pointing elsewhere */
        return fail(o, "the initial exec's frame is not an exec", 1);
    if (rr_exec_registers(f, &regs) < 0)
        return fail(o, "the exec frame's registers are not rr's for its arch", 0);
    if (!f->extra_size)   /* ReplayTask::post_exec_syscall asserts them */
        return fail(o, "the exec frame has no extra registers", 0);
    if (check_exec_records(state, (int64_t)f->time, o) < 0)
        return -1;
    struct memory mem = { .state = state };
    mem.pieces = g_array_new(FALSE, FALSE, sizeof(struct piece));
    mem.pages = g_new0(struct page, PAGE_SLOTS);
    int rc = collect_writes(&mem, f, o);
    if (rc == 0)
        rc = render(&mem, &regs, out, o);
    if (mem.over_budget)
        rc = fail(o, "reading it takes more than LIMIT_RR_ENVIRON_PAGES pages or LIMIT_RR_ENVIRON_COPY_BYTES", 1);
    else if (mem.unreadable && (rc == 0 || !o->reported))
        rc = fail(o, "the exec frame's memory is unreadable in the data stream", 1);
    g_free(mem.pages);
    g_array_unref(mem.pieces);
    return rc;
}

void rr_environ_append(struct rr_state *state, GString *json)
{
    struct outcome o = { "no exec in the trace", 0 };
    GString *member = g_string_new(NULL);
    int rc = -1;
    if (state->initial_exec) {
        struct rr_frame f;
        const char *why = NULL;
        if (rr_frame_load(state, state->initial_exec - 1, &f, &why) == 0)
            rc = environ_of_exec(state, &f, member, &o);
        else
            fail(&o, why ? why : "the exec frame does not decode", 1);
        rr_frame_release(&f);
    }
    if (rc == 0) {
        g_string_append_len(json, member->str, (gssize)member->len);
    } else {
        g_string_append(json, "  \"environ\":null\n");
        if (o.reported)
            trace_error(state->trace, "events", 0, "rr-traceinfo.json: \"environ\" is null: %s (frame %" G_GUINT64_FORMAT ")",
                        o.why, state->initial_exec);
    }
    g_string_free(member, TRUE);
}
