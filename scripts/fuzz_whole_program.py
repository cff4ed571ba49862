#!/usr/bin/env python3
"""Whole-program fuzzing: the built tracefs on mutated traces, as a user
would run it.  For each input, `tracefs cat` of the main files and a mount
with a walk of its tree (listings, the first MiB of up to 300 files), each
under `prlimit --as` and a time limit; the peak RSS of the process (the
daemon, for the mount) is checked against the memory rule

    peak RSS <= cache_size + 2 % of the trace's file size + 16 MiB

and a signal, a hang (over the time limit) or a peak over the rule is a
finding, kept under OUT/findings/ with what happened.

Inputs are the test traces of every format (and the shared corpus's small
ones when ../shared/corpus exists), mutated: bytes flipped, ranges
overwritten, cut, duplicated, numbers at their limits written in; and, for
the compressed formats, the decompressed stream mutated and compressed
again (apitrace in all four containers, rr members in brotli chunks),
including highly compressible ones: a real stream followed by a slice of
itself repeated to tens or hundreds of MiB, or by zeros, in a file of a
few KiB.

usage: fuzz_whole_program.py SECONDS [--out DIR] [--seed N] [--cache SIZE]
Run by `scripts/fuzz --whole-program SECONDS`."""
import argparse
import ctypes
import gzip
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACEFS = os.environ.get("TRACEFS") or os.path.join(ROOT, "build", "tracefs")
CORPUS = os.path.join(ROOT, "..", "shared", "corpus")
MIB = 1 << 20
STEP_SECONDS = 60          # one cat, or one mount + walk
UNMOUNT_SECONDS = 10       # how long a busy mount point is waited for
WALK_FILES = 300
WALK_ENTRIES_PER_DIR = 100
WALK_READ_BYTES = MIB


# ---- codecs, through the libraries tracefs itself links (no Python modules needed) ----
class Codecs:
    def __init__(self):
        self.brotli_enc = ctypes.CDLL("libbrotlienc.so.1")
        self.brotli_dec = ctypes.CDLL("libbrotlidec.so.1")
        self.zstd = ctypes.CDLL("libzstd.so.1")
        self.snappy = ctypes.CDLL("libsnappy.so.1")
        self.brotli_enc.BrotliEncoderMaxCompressedSize.restype = ctypes.c_size_t
        self.brotli_enc.BrotliEncoderMaxCompressedSize.argtypes = [ctypes.c_size_t]
        self.zstd.ZSTD_compressBound.restype = ctypes.c_size_t
        self.zstd.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
        self.zstd.ZSTD_compress.restype = ctypes.c_size_t
        self.zstd.ZSTD_compress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t,
                                            ctypes.c_int]
        self.zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]
        self.snappy.snappy_max_compressed_length.restype = ctypes.c_size_t
        self.snappy.snappy_max_compressed_length.argtypes = [ctypes.c_size_t]

    def brotli(self, data, quality=5):
        capacity = self.brotli_enc.BrotliEncoderMaxCompressedSize(len(data)) or len(data) + 1024
        out = ctypes.create_string_buffer(capacity)
        size = ctypes.c_size_t(capacity)
        ok = self.brotli_enc.BrotliEncoderCompress(ctypes.c_int(quality), ctypes.c_int(22), ctypes.c_int(0),
                                                   ctypes.c_size_t(len(data)), data, ctypes.byref(size), out)
        if not ok:
            raise RuntimeError("brotli compression failed")
        return out.raw[:size.value]

    def unbrotli(self, data, size):
        out = ctypes.create_string_buffer(max(size, 1))
        got = ctypes.c_size_t(size)
        rc = self.brotli_dec.BrotliDecoderDecompress(ctypes.c_size_t(len(data)), data, ctypes.byref(got), out)
        return out.raw[:got.value] if rc == 1 else None

    def zstd_frame(self, data, level=3):
        capacity = self.zstd.ZSTD_compressBound(len(data))
        out = ctypes.create_string_buffer(capacity)
        n = self.zstd.ZSTD_compress(out, capacity, data, len(data), level)
        if self.zstd.ZSTD_isError(n):
            raise RuntimeError("zstd compression failed")
        return out.raw[:n]

    def snappy_block(self, data):
        capacity = self.snappy.snappy_max_compressed_length(len(data))
        out = ctypes.create_string_buffer(capacity)
        size = ctypes.c_size_t(capacity)
        if self.snappy.snappy_compress(data, ctypes.c_size_t(len(data)), out, ctypes.byref(size)) != 0:
            raise RuntimeError("snappy compression failed")
        return out.raw[:size.value]


