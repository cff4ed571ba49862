#!/usr/bin/env python3
"""Keys a trace chooses so that they pile up: each trace below is a few
hundred KB to 2 MB, and `tracefs cat TRACE info.json` (the index pass and
the tree) must answer in seconds, not minutes:
- apitrace: 20,000 functions all named glFoo (functions/glFoo~2 ...
  glFoo~20000: each suffix was searched from ~2, D^2 lookups);
- apitrace: 20,000 function names of 16 "Ab"/"BA" blocks, which glib's
  string hash (djb2) maps to one value (the tree's names, the summary);
- apitrace: 20,000 signature ids k << 32, which g_int64_hash maps to one
  value (it keeps the low 32 bits);
- FXT: 64,000 events whose names collide in djb2 (the string pool, the
  summary rows);
- XRay: a recursion 32,000 calls deep (every call-stack node of one
  function under one hash);
- sp-rtrace: 40,000 allocations whose resource ids x * (2^32 + 1) the
  live-allocation table's old hash sent to 0.
Each took from 13 s to well over a minute with unkeyed hashes and takes
under a second with decoders/keyed_hash.c's.  The answers are checked too
(apitrace shows the functions its table budget pays for: the first ~1,900
of each trace here).
Usage: hostile_keys.py"""
import itertools
import os
import struct
import sys

SOURCE_ROOT = os.environ.get("TRACEFS_SOURCE_ROOT", ".")
for folder in ("apitrace", "fxt", "sprtrace", ""):
    sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", folder))
from generated_trace import SECONDS, report, tracefs, work_folder, write  # noqa: E402
from apitrace_stream import string as at_string, uint  # noqa: E402
from fxt_writer import Writer  # noqa: E402
from make_names import packet, string as sp_string  # noqa: E402


def colliding_names(count):
    return ("".join(p) for p in itertools.islice(itertools.product(("Ab", "BA"), repeat=16), count))


def apitrace(names, ids):
    """One call of each function (name, signature id)."""
    b = bytearray(b"\x06\x06" + at_string("process.name") + at_string("/bin/h") + b"\x00")
    for call, (name, ident) in enumerate(zip(names, ids)):
        b += b"\x00" + uint(0) + uint(ident) + at_string(name) + uint(0) + b"\x00"
        b += b"\x01" + uint(call) + b"\x00"
    return bytes(b)


def fxt_names(count):
    w = Writer(False)
    w.magic()
    w.provider_info(5, "p")
    w.init(1000000)
    w.string(1, "cat")
    w.thread(1, 1, 2)
    for ts, name in enumerate(colliding_names(count), 1):
        w.event(0, ts, 1, 1, name)
    return bytes(w.out)


def xray_recursion(depth):
    header = open(os.path.join(SOURCE_ROOT, "tests", "data", "xray", "fib.basic-emu.xray"), "rb").read()[:32]
    b = bytearray(header)
    for tsc, kind in enumerate([0] * depth + [1] * depth):
        b += struct.pack("<HBBiQII8x", 0, 0, kind, 7, 1000 + 10 * tsc, 1, 1)
    return bytes(b)


def sprtrace_allocations(count):
    body = bytes([2, 0, 6]) + b"x86_64" + bytes([0, 8])
    body += b"\0" * (-(2 + len(body)) % 4)
    parts = [bytes([0xF0, len(body)]) + body,
             packet(b"PINF", struct.pack("<IIII", 4242, 1700000000, 0, 10) + sp_string(b"/bin/h")),
             packet(b"RESR", struct.pack("<II", 1, 0) + sp_string(b"memory") + sp_string(b"bytes"))]
    name = sp_string(b"malloc")
    for x in range(1, count + 1):
        rid = x * ((1 << 32) + 1)
        parts.append(b"CALL" + struct.pack("<IIIII", 16 + len(name) + 12, 1, 0, x, 2) + name +
                     struct.pack("<iQ", 16, rid))
    return b"".join(parts)


CASES = [
    ("same-names.trace", lambda: apitrace(["glFoo"] * 20000, range(20000)), "functions", "glFoo~1000"),
    ("djb2-names.trace", lambda: apitrace(colliding_names(20000), range(20000)), "functions",
     "Ab" * 16),
    ("high-ids.trace", lambda: apitrace((f"f{k}" for k in range(20000)), (k << 32 for k in range(1, 20001))),
     "functions", "f999"),
    ("djb2-names.fxt", lambda: fxt_names(64000), "summary.csv", "Ab" * 16 + ",1,"),
    ("recursion.xray", lambda: xray_recursion(32000), "info.json", '"events"'),
    ("high-ids.rtrace", lambda: sprtrace_allocations(40000), "info.json", '"events"'),
]


def main():
    failures = []
    with work_folder() as work:
        for name, make, listing, expected in CASES:
            trace = write(os.path.join(work, name), make())
            shown = tracefs("cat", trace, "info.json") and \
                tracefs("ls" if listing == "functions" else "cat", trace, listing)
            if shown is None:
                failures.append(f"{name}: no answer in {SECONDS} s")
                continue
            if expected not in shown:
                failures.append(f"{name}: {expected!r} not in {listing}")
            print(f"{name}: {os.path.getsize(trace)} bytes, answered")
    return report(failures, f"{len(CASES) - len(failures)} of {len(CASES)} traces answered as expected")


if __name__ == "__main__":
    sys.exit(main())
