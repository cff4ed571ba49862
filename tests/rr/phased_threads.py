#!/usr/bin/env python3
"""A thread's threads/<tid>/events jumps over the stretches of the trace
(between /events' cuts) that hold none of its frames, once /events has
been sized (it reads every frame) or from the saved index.  An rr trace
written from scratch by tests/rr/rr_writer.py: a leader and five threads
whose syscall frames come in bursts, one thread after another, each
thread's two bursts in the two halves of the trace (60,000 frames, /events
cut into many segments): a thread's first and last frame span most of the
trace, and most of that span is other threads' frames.  Each thread's events
must be exactly its frames' blocks of /events, mounted with threads=1 and
threads=2, on a first mount and on a remount from the saved index (which
must be used); every block of /events belongs to one thread's file.
Usage: phased_threads.py RR_BLOCKS"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SOURCE_ROOT = os.environ.get("TRACEFS_SOURCE_ROOT", ".")
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "rr"))
from rr_writer import ARCH_X8664, CLONE_THREAD, ENTERING, EXITING, Trace, entering_regs  # noqa: E402

TRACEFS = os.environ.get("TRACEFS", "build/tracefs")
EDGE = os.path.join(SOURCE_ROOT, "tests", "data", "rr", "edge-0")
LEADER, THREADS, FRAMES_EACH = 7000, 6, 10000


def make(path, blocks):
    """Each thread's frames in two bursts, one in each half of the trace,
    so that its first and last frame span most of it."""
    t = Trace()
    regs = entering_regs(39)
    for half in range(2):
        for n in range(THREADS):
            tid = LEADER + n
            for i in range(FRAMES_EACH // 4):
                time_ = t.syscall(tid, ARCH_X8664, ARCH_X8664, 39, ENTERING, regs)
                t.syscall(tid, ARCH_X8664, ARCH_X8664, 39, EXITING, regs)
                if n and not half and i == 0:
                    t.clone_event(time_, tid, LEADER, CLONE_THREAD)
    t.write(path, open(os.path.join(EDGE, "version"), "rb").read(), blocks)


def blocks_by_tid(text):
    """The frames of rr dump's text, grouped by their tid (in order)."""
    out = {}
    for block in re.findall(r"^\{\n.*?^\}\n", text, re.S | re.M):
        tid = int(re.search(r" tid:(\d+),", block).group(1))
        out.setdefault(tid, []).append(block)
    return {tid: "".join(blocks) for tid, blocks in out.items()}


def check_mount(trace, options, label, failures):
    mnt = tempfile.mkdtemp(prefix="tracefs-phased-")
    subprocess.run([TRACEFS, "-o", "auto_unmount," + options, trace, mnt], check=True)
    try:
        stats = os.path.join(mnt, ".tracefs", "stats")
        for _ in range(600):
            if "sizing_events done\n" in open(stats).read():
                break
            time.sleep(0.1)
        saved = re.search(r"^saved_index (.*)$", open(stats).read(), re.M).group(1)
        if (saved == "used") != ("remount" in label):
            failures.append(f"{label}: saved_index {saved}")
        expected = blocks_by_tid(open(os.path.join(mnt, "events")).read())
        tids = sorted(int(t) for t in os.listdir(os.path.join(mnt, "threads")))
        if sorted(expected) != tids or len(tids) != THREADS:
            failures.append(f"{label}: threads {tids}, /events has {sorted(expected)}")
        for tid in reversed(tids):
            got = open(os.path.join(mnt, "threads", str(tid), "events")).read()
            if got != expected.get(tid):
                failures.append(f"{label}: threads/{tid}/events ({len(got)} bytes) is not its frames of /events "
                                f"({len(expected.get(tid, ''))} bytes)")
        return {tid: expected[tid] for tid in tids if tid in expected}
    finally:
        subprocess.run(["fusermount3", "-u", mnt], check=False)
        for _ in range(600):
            if subprocess.run(["pgrep", "-f", "--", mnt], capture_output=True).returncode != 0:
                break
            time.sleep(0.1)
        os.rmdir(mnt)


def main():
    work = tempfile.mkdtemp()
    try:
        trace = os.path.join(work, "trace")
        make(trace, sys.argv[1])
        failures = []
        first = check_mount(trace, f"threads=1,index_dir={work}/index-1", "threads=1", failures)
        for label, options in [("threads=2", f"threads=2,index_dir={work}/index-2"),
                               ("threads=2 remount", f"threads=2,index_dir={work}/index-2"),
                               ("threads=1 remount", f"threads=1,index_dir={work}/index-1")]:
            if check_mount(trace, options, label, failures) != first:
                failures.append(f"{label}: /events differs from threads=1")
        print(f"{THREADS} threads of {FRAMES_EACH} frames each, in bursts one after another")
        for failure in failures:
            print("FAIL", failure)
        return 1 if failures else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
