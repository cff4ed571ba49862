#!/usr/bin/env python3
"""The "environ" member of /rr-traceinfo.json.  rr traceinfo (5.6.0) gets it
by replaying to the initial exec and reading argc, argv, envp and the
strings from the task's stack (read_env, src/util.cc); rr cannot replay on
these machines, so the traces here are written from scratch
(tests/rr/rr_writer.py) with a real argc/argv/envp/auxv layout in the
exec's recorded [stack], and the file is checked byte for byte against
what rr prints, computed here from the layout: rr's JSON layout and
json_escape (bytes below 32 as \\u00xx, backslash and quote escaped, the
rest raw).  Cases: x86-64 (after rr's pre-exec syscalls, a failed and a
vetoed execve, with a later write over the stack as rr's auxv patches
are), 32-bit x86 frames, aarch64, an empty environment, strings ending
in a hole; and where the recording cannot give rr's answer environ must
be null: no exec, a pointer or string outside the recorded memory, argv
or envp without their NULL, a huge argc, a write for another task, no
exec task event, the [stack] not first among the exec's mappings, no
extra registers; and past the limits, with an /errors line: an
environment over LIMIT_RR_ENVIRON_BYTES, too many writes or holes in the
exec frame, strings scattered over more pages than LIMIT_RR_ENVIRON_PAGES.  The header part must equal tests/rr/refs/edge-0's
`rr traceinfo` (the same version file), the file must parse with json,
and a second run from the saved index must give the same bytes.  Where rr
is installed, `rr dump` must read every x86 trace (they are valid rr
traces) and `rr traceinfo`'s stdout must be a prefix up to "environ".
Usage: check_environ.py RR_BLOCKS
       check_environ.py RR_BLOCKS --write DIR   (DIR/trace: the x86-64 case,
       DIR/expected: its rr-traceinfo.json, for tests/mount/tool_info.sh)"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

from rr_frames import pack_message, put, read_messages, root
from rr_writer import (ARCH_AARCH64, ARCH_X86, ARCH_X8664, ENTERING, EXITING, SOURCE_ZERO, Trace)

TRACEFS = os.environ["TRACEFS"]
SOURCE_ROOT = os.environ["TRACEFS_SOURCE_ROOT"]
BLOCKS = sys.argv[1]
EDGE = os.path.join(SOURCE_ROOT, "tests/data/rr/edge-0")
REF = os.path.join(SOURCE_ROOT, "tests/rr/refs/edge-0/traceinfo.txt")
LIMIT_RR_ENVIRON_BYTES = 1 << 20
TID = 4100
PROT_R, PROT_W, PROT_X = 1, 2, 4
MAP_PRIVATE, MAP_SHARED, MAP_ANON = 2, 1, 0x20
EXE_BASE = 0x555555554000
EXECVE = {ARCH_X8664: 59, ARCH_X86: 11, ARCH_AARCH64: 221}
failures = []


# ---- registers as rr records them (Registers::get_regs_for_trace) ----

def regs(arch, sp=0, result=0, orig=None, number=59):
    orig = number if orig is None else orig
    if arch == ARCH_X8664:
        r = [0] * 27
        r[19], r[10], r[15], r[16], r[17], r[20] = sp, result & (1 << 64) - 1, orig & (1 << 64) - 1, 0x401000, 0x33, 0x2B
        return struct.pack("<27Q", *r)
    if arch == ARCH_X86:
        r = [0] * 17
        r[15], r[6], r[11], r[12], r[13], r[16] = sp, result & 0xFFFFFFFF, orig & 0xFFFFFFFF, 0x8049000, 0x23, 0x2B
        return struct.pack("<17I", *r)
    r = struct.pack("<34Q", *([result & (1 << 64) - 1] + [0] * 30 + [sp, 0x400000, 0]))
    return r + struct.pack("<Qi4x", 0, orig)


def xsave(arch):
    """Extra registers: an XSAVE area of the header's 832 bytes (x87+SSE),
    or aarch64's user_fpsimd_state."""
    if arch == ARCH_AARCH64:
        return bytes(528)
    area = bytearray(832)
    area[512] = 3
    return bytes(area)


# ---- the stack the kernel builds at exec ----

