#!/usr/bin/env python3
"""Exits of a function on no open frame, under a deep stack: a basic-mode
log (10.5 MB) whose thread enters 65,536 calls (functions 1000..2499 in
turn, the stack's whole depth) and exits none of them, then exits function
7 262,144 times, then exits function 1000 once.  An exit looks for its
function from the top of the stack down, so each exit of 7 would look at
all 65,536 frames: the index pass and every view that pairs calls would
cost their product (tens of seconds for info.json).  The stack's frames
are counted per function, so each such exit costs a few compares and
the log answers in about a second (a few under the sanitizers).
The answers are checked too: the last exit closes the innermost frame of
function 1000 (at depth 64,500) and cuts the 1,035 frames above it; every
other frame and exit is unmatched.  Peak memory stays within the memory
rule.
Usage: unmatched_exits.py"""
import json
import os
import struct
import subprocess
import sys

SOURCE_ROOT = os.environ.get("TRACEFS_SOURCE_ROOT", ".")
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests"))
from generated_trace import TRACEFS, report, work_folder, write  # noqa: E402
from memory_rule import cat_peak  # noqa: E402

DEPTH = 65536                   # LIMIT_XRAY_STACK_DEPTH
UNMATCHED = 262144
FUNCTIONS = 1500
CLOSED_DEPTH = (DEPTH - 1) // FUNCTIONS * FUNCTIONS   # the innermost frame of function 1000
# Far above what info.json and the calls take here (under a second; a few
# under the sanitizers), far below what a scan of the stack per exit takes
# (34 s and more for info.json).  events.jsonl is 63 MB of text: rendering
# it takes its own time (10 s under the sanitizers).
SECONDS = 30
RENDER_SECONDS = 120


def record(kind, func_id, tsc):
    """A basic-mode function record of thread 1, process 1."""
    return struct.pack("<HBBiQII8x", 0, 0, kind, func_id, tsc, 1, 1)


def hostile_log():
    header = open(os.path.join(SOURCE_ROOT, "tests", "data", "xray", "fib.basic-emu.xray"), "rb").read()[:32]
    enters = (record(0, 1000 + n % FUNCTIONS, 1000 + 10 * n) for n in range(DEPTH))
    tsc = 1000 + 10 * DEPTH
    exits = (record(1, 7, tsc + 10 * n) for n in range(UNMATCHED))
    last = record(1, 1000, tsc + 10 * UNMATCHED)
    return header + b"".join(enters) + b"".join(exits) + last


def cat(trace, view, seconds=SECONDS):
    return subprocess.run([TRACEFS, "cat", "-o", "noindex", trace, view], check=True, capture_output=True,
                          timeout=seconds).stdout.decode()


def check(trace):
    """The failures, as messages."""
    info = json.loads(cat(trace, "info.json"))["xray"]
    if info["calls"] != 1 or info["unmatched_frames"] != UNMATCHED + DEPTH - 1:
        return [f"info.json: {info['calls']} calls, {info['unmatched_frames']} unmatched frames"]
    failures = []
    calls = cat(trace, "threads/1/calls").splitlines()
    if len(calls) != 1 or calls[0].split()[2] != str(CLOSED_DEPTH) or not calls[0].endswith("fn=1000"):
        failures.append(f"threads/1/calls: {calls[:3]}")
    events = cat(trace, "events.jsonl", RENDER_SECONDS)   # counted, not parsed
    ends = [line for line in events.splitlines() if '"kind":"end"' in line]
    if events.count("\n") != DEPTH + UNMATCHED + 1 or len(ends) != 1 or json.loads(ends[0])["name"] != "1000":
        failures.append(f"events.jsonl: {events.count(chr(10))} events, ends {ends[:2]}")
    _, _, over = cat_peak(trace, ["info.json"], "noindex")
    if over:
        failures.append(f"info.json: {over}")
    return failures


def main():
    with work_folder() as work:
        trace = write(os.path.join(work, "unmatched.xray"), hostile_log())
        print(f"unmatched.xray: {os.path.getsize(trace)} bytes")
        try:
            failures = check(trace)
        except subprocess.TimeoutExpired as e:
            failures = [f"{e.cmd[-1]}: no answer in {e.timeout:g} s"]
    return report(failures, f"{len(failures)} failure(s)")


if __name__ == "__main__":
    sys.exit(main())
