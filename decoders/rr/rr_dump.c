/* `rr dump` text for one frame, byte for byte as rr 5.6.0 prints it
 * (DumpCommand.cc, TraceFrame.cc, Registers.cc, ExtraRegisters.cc). */
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "rr.h"
#include "text.h"

static const char *const event_names[RR_EV_COUNT] = {
    "INSTRUCTION_TRAP", "PATCH_SYSCALL", "SYSCALLBUF_ABORT_COMMIT", "SYSCALLBUF_RESET", "SCHED",
    "GROW_MAP", "SIGNAL", "SIGNAL_DELIVERY", "SIGNAL_HANDLER", "EXIT", "SYSCALLBUF_FLUSH",
    "SYSCALL", "PATCH_SYSCALL", "PATCH_SYSCALL", "PATCH_SYSCALL",
};

static const char *const state_names[] = { "ENTERING_SYSCALL_PTRACE", "ENTERING_SYSCALL", "EXITING_SYSCALL" };

/* glibc's %p. */
static void append_pointer(GString *out, uint64_t value)
{
    if (value == 0) {
        text_append_cstring(out, "(nil)");
        return;
    }
    text_append(out, "0x", 2);
    text_append_hex(out, value);
}

static int32_t signal_number(const struct rr_frame *f)
{
    return f->siginfo_size >= 4 ? (int32_t)load_le32(f->siginfo) : 0;
}

void rr_dump_event_name(const struct rr_frame *f, GString *out)
{
    text_append_cstring(out, event_names[f->event]);
    if (f->event == RR_EV_SYSCALL) {
        text_append(out, ": ", 2);
        rr_syscall_name(out, f->sys_arch, f->sys_number);
    } else if (f->event == RR_EV_SIGNAL || f->event == RR_EV_SIGNAL_DELIVERY ||
               f->event == RR_EV_SIGNAL_HANDLER) {
        g_string_append(out, ": ");
        rr_signal_name(out, signal_number(f));
        g_string_append(out, f->deterministic ? "(det)" : "(async)");
    }
}

static void append_header_line(const struct rr_frame *f, GString *out)
{
    text_append_cstring(out, "  real_time:");
    text_fixed_number(out, f->monotonic_sec, 6);
    text_append_cstring(out, " global_time:");
    text_append_u64(out, f->time);
    text_append_cstring(out, ", event:`");
    rr_dump_event_name(f, out);
    text_append_cstring(out, "' ");
    if (f->event == RR_EV_SYSCALL) {
        text_append_cstring(out, "(state:");
        text_append_cstring(out, f->sys_state < 3 ? state_names[f->sys_state] : "???");
        text_append_cstring(out, ") ");
    }
    text_append_cstring(out, "tid:");
    text_append_i64(out, f->tid);
    text_append_cstring(out, ", ticks:");
    text_append_i64(out, f->ticks);
    g_string_append_c(out, '\n');
}

/* Register value i of a raw user_regs_struct of `width` bytes per slot. */
static uint64_t reg(const struct rr_frame *f, unsigned i, unsigned width)
{
    if ((uint64_t)(i + 1) * width > f->regs_size)
        return 0;
    return width == 8 ? load_le64(f->regs + (size_t)i * 8) : load_le32(f->regs + (size_t)i * 4);
}

/* The name is padded to 8 bytes (with its length beside it) so that
 * put_register copies it with one fixed-size store: strlen and a memcpy
 * call per register were a third of the registers line. */
struct reg_name { char name[9]; uint8_t length; uint8_t slot; uint8_t low32; };

#define REG(name, slot, low32) { name, sizeof name - 1, slot, low32 }

static const struct reg_name x8664_regs[] = {
    REG("rax", 10, 0), REG("rbx", 5, 0), REG("rcx", 11, 0), REG("rdx", 12, 0), REG("rsi", 13, 0),
    REG("rdi", 14, 0), REG("rbp", 4, 0), REG("rsp", 19, 0), REG("r8", 9, 0), REG("r9", 8, 0),
    REG("r10", 7, 0), REG("r11", 6, 0), REG("r12", 3, 0), REG("r13", 2, 0), REG("r14", 1, 0),
    REG("r15", 0, 0), REG("rip", 16, 0), REG("eflags", 18, 1), REG("cs", 17, 1), REG("ss", 20, 1),
    REG("ds", 23, 1), REG("es", 24, 1), REG("fs", 25, 1), REG("gs", 26, 1), REG("orig_rax", 15, 0),
    REG("fs_base", 21, 0), REG("gs_base", 22, 0),
};

