#!/bin/bash
# A gzip apitrace whose seek points' windows cost more than their stretch
# of the file (32 KiB of noise before every point, 4 MiB of zeros between;
# make_noisy_gzip.py): 80 segments, 320 MiB of stream in a 3 MB file.  The
# points and their packed windows stay within the container's table budget
# (1 MiB + 1 % of the file): every other point is dropped, then the stream
# ends with an /errors line.  Mounted at cache_size=8M, the daemon keeps
# the memory rule; the stream it serves is the prefix of what the file
# decodes to, the same from the index pass and from the saved index.
set -u
source "$TRACEFS_SOURCE_ROOT/tests/mount/lib.sh"
data="$TRACEFS_SOURCE_ROOT/tests/data/apitrace"
make="$TRACEFS_SOURCE_ROOT/tests/apitrace/make_noisy_gzip.py"
work=$(mktemp -d)
trap 'unmount_all; rm -rf "$work"' EXIT
segments=80
trace="$work/noisy.trace"
export XDG_CACHE_HOME="$work/cache"

stat_line() { awk -v key="$1" '$1 == key { print $2 }' "$MNT/.tracefs/stats"; }

# mount_noisy LABEL: mounts at 8M, reads the stream, checks the tables and
# the daemon's peak, writes LABEL.facts.
mount_noisy() {
    local label=$1 pid file_bytes limit budget
    mount_trace "$trace" -o cache_size=8M || { fail "$label: mount"; return; }
    pid=$(pgrep -n -f -- "$MNT") || pid=""
    sha256sum < "$MNT/.tracefs/streams/stream" | cut -d " " -f 1 > "$work/$label.facts"
    stat -c %s "$MNT/.tracefs/streams/stream" >> "$work/$label.facts"
    echo "$(stat_line stream_chunks) $(stat_line stream_window_bytes)" >> "$work/$label.facts"
    grep -c "needs more seek points" "$MNT/errors" >> "$work/$label.facts"
    echo "  $label: index $(stat_line index_source); stream, size, chunks and window bytes, error lines:"
    sed 's/^/    /' "$work/$label.facts"
    file_bytes=$(stat -c %s "$trace")
    budget=$(( (1 << 20) + file_bytes / 100 ))
    [ "$(stat_line stream_window_bytes)" -le "$budget" ] || fail "$label: windows over the budget $budget"
    [ "$(stat_line stream_chunks)" -lt "$segments" ] || fail "$label: a point per segment (not thinned)"
    limit=$(( ((8 + 16) << 20) / 1024 + file_bytes / 50 / 1024 ))
    check_daemon_peak "$label" "$pid" "$limit"
    fusermount3 -u "$MNT"
}

need_fuse
"$TRACEFS" cat "$data/glprog-small.trace" .tracefs/streams/stream > "$work/raw" || fail "raw stream"
python3 "$make" "$segments" "$trace" < "$work/raw" || fail "make"
echo "noisy gzip: $(stat -c %s "$trace") bytes decoding to $((segments * 4)) MiB"
mount_noisy indexed
mount_noisy saved
cmp -s "$work/indexed.facts" "$work/saved.facts" || fail "the saved index serves another stream"
size=$(sed -n 2p "$work/indexed.facts")
[ "$size" -ge $((64 << 20)) ] && [ "$size" -lt $((segments << 22)) ] || fail "stream of $size bytes"
[ "$(sed -n 4p "$work/indexed.facts")" = 1 ] || fail "no /errors line for the seek points"
[ "$(python3 "$make" "$segments" --sha256 "$size" < "$work/raw")" = "$(sed -n 1p "$work/indexed.facts")" ] ||
    fail "the stream is not the prefix of what the file decodes to"
finish
