/* Name lookups over the generated tables, with rr's fallbacks. */
#include "rr_names.h"

static const char *table_name(const char *const *table, unsigned count, int64_t number)
{
    if (number < 0 || (uint64_t)number >= count)
        return NULL;
    return table[number];
}

void rr_syscall_name(GString *out, int arch, int32_t number, int32_t rrcall_base)
{
    const char *name = NULL;
    int64_t private_index = (int64_t)number - rrcall_base;
    if (private_index >= 0)
        name = table_name(rr_private_syscalls, rr_private_syscalls_count, private_index);
    if (!name && arch == RR_ARCH_X8664)
        name = table_name(rr_syscalls_x8664, rr_syscalls_x8664_count, number);
    else if (!name && arch == RR_ARCH_X86)
        name = table_name(rr_syscalls_x86, rr_syscalls_x86_count, number);
    else if (!name && arch == RR_ARCH_AARCH64)
        name = table_name(rr_syscalls_generic, rr_syscalls_generic_count, number);
    if (name)
        g_string_append(out, name);
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
