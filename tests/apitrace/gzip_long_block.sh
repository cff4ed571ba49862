#!/bin/bash
# A gzip apitrace whose last deflate block decodes to 48 MiB from 300 KB
# of file (make_long_block_gzip.py): a seek point can only be at a block's
# end, so that chunk is served in sub-chunks of 1 MiB that share its
# point's window.  Mounted at cache_size=8M, the daemon keeps the memory
# rule while the whole stream is read, and the stream is what the file
# decodes to, from the index pass and from the saved index.
set -u
source "$TRACEFS_SOURCE_ROOT/tests/mount/lib.sh"
data="$TRACEFS_SOURCE_ROOT/tests/data/apitrace"
make="$TRACEFS_SOURCE_ROOT/tests/apitrace/make_long_block_gzip.py"
work=$(mktemp -d)
trap 'unmount_all; rm -rf "$work"' EXIT
trace="$work/long.trace"
export XDG_CACHE_HOME="$work/cache"

# read_stream LABEL: mounts at 8M, reads the whole stream, checks its bytes
# and the daemon's peak.
read_stream() {
    local label=$1 pid limit sha
    mount_trace "$trace" -o cache_size=8M || { fail "$label: mount"; return; }
    pid=$(pgrep -n -f -- "$MNT") || pid=""
    sha=$(sha256sum < "$MNT/.tracefs/streams/stream" | cut -d " " -f 1)
    [ "$sha" = "$expected" ] || fail "$label: the stream is not what the file decodes to"
    echo "  $label: index $(awk '$1 == "index_source" { print $2 }' "$MNT/.tracefs/stats"), stream $sha"
    limit=$(( ((8 + 16) << 20) / 1024 + $(stat -c %s "$trace") / 50 / 1024 ))
    check_daemon_peak "$label" "$pid" "$limit"
    fusermount3 -u "$MNT"
}

need_fuse
"$TRACEFS" cat "$data/glprog-small.trace" .tracefs/streams/stream > "$work/raw" || fail "raw stream"
python3 "$make" 48 "$trace" < "$work/raw" || fail "make"
expected=$(python3 "$make" 48 --sha256 < "$work/raw")
echo "long block: $(stat -c %s "$trace") bytes decoding to 50 MiB"
read_stream indexed
read_stream saved
finish
