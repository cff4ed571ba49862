/* Name lookups over the generated tables, with rr 5.6.0's fallbacks
 * (syscallname_arch from its generate_syscalls.py, signal_name in
 * kernel_metadata.cc). */
#include "rr_names.h"
#include "text.h"

static const char *table_name(const char *const *table, unsigned count, int64_t number)
{
    if (number < 0 || (uint64_t)number >= count)
        return NULL;
    return table[number];
}

const char *rr_arch_name(uint16_t arch)
{
    static const char *const names[] = { "x86", "x86_64", "aarch64" };
    return arch < 3 ? names[arch] : "unknown";
}

void rr_syscall_name(GString *out, int arch, int32_t number)
{
    const char *name = NULL;
    if (arch == RR_ARCH_X8664)
        name = table_name(rr_syscalls_x8664, rr_syscalls_x8664_count, number);
    else if (arch == RR_ARCH_X86)
        name = table_name(rr_syscalls_x86, rr_syscalls_x86_count, number);
    else if (arch == RR_ARCH_AARCH64)
        name = table_name(rr_syscalls_generic, rr_syscalls_generic_count, number);
    if (name)
        text_append_cstring(out, name);
    else
        g_string_append_printf(out, "<unknown-syscall-%d>", number);
}

void rr_signal_name(GString *out, int32_t signo)
{
    const char *name = table_name(rr_signal_names, rr_signal_names_count, signo);
    if (name)
        g_string_append(out, name);
    else if (signo >= 32 && signo <= 64)
        g_string_append_printf(out, "SIGRT%d", signo);
    else
        g_string_append_printf(out, "signal(%d)", signo);
}
