#!/usr/bin/env bash
# A cache budget below one chunk degrades gently: `-o cache_size=1M` (768 KiB
# for chunks, below rr's 1 MiB chunks) sizes rr big-0's /events within 3x of
# the time the default budget takes, and serves the same bytes through a
# mount.  The chunk released last is kept (cache/chunk_cache.c); without it
# every record decompressed its chunk again (1,118 s against 0.27 s).
source "$(dirname "$0")/lib.sh"
trace=${TRACEFS_CORPUS:-}/rr/traces/big-0
if [ ! -d "$trace" ]; then
    echo "no rr big-0 in the corpus: skipped"
    exit 77
fi
work=$(mktemp -d /tmp/tracefs-tiny-cache-XXXXXX)
trap 'unmount_all; rm -rf "$work"' EXIT

# Best of three `tracefs stat events` with a fresh index (nothing saved to reuse).
best_seconds() {
    local cache=$1 best="" i start end seconds
    for i in 1 2 3; do
        rm -rf "$work/cache"
        start=$(date +%s.%N)
        XDG_CACHE_HOME="$work/cache" TRACEFS_CACHE_SIZE=$cache timeout 600 "$TRACEFS" stat "$trace" events \
            > "$work/stat.$cache" || fail "stat with cache_size=$cache"
        end=$(date +%s.%N)
        seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')
        if [ -z "$best" ] || awk -v s="$seconds" -v b="$best" 'BEGIN { exit !(s < b) }'; then best=$seconds; fi
    done
    echo "$best"
}

default=$(best_seconds 256M)
tiny=$(best_seconds 1M)
echo "stat events: default ${default} s, cache_size=1M ${tiny} s"
cmp -s "$work/stat.256M" "$work/stat.1M" || fail "cache_size=1M sizes /events differently"
awk -v t="$tiny" -v d="$default" 'BEGIN { exit !(t <= 3 * d) }' || fail "cache_size=1M took ${tiny} s, over 3x the default's ${default} s"

need_fuse
"$TRACEFS" cat "$trace" events | md5sum > "$work/expected.md5"
mount_trace "$trace" -o noindex,cache_size=1M || exit 1
grep -q "^cache_chunk_budget 786432$" "$MNT/.tracefs/stats" || fail "chunk budget is not 3/4 of 1M"
md5sum < "$MNT/events" | cmp -s - "$work/expected.md5" || fail "/events under cache_size=1M differs"
finish
