#!/usr/bin/env python3
"""Writes an uncompressed apitrace stream of about BYTES bytes: calls to
glBufferData whose blob argument is 4 KiB of seeded random bytes, each
left: a big stream that no container compresses.
usage: make_blob_stream.py OUT BYTES"""
import random
import sys
from apitrace_stream import string, uint


def main():
    rng = random.Random(27)
    out = bytearray(b'\x06\x06' + string('process.name') + string('/bin/blobs') + b'\x00')
    call = 0
    while len(out) < int(sys.argv[2]):
        sig = uint(0) + (string('glBufferData') + uint(1) + string('data') if call == 0 else b'')
        blob = rng.randbytes(4096)
        out += b'\x00' + uint(0) + sig + b'\x01' + uint(0) + b'\x08' + uint(len(blob)) + blob + b'\x00'
        out += b'\x01' + uint(call) + b'\x00'
        call += 1
    with open(sys.argv[1], 'wb') as f:
        f.write(out)


if __name__ == '__main__':
    main()