static const struct reg_name x86_regs[] = {
    REG("eax", 6, 0), REG("ecx", 1, 0), REG("edx", 2, 0), REG("ebx", 0, 0), REG("esp", 15, 0),
    REG("ebp", 5, 0), REG("esi", 3, 0), REG("edi", 4, 0), REG("eip", 12, 0), REG("eflags", 14, 0),
    REG("xcs", 13, 0), REG("xss", 16, 0), REG("xds", 7, 0), REG("xes", 8, 0), REG("xfs", 9, 0),
    REG("xgs", 10, 0), REG("orig_eax", 11, 0),
};

#undef REG

static const char hex_digits[] = "0123456789abcdef";

/* A little-endian byte string of at most 32 bytes (a ymm register) as one
 * hex number, leading zeros stripped, written at p; returns the end. */
static char *put_le_hex(char *p, const uint8_t *bytes, size_t len)
{
    g_assert(len <= 32);
    size_t top = len;
    while (top > 0 && bytes[top - 1] == 0)
        top--;
    *p++ = '0';
    *p++ = 'x';
    if (top == 0) {
        *p++ = '0';
        return p;
    }
    if (bytes[top - 1] >> 4)
        *p++ = hex_digits[bytes[top - 1] >> 4];
    *p++ = hex_digits[bytes[top - 1] & 15];
    for (size_t i = top - 1; i > 0; i--) {
        *p++ = hex_digits[bytes[i - 1] >> 4];
        *p++ = hex_digits[bytes[i - 1] & 15];
    }
    return p;
}

/* Hex digits of a number (at least one): how many `%lx` prints. */
static unsigned hex_digit_count(uint64_t value)
{
    return value ? (unsigned)(67 - __builtin_clzll(value)) / 4 : 1;
}

/* The 8 hex digits of x as 8 ASCII bytes, the last digit in the lowest
 * byte's place: each nibble spread to a byte, then '0' or 'a' - 10 added to
 * all 8 at once (a nibble above 9 carries into bit 4 when 6 is added). */
static inline uint64_t hex_ascii8(uint32_t x)
{
    uint64_t y = x;
    y = (y | y << 16) & UINT64_C(0x0000ffff0000ffff);
    y = (y | y << 8) & UINT64_C(0x00ff00ff00ff00ff);
    y = (y | y << 4) & UINT64_C(0x0f0f0f0f0f0f0f0f);   /* byte i: nibble i */
    uint64_t letters = ((y + UINT64_C(0x0606060606060606)) >> 4) & UINT64_C(0x0101010101010101);
    return y + UINT64_C(0x3030303030303030) + letters * 0x27;
}

/* The last `count` (1..8) hex digits of x at p, most significant first, in
 * one 8-byte store (zeros after them); returns their end. */
static inline char *put_hex_digits(char *p, uint32_t x, unsigned count)
{
    uint64_t text = GUINT64_SWAP_LE_BE(hex_ascii8(x)) >> (8 * (8 - count));
    text = GUINT64_TO_LE(text);
    memcpy(p, &text, sizeof text);
    return p + count;
}

/* "name:0x<hex>" at p; returns the end.  Writes up to 8 bytes past the end
 * (whole-word stores): the caller's buffer has that slack. */
static inline char *put_register(char *p, const struct reg_name *name, uint64_t value)
{
    memcpy(p, name->name, 8);
    p += name->length;
    memcpy(p, ":0x", 3);
    p += 3;
    unsigned count = hex_digit_count(value);
    if (count > 8) {
        p = put_hex_digits(p, (uint32_t)(value >> 32), count - 8);
        count = 8;
    }
    return put_hex_digits(p, (uint32_t)value, count);
}

static void extra_bytes(const struct rr_frame *f, size_t at, size_t len, uint8_t *out)
{
    memset(out, 0, len);
    if (at < f->extra_size)
        memcpy(out, f->extra + at, MIN(len, f->extra_size - at));
}

