#!/usr/bin/env python3
"""Damaged XRay logs and binaries: tracefs must report clear errors, mount
what is readable and never crash or hang."""
import os
import random
import struct
import subprocess
import sys
import tempfile

tracefs = os.environ['TRACEFS']
data = os.path.join(os.environ['TRACEFS_SOURCE_ROOT'], 'tests', 'data', 'xray')
failures = []
sys.path.insert(0, os.path.join(os.environ['TRACEFS_SOURCE_ROOT'], 'tests'))
from offline_files import read_files  # noqa: E402
READ = ['events.yaml', 'events', 'export/chrome.json', 'functions/account.csv', 'errors', 'info.json']

def run(args, env_extra=None, timeout=60):
    env = dict(os.environ)
    env['TRACEFS_FORMAT'] = 'xray'
    env.pop('TRACEFS_XRAY_BINARY', None)
    env.update(env_extra or {})
    try:
        r = subprocess.run([tracefs] + args, env=env, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return r

def read_all(label, path, binary=None, expect_error=None, expect_open=True):
    extra = {'TRACEFS_XRAY_BINARY': binary} if binary else None
    r = run(['ls', path], extra)
    if r is None:
        failures.append(f'{label}: ls hangs')
        return
    if r.returncode < 0 or r.returncode >= 128 or b'Sanitizer' in r.stderr:
        failures.append(f'{label}: crash {r.returncode} {r.stderr[-300:]!r}')
        return
    if r.returncode != 0:
        if expect_open:
            failures.append(f'{label}: does not open: {r.stderr.decode(errors="replace").strip()}')
        elif b'xray' not in r.stderr.lower() and b'header' not in r.stderr.lower():
            failures.append(f'{label}: unclear failure: {r.stderr!r}')
        return
    if not expect_open:
        failures.append(f'{label}: opened but should not')
    env = dict(os.environ, TRACEFS_FORMAT='xray')
    env.pop('TRACEFS_XRAY_BINARY', None)
    env.update(extra or {})
    try:
        files, _kinds, stat, cat = read_files(tracefs, path, READ, env)
    except (subprocess.TimeoutExpired, ValueError) as e:
        failures.append(f'{label}: reading {" ".join(READ)}: {e}')
        return
    for r in (stat, cat):
        if r is None or r.returncode < 0 or r.returncode >= 128 or b'Sanitizer' in r.stderr:
            failures.append(f'{label}: reading {" ".join(READ)} crashed: {r and r.stderr[-300:]!r}')
            return
    if expect_error is not None:
        errors = files.get('errors', b'').decode(errors='replace')
        if expect_error not in errors:
            failures.append(f'{label}: /errors lacks {expect_error!r}: {errors[:300]!r}')

def log(name):
    return open(os.path.join(data, name), 'rb').read()

with tempfile.TemporaryDirectory() as tmp:
    os.environ['XDG_CACHE_HOME'] = os.path.join(tmp, 'cache')
    def write(name, content):
        path = os.path.join(tmp, name)
        with open(path, 'wb') as f:
            f.write(content)
        return path

    fdr = log('args.fdr-emu.xray')
    basic = log('args.basic-emu.xray')
    # Headers that are not XRay at all.
    read_all('version 9', write('v9', struct.pack('<HH', 9, 1) + fdr[4:]), expect_open=False)
    read_all('type 7', write('t7', struct.pack('<HH', 5, 7) + fdr[4:]), expect_open=False)
    read_all('short', write('short', fdr[:20]), expect_open=False)
    read_all('header only', write('hdr', fdr[:32]))
    # Buffer extents past EOF.
    bad = bytearray(fdr)
    struct.pack_into('<Q', bad, 33, 1 << 40)
    read_all('extents past EOF', write('ext', bytes(bad)), expect_error='past the end')
    # Unknown metadata record kind (first record of the first buffer).
    bad = bytearray(fdr)
    bad[48] = (15 << 1) | 1
    read_all('metadata kind 15', write('kind', bytes(bad)), expect_error='unknown metadata record kind')
    # Function record kind out of range: the first function record after the preamble.
    bad = bytearray(fdr)
    pos = 48
    while pos < len(bad) and bad[pos] & 1:
        pos += 16
    bad[pos] = (bad[pos] & ~0x0e) | (6 << 1)
    read_all('function kind 6', write('fkind', bytes(bad)), expect_error='unknown kind')
    # Custom event size past its buffer.
    custom = bytearray(log('events_custom.fdr-emu.xray'))
    at = custom.find(b'\x0b', 48)
    while at >= 0 and (at - 48) % 8:
        at = custom.find(b'\x0b', at + 1)
    if at > 0:
        struct.pack_into('<i', custom, at + 1, 1 << 20)
        read_all('custom event size', write('csize', bytes(custom)), expect_error='runs past its buffer')
    # Typed-event logs (cut by the runtime): every record up to the cut.
    read_all('typed events', os.path.join(data, 'events_typed.fdr-emu.xray'), expect_error='cut off')
    # Basic log cut mid-record and with an unknown record type.
    read_all('basic cut', write('bcut', basic[:-7]), expect_error='trailing bytes')
    # A basic log cut inside its first record's header is still found as
    # XRay (the probe looks at the record's type byte only when it is there).
    for cut in (34, 35):
        r = run(['ls', write(f'bhead{cut}', basic[:cut])], {'TRACEFS_FORMAT': ''})
        if r is None or r.returncode != 0:
            failures.append(f'basic cut at {cut}: not found as XRay: {r and r.stderr!r}')
    bad = bytearray(basic)
    struct.pack_into('<H', bad, 32, 9)
    read_all('basic type', write('btype', bytes(bad)), expect_error='unknown type')
    # Binaries: not ELF, no instrumentation map, function ids past the map.
    read_all('binary not ELF', os.path.join(data, 'args.fdr-emu.xray'),
             binary=os.path.join(data, 'ref-digests.json'), expect_error='not an ELF')
    read_all('binary without map', os.path.join(data, 'args.fdr-emu.xray'), binary='/bin/sh',
             expect_error='no xray_instr_map')
    read_all('ids past map', os.path.join(data, 'args.fdr-emu.xray'), binary=os.path.join(data, 'bin', 'fib'),
             expect_error='not in the binary')
    read_all('binary missing', os.path.join(data, 'args.fdr-emu.xray'), binary=os.path.join(tmp, 'nope'),
             expect_error='cannot open')
    # Random truncations and byte flips of every small log.
    rng = random.Random(5)
    for name in sorted(os.listdir(data)):
        if not name.endswith('.xray') or os.path.getsize(os.path.join(data, name)) > 20000:
            continue
        content = log(name)
        for i in range(6):
            cut = rng.randrange(32, len(content))
            read_all(f'{name} cut at {cut}', write('cut', content[:cut]))
            flipped = bytearray(content)
            for _ in range(8):
                flipped[rng.randrange(32, len(content))] = rng.randrange(256)
            read_all(f'{name} flips {i}', write('flip', bytes(flipped)))

for failure in failures:
    print('FAIL', failure)
print(f'{len(failures)} failures')
sys.exit(1 if failures else 0)
