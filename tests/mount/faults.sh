#!/usr/bin/env bash
# Faults while mounted: the trace truncated, overwritten or deleted under
# the mount; a cache budget smaller than one chunk; SIGTERM and SIGINT;
# lazy unmount; fusermount3 -u with readers active.  Each must give a
# clear error or the right bytes, never a crash, a hang or wrong bytes.
set -u
source "$(dirname "$0")/lib.sh"
need_fuse

original=""
for format in fxt sp-rtrace xray apitrace; do
    dir=$format; [ "$format" = sp-rtrace ] && dir=sprtrace
    original=$(find_traces "$format" "$TRACEFS_SOURCE_ROOT/tests/data/$dir" | while read -r t; do
        [ -f "$t" ] && echo "$(stat -c %s "$t") $t"; done | sort -n | tail -n 1 | cut -d' ' -f2-)
    [ -n "$original" ] && break
done
[ -n "$original" ] || { echo "no single-file test trace: skipped"; exit 77; }
work=$(mktemp -d /tmp/tracefs-faults-XXXXXX)
trap 'unmount_all; rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"

# The expected bytes of every file: some files name the trace's path, so
# every mount below serves a copy at one path, $work/trace.
expected="$work/expected"
mkdir -p "$expected"
cp "$original" "$work/pristine"
original="$work/pristine"
list_files() { (cd "$1" && find . -type f ! -path './.tracefs/*' ! -name errors | head -n 200 | sort); }

start_daemon() {   # start_daemon TRACE [options]: foreground daemon, pid in DAEMON
    local trace=$1
    shift
    MNT=$(mktemp -d /tmp/tracefs-mnt-XXXXXX)
    mounts+=("$MNT")
    # Background jobs of a script start with SIGINT ignored; a terminal
    # user's daemon has it at default, as here.  No auto_unmount (which
    # mount_trace uses): these checks are that the daemon unmounts by itself.
    env --default-signal=INT "$TRACEFS" -f "$@" "$trace" "$MNT" &
    DAEMON=$!
    for _ in $(seq 200); do mountpoint -q "$MNT" && return 0; sleep 0.05; done
    fail "daemon did not mount $trace"
    return 1
}

daemon_gone() {    # the daemon exited by itself within 10 s and left no mount
    for _ in $(seq 200); do kill -0 "$DAEMON" 2>/dev/null || break; sleep 0.05; done
    kill -0 "$DAEMON" 2>/dev/null && { fail "$1: daemon still running"; kill -9 "$DAEMON"; }
    wait "$DAEMON" 2>/dev/null
    local rc=$?
    [ $rc -lt 128 ] || fail "$1: daemon died of signal $((rc - 128))"
    grep -q " $MNT " /proc/mounts && fail "$1: still mounted"
    return 0
}

# Every file reads either its right bytes or fails (EIO); never other bytes.
check_right_or_error() {
    local what=$1 mnt=$2 f
    while read -r f; do
        if cat "$mnt/$f" > "$work/got" 2>/dev/null; then
            cmp -s "$work/got" "$expected/$f" || fail "$what: $f served wrong bytes"
        fi
    done < "$work/files"
}

# Reference bytes.
cp "$original" "$work/trace"
start_daemon "$work/trace" -o noindex || exit 1
list_files "$MNT" > "$work/files"
while read -r f; do mkdir -p "$expected/$(dirname "$f")"; cat "$MNT/$f" > "$expected/$f"; done < "$work/files"
fusermount3 -u "$MNT"; daemon_gone "reference"

for fault in truncate overwrite delete; do
    cp "$original" "$work/trace"
    start_daemon "$work/trace" -o noindex,cache_size=64K || continue
    head -c 100 "$MNT/info.json" >/dev/null
    case $fault in
    truncate) truncate -s $(( $(stat -c %s "$work/trace") / 2 )) "$work/trace" ;;
    overwrite) head -c "$(stat -c %s "$work/trace")" /dev/urandom > "$work/trace.new"
               cat "$work/trace.new" > "$work/trace" ;;
    delete) rm "$work/trace" ;;
    esac
    echo 3 > /proc/sys/vm/drop_caches 2>/dev/null
    check_right_or_error "$fault" "$MNT"
    if [ $fault = delete ]; then
        # The open file survives its unlinking: everything still reads right.
        while read -r f; do cmp -s "$MNT/$f" "$expected/$f" || fail "delete: $f"; done < "$work/files"
    fi
    kill -0 "$DAEMON" || fail "$fault: daemon died"
    cat "$MNT/errors" > /dev/null || fail "$fault: /errors unreadable"
    fusermount3 -u "$MNT"; daemon_gone "$fault"
done

# A cache budget smaller than one chunk still serves every byte right.
cp "$original" "$work/trace"
start_daemon "$work/trace" -o noindex,cache_size=1 && {
    while read -r f; do cmp -s "$MNT/$f" "$expected/$f" || fail "cache_size=1: $f"; done < "$work/files"
    fusermount3 -u "$MNT"; daemon_gone "cache_size=1"
}

for signal in TERM INT; do
    cp "$original" "$work/trace"
    start_daemon "$work/trace" -o noindex && { kill -$signal "$DAEMON"; daemon_gone "SIG$signal"; }
done

# SIGKILL, which no handler sees: with auto_unmount (as the other mount
# tests mount) fusermount3 unmounts, so no stale mount is left behind.
start_daemon "$work/trace" -o noindex,auto_unmount && {
    kill -KILL "$DAEMON"
    wait "$DAEMON" 2>/dev/null
    for _ in $(seq 200); do grep -q " $MNT " /proc/mounts || break; sleep 0.05; done
    grep -q " $MNT " /proc/mounts && fail "SIGKILL with auto_unmount: still mounted"
}

# Lazy unmount (what a removed mount point comes down to): the daemon exits.
start_daemon "$work/trace" -o noindex && {
    rmdir "$MNT" 2>/dev/null && fail "rmdir of a mounted directory succeeded"
    umount -l "$MNT"; daemon_gone "umount -l"
}

# fusermount3 -u while readers are busy: refused as busy or done; either
# way the readers get errors, not wrong bytes, and the daemon ends cleanly.
start_daemon "$work/trace" -o noindex && {
    largest=$(find "$MNT" -type f -printf '%s %P\n' | sort -n | tail -n 1 | cut -d' ' -f2-)
    for _ in 1 2 3 4; do (while cat "$MNT/$largest" > /dev/null 2>&1; do :; done) & done
    sleep 1
    fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT"
    daemon_gone "fusermount3 -u with readers"
    kill $(jobs -p) 2>/dev/null
    wait 2>/dev/null
}
finish
