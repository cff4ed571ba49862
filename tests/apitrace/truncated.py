#!/usr/bin/env python3
"""A single-chunk apitrace trace cut anywhere keeps the calls before the
cut (issue 27), in every container: snappy (glxgears-2s.trace's first
chunk), gzip, brotli and zstd (one frame, with and without its content
size) made from glxgears-2s's stream, and the corpus's single-chunk
glprog-small traces.  At each of 19 cuts, `events` must be the uncut
trace's first lines (then the calls left unfinished), grow with the cut,
hold calls from half the file on (most of glxgears' at 95 %), and /errors
must say where the stream was cut.
usage: truncated.py [RR_BLOCKS]   (rr's brotli block packer, for brotli)"""
import gzip
import os
import struct
import subprocess
import sys
import tempfile

TRACEFS = os.environ['TRACEFS']
DATA = os.path.join(os.environ['TRACEFS_SOURCE_ROOT'], 'tests', 'data', 'apitrace')
failures = []


def tracefs(tmp, *args):
    env = dict(os.environ, TRACEFS_FORMAT='apitrace', XDG_CACHE_HOME=os.path.join(tmp, 'cache'))
    return subprocess.run([TRACEFS, 'cat', *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                          timeout=120)


def lines(tmp, path):
    return tracefs(tmp, path, 'events').stdout.decode(errors='replace').splitlines()


def containers(tmp, blocks):
    """label -> container bytes, all of one chunk."""
    raw = tracefs(tmp, os.path.join(DATA, 'glxgears-2s.trace'), '.tracefs/streams/stream').stdout
    snappy = open(os.path.join(DATA, 'glxgears-2s.trace'), 'rb').read()
    first = struct.unpack('<I', snappy[2:6])[0]
    made = {
        'snappy': snappy[:6 + first],
        'gzip': gzip.compress(raw, 9),
        'zstd': subprocess.run(['zstd', '-q', '-19', '-c', '-'], input=raw, stdout=subprocess.PIPE,
                               check=True).stdout,
        'zstd-sized': None,
    }
    # A frame with its content size in the header (zstd writes it for files).
    path = os.path.join(tmp, 'stream.raw')
    with open(path, 'wb') as f:
        f.write(raw)
    made['zstd-sized'] = subprocess.run(['zstd', '-q', '-19', '-c', path], stdout=subprocess.PIPE,
                                        check=True).stdout
    if blocks:
        # rr_blocks writes (u32 compressed, u32 raw, brotli stream) per block.
        packed = subprocess.run([blocks, 'pack', str(1 << 26)], input=raw, stdout=subprocess.PIPE,
                                check=True).stdout
        made['brotli'] = packed[8:]
    for name in ('glprog-small.trace', 'glprog-small.zlib.trace', 'glprog-small.brotli.trace',
                 'glprog-small.zstd.trace', 'glprog-small.zstd-seekable.trace'):
        made[name] = open(os.path.join(DATA, name), 'rb').read()
    return made


def check(tmp, label, data):
    whole = os.path.join(tmp, label + '.whole')
    with open(whole, 'wb') as f:
        f.write(data)
    ref = lines(tmp, whole)
    if len(ref) < 100:
        failures.append(f'{label}: the uncut trace renders {len(ref)} lines')
        return
    served = []
    for k in range(1, 20):
        cut = len(data) * k // 20
        path = os.path.join(tmp, f'{label}.cut{k}')
        with open(path, 'wb') as f:
            f.write(data[:cut])
        got = lines(tmp, path)
        same = 0
        while same < len(got) and same < len(ref) and got[same] == ref[same]:
            same += 1
        # After the common prefix only calls never left may follow (apitrace
        # dump lists them last); they are the ones still open at the cut.
        if len(got) - same > 64:
            failures.append(f'{label} cut at {cut}: {len(got) - same} lines differ from the uncut trace')
        served.append(same)
        if k >= 10 and same <= 1:         # the header line alone
            failures.append(f'{label} cut at {cut} of {len(data)} bytes: no calls served')
        # glxgears' calls are spread evenly: 95 % of the file holds most.
        if k == 19 and not label.startswith('glprog') and same < 0.8 * len(ref):
            failures.append(f'{label} cut at 95 %: {same} of {len(ref)} lines served')
        errors = tracefs(tmp, path, 'errors')
        text = errors.stdout.decode(errors='replace') + errors.stderr.decode(errors='replace')
        if not any(w in text for w in ('cut off', 'damaged', 'cannot read', 'nothing readable', 'truncated')):
            failures.append(f'{label} cut at {cut}: /errors does not say so: {text[:200]!r}')
        os.unlink(path)
    if served != sorted(served):
        failures.append(f'{label}: calls served do not grow with the cut: {served}')
    print(f'{label}: {len(ref)} lines uncut; lines served at cuts of 5..95 %: {served}')


def main():
    blocks = sys.argv[1] if len(sys.argv) > 1 else None
    with tempfile.TemporaryDirectory() as tmp:
        for label, data in containers(tmp, blocks).items():
            check(tmp, label, data)
    for f in failures:
        print('FAIL', f)
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
