#!/usr/bin/env python3
"""Syscall and signal names on every architecture.  Builds traces from
edge-0's frames: per architecture (x86-64, x86, aarch64) one SYSCALL frame
for every number from 0 to the table's end + 10, and one SIGNAL frame for
every signal 0..66 (on x86-64).  Then:
  - the names in tracefs's `events` must be the ones rr_names.txt gives, with
    rr's fallbacks, and a few spot values typed here (no rr needed: the text
    cannot depend on the build machine);
  - when Debian's `rr` is installed, `events` must equal `rr dump`,
    threads/<tid>/events `rr dump -t TID` and frames/<n> of the spot values
    `rr dump -b -m -p -e --socket-addresses TRACE n`, byte for byte (skipped with a
    message where rr is missing or cannot run).
Usage: check_names.py RR_BLOCKS"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

from rr_frames import data_at, field, follow, pack_message, put, read_messages, root

TRACEFS = os.environ["TRACEFS"]
SOURCE_ROOT = os.environ["TRACEFS_SOURCE_ROOT"]
BLOCKS = sys.argv[1]
EDGE = os.path.join(SOURCE_ROOT, "tests/data/rr/edge-0")
DATA_FILE = os.path.join(SOURCE_ROOT, "decoders/rr/rr_names.txt")
ARCHES = {"x86_64": 1, "x86": 0, "aarch64": 2}
EV_SIGNAL, EV_SYSCALL = 6, 11
# Facts checked by hand against rr 5.6.0's src/syscalls.py and `rr dump`.
SPOT = {("x86_64", 262): "fstatat", ("x86_64", 320): "<unknown-syscall-320>",
        ("x86_64", 1000): "rrcall_init_preload", ("x86_64", 1012): "rrcall_rdtsc",
        ("x86_64", 1013): "<unknown-syscall-1013>", ("x86", 17): "_break",
        ("x86", 403): "clock_gettime64", ("x86", 415): "<unknown-syscall-415>",
        ("x86", 423): "sched_rr_get_interval_time64", ("aarch64", 18): "<unknown-syscall-18>",
        ("aarch64", 84): "sync_file_range", ("aarch64", 244): "<unknown-syscall-244>",
        ("aarch64", 1005): "rrcall_mprotect_record"}
SPOT_SIGNALS = {0: "signal(0)", 7: "SIGBUS", 16: "SIGSTKFLT", 31: "SIGSYS", 32: "SIGRT32",
                64: "SIGRT64", 65: "signal(65)"}
failures = []


def blocks(mode, data):
    args = [BLOCKS, mode] + (["65536"] if mode == "pack" else [])
    return subprocess.run(args, input=data, stdout=subprocess.PIPE, check=True).stdout


def pick_templates(frames):
    """A plain syscall frame for each frame arch present and a signal frame."""
    syscalls, signal = {}, None
    for segments in frames:
        if len(segments) != 1:  # templates are patched and packed as one segment
            continue
        words = segments[0]
        _, start, data, _ = root(segments)
        event, arch = field(words, start, 6, "<H"), field(words, start, 4, "<H")
        no_writes = struct.unpack("<Q", words[start + data])[0] >> 35 == 0  # memWrites count
        if event == EV_SYSCALL and field(words, start + 4, 2, "<H") == 0 and no_writes:
            syscalls.setdefault(arch, words)
        elif event == EV_SIGNAL and signal is None:
            signal = words
    return syscalls, signal


def syscall_frame(template, arch, number):
    words = list(template)
    _, start, _, _ = root([words])
    put(words, start + 3, 0, "<H", arch)      # Frame.event.syscall.arch
    put(words, start + 3, 4, "<i", number)    # Frame.event.syscall.number
    return pack_message(words)


def signal_frame(template, signo):
    words = list(template)
    _, start, data, _ = root([words])
    _, sig, ptr = follow([words], 0, start + data + 3)  # Frame.event.signal
    _, info, size = data_at([words], 0, sig + ((ptr >> 32) & 0xFFFF))  # Signal.siginfo
    assert size >= 4
    put(words, info, 0, "<i", signo)
    return pack_message(words)


# --- expected names ---

def data_file_names():
    tables = {}
    for line in open(DATA_FILE, encoding="ascii"):
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            tables.setdefault(fields[0], {})[int(fields[1])] = fields[2]
    return tables


def expected_syscall(tables, arch, number):
    return tables[arch].get(number, f"<unknown-syscall-{number}>")


def expected_signal(tables, signo):
    if 32 <= signo <= 64:
        return f"SIGRT{signo}"
    return tables["signal"].get(signo, f"signal({signo})")


def write_trace(directory, frames):
    shutil.copytree(EDGE, directory)
    with open(os.path.join(directory, "events"), "wb") as f:
        f.write(blocks("pack", b"".join(frames)))
    for stream in ("data", "mmaps", "tasks"):
        open(os.path.join(directory, stream), "wb").close()


def event_names(events_text):
    """Event names without the signals' (det)/(async)."""
    return [re.sub(r"\((det|async)\)$", "", name) for name in re.findall(r"event:`([^']*)'", events_text)]