def stack_image(top, size, width, argv, env, argc=None):
    """A [stack] mapping [top - size, top) as Linux builds it: the argv then
    env strings up to 16 bytes below the top; under them argc at sp, argv +
    NULL, envp + NULL, auxv (AT_NULL).  Returns (sp, image, address of each
    env string)."""
    image = bytearray(size)
    base = top - size
    at = top - 16 - sum(len(s) + 1 for s in list(argv) + list(env))
    start = at
    addresses = []
    for s in list(argv) + list(env):
        image[at - base:at - base + len(s)] = s
        addresses.append(at)
        at += len(s) + 1
    argv_at, env_at = addresses[:len(argv)], addresses[len(argv):]
    words = [len(argv) if argc is None else argc] + argv_at + [0] + env_at + [0, 0, 0]
    sp = (start - width * (len(words) + 1)) & ~15
    fmt = "<Q" if width == 8 else "<I"
    for i, w in enumerate(words):
        struct.pack_into(fmt, image, sp - base + i * width, w)
    return sp, image, env_at


def zero_pages(image):
    """Holes for the image's all-zero pages, runs merged (as newer rr records
    a stack; rr 5.6.0 stores it whole, which reads the same)."""
    holes, page = [], 4096
    for at in range(0, len(image), page):
        if image[at:at + page].count(0) == min(page, len(image) - at):
            if holes and holes[-1][0] + holes[-1][1] == at:
                holes[-1] = (holes[-1][0], holes[-1][1] + min(page, len(image) - at))
            else:
                holes.append((at, min(page, len(image) - at)))
    return holes


def json_escape(raw):
    out = bytearray()
    for c in raw:
        if c < 32:
            out += b"\\u%04x" % c
        elif c in b'\\"':
            out += b"\\" + bytes([c])
        else:
            out.append(c)
    return bytes(out)


def environ_member(env):
    return b'  "environ":[' + b",".join(b'\n    "' + json_escape(s) + b'"' for s in env) + b"\n  ]\n"


# ---- traces ----

def pre_exec(t, arch=ARCH_X8664, sys_arch=ARCH_X8664, stack_at=None):
    """rr's spawned child before its exec: prctl, a write rr records over
    where the new stack will be (the exec replaces it), then a failed and a
    vetoed execve exit."""
    number = EXECVE[sys_arch]
    t.syscall(TID, arch, sys_arch, 157, ENTERING, regs(arch, 0x7FFE00000E10, -38, number=157))
    writes = [(stack_at, b"GARBAGE=1\0" * 8, (), TID)] if stack_at else ()
    t.syscall(TID, arch, sys_arch, 157, EXITING, regs(arch, 0x7FFE00000E10, 0, number=157), writes=writes)
    t.syscall(TID, arch, sys_arch, number, ENTERING, regs(arch, 0x7FFE00000E10, -38, number=number))
    t.syscall(TID, arch, sys_arch, number, EXITING, regs(arch, 0x7FFE00000E10, -2, number=number))
    t.syscall(TID, arch, sys_arch, number, ENTERING, regs(arch, 0x7FFE00000E10, -38, number=number))
    t.syscall(TID, arch, sys_arch, number, EXITING, regs(arch, 0x7FFE00000E10, 0, orig=-2))   # vetoed (seccomp)


