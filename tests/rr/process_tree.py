#!/usr/bin/env python3
"""tasks/ps (`rr ps`) and tasks/tree of rr traces written from scratch by
tests/rr/rr_writer.py:
- a process history with threads, a pid in its own namespace, an exec
  after the fork, exits by code and by signal, a detach and a reused pid:
  both files exactly as written out below;
- 40 generations of two processes each reusing their parent's pid (80
  clone events): each row once in the tree, under the process alive when
  it was made (a parent printed once per process of its pid doubled the
  tree at every level: 2^40 lines, and the mount never answered);
- a chain of 100 forks: every row shown, indented at most 64 levels;
- 19,000 processes of one parent: ps answers at once (a pass over the
  task events per process took their count squared).
Usage: process_tree.py RR_BLOCKS"""
import os
import sys

SOURCE_ROOT = os.environ.get("TRACEFS_SOURCE_ROOT", ".")
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "rr"))
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests"))
from generated_trace import report, tracefs, work_folder  # noqa: E402
from rr_writer import ARCH_X8664, CLONE_THREAD, ENTERING, Trace, entering_regs  # noqa: E402

EDGE = os.path.join(SOURCE_ROOT, "tests", "data", "rr", "edge-0")

HISTORY_PS = """PID\tPPID\tEXIT\tCMD
100\t--\t0\tsh -c make
101\t100\tdetach\tmake all
103 (7)\t101\t0\tcc -c a.c
104\t100\t-9\t(forked without exec)
103\t100\t1\tls
"""
HISTORY_TREE = """100 exit=0 sh -c make
  101 exit=detach make all
    103 (7) exit=0 cc -c a.c
  104 exit=-9 (forked without exec)
  103 exit=1 ls
"""


def first_exec(t, tid, argv):
    time = t.syscall(tid, ARCH_X8664, ARCH_X8664, 59, ENTERING, entering_regs(59))
    t.exec_event(time, tid, "/bin/" + argv[0], argv, 0x555555554000)
    return time


def history(t):
    time = first_exec(t, 100, ["sh", "-c", "make"])
    t.clone_event(time, 101, 100)
    t.clone_event(time, 102, 101, CLONE_THREAD)
    t.exec_event(time, 101, "/usr/bin/make", ["make", "all"], 0x555555554000)
    t.clone_event(time, 103, 102, own_ns_tid=7)        # forked by a thread of 101
    t.exec_event(time, 103, "/usr/bin/cc", ["cc", "-c", "a.c"], 0x555555554000)
    t.exit_event(time, 103, 0)
    t.exit_event(time, 102, 0)                          # 101 still has a thread: not its end
    t.clone_event(time, 104, 100)
    t.exit_event(time, 104, 9)                          # killed by signal 9
    t.detach_event(time, 101)
    t.clone_event(time, 103, 100)                       # the pid again, a new process
    t.exec_event(time, 103, "/bin/ls", ["ls"], 0x555555554000)
    t.exit_event(time, 103, 1 << 8)                     # exit(1)
    t.exit_event(time, 100, 0)


def reused_pids(t):
    time = first_exec(t, 1, ["init"])
    for generation in range(40):
        for _ in range(2):
            t.clone_event(time, 2 + generation, 1 + generation)


def chain(t):
    time = first_exec(t, 1, ["init"])
    for tid in range(2, 102):
        t.clone_event(time, tid, tid - 1)


def many_children(t):
    time = first_exec(t, 1, ["init"])
    for tid in range(2, 19002):
        t.clone_event(time, tid, 1)


def check(work, blocks, name, build):
    t = Trace()
    build(t)
    trace = os.path.join(work, name)
    t.write(trace, open(os.path.join(EDGE, "version"), "rb").read(), blocks)
    return tracefs("cat", trace, "tasks/ps"), tracefs("cat", trace, "tasks/tree")


def main():
    blocks = sys.argv[1]
    failures = []
    with work_folder() as work:
        ps, tree = check(work, blocks, "history", history)
        if ps != HISTORY_PS or tree != HISTORY_TREE:
            failures.append(f"history: ps\n{ps}tree\n{tree}")
        ps, tree = check(work, blocks, "reused", reused_pids)
        lines = (tree or "").splitlines()
        if ps is None or len(ps.splitlines()) != 82 or len(lines) != 81:
            failures.append(f"reused pids: {None if ps is None else len(ps.splitlines())} ps lines, "
                            f"{len(lines)} tree lines (want 82, 81)")
        elif lines[-1] != " " * 80 + "41 exit=none (forked without exec)":
            failures.append(f"reused pids: last tree line {lines[-1]!r}")
        ps, tree = check(work, blocks, "chain", chain)
        lines = (tree or "").splitlines()
        if len(lines) != 101 or lines[64] != " " * 128 + "65 exit=none (forked without exec)" or \
                lines[100] != " " * 128 + "101 exit=none (forked without exec)":
            failures.append(f"chain: {len(lines)} tree lines, line 65 {lines[64:65]}, last {lines[-1:]}")
        ps, tree = check(work, blocks, "many", many_children)
        if ps is None or len(ps.splitlines()) != 19002 or len((tree or "").splitlines()) != 19001:
            failures.append(f"19,000 children: {None if ps is None else len(ps.splitlines())} ps lines")
    return report(failures, f"{4 - len(failures)} of 4 process histories as expected")


if __name__ == "__main__":
    sys.exit(main())
