#!/usr/bin/env python3
"""Writes an rr `mmaps` stream (packed Cap'n Proto MMap records, before
rr's block compression) whose records name files of NAME_BYTES bytes:
hostile input that rr_blocks compresses to almost nothing.
usage: make_mmaps.py COUNT NAME_BYTES > raw"""
import struct
import sys


def pack_word(w):
    """Cap'n Proto packing of one word, without runs."""
    tag = 0
    body = bytearray()
    for i, b in enumerate(w):
        if b:
            tag |= 1 << i
            body.append(b)
    return bytes([tag]) + body + (b'\0' if tag in (0, 0xFF) else b'')


def record(index, name_bytes):
    """MMap: 11 data words (frameTime, start, end, ...), 2 pointers
    (fsname, backing file name), the name as a byte list of 'A's."""
    name_words = (name_bytes + 7) // 8
    words = [struct.pack('<II', 0, 1 + 11 + 2 + name_words),
             struct.pack('<Q', (11 << 32) | (2 << 48))]
    data = [0] * 11
    data[0], data[1], data[2] = 1, 0x10000 * (index + 1), 0x10000 * (index + 2)
    words += [struct.pack('<Q', d) for d in data]
    words += [struct.pack('<Q', 1 | (1 << 2) | (2 << 32) | (name_bytes << 35)), bytes(8)]
    out = bytearray(b''.join(pack_word(w) for w in words))
    full, rest = divmod(name_bytes, 8)
    left = full
    while left:                     # tag 0xFF: a word, then a run of raw words
        run = min(left - 1, 255)
        out += b'\xff' + b'A' * 8 + bytes([run]) + b'A' * (8 * run)
        left -= run + 1
    if rest:
        out += pack_word(b'A' * rest + bytes(8 - rest))
    return bytes(out)


def main():
    count, name_bytes = int(sys.argv[1]), int(sys.argv[2])
    for i in range(count):
        sys.stdout.buffer.write(record(i, name_bytes))


if __name__ == '__main__':
    main()
