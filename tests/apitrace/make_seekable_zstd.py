#!/usr/bin/env python3
"""Writes a raw apitrace stream as newer apitrace writes zstd traces: the
zstd seekable format (independent frames of at most FRAME bytes, each
without a content size since they are streamed, then a skippable frame
holding the seek table).  Uses the zstd command for the frames.

usage: make_seekable_zstd.py RAW OUT [FRAME_BYTES]"""
import os
import struct
import subprocess
import sys

# meson test sets MALLOC_PERTURB_, which has glibc fill every allocation:
# a thousand zstd processes, each filling its megabytes of tables, took
# minutes.  The perturbation is for tracefs, not for the tool making input.
ZSTD_ENV = {k: v for k, v in os.environ.items() if k != 'MALLOC_PERTURB_'}


def main():
    raw = open(sys.argv[1], 'rb').read()
    frame_bytes = int(sys.argv[3]) if len(sys.argv) > 3 else 65536
    out = bytearray()
    table = []
    for start in range(0, len(raw), frame_bytes):
        piece = raw[start:start + frame_bytes]
        # Through a pipe, so the frame carries no content size.
        frame = subprocess.run(['zstd', '-q', '-c', '-3'], input=piece, stdout=subprocess.PIPE,
                               env=ZSTD_ENV, check=True).stdout
        out += frame
        table.append((len(frame), len(piece)))
    entries = b''.join(struct.pack('<II', c, d) for c, d in table)
    footer = struct.pack('<IBI', len(table), 0, 0x8F92EAB1)
    payload = entries + footer
    out += struct.pack('<II', 0x184D2A5E, len(payload)) + payload
    open(sys.argv[2], 'wb').write(out)


if __name__ == '__main__':
    main()
