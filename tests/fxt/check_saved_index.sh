#!/usr/bin/env bash
# A second opening of each FXT sample loads the saved index instead of
# scanning, and shows exactly the same tree, byte for byte.
set -u
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
touch "$work/not-a-directory"
rc=0
for trace in "$TRACEFS_SOURCE_ROOT"/tests/data/fxt/*.fxt; do
    name=$(basename "$trace")
    # No usable cache directory: every command scans the trace.
    XDG_CACHE_HOME=$work/not-a-directory python3 "$TRACEFS_SOURCE_ROOT/tests/fxt/dump_tree.py" \
        "$TRACEFS" "$trace" "$work/scanned-$name" || rc=1
    export XDG_CACHE_HOME=$work/cache
    "$TRACEFS" cat "$trace" info.json >/dev/null
    "$TRACEFS" cat "$trace" .tracefs/stats | grep -qx 'index_source loaded' ||
        { echo "FAIL: $name: saved index not used"; rc=1; }
    python3 "$TRACEFS_SOURCE_ROOT/tests/fxt/dump_tree.py" "$TRACEFS" "$trace" "$work/loaded-$name" || rc=1
    diff -r "$work/scanned-$name" "$work/loaded-$name" >/dev/null ||
        { echo "FAIL: $name: loaded tree differs"; diff -r "$work/scanned-$name" "$work/loaded-$name" | head; rc=1; }
done
exit $rc
