/* frames/<n>.json: everything a frame holds, decoded and named. */
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "rr.h"
#include "text.h"

static const char *const state_names[] = { "entering_ptrace", "entering", "exiting" };
static const char *const disposition_names[] = { "fatal", "user_handler", "ignored" };

/* The dump's "name:0x.. name:0x.." line as a JSON object of strings. */
static void registers_json(const struct rr_frame *f, GString *out)
{
    GString *line = g_string_new(NULL);
    rr_dump_registers(f, line);
    g_strchomp(line->str);
    gchar **pairs = g_strsplit(line->str, " ", -1);
    g_string_append_c(out, '{');
    for (int i = 0; pairs[i]; i++) {
        char *colon = strchr(pairs[i], ':');
        if (!colon)
            continue;
        *colon = 0;
        g_string_append(out, i ? ", " : "");
        text_json_cstring(out, pairs[i]);
        g_string_append(out, ": ");
        text_json_cstring(out, colon + 1);
    }
    g_string_append_c(out, '}');
    g_strfreev(pairs);
    g_string_free(line, TRUE);
}

/* The real port: sin_port is in network order, so a big-endian load.  The
 * text (rr_dump.c) deliberately prints the little-endian reading instead,
 * because that is what `rr dump` 5.6.0 prints. */
static void socket_json(const uint8_t *addr, size_t size, GString *out)
{
    char text[INET6_ADDRSTRLEN];
    int family = rr_socket_address(addr, size, text);
    if (family) {
        g_string_append_printf(out, "{\"family\": \"%s\", \"address\": \"%s\", \"port\": %u}",
                               family == AF_INET ? "inet" : "inet6", text, load_be16(addr + 2));
        return;
    }
    g_string_append_printf(out, "{\"family\": %u, \"raw\": \"", rr_socket_family(addr, size));
    text_hex(out, addr ? addr : (const uint8_t *)"", size);
    g_string_append(out, "\"}");
}

static void syscall_json(const struct rr_frame *f, GString *out)
{
    g_string_append(out, ",\n  \"syscall\": {\"name\": ");
    GString *name = g_string_new(NULL);
    rr_syscall_name(name, f->sys_arch, f->sys_number);
    text_json_cstring(out, name->str);
    g_string_free(name, TRUE);
    g_string_append_printf(out, ", \"number\": %d, \"arch\": \"%s\", \"state\": \"%s\", \"failed_during_preparation\": %s",
                           f->sys_number, rr_arch_name(f->sys_arch), f->sys_state < 3 ? state_names[f->sys_state] : "unknown",
                           f->sys_failed ? "true" : "false");
    if (f->sys_extra == 1)
        g_string_append_printf(out, ", \"write_offset\": %" G_GINT64_FORMAT, f->write_offset);
    if (f->sys_extra == 2) {
        g_string_append(out, ", \"exec_fds_to_close\": [");
        for (uint32_t i = 0; i < f->extra_list.count; i++)
            g_string_append_printf(out, "%s%d", i ? ", " : "", (int32_t)capnp_list_u32(&f->extra_list, i));
        g_string_append_c(out, ']');
    }
    if (f->sys_extra == 3) {
        g_string_append(out, ", \"opened_fds\": [");
        for (uint32_t i = 0; i < f->extra_list.count; i++) {
            struct capnp_struct fd;
            const uint8_t *path;
            size_t size;
            if (capnp_list_struct(&f->extra_list, i, &fd) < 0 || capnp_get_data(&fd, 0, &path, &size) < 0)
                break;
            g_string_append_printf(out, "%s{\"fd\": %d, \"path\": ", i ? ", " : "", (int32_t)capnp_u32(&fd, 0));
            text_json_string(out, (const char *)(path ? path : (const uint8_t *)""), size && path[size - 1] == 0 ? size - 1 : size);
            g_string_append_printf(out, ", \"device\": %" G_GUINT64_FORMAT ", \"inode\": %" G_GUINT64_FORMAT "}",
                                   capnp_u64(&fd, 8), capnp_u64(&fd, 16));
        }
        g_string_append_c(out, ']');
    }
    if (f->sys_extra == 4) {
        g_string_append(out, ", \"local_address\": ");
        socket_json(f->local_addr, f->local_addr_size, out);
        g_string_append(out, ", \"remote_address\": ");
        socket_json(f->remote_addr, f->remote_addr_size, out);
    }
    g_string_append_c(out, '}');
}

