#!/usr/bin/env python3
"""threads/<tid>/spans gives each span begin its duration, from its end
further on: a trace of 32,000 nested begins, then 20,000 ends (12,000
begins never end), written from scratch.  Every line is checked against
the span it describes, and the file answers at once: a scan per begin to
its end took 32,000 scans of up to 52,000 records (tens of seconds); a scan
keeps the ends of the begins nested in what it passes.
Usage: nested_spans.py"""
import os
import sys

SOURCE_ROOT = os.environ.get("TRACEFS_SOURCE_ROOT", ".")
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "fxt"))
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests"))
from generated_trace import SECONDS, report, tracefs, work_folder, write  # noqa: E402
from fxt_writer import Writer  # noqa: E402

BEGINS, ENDS = 32000, 20000
TICK_NS = 1000  # 10^6 ticks per second


def trace():
    w = Writer(False)
    w.magic()
    w.provider_info(5, "p")
    w.init(1000000)
    w.string(1, "cat")
    w.string(2, "s")
    w.thread(1, 1, 2)
    for ts in range(1, BEGINS + 1):
        w.event(2, ts, 1, 1, 2)
    for ts in range(BEGINS + 1, BEGINS + ENDS + 1):
        w.event(3, ts, 1, 1, 2)
    return bytes(w.out)


def expected():
    """Begin i (0-based, at tick i + 1) is closed by end number BEGINS - 1 - i
    when that is below ENDS."""
    lines = []
    for i in range(BEGINS):
        end = BEGINS - 1 - i
        dur = str((BEGINS + 1 + end - (i + 1)) * TICK_NS) if end < ENDS else "-"
        lines.append(f"{(i + 1) * TICK_NS} {dur} {i} cat:s")
    return lines


def main():
    failures = []
    with work_folder() as work:
        spans = tracefs("cat", write(os.path.join(work, "nested.fxt"), trace()), "threads/2/spans")
        got, want = (spans or "").splitlines(), expected()
        if spans is None:
            failures.append(f"no answer in {SECONDS} s")
        elif got != want:
            wrong = next((k for k, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))
            failures.append(f"{len(got)} lines (want {len(want)}); line {wrong + 1}: "
                            f"{got[wrong] if wrong < len(got) else None!r}, want {want[wrong] if wrong < len(want) else None!r}")
    return report(failures, f"{BEGINS} nested begins, {ENDS} ends: {len(failures)} failure(s)")


if __name__ == "__main__":
    sys.exit(main())
