#!/usr/bin/env bash
# The progress line through a pseudo-terminal (script -qc): the index pass
# ("indexing X of Y MB (P%)"), then for a mount that daemonizes one line
# saying /events is sized in the background, and in the foreground (-f)
# the sizing itself ("sizing /events: X MB of text rendered"), erased at
# the end; nothing at all when stderr is not a terminal.  TRACEFS_PROGRESS_MS makes the line appear
# every 20 ms, so that both phases of a 40 MB trace are seen on any machine.
set -u
source "$(dirname "$0")/lib.sh"
need_fuse
command -v script >/dev/null || { echo "no script(1): skipped"; exit 77; }
work=$(mktemp -d /tmp/tracefs-progress-XXXXXX)
trap 'unmount_all; rm -rf "$work"' EXIT

# 40 MB of FXT events: one block of 1000 events written again and again.
PYTHONPATH=$TRACEFS_SOURCE_ROOT/tests/fxt python3 - "$work/big.fxt" <<'PY' || { echo "cannot write the trace"; exit 1; }
import sys
from fxt_writer import Writer
w = Writer(big_endian=False)
w.magic(); w.provider_info(1, "p"); w.init(1000000000)
w.string(1, "cat"); w.string(2, "tick"); w.thread(1, 10, 11)
head = bytes(w.out)
w.out = bytearray()
for i in range(1000):
    w.event(0, i, 1, 1, 2, [(3, 2, i)])
block = bytes(w.out)
with open(sys.argv[1], "wb") as f:
    f.write(head)
    for _ in range(40 * 1000000 // len(block)):
        f.write(block)
PY

mnt=$(mktemp -d /tmp/tracefs-mnt-XXXXXX)
mounts+=("$mnt")

# Daemonized: the indexing line, then the mount answers at once and says
# that /events is sized in the background.
script -qec "TRACEFS_PROGRESS_MS=20 '$TRACEFS' -o noindex,auto_unmount '$work/big.fxt' '$mnt'" "$work/typescript" \
    >/dev/null || fail "mount under script"
mountpoint -q "$mnt" || fail "not mounted"
lines=$(tr '\r' '\n' < "$work/typescript")
echo "$lines" | grep -q '^tracefs: indexing [0-9.]* of 40\.0 MB ( *[0-9]*%), [0-9]* MB/s, ETA [0-9]* s' ||
    fail "no indexing line: $(echo "$lines" | head -c 600)"
echo "$lines" | grep -q 'tracefs: mounted; /events is being sized in the background' ||
    fail "no background sizing line: $(echo "$lines" | tail -c 600)"
stat -c %s "$mnt/events" >/dev/null || fail "stat /events"
# The stat returns once /events is sized; the job then saves the index and
# only after that says "done", so give the save a moment.
for _ in $(seq 100); do
    grep -q '^sizing_events done' "$mnt/.tracefs/stats" && break
    sleep 0.1
done
grep -q '^sizing_events done' "$mnt/.tracefs/stats" || fail "sizing not done 10 s after a stat of /events"
fusermount3 -u "$mnt"

# Foreground: the sizing phase follows the indexing line on the terminal.
script -qec "TRACEFS_PROGRESS_MS=20 '$TRACEFS' -f -o noindex,auto_unmount '$work/big.fxt' '$mnt'" "$work/typescript" \
    >/dev/null &
foreground=$!
for _ in $(seq 600); do
    grep -q '^sizing_events done' "$mnt/.tracefs/stats" 2>/dev/null && break
    sleep 0.1
done
grep -q '^sizing_events done' "$mnt/.tracefs/stats" || fail "foreground sizing did not end"
size_mb=$(stat -c %s "$mnt/events" | awk '{printf "%.1f", $1 / 1e6}')
fusermount3 -u "$mnt"
wait "$foreground"
lines=$(tr '\r' '\n' < "$work/typescript")
echo "$lines" | grep -q '^tracefs: sizing /events: [0-9.]* MB of text rendered, [0-9]* MB/s, [0-9.]* s' ||
    fail "no sizing line: $(echo "$lines" | head -c 600)"
first_sizing=$(echo "$lines" | grep -n '^tracefs: sizing' | head -n 1 | cut -d: -f1)
last_indexing=$(echo "$lines" | grep -n '^tracefs: indexing' | tail -n 1 | cut -d: -f1)
[ -n "$first_sizing" ] && [ -n "$last_indexing" ] && [ "$last_indexing" -lt "$first_sizing" ] ||
    fail "the sizing line does not follow the indexing line"
# The sizing line counts up to the size of /events.
last=$(echo "$lines" | grep '^tracefs: sizing' | tail -n 1 | awk '{print $4}')
awk -v a="$last" -v b="$size_mb" 'BEGIN { exit !(a > 0 && a <= b) }' || fail "sizing at $last MB, /events is $size_mb MB"
# Erased: the sizing line's last write is "\r" and erase-to-end-of-line.
grep -q $'\r\033\[K' "$work/typescript" || fail "the line is not erased"

# Not a terminal: no progress line.
TRACEFS_PROGRESS_MS=20 "$TRACEFS" -o noindex,auto_unmount "$work/big.fxt" "$mnt" 2> "$work/stderr" || fail "mount"
[ -s "$work/stderr" ] && fail "progress written to a stderr that is not a terminal: $(head -c 200 "$work/stderr")"
fusermount3 -u "$mnt"
finish
