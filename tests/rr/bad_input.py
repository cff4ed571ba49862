#!/usr/bin/env python3
"""Damaged rr traces built from edge-0: crafted Cap'n Proto frames (pointer
loops, out-of-bounds and far pointers, absurd list sizes, too many
segments), truncated and corrupt chunks, frames cut mid-message.  Each must
open (or fail with a message), keep the frames before the damage, report
in /errors, and never crash or hang."""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

TRACEFS = os.environ["TRACEFS"]
BLOCKS = sys.argv[1]
SOURCE = os.path.join(os.environ["TRACEFS_SOURCE_ROOT"], "tests/data/rr/edge-0")
failures = []


def run(*args, timeout=60):
    return subprocess.run([TRACEFS, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)


def blocks(mode, data, block=1 << 20):
    args = [BLOCKS, mode] + ([str(block)] if mode == "pack" else [])
    return subprocess.run(args, input=data, stdout=subprocess.PIPE, check=True).stdout


def pack_words(words):
    """Cap'n Proto packing of a list of 8-byte words (tags only, no runs)."""
    out = bytearray()
    for w in words:
        tag = 0
        body = bytearray()
        for i, b in enumerate(w):
            if b:
                tag |= 1 << i
                body.append(b)
        out.append(tag)
        out += body
        if tag == 0:
            out.append(0)
        elif tag == 0xFF:
            out.append(0)
    return bytes(out)


def message(segments):
    table = struct.pack("<I", len(segments) - 1) + b"".join(struct.pack("<I", len(s)) for s in segments)
    if len(table) % 8:
        table += b"\0" * 4
    words = [table[i:i + 8] for i in range(0, len(table), 8)]
    for s in segments:
        words += [struct.pack("<Q", w) for w in s]
    return pack_words(words)


def struct_ptr(offset, data, ptrs):
    return ((offset & 0x3FFFFFFF) << 2) | (data << 32) | (ptrs << 48)


def list_ptr(offset, size, count):
    return 1 | ((offset & 0x3FFFFFFF) << 2) | (size << 32) | (count << 35)


def far_ptr(segment, offset, double=0):
    return 2 | (double << 2) | (offset << 3) | (segment << 32)


# A SCHED frame (event tag 4 at bits 48..63) with tid 300: data word 0.
SCHED = 300 | (1 << 32) | (4 << 48)
BAD_FRAMES = {
    "root-loop": [[struct_ptr(-1, 0, 1)]],
    "list-out-of-bounds": [[struct_ptr(0, 7, 5), SCHED, 0, 0, 0, 0, 0, 0, list_ptr(0, 7, 1 << 28), 0, 0, 0, 0]],
    "absurd-list": [[struct_ptr(0, 7, 5), SCHED, 0, 0, 0, 0, 0, 0, list_ptr(4, 2, (1 << 29) - 1), 0, 0, 0, 0]],
    # 2^29 memory writes of zero words each: the fuzzer's 80-byte input that
    # rendered for minutes before zero-sized elements cost traversal words.
    "zero-size-elements": [[struct_ptr(0, 7, 5), SCHED, 0, 0, 0, 0, 0, 0, list_ptr(4, 7, 0), 0, 0, 0, 0, 1 << 31]],
    "void-list": [[struct_ptr(0, 7, 5), SCHED, 0, 0, 0, 0, 0, 0, list_ptr(4, 0, (1 << 29) - 1), 0, 0, 0, 0]],
    "far-to-far": [[far_ptr(0, 0)]],
    "far-missing-segment": [[far_ptr(7, 0)]],
    "double-far-bad-pad": [[far_ptr(1, 0, 1)], [0, 0]],
    "registers-loop": [[struct_ptr(0, 7, 5), SCHED, 0, 0, 0, 0, 0, 0, 0, struct_ptr(-1, 0, 1), 0, 0, 0]],
    "unknown-event": [[struct_ptr(0, 7, 5), 300 | (99 << 48), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]],
}


def make(name, events_raw=None, events_file=None):
    d = os.path.join(tmp, name)
    shutil.copytree(SOURCE, d)
    if events_raw is not None:
        events_file = blocks("pack", events_raw, 1024)
    if events_file is not None:
        with open(os.path.join(d, "events"), "wb") as f:
            f.write(events_file)
    return d


def expect(name, d, min_frames, error_part):
    try:
        r = run("cat", d, "info.json")
        if r.returncode != 0:
            failures.append(f"{name}: did not open: {r.stderr.decode()}")
            return
        import json
        frames = json.loads(r.stdout)["rr"]["frames"]
        errors = run("cat", d, "errors").stdout.decode()
        for path in ("events", "stats", "tasks/ps", "maps", f"frames/{max(frames, 1)}", f"frames/{max(frames, 1)}.json"):
            rc = run("cat", d, path).returncode
            if rc < 0 or rc >= 128:
                failures.append(f"{name}: cat {path} crashed ({rc})")
        if frames < min_frames or error_part not in errors:
            failures.append(f"{name}: {frames} frames (want >= {min_frames}), errors: {errors.strip()[:200]}")
        else:
            print(f"ok {name}: {frames} frames, {errors.strip().splitlines()[0] if errors.strip() else ''}")
    except subprocess.TimeoutExpired:
        failures.append(f"{name}: hang")


tmp = tempfile.mkdtemp(prefix="rr-bad-")
try:
    original = open(os.path.join(SOURCE, "events"), "rb").read()
    raw = blocks("unpack", original)


    # Each bad frame is appended after the whole stream: every original frame must survive.
    total = int(__import__("json").loads(run("cat", SOURCE, "info.json").stdout)["rr"]["frames"])
    for name, segments in BAD_FRAMES.items():
        error_part = "traversal limit" if name in ("zero-size-elements", "void-list") else "frame"
        expect(name, make(name, events_raw=raw + message(segments) + raw[:100]), total, error_part)
    expect("too-many-segments", make("too-many-segments", events_raw=raw + pack_words([struct.pack("<II", 100000, 1)])),
           total, "too many segments")
    expect("huge-segment", make("huge-segment", events_raw=raw + pack_words([struct.pack("<II", 0, 0xFFFFFFF0)])),
           total, "frame")
    expect("cut-mid-frame", make("cut-mid-frame", events_raw=raw[:len(raw) // 2]), 1, "truncated")
    multi = blocks("pack", raw, 1024)
    corrupt = bytearray(multi)
    second = 8 + struct.unpack_from("<I", multi, 0)[0]
    corrupt[second + 20] ^= 0xFF
    corrupt[second + 21] ^= 0x55
    expect("corrupt-second-chunk", make("corrupt-second-chunk", events_file=bytes(corrupt)), 1, "events")
    expect("truncated-second-chunk", make("truncated-second-chunk", events_file=multi[:second + 30]), 1, "runs past")
    expect("garbage-after-chunks", make("garbage-after-chunks", events_file=multi + b"\x01\x02\x03"), total, "truncated block header")
    d = make("bad-header")
    with open(os.path.join(d, "version"), "wb") as f:
        f.write(b"85\n" + pack_words([struct.pack("<II", 0, 1), struct.pack("<Q", far_ptr(3, 0))]))
    expect("bad-header", d, total, "Header")
finally:
    shutil.rmtree(tmp)
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
