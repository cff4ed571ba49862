#!/usr/bin/env python3
"""What the tree holds for a thread or a signature counts against the
index's table budget (4 MiB + 1 % of the file), so that a small trace
naming thousands of them stays within the memory rule (cache_size + 2 %
of the file + 16 MiB), its first ones shown and an /errors line where the
budget ends:
- FXT: 16,000 events each on a new thread of a new process (512 KB): 67 MB
  at cache_size=16M when only the tables were counted;
- apitrace: 20,000 function signatures, one call each (336 KB): 50 MB;
- apitrace: 30,000 threads, one call each (297 KB): 40 MB;
- rr: 30,000 threads, one syscall frame each (190 KB): 52 MB.
Usage: tree_budget.py RR_BLOCKS"""
import os
import sys

SOURCE_ROOT = os.environ.get("TRACEFS_SOURCE_ROOT", ".")
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests"))
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "fxt"))
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "apitrace"))
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "rr"))
from apitrace_stream import string, uint  # noqa: E402
from fxt_writer import Writer  # noqa: E402
from generated_trace import report, tracefs, work_folder, write  # noqa: E402
from memory_rule import cat_peak, trace_bytes  # noqa: E402
from rr_writer import ARCH_X8664, ENTERING, Trace, entering_regs  # noqa: E402

EDGE = os.path.join(SOURCE_ROOT, "tests", "data", "rr", "edge-0")


def fxt_threads(count):
    w = Writer(False)
    w.magic()
    w.provider_info(5, "p")
    w.init(1000000)
    w.string(1, "cat")
    w.string(2, "ev")
    for k in range(1, count + 1):
        w.event(0, k, (k, k), 1, 2)
    return bytes(w.out)


def apitrace_functions(count):
    b = bytearray(b"\x06\x06" + string("process.name") + string("/bin/h") + b"\x00")
    for k in range(count):
        b += b"\x00" + uint(0) + uint(k) + string(f"f{k}") + uint(0) + b"\x00"
        b += b"\x01" + uint(k) + b"\x00"
    return bytes(b)


def apitrace_threads(count):
    b = bytearray(b"\x06\x06" + string("process.name") + string("/bin/h") + b"\x00")
    b += b"\x00" + uint(0) + uint(0) + string("glFoo") + uint(0) + b"\x00" + b"\x01" + uint(0) + b"\x00"
    for thread in range(1, count):
        b += b"\x00" + uint(thread) + uint(0) + b"\x00" + b"\x01" + uint(thread) + b"\x00"
    return bytes(b)


def rr_threads(path, count, blocks):
    t = Trace()
    for tid in range(1000, 1000 + count):
        t.syscall(tid, ARCH_X8664, ARCH_X8664, 39, ENTERING, entering_regs(39))
    t.write(path, open(os.path.join(EDGE, "version"), "rb").read(), blocks)


def main():
    failures = []
    with work_folder() as work:
        for name, make, first in [("threads.fxt", lambda p: write(p, fxt_threads(16000)), "threads/1"),
                                  ("functions.trace", lambda p: write(p, apitrace_functions(20000)), "functions/f0"),
                                  ("threads.trace", lambda p: write(p, apitrace_threads(30000)), "threads/0"),
                                  ("threads-rr", lambda p: rr_threads(p, 30000, sys.argv[1]), "threads/1000")]:
            trace = os.path.join(work, name)
            make(trace)
            peak_kib, rule_kib, over = cat_peak(trace, ["info.json", "errors", "summary.csv"], "noindex")
            print(f"{name}: {trace_bytes(trace)} bytes, peak {peak_kib} KiB, rule {rule_kib} KiB")
            failures += [f"{name}: {over}"] if over else []
            errors = tracefs("cat", trace, "errors") or ""
            if not any(s in errors for s in ("reach their budget", "threads/ directory")):
                failures.append(f"{name}: no /errors line where the budget ends")
            if os.path.basename(first) not in (tracefs("ls", trace, os.path.dirname(first)) or "").split():
                failures.append(f"{name}: {first} not shown")
    return report(failures, f"{len(failures)} failure(s) in 4 traces")


if __name__ == "__main__":
    sys.exit(main())
