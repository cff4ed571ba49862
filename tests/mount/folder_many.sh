#!/usr/bin/env bash
# A folder of 200 traces shows all 200 (there was a cap of 127), each one's
# generated entries (calls/<n>.json, a family) reachable with an inode of
# its own, and serves the same bytes as `tracefs cat` of the trace itself.
set -u
source "$(dirname "$0")/lib.sh"
trace=$TRACEFS_SOURCE_ROOT/tests/data/apitrace/glprog-small.brotli.trace
[ -f "$trace" ] || { echo "no apitrace test trace: skipped"; exit 77; }
work=$(mktemp -d /tmp/tracefs-folder-many-XXXXXX)
trap 'unmount_all; rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"
count=200
mkdir "$work/folder"
for i in $(seq -w 1 $count); do cp "$trace" "$work/folder/t$i.trace"; done

[ "$("$TRACEFS" cat "$work/folder" traces.json | jq length)" = $count ] || fail "traces.json does not list $count"
[ "$("$TRACEFS" ls "$work/folder" | grep -c '^t[0-9]*\.trace$')" = $count ] || fail "tracefs ls does not show $count"
"$TRACEFS" cat "$work/folder" errors | grep -q "not shown" && fail "/errors: traces not shown"
"$TRACEFS" cat "$trace" calls/5.json > "$work/expected"
cmp -s "$work/expected" <("$TRACEFS" cat "$work/folder" t$count.trace/calls/5.json) ||
    fail "tracefs cat folder/t$count.trace/calls/5.json"

need_fuse
mount_trace "$work/folder" -o noindex || exit 1
[ "$(ls "$MNT" | grep -c '^t[0-9]*\.trace$')" = $count ] || fail "the mount does not list $count traces"
[ "$(jq length "$MNT/traces.json")" = $count ] || fail "mounted traces.json"
declare -A seen
for i in 001 127 128 150 $count; do
    file="$MNT/t$i.trace/calls/5.json"
    cmp -s "$work/expected" "$file" || fail "t$i.trace/calls/5.json differs"
    inode=$(stat -c %i "$file") || continue
    [ -z "${seen[$inode]:-}" ] || fail "t$i.trace/calls/5.json shares inode $inode with ${seen[$inode]}"
    seen[$inode]=t$i
    [ "$(stat -c %i "$MNT/t$i.trace/calls")" != "$(stat -c %i "$MNT/t001.trace/calls")" ] || [ "$i" = 001 ] ||
        fail "t$i.trace/calls shares t001's inode"
    cmp -s "$MNT/t$i.trace/info.json" <("$TRACEFS" cat "$work/folder/t$i.trace" info.json) || fail "t$i.trace/info.json"
done
grep -q "not shown" "$MNT/errors" && fail "mounted /errors: traces not shown"
fusermount3 -u "$MNT" || fail "unmount"
finish
