/* Syscall and signal names as rr 5.6.0 prints them (tables generated at
 * build time from rr_names.txt by gen_names.py). */
#ifndef TRACEFS_RR_NAMES_H
#define TRACEFS_RR_NAMES_H

#include <glib.h>
#include <stdint.h>

extern const char *const rr_syscalls_x8664[];
extern const unsigned rr_syscalls_x8664_count;
extern const char *const rr_syscalls_x86[];
extern const unsigned rr_syscalls_x86_count;
extern const char *const rr_syscalls_generic[];
extern const unsigned rr_syscalls_generic_count;
extern const char *const rr_signal_names[];
extern const unsigned rr_signal_names_count;

/* rr's Arch enum on the wire. */
enum rr_arch { RR_ARCH_X86 = 0, RR_ARCH_X8664 = 1, RR_ARCH_AARCH64 = 2 };

/* "x86", "x86_64", "aarch64" or "unknown". */
const char *rr_arch_name(uint16_t arch);
/* "write", "rrcall_init_preload" or "<unknown-syscall-N>".  rr 5.6.0 names
 * its private syscalls by their fixed numbers (1000..), whatever the
 * header's rrcallBase says. */
void rr_syscall_name(GString *out, int arch, int32_t number);
/* "SIGUSR1", "SIGRT34", "signal(0)" or "signal(N)". */
void rr_signal_name(GString *out, int32_t signo);

#endif
