#!/bin/bash
# apitrace on the 1.0 M-call corpus trace, mounted: `tail -n 1 events` is
# the last line of apitrace's dump, the whole of events equals it, and the
# daemon's peak memory stays within the cache budget plus 2% of the trace's
# size (the index keeps nothing per call: a checkpoint every 1024 calls)
# plus a fixed allowance for the process itself.  Skipped without the corpus.
set -u
trace="${TRACEFS_CORPUS:-/nonexistent}/apitrace/traces/glprog-big.trace"
ref="${TRACEFS_CORPUS:-/nonexistent}/apitrace/ref/glprog-big.dump.txt.zst"
[ -f "$trace" ] && [ -f "$ref" ] || { echo "corpus trace absent: skipped"; exit 77; }
command -v fusermount3 > /dev/null && [ -e /dev/fuse ] || { echo "no FUSE: skipped"; exit 77; }
work=$(mktemp -d)
mnt="$work/mnt"
mkdir "$mnt"
export XDG_CACHE_HOME="$work/cache"
cleanup() { fusermount3 -u "$mnt" 2> /dev/null; rm -rf "$work"; }
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$TRACEFS" "$trace" "$mnt" -o cache_size=8M || { echo "FAIL: mount"; exit 1; }
pid=$(pgrep -n -f "^$TRACEFS $trace $mnt") || pid=$(pgrep -n -f "$mnt")
zstd -q -dc "$ref" > "$work/ref"
[ "$(tail -n 1 "$mnt/events")" = "$(tail -n 1 "$work/ref")" ] || fail "tail -n 1 events"
start=$(date +%s.%N)
tail -n 1 "$mnt/events" > /dev/null
echo "second tail -n 1: $(echo "$(date +%s.%N) - $start" | bc) s"
cmp -s "$mnt/events" "$work/ref" || fail "events differs from apitrace dump"
calls=$(jq .apitrace.calls "$mnt/info.json")
# Sanitizer builds hold freed memory in quarantine: no memory bound there.
if ldd "$TRACEFS" 2> /dev/null | grep -q -E 'libasan|libubsan'; then
    echo "sanitizer build: memory bound not checked"
elif [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; then
    peak=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
    limit=$(( (8 * 1024 * 1024 + $(stat -c %s "$trace") / 50) / 1024 + 32 * 1024 ))
    echo "daemon peak RSS ${peak} KiB (limit ${limit} KiB: 8 MiB cache + 2% of the trace + 32 MiB; $calls calls)"
    [ "$peak" -le "$limit" ] || fail "peak RSS $peak KiB over $limit KiB"
fi
[ "$failures" -eq 0 ]