# ---- containers ----
def apitrace_container(codecs, raw, kind):
    """An apitrace file holding the raw call stream in the given container."""
    if kind == "snappy":
        out = bytearray(b"at")
        for start in range(0, max(len(raw), 1), MIB):
            block = codecs.snappy_block(raw[start:start + MIB])
            out += struct.pack("<I", len(block)) + block
        return bytes(out)
    if kind == "zstd":
        return b"".join(codecs.zstd_frame(raw[start:start + 16 * MIB]) for start in range(0, max(len(raw), 1), 16 * MIB))
    if kind == "gzip":
        return gzip.compress(raw, compresslevel=6)
    return codecs.brotli(raw, quality=4)


def rr_chunks(codecs, raw):
    """An rr member: (u32 compressed, u32 uncompressed, brotli block) per MiB."""
    out = bytearray()
    for start in range(0, len(raw), MIB):
        block = raw[start:start + MIB]
        packed = codecs.brotli(block, quality=5)
        out += struct.pack("<II", len(packed), len(block)) + packed
    return bytes(out)


def rr_member_raw(codecs, data):
    """The decompressed bytes of an rr member, or None when damaged."""
    raw, at = bytearray(), 0
    while at + 8 <= len(data):
        compressed, size = struct.unpack_from("<II", data, at)
        if compressed > len(data) - at - 8 or size > 64 * MIB:
            return None
        block = codecs.unbrotli(data[at + 8:at + 8 + compressed], size)
        if block is None:
            return None
        raw += block
        at += 8 + compressed
    return bytes(raw)


# ---- mutations of bytes ----
LIMIT_NUMBERS = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF]


def mutate_bytes(rng, data):
    data = bytearray(data)
    if not data:
        return bytes(rng.randbytes(rng.randint(1, 64))), "random bytes"
    choice = rng.randrange(6)
    if choice == 0:
        count = rng.randint(1, 16)
        for _ in range(count):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        return bytes(data), f"{count} bits flipped"
    if choice == 1:
        cut = rng.randrange(len(data))
        return bytes(data[:cut]), f"cut at {cut}"
    if choice == 2:
        at, length = rng.randrange(len(data)), rng.randint(1, 64)
        data[at:at + length] = rng.randbytes(min(length, len(data) - at))
        return bytes(data), f"{length} random bytes at {at}"
    if choice == 3:
        at = rng.randrange(len(data))
        length = rng.randint(1, min(4096, len(data) - at))
        times = rng.randint(2, 64)
        piece = bytes(data[at:at + length])
        return bytes(data[:at] + piece * times + data[at:]), f"{length} bytes at {at} repeated {times}x"
    if choice == 4:
        at = rng.randrange(len(data))
        width = rng.choice([1, 2, 4, 8])
        value = rng.choice(LIMIT_NUMBERS) & ((1 << (8 * width)) - 1)
        data[at:at + width] = value.to_bytes(width, rng.choice(["little", "big"]))[:len(data) - at]
        return bytes(data), f"{value:#x} ({width} bytes) at {at}"
    at = rng.randrange(len(data))
    length = rng.randint(1, min(256, len(data) - at))
    del data[at:at + length]
    return bytes(data), f"{length} bytes deleted at {at}"


