"""Hostile inputs at the limits: traces that claim huge counts and sizes.
Each must give a clear answer (an error line, or a tree with /errors
entries) in bounded time and bounded memory; peak RSS and time are
measured and printed.  Cases are built from the test traces:

  fxt        16 MiB of zero-size records after the magic record
  apitrace   a snappy chunk claiming 4 GiB decompressed; a chunk length past the end
  rr         an events chunk header claiming 4 GiB decompressed; a compressed length past EOF
  sp-rtrace  a packet size of 4 GiB; a string length past the end of the file
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

TRACEFS = os.environ["TRACEFS"]
DATA = os.path.join(os.environ["TRACEFS_SOURCE_ROOT"], "tests", "data")
MAX_SECONDS = 60
MAX_RSS_KIB = 300 * 1024
work = tempfile.mkdtemp(prefix="tracefs-hostile-")
failures = []
cases = 0


def run_case(name, path):
    """Opens the trace and reads its main files; measures time and peak RSS."""
    global cases
    cases += 1
    total_seconds, answers = 0.0, []
    for target in ("info.json", "errors", "events"):
        start = os.times().elapsed
        process = subprocess.Popen([TRACEFS, "cat", path, target], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE,
                                   env=dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache")))
        try:
            process.wait(timeout=MAX_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            failures.append(f"{name}: cat {target} took over {MAX_SECONDS} s")
            process.wait()
            continue
        seconds = os.times().elapsed - start
        stderr = process.stderr.read().decode(errors="replace").strip()
        total_seconds += seconds
        if process.returncode < 0:
            failures.append(f"{name}: cat {target} died of signal {-process.returncode}")
        if stderr:
            answers.append(stderr.splitlines()[0])
    errors = subprocess.run([TRACEFS, "cat", path, "errors"], capture_output=True).stdout.decode(errors="replace")
    clear = bool(answers) or bool(errors.strip())
    if not clear:
        failures.append(f"{name}: no error line and nothing in /errors")
    print(json.dumps({"case": name, "seconds": round(total_seconds, 3), "answer": (answers or errors.splitlines() or [""])[0][:160]}))


def rss_of_case(name, path):
    """Peak RSS of opening the trace and reading events, from wait4."""
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.environ["XDG_CACHE_HOME"] = os.path.join(work, "cache")
        os.execv(TRACEFS, [TRACEFS, "cat", path, "events"])
    _, _, usage = os.wait4(pid, 0)
    if usage.ru_maxrss > MAX_RSS_KIB:
        failures.append(f"{name}: peak RSS {usage.ru_maxrss} KiB")
    print(json.dumps({"case": name, "peak_rss_kib": usage.ru_maxrss}))


def patched(source, name, patches):
    """A copy of source (file or directory) with bytes replaced: {member: [(offset, bytes)]}."""
    target = os.path.join(work, name)
    if os.path.isdir(source):
        shutil.copytree(source, target)
    else:
        shutil.copy(source, target)
    for member, edits in patches.items():
        path = os.path.join(target, member) if member else target
        with open(path, "r+b") as f:
            for offset, data in edits:
                f.seek(offset)
                f.write(data)
    return target


def fxt_cases():
    path = os.path.join(work, "zero-size-records.fxt")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", 0x0016547846040010))      # the magic-number record
        f.write(b"\0" * (16 << 20))                         # then records of size 0
    yield "fxt: 16 MiB of zero-size records", path


def apitrace_cases():
    source = os.path.join(DATA, "apitrace", "glprog-small.trace")
    if not os.path.exists(source):
        return
    yield "apitrace: snappy chunk claiming 4 GiB", patched(source, "huge-chunk.trace", {"": [(6, b"\xff\xff\xff\xff\x0f")]})
    yield "apitrace: chunk length past the end", patched(source, "long-chunk.trace", {"": [(2, struct.pack("<I", 0xfffffff0))]})


def rr_cases():
    source = os.path.join(DATA, "rr", "edge-0")
    if not os.path.exists(os.path.join(source, "events")):
        return
    yield "rr: chunk claiming 4 GiB", patched(source, "rr-huge-chunk", {"events": [(4, struct.pack("<I", 0xffffffff))]})
    yield "rr: compressed length past EOF", patched(source, "rr-long-chunk", {"events": [(0, struct.pack("<I", 0xfffffff0))]})


def sprtrace_cases():
    source = os.path.join(DATA, "sprtrace", "v1.4_file+memory.rtrace")
    if not os.path.exists(source):
        return
    yield "sp-rtrace: packet size of 4 GiB", patched(source, "huge-packet.rtrace", {"": [(16, struct.pack("<I", 0xfffffff0))]})
    # The process name in PINF (packet at 80: size, type, pid, secs, usecs, depth, then the name).
    yield "sp-rtrace: string longer than the file", patched(source, "long-string.rtrace", {"": [(104, struct.pack("<H", 0xffff))]})


try:
    for make in (fxt_cases, apitrace_cases, rr_cases, sprtrace_cases):
        for name, path in make():
            run_case(name, path)
            rss_of_case(name, path)
finally:
    shutil.rmtree(work, ignore_errors=True)
for failure in failures:
    print("FAIL:", failure, file=sys.stderr)
if cases == 0:
    sys.exit(77)
sys.exit(1 if failures else 0)
