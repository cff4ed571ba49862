#!/usr/bin/env python3
"""An sp-rtrace log of 700 MMAP packets with 60,000-byte paths (42 MB):
the header tables keep what fits their budget (4 MiB + 1 % of the log,
their strings counted twice: the events' header holds them again),
/errors says where the rest was ignored, and `tracefs cat` of every file
they feed (maps, mmaps/<i>.json, events' header) stays within the memory
rule (cache_size + 2 % of the log + 16 MiB) at cache_size=16M.  A table
that kept every path held the log's size three times over (paths, maps,
one JSON text per mmap).
Usage: big_tables.py"""
import json
import os
import struct
import subprocess
import sys
import tempfile

SOURCE_ROOT = os.environ.get("TRACEFS_SOURCE_ROOT", ".")
TRACEFS = os.environ.get("TRACEFS", "build/tracefs")
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests"))
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "sprtrace"))
from memory_rule import cat_peak  # noqa: E402
from make_names import packet, string  # noqa: E402
MMAPS, PATH_BYTES = 700, 60000


def log_bytes():
    body = bytes([2, 0, 6]) + b"x86_64" + bytes([0, 8])
    body += b"\0" * (-(2 + len(body)) % 4)
    out = [bytes([0xF0, len(body)]) + body,
           packet(b"OCFG", string(b"/tmp/big-tables") + struct.pack("<I", 2)),
           packet(b"PINF", struct.pack("<IIII", 4242, 1700000000, 0, 10) + string(b"/usr/bin/app")),
           packet(b"MINF", struct.pack("<II", 0, 0x10000) + string(b"main")),
           packet(b"RESR", struct.pack("<II", 1, 0) + string(b"memory") + string(b"memory allocation in bytes"))]
    for i in range(MMAPS):
        path = f"/lib/{i:04d}-" + "x" * (PATH_BYTES - 10)
        out.append(packet(b"MMAP", struct.pack("<QQ", 0x10000000 + i * 0x1000, 0x10000800 + i * 0x1000) +
                          string(path.encode())))
    return b"".join(out)


def run(*args):
    return subprocess.run([TRACEFS, *args], check=True, capture_output=True).stdout


def main():
    failures = []
    with tempfile.TemporaryDirectory() as work:
        log = os.path.join(work, "big.rtrace")
        with open(log, "wb") as f:
            f.write(log_bytes())
        size = os.path.getsize(log)
        index = f"index_dir={work}/index"
        kept = len(run("ls", "-o", index, log, "mmaps").split())
        budget = (4 << 20) + size // 100
        if not 0 < kept < MMAPS or 2 * kept * PATH_BYTES > budget:
            failures.append(f"{kept} of {MMAPS} mmaps kept (budget {budget} bytes)")
        errors = run("cat", "-o", index, log, "errors").decode()
        if "reach their budget" not in errors:
            failures.append(f"no /errors line for the budget: {errors[:300]!r}")
        first = json.loads(run("cat", "-o", index, log, "mmaps/0.json"))
        if first["path"] != "/lib/0000-" + "x" * (PATH_BYTES - 10) or first["from"] != "0x10000000":
            failures.append(f"mmaps/0.json: {str(first)[:120]}")
        maps = run("cat", "-o", index, log, "maps").decode().splitlines()
        if len(maps) != kept or not maps[0].startswith("0000000010000000-0000000010000800 r-xp "):
            failures.append(f"maps: {len(maps)} lines, first {maps[0][:60] if maps else None!r}")
        paths = ["maps", "events", "info.json"] + [f"mmaps/{i}.json" for i in range(kept)]
        peak_kib, rule_kib, over = cat_peak(log, paths, "noindex")
        print(f"{size} byte log, {kept} of {MMAPS} mmaps kept: peak {peak_kib} KiB, rule {rule_kib} KiB")
        failures += [over] if over else []
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
