#!/usr/bin/env python3
"""Damaged FXT traces: each must open (or be refused with one clear line),
report its damage in /errors, keep the readable part, and never crash,
hang or grow without bound.  Every file of each tree is read."""
import os
import random
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import fxt_writer  # noqa: E402

TRACEFS = os.environ["TRACEFS"]
failures = 0


def run(args, timeout=60):
    return subprocess.run([TRACEFS] + args, capture_output=True, timeout=timeout,
                          env=dict(os.environ, TRACEFS_FORMAT="fxt"))


def check(name, data, expect_error=None, expect_events=None, refused=False):
    global failures
    with tempfile.NamedTemporaryFile(suffix=".fxt", delete=False) as f:
        f.write(data)
        path = f.name
    try:
        info = run(["cat", path, "info.json"])
        if info.returncode < 0 or info.returncode > 1:
            raise AssertionError("crashed (%d): %s" % (info.returncode, info.stderr[-300:]))
        if refused:
            if info.returncode == 0 or b"\n" in info.stderr.strip():
                raise AssertionError("not refused with one line: %r" % info.stderr)
            print("ok:", name, "(refused:", info.stderr.decode().strip() + ")")
            return
        if info.returncode != 0:
            raise AssertionError("refused: %r" % info.stderr)
        errors = run(["cat", path, "errors"]).stdout.decode()
        if expect_error and expect_error not in errors:
            raise AssertionError("errors lacks %r: %r" % (expect_error, errors[:300]))
        events = run(["cat", path, "events"])
        if events.returncode != 0:
            raise AssertionError("events unreadable")
        if expect_events is not None and events.stdout.count(b"\n") != expect_events:
            raise AssertionError("%d events, expected %d" % (events.stdout.count(b"\n"), expect_events))
        walk(path, "")
        print("ok:", name)
    except (AssertionError, subprocess.TimeoutExpired) as e:
        failures += 1
        print("FAIL:", name, e)
    finally:
        os.unlink(path)


def walk(path, rel):
    """Every file of the tree read (one `stat` and one `cat` per directory),
    without a crash."""
    out = run(["ls", path] + ([rel] if rel else []))
    paths = [rel + "/" + entry if rel else entry for entry in out.stdout.decode().split()]
    if not paths:
        return
    entries = [line.rsplit(" ", 3)[:2] for line in run(["stat", path] + paths).stdout.decode().splitlines()]
    files = [p for p, kind in entries if kind == "file"]
    if files and run(["cat", path] + files).returncode < 0:
        raise AssertionError("crash reading one of " + " ".join(files))
    for p, kind in entries:
        if kind == "directory":
            walk(path, p)


def base():
    w = fxt_writer.Writer(False)
    w.magic()
    w.provider_info(1, "p")
    w.string(1, "cat")
    w.thread(1, 2, 3)
    for i in range(20):
        w.event(0, i, 1, 1, "e%d" % i, [(1, "i", i)])
    return w


def main():
    good = bytes(base().out)
    check("clean", good, expect_events=20)
    check("empty file", b"", refused=True)
    check("truncated mid-record", good[:len(good) - 12], expect_error="past the end", expect_events=19)
    check("truncated to the magic", good[:8], expect_events=0)
    w = base()
    w.out += struct.pack("<Q", 4)  # record type 4, size 0
    w.out += good[8:]
    check("record size 0", bytes(w.out), expect_error="record size 0", expect_events=20)
    w = base()
    w.out += struct.pack("<Q", 4 | 4095 << 4)
    check("record size past EOF", bytes(w.out), expect_error="past the end", expect_events=20)
    w = base()
    w.event(0, 99, 7, 9, 10)  # thread 7, strings 9 and 10 never registered
    check("unset string and thread indexes", bytes(w.out), expect_error="before it was registered",
          expect_events=21)
    w = base()
    body = w.word(5) + w.word(0x10 | 40 << 4)  # ts, then an argument of 40 words in a 3-word record
    w.record(4, 0 | 1 << 4 | 1 << 8 | 1 << 16 | 1 << 32, body)
    check("argument size past its record", bytes(w.out), expect_error="argument", expect_events=20)
    w = base()
    w.record(4, 0 | 15 << 4 | 1 << 8 | 1 << 16 | 1 << 32, w.word(5))  # 15 args, none present
    check("huge argument count", bytes(w.out), expect_error="argument count", expect_events=20)
    w = base()
    w.record(2, 5 | 30000 << 16, b"")  # string longer than its record
    check("string past its record", bytes(w.out), expect_error="past the end of its record", expect_events=20)
    rng = random.Random(1234)
    check("random bytes", bytes(rng.getrandbits(8) for _ in range(4096)))
    check("magic then random bytes", good[:8] + bytes(rng.getrandbits(8) for _ in range(4096)))
    for i in range(12):
        data = bytearray(good)
        for _ in range(8):
            data[rng.randrange(8, len(data))] = rng.getrandbits(8)
        check("flipped bytes %d" % i, bytes(data))
    print("%d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
