#!/usr/bin/env bash
# -o allow_other shows a trace to every user only as far as the trace's own
# mode allows: its files get the trace's read bits (0600 -> 0400 files,
# 0500 directories), owned by the trace's owner, and the kernel enforces
# them (default_permissions).  User nobody reads a 0644 trace through the
# mount and cannot read a 0600 one, nor, in a folder mount, a 0600 trace
# that a symlink in the folder points to.
set -u
source "$(dirname "$0")/lib.sh"
need_fuse
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv > /dev/null || ! id nobody > /dev/null 2>&1; then
    echo "needs root (allow_other), setpriv and user nobody: skipped"
    exit 77
fi
trace=$(find_traces fxt "$TRACEFS_SOURCE_ROOT/tests/data/fxt" | head -n 1)
rr=$TRACEFS_SOURCE_ROOT/tests/data/rr/mtdemo-0
[ -n "$trace" ] && [ -d "$rr" ] || { echo "no test traces: skipped"; exit 77; }
work=$(mktemp -d /tmp/tracefs-allow-other-XXXXXX)
trap 'unmount_all; rm -rf "$work"' EXIT
chmod 0755 "$work"
export XDG_CACHE_HOME="$work/cache"

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

cp "$trace" "$work/private.fxt"; chmod 0600 "$work/private.fxt"
cp "$trace" "$work/public.fxt"; chmod 0644 "$work/public.fxt"
cp -r "$rr" "$work/private-rr"; chmod 0700 "$work/private-rr"
mkdir "$work/outside"; cp "$trace" "$work/outside/secret.fxt"; chmod 0600 "$work/outside/secret.fxt"
mkdir -m 0755 "$work/folder"
cp -p "$work/public.fxt" "$work/private.fxt" "$work/folder/"
cp -rp "$work/private-rr" "$work/folder/"
ln -s "$work/outside/secret.fxt" "$work/folder/link.fxt"

# mode_of PATH: octal permission bits as stat shows them.
mode_of() { stat -c %a "$1"; }

mount_trace "$work/public.fxt" -o allow_other,noindex || exit 1
[ "$(mode_of "$MNT/events")" = 444 ] || fail "0644 trace: events mode $(mode_of "$MNT/events")"
[ "$(mode_of "$MNT/.tracefs")" = 555 ] || fail "0644 trace: directory mode $(mode_of "$MNT/.tracefs")"
as_nobody cat "$MNT/events" > /dev/null || fail "nobody cannot read a 0644 trace's events"
fusermount3 -u "$MNT" || fail "unmount"

mount_trace "$work/private.fxt" -o allow_other,noindex || exit 1
[ "$(mode_of "$MNT/events")" = 400 ] || fail "0600 trace: events mode $(mode_of "$MNT/events")"
[ "$(mode_of "$MNT/.tracefs")" = 500 ] || fail "0600 trace: directory mode $(mode_of "$MNT/.tracefs")"
[ "$(stat -c %u "$MNT/events")" = "$(stat -c %u "$work/private.fxt")" ] || fail "owner is not the trace's"
cat "$MNT/events" > /dev/null || fail "the owner cannot read its own 0600 trace"
as_nobody cat "$MNT/events" > /dev/null 2>&1 && fail "nobody reads a 0600 trace's events"
as_nobody cat "$MNT/.tracefs/streams/file" > /dev/null 2>&1 && fail "nobody reads a 0600 trace's stream"
as_nobody ls "$MNT" > /dev/null 2>&1 && fail "nobody lists a 0600 trace"
fusermount3 -u "$MNT" || fail "unmount"

mount_trace "$work/private-rr" -o allow_other,noindex || exit 1
[ "$(mode_of "$MNT/events")" = 400 ] || fail "0700 rr trace: events mode $(mode_of "$MNT/events")"
[ "$(mode_of "$MNT/threads")" = 500 ] || fail "0700 rr trace: directory mode $(mode_of "$MNT/threads")"
as_nobody cat "$MNT/events" > /dev/null 2>&1 && fail "nobody reads a 0700 rr trace's events"
fusermount3 -u "$MNT" || fail "unmount"

mount_trace "$work/folder" -o allow_other,noindex || exit 1
as_nobody cat "$MNT/traces.json" > /dev/null || fail "nobody cannot read the 0755 folder's traces.json"
as_nobody cat "$MNT/public.fxt/events" > /dev/null || fail "nobody cannot read the folder's 0644 trace"
[ "$(mode_of "$MNT/private.fxt")" = 500 ] || fail "folder: 0600 trace's directory mode $(mode_of "$MNT/private.fxt")"
[ "$(mode_of "$MNT/private.fxt/events")" = 400 ] || fail "folder: 0600 trace's events mode"
[ "$(mode_of "$MNT/link.fxt/events")" = 400 ] || fail "folder: symlinked 0600 trace's events mode"
for entry in private.fxt private-rr link.fxt; do
    as_nobody cat "$MNT/$entry/events" > /dev/null 2>&1 && fail "nobody reads the folder's $entry"
    cat "$MNT/$entry/events" > /dev/null || fail "the owner cannot read the folder's $entry"
done
fusermount3 -u "$MNT" || fail "unmount"
finish
