#!/usr/bin/env python3
"""FXT tables bounded by the file's size (issue 27): a real trace followed
by 5 M provider-section records (switching between two providers) (8 bytes each, 24 bytes each in the index
if kept) is read within the memory rule (peak RSS <= cache_size + 2 % of
the file + 16 MiB), its real records first, with an /errors line where
the index's tables reach their budget."""
import os
import resource
import struct
import subprocess
import sys
import tempfile

TRACEFS = os.environ['TRACEFS']
DATA = os.path.join(os.environ['TRACEFS_SOURCE_ROOT'], 'tests', 'data', 'fxt')
CACHE = 8 << 20
failures = []


def main():
    real = open(os.path.join(DATA, 'fxt-cpp_all-records.fxt'), 'rb').read()
    # Metadata: provider section, providers 0 and 1 in turn, so that every
    # record changes the provider in force (a repeat of the one in force is
    # not kept, so it would cost the index nothing).
    switch = struct.pack('<QQ', (1 << 4) | (2 << 16), (1 << 4) | (2 << 16) | (1 << 20))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'switches.fxt')
        # Written in small pieces: a forked child's peak RSS counts what
        # this process held when it forked.
        with open(path, 'wb') as f:
            f.write(real)
            piece = switch * 50000
            for _ in range(50):
                f.write(piece)
        env = dict(os.environ, TRACEFS_CACHE_SIZE=str(CACHE), XDG_CACHE_HOME=os.path.join(tmp, 'cache'))
        p = subprocess.run([TRACEFS, 'cat', path, 'errors'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=env, timeout=120)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        limit = (CACHE + os.path.getsize(path) // 50 + (16 << 20)) // 1024
        print(f'{os.path.getsize(path)} bytes: peak {peak} KiB, rule {limit} KiB')
        sanitized = b'libasan' in subprocess.run(['ldd', TRACEFS], stdout=subprocess.PIPE).stdout
        if peak > limit and not sanitized:
            failures.append(f'peak {peak} KiB over {limit} KiB')
        if b'reach their budget' not in p.stdout:
            failures.append(f'no budget line in /errors: {p.stdout[-300:]!r} {p.stderr[:300]!r}')
        ours = subprocess.run([TRACEFS, 'cat', path, 'events.jsonl'], stdout=subprocess.PIPE, env=env).stdout
        theirs = subprocess.run([TRACEFS, 'cat', os.path.join(DATA, 'fxt-cpp_all-records.fxt'), 'events.jsonl'],
                                stdout=subprocess.PIPE, env=env).stdout
        if not theirs or ours != theirs:
            failures.append('the real records differ from the trace alone')
    for f in failures:
        print('FAIL', f)
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