def compressible_tail(rng, raw):
    """The stream followed by a slice of itself repeated, or zeros: tens to
    hundreds of MiB that compress to almost nothing."""
    target = rng.choice([16, 64, 256]) * MIB
    if rng.random() < 0.3 or len(raw) < 64:
        return raw + bytes(target), f"+{target // MIB} MiB of zeros"
    start = rng.randrange(len(raw) // 4, len(raw))
    piece = raw[start:start + rng.randint(16, 65536)]
    times = max(1, target // max(len(piece), 1))
    return raw + piece * times, f"+{len(piece)} bytes at {start} repeated to {target // MIB} MiB"


# ---- seeds ----
def format_of(path):
    try:
        out = subprocess.run([TRACEFS, "cat", path, "info.json"], capture_output=True, timeout=60,
                             env=dict(os.environ, XDG_CACHE_HOME=tempfile.gettempdir() + "/tracefs-wp-probe"))
        return json.loads(out.stdout).get("format")
    except (subprocess.TimeoutExpired, ValueError):
        return None


def find_seeds():
    seeds = []
    places = [os.path.join(ROOT, "tests", "data", d) for d in ("apitrace", "fxt", "rr", "sprtrace", "xray")]
    if os.path.isdir(CORPUS):
        places += [os.path.join(CORPUS, d) for d in ("fxt", "sp-rtrace", "xray/traces", "apitrace/traces",
                                                      "rr/traces")]
    for place in places:
        if not os.path.isdir(place):
            continue
        for name in sorted(os.listdir(place)):
            path = os.path.join(place, name)
            size = tree_size(path)
            if size == 0 or size > 4 * MIB or name.endswith((".txt", ".md", ".json", ".jsonl", ".yaml", ".sha256")):
                continue
            fmt = format_of(path)
            if fmt:
                seeds.append((path, fmt))
    return seeds


def tree_size(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(path, n)) for n in os.listdir(path)
                   if os.path.isfile(os.path.join(path, n)))
    return os.path.getsize(path) if os.path.isfile(path) else 0


# ---- one input ----
def make_input(rng, codecs, seed, streams, work):
    """Writes a mutated copy of the seed under work/input; returns (path, what)."""
    path, fmt = seed
    target = os.path.join(work, "input")
    shutil.rmtree(target, ignore_errors=True)
    if os.path.exists(target):
        os.unlink(target)
    if os.path.isdir(path):   # rr: one member mutated, raw or through its brotli chunks
        shutil.copytree(path, target)
        for name in os.listdir(target):
            os.chmod(os.path.join(target, name), 0o644)
        os.chmod(target, 0o755)
        member = rng.choice(["events", "data", "mmaps", "tasks", "version"])
        member_path = os.path.join(target, member)
        if not os.path.isfile(member_path):
            return target, "unchanged"
        data = open(member_path, "rb").read()
        raw = streams.get((path, member))
        if raw is None and member != "version":
            raw = rr_member_raw(codecs, data)
            streams[(path, member)] = raw
        if raw is not None and member != "version" and rng.random() < 0.6:
            if rng.random() < 0.4:
                raw, what = compressible_tail(rng, raw)
            else:
                raw, what = mutate_bytes(rng, raw)
            open(member_path, "wb").write(rr_chunks(codecs, raw))
            return target, f"rr {member} decompressed: {what}"
        data, what = mutate_bytes(rng, data)
        open(member_path, "wb").write(data)
        return target, f"rr {member}: {what}"
    data = open(path, "rb").read()
    if fmt == "apitrace" and rng.random() < 0.6:
        raw = streams.get(path)
        if raw is None:
            raw = subprocess.run([TRACEFS, "cat", path, ".tracefs/streams/stream"], capture_output=True,
                                 timeout=120).stdout
            streams[path] = raw
        if rng.random() < 0.5:
            raw, what = compressible_tail(rng, raw)
        else:
            raw, what = mutate_bytes(rng, raw)
        kind = rng.choice(["snappy", "zstd", "gzip", "brotli"])
        open(target, "wb").write(apitrace_container(codecs, raw, kind))
        return target, f"apitrace {kind}, stream: {what}"
    data, what = mutate_bytes(rng, data)
    open(target, "wb").write(data)
    return target, f"{fmt}: {what}"


RUNNING = set()        # Measured processes not yet finished: killed if the run is stopped


class Measured:
    """A process run under /usr/bin/time (for its peak RSS: a child forked
    from this Python process would count Python's own pages in its
    ru_maxrss) and prlimit --as, in its own process group."""

    def __init__(self, argv, env, as_bytes, work):
        self.rss_file = os.path.join(work, "rss")
        if os.path.exists(self.rss_file):
            os.unlink(self.rss_file)
        self.start = time.monotonic()
        self.process = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", self.rss_file, "prlimit",
                                         f"--as={as_bytes}", "--"] + argv, env=env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        self.killed = False
        RUNNING.add(self)

    def kill(self):
        self.killed = True
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def finish(self, seconds):
        """Waits at most `seconds` more; returns (status, peak RSS KiB,
        seconds, stderr head); status is the exit code, -signal or 'timeout'."""
        timer = threading.Timer(max(seconds, 0.1), self.kill)
        timer.start()
        stderr = self.process.stderr.read(4096)
        self.process.wait()
        timer.cancel()
        RUNNING.discard(self)
        took = time.monotonic() - self.start
        status, rss = self.process.returncode, 0
        try:
            lines = open(self.rss_file).read().split("\n")
            lines = [line for line in lines if line.strip()]
            rss = int(lines[-1])
            for line in lines[:-1]:
                if line.startswith("Command terminated by signal"):
                    status = -int(line.split()[-1])
        except (OSError, ValueError, IndexError):
            pass
        if self.killed:
            status = "timeout"
        return status, rss, took, stderr.decode(errors="replace")