def check_names(label, got, want):
    if got == want:
        print(f"ok {label}: {len(want)} names as rr_names.txt and rr's fallbacks give")
        return
    wrong = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w]
    failures.append(f"{label}: {len(got)} names (want {len(want)}); first differences {wrong[:5]}")


def rr_dump_usable():
    rr = shutil.which("rr")
    if not rr:
        return None, "rr is not installed (Debian package rr; scripts/install-deps)"
    probe = subprocess.run([rr, "dump", EDGE], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if probe.returncode != 0:
        return None, "rr dump cannot run here: " + probe.stderr.decode(errors="replace").strip()[:200]
    return rr, None


def compare_thread(rr, trace, label, events):
    """threads/<tid>/events against `rr dump -t TID` for the first frame's tid."""
    tid = re.search(rb" tid:(\d+),", events).group(1).decode()
    ours = subprocess.run([TRACEFS, "cat", trace, f"threads/{tid}/events"], stdout=subprocess.PIPE, check=True).stdout
    ref = subprocess.run([rr, "dump", "-t", tid, trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE).stdout
    if ours != ref:
        failures.append(f"{label}: threads/{tid}/events ({len(ours)} bytes) differs from rr dump -t {tid} ({len(ref)} bytes)")
    else:
        print(f"ok {label}: threads/{tid}/events equals rr dump -t {tid} ({len(ours)} bytes)")


def compare_frames(rr, trace, label, frames):
    """frames/<n> against `rr dump -b -m -p -e --socket-addresses TRACE n`."""
    before = len(failures)
    for n in frames:
        ours = subprocess.run([TRACEFS, "cat", trace, f"frames/{n}"], stdout=subprocess.PIPE, check=True).stdout
        ref = subprocess.run([rr, "dump", "-b", "-m", "-p", "-e", "--socket-addresses", trace, str(n)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE).stdout
        if ours != ref:
            failures.append(f"{label}: frames/{n} differs from rr dump: {ours[:120]!r} vs {ref[:120]!r}")
    if len(failures) == before:
        print(f"ok {label}: frames/<n> of the spot values equal rr dump ({len(frames)} frames)")


def main():
    tables = data_file_names()
    for (arch, number), name in SPOT.items():
        if expected_syscall(tables, arch, number) != name:
            failures.append(f"rr_names.txt: {arch} {number} is not {name}")
    raw = blocks("unpack", open(os.path.join(EDGE, "events"), "rb").read())
    syscall_templates, signal_template = pick_templates(read_messages(raw))
    assert 1 in syscall_templates and 0 in syscall_templates and signal_template, "edge-0 lacks a template frame"
    rr, why_not = rr_dump_usable()
    tmp = tempfile.mkdtemp(prefix="rr-names-")
    try:
        for arch_name, arch in ARCHES.items():
            # 32-bit frames keep 32-bit registers; aarch64 names ride on x86-64 frames.
            template = syscall_templates[0 if arch == 0 else 1]
            end = max(tables[arch_name]) + 10
            frames = [syscall_frame(template, arch, n) for n in range(end + 1)]
            want = [f"SYSCALL: {expected_syscall(tables, arch_name, n)}" for n in range(end + 1)]
            spot = [f"SYSCALL: {SPOT[(arch_name, n)]}" for n in range(end + 1) if (arch_name, n) in SPOT]
            if arch_name == "x86_64":
                signals = range(0, 67)
                frames += [signal_frame(signal_template, s) for s in signals]
                want += [f"SIGNAL: {expected_signal(tables, s)}" for s in signals]
            trace = os.path.join(tmp, arch_name)
            write_trace(trace, frames)
            events = subprocess.run([TRACEFS, "cat", trace, "events"], stdout=subprocess.PIPE, check=True).stdout
            got = event_names(events.decode())
            check_names(f"{arch_name} (0..{end})", got, want)
            got_spot = [g for g in got if g in spot]
            if sorted(got_spot) != sorted(spot):
                failures.append(f"{arch_name}: spot values {spot} not all printed")
            if arch_name == "x86_64":
                signal_names = {s: expected_signal(tables, s) for s in SPOT_SIGNALS}
                if signal_names != SPOT_SIGNALS:
                    failures.append(f"signal spot values: {signal_names}")
            if not rr:
                continue
            ref = subprocess.run([rr, "dump", trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            if ref.returncode != 0:
                failures.append(f"{arch_name}: rr dump failed: {ref.stderr.decode()[:200]}")
            elif ref.stdout != events:
                at = next(i for i, (a, b) in enumerate(zip(ref.stdout, events + b"\0")) if a != b)
                failures.append(f"{arch_name}: events differ from rr dump at byte {at}: "
                                f"{events[at - 80:at + 40]!r} vs {ref.stdout[at - 80:at + 40]!r}")
            else:
                print(f"ok {arch_name}: events equal rr dump ({len(events)} bytes)")
            compare_thread(rr, trace, arch_name, events)
            compare_frames(rr, trace, arch_name, [n + 1 for n in range(end + 1) if (arch_name, n) in SPOT])
    finally:
        shutil.rmtree(tmp)
    if why_not:
        print("SKIP the rr dump comparison:", why_not)
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
