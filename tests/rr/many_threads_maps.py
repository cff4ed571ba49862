#!/usr/bin/env python3
"""A process of 2,000 threads and 2,000 mmaps (an rr trace written from
scratch by tests/rr/rr_writer.py: clone task events with CLONE_THREAD, one
syscall frame per thread, the mmaps at the leader's frames).  Every
thread's maps is its process's mmaps, which here are all of them: each
threads/<tid>/maps must equal /maps, and a walk that reads every one must
stay within the memory rule (cache_size + 2 % of the trace + 16 MiB) at
cache_size=16M: the maps are rendered from the mmaps table when read, not
kept as a text per thread (2,000 copies of 150 KB would be 300 MB).
Usage: many_threads_maps.py RR_BLOCKS"""
import os
import shutil
import subprocess
import sys
import tempfile

SOURCE_ROOT = os.environ.get("TRACEFS_SOURCE_ROOT", ".")
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "rr"))
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests"))
from memory_rule import cat_peak  # noqa: E402
from rr_writer import ARCH_X8664, CLONE_THREAD, ENTERING, Trace, entering_regs  # noqa: E402

TRACEFS = os.environ.get("TRACEFS", "build/tracefs")
EDGE = os.path.join(SOURCE_ROOT, "tests", "data", "rr", "edge-0")
LEADER, THREADS, MMAPS = 5000, 2000, 2000


def make(path, blocks):
    t = Trace()
    leader_times = [t.syscall(LEADER, ARCH_X8664, ARCH_X8664, 39, ENTERING, entering_regs(39)) for _ in range(MMAPS)]
    for i, time in enumerate(leader_times):
        t.mmap(time, 0x10000000 + i * 0x2000, 0x10001000 + i * 0x2000, f"/usr/lib/libmany-{i:05d}.so.1", 5, 2)
    for n in range(1, THREADS):
        time = t.syscall(LEADER + n, ARCH_X8664, ARCH_X8664, 39, ENTERING, entering_regs(39))
        t.clone_event(time, LEADER + n, LEADER, CLONE_THREAD)
    t.write(path, open(os.path.join(EDGE, "version"), "rb").read(), blocks)


def run(*args, **kwargs):
    return subprocess.run([TRACEFS, *args], check=True, capture_output=True, **kwargs).stdout


def main():
    blocks = sys.argv[1]
    work = tempfile.mkdtemp()
    try:
        trace = os.path.join(work, "trace")
        make(trace, blocks)
        index = f"index_dir={work}/index"
        threads = run("ls", "-o", index, trace, "threads").decode().split()
        maps = run("cat", "-o", index, trace, "maps")
        lines = maps.decode().splitlines()
        failures = []
        if len(threads) != THREADS or len(lines) != MMAPS:
            failures.append(f"{len(threads)} threads, {len(lines)} maps lines (want {THREADS}, {MMAPS})")
        for tid in (threads[0], threads[len(threads) // 2], threads[-1]):
            if run("cat", "-o", index, trace, f"threads/{tid}/maps") != maps:
                failures.append(f"threads/{tid}/maps differs from /maps")
        # Every thread's maps, read in one run: its peak against the rule.
        peak_kib, rule_kib, over = cat_peak(trace, [f"threads/{tid}/maps" for tid in threads], index)
        print(f"{THREADS} threads' maps of {len(maps)} bytes each: peak {peak_kib} KiB, rule {rule_kib} KiB")
        failures += [over] if over else []
        for failure in failures:
            print("FAIL", failure)
        return 1 if failures else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