WALKER = r"""
import os, sys
root, files_left, per_dir, read_bytes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
stack = [root]
while stack and files_left > 0:
    d = stack.pop()
    try:
        entries = []
        with os.scandir(d) as it:
            for e in it:
                entries.append(e)
                if len(entries) >= per_dir:
                    break
    except OSError:
        continue
    for e in entries:
        try:
            if e.is_symlink():
                continue
            if e.is_dir():
                stack.append(e.path)
            elif files_left > 0:
                files_left -= 1
                os.stat(e.path)
                with open(e.path, "rb") as f:
                    f.read(read_bytes)
        except OSError:
            pass
"""


def unmount(mnt):
    """fusermount3 -u, tried again for up to UNMOUNT_SECONDS while the mount
    is busy: on a shared machine another process (a `df`, a test looking
    for stale mounts) may be looking into it at that instant, and then
    umount(2) refuses and the daemon rightly keeps serving.  Returns "" or
    what happened, for the log ("refused" makes the run a BUSY finding)."""
    deadline, tries = time.monotonic() + UNMOUNT_SECONDS, 0
    while True:
        done = subprocess.run(["fusermount3", "-u", mnt], capture_output=True, text=True)
        if done.returncode == 0 or not os.path.ismount(mnt):
            return f", unmount busy x{tries}" if tries else ""
        tries += 1
        if time.monotonic() >= deadline:
            return f", unmount refused x{tries}: {done.stderr.strip()[:120]}"
        time.sleep(0.1)


