"""Mount tests in Python: guard(mnt) after mounting starts
tests/mount/unmount_when_gone.sh, which unmounts `mnt` should this process
end without its `finally` (SIGKILL); on_signals() turns SIGTERM, SIGINT and
SIGHUP (meson's timeout, ^C, a closed terminal) into an exit that runs it."""
import os
import signal
import subprocess
import sys

SOURCE_ROOT = os.environ.get("TRACEFS_SOURCE_ROOT", ".")
WATCHER = os.path.join(SOURCE_ROOT, "tests", "mount", "unmount_when_gone.sh")


def guard(mnt):
    subprocess.Popen(["sh", WATCHER, str(os.getpid())], env=dict(os.environ, GUARDED_MOUNT=mnt), start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def on_signals():
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda signum, frame: sys.exit(128 + signum))
