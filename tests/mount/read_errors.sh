#!/usr/bin/env bash
# A read that fails says why in /errors: a damaged chunk of a trace that has
# not changed is named as damage ("cannot be read or decompressed: the trace
# is damaged there"), never as a changed trace; a trace rewritten under the
# mount is named as changed (its stat differs).
set -u
source "$(dirname "$0")/lib.sh"
damaged=$TRACEFS_SOURCE_ROOT/tests/rr/neg/neg-bad-brotli
apitrace=$TRACEFS_SOURCE_ROOT/tests/data/apitrace/glxgears-2s.trace
[ -d "$damaged" ] && [ -f "$apitrace" ] || { echo "no test traces: skipped"; exit 77; }
work=$(mktemp -d /tmp/tracefs-read-errors-XXXXXX)
trap 'unmount_all; rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"
damage="events: the chunk at file offset 8 (stream offset 0) cannot be read or decompressed: the trace is damaged there"

"$TRACEFS" cat "$damaged" .tracefs/streams/events errors > "$work/out" 2> /dev/null && fail "damaged stream read without error"
grep -aqF "read offset 0: .tracefs/streams/events: Input/output error: $damage" "$work/out" ||
    fail "tracefs cat: /errors does not name the damage: $(grep -a '^read' "$work/out")"
grep -aq "changed" "$work/out" && fail "a damaged, unchanged trace reported as changed"

need_fuse
mount_trace "$damaged" -o noindex || exit 1
cat "$MNT/.tracefs/streams/events" > /dev/null 2>&1 && fail "mounted damaged stream read without error"
grep -qF "$damage" "$MNT/errors" || fail "mount: /errors does not name the damage: $(cat "$MNT/errors")"
grep -q "changed" "$MNT/errors" && fail "mount: a damaged, unchanged trace reported as changed"
fusermount3 -u "$MNT" || fail "unmount"

# Sized before the change (the read fails: a tiny cache holds none of the
# chunks it needs, once the background sizing of /events has let go of
# them), and not (the sizing fails).
cp "$apitrace" "$work/changing.trace"
mount_trace "$work/changing.trace" -o noindex,cache_size=1 || exit 1
stat "$MNT/.tracefs/streams/stream" > /dev/null || fail "stat of a stream"
wait_for_sizing "$MNT" || fail "the background sizing of /events did not finish"
truncate -s 64 "$work/changing.trace"
cat "$MNT/.tracefs/streams/stream" > /dev/null 2>&1 && fail "a truncated trace's stream read without error"
ls -l "$MNT/export/" > /dev/null 2>&1
changed="Input/output error: stream: the trace changed since it was mounted (its size or modification time differ)"
grep -q "^read offset [0-9]*: .tracefs/streams/stream: $changed" "$MNT/errors" ||
    fail "a changed trace's read not reported as changed: $(cat "$MNT/errors")"
grep -q "^size offset 0: export/chrome.json: $changed" "$MNT/errors" ||
    fail "a changed trace's sizing not reported as changed: $(cat "$MNT/errors")"
grep -q "damaged" "$MNT/errors" && fail "a changed trace reported as damaged"
fusermount3 -u "$MNT" || fail "unmount"
finish
