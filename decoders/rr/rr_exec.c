/* The exiting frames of exec syscalls, read as rr 5.6.0's replay reads them
 * (rep_process_syscall in src/replay_syscall.cc): the first one that rr
 * processes as a successful exec is where its replay has "done the initial
 * exec" and where `rr traceinfo` reads the environment. */
#include "rr.h"
#include "text.h"

/* rr's SECCOMP_MAGIC_SKIP_ORIGINAL_SYSCALLNO: a syscall rr vetoed. */
#define SECCOMP_SKIP (-2)

/* The registers rr records per arch (Registers::get_regs_for_trace): the
 * kernel's user_regs_struct, on aarch64 with rr's orig_x0 and orig_syscall. */
static const size_t regs_bytes[] = { [RR_ARCH_X86] = 68, [RR_ARCH_X8664] = 216, [RR_ARCH_AARCH64] = 288 };

static int is_exec_number(uint16_t arch, int32_t number)
{
    switch (arch) {
    case RR_ARCH_X8664: return number == 59 || number == 322;
    case RR_ARCH_X86: return number == 11 || number == 358;
    case RR_ARCH_AARCH64: return number == 221 || number == 281;
    default: return 0;
    }
}

int rr_exec_registers(const struct rr_frame *f, struct rr_exec_registers *out)
{
    const uint8_t *r = f->regs;
    if (f->arch >= G_N_ELEMENTS(regs_bytes) || !r || f->regs_size < regs_bytes[f->arch])
        return -1;
    switch (f->arch) {
    case RR_ARCH_X8664:
        *out = (struct rr_exec_registers){ .word_bytes = 8, .sp = rr_x86_register(f, "rsp"),
                                           .result = (int64_t)rr_x86_register(f, "rax"),
                                           .original_syscallno = (int64_t)rr_x86_register(f, "orig_rax") };
        return 0;
    case RR_ARCH_X86:
        *out = (struct rr_exec_registers){ .word_bytes = 4, .sp = rr_x86_register(f, "esp"),
                                           .result = (int32_t)rr_x86_register(f, "eax"),
                                           .original_syscallno = (int32_t)rr_x86_register(f, "orig_eax") };
        return 0;
    default:   /* RR_ARCH_AARCH64 */
        *out = (struct rr_exec_registers){ .word_bytes = 8, .sp = load_le64(r + 31 * 8),
                                           .result = (int64_t)load_le64(r),
                                           .original_syscallno = (int32_t)load_le32(r + 280) };
        return 0;
    }
}

/* rr judges the result with the registers converted to the syscall's arch
 * (with_converted_registers): between x86 and x86-64, eax is sign-extended,
 * orig_eax zero-extended, and both truncate the other way. */
static int convert(const struct rr_frame *f, struct rr_exec_registers *regs)
{
    if (f->arch == f->sys_arch)
        return 0;
    if (f->arch == RR_ARCH_X86 && f->sys_arch == RR_ARCH_X8664) {
        regs->original_syscallno = (uint32_t)regs->original_syscallno;
        return 0;
    }
    if (f->arch == RR_ARCH_X8664 && f->sys_arch == RR_ARCH_X86) {
        regs->result = (int32_t)(uint32_t)regs->result;
        regs->original_syscallno = (int32_t)(uint32_t)regs->original_syscallno;
        return 0;
    }
    return -1;
}

int rr_frame_is_exec_exit(const struct rr_frame *f)
{
    if (f->event != RR_EV_SYSCALL || f->sys_state != RR_SYSCALL_EXITING || !is_exec_number(f->sys_arch, f->sys_number))
        return 0;
    struct rr_exec_registers regs;
    /* Registers rr could not read as a failure or a veto: taken as the exec,
     * whose environment is then unknown (rr_environ.c). */
    if (rr_exec_registers(f, &regs) < 0 || convert(f, &regs) < 0)
        return 1;
    if (regs.original_syscallno == SECCOMP_SKIP)
        return 0;
    return !(regs.result > -4096 && regs.result < 0);
}
