#!/usr/bin/env python3
"""calls/<n>.json names the module of every backtrace frame: the first
mmap of the log's MMAP table (in log order) that holds the address, and
the offset in it.  Logs written from scratch:
- overlapping, nested, adjacent, empty and inverted mmaps, each frame's
  module and offset as written out below;
- 40,000 mmaps and a backtrace of 200,000 frames: calls/1.json answers at
  once (a scan of the table per frame took 8 * 10^9 steps) and names the
  right module for every frame.
Usage: frame_modules.py"""
import json
import os
import struct
import sys

SOURCE_ROOT = os.environ.get("TRACEFS_SOURCE_ROOT", ".")
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "sprtrace"))
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests"))
from generated_trace import SECONDS, report, tracefs, work_folder, write  # noqa: E402
from make_names import packet, string  # noqa: E402


MMAPS = [(0x1000, 0x3000, "/a"), (0x2000, 0x4000, "/b"), (0x1800, 0x1900, "/c"), (0x5000, 0x5000, "/d"),
         (0x6000, 0x5000, "/e"), (0x3000, 0x3800, "/f")]
FRAMES = {0x0fff: None, 0x1000: ("/a", 0), 0x1850: ("/a", 0x850), 0x2fff: ("/a", 0x1fff),
          0x3000: ("/b", 0x1000), 0x3900: ("/b", 0x1900), 0x4000: None, 0x5000: None, 0x5800: None,
          0x7000: None}


def log(mmaps, frames):
    body = bytes([2, 0, 6]) + b"x86_64" + bytes([0, 8])
    body += b"\0" * (-(2 + len(body)) % 4)
    parts = [bytes([0xF0, len(body)]) + body,
             packet(b"PINF", struct.pack("<IIII", 4242, 1700000000, 0, 10) + string(b"/bin/h")),
             packet(b"RESR", struct.pack("<II", 1, 0) + string(b"memory") + string(b"bytes"))]
    parts += [packet(b"MMAP", struct.pack("<QQ", start, end) + string(path.encode())) for start, end, path in mmaps]
    name = string(b"malloc")
    parts.append(b"CALL" + struct.pack("<IIIII", 16 + len(name) + 12, 1, 0, 1, 2) + name + struct.pack("<iQ", 16, 0x5000))
    parts.append(packet(b"BTRC", struct.pack("<I", len(frames)) + b"".join(struct.pack("<Q", f) for f in frames)))
    return b"".join(parts)


def backtrace(work, name, mmaps, frames):
    """Each frame's (address, (module, offset) or None), or None when
    calls/1.json does not answer."""
    out = tracefs("cat", write(os.path.join(work, name), log(mmaps, frames)), "calls/1.json")
    if out is None:
        return None
    return [(int(f["address"], 16), (f["module"], int(f["offset"], 16)) if "module" in f else None)
            for f in json.loads(out)["backtrace"]]


def main():
    failures = []
    with work_folder() as work:
        got = backtrace(work, "shapes.rtrace", MMAPS, list(FRAMES))
        if got is None:
            failures.append(f"mmap shapes: no answer in {SECONDS} s")
        for address, module in got or []:
            if FRAMES.get(address, "?") != module:
                failures.append(f"frame {address:#x}: {module}, want {FRAMES.get(address)}")
        # Page i holds mmap i in its first half; odd frames fall in the second.
        count = 40000
        mmaps = [(0x10000000 + i * 0x1000, 0x10000800 + i * 0x1000, f"/l{i}") for i in range(count)]
        frames = [0x10000000 + (k % count) * 0x1000 + (0x10 if k % 2 == 0 else 0x900) for k in range(200000)]
        got = backtrace(work, "many.rtrace", mmaps, frames)
        if got is None:
            failures.append(f"40,000 mmaps, 200,000 frames: no answer in {SECONDS} s")
            got = []
        wrong = [a for k, (a, m) in enumerate(got) if m != ((f"/l{k % count}", 0x10) if k % 2 == 0 else None)]
        if len(got) != len(frames) or wrong:
            failures.append(f"40,000 mmaps: {len(got)} frames, {len(wrong)} with the wrong module")
    return report(failures, f"{len(failures)} failure(s)")


if __name__ == "__main__":
    sys.exit(main())
