#!/usr/bin/env bash
# Special files never hang tracefs: an rr trace whose `mmaps` or `tasks` is a
# FIFO, a FIFO given as the trace, as a folder's entry, as -o xray_binary=,
# or where the saved index would be; a character device, a socket or a
# block device given as the trace.  open(2) of a FIFO for reading waits
# for a writer forever; tracefs opens every input without blocking and reads
# only regular files (and directories), so each case answers within 5 s with
# a clear line on stderr or in /errors, and every mount unmounts.
set -u
source "$(dirname "$0")/lib.sh"
work=$(mktemp -d /tmp/tracefs-special-XXXXXX)
trap 'unmount_all; rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"
rr=$TRACEFS_SOURCE_ROOT/tests/data/rr/mtdemo-0
[ -d "$rr" ] || { echo "no rr test trace: skipped"; exit 77; }

# rr traces with one member replaced by a FIFO.
for member in mmaps tasks; do
    cp -r "$rr" "$work/rr-$member"
    chmod -R u+w "$work/rr-$member"
    rm "$work/rr-$member/$member"
    mkfifo "$work/rr-$member/$member"
done
mkfifo "$work/fifo"
mkdir "$work/folder"
cp -r "$work/rr-mmaps" "$work/folder/rr"
mkfifo "$work/folder/pipe"

# within5 WHAT COMMAND...: runs COMMAND with a 5 s limit; fails on a timeout.
within5() {
    local what=$1 rc
    shift
    timeout -k 1 5 "$@"
    rc=$?
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && fail "$what: still blocked after 5 s"
    return $rc
}

for member in mmaps tasks; do
    trace="$work/rr-$member"
    within5 "tracefs ls, $member a FIFO" "$TRACEFS" ls "$trace" > "$work/ls.out" ||
        fail "tracefs ls with $member a FIFO"
    grep -qx events "$work/ls.out" || fail "tracefs ls with $member a FIFO: no events"
    within5 "tracefs cat errors" "$TRACEFS" cat "$trace" errors > "$work/errors.out"
    grep -q "^$member offset 0: stream file not read: is a FIFO, not a regular file$" "$work/errors.out" ||
        fail "/errors does not say $member is a FIFO: $(cat "$work/errors.out")"
done

within5 "tracefs ls FIFO" "$TRACEFS" ls "$work/fifo" 2> "$work/stderr" && fail "a FIFO accepted as a trace"
grep -q "fifo: is a FIFO, not a regular file or directory" "$work/stderr" ||
    fail "FIFO trace message: $(cat "$work/stderr")"

# Other files that are not traces: a character device (reading /dev/zero
# would never end), a socket, a block device where the machine has one.
within5 "tracefs ls /dev/zero" "$TRACEFS" ls /dev/zero 2> "$work/stderr" && fail "/dev/zero accepted as a trace"
grep -q "/dev/zero: is a character device, not a regular file or directory" "$work/stderr" ||
    fail "/dev/zero message: $(cat "$work/stderr")"
python3 -c "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$work/socket"
within5 "tracefs ls socket" "$TRACEFS" ls "$work/socket" 2> "$work/stderr" && fail "a socket accepted as a trace"
grep -q "socket: is a socket, not a regular file or directory" "$work/stderr" ||
    fail "socket message: $(cat "$work/stderr")"
block=$(find /dev -maxdepth 1 -type b -print -quit 2>/dev/null)
if [ -n "$block" ]; then
    within5 "tracefs ls $block" "$TRACEFS" ls "$block" 2> "$work/stderr" && fail "$block accepted as a trace"
    grep -q "is a block device, not a regular file or directory" "$work/stderr" ||
        fail "$block message: $(cat "$work/stderr")"
fi

within5 "tracefs cat folder errors" "$TRACEFS" cat "$work/folder" errors > "$work/errors.out"
grep -q "pipe: is a FIFO, not a regular file or directory" "$work/errors.out" ||
    fail "folder /errors does not name the FIFO: $(cat "$work/errors.out")"

