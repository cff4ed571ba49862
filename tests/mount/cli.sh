#!/usr/bin/env bash
# The command line: clear one-line errors, nothing mounted on failure,
# --help/--version, a busy mount point refused, clean unmount; -s, sizes in
# MiB, subtype= and fsname= as /proc/mounts shows them.
set -u
source "$(dirname "$0")/lib.sh"
need_fuse

junk=$(mktemp /tmp/tracefs-junk-XXXXXX)
head -c 5000 /dev/urandom > "$junk"
empty=$(mktemp /tmp/tracefs-empty-XXXXXX)
mnt=$(mktemp -d /tmp/tracefs-mnt-XXXXXX)
mounts+=("$mnt")

out=$("$TRACEFS" "$junk" "$mnt" 2>&1); rc=$?
[ $rc -ne 0 ] || fail "random bytes mounted"
[[ "$out" == "tracefs: $junk: not a recognised trace (tried "* ]] || fail "random bytes message: $out"
[ "$(echo "$out" | wc -l)" = 1 ] || fail "more than one line: $out"
grep -q " $mnt " /proc/mounts && fail "something was mounted for a bad trace"

out=$("$TRACEFS" "$empty" "$mnt" 2>&1) && fail "empty file mounted"
[[ "$out" == "tracefs: $empty: "* ]] || fail "empty file message: $out"

out=$("$TRACEFS" /nonexistent/trace "$mnt" 2>&1) && fail "missing trace mounted"
[ "$out" = "tracefs: /nonexistent/trace: No such file or directory" ] || fail "missing trace message: $out"

out=$("$TRACEFS" "$junk" /nonexistent/mnt 2>&1) && fail "missing mount point accepted"
[ "$out" = "tracefs: /nonexistent/mnt: No such file or directory" ] || fail "missing mount point message: $out"

out=$("$TRACEFS" -o format=nosuch "$junk" "$mnt" 2>&1) && fail "unknown format accepted"
[[ "$out" == *"unknown format 'nosuch'"* ]] || fail "unknown format message: $out"

out=$("$TRACEFS" -o cache_size=lots "$junk" "$mnt" 2>&1) && fail "bad cache_size accepted"
[[ "$out" == *"bad option value 'cache_size=lots'"* ]] || fail "bad cache_size message: $out"

for bad in threads=many index_max=0; do
    out=$("$TRACEFS" -o "$bad" "$junk" "$mnt" 2>&1) && fail "$bad accepted"
    [[ "$out" == "tracefs: bad option value '$bad'"* ]] || fail "$bad message: $out"
done

"$TRACEFS" --help | grep -q "usage: .*TRACE MOUNTPOINT" || fail "--help"
"$TRACEFS" --version | grep -q "^tracefs [0-9]" || fail "--version"
"$TRACEFS" --version | grep -q "^formats: " || fail "--version lists formats"

# A real trace: mount, refuse a second mount on the same point, unmount.
trace=""
for format in fxt sp-rtrace xray apitrace rr; do
    dir=$format
    [ "$format" = sp-rtrace ] && dir=sprtrace
    trace=$(find_traces "$format" "$TRACEFS_SOURCE_ROOT/tests/data/$dir" | head -n 1)
    [ -n "$trace" ] && break
done
if [ -n "$trace" ]; then
    "$TRACEFS" "$trace" "$mnt" || fail "mount $trace"
    grep -q " $mnt fuse.tracefs " /proc/mounts || fail "not in /proc/mounts as fuse.tracefs"
    out=$("$TRACEFS" "$trace" "$mnt" 2>&1) && fail "second mount on a busy point accepted"
    [[ "$out" == "tracefs: $mnt: mount point is busy"* ]] || fail "busy message: $out"
    grep -q ro, /proc/mounts || fail "not mounted read-only"
    fusermount3 -u "$mnt" || fail "fusermount3 -u"
    grep -q " $mnt " /proc/mounts && fail "still mounted after fusermount3 -u"
    # Single-threaded, a cache size in MiB, the mount's own type and source names.
    "$TRACEFS" -s -o cache_size=16MiB,subtype=mytrace,fsname=mysource "$trace" "$mnt" || fail "mount -s"
    grep -q "^mysource $mnt fuse.mytrace ro," /proc/mounts || fail "fsname and subtype: $(grep " $mnt " /proc/mounts)"
    grep -qx "cache_bytes_budget 16777216" "$mnt/.tracefs/stats" || fail "cache_size=16MiB"
    jq -e .format "$mnt/info.json" > /dev/null || fail "info.json of the single-threaded mount"
    fusermount3 -u "$mnt" || fail "fusermount3 -u of the single-threaded mount"
else
    echo "no test trace yet: mount part skipped"
fi
rm -f "$junk" "$empty"
finish
