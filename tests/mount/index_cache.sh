#!/usr/bin/env bash
# The index directory: it stays under its cap (least recently used indexes
# go first), an index larger than the cap is not saved and says why, and
# `tracefs index list|clean` see and empty it; an index or
# directory someone else can write is refused; a trace rewritten in place
# with its mtime restored is reindexed; killed saves leave no temporaries
# after the next mount, and a live save's temporary is never removed; a
# failed save says so once on stderr and in .tracefs/stats.
set -u
source "$(dirname "$0")/lib.sh"
need_fuse

sample="$TRACEFS_SOURCE_ROOT/tests/data/apitrace/glprog-small.trace"
xray=$(find_traces xray "$TRACEFS_SOURCE_ROOT/tests/data/xray" | head -n 1)
[ -f "$sample" ] && [ -n "$xray" ] || { echo "no test traces: skipped"; exit 77; }

work=$(mktemp -d /tmp/tracefs-index-cache-XXXXXX)
tmpfs_mounts=()
cleanup() {
    unmount_all
    local m
    for m in "${tmpfs_mounts[@]}"; do umount "$m" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
export XDG_CACHE_HOME="$work/xdg"

mount_or_fail() { mount_trace "$@" || { fail "mount $*"; return 1; }; }
files_in() { find "$1" -maxdepth 1 -name '*.index*' 2>/dev/null; }
bytes_in() { find "$1" -maxdepth 1 -name '*.index*' -printf '%s\n' 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
temporaries_in() { find "$1" -maxdepth 1 -name '*.index.*' 2>/dev/null; }
stat_of() { awk -v k="$2" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "$1/.tracefs/stats"; }
index_of() { # the index file of trace $2 in directory $1
    "$TRACEFS" index list -o index_dir="$1" | awk -v t="$2" '$NF == t { print $1 }'
}

# ---- the cap: 20 traces mounted in turn ----
cap_dir="$work/capped"
mkdir -p "$work/traces"
for i in $(seq -w 1 20); do cp "$sample" "$work/traces/t$i.trace"; done
# Room for four and a half indexes of the sample.
"$TRACEFS" cat "$work/traces/t01.trace" info.json >/dev/null
one=$(bytes_in "$XDG_CACHE_HOME/tracefs")
[ "$one" -gt 0 ] || fail "no index saved in the default directory"
cap=$((one * 9 / 2))
mount_n() {
    mount_or_fail "$work/traces/t$1.trace" -o index_dir="$cap_dir",index_max=$cap || return 1
    local used
    used=$(bytes_in "$cap_dir")
    [ "$used" -le "$cap" ] || fail "after mounting t$1: $used bytes in the index directory, cap $cap"
    unmount_and_wait "$MNT"
}
for i in 01 02 03 04; do mount_n $i; done
[ "$(files_in "$cap_dir" | wc -l)" -eq 4 ] || fail "four indexes should fit under the cap"
sleep 1
# t01 used again: now the most recent, so t05's save evicts t02 instead.
mount_n 01
mount_n 05
[ -n "$(index_of "$cap_dir" "$work/traces/t01.trace")" ] || fail "t01, used recently, was evicted"
[ -z "$(index_of "$cap_dir" "$work/traces/t02.trace")" ] || fail "t02, least recently used, was kept"
for i in $(seq -w 6 20); do mount_n "$i"; done
sleep 1
used=$(bytes_in "$cap_dir")
[ "$used" -le "$cap" ] || fail "after 20 traces: $used bytes, cap $cap"
[ -n "$(index_of "$cap_dir" "$work/traces/t20.trace")" ] || fail "the last trace's index is missing"
echo "20 traces mounted: $(files_in "$cap_dir" | wc -l) indexes, $used bytes (cap $cap)"
list=$("$TRACEFS" index list -o index_dir="$cap_dir")
echo "$list"
echo "$list" | grep -q "t20.trace" || fail "index list does not show t20"
echo "$list" | grep -q " current " || fail "index list shows no current index"
# An index larger than the cap is not saved: stderr and .tracefs/stats say why.
"$TRACEFS" cat -o index_dir="$work/tiny-cap",index_max=100 "$sample" .tracefs/stats \
    > "$work/tiny.stats" 2> "$work/tiny.err" || fail "cat with index_max=100"
grep -q "^tracefs: the index was not saved in $work/tiny-cap: the index ([^)]*) is larger than the cap (index_max 100 bytes)$" \
    "$work/tiny.err" || fail "index_max=100: stderr says $(cat "$work/tiny.err")"
grep -q "^index_save failed (the index ([^)]*) is larger than the cap (index_max 100 bytes))$" \
    "$work/tiny.stats" || fail "index_max=100: stats say $(grep index_save "$work/tiny.stats")"
[ -z "$(files_in "$work/tiny-cap")" ] || fail "index_max=100: an index was saved"
"$TRACEFS" index list -o index_dir="$work/tiny-cap" -o index_max=1K |
    grep -q "^$work/tiny-cap: 0 files, 0 bytes (cap 1\.0.\{1,2\}KiB)$" || fail "index list of an empty directory under a 1K cap"
[ "$("$TRACEFS" index list -o index_dir="$work/never-made")" = "$work/never-made: no saved indexes" ] ||
    fail "index list of a missing directory"
"$TRACEFS" index list -oindex_max=0 2> "$work/bad.err" && fail "index_max=0 accepted"
grep -q "^tracefs index: bad option 'index_max=0'$" "$work/bad.err" || fail "index_max=0: $(cat "$work/bad.err")"

# A deleted trace's index goes with `clean`; the others stay until --all.
rm "$work/traces/t20.trace"
before=$(files_in "$cap_dir" | wc -l)
"$TRACEFS" index clean -o index_dir="$cap_dir" || fail "index clean failed"
[ "$(files_in "$cap_dir" | wc -l)" -eq $((before - 1)) ] || fail "clean did not remove exactly the gone trace's index"
"$TRACEFS" index clean --all -o index_dir="$cap_dir" || fail "index clean --all failed"
[ -z "$(files_in "$cap_dir")" ] || fail "index clean --all left $(files_in "$cap_dir")"
"$TRACEFS" index list -o index_dir="$cap_dir" | grep -q "0 files" || fail "index list after clean --all"
# The default directory, $XDG_CACHE_HOME/tracefs, without -o.
"$TRACEFS" index list | grep -q "^$XDG_CACHE_HOME/tracefs: 1 file" || fail "index list of the default directory"
"$TRACEFS" index clean --all >/dev/null && [ -z "$(files_in "$XDG_CACHE_HOME/tracefs")" ] ||
    fail "index clean --all of the default directory"
"$TRACEFS" index bogus 2>/dev/null; [ $? -eq 2 ] || fail "a bad index subcommand should exit 2"

# ---- a forged index (valid CRC, changed view table) ----
forge() { # adds 1 to the size of the first saved view, then fixes the CRC
    python3 - "$1" <<'PY'
import struct, sys, zlib
path = sys.argv[1]
data = bytearray(open(path, "rb").read()[:-4])
at = 16 + 8                       # magic, layout version
def string(at): return at + 8 + struct.unpack_from("<Q", data, at)[0]
at = string(at) + 16              # version, executable size and mtime
at = string(at) + 8               # format name, index version
at = string(at) + 7 * 8           # key: path, then seven numbers
at += 8; at += 8 + struct.unpack_from("<Q", data, at)[0]    # format state
at += 8; at += 8 + struct.unpack_from("<Q", data, at)[0]    # errors
at += 8 + 8                       # tree fingerprint, section length
count = struct.unpack_from("<Q", data, at)[0]
assert count > 0, "no saved view to forge"
size_at = at + 8 + 8
struct.pack_into("<Q", data, size_at, struct.unpack_from("<Q", data, size_at)[0] + 1)
data += struct.pack("<I", zlib.crc32(data) & 0xffffffff)
open(path, "wb").write(data)
PY
}
tree_sizes() { (cd "$1" && find . -type f ! -path './.tracefs/*' -printf '%s %p\n' | sort); }
forge_dir="$work/forged"
trace="$work/traces/t01.trace"
mount_or_fail "$trace" -o index_dir="$forge_dir" && { truth=$(tree_sizes "$MNT"); unmount_and_wait "$MNT"; }
sleep 0.5
index="$forge_dir/$(index_of "$forge_dir" "$trace")"
forge "$index" || fail "could not forge the index"
cp -p "$index" "$work/forged.index"
# Control: owned by us, the forgery is loaded and changes what is served,
# which is what the ownership check is there to stop.
mount_or_fail "$trace" -o index_dir="$forge_dir" && {
    [ "$(stat_of "$MNT" saved_index)" = used ] || fail "control: forged index not loaded ($(stat_of "$MNT" saved_index))"
    [ "$(tree_sizes "$MNT")" != "$truth" ] || fail "control: the forged index changed nothing"
    unmount_and_wait "$MNT"
}
sleep 0.5
# Files of another user can only be made by root.
root=false
[ "$(id -u)" = 0 ] && root=true || echo "not root: the cases of another user's index and directory skipped"
if $root; then
    cp -p "$work/forged.index" "$index"
    chown 65534:65534 "$index"
    mount_or_fail "$trace" -o index_dir="$forge_dir" 2>"$work/forged.stderr" && {
        [ "$(stat_of "$MNT" saved_index)" = "refused (not owned by you)" ] ||
            fail "an index owned by another user: saved_index '$(stat_of "$MNT" saved_index)'"
        [ "$(tree_sizes "$MNT")" = "$truth" ] || fail "an index owned by another user changed what is served"
        unmount_and_wait "$MNT"
    }
    grep -q "not owned by you" "$work/forged.stderr" || fail "no stderr line for a refused index"
    sleep 0.5
    [ "$(stat -c %u "$index")" = "$(id -u)" ] || fail "the refused index was not replaced by our own"
fi
# Group- or other-writable index file, and directory: refused too.
cp "$work/forged.index" "$index"; chmod 0620 "$index"
mount_or_fail "$trace" -o index_dir="$forge_dir" 2>/dev/null && {
    [ "$(stat_of "$MNT" saved_index)" = "refused (writable by group or others)" ] ||
        fail "a group-writable index: saved_index '$(stat_of "$MNT" saved_index)'"
    unmount_and_wait "$MNT"
}
sleep 0.5
cp "$work/forged.index" "$index"; chmod 0600 "$index"
for mode in 0770 0707; do
    chmod "$mode" "$forge_dir"
    mount_or_fail "$trace" -o index_dir="$forge_dir" 2>/dev/null && {
        [ "$(stat_of "$MNT" saved_index)" = "refused (the index directory is writable by group or others)" ] ||
            fail "index directory mode $mode: saved_index '$(stat_of "$MNT" saved_index)'"
        case "$(stat_of "$MNT" index_save)" in "failed (refused"*) ;; *)
            fail "index directory mode $mode: index_save '$(stat_of "$MNT" index_save)'" ;; esac
        [ "$(tree_sizes "$MNT")" = "$truth" ] || fail "index directory mode $mode: forged index served"
        unmount_and_wait "$MNT"
    }
