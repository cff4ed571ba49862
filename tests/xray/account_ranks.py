#!/usr/bin/env python3
"""Exact median, p90 and p99 in functions/<id>/stats (and so account.csv)
however the index finds them: a synthetic FDR v5 log, made here, of one
thread whose calls have known durations:
  function 1    600,000 calls inside one of the index pass's coarse buckets
                (too many to collect in one walk: a histogram finds them)
  function 2    3,000 calls over a few coarse buckets (collected)
  functions 3-152  three calls each: the first of them take the rest of
                the coarse histograms' budget, the later ones start from
                min and max
  function 200  600,000 calls, no coarse histogram, durations spread so
                wide that a histogram walk narrows them and a second walk
                collects them
Checked against the ranks llvm-xray account takes (nth_element at n/2,
floor(n*0.9), floor(n*0.99)), with and without the saved index."""
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

tracefs = os.environ['TRACEFS']
failures = []
RECORDS_PER_BUFFER = 4000


def meta(kind, payload=b''):
    return bytes([(kind << 1) | 1]) + payload.ljust(15, b'\0')


def function(kind, func_id, delta):
    return struct.pack('<II', (func_id << 4) | (kind << 1), delta)


def clustered(n, rng):
    """n durations inside the coarse bucket [2^20, 2^20 + 2^15), about 20
    alike, but distinct around each rank llvm-xray takes (a rank off by
    one shows: a cycle is 1e-9 s here)."""
    ranks = (n // 2, int(n * 0.9), int(n * 0.99))
    values, level = [], 0
    for i in range(n):
        if i % 20 == 0 or any(abs(i - r) <= 50 for r in ranks):
            level += 1
        values.append((1 << 20) + level)
    assert level < 1 << 15
    rng.shuffle(values)
    return values


def make_calls(rng):
    one = clustered(600_000, rng)
    calls = [(1, one[0])]
    spread = list(range(3000))
    rng.shuffle(spread)
    calls += [(2, 1000 + 3 * k) for k in spread]
    for func in range(3, 153):
        calls += [(func, 10 + func), (func, 20 + func), (func, 30 + func)]
    calls += [(1, d) for d in one[1:]]
    spread = list(range(1, 600_001))
    rng.shuffle(spread)
    calls += [(200, 37 * k) for k in spread]
    return calls


def write_log(path, calls):
    """One thread; each buffer starts from an absolute TSC; an enter 5
    cycles after the last exit, its exit `duration` cycles later."""
    out = [struct.pack('<HHIQQ', 5, 1, 3, 1_000_000_000, 1 << 16).ljust(32, b'\0')]
    tsc = 1_000_000
    per_buffer = RECORDS_PER_BUFFER // 2
    for serial, first in enumerate(range(0, len(calls), per_buffer)):
        body = [meta(0, struct.pack('<i', 42)), meta(4, struct.pack('<qi', 1_700_000_000 + serial, serial + 1)),
                meta(9, struct.pack('<i', 7)), meta(2, struct.pack('<HQ', 0, tsc))]
        for func, duration in calls[first:first + per_buffer]:
            body.append(function(0, func, 5))
            body.append(function(1, func, duration))
            tsc += 5 + duration
        content = b''.join(body)
        out.append(meta(7, struct.pack('<Q', len(content))) + content)
    with open(path, 'wb') as f:
        f.write(b''.join(out))


def expected_stats(calls):
    durations = {}
    for func, duration in calls:
        durations.setdefault(func, []).append(duration)
    files = {}
    for func in sorted(durations):
        d = sorted(durations[func])
        n = len(d)
        files[f'functions/{func}/stats'] = (
            f'id {func}\ncount {n}\nmin {d[0] / 1e9:e}\nmedian {d[n // 2] / 1e9:e}\n'
            f'p90 {d[int(n * 0.9)] / 1e9:e}\np99 {d[int(n * 0.99)] / 1e9:e}\nmax {d[-1] / 1e9:e}\n'
            f'sum {sum(d) / 1e9:e}\n')
    return files


def check(log, label, env, files):
    r = subprocess.run([tracefs, 'cat', log, *files], capture_output=True, env=env, timeout=600)
    if r.returncode != 0:
        failures.append(f'{label}: cat exit {r.returncode}: {r.stderr.decode()[:200]}')
        return
    if r.stdout.decode() == ''.join(files.values()):
        return
    for path, want in files.items():
        got = subprocess.run([tracefs, 'cat', log, path], capture_output=True, env=env, timeout=600).stdout.decode()
        if got != want:
            failures.append(f'{label}: {path} is {got!r}, want {want!r}')
            return


def main():
    work = tempfile.mkdtemp(prefix='tracefs-xray-ranks-')
    try:
        calls = make_calls(random.Random(2611))
        log = os.path.join(work, 'ranks.xray')
        write_log(log, calls)
        files = expected_stats(calls)
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, 'cache'))
        check(log, 'indexed', env, files)
        check(log, 'saved index', env, files)
        print(f'{len(calls)} calls of {len(files)} functions, {os.path.getsize(log)} bytes checked', flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print('FAIL', f)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
