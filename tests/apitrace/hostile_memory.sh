#!/bin/bash
# Memory amplification (issue 27): a real small zstd trace followed by
# zstd frames of zero bytes (each `00 00 00` is a call entered and never
# left: 128 M calls from a 47 KB file) is served within the memory rule
# (peak RSS <= cache_size + 2 % of the FILE size + 16 MiB) and 30 s, by
# `tracefs cat` and by a mount, with the calls of the real stream and an
# /errors line saying where the index's tables reached their budget.  The
# saved index stays within the table budget (4 MiB + 1 % of the file).
# Two layouts: 64 MiB frames (the issue's 47 KB file; a chunk is 64 MiB,
# so the default cache) and 1 MiB frames (cache_size=8M).
set -u
source "$TRACEFS_SOURCE_ROOT/tests/mount/lib.sh"
data="$TRACEFS_SOURCE_ROOT/tests/data/apitrace"
peak="$TRACEFS_SOURCE_ROOT/tests/apitrace/child_usage.py"
work=$(mktemp -d)
trap 'unmount_all; rm -rf "$work"' EXIT

# zero_frames SIZE COUNT: COUNT zstd frames of SIZE zero bytes.
zero_frames() {
    head -c "$1" /dev/zero | zstd -q -19 -c > "$work/frame.zst"
    for _ in $(seq "$2"); do cat "$work/frame.zst"; done
}
# limit_kib CACHE_BYTES FILE: the memory rule in KiB.
limit_kib() { echo $(( ($1 + $(stat -c %s "$2") / 50 + (16 << 20)) / 1024 )); }

# check_trace LABEL TRACE CACHE_BYTES
check_trace() {
    local label=$1 trace=$2 cache=$3 limit start elapsed rss
    limit=$(limit_kib "$cache" "$trace")
    echo "$label: $(stat -c %s "$trace") bytes, rule: $limit KiB"
    export XDG_CACHE_HOME="$work/cache-$label"
    start=$(date +%s.%N)
    TRACEFS_CACHE_SIZE=$cache python3 "$peak" "$TRACEFS" cat "$trace" info.json > "$work/info.json" \
        2> "$work/cat.err" || fail "$label: tracefs cat info.json"
    elapsed=$(echo "$(date +%s.%N) - $start" | bc)
    rss=$(tail -n 1 "$work/cat.err" | cut -d " " -f 1)
    echo "  tracefs cat info.json: ${elapsed} s, peak $rss KiB"
    [ "$(echo "$elapsed < 30" | bc)" = 1 ] || fail "$label: cat took $elapsed s"
    [ "$sanitized" = 1 ] || [ "$rss" -le "$limit" ] || fail "$label: cat peak $rss KiB over $limit KiB"
    [ "$(jq .apitrace.calls "$work/info.json")" -gt 0 ] || fail "$label: no calls"
    # The real stream's calls come first, as in the trace alone.
    cmp -s <("$TRACEFS" cat "$data/glprog-small.zstd.trace" events | head -n 150) \
        <("$TRACEFS" cat "$trace" events | head -n 150) || fail "$label: the real stream's calls differ"
    "$TRACEFS" cat "$trace" errors | grep -q "reach their budget" || fail "$label: no budget line in /errors"
    # Mounted: the daemon's peak while indexing and reading.
    rm -rf "$XDG_CACHE_HOME"
    start=$(date +%s.%N)
    mount_trace "$trace" -o "cache_size=$cache" || { fail "$label: mount"; return; }
    local pid
    pid=$(pgrep -n -f -- "$MNT") || pid=""
    jq -e .apitrace.calls "$MNT/info.json" > /dev/null || fail "$label: mounted info.json"
    tail -c 4096 "$MNT/events" > /dev/null || fail "$label: mounted events"
    elapsed=$(echo "$(date +%s.%N) - $start" | bc)
    if [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; then
        rss=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
        echo "  mount, info.json, tail of events: ${elapsed} s, daemon peak $rss KiB"
        [ "$sanitized" = 1 ] || [ "$rss" -le "$limit" ] || fail "$label: daemon peak $rss KiB over $limit KiB"
    else
        fail "$label: daemon not found"
    fi
    [ "$(echo "$elapsed < 30" | bc)" = 1 ] || fail "$label: mount and reads took $elapsed s"
    unmount_and_wait "$MNT"
    local index_bytes budget=$(( (4 << 20) + $(stat -c %s "$trace") / 100 ))
    index_bytes=$(find "$XDG_CACHE_HOME" -name '*.index' -printf '%s\n' 2> /dev/null | head -n 1)
    echo "  saved index: ${index_bytes:-none} bytes (table budget $budget)"
    [ -n "$index_bytes" ] && [ "$index_bytes" -le "$budget" ] || fail "$label: saved index ${index_bytes:-missing}"
}

need_fuse
command -v zstd > /dev/null || { echo "no zstd: skipped"; exit 77; }
(cat "$data/glprog-small.zstd.trace"; zero_frames 64M 6) > "$work/zeros-64m.trace"
check_trace zeros-64m "$work/zeros-64m.trace" $((256 << 20))
(cat "$data/glprog-small.zstd.trace"; zero_frames 1M 384) > "$work/zeros-1m.trace"
check_trace zeros-1m "$work/zeros-1m.trace" $((8 << 20))

# Checkpoints past their share of the budget are thinned (every other one
# kept): the views are the same bytes, from the index pass and from the
# saved index, within the memory rule.
python3 "$TRACEFS_SOURCE_ROOT/tests/apitrace/make_held_calls.py" "$work/held.raw" "$work/held.events" 3500000
export XDG_CACHE_HOME="$work/cache-held"
limit=$(limit_kib $((8 << 20)) "$work/held.raw")
for pass in scanned loaded; do
    TRACEFS_CACHE_SIZE=8M python3 "$peak" "$TRACEFS" cat "$work/held.raw" events > "$work/held.out" \
        2> "$work/cat.err" || fail "held calls ($pass): tracefs cat events"
    rss=$(tail -n 1 "$work/cat.err" | cut -d " " -f 1)
    echo "held calls ($pass index): events read with peak $rss KiB (rule $limit KiB)"
    cmp -s "$work/held.out" "$work/held.events" || fail "held calls ($pass): events differ from the expected dump"
    [ "$sanitized" = 1 ] || [ "$rss" -le "$limit" ] || fail "held calls ($pass): peak $rss KiB over $limit KiB"
    [ "$("$TRACEFS" cat "$work/held.raw" calls/3000000.json | jq .number)" = 3000000 ] ||
        fail "held calls ($pass): calls/3000000.json"
done
finish