done
chmod 0700 "$forge_dir"
if $root; then
    chown 65534:65534 "$forge_dir"
    mount_or_fail "$trace" -o index_dir="$forge_dir" 2>/dev/null && {
        [ "$(stat_of "$MNT" saved_index)" = "refused (the index directory is not owned by you)" ] ||
            fail "index directory of another user: saved_index '$(stat_of "$MNT" saved_index)'"
        unmount_and_wait "$MNT"
    }
    chown 0:0 "$forge_dir"
fi

# ---- a same-size rewrite in place, mtime restored ----
flip_byte() { # file offset
    python3 - "$1" "$2" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x01]))
PY
}
rewrite_check() { # format trace
    local format=$1 original=$2 copy="$work/rewrite-$1" dir="$work/rewrite-index-$1"
    cp "$original" "$copy"
    mount_or_fail "$copy" -o index_dir="$dir" && unmount_and_wait "$MNT"
    sleep 0.5
    touch -r "$copy" "$work/reference-time"
    # One byte changed in place (same inode, same size) where the trace
    # still decodes, to different events: found on a scratch copy.
    local want at
    want=$(XDG_CACHE_HOME="$work/scratch-cache" "$TRACEFS" cat "$copy" events | md5sum)
    for at in $(python3 -c "import os; s = os.path.getsize('$copy'); print(*range(s - 64, s // 2, -97))"); do
        cp "$copy" "$work/scratch"
        flip_byte "$work/scratch" "$at"
        got=$(set -o pipefail; XDG_CACHE_HOME="$work/scratch-cache" "$TRACEFS" cat "$work/scratch" events 2>/dev/null |
              md5sum) && [ "$got" != "$want" ] && break
        at=""
    done
    [ -n "$at" ] || { fail "$format: no byte found whose change still decodes"; return; }
    flip_byte "$copy" "$at"
    touch -r "$work/reference-time" "$copy"
    mount_or_fail "$copy" -o index_dir="$dir" && {
        [ "$(stat_of "$MNT" saved_index)" = "stale (the trace changed)" ] ||
            fail "$format rewritten with its mtime restored: saved_index '$(stat_of "$MNT" saved_index)'"
        [ "$(stat_of "$MNT" index_source)" = scanned ] || fail "$format rewritten: not reindexed"
        served=$(md5sum <"$MNT/events")
        unmount_and_wait "$MNT"
        fresh=$(XDG_CACHE_HOME="$work/fresh-$format" "$TRACEFS" cat "$copy" events | md5sum)
        [ "$served" = "$fresh" ] || fail "$format rewritten: /events differs from a fresh decode"
    }
}
rewrite_check apitrace "$sample"
rewrite_check xray "$xray"

