#!/usr/bin/env python3
"""Time order and calls without tables: synthetic FDR v5 logs, made here,
whose threads' TSCs go back (a CPU migration to a CPU whose TSC is behind, a
TSC wrap), with records of equal TSC in different threads, and calls open
across many checkpoints (a main() around everything, deep nesting).
Checks events.yaml against llvm-xray-14 convert (when installed), and
checks threads/<tid>/events, threads/<tid>/calls, threads/<tid>/stack,
functions/<id>/calls and functions/<id>/stats against calls paired here
from events.yaml (an exit closes the innermost open frame of its function,
frames above it are cut), with and without the saved index and with a
small cache."""
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile

tracefs = os.environ['TRACEFS']
llvm_xray = shutil.which('llvm-xray-14')
failures = []


def meta(kind, payload=b''):
    return bytes([(kind << 1) | 1]) + payload.ljust(15, b'\0')


def function(kind, func_id, delta):
    return struct.pack('<II', (func_id << 4) | (kind << 1), delta)


class Thread:
    def __init__(self, tid, pid, rng):
        self.tid, self.pid, self.rng = tid, pid, rng
        self.tsc, self.stack = 1_000_000, []

    def records(self, count, back=None):
        """`count` function records; back = ('cpu', tsc) or ('wrap', tsc) placed
        in the middle sets the TSC base lower."""
        out = [meta(2, struct.pack('<HQ', self.rng.randrange(4), self.tsc))]
        for i in range(count):
            if back and i == count // 2:
                kind, tsc = back
                out.append(meta(2, struct.pack('<HQ', 7, tsc)) if kind == 'cpu' else meta(3, struct.pack('<Q', tsc)))
                self.tsc = tsc
            delta = self.rng.choice((0, 0, 1, 3, 10, 250))
            self.tsc += delta
            if not self.stack:
                self.stack.append(1)   # main(), open for good
                out.append(function(0, 1, delta))
            elif len(self.stack) < 12 and self.rng.random() < 0.52:
                f = self.rng.randrange(2, 9)
                self.stack.append(f)
                out.append(function(0, f, delta))
            elif len(self.stack) > 1:
                f = self.stack.pop()
                if self.rng.random() < 0.03 and len(self.stack) > 2:
                    out.append(function(1, self.stack[1], delta))   # closes a lower frame: frames above are cut
                    del self.stack[1:]
                else:
                    out.append(function(2 if self.rng.random() < 0.1 else 1, f, delta))
            else:
                out.append(function(0, 2, delta))
                self.stack.append(2)
        return out

    def buffer(self, body, serial):
        # llvm-xray sorts each thread's blocks by wall time (seconds and
        # nanoseconds both smaller): rising in both keeps them in file order
        wall = struct.pack('<qi', 1700000000 + serial, 1000 * serial + 1)
        content = meta(0, struct.pack('<i', self.tid)) + meta(4, wall) + \
            meta(9, struct.pack('<i', self.pid)) + b''.join(body)
        return meta(7, struct.pack('<Q', len(content))) + content


def make_log(path, seed, threads, buffers, per_buffer, backs):
    rng = random.Random(seed)
    ts = [Thread(100 + i, 7, rng) for i in range(threads)]
    out = [struct.pack('<HHIQQ', 5, 1, 3, 1_000_000_000, 1 << 16).ljust(32, b'\0')]
    for b in range(buffers):
        t = ts[b % threads]
        out.append(t.buffer(t.records(per_buffer, backs.get(b)), b))
    with open(path, 'wb') as f:
        f.write(b''.join(out))


def cat(log, *paths, env=None):
    r = subprocess.run([tracefs, 'cat', log, *paths], capture_output=True, env=env, timeout=600)
    if r.returncode != 0:
        failures.append(f'{log}: cat {paths[0]}: exit {r.returncode}: {r.stderr.decode()[:200]}')
    return r.stdout.decode()


def ls(log, path, env):
    return subprocess.run([tracefs, 'ls', log, path], capture_output=True, env=env, timeout=600).stdout.decode().split()


RECORD = re.compile(r"  - \{ type: 0, func-id: (\d+), function: '?\d+'?, cpu: (\d+), thread: (\d+), "
                    r"process: \d+, kind: ([a-z-]+), tsc: (\d+), data: '' \}")


def expected(yaml):
    """Per thread: event lines and calls; per function: calls in start order and durations."""
    events, stacks, calls, order = {}, {}, {}, []
    for line in yaml.splitlines():
        m = RECORD.fullmatch(line)
        if not m:
            continue
        func, cpu, tid, kind, tsc = int(m[1]), int(m[2]), int(m[3]), m[4], int(m[5])
        events.setdefault(tid, []).append(f'{tsc} {cpu} {kind} {func} tsc={tsc} fn={func}')
        stack = stacks.setdefault(tid, [])
        if kind == 'function-enter':
            call = {'tid': tid, 'func': func, 'start': tsc, 'end': None, 'depth': len(stack)}
            stack.append(call)
            calls.setdefault(tid, []).append(call)
            order.append(call)
        else:
            for d in range(len(stack) - 1, -1, -1):
                if stack[d]['func'] == func:
                    stack[d]['end'] = max(tsc, stack[d]['start'])
                    del stack[d:]
                    break
    return events, calls, order


