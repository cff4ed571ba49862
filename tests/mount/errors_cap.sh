#!/usr/bin/env bash
# /errors lists the first 10,000 problems and says the rest are counted:
# an FXT trace with 10,050 magic number records of a wrong magic gives
# 10,000 lines, one line pointing to .tracefs/stats, and the count 10,050
# there and in info.json, the same through a mount as from `tracefs cat`.
set -u
source "$(dirname "$0")/lib.sh"
work=$(mktemp -d /tmp/tracefs-errors-cap-XXXXXX)
trap 'unmount_all; rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"
trace="$work/wrong-magics.fxt"
python3 -c "
import struct, sys
magic = 0x0016547846040010               # the FXT magic number record
wrong = magic & ~(0xffffffff << 24) | 0x12345678 << 24
sys.stdout.buffer.write(struct.pack('<Q', magic) + struct.pack('<Q', wrong) * 10050)" > "$trace"

"$TRACEFS" cat "$trace" errors > "$work/errors"
[ "$(wc -l < "$work/errors")" = 10001 ] || fail "/errors has $(wc -l < "$work/errors") lines, not 10,000 and one more"
[ "$(head -n 1 "$work/errors")" = "fxt offset 8: magic number record with a wrong magic" ] ||
    fail "first line: $(head -n 1 "$work/errors")"
[ "$(sed -n 10000p "$work/errors")" = "fxt offset 80000: magic number record with a wrong magic" ] ||
    fail "line 10,000: $(sed -n 10000p "$work/errors")"
[ "$(tail -n 1 "$work/errors")" = "(further errors are counted in /.tracefs/stats, not listed)" ] ||
    fail "last line: $(tail -n 1 "$work/errors")"
"$TRACEFS" cat "$trace" .tracefs/stats | grep -qx "errors 10050" || fail "stats do not count 10,050 errors"
[ "$("$TRACEFS" cat "$trace" info.json | jq .index_errors)" = 10050 ] || fail "info.json index_errors"

need_fuse
mount_trace "$trace" || { fail "mount"; finish; }
cmp -s "$MNT/errors" "$work/errors" || fail "mounted /errors differs from tracefs cat"
grep -qx "errors 10050" "$MNT/.tracefs/stats" || fail "mounted stats do not count 10,050 errors"
fusermount3 -u "$MNT" || fail "unmount"
finish
