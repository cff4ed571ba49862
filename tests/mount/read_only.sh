#!/usr/bin/env bash
# Every change to the tree is refused with "Read-only file system": by the
# kernel while the mount is read-only, and by tracefs itself once root
# remounts it read-write (`mount -i -o remount,rw`, which a FUSE mount
# allows).  The trace file keeps its bytes and its mtime.
set -u
source "$(dirname "$0")/lib.sh"
trace="$TRACEFS_SOURCE_ROOT/tests/data/fxt/fxt-cpp_all-records.fxt"
work=$(mktemp -d)
trap 'unmount_all; rm -rf "$work"' EXIT
cp "$trace" "$work/trace.fxt"
trace="$work/trace.fxt"
export XDG_CACHE_HOME="$work/cache"

# refused WHAT COMMAND...: the command fails, saying the file system is read-only.
refused() {
    local what=$1
    shift
    if "$@" 2> "$work/err"; then
        fail "$what succeeded"
    elif ! grep -q "Read-only file system" "$work/err"; then
        fail "$what: $(cat "$work/err")"
    fi
}

# xattr_refused WHAT PYTHON: os.setxattr and os.removexattr calls fail with EROFS.
xattr_refused() {
    python3 -c "
import errno, os, sys
try:
    $2
except OSError as e:
    sys.exit(0 if e.errno == errno.EROFS else 'errno %d' % e.errno)
sys.exit('succeeded')" || fail "$1"
}

try_changes() {
    local m=$1 label=$2
    refused "$label: touch" touch "$m/new-file"
    refused "$label: mkdir" mkdir "$m/new-dir"
    refused "$label: mkfifo" mkfifo "$m/new-fifo"
    refused "$label: ln -s" ln -s info.json "$m/new-link"
    refused "$label: ln" ln "$m/info.json" "$m/new-hard-link"
    refused "$label: mv" mv "$m/info.json" "$m/moved.json"
    refused "$label: rm" rm -f "$m/info.json"
    refused "$label: rmdir" rmdir "$m/export"
    refused "$label: chmod" chmod 600 "$m/info.json"
    refused "$label: touch -d" touch -d 2001-01-01 "$m/info.json"
    refused "$label: truncate" truncate -s 0 "$m/info.json"
    refused "$label: append" sh -c "echo x >> '$m/info.json'"
    refused "$label: dd into a file" dd if=/dev/zero of="$m/info.json" bs=1 count=1 conv=notrunc status=none
    xattr_refused "$label: setxattr" "os.setxattr('$m/info.json', 'user.note', b'x')"
    xattr_refused "$label: removexattr" "os.removexattr('$m/info.json', 'user.note')"
    [ "$(python3 -c "import os; print(os.listxattr('$m/info.json'))")" = "[]" ] || fail "$label: listxattr"
    [ -f "$m/info.json" ] && [ -d "$m/export" ] || fail "$label: the tree changed"
    jq -e .format "$m/info.json" > /dev/null || fail "$label: info.json no longer reads"
}

need_fuse
before=$(sha256sum < "$trace")
mtime=$(stat -c %Y "$trace")
mount_trace "$trace" || { fail "mount"; finish; }
grep -q " $MNT fuse.tracefs ro," /proc/mounts || fail "not mounted read-only"
try_changes "$MNT" "read-only mount"
if [ "$(id -u)" = 0 ] && mount -i -o remount,rw "$MNT" 2> "$work/remount.err"; then
    grep -q " $MNT fuse.tracefs rw," /proc/mounts || fail "the remount did not make it read-write"
    try_changes "$MNT" "remounted read-write"
else
    echo "not root, or no remount: $(cat "$work/remount.err" 2>/dev/null); tracefs's own refusals not tried"
fi
unmount_and_wait "$MNT" || fail "unmount"
[ "$(sha256sum < "$trace")" = "$before" ] || fail "the trace file changed"
[ "$(stat -c %Y "$trace")" = "$mtime" ] || fail "the trace file's mtime changed"
finish
