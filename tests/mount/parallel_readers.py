"""32 concurrent readers on one mount with a small cache budget: random
preads, whole-file reads, find and ls -lR, for a bounded time.  Every byte
must equal a serial read of the same file; the daemon must not deadlock and
its peak RSS is reported (and bounded).

usage: parallel_readers.py TRACEFS TRACE [SECONDS] [READERS] [CACHE]"""
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.environ.get("TRACEFS_SOURCE_ROOT", "."), "tests"))
from mount_guard import guard, on_signals  # noqa: E402

tracefs, trace = sys.argv[1], sys.argv[2]
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 20
readers = int(sys.argv[4]) if len(sys.argv) > 4 else 32
cache = sys.argv[5] if len(sys.argv) > 5 else "2M"
MAX_FILES = 300
# Serial reference reads are bounded: files up to 32 MiB, 96 MiB in all.
MAX_FILE_BYTES = 32 << 20
MAX_TOTAL_BYTES = 96 << 20



def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def rss_kib(pid, field):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


# meson's timeout sends SIGTERM: exit through `finally` so the mount goes too.
on_signals()
mnt = tempfile.mkdtemp(prefix="tracefs-par-")
# auto_unmount: a daemon killed where no handler runs (SIGKILL to the whole
# run) leaves no stale mount; fusermount3 watches it and unmounts.
daemon = subprocess.Popen([tracefs, "-f", "-o", f"cache_size={cache},noindex,auto_unmount", trace, mnt])
guard(mnt)


def unmount():
    subprocess.run(["fusermount3", "-u", mnt], stderr=subprocess.DEVNULL)
    try:
        daemon.wait(timeout=30)
    except subprocess.TimeoutExpired:
        daemon.kill()
        subprocess.run(["umount", "-l", mnt], stderr=subprocess.DEVNULL)
    os.rmdir(mnt)


try:
    deadline = time.time() + 60
    while not os.path.ismount(mnt):
        if daemon.poll() is not None or time.time() > deadline:
            print("FAIL: mount did not come up", file=sys.stderr)
            sys.exit(1)
        time.sleep(0.05)

    files = []
    for root, _, names in os.walk(mnt):
        for name in names:
            files.append(os.path.join(root, name))
            if len(files) >= MAX_FILES:
                break
    files = [f for f in files if "/.tracefs/" not in f and not f.endswith("/errors")]
    serial = {}
    total = 0
    for f in sorted(files, key=lambda f: -os.path.getsize(f)):
        size = os.path.getsize(f)
        if size > MAX_FILE_BYTES or total + size > MAX_TOTAL_BYTES:
            continue
        with open(f, "rb") as handle:
            serial[f] = handle.read()
        total += size
    files = list(serial)
    # Every file is sized and the index built: what the daemon holds now is
    # "the index"; the readers below may add at most the cache budget.
    baseline_kib = rss_kib(daemon.pid, "VmRSS:")
    # Drop the kernel's copy so the concurrent reads reach the daemon.
    subprocess.run(["sh", "-c", "echo 1 > /proc/sys/vm/drop_caches"], stderr=subprocess.DEVNULL)
    weights = [max(1, len(serial[f])) for f in files]

    stop = time.time() + seconds
    compared = [0] * readers
    mismatches = []
    listings_cut = [0]
    operations = [0] * readers

    def reader(n):
        rng = random.Random(n)
        while time.time() < stop:
            kind = rng.random()
            if n == 0 and kind < 0.2:
                subprocess.run(["find", mnt, "-type", "f"], stdout=subprocess.DEVNULL)
            elif n == 1 and kind < 0.2:
                # A million-entry family under a sanitizer can outlast the
                # run: cut it at the end (a deadlock still shows, as every
                # other reader and the unmount would hang with it).
                try:
                    subprocess.run(["ls", "-lR", mnt], stdout=subprocess.DEVNULL,
                                   timeout=max(1.0, stop - time.time()) + 30)
                except subprocess.TimeoutExpired:
                    listings_cut[0] += 1
            else:
                f = rng.choices(files, weights)[0]
                want = serial[f]
                fd = os.open(f, os.O_RDONLY)
                try:
                    if kind < 0.1:
                        got = b"".join(iter(lambda: os.read(fd, 1 << 17), b""))
                        offset = 0
                    else:
                        offset = rng.randrange(0, len(want) + 1)
                        got = os.pread(fd, rng.choice([1, 100, 4096, 65536, 300000]), offset)
                finally:
                    os.close(fd)
                if got != want[offset:offset + len(got)] or (offset < len(want) and not got):
                    mismatches.append(f"{f} at {offset}")
                compared[n] += len(got)
            operations[n] += 1

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 120)
    hung = sum(t.is_alive() for t in threads)

    peak_kib = rss_kib(daemon.pid, "VmHWM:")
    after_kib = rss_kib(daemon.pid, "VmRSS:")
    stats = open(os.path.join(mnt, ".tracefs", "stats")).read()
    evictions = int([l for l in stats.splitlines() if l.startswith("cache_evictions")][0].split()[1])
    trace_bytes = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(trace) for n in ns) \
        if os.path.isdir(trace) else os.path.getsize(trace)
    report = {"trace": trace, "trace_bytes": trace_bytes, "readers": readers, "seconds": seconds,
              "files": len(files), "operations": sum(operations), "bytes_compared": sum(compared),
              "mismatches": len(mismatches), "hung_readers": hung, "listings_cut": listings_cut[0], "cache_budget": cache,
              "cache_evictions": evictions, "daemon_rss_after_index_kib": baseline_kib,
              "daemon_rss_after_readers_kib": after_kib, "daemon_peak_rss_kib": peak_kib}
    print(json.dumps(report))
    failed = False
    if mismatches:
        print("FAIL: mismatches:", mismatches[:10], file=sys.stderr)
        failed = True
    if hung:
        print(f"FAIL: {hung} readers hung", file=sys.stderr)
        failed = True
    # The readers may add the cache budget plus per-thread buffers (16 FUSE
    # threads, up to 64 KiB of rendering each, malloc arenas): 64 MiB slack.
    # Sanitizer builds only report (their allocators hold much more).
    allowed_kib = baseline_kib + parse_size(cache) // 1024 + 64 * 1024
    if after_kib > allowed_kib and not os.environ.get("TRACEFS_SANITIZED"):
        print(f"FAIL: daemon RSS {after_kib} KiB after the readers, over index {baseline_kib} KiB "
              f"+ budget {cache} + 64 MiB", file=sys.stderr)
        failed = True
    sys.exit(1 if failed else 0)
finally:
    unmount()