def exec_trace(env=(b"HOME=/home/u",), argv=(b"./prog", b"--flag"), arch=ARCH_X8664, sys_arch=None,
               top=0x7FFD3C602000, size=0x21000, holes=None, image_edit=None, later_writes=(), argc=None,
               stack_first=True, task_event=True, other_tid_write=False, extra=True, sp_edit=None,
               extra_writes=0):
    """A trace whose initial exec recorded `env`.  Returns (trace, expected env)."""
    sys_arch = arch if sys_arch is None else sys_arch
    width = 4 if arch == ARCH_X86 else 8
    t = Trace()
    sp, image, env_at = stack_image(top, size, width, argv, env, argc=argc)
    if image_edit:
        image_edit(image, top - size, env_at)
    if sp_edit:
        sp = sp_edit(sp)
    pre_exec(t, arch if arch != ARCH_X86 else ARCH_X8664, sys_arch if arch != ARCH_X86 else ARCH_X8664,
             stack_at=env_at[0] if env_at else None)
    number = EXECVE[sys_arch]
    t.syscall(TID, arch if arch != ARCH_X86 else ARCH_X8664, sys_arch, number, ENTERING,
              regs(arch if arch != ARCH_X86 else ARCH_X8664, 0x7FFE00000E10, -38, number=number))
    time = t.next_time()
    # rr's exec data: the [stack] whole (its empty bottom as a hole), a
    # mapping it keeps, then patches; a null-address and a zero-size write too.
    holes = zero_pages(image) if holes is None else holes
    writes = [(0, bytes(4), (), TID), (top - size, bytes(image), holes, TID), (0x7FFD3C63B000, b"\x7fELF" + bytes(0x1FFC), (), TID),
              (0x7FFD3C63C000, b"", (), TID)]
    writes += [(addr, raw, (), TID) for addr, raw in later_writes]
    writes += [(0x7FFD3C63B000 + i, b"\x7f", (), TID) for i in range(extra_writes)]
    if other_tid_write:
        writes.append((0x7FFD3C63B000, b"\x7fELF", (), TID + 1))
    t.syscall(TID, arch, sys_arch, number, EXITING, regs(arch, sp, 0, number=number),
              extra=xsave(arch) if extra else b"", writes=writes)
    locals_page = 0x70010000 if arch == ARCH_AARCH64 else 0x70001000
    maps = [(0x70000000, 0x70001000, "/usr/lib/rr/librrpage.so", PROT_R | PROT_X, MAP_PRIVATE, SOURCE_ZERO),
            (locals_page, locals_page + 0x1000, "/tmp/rr-shared-preload_thread_locals", PROT_R | PROT_W, MAP_SHARED,
             SOURCE_ZERO),
            (top - size, top, "[stack]", PROT_R | PROT_W, MAP_PRIVATE, 1),
            (EXE_BASE, EXE_BASE + 0x1000, "/opt/prog", PROT_R | PROT_X, MAP_PRIVATE, 1),
            (0x7FFD3C63B000, 0x7FFD3C63D000, "[vdso]", PROT_R | PROT_X, MAP_PRIVATE, 1),
            (0x68000000, 0x68100000, "", PROT_R | PROT_W, MAP_PRIVATE | MAP_ANON, SOURCE_ZERO)]   # scratch
    if not stack_first:
        maps[2], maps[3] = maps[3], maps[2]
    for start, end, name, prot, flags, source in maps:
        t.mmap(time, start, end, name, prot, flags, source)
    if task_event:
        t.exec_event(time, TID, "/opt/prog", [a.decode() for a in argv], EXE_BASE)
    # after the exec: a write over an env string that must not matter
    t.syscall(TID, arch, arch, 12, ENTERING, regs(arch, sp, -38, number=12))
    t.syscall(TID, arch, arch, 12, EXITING, regs(arch, sp, 0x1000, number=12),
              writes=[(env_at[0], b"LATER", (), TID)] if env_at else ())
    return t


def version_file(arch):
    raw = open(os.path.join(EDGE, "version"), "rb").read()
    if arch != ARCH_AARCH64:
        return raw
    newline = raw.index(b"\n")
    segments = read_messages(raw[newline + 1:])[0]
    words = list(segments[0])
    _, start, _, _ = root(segments)
    put(words, start + 2, 2, "<H", ARCH_AARCH64 ^ 1)   # Header.nativeArch, stored XOR its default
    return raw[:newline + 1] + pack_message(words)


def header_part():
    lines = []
    for line in open(REF, "rb").read().splitlines(keepends=True):
        if line.startswith(b'  "environ"') or line.startswith(b"}"):
            break
        lines.append(line)
    return b"".join(lines)


def tracefs_cat(trace, path, index_dir):
    return subprocess.run([TRACEFS, "cat", "-o", f"index_dir={index_dir}", trace, path],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True, timeout=120).stdout


