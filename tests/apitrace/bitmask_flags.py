#!/usr/bin/env python3
"""apitrace bitmask values, as `apitrace dump` writes them:
- random signatures (zero-valued flags, flags of several bits that overlap,
  equal flag values, values with bits no flag names, 0, all 64 bits) and
  values: each call's line of `events` and a sample of calls/<n>.json must
  be what a model of dump's greedy search gives;
- a signature of more distinct flags than LIMIT_APITRACE_BITMASK_FLAGS
  matches its first ones only, and /errors says so;
- the same events when the signatures come from the saved index;
- 40,000 flags of one value, and 40,000 distinct flags, each signature
  referenced by 200,000 values: rendering `events` must take seconds at
  most (testing every flag per value took about 16 s).
Usage: bitmask_flags.py"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

SOURCE_ROOT = os.environ.get("TRACEFS_SOURCE_ROOT", ".")
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "apitrace"))
from apitrace_stream import string, uint  # noqa: E402

TRACEFS = os.environ.get("TRACEFS", "build/tracefs")
MATCHED_FLAGS = 256          # LIMIT_APITRACE_BITMASK_FLAGS
VALUES = 1000000
SECONDS = 60                 # 1-2 s here, about 10 under the sanitizers; a scan per value: minutes
TYPE_BITMASK = 0x0a
ALL_BITS = (1 << 64) - 1


def trace(calls):
    """One function glFoo(x); calls: (signature id, flags, value), a
    signature's flags written at its first use."""
    b = bytearray(b"\x06\x06" + string("process.name") + string("/bin/h") + b"\x00")
    defined = set()
    for number, (sig, flags, value) in enumerate(calls):
        b += b"\x00" + uint(0) + uint(0)
        if number == 0:
            b += string("glFoo") + uint(1) + string("x")
        b += b"\x01" + uint(0) + bytes([TYPE_BITMASK]) + uint(sig)
        if sig not in defined:
            defined.add(sig)
            b += uint(len(flags)) + b"".join(string(name) + uint(v) for name, v in flags)
        b += uint(value) + b"\x00"
        b += b"\x01" + uint(number) + b"\x00"
    return bytes(b)


def matched(flags):
    """The flags tracefs matches: dump's, less the distinct values past the
    limit (a flag of a value seen before, or zero past the first flag,
    never changes dump's text)."""
    seen, kept = set(), []
    for position, (name, v) in enumerate(flags):
        if position == 0 or (v and v not in seen and len(seen) < MATCHED_FLAGS):
            kept.append((name, v))
        if v:
            seen.add(v)
    return kept


def dump_text(flags, value):
    """apitrace dump's bitmask: flags in signature order, each matching
    when all its bits are left (zero only when the value is), stopping once
    nothing is left; then what is left in hex, or 0x0 if nothing matched."""
    parts = []
    for name, flag in flags:
        if (flag and value & flag == flag) or (not flag and value == 0):
            parts.append(name)
            value &= ~flag
        if value == 0:
            break
    if value or not parts:
        parts.append("0x%x" % value)
    return " | ".join(parts)


def random_signature(rng, sig):
    pool = rng.sample(range(64), rng.randint(1, 10))
    if rng.random() < 0.3:
        pool.append(63)
    flags = []
    for i in range(rng.choice([0, 1, 2, 5, 12, 30, 60])):
        r = rng.random()
        if r < 0.1:
            v = 0
        elif r < 0.25 and flags:
            v = rng.choice(flags)[1]
        elif r < 0.6:
            v = 1 << rng.choice(pool)
        else:
            v = 0
            for bit in rng.sample(pool, rng.randint(1, min(4, len(pool)))):
                v |= 1 << bit
        flags.append(("F%d_%d" % (sig, i), v))
    return flags, pool


def random_value(rng, flags, pool):
    r = rng.random()
    if r < 0.1:
        return 0
    if r < 0.15:
        return ALL_BITS
    if r < 0.25:
        return rng.getrandbits(64)
    v = 0
    for _, flag in rng.sample(flags, rng.randint(0, len(flags))) if flags else []:
        v |= flag
    if rng.random() < 0.3:
        v |= 1 << rng.choice(pool)
    if rng.random() < 0.2:
        v |= 1 << rng.randrange(64)
    return v


