#!/usr/bin/env python3
"""apitrace: damaged input never crashes or hangs tracefs, and the damage
shows in /errors: truncated streams and chunks, flipped bytes in every
container, varints longer than 10 bytes, counts past the end, values
nested too deeply, unknown tags, undefined signatures, a leave for an
unknown call."""
import json
import os
import random
import subprocess
import sys
import tempfile

TRACEFS = os.environ['TRACEFS']
DATA = os.path.join(os.environ['TRACEFS_SOURCE_ROOT'], 'tests', 'data', 'apitrace')
failures = []


def run(path, member, timeout=60):
    env = dict(os.environ, TRACEFS_FORMAT='apitrace')
    try:
        p = subprocess.run([TRACEFS, 'cat', path, member], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        failures.append(f'{path} {member}: hung')
        return None
    if b'Sanitizer' in p.stderr or b'runtime error' in p.stderr:
        failures.append(f'{path} {member}: {p.stderr[:300]!r}')
        return None
    if p.returncode < 0 or p.returncode > 2:
        failures.append(f'{path} {member}: exit {p.returncode} {p.stderr[:200]!r}')
        return None
    return p


def check_file(path, label, expect_error=None):
    """Reads every interesting file; expect_error: text that /errors must hold."""
    for member in ('events', 'events-verbose', 'calls/0.json', 'frames/0', 'info.json'):
        run(path, member)
    if expect_error is not None:
        p = run(path, 'errors')
        if p is None:
            return
        text = p.stdout.decode(errors='replace') + p.stderr.decode(errors='replace')
        if expect_error not in text:
            failures.append(f'{label}: expected "{expect_error}" in errors, got {text[:300]!r}')


def uint(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def string(s):
    b = s.encode()
    return uint(len(b)) + b


HEADER = b'\x06\x06' + string('process.name') + string('/bin/x') + b'\x00'


def enter(sig_id, name, args, details, thread=0, define=True):
    sig = uint(sig_id) + (string(name) + uint(len(args)) + b''.join(string(a) for a in args) if define else b'')
    return b'\x00' + uint(thread) + sig + details + b'\x00'


def leave(no, details=b''):
    return b'\x01' + uint(no) + details + b'\x00'


def crafted(tmp):
    good = HEADER + enter(1, 'glFoo', ['a'], b'\x01\x00\x04' + uint(7)) + leave(0)
    cases = {
        'good': (good, None),
        'long-varint': (HEADER + b'\x00' + b'\x80' * 11 + b'\x00', 'cut off in its enter event'),
        'count-past-end': (HEADER + enter(1, 'f', ['a'], b'\x01\x00\x0b' + uint(1 << 40)) + leave(0),
                           'array count larger than the bytes left'),
        'blob-past-end': (HEADER + enter(1, 'f', ['a'], b'\x01\x00\x08' + uint(1 << 30)) + leave(0),
                          'blob larger than the bytes left'),
        'deep': (HEADER + enter(1, 'f', ['a'], b'\x01\x00' + b'\x0b\x01' * 200 + b'\x00') + leave(0),
                 'values nested too deeply'),
        'unknown-tag': (HEADER + enter(1, 'f', ['a'], b'\x01\x00\x42') + leave(0), 'unknown value type'),
        'undefined-enum': (HEADER + enter(1, 'f', ['a'], b'\x01\x00\x09' + uint(5)) + leave(0),
                           'call 0 (f): bad enum value'),
        'undefined-function': (HEADER + enter(9, 'f', [], b'', define=False), 'bad function signature'),
        'unknown-leave': (good + leave(42), 'leave for unknown call 42'),
        'unknown-event': (good + b'\x07', 'unknown event 0x07'),
        'unknown-detail': (HEADER + enter(1, 'f', [], b'\x09'), 'unknown call detail'),
        'cut-mid-call': (good[:-5], 'call 0 (glFoo): bad integer'),
        'cut-before-leave': (good[:-3], ''),
        'thread-per-call': (HEADER + enter(1, 'f', [], b'') + leave(0) +
                            b''.join(enter(1, 'f', [], b'', thread=n, define=False) + leave(n)
                                     for n in range(1, 70000)),
                            'threads: the rest have no threads/ directory'),
    }
    for label, (data, expect) in cases.items():
        path = os.path.join(tmp, label + '.raw')
        with open(path, 'wb') as f:
            f.write(data)
        check_file(path, label, expect)
    p = run(os.path.join(tmp, 'good.raw'), 'events-verbose')
    if p and b'0 @0 glFoo(a = 7)\n' not in p.stdout:
        failures.append(f'good crafted trace renders {p.stdout!r}')
    versions(tmp)


def versions(tmp):
    """Streams older than v6 and the value types Linux GL never writes,
    with the text apitrace's dumper gives them."""
    def old_enter(sig_id, name, args, details):
        return (b'\x00' + uint(sig_id) + string(name) + uint(len(args)) + b''.join(string(a) for a in args)
                + details + b'\x00')
    cases = {
        # v2: no thread in the enter event (detail 0x03 instead), enums
        # defined with one name and value each.
        'v2.raw': (b'\x02' + old_enter(1, 'glEnable', ['cap'], b'\x03' + uint(3) + b'\x01\x00\x09' + uint(1)
                                       + string('GL_BLEND') + b'\x04' + uint(0x0BE2)) + leave(0),
                   b'0 @3 glEnable(cap = GL_BLEND)\n'),
        # v5: thread in the enter event, new enums, wide strings, repr,
        # bitmask remainder, anonymous struct member, unset argument.
        'v5.raw': (b'\x05' + b'\x00' + uint(2) + uint(7) + string('f') + uint(5)
                   + b''.join(string(a) for a in ('w', 'r', 'm', 's', 'u'))
                   + b'\x01\x00\x0f' + uint(3) + uint(ord('h')) + uint(ord('i')) + uint(0x263A)
                   + b'\x01\x01\x0e\x04' + uint(5) + b'\x04' + uint(6)
                   + b'\x01\x02\x0a' + uint(1) + uint(2) + string('A') + uint(1) + string('B') + uint(4) + uint(0x13)
                   + b'\x01\x03\x0c' + uint(1) + string('S') + uint(2) + string('x') + string('')
                   + b'\x04' + uint(1) + b'\x0c' + uint(2) + string('T') + uint(1) + string('y') + b'\x03' + uint(2)
                   + b'\x00' + leave(0, b'\x02\x06' + bytes(8)),
                   b'0 @2 f(w = L"hi\\772", r = 5, m = A | 0x12, s = {x = 1, y = -2}, u = ?) = 0\n'),
    }
    # Arguments past the signature's names, as apitrace dumps them.
    cases['extra-args.raw'] = (HEADER + enter(1, 'glFoo', ['a'], b'\x01\x00\x04' + uint(7) + b'\x01\x02\x04' + uint(9))
                               + leave(0), b'// process.name = "/bin/x"\n0 @0 glFoo(a = 7, arg1 = ?, arg2 = 9)\n')
    for name, (data, want) in cases.items():
        path = os.path.join(tmp, name)
        with open(path, 'wb') as f:
            f.write(data)
        p = run(path, 'events-verbose')
        if p and p.stdout != want:
            failures.append(f'{name}: {p.stdout!r}, expected {want!r}')
        p = run(path, 'errors')
        if p and p.stdout:
            failures.append(f'{name}: errors {p.stdout!r}')
    p = run(os.path.join(tmp, 'extra-args.raw'), 'calls/0.json')
    if p and json.loads(p.stdout)['args'] != {'a': 7, 'arg1': None, 'arg2': 9}:
        failures.append(f'extra-args.raw: calls/0.json {p.stdout!r}')


def mutations(tmp):
    rng = random.Random(1234)
    for name in ('glprog-small.trace', 'glprog-small.zlib.trace', 'glprog-small.brotli.trace',
                 'glprog-small.zstd-seekable.trace', 'glprog-small.zstd.trace'):
        original = open(os.path.join(DATA, name), 'rb').read()
        for i in range(12):
            data = bytearray(original)
            if i < 4:
                data = data[:rng.randrange(1, len(data))]
            else:
                for _ in range(1 + i):
                    data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            path = os.path.join(tmp, f'{name}.{i}')
            with open(path, 'wb') as f:
                f.write(data)
            check_file(path, path)
    # The raw stream cut everywhere (every 997th byte).
    raw = subprocess.run([TRACEFS, 'cat', os.path.join(DATA, 'glprog-small.trace'), 'raw/stream'],
                         stdout=subprocess.PIPE, check=True).stdout
    for cut in range(3, len(raw), 9973):
        path = os.path.join(tmp, f'raw.{cut}')
        with open(path, 'wb') as f:
            f.write(raw[:cut])
        check_file(path, path)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        crafted(tmp)
        mutations(tmp)
    for f in failures:
        print('FAIL:', f)
    print(f'{len(failures)} failures')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
