#!/usr/bin/env python3
"""Every command the README's ```sh blocks and the man page's EXAMPLES show
is either run here, on the bundled samples, or listed in SKIP with the
reason it cannot run in CI; a command in neither table fails the test (and
so does a table entry the docs no longer show), so the docs cannot drift
from the program.

Each block runs in order in one shell state, from the source root, with the
placeholders of PLACEHOLDERS replaced (sample traces, temporary mount
points) and `tracefs` meaning the built binary.  Every mount gets
`auto_unmount`, and whatever is still mounted is unmounted at exit.
"""
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile

SRC = os.environ["TRACEFS_SOURCE_ROOT"]
TRACEFS = os.environ["TRACEFS"]
FXT = os.path.join(SRC, "tests/data/fxt/fxt-cpp_all-records.fxt")
SPRTRACE = os.path.join(SRC, "tests/data/sprtrace/v2.0_file+memory.rtrace")
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# Text in the docs -> what the test puts there ({mnt} is a fresh directory).
PLACEHOLDERS = [
    ('"$PWD/build/tracefs#', '"{tracefs}#'),
    ("$HOME/traces/run.fxt", "{fxt}"),
    ("~/traces/run.fxt", "{fxt}"),
    ("trace.fxt", "{fxt}"),
    ("memory.rtrace", "{sprtrace}"),
    ("/mnt/t", "{mnt}"),
    ("Vsync", "cat:inner"),          # an event name the FXT sample has
]

# Commands run, with what they need beyond exit status 0:
#   mounts   the mount point is a mount afterwards (auto_unmount is added)
#   unmounts it is not a mount afterwards
#   unmount  the test unmounts it afterwards (the docs show no unmount)
#   stdout   a regex the whole output must match ({mnt}, {fxt} replaced)
#   lines    the number of output lines
#   needs    'root' (mount(8)) or 'installed' (this build as the tracefs on
#            the system PATH, which mount.fuse3 runs); skipped at run time
#            without it
#   special  'try': scripts/try on a temporary mount point, then each
#            command it prints
RUN = {
    "tracefs trace.fxt /mnt/t": {"mounts": True},
    "grep -l Vsync /mnt/t/threads/*/events": {"stdout": r"({mnt}/threads/\d+/events\n)+"},
    "tail -n 3 /mnt/t/events": {"lines": 3},
    "jq '.traceEvents[0]' /mnt/t/export/chrome.json": {"stdout": r'\{\n(.*\n)*\}\n'},
    "findmnt -no SOURCE,FSTYPE /mnt/t": {"stdout": r"{fxt} +fuse\.tracefs\n"},
    "fusermount3 -u /mnt/t": {"unmounts": True},
    "tracefs cat trace.fxt info.json | jq .": {"stdout": r'\{\n  "format": "fxt",\n(.*\n)*\}\n'},
    "tracefs ls -o format=sprtrace memory.rtrace calls | head": {"lines": 10},
    "scripts/try": {"special": "try"},
    "mount -t fuse.tracefs ~/traces/run.fxt /mnt/t -o ro,cache_size=512M":
        {"mounts": True, "unmount": True, "needs": "installed"},
    'mount -t fuse "$PWD/build/tracefs#$HOME/traces/run.fxt" /mnt/t -o ro':
        {"mounts": True, "unmount": True, "needs": "root"},
}

SKIP = {
    "scripts/test": "runs the whole suite, this test included (CI runs it as .ci/run)",
    "scripts/install-deps": "installs system packages with apt (root and network)",
    "meson setup build && ninja -C build": "builds the tree this test is running from",
    "meson test -C build": "runs the suite this test is part of",
    "meson install -C build": "writes to the system prefix (install-and-mount-helper installs into a DESTDIR)",
    "/home/me/traces/run.fxt  /mnt/t  fuse.tracefs  ro,noauto,cache_size=512M  0 0":
        "an /etc/fstab line, not a command (install-and-mount-helper mounts one with mount -T)",
}

failures = []
mount_dirs = []


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    failures.append(message)


def join_continuations(lines):
    out, pending = [], ""
    for line in lines:
        if line.endswith("\\"):
            pending += line[:-1]
            continue
        out.append(pending + line)
        pending = ""
    return out


def command_of(line):
    """The command on a doc line, without its trailing comment; '' if none."""
    line = line.strip()
    if not line or line.startswith("#"):
        return ""
    return re.sub(r"\s+#\s.*$", "", line)


def readme_blocks(path):
    blocks, block = [], None
    for line in open(path, encoding="utf-8").read().split("\n"):
        if block is None:
            if re.match(r"^```(sh|bash|shell)\s*$", line):
                block = []
        elif line.startswith("```"):
            blocks.append([c for c in map(command_of, join_continuations(block)) if c])
            block = None
        else:
            block.append(line)
    return blocks


def man_unescape(line):
    for a, b in (("\\-", "-"), ("\\(aq", "'"), ("\\(lq", '"'), ("\\(rq", '"'), ("\\e", "\\")):
        line = line.replace(a, b)
    return line


def man_blocks(path):
    """The EXAMPLES section's .nf/.fi blocks."""
    blocks, block, section = [], None, ""
    for line in open(path, encoding="utf-8").read().split("\n"):
        if line.startswith(".SH"):
            section = line[3:].strip().strip('"')
        elif section == "EXAMPLES" and line.startswith(".nf"):
            block = []
        elif block is not None and line.startswith(".fi"):
            blocks.append([c for c in map(command_of, join_continuations(block)) if c])
            block = None
        elif block is not None and not line.startswith("."):
            block.append(man_unescape(line))
    return blocks


def is_mount(path):
    return os.path.ismount(path)