/* " st0:0x.. ... ymm15:0x.." at p (at most 8 x 27 + 16 x 73 bytes); returns the end. */
static char *put_x86_extra(char *p, const struct rr_frame *f, unsigned ymm_count)
{
    uint8_t bv_bytes[8];
    extra_bytes(f, 512, 8, bv_bytes);
    uint64_t xstate_bv = f->extra_size > 512 ? load_le64(bv_bytes) : 3;
    for (unsigned i = 0; i < 8; i++) {
        uint8_t st[10];
        extra_bytes(f, 32 + 16 * i, 10, st);
        memcpy(p, " st", 3);
        p[3] = (char)('0' + i);
        p[4] = ':';
        p = put_le_hex(p + 5, st, sizeof st);
    }
    for (unsigned i = 0; i < ymm_count; i++) {
        uint8_t ymm[32] = { 0 };
        if (xstate_bv & 2)
            extra_bytes(f, 160 + 16 * i, 16, ymm);
        if (xstate_bv & 4)
            extra_bytes(f, 576 + 16 * i, 16, ymm + 16);
        memcpy(p, " ymm", 4);
        p += 4;
        if (i >= 10)
            *p++ = '1';
        *p++ = (char)('0' + i % 10);
        *p++ = ':';
        p = put_le_hex(p, ymm, sizeof ymm);
    }
    return p;
}

static void append_aarch64(const struct rr_frame *f, GString *out)
{
    for (unsigned i = 0; i < 31; i++)
        g_string_append_printf(out, "%sx[%u]:0x%" G_GINT64_MODIFIER "x", i ? " " : "", i, reg(f, i, 8));
    g_string_append_printf(out, " sp:0x%" G_GINT64_MODIFIER "x pc:0x%" G_GINT64_MODIFIER "x pstate:0x%x",
                           reg(f, 31, 8), reg(f, 32, 8), (uint32_t)reg(f, 33, 8));
    if (!f->extra)
        return;
    for (unsigned i = 0; i < 32; i++) {
        uint8_t v[16];
        char text[2 + 2 * sizeof v];
        extra_bytes(f, 16 * i, 16, v);
        g_string_append_printf(out, " v%u:", i);
        text_append(out, text, (size_t)(put_le_hex(text, v, sizeof v) - text));
    }
    uint8_t word[4];
    extra_bytes(f, 512, 4, word);
    g_string_append_printf(out, " fpsr:0x%x", load_le32(word));
    extra_bytes(f, 516, 4, word);
    g_string_append_printf(out, " fpcr:0x%x", load_le32(word));
}

/* The register table of an x86 (4-byte slots) or x86-64 (8-byte) frame. */
static const struct reg_name *x86_table(const struct rr_frame *f, size_t *count, unsigned *width)
{
    gboolean x86 = f->arch == RR_ARCH_X86;
    *count = x86 ? G_N_ELEMENTS(x86_regs) : G_N_ELEMENTS(x8664_regs);
    *width = x86 ? 4 : 8;
    return x86 ? x86_regs : x8664_regs;
}

uint64_t rr_x86_register(const struct rr_frame *f, const char *name)
{
    size_t count;
    unsigned width;
    const struct reg_name *names = x86_table(f, &count, &width);
    for (size_t i = 0; i < count; i++)
        if (strcmp(names[i].name, name) == 0)
            return reg(f, names[i].slot, width);
    return 0;
}

/* What put_register may write past a register's end. */
#define REGISTER_SLACK 8
/* The most register slots a line reads (x86-64's user_regs_struct). */
#define REGISTER_SLOTS 27

void rr_dump_registers(const struct rr_frame *f, GString *out)
{
    if (f->arch == RR_ARCH_AARCH64) {
        append_aarch64(f, out);
        g_string_append_c(out, '\n');
        return;
    }
    size_t count;
    unsigned width;
    const struct reg_name *names = x86_table(f, &count, &width);
    /* One append for the whole line: 27 registers and 24 vector ones per
     * frame, appended piece by piece, were a fifth of rendering /events. */
    char line[27 * 28 + 8 * 27 + 16 * 73 + 2 + REGISTER_SLACK];
    char *p = line;
    /* The slots read as reg() reads them (a slot not wholly in the blob is
     * 0), copied once so that each is one unchecked load. */
    uint8_t slots[REGISTER_SLOTS * 8] = { 0 };
    size_t have = MIN(f->regs_size, sizeof slots);
    if (have >= width)
        memcpy(slots, f->regs, have - have % width);
    for (size_t i = 0; i < count; i++) {
        uint64_t value = width == 8 ? load_le64(slots + names[i].slot * 8) : load_le32(slots + names[i].slot * 4);
        if (names[i].low32)
            value &= 0xffffffffu;
        if (i)
            *p++ = ' ';
        p = put_register(p, &names[i], value);
    }
    if (f->extra)
        p = put_x86_extra(p, f, f->arch == RR_ARCH_X86 ? 8 : 16);
    *p++ = '\n';
    text_append(out, line, (size_t)(p - line));
}

