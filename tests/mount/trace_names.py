"""Names from a trace with a newline or a NUL: an FXT trace (made here with
tests/fxt/fxt_writer.py) whose blobs are named "two\\nlines" and
"nul\\0after" and whose counter is named "count\\nme".  The tree shows them
escaped (%0A, %00), one line each in `ls`, not cut at the NUL, and serves
the blobs' bytes under those names, offline and through a mount."""
import os
import subprocess
import sys
import tempfile

ROOT = os.environ["TRACEFS_SOURCE_ROOT"]
TRACEFS = os.environ["TRACEFS"]
sys.path.insert(0, os.path.join(ROOT, "tests", "fxt"))
import fxt_writer  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tests"))
from mount_guard import guard  # noqa: E402

failures = []
work = tempfile.mkdtemp(prefix="tracefs-names-")
os.environ["XDG_CACHE_HOME"] = os.path.join(work, "cache")
trace = os.path.join(work, "names.fxt")
w = fxt_writer.Writer(False)
w.magic()
w.init(1000000)
w.provider_info(5, "synth")
w.provider_section(5)
w.string(1, "cat")
w.thread(1, 10, 11)
w.blob("two\nlines", b"first blob\n")
w.blob("nul\0after", b"second blob\n")
w.event(1, 100, 1, 1, "count\nme", args=[(3, "value", 7)], extra=42)
with open(trace, "wb") as f:
    f.write(w.out)

expected_blobs = {"two%0Alines": b"first blob\n", "nul%00after": b"second blob\n"}


def run(*args):
    return subprocess.run([TRACEFS, *args], capture_output=True, check=False)


listing = run("ls", trace, "blobs").stdout.decode().splitlines()
if sorted(listing) != sorted(expected_blobs):
    failures.append(f"tracefs ls blobs: {listing!r}")
for name, content in expected_blobs.items():
    got = run("cat", trace, f"blobs/{name}").stdout
    if got != content:
        failures.append(f"tracefs cat blobs/{name}: {got!r}")
counters = run("ls", trace, "counters").stdout.decode().splitlines()
if counters != ["count%0Ame.42.csv"]:
    failures.append(f"tracefs ls counters: {counters!r}")

if os.path.exists("/dev/fuse"):
    mnt = tempfile.mkdtemp(prefix="tracefs-mnt-")
    mounted = subprocess.run([TRACEFS, "-o", "auto_unmount,noindex", trace, mnt]).returncode == 0
    if mounted:
        guard(mnt)
    try:
        if not mounted:
            failures.append("mount")
        else:
            names = sorted(os.listdir(os.path.join(mnt, "blobs")))
            if names != sorted(expected_blobs):
                failures.append(f"mounted blobs/: {names!r}")
            for name, content in expected_blobs.items():
                try:
                    with open(os.path.join(mnt, "blobs", name), "rb") as f:
                        if f.read() != content:
                            failures.append(f"mounted blobs/{name}")
                except OSError as error:
                    failures.append(f"mounted blobs/{name}: {error}")
            for _, dirs, files in os.walk(mnt):
                for name in dirs + files:
                    if any(c < " " for c in name):
                        failures.append(f"a name with a control character: {name!r}")
    finally:
        if mounted:
            subprocess.run(["fusermount3", "-u", mnt])
        os.rmdir(mnt)

subprocess.run(["rm", "-rf", work])
for failure in failures:
    print("FAIL:", failure)
print(f"{len(failures)} check(s) failed" if failures else "all checks passed")
sys.exit(1 if failures else 0)
