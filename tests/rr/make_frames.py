#!/usr/bin/env python3
"""Writes an rr `events` stream (before block compression) of COUNT
identical SCHED frames of 32 packed bytes: hostile input that compresses
1,000x, so that a checkpoint per 64 frames would outgrow the file.
usage: make_frames.py COUNT > raw"""
import struct
import sys


def pack_word(w):
    tag = 0
    body = bytearray()
    for i, b in enumerate(w):
        if b:
            tag |= 1 << i
            body.append(b)
    return bytes([tag]) + body + (b'\0' if tag in (0, 0xFF) else b'')


def frame():
    """One segment: the Frame struct (7 data words, 5 pointers), tid 300,
    event SCHED (tag 4 at bits 48..63 of the first data word)."""
    words = [0, (0 << 2) | (7 << 32) | (5 << 48), 300 | (1 << 32) | (4 << 48)] + [0] * 11
    words[0] = (len(words) - 1) << 32  # segment table: one segment of 13 words
    return b''.join(pack_word(struct.pack('<Q', w)) for w in words)


def main():
    count = int(sys.argv[1])
    block = frame() * 10000
    for _ in range(count // 10000):
        sys.stdout.buffer.write(block)


if __name__ == '__main__':
    main()
