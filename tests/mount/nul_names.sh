#!/usr/bin/env bash
# Names from the trace with a NUL or a newline in them, on a real mount:
# usage: nul_names.sh fxt|apitrace|sprtrace.  The trace is made here
# (tests/<format>/make_names.py).  The directory listing shows every name
# whole (nothing cut at a NUL), escaped (%00, %0A), one line each and
# distinct, identical names under different ids get the tree's "~2"; a
# remount from the saved index shows the same tree and the same bytes.
set -u
source "$(dirname "$0")/lib.sh"
need_fuse

format=$1
work=$(mktemp -d /tmp/tracefs-nul-names-XXXXXX)
trap 'unmount_all; rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"

case $format in
fxt)
    trace="$work/names.fxt"
    dir=providers
    expected=$'5-ab%00cd\n6-ab%00ce\n7-two%0Alines\n8-ab'
    # Each name's whole bytes, as JSON, in the directory's info.json.
    check_json() {
        [ "$(jq -c .name "$1/providers/5-ab%00cd/info.json")" = '"ab\u0000cd"' ] ||
            fail "providers/5-ab%00cd/info.json: $(jq -c .name "$1/providers/5-ab%00cd/info.json")"
        [ "$(jq -c .name "$1/providers/7-two%0Alines/info.json")" = '"two\nlines"' ] ||
            fail "providers/7-two%0Alines/info.json"
        [ "$(cat "$1/providers/6-ab%00ce/events")" = "200000 10/11 instant cat:event6 -" ] ||
            fail "providers/6-ab%00ce/events: $(cat "$1/providers/6-ab%00ce/events")"
    }
    ;;
apitrace)
    trace="$work/names.trace"
    dir=functions
    expected=$'gl%0AFoo\nglAb\nglAb%00cd\nglAb%00cd~2\nglAb%00ce'
    check_json() {
        [ "$(jq -c .name "$1/signatures/functions/1.json")" = '"glAb\u0000cd"' ] ||
            fail "signatures/functions/1.json: $(jq -c .name "$1/signatures/functions/1.json")"
        [ "$(jq -c .function "$1/calls/2.json")" = '"glAb\u0000ce"' ] ||
            fail "calls/2.json: $(jq -c .function "$1/calls/2.json")"
        [ "$(cat "$1/functions/glAb%00cd~2/calls")" = 4 ] || fail "functions/glAb%00cd~2/calls"
        [ "$(cat "$1/functions/glAb/calls")" = 3 ] || fail "functions/glAb/calls"
        # apitrace prints a name up to its first NUL, and so do the native views.
        [ "$(sed -n 4p "$1/events")" = "1 glAb()" ] || fail "events line 4: $(sed -n 4p "$1/events")"
        # The summary keeps every byte: glAb<NUL>cd (twice) and glAb<NUL>ce
        # are rows of their own, in byte order.
        [ "$(tr '\0' '@' < "$1/summary.csv" | grep '^glAb' | cut -d, -f1,2 | tr '\n' ' ')" = \
            "glAb,1 glAb@cd,2 glAb@ce,1 " ] || fail "summary.csv: $(tr '\0' '@' < "$1/summary.csv" | tr '\n' ' ')"
    }
    ;;
sprtrace)
    trace="$work/names.rtrace"
    dir=resources
    expected=$'mem\nmem%00a\nmem%00a~2\nmem%00b\ntwo%0Alines'
    check_json() {
        [ "$(ls -1 "$1/contexts" | LC_ALL=C sort)" = $'1-ctx%00one\n2-ctx%00two' ] ||
            fail "contexts: $(ls -1 "$1/contexts" | tr '\n' ' ')"
        [ "$(find "$1/attachments" -mindepth 1 -printf '%f %y\n')" = "att%00x l" ] ||
            fail "attachments: $(find "$1/attachments" -mindepth 1 -printf '%f %y\n')"
        grep -q 'malloc<mem>(80)' "$1/resources/mem%00a~2/calls" || fail "resources/mem%00a~2/calls"
        grep -q 'malloc<mem>(32)' "$1/resources/mem%00b/calls" || fail "resources/mem%00b/calls"
        # sp-rtrace-postproc prints a name up to its first NUL, and so does events.
        [ "$(sed -n 3p "$1/events")" = "@ 1 : ctx" ] || fail "events line 3: $(sed -n 3p "$1/events")"
    }
    ;;
*)
    echo "usage: nul_names.sh fxt|apitrace|sprtrace" >&2
    exit 2
    ;;
esac
python3 "$TRACEFS_SOURCE_ROOT/tests/$format/make_names.py" "$trace" || { fail "make_names.py"; finish; }

# The whole tree, one entry per line with its type and its file's checksum.
tree_listing() {
    (cd "$1" && find . -mindepth 1 ! -path './.tracefs*' ! -name errors -printf '%p %y\n' | LC_ALL=C sort |
        while read -r path type; do
            if [ "$type" = f ]; then
                echo "$path $type $(md5sum < "$path" | cut -c 1-32)"
            else
                echo "$path $type"
            fi
        done)
}

check_mount() {
    local what=$1 mnt=$2 listing
    listing=$(ls -1 "$mnt/$dir" | LC_ALL=C sort)
    [ "$listing" = "$expected" ] || fail "$what: ls $dir: $(printf '%q' "$listing")"
    [ "$(find "$mnt/$dir" -mindepth 1 -maxdepth 1 | wc -l)" = "$(echo "$expected" | wc -l)" ] ||
        fail "$what: find $dir gives $(find "$mnt/$dir" -mindepth 1 -maxdepth 1 | wc -l) lines"
    # No name anywhere holds a control character (find prints them raw).
    find "$mnt" -mindepth 1 -print0 | LC_ALL=C grep -qaz '[[:cntrl:]]' &&
        fail "$what: a name with a control character: $(find "$mnt" -print0 | LC_ALL=C grep -az '[[:cntrl:]]' | tr '\0' ' ')"
    check_json "$mnt"
}

mount_trace "$trace" || { fail "mount"; finish; }
first=$MNT
[ "$(awk '$1 == "saved_index" { print $2 }' "$first/.tracefs/stats")" = no ] ||
    fail "first mount: saved_index is not 'no'"
check_mount "index pass" "$first"
tree_listing "$first" > "$work/tree.scanned"
unmount_and_wait "$first" || fail "unmount"

mount_trace "$trace" || { fail "remount"; finish; }
second=$MNT
[ "$(awk '$1 == "saved_index" { print $2 }' "$second/.tracefs/stats")" = used ] ||
    fail "remount: saved_index is '$(awk '$1 == "saved_index" { print $2 }' "$second/.tracefs/stats")', not 'used'"
check_mount "saved index" "$second"
tree_listing "$second" > "$work/tree.loaded"
cmp -s "$work/tree.scanned" "$work/tree.loaded" ||
    fail "the saved index shows another tree: $(diff "$work/tree.scanned" "$work/tree.loaded" | head -n 5)"
[ "$(wc -l < "$work/tree.scanned")" -gt 10 ] || fail "tree listing too short: $(wc -l < "$work/tree.scanned")"
finish
