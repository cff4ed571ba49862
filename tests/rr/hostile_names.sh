#!/bin/bash
# Memory amplification through rr's side streams (issue 27): edge-0 with an
# `mmaps` stream of 48 records naming files of 16 MiB (the 44 KB trace of
# the issue; brotli makes each name nothing) and of 48 records with 1 MiB
# names.  Both are served within the memory rule (peak RSS <= cache_size +
# 2 % of the trace's file size + 16 MiB) and 30 s, by `tracefs cat` and by
# a mount: 16 MiB records are read past and reported (no record is held
# past 4 MiB), 1 MiB names are kept cut at 4096 bytes with a marker.  And
# 20 M identical frames: the index stops at its table budget.
# usage: hostile_names.sh RR_BLOCKS
set -u
source "$TRACEFS_SOURCE_ROOT/tests/mount/lib.sh"
blocks=$1
edge="$TRACEFS_SOURCE_ROOT/tests/data/rr/edge-0"
peak="$TRACEFS_SOURCE_ROOT/tests/apitrace/child_usage.py"
make_mmaps="$TRACEFS_SOURCE_ROOT/tests/rr/make_mmaps.py"
work=$(mktemp -d)
trap 'unmount_all; rm -rf "$work"' EXIT
cache=$((8 << 20))

# make_trace NAME NAME_BYTES: edge-0 with 48 hostile mmaps records.
make_trace() {
    cp -r "$edge" "$work/$1"
    chmod -R u+w "$work/$1"
    python3 "$make_mmaps" 48 "$2" | "$blocks" pack 1048576 > "$work/$1/mmaps"
}

# check_trace NAME EXPECTED_ERROR
check_trace() {
    local label=$1 trace=$work/$1 expect=$2 bytes limit start elapsed rss pid
    bytes=$(du -b -s "$trace" | cut -f 1)
    limit=$(( (cache + bytes / 50 + (16 << 20)) / 1024 ))
    echo "$label: $bytes bytes, rule: $limit KiB"
    export XDG_CACHE_HOME="$work/cache-$label"
    start=$(date +%s.%N)
    TRACEFS_CACHE_SIZE=$cache python3 "$peak" "$TRACEFS" cat "$trace" info.json errors > "$work/out" \
        2> "$work/cat.err" || fail "$label: tracefs cat"
    elapsed=$(echo "$(date +%s.%N) - $start" | bc)
    rss=$(tail -n 1 "$work/cat.err" | cut -d " " -f 1)
    echo "  tracefs cat info.json errors: ${elapsed} s, peak $rss KiB"
    [ "$(echo "$elapsed < 30" | bc)" = 1 ] || fail "$label: cat took $elapsed s"
    [ "$sanitized" = 1 ] || [ "$rss" -le "$limit" ] || fail "$label: cat peak $rss KiB over $limit KiB"
    grep -q -- "$expect" "$work/out" || fail "$label: /errors lacks \"$expect\""
    # The frames are all there (the side streams do not stop them).
    [ "$("$TRACEFS" cat "$trace" info.json | jq .rr.frames)" = "$("$TRACEFS" cat "$edge" info.json | jq .rr.frames)" ] ||
        fail "$label: frames differ from edge-0's"
    rm -rf "$XDG_CACHE_HOME"
    start=$(date +%s.%N)
    mount_trace "$trace" -o "cache_size=$cache" || { fail "$label: mount"; return; }
    pid=$(pgrep -n -f -- "$MNT") || pid=""
    cat "$MNT/info.json" "$MNT/events" > /dev/null || fail "$label: mounted reads"
    ls "$MNT/mmaps" > /dev/null || fail "$label: mounted mmaps/"
    elapsed=$(echo "$(date +%s.%N) - $start" | bc)
    if [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; then
        rss=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
        echo "  mount and reads: ${elapsed} s, daemon peak $rss KiB"
        [ "$sanitized" = 1 ] || [ "$rss" -le "$limit" ] || fail "$label: daemon peak $rss KiB over $limit KiB"
    else
        fail "$label: daemon not found"
    fi
    [ "$(echo "$elapsed < 30" | bc)" = 1 ] || fail "$label: mount and reads took $elapsed s"
}

need_fuse
make_trace names-16m $((16 << 20))
check_trace names-16m "records larger than 4 MiB in all, none shown"
[ "$("$TRACEFS" cat "$work/names-16m" info.json | jq .rr.mmaps)" = 0 ] || fail "names-16m: records shown"
make_trace names-1m $((1 << 20))
check_trace names-1m "fsname of 1048576 bytes kept cut to 4096 bytes"
[ "$("$TRACEFS" cat "$work/names-1m" info.json | jq .rr.mmaps)" = 48 ] || fail "names-1m: not 48 mmaps"
name=$("$TRACEFS" cat "$work/names-1m" mmaps/47.json | jq -r .fsname)
[ "$name" = "$(printf 'A%.0s' $(seq 4096))...[truncated]" ] || fail "names-1m: mmaps/47.json fsname is ${#name} bytes"

# Identical frames (20 M of them, 48 KB of events): the frame checkpoints
# stop at the table budget with an /errors line, within the memory rule.
cp -r "$edge" "$work/frames"
chmod -R u+w "$work/frames"
python3 "$TRACEFS_SOURCE_ROOT/tests/rr/make_frames.py" 20000000 | "$blocks" pack 1048576 > "$work/frames/events"
export XDG_CACHE_HOME="$work/cache-frames"
bytes=$(du -b -s "$work/frames" | cut -f 1)
limit=$(( (cache + bytes / 50 + (16 << 20)) / 1024 ))
TRACEFS_CACHE_SIZE=$cache python3 "$peak" "$TRACEFS" cat "$work/frames" info.json errors > "$work/out" \
    2> "$work/cat.err" || fail "frames: tracefs cat"
rss=$(tail -n 1 "$work/cat.err" | cut -d " " -f 1)
echo "identical frames: $bytes bytes, $(grep '"frames"' "$work/out") peak $rss KiB (rule $limit KiB)"
[ "$sanitized" = 1 ] || [ "$rss" -le "$limit" ] || fail "frames: peak $rss KiB over $limit KiB"
grep -q "reach their budget" "$work/out" || fail "frames: no budget line in /errors"
finish