def mount_walk(input_path, cache, as_bytes, env, work):
    """Mounts with -f, walks, unmounts; returns the daemon's (status, peak
    RSS KiB, seconds, stderr head) and the walk's outcome."""
    mnt = os.path.join(work, "mnt")
    os.makedirs(mnt, exist_ok=True)
    daemon = Measured([TRACEFS, "-f", "-o", f"noindex,auto_unmount,cache_size={cache}", input_path, mnt],
                      env, as_bytes, work)
    walk = "not mounted"
    while time.monotonic() - daemon.start < STEP_SECONDS and daemon.process.poll() is None:
        if os.path.ismount(mnt):
            break
        time.sleep(0.02)
    if os.path.ismount(mnt):
        left = max(1.0, STEP_SECONDS - (time.monotonic() - daemon.start))
        try:
            subprocess.run([sys.executable, "-c", WALKER, mnt, str(WALK_FILES), str(WALK_ENTRIES_PER_DIR),
                            str(WALK_READ_BYTES)], timeout=left, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            walk = "walked"
        except subprocess.TimeoutExpired:
            walk = "timeout"
        walk += unmount(mnt)
    elif daemon.process.poll() is None:
        walk = "timeout"       # neither mounted nor refused in time
        daemon.kill()
    result = daemon.finish(10)
    if os.path.ismount(mnt):
        subprocess.run(["fusermount3", "-u", "-z", mnt], capture_output=True)
    return result + (walk,)


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def stop(signum, frame):
    raise KeyboardInterrupt


def main():
    signal.signal(signal.SIGTERM, stop)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("seconds", type=float)
    parser.add_argument("--out", default=os.path.join(ROOT, "build-fuzz", "whole-program"))
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--cache", default="16M", help="cache_size for every run (default 16M)")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    cache_bytes = parse_size(args.cache)
    codecs = Codecs()
    os.makedirs(os.path.join(args.out, "findings"), exist_ok=True)
    log = open(os.path.join(args.out, "log.jsonl"), "a")
    work = tempfile.mkdtemp(prefix="tracefs-wp-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache"), TRACEFS_CACHE_SIZE=args.cache)
    seeds = find_seeds()
    if not seeds:
        print("no seed traces found")
        return 1
    print(f"whole-program fuzzing for {args.seconds:.0f} s: {len(seeds)} seed traces, random seed {seed}, "
          f"cache_size={args.cache}; log {args.out}/log.jsonl")
    print(f"{'#':>5} {'mode':5} {'s':>6} {'RSS MiB':>8} {'rule MiB':>8} {'verdict':8} input")
    streams, stats = {}, {"inputs": 0, "cat": 0, "mount": 0, "findings": 0, "worst_ratio": 0.0,
                          "worst": "", "max_seconds": 0.0, "seconds": [], "kinds": {}}
    started = time.monotonic()
    deadline = started + args.seconds
    number = 0
    try:
        while time.monotonic() < deadline:
            number += 1
            source = rng.choice(seeds)
            try:
                path, what = make_input(rng, codecs, source, streams, work)
            except (OSError, RuntimeError, subprocess.TimeoutExpired) as error:
                print(f"{number:5} input not made from {source[0]}: {error}")
                continue
            size = tree_size(path)
            rule_kib = (cache_bytes + 0.02 * size + 16 * MIB) / 1024
            as_bytes = int(os.environ.get("FUZZ_AS_MB", "0")) * MIB or int(4 * rule_kib * 1024 + 1024 * MIB)
            stats["inputs"] += 1
            shutil.rmtree(os.path.join(work, "cache"), ignore_errors=True)
            cat = Measured([TRACEFS, "cat", path, "info.json", "events", "errors"], env, as_bytes, work)
            results = [("cat",) + cat.finish(STEP_SECONDS) + ("",)]
            results.append(("mount",) + mount_walk(path, args.cache, as_bytes, env, work))
            for mode, status, rss_kib, took, stderr, walk in results:
                stats[mode] += 1
                stats["seconds"].append(took)
                stats["max_seconds"] = max(stats["max_seconds"], took)
                ratio = rss_kib / rule_kib
                if ratio > stats["worst_ratio"]:
                    stats["worst_ratio"], stats["worst"] = ratio, f"{mode} {what}"
                verdict = "ok"
                if status == "timeout" or walk.startswith("timeout"):
                    verdict = "HANG"
                elif "unmount refused" in walk:
                    verdict = "BUSY"
                elif isinstance(status, int) and status < 0:
                    verdict = f"SIG{-status}"
                elif rss_kib > rule_kib:
                    verdict = "OVER"
                elif "out of memory" in stderr or "failed to allocate" in stderr:
                    verdict = "ALLOC"
                record = {"n": number, "mode": mode, "input": what, "seed_trace": source[0], "bytes": size,
                          "seconds": round(took, 3), "peak_rss_mib": round(rss_kib / 1024, 1),
                          "rule_mib": round(rule_kib / 1024, 1), "status": status, "walk": walk,
                          "verdict": verdict, "stderr": stderr.splitlines()[0][:200] if stderr else ""}
                log.write(json.dumps(record) + "\n")
                log.flush()
                note = f" [{walk}]" if "unmount" in walk else ""
                print(f"{number:5} {mode:5} {took:6.2f} {rss_kib / 1024:8.1f} {rule_kib / 1024:8.1f} {verdict:8} {what}{note}",
                      flush=True)
                if verdict != "ok":
                    stats["findings"] += 1
                    kind = f"{verdict} {mode}: {what.split(':')[0]}, " + \
                        ("compressible tail" if " MiB" in what else "mutated")
                    stats["kinds"][kind] = stats["kinds"].get(kind, 0) + 1
                    keep = os.path.join(args.out, "findings", f"{seed}-{number}-{mode}")
                    if os.path.isdir(path):
                        shutil.copytree(path, keep, dirs_exist_ok=True)
                    else:
                        shutil.copy(path, keep)
                    with open(keep + ".json", "w") as f:
                        json.dump(record, f, indent=1)
    except KeyboardInterrupt:
        print("stopped early: the figures below are of the runs done")
    finally:
        # Stopped (SIGTERM, Ctrl-C) or done: no daemon or mount is left behind.
        for measured in list(RUNNING):
            measured.kill()
        subprocess.run(["fusermount3", "-u", "-z", os.path.join(work, "mnt")], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    times = sorted(stats["seconds"]) or [0]
    print(f"\n{stats['inputs']} inputs ({stats['cat']} cat, {stats['mount']} mount + walk) in "
          f"{time.monotonic() - started:.0f} s; seconds per run p50 {times[len(times) // 2]:.2f}, max {stats['max_seconds']:.2f}; "
          f"worst peak RSS {stats['worst_ratio']:.2f} of the rule ({stats['worst']}); "
          f"findings: {stats['findings']} (in {args.out}/findings)")
    for kind, count in sorted(stats["kinds"].items()):
        print(f"  {count:5} x {kind}")
    return 1 if stats["findings"] else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:     # stopped before the first input
        sys.exit(130)