static void signal_json(const struct rr_frame *f, GString *out)
{
    int32_t signo = f->siginfo_size >= 4 ? (int32_t)load_le32(f->siginfo) : 0;
    GString *name = g_string_new(NULL);
    rr_signal_name(name, signo);
    g_string_append_printf(out, ",\n  \"signal\": {\"number\": %d, \"name\": \"%s\", \"deterministic\": %s, "
                           "\"disposition\": \"%s\", \"siginfo_arch\": \"%s\"",
                           signo, name->str, f->deterministic ? "true" : "false",
                           f->disposition < 3 ? disposition_names[f->disposition] : "unknown", rr_arch_name(f->siginfo_arch));
    if (f->siginfo_size >= 12)
        g_string_append_printf(out, ", \"si_errno\": %d, \"si_code\": %d", (int32_t)load_le32(f->siginfo + 4),
                               (int32_t)load_le32(f->siginfo + 8));
    g_string_append(out, ", \"siginfo\": \"");
    text_hex(out, f->siginfo ? f->siginfo : (const uint8_t *)"", f->siginfo_size);
    g_string_append(out, "\"}");
    g_string_free(name, TRUE);
}

static void mem_writes_json(const struct rr_frame *f, GString *out)
{
    g_string_append(out, ",\n  \"mem_writes\": [");
    uint64_t data_offset = f->data_offset;
    for (uint32_t i = 0; i < f->mem_writes.count; i++) {
        struct rr_mem_write w;
        if (rr_mem_write_at(f, i, &w) < 0)
            break;
        uint64_t stored = rr_mem_write_stored(&w);
        g_string_append_printf(out, "%s\n    {\"tid\": %d, \"addr\": ", i ? "," : "", w.tid);
        text_json_hex(out, w.addr);
        g_string_append_printf(out, ", \"size\": %" G_GUINT64_FORMAT ", \"data_offset\": %" G_GUINT64_FORMAT
                               ", \"stored_bytes\": %" G_GUINT64_FORMAT ", \"holes\": [", w.size, data_offset, stored);
        for (uint32_t h = 0; h < w.holes.count; h++) {
            struct capnp_struct hole;
            if (capnp_list_struct(&w.holes, h, &hole) < 0)
                break;
            g_string_append_printf(out, "%s{\"offset\": %" G_GUINT64_FORMAT ", \"size\": %" G_GUINT64_FORMAT "}",
                                   h ? ", " : "", capnp_u64(&hole, 0), capnp_u64(&hole, 8));
        }
        g_string_append(out, "]}");
        data_offset += stored;
    }
    g_string_append(out, f->mem_writes.count ? "\n  ]" : "]");
}

static void mprotect_json(const struct rr_frame *f, GString *out)
{
    g_string_append(out, ",\n  \"mprotect_records\": [");
    for (size_t at = 0; at + 24 <= f->mprotect_size; at += 24) {
        g_string_append(out, at ? ", {\"start\": " : "{\"start\": ");
        text_json_hex(out, load_le64(f->mprotect + at));
        g_string_append_printf(out, ", \"size\": %" G_GUINT64_FORMAT ", \"prot\": %d}",
                               load_le64(f->mprotect + at + 8), (int32_t)load_le32(f->mprotect + at + 16));
    }
    g_string_append_c(out, ']');
}

void rr_frame_json(const struct rr_frame *f, GString *out)
{
    GString *event = g_string_new(NULL);
    rr_dump_event_name(f, event);
    g_string_append_printf(out, "{\n  \"global_time\": %" G_GUINT64_FORMAT ",\n  \"tid\": %d,\n  \"ticks\": %"
                           G_GINT64_FORMAT ",\n  \"real_time\": ", f->time, f->tid, f->ticks);
    text_json_double(out, f->monotonic_sec);
    g_string_append_printf(out, ",\n  \"arch\": \"%s\",\n  \"event\": ", rr_arch_name(f->arch));
    text_json_cstring(out, event->str);
    g_string_free(event, TRUE);
    if (f->event == RR_EV_SCHED)
        g_string_append_printf(out, ",\n  \"in_syscallbuf_syscall_hook\": \"0x%" G_GINT64_MODIFIER "x\"", f->in_syscallbuf_hook);
    if (f->event == RR_EV_SYSCALL)
        syscall_json(f, out);
    if (f->event == RR_EV_SIGNAL || f->event == RR_EV_SIGNAL_DELIVERY || f->event == RR_EV_SIGNAL_HANDLER)
        signal_json(f, out);
    if (f->event == RR_EV_SYSCALLBUF_FLUSH)
        mprotect_json(f, out);
    if (f->regs) {
        g_string_append(out, ",\n  \"registers\": ");
        registers_json(f, out);
        g_string_append_printf(out, ",\n  \"extra_registers_bytes\": %zu", f->extra_size);
    }
    mem_writes_json(f, out);
    g_string_append(out, "\n}\n");
}
