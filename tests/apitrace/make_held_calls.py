#!/usr/bin/env python3
"""Writes an uncompressed apitrace stream whose first 64 calls are never
left while CALLS more are entered and left: every checkpoint of the index
lists 64 pending calls (1.5 KiB each), so that past ~2.9 M calls the
checkpoints pass their share of the table budget and are thinned.  Also
writes the `apitrace dump` text of the stream (events).
usage: make_held_calls.py OUT EVENTS CALLS"""
import sys
from apitrace_stream import string, uint

HELD = 64


def main():
    path, events, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
    out = bytearray(b'\x06\x06' + string('process.name') + string('/bin/held') + b'\x00')
    out += b'\x00' + uint(0) + uint(0) + string('glFoo') + uint(0) + b'\x00'   # defines glFoo()
    out += b'\x00\x00\x00\x00' * (HELD - 1)
    left = b''.join(b'\x00\x00\x00\x00\x01' + uint(n) + b'\x00' for n in range(HELD, calls))
    with open(path, 'wb') as f:
        f.write(out + left)
    with open(events, 'w') as f:
        f.write('// process.name = "/bin/held"\n')
        f.write(''.join(f'{n} glFoo()\n' for n in range(HELD, calls)))
        f.write(''.join(f'{n} glFoo() // incomplete\n' for n in range(HELD)))


if __name__ == '__main__':
    main()
