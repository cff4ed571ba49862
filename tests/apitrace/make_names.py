#!/usr/bin/env python3
"""Writes a gzip apitrace whose functions are named with a newline and NULs:
"gl\\nFoo", "glAb\\0cd", "glAb\\0ce", "glAb", and "glAb\\0cd" again under
another id; each is called once, in that order.  apitrace prints a name up
to its first NUL; the tree's functions/ must show every name whole,
escaped, and distinct.
usage: make_names.py OUT"""
import gzip
import sys
from apitrace_stream import string, uint

NAMES = [b'gl\nFoo', b'glAb\0cd', b'glAb\0ce', b'glAb', b'glAb\0cd']


def main():
    out = bytearray(b'\x06\x06' + string(b'process.name') + string(b'/bin/names') + b'\x00')
    for number, name in enumerate(NAMES):
        # enter on thread 0 a call of signature `number`, defined here (no
        # arguments), no details; then leave it
        out += b'\x00' + uint(0) + uint(number) + string(name) + uint(0) + b'\x00'
        out += b'\x01' + uint(number) + b'\x00'
    with gzip.open(sys.argv[1], 'wb') as f:
        f.write(out)


if __name__ == '__main__':
    main()
