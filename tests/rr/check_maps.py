#!/usr/bin/env python3
"""/maps and /threads/<tid>/maps, checked against /mmaps/<i>.json: every
mmap of the trace is one line of /maps, in /proc/<pid>/maps' layout
("%08x-%08x rwxp %08x %02x:%02x %u" and the file name after eight
spaces), and each thread's maps is its process's mmaps, a subsequence of
/maps.  Traces: tests/data/rr, and the corpus's when ../shared is there.
Usage: check_maps.py"""
import json
import os
import subprocess
import sys

TRACEFS = os.environ.get("TRACEFS", "build/tracefs")
SOURCE = os.environ.get("TRACEFS_SOURCE_ROOT", ".")
CORPUS = os.environ.get("TRACEFS_CORPUS", os.path.join(SOURCE, "..", "shared", "corpus"))


def tracefs(*args):
    return subprocess.run([TRACEFS, *args], check=True, capture_output=True).stdout


def expected_line(m):
    start, end = int(m["start"], 16), int(m["end"], 16)
    perms = ("r" if m["prot"] & 1 else "-") + ("w" if m["prot"] & 2 else "-") + \
            ("x" if m["prot"] & 4 else "-") + ("s" if m["flags"] & 1 else "p")
    offset = m["file_offset"] & (2 ** 64 - 1)
    device = m["device"]
    line = "%08x-%08x %s %08x %02x:%02x %d" % (start, end, perms, offset, os.major(device),
                                               os.minor(device), m["inode"])
    if m["fsname"]:
        line += " " * 8 + m["fsname"]
    return line


def is_subsequence(part, whole):
    lines = iter(whole)
    return all(any(line == other for other in lines) for line in part)


def check(trace):
    count = len(tracefs("ls", trace, "mmaps").split())
    mmaps = []
    for first in range(0, count, 1000):
        paths = [f"mmaps/{i}.json" for i in range(first, min(first + 1000, count))]
        mmaps += [json.loads(line) for line in tracefs("cat", trace, *paths).decode().splitlines()]
    want = [expected_line(m) for m in mmaps]
    got = tracefs("cat", trace, "maps").decode().splitlines()
    problems = []
    if got != want:
        first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        problems.append(f"maps line {first}: {got[first:first + 1]} != {want[first:first + 1]} "
                        f"({len(got)} lines, {len(want)} mmaps)")
    threads = tracefs("ls", trace, "threads").decode().split()
    for tid in threads:
        lines = tracefs("cat", trace, f"threads/{tid}/maps").decode().splitlines()
        if not is_subsequence(lines, want):
            problems.append(f"threads/{tid}/maps is not a subsequence of the mmaps")
    return count, len(threads), problems


def main():
    traces = [os.path.join(SOURCE, "tests", "data", "rr", name)
              for name in sorted(os.listdir(os.path.join(SOURCE, "tests", "data", "rr")))]
    corpus = os.path.join(CORPUS, "rr", "traces")
    if os.path.isdir(corpus):
        traces += [os.path.join(corpus, name) for name in ("big-0", "medium-0", "mtdemo-0")
                   if os.path.isdir(os.path.join(corpus, name))]
    failed = 0
    lines = 0
    for trace in traces:
        if not os.path.isdir(trace):
            continue
        count, threads, problems = check(trace)
        lines += count
        for problem in problems:
            print(f"FAIL {trace}: {problem}")
        failed += bool(problems)
        print(f"{'FAIL' if problems else 'ok'} {trace}: {count} mmaps, {threads} threads")
    if lines == 0:
        print("FAIL no mmaps checked")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
