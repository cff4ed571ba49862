#!/usr/bin/env python3
"""An aarch64 frame's registers in /events as `rr dump` prints them
(TraceFrame::dump: Registers then ExtraRegisters print_register_file_compact):
x[0]..x[30], sp, pc and pstate, then the user_fpsimd_state's v0..v31,
fpsr and fpcr, each register's bytes from the most significant down
without leading zeros ("0x0" for zero).  The corpus has no aarch64 trace
with extra registers, so one is written from scratch (tests/rr/rr_writer.py)
with registers whose values test the leading-zero rule at every width.
Usage: aarch64_registers.py RR_BLOCKS"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

SOURCE_ROOT = os.environ.get("TRACEFS_SOURCE_ROOT", ".")
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "rr"))
from rr_writer import ARCH_AARCH64, ENTERING, Trace  # noqa: E402

TRACEFS = os.environ.get("TRACEFS", "build/tracefs")
EDGE = os.path.join(SOURCE_ROOT, "tests", "data", "rr", "edge-0")
TID, OPENAT = 4242, 56


def hex_of(little_endian):
    """rr's reg_to_string: the bytes from the last, the first printed
    without a leading zero, the rest two digits each."""
    digits = little_endian[::-1].lstrip(b"\0") or b"\0"
    return "0x%x" % digits[0] + "".join("%02x" % b for b in digits[1:])


def registers():
    """x0..x30, sp, pc, pstate (rr's aarch64 user_pt_regs), then orig_x0
    and the syscall number rr appends."""
    x = [(i * 0x0101010101010101) >> (4 * (i % 16)) for i in range(31)]
    sp, pc, pstate = 0x7FFFC0DE0000, 0x400ABC, 0x80000000
    raw = struct.pack("<34Q", *(x + [sp, pc, pstate])) + struct.pack("<Qi4x", 0, OPENAT)
    compact = " ".join("x[%d]:0x%x" % (i, v) for i, v in enumerate(x))
    return raw, compact + " sp:0x%x pc:0x%x pstate:0x%x" % (sp, pc, pstate)


def vector_registers():
    """user_fpsimd_state: 32 16-byte registers, fpsr, fpcr (528 bytes with
    its padding).  v0 is zero, v1 one byte, v2 a high byte of 0xab, v3 a
    high nibble of 0x0c, the rest bytes of every value."""
    v = [bytes(16), b"\x01" + bytes(15), bytes(15) + b"\xab", bytes(15) + b"\x0c"]
    v += [bytes((17 * i + k) & 0xFF for k in range(16)) for i in range(4, 32)]
    fpsr, fpcr = 0x08000010, 0
    raw = b"".join(v) + struct.pack("<II", fpsr, fpcr) + bytes(8)
    compact = " ".join("v%d:%s" % (i, hex_of(r)) for i, r in enumerate(v))
    return raw, compact + " fpsr:%s fpcr:%s" % (hex_of(struct.pack("<I", fpsr)), hex_of(struct.pack("<I", fpcr)))


def main():
    blocks = sys.argv[1]
    work = tempfile.mkdtemp(prefix="tracefs-aarch64-")
    trace = os.path.join(work, "trace")
    regs, regs_text = registers()
    extra, extra_text = vector_registers()
    assert len(extra) == 528
    t = Trace()
    t.syscall(TID, ARCH_AARCH64, ARCH_AARCH64, OPENAT, ENTERING, regs, extra=extra)
    t.syscall(TID, ARCH_AARCH64, ARCH_AARCH64, OPENAT, ENTERING, regs)   # no extra registers
    t.write(trace, open(os.path.join(EDGE, "version"), "rb").read(), blocks)
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache"))
    try:
        events = subprocess.run([TRACEFS, "cat", trace, "events"], capture_output=True, env=env,
                                check=True).stdout.decode()
        errors = subprocess.run([TRACEFS, "cat", trace, "errors"], capture_output=True, env=env).stdout.decode()
    finally:
        shutil.rmtree(work)
    lines = [line for line in events.splitlines() if line.startswith("x[0]:")]
    failures = []
    if lines != [regs_text + " " + extra_text, regs_text]:
        failures.append("register lines:\n  got  %s\n  want %s" %
                        ("\n       ".join(lines), "\n       ".join([regs_text + " " + extra_text, regs_text])))
    if errors:
        failures.append("/errors: " + errors)
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    if failures:
        sys.exit(1)
    print("an aarch64 frame's x, sp, pc, pstate, v0-v31, fpsr and fpcr as rr dump prints them")


if __name__ == "__main__":
    main()
