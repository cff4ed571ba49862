#!/usr/bin/env bash
# Relative paths work from any directory, in the foreground and daemonized
# (the daemon chdir's to /): a folder of traces, the mount point,
# index_dir=, xray_binary= and the offline commands.  SIGTERM and SIGINT
# unmount a relative mount point.  findmnt shows the trace's absolute path
# as the source and fuse.tracefs as the type; -o fsname= is honoured.
set -u
source "$(dirname "$0")/lib.sh"
need_fuse
work=$(mktemp -d /tmp/tracefs-paths-XXXXXX)
work=$(realpath "$work")
trap 'unmount_all; rm -rf "$work"' EXIT
data=$TRACEFS_SOURCE_ROOT/tests/data

# A folder of two traces, mounted from a sibling directory by relative paths.
mkdir -p "$work/traces" "$work/m" "$work/sub"
mounts+=("$work/m")
n=0
for trace in "$data"/fxt/synthetic-le.fxt "$data"/fxt/synthetic-be.fxt "$data"/sprtrace/*; do
    [ -f "$trace" ] || continue
    [ "$("$TRACEFS" cat "$trace" info.json 2>/dev/null | jq -r .format)" != null ] || continue
    cp "$trace" "$work/traces/"
    n=$((n + 1))
    [ $n = 2 ] && break
done
[ $n = 2 ] || { echo "no test traces: skipped"; exit 77; }
entries=$(cd "$work/traces" && ls)

# The daemon is found by its own command line (relative, unique to this run).
daemon_pid() { pgrep -f -x "$TRACEFS $*" | head -n 1; }
wait_unmounted() {   # wait_unmounted WHAT: no mount left, and the directory usable
    for _ in $(seq 200); do grep -q " $work/m " /proc/mounts || break; sleep 0.05; done
    grep -q " $work/m " /proc/mounts && fail "$1: still mounted"
    ls "$work/m" >/dev/null 2>&1 || fail "$1: $work/m is a dead mount point"
}
# Everything the folder shows: every trace directory populated, no errors.
check_folder() {
    local what=$1 entry
    [ -z "$(cat "$work/m/errors")" ] || fail "$what: errors: $(head -n 3 "$work/m/errors")"
    for entry in $entries; do
        [ -n "$(ls "$work/m/$entry")" ] || fail "$what: $entry is empty"
        jq -e .format "$work/m/$entry/info.json" >/dev/null || fail "$what: $entry/info.json"
        [ -z "$(cat "$work/m/$entry/errors")" ] || fail "$what: $entry/errors not empty"
    done
}

cd "$work/sub"
"$TRACEFS" ../traces ../m || fail "daemonized mount of a relative folder on a relative mount point"
check_folder "daemonized"
[ "$(findmnt -no SOURCE,FSTYPE --mountpoint "$work/m")" = "$work/traces fuse.tracefs" ] ||
    fail "findmnt shows '$(findmnt -no SOURCE,FSTYPE --mountpoint "$work/m")', not '$work/traces fuse.tracefs'"
grep -q "^$work/traces $work/m fuse.tracefs ro," /proc/mounts || fail "/proc/mounts line: $(grep " $work/m " /proc/mounts)"
pid=$(daemon_pid "../traces ../m")
if [ -n "$pid" ]; then
    kill -TERM "$pid"
    wait_unmounted "daemonized, SIGTERM"
else
    fail "daemon not found"
    fusermount3 -u "$work/m"
fi

# Foreground, SIGINT (Ctrl-C) and SIGTERM: a terminal user's daemon has
# SIGINT at default, unlike a script's background job.
for signal in INT TERM; do
    env --default-signal=INT "$TRACEFS" -f ../traces ../m &
    daemon=$!
    for _ in $(seq 200); do mountpoint -q "$work/m" && break; sleep 0.05; done
    mountpoint -q "$work/m" || fail "foreground mount ($signal)"
    check_folder "foreground"
    kill -$signal $daemon
    wait $daemon
    rc=$?
    [ $rc = 0 ] || fail "SIG$signal: exit status $rc"
    wait_unmounted "foreground, SIG$signal"
done

# index_dir= relative: the index lands where it was meant, not under /.
one=$(echo "$entries" | head -n 1)
"$TRACEFS" -o index_dir=idx "../traces/$one" ../m || fail "mount with -o index_dir=idx"
unmount_and_wait "$work/m" || fail "unmount (index_dir=idx)"
[ -n "$(ls idx 2>/dev/null)" ] || fail "relative index_dir: nothing saved in $work/sub/idx"
[ -e /idx ] && [ ! -e "$work/sub/idx" ] && fail "index saved under /idx"

# xray_binary= relative: the tree's binary symlink names the binary.
xlog=$data/xray/fib.fdr-emu.xray
if [ -f "$xlog" ] && [ -f "$data/xray/bin/fib" ]; then
    cp "$xlog" "$data/xray/bin/fib" "$work/sub/"
    "$TRACEFS" -o auto_unmount,xray_binary=fib fib.fdr-emu.xray ../m || fail "mount with -o xray_binary=fib"
    [ "$(readlink "$work/m/binary")" = "$work/sub/fib" ] || fail "binary -> $(readlink "$work/m/binary")"
    grep -q fib "$work/m/events" || fail "no function names with a relative xray_binary"
    fusermount3 -u "$work/m"
    "$TRACEFS" ls -o xray_binary=fib fib.fdr-emu.xray functions | grep -q fib ||
        fail "offline -o xray_binary=fib: no function named fib"
fi

# Offline commands with relative paths.
[ "$("$TRACEFS" ls ../traces)" = "$("$TRACEFS" ls "$work/traces")" ] || fail "offline ls of a relative folder"
[ -n "$("$TRACEFS" ls ../traces "$one")" ] || fail "offline ls of a relative folder's trace"
"$TRACEFS" cat ../traces "$one/info.json" | jq -e .format >/dev/null || fail "offline cat through a relative folder"

# -o fsname= is the user's; a path with a comma and a space is shown whole.
"$TRACEFS" -o auto_unmount,fsname=mytrace "../traces/$one" ../m || fail "mount with fsname="
[ "$(findmnt -no SOURCE --mountpoint "$work/m")" = mytrace ] || fail "fsname= not honoured"
fusermount3 -u "$work/m"
odd="$work/a, b"
mkdir -p "$odd"
cp "$work/traces/$one" "$odd/"
"$TRACEFS" -o auto_unmount "$odd/$one" ../m || fail "mount of a path with a comma"
[ "$(findmnt -no SOURCE,FSTYPE --mountpoint "$work/m")" = "$odd/$one fuse.tracefs" ] ||
    fail "findmnt of a path with a comma: $(findmnt -no SOURCE,FSTYPE --mountpoint "$work/m")"
fusermount3 -u "$work/m"
cd /
finish