def cases(rng):
    calls = []
    for sig in range(80):
        flags, pool = random_signature(rng, sig)
        for _ in range(40):
            calls.append((sig, flags, random_value(rng, flags, pool)))
    # More distinct values than are matched: single bits and pairs of bits
    # of 30 (465 distinct), every third one repeated, a zero first.
    pairs = [(1 << a) | (1 << b) for a in range(30) for b in range(a, 30)]
    many = [("Z", 0)]
    for k, pair in enumerate(pairs):
        many += [("M%d" % k, pair)] + ([("D%d" % k, pair)] if k % 3 == 0 else [])
    # Many flags, few distinct values: all matched.
    repeated = [("R%d" % i, 1 << (i % 40) | (1 << 50 if i % 7 == 0 else 0)) for i in range(3000)]
    for sig, flags in ((1000, many), (1001, repeated)):
        values = [0, ALL_BITS, (1 << 30) - 1, 1 << 29 | 1 << 28, 1 << 50 | 1]
        values += [rng.getrandbits(64) for _ in range(100)]
        values += [rng.getrandbits(64) & ((1 << 30) - 1) for _ in range(100)]
        calls += [(sig, flags, v) for v in values]
    return calls


def cat(path, name, timeout=120, options="noindex,cache_size=16M"):
    return subprocess.run([TRACEFS, "cat", "-o", options, path, name], capture_output=True,
                          timeout=timeout, check=True).stdout.decode()


def check_saved_index(workdir, path, events):
    """The flags are listed again when the signatures come from the saved
    index."""
    options = "index_dir=" + os.path.join(workdir, "index")
    written, loaded = (cat(path, "events", options=options) for _ in range(2))
    if written == events and loaded == events:
        return 0
    print("events differ with the saved index (written: %s, loaded: %s)" % (written == events, loaded == events))
    return 1


def check_texts(workdir):
    rng = random.Random(1729)
    calls = cases(rng)
    path = os.path.join(workdir, "random.trace")
    with open(path, "wb") as f:
        f.write(trace(calls))
    events = cat(path, "events")
    lines = [line for line in events.splitlines() if not line.startswith("//")]
    assert len(lines) == len(calls), "%d lines for %d calls" % (len(lines), len(calls))
    failures = check_saved_index(workdir, path, events)
    for number, ((sig, flags, value), line) in enumerate(zip(calls, lines)):
        want = "%d glFoo(x = %s)" % (number, dump_text(matched(flags), value))
        if line != want:
            failures += 1
            if failures <= 5:
                print("call %d (signature %d, value %#x):\n  got  %s\n  want %s" % (number, sig, value, line, want))
    for number in rng.sample(range(len(calls)), 40):
        sig, flags, value = calls[number]
        arg = json.loads(cat(path, "calls/%d.json" % number))["args"]["x"]
        if arg != {"bitmask": dump_text(matched(flags), value), "value": value}:
            failures += 1
            print("calls/%d.json: %s" % (number, arg))
    errors = cat(path, "errors")
    if "bitmask signature 1000: 465 distinct flag values, only the first 256 are matched" not in errors:
        failures += 1
        print("errors does not tell of signature 1000's unmatched flags:\n" + errors)
    if "bitmask signature 1001" in errors:
        failures += 1
        print("errors tells of signature 1001, whose flags are all matched:\n" + errors)
    print("%d calls of %d signatures checked" % (len(calls), len({c[0] for c in calls})))
    return failures


def check_speed(workdir):
    """40,000 flags and a million values: a scan of every flag per value
    takes minutes, the list of distinct values a second or two."""
    failures = 0
    shapes = {"one value": [("e%d" % i, 1 << 62) for i in range(40000)],
              "distinct": [("e%d" % i, 1 << 62 | i << 1) for i in range(40000)]}
    for shape, flags in shapes.items():
        path = os.path.join(workdir, "many.trace")
        with open(path, "wb") as f:
            f.write(trace([(0, flags, 1)] * VALUES))
        start = time.monotonic()
        try:
            lines = cat(path, "events", timeout=SECONDS).splitlines()
        except subprocess.TimeoutExpired:
            print("%s: events not rendered in %d s" % (shape, SECONDS))
            failures += 1
            continue
        print("%s: 40,000 flags, %d values: %.2f s" % (shape, VALUES, time.monotonic() - start))
        if len(lines) != VALUES + 1 or lines[-1] != "%d glFoo(x = 0x1)" % (VALUES - 1):
            print("  wrong: %d lines, last %r" % (len(lines), lines[-1]))
            failures += 1
    return failures


def main():
    workdir = tempfile.mkdtemp(prefix="tracefs-bitmask-")
    try:
        failures = check_texts(workdir) + check_speed(workdir)
    finally:
        shutil.rmtree(workdir)
    print("FAIL: %d" % failures if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