static void append_syscallbuf(const struct rr_state *state, const struct rr_frame *f, unsigned flags, GString *out)
{
    struct rr_mem_write first;
    if (f->event != RR_EV_SYSCALLBUF_FLUSH || f->mem_writes.count == 0 || rr_mem_write_at(f, 0, &first) < 0)
        return;
    GByteArray *image = rr_data_write_bytes(state, f, 0, 1u << 24);
    uint64_t hdr = state->header.syscallbuf_hdr_size;
    if (image && image->len >= hdr && hdr >= 4) {
        uint64_t records_end = MIN(hdr + (uint64_t)load_le32(image->data), (uint64_t)image->len);
        uint64_t at = hdr;
        while (at + 16 <= records_end) {
            const uint8_t *r = image->data + at;
            uint32_t size = load_le32(r + 12);
            g_string_append(out, "  { syscall:'");
            rr_syscall_name(out, f->arch, load_le16(r + 8));
            g_string_append_printf(out, "', ret:0x%" G_GINT64_MODIFIER "x, size:0x%x", load_le64(r), size);
            if (r[10] & 1)
                g_string_append(out, ", desched:1");
            if (r[10] & 2)
                g_string_append(out, ", replay_assist:1");
            g_string_append(out, " }\n");
            if (size < 16)
                break;
            at += ((uint64_t)size + 7) & ~(uint64_t)7;
        }
    }
    if (image)
        g_byte_array_unref(image);
    if (!(flags & RR_DUMP_MMAPS))
        return;
    for (size_t at = 0; at + 24 <= f->mprotect_size; at += 24) {
        const uint8_t *m = f->mprotect + at;
        int32_t prot = (int32_t)load_le32(m + 16);
        g_string_append(out, "  { start:'");
        append_pointer(out, load_le64(m));
        g_string_append_printf(out, "', size:'%" G_GINT64_MODIFIER "x', prot:%c%c%c }\n", load_le64(m + 8),
                               prot & 1 ? 'r' : '-', prot & 2 ? 'w' : '-', prot & 4 ? 'x' : '-');
    }
}

static void append_task_event(const struct rr_state *state, const struct rr_frame *f, GString *out)
{
    const struct rr_task *t = rr_data_task_at(state, (int64_t)f->time);
    if (!t)
        return;
    switch (t->kind) {
    case RR_TASK_CLONE:
        g_string_append_printf(out, "  TraceTaskEvent::CLONE tid=%d parent=%d clone_flags=0x%x\n",
                               t->tid, t->parent_tid, (uint32_t)t->clone_flags);
        break;
    case RR_TASK_EXEC:
        g_string_append_printf(out, "  TraceTaskEvent::EXEC tid=%d file=%s\n", t->tid, t->file_name);
        break;
    case RR_TASK_EXIT:
        g_string_append_printf(out, "  TraceTaskEvent::EXIT tid=%d status=%d\n", t->tid, t->exit_status);
        break;
    default:
        g_string_append_printf(out, "  TraceTaskEvent::DETACH tid=%d\n", t->tid);
        break;
    }
}

static void append_mmaps(const struct rr_state *state, const struct rr_frame *f, GString *out)
{
    guint first, count;
    rr_data_mmaps_at(state, (int64_t)f->time, &first, &count);
    for (guint i = first; i < first + count; i++) {
        const struct rr_mmap *m = &g_array_index(state->mmaps, struct rr_mmap, i);
        g_string_append_printf(out, "  { map_file:\"%s\", addr:", m->source == 0 ? "<ZERO>" : m->fsname);
        append_pointer(out, m->start);
        g_string_append(out, ", length:");
        append_pointer(out, m->end - m->start);
        g_string_append_printf(out, ", prot_flags:\"%c%c%c%c\", file_offset:0x%" G_GINT64_MODIFIER "x, "
                               "device:%" G_GINT64_FORMAT ", inode:%" G_GINT64_FORMAT ", data_file:\"",
                               m->prot & 1 ? 'r' : '-', m->prot & 2 ? 'w' : '-', m->prot & 4 ? 'x' : '-',
                               m->flags & 1 ? 's' : 'p', (uint64_t)m->file_offset,
                               (int64_t)m->device, (int64_t)m->inode);
        if (m->source == 2 && m->backing_file) {
            if (m->backing_file[0] != '/')
                g_string_append_printf(out, "%s/", state->dir_real_path);
            g_string_append(out, m->backing_file);
        }
        g_string_append_printf(out, "\", data_offset:0x%" G_GINT64_MODIFIER "x, file_size:0x%" G_GINT64_MODIFIER "x }\n",
                               m->source == 2 ? (uint64_t)m->file_offset : 0, (uint64_t)m->stat_size);
    }
}