def check(tmp, name, t, arch, want_member, want_error=None, rr=None):
    trace = os.path.join(tmp, name)
    t.write(trace, version_file(arch), BLOCKS)
    index = os.path.join(tmp, "index-" + name)
    ours = tracefs_cat(trace, "rr-traceinfo.json", index)
    again = tracefs_cat(trace, "rr-traceinfo.json", index)
    stats = tracefs_cat(trace, ".tracefs/stats", index).decode()
    errors = tracefs_cat(trace, "errors", index).decode()
    label = f"{name}: "
    if "index_source loaded" not in stats:
        failures.append(label + "the second run did not load the saved index")
    if again != ours:
        failures.append(label + "rr-traceinfo.json differs when loaded from the saved index")
    try:
        json.loads(ours.decode("utf-8", "surrogateescape"))   # rr writes bytes >= 0x80 raw
    except ValueError as e:
        failures.append(label + f"not JSON: {e}")
    head = ours[:ours.find(b'  "environ"')] if b'  "environ"' in ours else ours
    if arch != ARCH_AARCH64 and head != header_part():
        failures.append(label + "the header part differs from rr traceinfo's (tests/rr/refs/edge-0)")
    want = head + want_member + b"}\n"
    if ours != want:
        at = next((i for i, (a, b) in enumerate(zip(ours, want)) if a != b), min(len(ours), len(want)))
        failures.append(label + f"differs at byte {at}: {ours[at - 40:at + 60]!r} vs {want[at - 40:at + 60]!r}")
    elif want_error and want_error not in errors:
        failures.append(label + f"/errors lacks {want_error!r}: {errors[:300]!r}")
    elif not want_error and "environ" in errors:
        failures.append(label + f"/errors names environ: {errors[:300]!r}")
    else:
        what = "null" if want_member == NULL else "%d strings" % (want_member.count(b'\n    "'))
        print(f"ok {name}: environ {what}, {len(ours)} bytes as rr prints them")
    if rr and arch != ARCH_AARCH64:
        dump = subprocess.run([rr, "dump", "-b", "-m", "-p", "-e", trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if dump.returncode != 0:
            failures.append(label + f"rr dump refuses the trace: {dump.stderr.decode(errors='replace')[:200]}")
        live = subprocess.run([rr, "traceinfo", trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE).stdout
        if not ours.startswith(live.split(b'  "environ"')[0]):
            failures.append(label + f"rr traceinfo's stdout is not a prefix of ours: {live[-200:]!r}")


NULL = b'  "environ":null\n'
ESCAPES = [b"HOME=/home/user", b'Q="quoted"\\back', b"CTRL=\x01\x1b\t\n\x7f", b"UTF8=\xc3\xa9", b"RAW=\xff\xfe",
           b"", b"PATH=/usr/local/bin:/usr/bin:/bin"]


def cases():
    """(name, trace, arch, expected member, expected /errors text)."""
    # x86-64; then with a later write of the exec frame over one string (as
    # rr's auxv patch comes after the stack), which counts.
    t = exec_trace(env=ESCAPES)
    _, _, env_at = stack_image(0x7FFD3C602000, 0x21000, 8, (b"./prog", b"--flag"), ESCAPES)
    t2 = exec_trace(env=ESCAPES, later_writes=[(env_at[6] + 5, b"/sbin")])
    patched = list(ESCAPES)
    patched[6] = b"PATH=/sbinlocal/bin:/usr/bin:/bin"
    yield "x86-64", t, ARCH_X8664, environ_member(ESCAPES), None
    yield "x86-64-patched", t2, ARCH_X8664, environ_member(patched), None
    yield "x86-frames", exec_trace(env=ESCAPES, arch=ARCH_X86, sys_arch=ARCH_X8664, top=0xFFD10000, size=0x21000), \
        ARCH_X86, environ_member(ESCAPES), None
    yield "aarch64", exec_trace(env=ESCAPES, arch=ARCH_AARCH64), ARCH_AARCH64, environ_member(ESCAPES), None
    yield "empty", exec_trace(env=(), argv=()), ARCH_X8664, environ_member([]), None

    # A string that reaches a hole ends there (the hole reads as zeros).
    def cut_nul(image, base, env_at):
        image[env_at[0] - base + len(b"HOME=/home/u")] = ord("X")   # no NUL: the hole's zeros end it
    size = 0x21000
    _, _, env_at = stack_image(0x7FFD3C602000, size, 8, (b"./prog",), (b"HOME=/home/u",))
    hole_at = env_at[0] - (0x7FFD3C602000 - size) + len(b"HOME=/home/uX")
    yield "string-into-hole", exec_trace(env=(b"HOME=/home/u",), argv=(b"./prog",), image_edit=cut_nul,
                                         holes=[(0, 0x1000), (hole_at, size - hole_at)]), \
        ARCH_X8664, environ_member([b"HOME=/home/uX"]), None

    # Where the recording does not give rr's answer: null.
    t = Trace()
    pre_exec(t)
    yield "no-exec", t, ARCH_X8664, NULL, None

    def string_out(image, base, env_at):   # the last string runs to the stack's top
        image[env_at[-1] - base:] = b"Z" * (len(image) - (env_at[-1] - base))
    yield "string-out", exec_trace(image_edit=string_out), ARCH_X8664, NULL, None

    def pointer_out(image, base, env_at):
        at = image.find(struct.pack("<Q", env_at[0]))
        struct.pack_into("<Q", image, at, 0x1234)
    yield "pointer-out", exec_trace(image_edit=pointer_out), ARCH_X8664, NULL, None
    yield "argv-no-null", exec_trace(argc=1), ARCH_X8664, NULL, None
    yield "argc-huge", exec_trace(argc=1 << 60), ARCH_X8664, NULL, None
    yield "argc-wraps", exec_trace(argc=(1 << 64) - 1), ARCH_X8664, NULL, None

    def no_envp_null(image, base, env_at):   # envp's pointers run to the stack's top
        at = image.find(struct.pack("<Q", env_at[0]))
        image[at:] = struct.pack("<Q", env_at[0]) * ((len(image) - at) // 8)
    yield "envp-no-null", exec_trace(image_edit=no_envp_null), ARCH_X8664, NULL, None
    yield "sp-outside", exec_trace(sp_edit=lambda sp: 0x10000), ARCH_X8664, NULL, None
    yield "other-task-write", exec_trace(other_tid_write=True), ARCH_X8664, NULL, None
    yield "no-task-event", exec_trace(task_event=False), ARCH_X8664, NULL, None
    yield "stack-not-first", exec_trace(stack_first=False), ARCH_X8664, NULL, None
    yield "no-extra-registers", exec_trace(extra=False), ARCH_X8664, NULL, None
    # 200,000 empty strings: 1.6 MB of JSON, over the limit.
    yield "huge-env", exec_trace(env=[b""] * 200000, size=0x200000), ARCH_X8664, NULL, \
        "larger than LIMIT_RR_ENVIRON_BYTES"
    # Costs bounded for a hostile exec frame: 1,100 writes; 9,000 holes;
    # 5,000 strings each on its own page of a 20 MiB stack (5,000 page reads).
    yield "many-writes", exec_trace(extra_writes=1100), ARCH_X8664, NULL, "LIMIT_RR_ENVIRON_WRITES"
    yield "many-holes", exec_trace(holes=[(2 * i, 1) for i in range(9000)]), ARCH_X8664, NULL, \
        "LIMIT_RR_ENVIRON_HOLES"
    count, size = 5000, 0x1400000

    def scatter(image, base, env_at):
        table = image.find(struct.pack("<Q", env_at[0]))
        for i in range(count):
            image[env_at[i] - base] = 0
            struct.pack_into("<Q", image, table + 8 * i, base + 4096 * i + 16)
            image[4096 * i + 16] = ord("x")
    yield "scattered", exec_trace(env=[b"x"] * count, size=size, image_edit=scatter), ARCH_X8664, NULL, \
        "LIMIT_RR_ENVIRON_PAGES"


def write_case(out):
    name, t, arch, member, _ = next(cases())
    t.write(os.path.join(out, "trace"), version_file(arch), BLOCKS)
    with open(os.path.join(out, "expected"), "wb") as f:
        f.write(header_part() + member + b"}\n")
    return 0


def main():
    if sys.argv[2:3] == ["--write"]:
        return write_case(sys.argv[3])
    rr = shutil.which("rr")
    tmp = tempfile.mkdtemp(prefix="rr-environ-")
    try:
        for name, t, arch, member, error in cases():
            check(tmp, name, t, arch, member, error, rr)
    finally:
        shutil.rmtree(tmp)
    if not rr:
        print("SKIP the rr dump / rr traceinfo checks: rr is not installed")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
