#!/usr/bin/env python3
"""Header-only rr traces (a `version` file and four empty streams, which
rr 5.6.0 accepts) made from edge-0's Header with fields patched, for the
`rr traceinfo` comparison (tests/mount/tool_info.sh).  Prints one line per
trace: NAME<TAB>what rr makes of it ("file" when rr traceinfo prints the
header, "none" when rr refuses the header and prints nothing on stdout).
Usage: make_header_variants.py EDGE_TRACE_DIR OUT_DIR"""
import os
import sys

from rr_frames import pack_message, put, read_messages, root

# Header data section byte offsets (rr_trace.capnp, TRACE_VERSION 85).
XCR0, TICKS, ARCH, CHAOS, PROTOCOL = 8, 16, 18, 28, 6
ARCH_X86, ARCH_AARCH64 = 0, 2     # stored XOR the default x8664 (1)

VARIANTS = {
    # xcr0 0: rr takes CPUID(0xD, 0)'s EDX:EAX (edge-0's records say 7)
    "xcr0-from-cpuid": ("file", [(XCR0, "<Q", 0)]),
    # taken-branches ticks, chaos mode unknown (no chaosMode member)
    "branches-chaos-unknown": ("file", [(TICKS, "<H", 1), (CHAOS, "<H", 0)]),
    "chaos-false": ("file", [(CHAOS, "<H", 2)]),
    "arch-x86": ("file", [(ARCH, "<H", ARCH_X86 ^ 1)]),
    # aarch64: no x86 group (rr leaves xcr0 and cpuidFaulting unset)
    "arch-aarch64": ("file", [(ARCH, "<H", ARCH_AARCH64 ^ 1)]),
    # a syscallbuf protocol newer than rr 5.6.0's 0: rr refuses the trace
    "protocol-1": ("none", [(PROTOCOL, "<H", 1)]),
}


def write_trace(path, version_line, message):
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "version"), "wb") as f:
        f.write(version_line + message)
    for stream in ("events", "data", "mmaps", "tasks"):
        open(os.path.join(path, stream), "wb").close()


def main():
    edge, out = sys.argv[1], sys.argv[2]
    raw = open(os.path.join(edge, "version"), "rb").read()
    newline = raw.index(b"\n")
    segments = read_messages(raw[newline + 1:])[0]
    assert len(segments) == 1, "edge-0's Header is one segment"
    _, start, data_words, _ = root(segments)
    for name, (rr_says, patches) in VARIANTS.items():
        words = list(segments[0])
        for byte, fmt, value in patches:
            assert byte // 8 < data_words
            put(words, start + byte // 8, byte % 8, fmt, value)
        write_trace(os.path.join(out, name), b"85\n", pack_message(words))
        print("%s\t%s" % (name, rr_says))
    # rr wants the whole version line to be the number
    write_trace(os.path.join(out, "version-85x"), b"85x\n", pack_message(list(segments[0])))
    print("version-85x\tnone")


if __name__ == "__main__":
    main()
