#!/usr/bin/env python3
"""What the tree holds for a thread or a signature counts against the
index's table budget (4 MiB + 1 % of the file), so that a small trace
naming thousands of them stays within the memory rule (cache_size + 2 %
of the file + 16 MiB), its first ones shown and an /errors line where the
budget ends:
- FXT: 16,000 events each on a new thread of a new process (512 KB): 67 MB
  at cache_size=16M when only the tables were counted;
- apitrace: 20,000 function signatures, one call each (352 KB): 50 MB.
Usage: tree_budget.py"""
import os
import shutil
import subprocess
import sys
import tempfile

SOURCE_ROOT = os.environ.get("TRACEFS_SOURCE_ROOT", ".")
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests"))
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "fxt"))
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "apitrace"))
from apitrace_stream import string, uint  # noqa: E402
from fxt_writer import Writer  # noqa: E402
from memory_rule import TRACEFS, cat_peak  # noqa: E402


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


def main():
    work = tempfile.mkdtemp()
    failures = []
    try:
        for name, data, first in [("threads.fxt", fxt_threads(16000), "threads/1"),
                                  ("functions.trace", apitrace_functions(20000), "functions/f0")]:
            trace = os.path.join(work, name)
            with open(trace, "wb") as f:
                f.write(data)
            peak_kib, rule_kib, over = cat_peak(trace, ["info.json", "errors", "summary.csv"], "noindex")
            print(f"{name}: {len(data)} bytes, peak {peak_kib} KiB, rule {rule_kib} KiB")
            failures += [f"{name}: {over}"] if over else []
            run = lambda *args: subprocess.run([TRACEFS, *args], capture_output=True, check=True).stdout.decode()
            if "reach their budget" not in run("cat", "-o", "noindex", trace, "errors"):
                failures.append(f"{name}: no /errors line where the budget ends")
            if os.path.basename(first) not in run("ls", "-o", "noindex", trace, os.path.dirname(first)).split():
                failures.append(f"{name}: {first} not shown")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