# ---- killed saves ----
kill_dir="$work/killed"
trace="$work/traces/t02.trace"
wait_for_temporary() {
    for _ in $(seq 200); do
        [ -n "$(temporaries_in "$1")" ] && return 0
        sleep 0.05
    done
    return 1
}
# auto_unmount's helper unmounts a killed daemon's mount point once it sees
# the daemon die, later under load: a daemon mounting there before that
# finds it "not connected".  /proc/self/mounts, since stat fails on it.
wait_until_unmounted() {
    for _ in $(seq 200); do
        awk -v m="$1" '$2 == m { found = 1 } END { exit !found }' /proc/self/mounts || return 0
        sleep 0.05
    done
    fusermount3 -u -z "$1" 2>/dev/null
}
# Killed during the mount-time save (once /events is sized, after the mount answers).
mnt=$(mktemp -d /tmp/tracefs-mnt-XXXXXX); mounts+=("$mnt")
TRACEFS_TEST_SAVE_PAUSE_MS=20000 "$TRACEFS" -f -o auto_unmount,index_dir="$kill_dir" "$trace" "$mnt" &
pid=$!
wait_for_temporary "$kill_dir" || fail "no temporary while the mount-time save runs"
kill -KILL "$pid"; wait "$pid" 2>/dev/null
[ -n "$(temporaries_in "$kill_dir")" ] || fail "SIGKILL during the save left no temporary (the test proves nothing)"
mount_or_fail "$trace" -o index_dir="$kill_dir" && unmount_and_wait "$MNT"
[ -z "$(temporaries_in "$kill_dir")" ] || fail "a killed mount-time save's temporary survived the next mount"
# Killed during the unmount-time save.
wait_until_unmounted "$mnt"
TRACEFS_TEST_SAVE_PAUSE_MS=20000 "$TRACEFS" -f -o auto_unmount,index_dir="$kill_dir" "$trace" "$mnt" &
pid=$!
for _ in $(seq 200); do mountpoint -q "$mnt" && break; sleep 0.05; done
find "$mnt" -type f ! -path '*/.tracefs/*' -exec cat {} + >/dev/null 2>&1   # sizes more views
fusermount3 -u "$mnt"
wait_for_temporary "$kill_dir" || fail "no temporary while the unmount-time save runs"
kill -KILL "$pid"; wait "$pid" 2>/dev/null
[ -n "$(temporaries_in "$kill_dir")" ] || fail "SIGKILL during the unmount-time save left no temporary"
mount_or_fail "$trace" -o index_dir="$kill_dir" && {
    [ "$(stat_of "$MNT" saved_index)" = used ] || fail "after a killed save: saved_index '$(stat_of "$MNT" saved_index)'"
    unmount_and_wait "$MNT"
}
[ -z "$(temporaries_in "$kill_dir")" ] || fail "a killed unmount-time save's temporary survived the next mount"
# A live save's temporary is never removed: not by clean --all, not by
# another mount's save (which waits for the directory's lock).
live="$work/traces/t03.trace"
TRACEFS_TEST_SAVE_PAUSE_MS=3000 "$TRACEFS" -f -o auto_unmount,index_dir="$kill_dir" "$live" "$mnt" &
pid=$!
wait_for_temporary "$kill_dir" || fail "no temporary while a save runs"
"$TRACEFS" index clean --all -o index_dir="$kill_dir" | grep -q "1 being written" || fail "clean --all did not keep the live temporary"
[ -n "$(temporaries_in "$kill_dir")" ] || fail "clean --all removed a live save's temporary"
mount_or_fail "$work/traces/t04.trace" -o index_dir="$kill_dir" && unmount_and_wait "$MNT"
for _ in $(seq 200); do [ -n "$(index_of "$kill_dir" "$live")" ] && break; sleep 0.05; done
[ -n "$(index_of "$kill_dir" "$live")" ] || fail "the live save's index is missing after a concurrent save"
fusermount3 -u "$mnt"; wait "$pid" 2>/dev/null

