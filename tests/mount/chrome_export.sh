#!/usr/bin/env bash
# export/chrome.json of every test trace of a format is valid Chrome Trace
# Event JSON.  usage: chrome_export.sh FORMAT DATA_DIR
set -u
source "$(dirname "$0")/lib.sh"
format=$1
mapfile -t traces < <(find_traces "$format" "$TRACEFS_SOURCE_ROOT/tests/data/$2")
[ ${#traces[@]} -gt 0 ] || { echo "no $format traces: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for trace in "${traces[@]}"; do
    if ! "$TRACEFS" cat "$trace" export/chrome.json > "$work/chrome.json" 2>"$work/err"; then
        fail "$trace has no export/chrome.json ($(cat "$work/err"))"
        continue
    fi
    python3 "$TRACEFS_SOURCE_ROOT/tests/mount/chrome_json.py" "$work/chrome.json" || fail "$trace: invalid export"
done
finish