def unmount(path):
    if is_mount(path):
        subprocess.run(["fusermount3", "-u", path], stderr=subprocess.DEVNULL)
    if is_mount(path):
        subprocess.run(["umount", "-l", path], stderr=subprocess.DEVNULL)


def cleanup(*_):
    for d in mount_dirs:
        unmount(d)
        shutil.rmtree(d, ignore_errors=True)
    if _:
        sys.exit(128 + _[0])


def fresh_dir():
    d = tempfile.mkdtemp(prefix="tracefs-readme-")
    mount_dirs.append(d)
    return d


def substitute(command, entry, mnt):
    for text, value in PLACEHOLDERS:
        command = command.replace(text, value)
    if command.startswith("tracefs "):
        rest = command[len("tracefs "):]
        auto = "-o auto_unmount " if entry.get("mounts") else ""
        command = "{tracefs} " + auto + rest
    elif entry.get("mounts") and command.startswith("mount "):
        command = re.sub(r"-o (\S+)", r"-o \1,auto_unmount", command)
    return command.format(tracefs=shlex.quote(TRACEFS), fxt=shlex.quote(FXT),
                          sprtrace=shlex.quote(SPRTRACE), mnt=shlex.quote(mnt))


def run(shell_command, what, timeout=120):
    try:
        p = subprocess.run(["bash", "-c", shell_command], cwd=SRC, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        fail(f"{what}: timed out")
        return None
    if p.returncode != 0:
        fail(f"{what}: exit {p.returncode}: {p.stderr.strip()[:500]}")
        return None
    return p


def unmet_need(entry):
    need = entry.get("needs")
    if need in ("root", "installed") and os.geteuid() != 0:
        return "mount(8) of a FUSE filesystem needs root"
    if need == "installed":
        installed = shutil.which("tracefs", path=SYSTEM_PATH)
        if not installed:
            return "no installed tracefs on the system PATH for mount.fuse3 to run"
        if os.path.realpath(installed) != os.path.realpath(TRACEFS):
            return f"the installed {installed} is not this build"
    return None


def check_try():
    mnt = fresh_dir()
    env_command = f"TRACEFS={shlex.quote(TRACEFS)} scripts/try {shlex.quote(FXT)} {shlex.quote(mnt)}"
    p = run(env_command, "scripts/try TRACE MOUNTPOINT")
    if p is None:
        return
    if not is_mount(mnt):
        fail("scripts/try: nothing mounted")
        return
    if f"Mounted {FXT} on {mnt}" not in p.stdout:
        fail(f"scripts/try: no 'Mounted' line: {p.stdout[:300]}")
    suggested = [line.strip() for line in p.stdout.split("\n") if line.startswith("  ")]
    if len(suggested) < 5:
        fail(f"scripts/try printed {len(suggested)} commands to try")
    for command in suggested:
        run(command, f"scripts/try's suggestion '{command}'")
    unmount_line = re.search(r"Unmount with: (.*)", p.stdout)
    if not unmount_line:
        fail("scripts/try: no 'Unmount with' line")
    else:
        run(unmount_line.group(1), "scripts/try's unmount command")
    if is_mount(mnt):
        fail("scripts/try's unmount command left the mount")


def run_block(block, where):
    mnt = fresh_dir()
    for command in block:
        if command in SKIP:
            print(f"skip ({where}): {command}: {SKIP[command]}")
            continue
        entry = RUN[command]
        reason = unmet_need(entry)
        if reason:
            print(f"skip ({where}): {command}: {reason}")
            continue
        if entry.get("special") == "try":
            check_try()
            print(f"ran ({where}): {command} (on a temporary mount point)")
            continue
        shell_command = substitute(command, entry, mnt)
        p = run(shell_command, f"{where}: {command}")
        print(f"ran ({where}): {command}")
        if p is None:
            continue
        if entry.get("mounts") and not is_mount(mnt):
            fail(f"{where}: {command}: nothing mounted")
        if entry.get("unmounts") and is_mount(mnt):
            fail(f"{where}: {command}: still mounted")
        if "lines" in entry and p.stdout.count("\n") != entry["lines"]:
            fail(f"{where}: {command}: {p.stdout.count(chr(10))} lines, not {entry['lines']}")
        if "stdout" in entry:
            pattern = entry["stdout"].replace("{mnt}", re.escape(mnt)).replace("{fxt}", re.escape(FXT))
            if not re.fullmatch(pattern, p.stdout):
                fail(f"{where}: {command}: unexpected output:\n{p.stdout[:1000]}")
        if entry.get("unmount"):
            unmount(mnt)
    if is_mount(mnt):
        fail(f"{where}: the block leaves {mnt} mounted")


def main():
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, cleanup)
    docs = [("README.md", readme_blocks(os.path.join(SRC, "README.md"))),
            ("tracefs.1 EXAMPLES", man_blocks(os.path.join(SRC, "docs/tracefs.1")))]
    shown = set()
    for where, blocks in docs:
        if not any(blocks):
            fail(f"{where}: no commands found (parser out of step with the file?)")
        for block in blocks:
            shown.update(block)
    for command in sorted(shown):
        if command not in RUN and command not in SKIP:
            fail(f"command in the docs is in neither RUN nor SKIP of {os.path.basename(__file__)}: {command}")
    for command in sorted(set(RUN) | set(SKIP)):
        if command not in shown:
            fail(f"table entry no longer shown in the docs: {command}")
    if failures:
        return 1
    if not os.path.exists("/dev/fuse") or not shutil.which("fusermount3"):
        print("every command is classified; no /dev/fuse or fusermount3: running skipped")
        return 77
    try:
        for where, blocks in docs:
            for i, block in enumerate(blocks):
                if any(c in RUN for c in block):
                    run_block(block, f"{where} block {i + 1}")
    finally:
        cleanup()
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