need_fuse
# mount_within5 TRACE [OPTIONS...]: mounts with a 5 s limit; sets MNT.
mount_within5() {
    local trace=$1 mnt
    shift
    mnt=$(mktemp -d /tmp/tracefs-mnt-XXXXXX)
    mounts+=("$mnt")
    MNT=$mnt
    within5 "mount $trace" "$TRACEFS" -o auto_unmount "$@" "$trace" "$mnt"
}
# unmount_within5: unmounts $MNT with a 5 s limit (a wedged worker made fusermount3 say busy).
unmount_within5() {
    within5 "unmount $MNT" fusermount3 -u "$MNT" || fail "unmount $MNT"
}

for member in mmaps tasks; do
    if mount_within5 "$work/rr-$member"; then
        within5 "ls mount" ls "$MNT" > /dev/null || fail "ls of the mount, $member a FIFO"
        grep -q "^$member offset 0: .*is a FIFO" "$MNT/errors" || fail "mounted /errors, $member a FIFO"
        within5 "cat events" cat "$MNT/events" > /dev/null || fail "cat events, $member a FIFO"
        unmount_within5
    else
        fail "mount with $member a FIFO"
    fi
done

mount_within5 "$work/fifo" 2> "$work/stderr" && fail "a FIFO mounted as a trace"
grep -q "is a FIFO" "$work/stderr" || fail "mount of a FIFO: $(cat "$work/stderr")"

# A folder: entering the rr trace opens its members in a FUSE worker.
if mount_within5 "$work/folder"; then
    within5 "ls folder/rr" ls "$MNT/rr" > "$work/ls.out" || fail "ls folder/rr"
    grep -qx events "$work/ls.out" || fail "folder/rr lists no events"
    within5 "cat folder/rr/errors" grep -q "^mmaps offset 0: .*is a FIFO" "$MNT/rr/errors" ||
        fail "folder/rr/errors does not say mmaps is a FIFO"
    grep -q "pipe: is a FIFO" "$MNT/errors" || fail "folder /errors does not name the FIFO"
    unmount_within5
else
    fail "folder mount"
fi

# -o xray_binary= naming a FIFO: the log mounts, /errors says why there are no names.
xray=$(find_traces xray "$TRACEFS_SOURCE_ROOT/tests/data/xray" | head -n 1)
if [ -n "$xray" ]; then
    if mount_within5 "$xray" -o noindex,xray_binary="$work/fifo"; then
        grep -q "^xray_binary offset 0: cannot open .*fifo: is a FIFO, not a regular file$" "$MNT/errors" ||
            fail "xray_binary FIFO not in /errors: $(cat "$MNT/errors")"
        unmount_within5
    else
        fail "mount with xray_binary a FIFO"
    fi
fi

# A FIFO where the saved index of a trace would be: not read, not trusted.
trace=$(find_traces fxt "$TRACEFS_SOURCE_ROOT/tests/data/fxt" | head -n 1)
if [ -n "$trace" ]; then
    mkdir -p "$work/xdg/tracefs"
    key=$(printf %s "$(realpath "$trace")" | sha256sum | cut -c1-32)
    mkfifo "$work/xdg/tracefs/$key.index"
    within5 "tracefs ls, index a FIFO" env XDG_CACHE_HOME="$work/xdg" \
        "$TRACEFS" ls "$trace" > /dev/null || fail "tracefs ls with the saved index a FIFO"
    # (the offline run saved an index over the FIFO: another one for the mount)
    mkdir "$work/index"
    mkfifo "$work/index/$key.index"
    if mount_within5 "$trace" -o index_dir="$work/index"; then
        grep -q "^saved_index used" "$MNT/.tracefs/stats" && fail "a FIFO used as the saved index"
        unmount_within5
    else
        fail "mount with the saved index a FIFO"
    fi
fi
finish
