#!/usr/bin/env python3
"""apitrace: Brotli has no magic, so the probe decodes the start of a file
to find an apitrace header.  A stream whose first output comes after the
4 KiB head (here: a metadata block in front) is still recognised and reads
the same as the trace it wraps; random bytes a Brotli decoder happens to
swallow without error are "not a recognised trace", never a failed open."""
import gzip
import os
import random
import subprocess
import sys
import tempfile

TRACEFS = os.environ['TRACEFS']
DATA = os.path.join(os.environ['TRACEFS_SOURCE_ROOT'], 'tests', 'data', 'apitrace')
failures = []


class Bits:
    """A Brotli bit writer (RFC 7932: fields packed from the low bit up)."""

    def __init__(self):
        self.out = bytearray()
        self.acc = 0
        self.count = 0

    def put(self, value, width):
        self.acc |= value << self.count
        self.count += width
        while self.count >= 8:
            self.out.append(self.acc & 0xff)
            self.acc >>= 8
            self.count -= 8

    def pad(self):
        if self.count:
            self.put(0, 8 - self.count)

    def raw(self, data):
        self.pad()
        self.out += data


def metadata_block(bits, skip):
    """ISLAST=0, MNIBBLES=0 (coded 3), reserved 0, MSKIPBYTES, MSKIPLEN-1
    in as few bytes as hold it (a zero top byte is invalid)."""
    size = max(1, ((skip - 1).bit_length() + 7) // 8)
    bits.put(0, 1)
    bits.put(3, 2)
    bits.put(0, 1)
    bits.put(size, 2)
    bits.put(skip - 1, 8 * size)
    bits.raw(bytes(random.getrandbits(8) for _ in range(skip)))


def uncompressed_block(bits, data):
    """ISLAST=0, MNIBBLES (4 to 6, as few as hold MLEN-1), MLEN-1,
    ISUNCOMPRESSED=1."""
    nibbles = max(4, ((len(data) - 1).bit_length() + 3) // 4)
    bits.put(0, 1)
    bits.put(nibbles - 4, 2)
    bits.put(len(data) - 1, 4 * nibbles)
    bits.put(1, 1)
    bits.raw(data)


def brotli_wrap(raw, skip):
    bits = Bits()
    bits.put(0, 1)                       # WBITS = 16
    if skip:
        metadata_block(bits, skip)
    for i in range(0, len(raw), 1 << 16):
        uncompressed_block(bits, raw[i:i + (1 << 16)])
    bits.put(1, 1)                       # ISLAST
    bits.put(1, 1)                       # ISLASTEMPTY
    bits.pad()
    return bytes(bits.out)


def tracefs(*args, auto=True):
    env = dict(os.environ)
    if auto:
        env.pop('TRACEFS_FORMAT', None)
    return subprocess.run([TRACEFS, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=120)


def check_wrapped(tmp, raw, skip, reference):
    path = os.path.join(tmp, f'late-output-{skip}.trace')
    with open(path, 'wb') as f:
        f.write(brotli_wrap(raw, skip))
    for member in ('events', 'calls/0.json', 'frames/0'):
        p = tracefs('cat', path, member)
        want = tracefs('cat', reference, member)
        if p.returncode != 0 or p.stdout != want.stdout:
            failures.append(f'metadata block of {skip} bytes first: {member} differs or fails: {p.stderr[:200]!r}')
    p = tracefs('cat', path, 'info.json')
    if b'"Brotli"' not in p.stdout:
        failures.append(f'metadata block of {skip} bytes first: info.json does not name Brotli: {p.stdout[:300]!r}')


def check_not_recognised(path, label):
    p = tracefs('ls', path)
    first = p.stderr.decode(errors='replace').splitlines()[:1]
    if p.returncode == 0 or not first or 'not a recognised trace' not in first[0]:
        failures.append(f'{label}: expected "not a recognised trace", got rc {p.returncode} {first}')


def check_junk(tmp):
    path = os.path.join(tmp, 'junk')
    # A metadata block that claims more bytes than the file has: a Brotli
    # decoder reads to the end of the file without output or error.
    bits = Bits()
    bits.put(0, 1)
    metadata_block(bits, 4000)
    with open(path, 'wb') as f:
        f.write(bytes(bits.out[:3000]))
    check_not_recognised(path, 'metadata block past the end')
    # Random files: a probe that claimed an undecided 4 KiB head as Brotli
    # would claim about one in sixteen and then fail to open it.
    for i in range(300):
        with open(path, 'wb') as f:
            f.write(random.randbytes(5000))
        check_not_recognised(path, f'random 5000 bytes #{i}')


def main():
    random.seed(7)
    raw = gzip.decompress(open(os.path.join(DATA, 'glprog-small.zlib.trace'), 'rb').read())
    reference = os.path.join(DATA, 'glprog-small.trace')
    with tempfile.TemporaryDirectory() as tmp:
        check_wrapped(tmp, raw, 0, reference)
        check_wrapped(tmp, raw, 8000, reference)            # first output past the head
        check_wrapped(tmp, raw, (1 << 20) + 4096, reference)  # past the probe's megabyte: a weak guess
        check_junk(tmp)
    for f in failures:
        print('FAIL:', f)
    print(f'{len(failures)} failures')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
