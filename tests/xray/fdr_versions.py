#!/usr/bin/env python3
"""FDR versions 1 to 4: rewrites real v5 logs in each older layout (v1:
EndOfBuffer and padding, no extents; v2: BufferExtents, no Pid; v3: Pid;
v4: custom events with absolute TSC and CPU) and checks that tracefs shows
the same records; with llvm-xray-14 installed, events.yaml must also equal
its convert output for every version."""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

tracefs = os.environ['TRACEFS']
data = os.path.join(os.environ['TRACEFS_SOURCE_ROOT'], 'tests', 'data', 'xray')
llvm_xray = shutil.which('llvm-xray-14')

def read_v5(log):
    """-> header bytes, [buffer]: buffer = dict(tid, pid, wall, items) where
    items are ('meta', bytes16) / ('func', word, abs_tsc) / ('custom', abs_tsc, payload)."""
    header, pos, buffers = log[:32], 32, []
    while pos + 16 <= len(log):
        assert log[pos] == 0x0f
        extent = struct.unpack_from('<Q', log, pos + 1)[0]
        start, end = pos + 16, pos + 16 + extent
        buf = {'items': []}
        latest, p = 0, start
        while p < end:
            b = log[p]
            if b & 1:
                rec = log[p:p + 16]
                kind = b >> 1
                if kind == 0:
                    buf['tid'] = struct.unpack_from('<i', rec, 1)[0]
                elif kind == 4:
                    buf['wall'] = rec
                elif kind == 9:
                    buf['pid'] = struct.unpack_from('<i', rec, 1)[0]
                elif kind == 2:
                    latest = struct.unpack_from('<Q', rec, 3)[0]
                    buf['items'].append(('meta', rec))
                elif kind == 3:
                    latest = struct.unpack_from('<Q', rec, 1)[0]
                    buf['items'].append(('meta', rec))
                elif kind == 6:
                    buf['items'].append(('meta', rec))
                elif kind == 5:
                    size, delta = struct.unpack_from('<ii', rec, 1)
                    latest += delta
                    buf['items'].append(('custom', latest, log[p + 16:p + 16 + size]))
                    p += size
                p += 16
            else:
                word, delta = struct.unpack_from('<II', log, p)
                latest += delta
                buf['items'].append(('func', word, latest))
                p += 8
        buffers.append(buf)
        pos = end
    return header, buffers

def meta(kind, payload):
    return bytes([(kind << 1) | 1]) + payload.ljust(15, b'\0')

def write(version, header, buffers, buffer_size):
    out = bytearray(struct.pack('<HH', version, 1) + header[4:16] + struct.pack('<QQ', buffer_size, 0))
    for buf in buffers:
        body = bytearray(meta(0, struct.pack('<i', buf['tid'])) + buf['wall'])
        if version >= 3:
            body += meta(9, struct.pack('<i', buf['pid']))
        base = cpu = 0
        for item in buf['items']:
            if item[0] == 'meta':
                rec = item[1]
                kind = rec[0] >> 1
                if kind == 2:
                    cpu, base = struct.unpack_from('<HQ', rec, 1)
                elif kind == 3:
                    base = struct.unpack_from('<Q', rec, 1)[0]
                body += rec
            elif item[0] == 'func':
                body += struct.pack('<II', item[1], item[2] - base)
                base = item[2]
            else:
                _, tsc, payload = item
                extra = struct.pack('<H', cpu) if version == 4 else b''
                body += meta(5, struct.pack('<iQ', len(payload), tsc) + extra) + payload
        if version == 1:
            body += meta(1, b'')
            assert len(body) <= buffer_size
            out += body + b'\0' * (buffer_size - len(body))
        else:
            out += meta(7, struct.pack('<Q', len(body))) + body
    return bytes(out)

def cat(path, what):
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    env.pop('TRACEFS_XRAY_BINARY', None)
    return subprocess.run([tracefs, 'cat', path, what], env=env, capture_output=True, check=True).stdout

def custom_cpu_zero(line):
    fields = line.split(b' ')
    if len(fields) > 3 and fields[3] == b'custom-event':
        fields[2] = b'0'
    return b' '.join(fields)

failures = []
with tempfile.TemporaryDirectory() as tmp:
    cache = os.path.join(tmp, 'cache')
    for name in ('args.fdr-emu.xray', 'events_custom.fdr-tsc.xray', 'threads.fdr-tsc-buf1k.xray'):
        original = open(os.path.join(data, name), 'rb').read()
        header, buffers = read_v5(original)
        want = cat(os.path.join(data, name), 'events')
        for version in (1, 2, 3, 4):
            path = os.path.join(tmp, f'{name}.v{version}')
            with open(path, 'wb') as f:
                f.write(write(version, header, buffers, 16384))
            got = cat(path, 'events')
            if version < 4:   # no CPU in older custom events: llvm shows 0
                want_here = b'\n'.join(custom_cpu_zero(line) for line in want.split(b'\n'))
            else:
                want_here = want
            if version < 3:   # no Pid: threads come in another map order, equal-TSC records too
                got, want_here = sorted(got.split(b'\n')), sorted(want_here.split(b'\n'))
            if got != want_here:
                failures.append(f'{name} as v{version}: events differ from the v5 original')
            if cat(path, 'errors'):
                failures.append(f'{name} as v{version}: errors: {cat(path, "errors")[:200]!r}')
            if llvm_xray:
                ref = subprocess.run([llvm_xray, 'convert', '--output-format=yaml', '-o', '-', path],
                                     capture_output=True)
                if ref.returncode == 0 and cat(path, 'events.yaml') != ref.stdout:
                    failures.append(f'{name} as v{version}: events.yaml differs from llvm-xray-14')
                elif ref.returncode != 0:
                    print(f'{name} v{version}: llvm-xray-14 rejects it: {ref.stderr[:200]!r}')
for failure in failures:
    print('FAIL', failure)
print(f'{len(failures)} failures' + ('' if llvm_xray else ' (llvm-xray-14 absent: YAML not compared)'))
sys.exit(1 if failures else 0)
