#!/usr/bin/env bash
# A folder holding traces of every format (and a file that is not a trace):
# one directory per trace, traces.json, the stranger named in /errors, one
# file of each trace read through the mount and equal to tracefs cat; a
# folder of traces that fail to open: empty directories, the reasons in /errors.
set -u
source "$(dirname "$0")/lib.sh"
work=$(mktemp -d /tmp/tracefs-folder-XXXXXX)
trap 'unmount_all; rm -rf "$work"' EXIT
folder="$work/traces"
mkdir -p "$folder"
count=0
for format in fxt sp-rtrace xray apitrace rr; do
    dir=$format; [ "$format" = sp-rtrace ] && dir=sprtrace
    trace=$(find_traces "$format" "$TRACEFS_SOURCE_ROOT/tests/data/$dir" | head -n 1)
    [ -n "$trace" ] || continue
    cp -r "$trace" "$folder/$format-$(basename "$trace")"
    count=$((count + 1))
    last="$format-$(basename "$trace")"
done
[ $count -gt 0 ] || { echo "no test traces: skipped"; exit 77; }
echo "not a trace" > "$folder/notes.txt"
ln -s "$last" "$folder/latest-trace"

[ "$("$TRACEFS" cat "$folder" traces.json | jq length)" = "$count" ] || fail "traces.json does not list $count traces"
"$TRACEFS" cat "$folder" errors | grep -q "notes.txt: not a recognised trace" || fail "notes.txt not in errors"

need_fuse
mount_trace "$folder" || exit 1
[ "$(jq length "$MNT/traces.json")" = "$count" ] || fail "mounted traces.json"
[ -e "$MNT/notes.txt" ] && fail "notes.txt shown"
[ "$(readlink "$MNT/latest-trace")" = "$last" ] || fail "latest-trace is not a symlink to $last"
for entry in $(jq -r '.[].name' "$MNT/traces.json"); do
    format=$(jq -r --arg n "$entry" '.[] | select(.name == $n) | .format' "$MNT/traces.json")
    [ "$(jq -r .format "$MNT/$entry/info.json")" = "$format" ] || fail "$entry/info.json format"
    cmp -s "$MNT/$entry/info.json" <("$TRACEFS" cat "$folder/$entry" info.json) ||
        fail "$entry/info.json differs from tracefs cat of the trace itself"
    if [ -f "$MNT/$entry/events" ]; then
        cmp -s "$MNT/$entry/events" <("$TRACEFS" cat "$folder/$entry" events) || fail "$entry/events"
    fi
done
[ "$(jq -r .format "$MNT/latest-trace/info.json")" != null ] || fail "latest-trace/info.json"
fusermount3 -u "$MNT" || fail "unmount"

# Traces that look like their format but do not open (an apitrace file cut
# in its header, an rr trace of another version): listed, each an empty
# directory once entered, and /errors says why.
mkdir "$work/broken"
head -c 40 "$TRACEFS_SOURCE_ROOT/tests/data/apitrace/glprog-small.trace" > "$work/broken/cut.trace"
cp -r "$TRACEFS_SOURCE_ROOT/tests/data/rr/edge-0" "$work/broken/rr-other-version"
chmod -R u+w "$work/broken/rr-other-version"
echo garbage > "$work/broken/rr-other-version/version"
mount_trace "$work/broken" || exit 1
[ "$(jq -r '[.[].name] | sort | join(" ")' "$MNT/traces.json")" = "cut.trace rr-other-version" ] ||
    fail "broken traces not listed: $(cat "$MNT/traces.json")"
for entry in cut.trace rr-other-version; do
    [ -d "$MNT/$entry" ] || fail "$entry is not a directory"
    [ -z "$(ls -A "$MNT/$entry")" ] || fail "$entry is not empty: $(ls -A "$MNT/$entry")"
done
grep -q "^folder offset 0: $work/broken/cut.trace: apitrace: " "$MNT/errors" || fail "/errors: $(cat "$MNT/errors")"
grep -q "^folder offset 0: $work/broken/rr-other-version: rr: trace has an incompatible version" "$MNT/errors" ||
    fail "/errors: $(cat "$MNT/errors")"
fusermount3 -u "$MNT" || fail "unmount the broken folder"
finish