# ---- a failed save: full, then read-only, index directory ----
failed_save_check() { # what tmpfs-options|chmod-MODE expected-reason
    local what=$1 options=$2 reason=$3 dir="$work/small-$1"
    mkdir -p "$dir"
    if [ "${options#chmod-}" != "$options" ]; then
        chmod "${options#chmod-}" "$dir"
    elif mount -t tmpfs -o "$options" tmpfs "$dir" 2>/dev/null; then
        tmpfs_mounts+=("$dir")
    else
        echo "cannot mount a tmpfs: the $what index directory case skipped"
        return 0
    fi
    "$TRACEFS" -f -o auto_unmount,index_dir="$dir",index_max=1G "$trace" "$mnt" 2>"$work/$what.stderr" &
    pid=$!
    for _ in $(seq 200); do mountpoint -q "$mnt" && break; sleep 0.05; done
    # The mount-time save follows the sizing of /events, after the mount answers.
    for _ in $(seq 200); do [ "$(stat_of "$mnt" sizing_events)" = done ] && break; sleep 0.05; done
    [ "$(stat_of "$mnt" index_save)" = "failed ($reason)" ] ||
        fail "$what index directory: index_save '$(stat_of "$mnt" index_save)'"
    find "$mnt" -type f ! -path '*/.tracefs/*' -exec cat {} + >/dev/null 2>&1   # a second save at unmount
    fusermount3 -u "$mnt"; wait "$pid"
    [ "$(grep -c "index was not saved" "$work/$what.stderr")" -eq 1 ] ||
        fail "$what index directory: want one stderr line, got: $(cat "$work/$what.stderr")"
    grep -q "$reason" "$work/$what.stderr" || fail "$what index directory: stderr does not say why"
    [ -z "$(files_in "$dir")" ] || fail "$what index directory: a failed save left $(files_in "$dir")"
}
trace="$work/traces/t05.trace"
failed_save_check full size=64k,mode=0700 "No space left on device"
failed_save_check read-only ro,mode=0700 "Read-only file system"
# Root writes through permissions; anyone else is stopped by them.
$root || failed_save_check unwritable chmod-0500 "Permission denied"
finish