def check(log, label, env, reference):
    """events.yaml against llvm-xray convert's YAML (reference; None where
    llvm-xray is not installed) and in TSC order; every thread's events,
    calls and stack and every function's calls and stats against what the
    YAML implies (read with one `tracefs cat` of all those paths, and path
    by path to name the one that differs)."""
    yaml = cat(log, 'events.yaml', env=env)
    if reference is not None and reference != yaml:
        failures.append(f'{label}: events.yaml differs from llvm-xray-14 convert')
    tscs = [int(m[5]) for m in map(RECORD.fullmatch, yaml.splitlines()) if m]
    if tscs != sorted(tscs) or not tscs:
        failures.append(f'{label}: events.yaml is not in TSC order')
    files = expected_files(yaml)
    if cat(log, *files, env=env) == ''.join(files.values()):
        return
    differing = [path for path, want in files.items() if cat(log, path, env=env) != want]
    failures.append(f'{label}: ' + (', '.join(differing) + ' differ' if differing else
                                    'one cat of them all differs from the files read one by one'))


def lines(items):
    return ''.join(f'{item}\n' for item in items)


def expected_files(yaml):
    """The per-thread and per-function files events.yaml implies, by path."""
    events, calls, order = expected(yaml)
    files = {}
    for tid in sorted(events):
        files[f'threads/{tid}/events'] = lines(events[tid])
        done = [c for c in calls.get(tid, []) if c['end'] is not None]
        files[f'threads/{tid}/calls'] = lines(f"{c['start']} {c['end'] - c['start']} {c['depth']} {c['func']} "
                                              f"fn={c['func']}" for c in done)
        files[f'threads/{tid}/stack'] = lines(f"{c['start']} {c['end'] - c['start']} {'  ' * c['depth']}{c['func']}"
                                              for c in done)
    for func in sorted({c['func'] for c in order if c['end'] is not None}):
        done = [c for c in order if c['func'] == func and c['end'] is not None]
        files[f'functions/{func}/calls'] = lines(f"{c['start']} {c['end'] - c['start']} {c['tid']} {c['depth']}"
                                                 for c in done)
        d = sorted((c['end'] - c['start']) / 1e9 for c in done)
        n = len(d)
        files[f'functions/{func}/stats'] = (
            f'id {func}\ncount {n}\nmin {d[0]:e}\nmedian {d[n // 2]:e}\np90 {d[int(n * 0.9)]:e}\n'
            f'p99 {d[int(n * 0.99)]:e}\nmax {d[-1]:e}\nsum {sum(c["end"] - c["start"] for c in done) / 1e9:e}\n')
    return files


def convert(log, label):
    """llvm-xray convert's YAML of the log, or None without llvm-xray."""
    if not llvm_xray:
        return None
    ref = subprocess.run([llvm_xray, 'convert', '--output-format=yaml', log], capture_output=True, timeout=600)
    if ref.returncode != 0:
        failures.append(f'{label}: llvm-xray convert failed: {ref.stderr.decode()[:200]}')
        return None
    return ref.stdout.decode()


def check_run_limit(work):
    """A thread whose TSC goes back at every record: runs past the table
    budget (LIMIT_XRAY_RUN_BYTES each against 4 MiB + 1 % of the file:
    512 runs here) stop the index with an /errors line; what was indexed
    is listed in order."""
    log = os.path.join(work, 'runs.xray')
    body = []
    for i in range(20000):
        body.append(meta(2, struct.pack('<HQ', 0, 1_000_000 - i)))
        body.append(function(0, 2, 1))
    t = Thread(5, 7, random.Random(0))
    with open(log, 'wb') as f:
        f.write(struct.pack('<HHIQQ', 5, 1, 3, 1_000_000_000, 1 << 16).ljust(32, b'\0') + t.buffer(body, 0))
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, 'cache-runs'))
    errors = cat(log, 'errors', env=env)
    if "runs of rising TSC reach the index's budget" not in errors:
        failures.append(f'runs: no /errors line about the run budget: {errors[:200]!r}')
    tscs = [int(m[5]) for m in map(RECORD.fullmatch, cat(log, 'events.yaml', env=env).splitlines()) if m]
    if tscs != sorted(tscs) or not 500 <= len(tscs) < 20000:
        failures.append(f'runs: {len(tscs)} records listed, or not in order')
    print(f'runs: {len(tscs)} of 20000 records indexed, /errors says why', flush=True)


def main():
    work = tempfile.mkdtemp(prefix='tracefs-xray-order-')
    try:
        cases = [
            # a CPU whose TSC is behind, in thread 0's third buffer; a TSC wrap in thread 1's fourth
            ('migration', 1, 3, 12, 3000, {6: ('cpu', 900_000), 10: ('wrap', 5)}),
            # one thread, many intervals, no going back
            ('one-thread', 2, 1, 20, 4000, {}),
            # many runs: every buffer of both threads goes back
            ('many-runs', 3, 2, 40, 500, {b: ('cpu', 1_000_000 + b) for b in range(40)}),
        ]
        for name, seed, threads, buffers, per_buffer, backs in cases:
            log = os.path.join(work, name + '.xray')
            make_log(log, seed, threads, buffers, per_buffer, backs)
            base = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, 'cache-' + name))
            reference = convert(log, name)
            check(log, name + ' (indexed)', base, reference)
            check(log, name + ' (saved index)', base, reference)
            check(log, name + ' (1M cache)', dict(base, TRACEFS_CACHE_SIZE='1M'), reference)
            print(f'{name}: {os.path.getsize(log)} bytes checked', flush=True)
        check_run_limit(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print('FAIL', f)
    print('llvm-xray-14:', 'compared' if llvm_xray else 'not installed, events.yaml checked for order only')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
