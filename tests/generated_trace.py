"""What the tests of traces written from scratch share: a work folder that
is removed whatever happens, tracefs run on a trace without a saved index
under a time limit, and the report of failures."""
import contextlib
import os
import shutil
import subprocess
import tempfile

TRACEFS = os.environ.get("TRACEFS", "build/tracefs")
# Far above what any answer takes (well under a second; a few under the
# sanitizers): the inputs are built so that a cost superlinear in what the
# trace names runs for minutes.
SECONDS = 120


def tracefs(command, trace, *paths):
    """`tracefs COMMAND -o noindex TRACE PATHS...`: its output as text, or
    None when it does not answer within SECONDS."""
    try:
        return subprocess.run([TRACEFS, command, "-o", "noindex", trace, *paths], check=True,
                              capture_output=True, timeout=SECONDS).stdout.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return None


@contextlib.contextmanager
def work_folder():
    work = tempfile.mkdtemp()
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def report(failures, summary):
    """Prints each failure and a summary line: the test's exit status."""
    for failure in failures:
        print("FAIL", failure)
    print(summary)
    return 1 if failures else 0