static void append_mem_writes(const struct rr_frame *f, unsigned flags, GString *out)
{
    uint32_t start = (flags & RR_DUMP_SYSCALLBUF) && f->event == RR_EV_SYSCALLBUF_FLUSH ? 1 : 0;
    for (uint32_t i = start; i < f->mem_writes.count; i++) {
        struct rr_mem_write w;
        if (rr_mem_write_at(f, i, &w) < 0)
            return;
        text_append_cstring(out, "  { tid:");
        text_append_i64(out, w.tid);
        text_append_cstring(out, ", addr:");
        append_pointer(out, w.addr);
        text_append_cstring(out, ", length:");
        append_pointer(out, w.size);
        if (w.holes.count) {
            g_string_append(out, ", holes:[");
            for (uint32_t h = 0; h < w.holes.count; h++) {
                struct capnp_struct hole;
                if (capnp_list_struct(&w.holes, h, &hole) < 0)
                    break;
                uint64_t offset = capnp_u64(&hole, 0);
                append_pointer(out, offset);
                g_string_append_c(out, '-');
                append_pointer(out, offset + capnp_u64(&hole, 8));
            }
            g_string_append_c(out, ']');
        }
        g_string_append(out, " }\n");
    }
}

uint16_t rr_socket_family(const uint8_t *addr, size_t size)
{
    return size >= 2 ? load_le16(addr) : 0;
}

int rr_socket_address(const uint8_t *addr, size_t size, char *text)
{
    uint16_t family = rr_socket_family(addr, size);
    if (family == AF_INET && size >= 8 && inet_ntop(AF_INET, addr + 4, text, INET6_ADDRSTRLEN))
        return AF_INET;
    if (family == AF_INET6 && size >= 24 && inet_ntop(AF_INET6, addr + 8, text, INET6_ADDRSTRLEN))
        return AF_INET6;
    return 0;
}

/* The port is printed as `rr dump` 5.6.0 prints it: rr passes sin_port, a
 * network-order field, to printf as a host (little-endian) integer, so port
 * 443 prints as 47873.  frames/<n>.json gives the real port (rr_json.c). */
static void append_socket_address(const uint8_t *addr, size_t size, GString *out)
{
    char text[INET6_ADDRSTRLEN];
    if (rr_socket_address(addr, size, text))
        g_string_append_printf(out, "%s:%u", text, load_le16(addr + 2));
    else
        g_string_append(out, "<Unknown socket family>");
}

void rr_dump_frame(const struct rr_state *state, const struct rr_frame *f, unsigned flags, GString *out)
{
    text_append(out, "{\n", 2);
    append_header_line(f, out);
    if (rr_event_has_registers(f->event))
        rr_dump_registers(f, out);
    if (flags & RR_DUMP_SYSCALLBUF)
        append_syscallbuf(state, f, flags, out);
    if (flags & RR_DUMP_TASKS)
        append_task_event(state, f, out);
    if (flags & RR_DUMP_MMAPS)
        append_mmaps(state, f, out);
    if (flags & RR_DUMP_MEMORY)
        append_mem_writes(f, flags, out);
    if ((flags & RR_DUMP_SOCKETS) && f->event == RR_EV_SYSCALL && f->sys_extra == 4) {
        g_string_append(out, "  Local socket address '");
        append_socket_address(f->local_addr, f->local_addr_size, out);
        g_string_append(out, "' Remote socket address '");
        append_socket_address(f->remote_addr, f->remote_addr_size, out);
        g_string_append(out, "'\n");
    }
    text_append(out, "}\n", 2);
}
