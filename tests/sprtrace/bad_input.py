"""sp-rtrace: big-endian logs and damaged logs.

1. Every log of tests/data/sprtrace rewritten big-endian (handshake endianness
   1, every dword/pointer/length swapped, as a big-endian build of the tool
   writes it) must give the same `events` as the original.
2. Damaged logs (the cases the issue lists, truncations, random bit flips)
   must give a clear error or a readable prefix, never a crash or a hang:
   a clean exit, valid JSON where JSON is promised, and /errors saying what
   was wrong for the crafted cases."""
import glob
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

TRACEFS = os.environ["TRACEFS"]
ROOT = os.environ["TRACEFS_SOURCE_ROOT"]
DATA = os.path.join(ROOT, "tests/data/sprtrace")
failures = []
ENV = dict(os.environ, TRACEFS_FORMAT="sp-rtrace")
sys.path.insert(0, os.path.join(ROOT, "tests"))
from offline_files import read_files  # noqa: E402

# Field layouts: D dword, P pointer, S string, B backtrace, A arguments, H heap.
LAYOUTS = {
    b"OCFG": "SS", b"PINF": "DDD?S", b"MINF": "DDS", b"RESR": "D!SS", b"MMAP": "PPS",
    b"CTXR": "DS", b"CALL": "DDDDSDP", b"BTRC": "B", b"ARGS": "A", b"HINF": "H", b"FILE": "SS",
}


def fail(message):
    failures.append(message)
    print("FAIL:", message)


def checked(log, result):
    """result when it is a clean run (exit 0 or 1), else None after a
    failure."""
    if result is None:
        return None
    stderr = result.stderr.decode(errors="replace")
    if "Sanitizer" in stderr or "runtime error:" in stderr:
        fail(f"{log}: sanitizer report: {stderr[:400]}")
        return None
    if result.returncode not in (0, 1):
        fail(f"{log}: exit {result.returncode} {stderr[:200]}")
        return None
    return result


def run(log, *paths):
    try:
        result = subprocess.run([TRACEFS, "cat", log, *paths], capture_output=True, timeout=60, env=ENV)
    except subprocess.TimeoutExpired:
        fail(f"{log} {' '.join(paths)}: hang")
        return None
    return checked(log, result)


class Log:
    def __init__(self, data):
        size = data[1]
        self.handshake = bytearray(data[: 2 + size])
        self.major, self.minor = data[2], data[3]
        arch_len = data[4]
        self.pointer = data[6 + arch_len]
        self.packets = []
        pos = 2 + size
        while pos + 8 <= len(data):
            a, b = struct.unpack_from("<II", data, pos)
            if self.major < 2:
                kind, length = data[pos + 4: pos + 8], a - 4
            else:
                kind, length = data[pos: pos + 4], b
            self.packets.append([bytes(kind), bytes(data[pos + 8: pos + 8 + length])])
            pos += 8 + length

    def encode(self, big=False):
        order = ">" if big else "<"
        out = bytearray(self.handshake)
        if big:
            out[5 + out[4]] = 1
        for kind, data in self.packets:
            if big:
                data = self.swap(kind, data)
            # The type is a native dword built from the ASCII letters.
            kind_bytes = kind[::-1] if big else kind
            size = struct.pack(order + "I", len(data) + (4 if self.major < 2 else 0))
            out += (size + kind_bytes if self.major < 2 else kind_bytes + size) + data
        return bytes(out)

    def swap(self, kind, data):
        layout = LAYOUTS.get(kind)
        if layout is None:
            return data
        out, pos = bytearray(), 0
        ptr = "I" if self.pointer == 4 else "Q"

        def word(fmt):
            nonlocal pos
            width = struct.calcsize(fmt)
            value = struct.unpack_from("<" + fmt, data, pos)[0]
            out.extend(struct.pack(">" + fmt, value))
            pos += width
            return value

        def string():
            nonlocal pos
            length = word("H")
            take = length if length else 2
            out.extend(data[pos: pos + take])
            pos += take

        for field in layout:
            if field == "D" or (field == "?" and (self.major, self.minor) >= (1, 2)) \
                    or (field == "!" and (self.major, self.minor) >= (1, 3)):
                word("I")
            elif field == "P":
                word(ptr)
            elif field == "S":
                string()
            elif field == "B":
                for _ in range(word("I")):
                    word(ptr)
            elif field == "A":
                for _ in range(word("I")):
                    string()
                    string()
            elif field == "H":
                for _ in range(2):
                    word(ptr if self.major < 2 else "I")
                for _ in range(10):
                    word("I")
        return bytes(out + data[pos:])


