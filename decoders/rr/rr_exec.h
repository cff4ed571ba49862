/* Exec frames as rr's replay sees them, and the environment `rr traceinfo`
 * reads at the first one. */
#ifndef TRACEFS_RR_EXEC_H
#define TRACEFS_RR_EXEC_H

#include "rr.h"

/* What rr reads from a frame's registers, in the frame's own arch. */
struct rr_exec_registers {
    unsigned word_bytes;          /* 4 on x86, 8 on x86-64 and aarch64 */
    uint64_t sp;
    int64_t result;               /* syscall result, signed */
    int64_t original_syscallno;
};

/* 0, or -1 when the frame's arch is unknown or its registers are shorter
 * than rr's for that arch. */
int rr_exec_registers(const struct rr_frame *f, struct rr_exec_registers *out);
/* Whether rr's replay processes this frame as a successful exec (an exiting
 * execve/execveat, not failed, not vetoed); a frame whose registers rr
 * could not judge counts too. */
int rr_frame_is_exec_exit(const struct rr_frame *f);
/* Appends `  "environ":[...]\n` (rr traceinfo's member, read from the
 * initial exec's recorded memory) or `  "environ":null\n`. */
void rr_environ_append(struct rr_state *state, GString *json);

#endif
