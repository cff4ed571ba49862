"""sp-rtrace logs against sp-rtrace-postproc's own outputs.

For every log in tests/data/sprtrace (and, when present, every log of
$TRACEFS_CORPUS/sp-rtrace): `events` equals the default output byte for byte,
`leaks-compressed` equals `-lc` where the corpus has it, `leaks` agrees with
it, every leaked allocation is found by grep in resources/*/leaks, calls/*.json
and export/chrome.json are valid JSON.  The 2010 pre-release files must be
refused with a message that names them, never crash.

Protocol 2.0 logs with heap information: the 2.0 tool writes heap bottom/top
as dwords but its post-processor reads pointers, so the reference's heap
lines are garbage (specs/sp-rtrace-notes.md, point 6); those lines are left
out of the comparison and everything else must match."""
import glob
import json
import os
import re
import subprocess
import sys

TRACEFS = os.environ["TRACEFS"]
ROOT = os.environ["TRACEFS_SOURCE_ROOT"]
CORPUS = os.environ.get("TRACEFS_CORPUS", "")
failures = []


def fail(message):
    failures.append(message)
    print("FAIL:", message)


def tracefs(*args, check=True):
    result = subprocess.run([TRACEFS, *args], capture_output=True, timeout=300)
    stderr = result.stderr.decode(errors="replace")
    if "Sanitizer" in stderr or "runtime error:" in stderr:
        fail(f"tracefs {' '.join(args)}: sanitizer report: {stderr[:400]}")
    if result.returncode < 0 or result.returncode >= 128:
        fail(f"tracefs {' '.join(args)}: killed by signal ({result.returncode})")
    if check and result.returncode != 0:
        fail(f"tracefs {' '.join(args)}: exit {result.returncode}: {result.stderr.decode(errors='replace')}")
    return result


def cat(log, path):
    return tracefs("cat", log, path).stdout


def without_heap(text):
    return re.sub(rb"## heap status information:\n(##   [^\n]*\n)*", b"", text)


def check_log(log):
    base = log[: -len(".rtrace")]
    reference = open(base + ".postproc.txt", "rb").read()
    events = cat(log, "events")
    if reference.startswith(b"version=2.0") and b"## heap status" in reference:
        events, reference = without_heap(events), without_heap(reference)
    if events != reference:
        fail(f"{log}: events differ from {base}.postproc.txt")
    leaks = cat(log, "leaks")
    compressed = cat(log, "leaks-compressed")
    if os.path.exists(base + ".postproc-leaks-compressed.txt"):
        if compressed != open(base + ".postproc-leaks-compressed.txt", "rb").read():
            fail(f"{log}: leaks-compressed differs from the -lc reference")
    first = events.split(b"\n", 1)[0]
    expected_first = re.sub(rb"(pid=\d+, )", rb"\1filter=leaks, ", first)
    if not leaks.startswith(expected_first + b"\n") and b"## heap" not in events:
        fail(f"{log}: leaks header is not the events header with filter=leaks")
    call_line = re.compile(rb"^(\d+)\. .*$", re.M)
    leak_calls = set(m.group(1) for m in call_line.finditer(leaks))
    compressed_calls = set(m.group(1) for m in call_line.finditer(compressed))
    # -lc lists only calls that have a backtrace packet; every one is a leak.
    if not compressed_calls <= leak_calls:
        fail(f"{log}: leaks-compressed lists calls that leaks does not")
    resources = tracefs("ls", log, "resources").stdout.decode().split()
    resource_leaks = b"".join(cat(log, f"resources/{r}/leaks") for r in resources)
    resource_lines = set(resource_leaks.split(b"\n"))
    for line in re.findall(rb"^\d+\. .* = 0x[0-9a-f]+$", leaks, re.M):
        if line not in resource_lines:
            fail(f"{log}: leaked allocation not in resources/*/leaks: {line.decode()}")
    count = len(call_line.findall(events))
    listing = tracefs("ls", log, "calls").stdout.decode().split()
    if len(listing) != count:
        fail(f"{log}: calls/ lists {len(listing)} entries, events has {count} calls")
    for n in sorted({1, count // 2, count} - {0}):
        call = json.loads(cat(log, f"calls/{n}.json"))
        if call["index"] != n:
            fail(f"{log}: calls/{n}.json has index {call['index']}")
    json.loads(cat(log, "export/chrome.json"))
    json.loads(cat(log, "info.json"))
    if cat(log, "errors"):
        fail(f"{log}: errors on a clean log: {cat(log, 'errors').decode()}")


def check_2010(path):
    result = tracefs("ls", path, check=False)
    message = result.stderr.decode(errors="replace")
    if result.returncode != 1 or "2010 pre-release" not in message:
        fail(f"{path}: expected a clear refusal, got exit {result.returncode}: {message}")


logs = sorted(glob.glob(os.path.join(ROOT, "tests/data/sprtrace/*.rtrace")))
if CORPUS and os.path.isdir(os.path.join(CORPUS, "sp-rtrace")):
    logs += sorted(glob.glob(os.path.join(CORPUS, "sp-rtrace/v*/*.rtrace")))
    for raw in sorted(glob.glob(os.path.join(CORPUS, "sp-rtrace/historical-2010/*.raw"))):
        check_2010(raw)
else:
    print("corpus absent: only tests/data/sprtrace checked")
for log in logs:
    check_log(log)
print(f"{len(logs)} logs checked, {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