def write(directory, name, data):
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


READ = ["info.json", "events", "leaks", "leaks-compressed", "maps", "modules", "calls/1.json",
        "export/chrome.json", "errors"]


def check_readable(log, expect_error=None):
    """A damaged log: a clean refusal, or a tree whose files all read."""
    try:
        files, _kinds, stat, cat = read_files(TRACEFS, log, READ, ENV)
    except subprocess.TimeoutExpired:
        fail(f"{log}: hang")
        return
    except ValueError as e:
        fail(str(e))
        return
    if checked(log, stat) is None or (cat is not None and checked(log, cat) is None):
        return
    if "info.json" not in files:
        return      # refused
    for name in ("info.json", "calls/1.json", "export/chrome.json"):
        if name in files:
            json.loads(files[name])
    errors = files.get("errors", b"").decode()
    if expect_error and expect_error != "fatal" and expect_error not in errors:
        fail(f"{log}: /errors lacks {expect_error!r}: {errors[:300]}")


def first(log, kind):
    return next(i for i, p in enumerate(log.packets) if p[0] == kind)


def crafted(directory, base):
    cases = []
    log = Log(base)
    data = bytearray(base)
    data[1] = 0xFF
    cases.append(("handshake-size", bytes(data[:200]), "fatal"))
    data = bytearray(base)
    data[4] = 0xF0
    cases.append(("arch-length", bytes(data), "fatal"))
    for name, mutate, expect in [
        ("past-eof", lambda l: l.packets.append([b"CALL", b"\0" * 8]), None),
        ("small-call", lambda l: l.packets.__setitem__(first(l, b"CALL"), [b"CALL", b"\1\0\0\0"]), "smaller than its fields"),
        ("unknown-type", lambda l: l.packets.insert(3, [b"ZZZZ", b"\0" * 12]), "unknown packet type"),
        ("orphan-btrc", lambda l: l.packets.insert(2, [b"BTRC", b"\1\0\0\0" + b"\0" * l.pointer]), "without a CALL"),
        ("frames-past-packet", lambda l: l.packets.__setitem__(first(l, b"BTRC"), [b"BTRC", b"\xff\xff\0\0" + b"\0" * 8]),
         "do not fit"),
        ("string-past-packet", lambda l: l.packets.__setitem__(first(l, b"MMAP"),
                                                               [b"MMAP", b"\0" * (2 * l.pointer) + b"\xff\xff"]),
         "smaller than its fields"),
        ("resource-id", lambda l: l.packets.insert(2, [b"RESR", struct.pack("<II", 1000, 0) + b"\0" * 8]),
         "resource id 1000"),
        ("args-count", lambda l: l.packets.insert(first(l, b"CALL") + 1, [b"ARGS", b"\xff\xff\xff\x7f"]), None),
    ]:
        copy = Log(base)
        mutate(copy)
        encoded = copy.encode()
        if name == "past-eof":
            encoded = encoded[:-8]
        cases.append((name, encoded, expect))
    del log
    return cases


def main():
    logs = sorted(glob.glob(os.path.join(DATA, "*.rtrace")))
    if not logs:
        print("no sp-rtrace test data: skipped")
        return 77
    with tempfile.TemporaryDirectory() as directory:
        for path in logs:
            original = open(path, "rb").read()
            log = Log(original)
            if log.encode() != original:
                fail(f"{path}: the test's packet reader does not round-trip")
                continue
            big = write(directory, "be-" + os.path.basename(path), log.encode(big=True))
            a, b = run(path, "events"), run(big, "events")
            if a is None or b is None or a.stdout != b.stdout or b.returncode != 0:
                fail(f"{path}: big-endian rewrite gives different events")
        base = open(os.path.join(DATA, "v2.0_file+memory.rtrace"), "rb").read()
        base14 = open(os.path.join(DATA, "v1.4-i386_file+memory.rtrace"), "rb").read()
        for source, label in ((base, "v2"), (base14, "v1")):
            for name, data, expect in crafted(directory, source):
                check_readable(write(directory, f"{label}-{name}.rtrace", data), expect)
            for cut in list(range(0, 400, 5)) + list(range(400, len(source), 131)):
                check_readable(write(directory, f"{label}-cut.rtrace", source[:cut]))
            rng = random.Random(6)
            for i in range(80):
                data = bytearray(source)
                for _ in range(rng.randint(1, 8)):
                    data[rng.randrange(len(data))] = rng.randrange(256)
                check_readable(write(directory, f"{label}-flip.rtrace", bytes(data)))
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


sys.exit(main())
