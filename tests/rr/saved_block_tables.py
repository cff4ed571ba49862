#!/usr/bin/env python3
"""The saved index keeps the block tables of rr's events and data files, so
a remount reads no block header, unless a table would be big beside its
file: a trace written by tests/rr/rr_writer.py with rr's 1 MiB blocks, and
the same trace in 64-byte blocks (tens of thousands of blocks, whose
tables would make the saved index several times the 2 % it may take).
Both must remount from the saved index (saved_index used) and serve
/events as the first mount did; the second's index must be smaller than
half its tables.  A third trace, of 1-byte blocks, has more blocks than
its file may index (stream_chunk_budget: a table entry per 10 bytes of
file is five times the file in memory): /errors must say so, and /events
must end where the indexed blocks end.
Usage: saved_block_tables.py RR_BLOCKS"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

SOURCE_ROOT = os.environ.get("TRACEFS_SOURCE_ROOT", ".")
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "rr"))
from rr_writer import ARCH_X8664, ENTERING, EXITING, Trace, entering_regs  # noqa: E402

TRACEFS = os.environ.get("TRACEFS", "build/tracefs")
EDGE = os.path.join(SOURCE_ROOT, "tests", "data", "rr", "edge-0")
FRAMES = 6000
SAVED_BLOCK_BYTES = 56        # a block's entry in a saved table (decoders/saved_stream.c)


def make(path, blocks, block_bytes, frames=FRAMES):
    t = Trace()
    for i in range(frames // 2):
        regs = entering_regs(i % 300)
        t.syscall(7000, ARCH_X8664, ARCH_X8664, i % 300, ENTERING, regs)
        t.syscall(7000, ARCH_X8664, ARCH_X8664, i % 300, EXITING, regs)
    t.write(path, open(os.path.join(EDGE, "version"), "rb").read(), blocks, block_bytes)


def block_count(path):
    """Blocks of an rr stream file: u32 compressed, u32 uncompressed, data."""
    data = open(path, "rb").read()
    at = count = 0
    while at + 8 <= len(data):
        at += 8 + struct.unpack_from("<I", data, at)[0]
        count += 1
    return count


def mount_events(trace, index_dir, errors=None):
    """/events and the saved_index line of one mount (and /errors into the
    list `errors`)."""
    mnt = tempfile.mkdtemp(prefix="tracefs-tables-")
    subprocess.run([TRACEFS, "-o", f"auto_unmount,index_dir={index_dir}", trace, mnt], check=True)
    try:
        events = open(os.path.join(mnt, "events")).read()
        saved = re.search(r"^saved_index (.*)$", open(os.path.join(mnt, ".tracefs", "stats")).read(), re.M).group(1)
        if errors is not None:
            errors.append(open(os.path.join(mnt, "errors")).read())
        return events, saved
    finally:
        subprocess.run(["fusermount3", "-u", mnt], check=False)
        for _ in range(600):
            if subprocess.run(["pgrep", "-f", "--", mnt], capture_output=True).returncode != 0:
                break
            time.sleep(0.1)
        os.rmdir(mnt)


def index_bytes(index_dir):
    return sum(os.path.getsize(os.path.join(index_dir, f)) for f in os.listdir(index_dir) if f.endswith(".index"))


def main():
    work = tempfile.mkdtemp()
    failures = []
    try:
        for label, block_bytes, tables_saved in [("1 MiB blocks", 1 << 20, True), ("64-byte blocks", 64, False)]:
            trace = os.path.join(work, f"trace-{block_bytes}")
            index_dir = os.path.join(work, f"index-{block_bytes}")
            make(trace, sys.argv[1], block_bytes)
            blocks = block_count(os.path.join(trace, "events")) + block_count(os.path.join(trace, "data"))
            first, saved = mount_events(trace, index_dir)
            again, saved_again = mount_events(trace, index_dir)
            size = index_bytes(index_dir)
            print(f"{label}: {blocks} blocks, saved index {size} bytes, remount: saved_index {saved_again}")
            if saved == "used" or saved_again != "used":
                failures.append(f"{label}: saved_index {saved} then {saved_again}")
            if again != first or not first:
                failures.append(f"{label}: /events of the remount differs from the first mount's")
            if not tables_saved and size >= blocks * SAVED_BLOCK_BYTES // 2:
                failures.append(f"{label}: the saved index ({size} bytes) holds the block tables "
                                f"({blocks * SAVED_BLOCK_BYTES} bytes)")
        # 1-byte blocks: past the budget, the events end with an /errors line.
        trace = os.path.join(work, "trace-1")
        make(trace, sys.argv[1], 1, 400)
        blocks = block_count(os.path.join(trace, "events"))
        errors = []
        events, _ = mount_events(trace, os.path.join(work, "index-1"), errors)
        line = re.search(r"^events offset \d+: more than (\d+) blocks, what a file of (\d+) bytes may index: "
                         r"the rest is not shown$", errors[0], re.M)
        print(f"1-byte blocks: {blocks} blocks, {events.count(chr(123) + chr(10))} frames shown, /errors: "
              f"{line.group(0) if line else errors[0][:200]!r}")
        if not line or int(line.group(1)) >= blocks or int(line.group(2)) != os.path.getsize(os.path.join(trace, "events")):
            failures.append("1-byte blocks: no /errors line on the blocks past the budget")
        if events.count("{\n") >= 400:
            failures.append("1-byte blocks: /events shows every frame")
        for failure in failures:
            print("FAIL", failure)
        return 1 if failures else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
