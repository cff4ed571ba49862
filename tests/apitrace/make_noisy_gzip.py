#!/usr/bin/env python3
"""Writes a gzip apitrace whose seek points cost more than their stretch of
the file: the raw call stream read from stdin, then SEGMENTS segments of
4 MiB, each zeros then 32 KiB of noise (seeded, so the bytes are known),
each ending a deflate block (a full flush).  Every point's 32 KiB window
is then noise (it packs to 32 KiB) while its 4 MiB of output take 36 KB of
file.  With --sha256 LENGTH, prints instead the sha256 of the first LENGTH
bytes of what the file decodes to.
usage: make_noisy_gzip.py SEGMENTS OUT < raw-stream
       make_noisy_gzip.py SEGMENTS --sha256 LENGTH < raw-stream"""
import hashlib
import random
import sys
import zlib

SEGMENT, NOISE = 4 << 20, 32768


def pieces(raw, segments):
    """The decoded stream, piece by piece; a flush after each segment."""
    rand = random.Random(1234)
    yield raw, False
    yield bytes(SEGMENT - NOISE - len(raw)), False
    yield rand.randbytes(NOISE), True
    zeros = bytes(SEGMENT - NOISE)
    for _ in range(segments - 1):
        yield zeros, False
        yield rand.randbytes(NOISE), True


def main():
    segments = int(sys.argv[1])
    raw = sys.stdin.buffer.read()
    if sys.argv[2] == "--sha256":
        left, digest = int(sys.argv[3]), hashlib.sha256()
        for piece, _ in pieces(raw, segments):
            digest.update(piece[:left])
            left -= min(left, len(piece))
        print(digest.hexdigest())
        return
    z = zlib.compressobj(6, zlib.DEFLATED, 31, 9)
    with open(sys.argv[2], "wb") as out:
        for piece, flush in pieces(raw, segments):
            out.write(z.compress(piece))
            if flush:
                out.write(z.flush(zlib.Z_FULL_FLUSH))
        out.write(z.flush())


main()
