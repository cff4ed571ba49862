#!/usr/bin/env python3
"""1,500 exec task events whose file names and arguments are control bytes
(an rr trace of 160 KB written from scratch by tests/rr/rr_writer.py): the
tasks table keeps what fits its budget, each name cut at
LIMIT_RR_NAME_BYTES, and tasks/events.json (every control byte escaped
as \\u00XX, six bytes each) and tasks/list are rendered when read: reading
them stays within the memory rule at cache_size=16M (texts built at
mount took 50 MiB against a rule of 32), events.json parses with one
object per kept task, and list has one line per task.
Usage: control_byte_tasks.py RR_BLOCKS"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SOURCE_ROOT = os.environ.get("TRACEFS_SOURCE_ROOT", ".")
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "rr"))
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests"))
from memory_rule import cat_peak, trace_bytes  # noqa: E402
from rr_writer import ARCH_X8664, ENTERING, Trace, entering_regs  # noqa: E402

TRACEFS = os.environ.get("TRACEFS", "build/tracefs")
EDGE = os.path.join(SOURCE_ROOT, "tests", "data", "rr", "edge-0")
TASKS = 1500


def make(path, blocks):
    t = Trace()
    for i in range(TASKS):
        time = t.syscall(4000 + i, ARCH_X8664, ARCH_X8664, 59, ENTERING, entering_regs(59))
        t.exec_event(time, 4000 + i, "\x01" * 4000, ["\x01" * 60000], 0x555555554000)
    t.write(path, open(os.path.join(EDGE, "version"), "rb").read(), blocks)


def run(*args):
    return subprocess.run([TRACEFS, *args], check=True, capture_output=True).stdout


def main():
    work = tempfile.mkdtemp()
    failures = []
    try:
        trace = os.path.join(work, "trace")
        make(trace, sys.argv[1])
        index = f"index_dir={work}/index"
        tasks = json.loads(run("cat", "-o", index, trace, "tasks/events.json"))
        lines = run("cat", "-o", index, trace, "tasks/list").decode().splitlines()
        errors = run("cat", "-o", index, trace, "errors").decode()
        if not 0 < len(tasks) < TASKS or len(lines) != len(tasks):
            failures.append(f"{len(tasks)} tasks in events.json, {len(lines)} lines in list (of {TASKS})")
        if "the mmaps and tasks records reach their budget" not in errors:
            failures.append("no /errors line for the tasks' budget")
        if tasks and (tasks[0]["kind"] != "exec" or not tasks[0]["cmd_line"][0].startswith("\x01" * 4096)):
            failures.append(f"first task: {str(tasks[0])[:100]}")
        peak_kib, rule_kib, over = cat_peak(trace, ["tasks/events.json", "tasks/list", "tasks/ps", "tasks/tree"],
                                            "noindex")
        print(f"{trace_bytes(trace)} byte trace, {len(tasks)} of {TASKS} tasks kept: peak {peak_kib} KiB, "
              f"rule {rule_kib} KiB")
        failures += [over] if over else []
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
