#!/usr/bin/env bash
# Command-line habits: usage errors exit 2 with tracefs's own message and a
# --help hint (an unknown option is refused before the trace is indexed);
# -o format= takes the names the docs use; ls/cat/stat take a mount's -o
# options; tracefs ls sorts like ls(1) (ls -A: the locale's collation).
set -u
source "$(dirname "$0")/lib.sh"
need_fuse
work=$(mktemp -d /tmp/tracefs-usage-XXXXXX)
trap 'unmount_all; rm -rf "$work"' EXIT
data=$TRACEFS_SOURCE_ROOT/tests/data
trace=$data/fxt/fxt-cpp_all-records.fxt
[ -f "$trace" ] || { echo "no test trace: skipped"; exit 77; }
mnt=$(mktemp -d /tmp/tracefs-mnt-XXXXXX)
mounts+=("$mnt")

usage_error() {   # usage_error WHAT MESSAGE-PATTERN COMMAND...: exit 2, the message, the hint, no mount
    local what=$1 pattern=$2 out rc
    shift 2
    out=$("$@" 2>&1); rc=$?
    [ $rc = 2 ] || fail "$what: exit status $rc, not 2"
    [[ "$out" == *"$pattern"* ]] || fail "$what: message: $out"
    [[ "$out" == *"Try 'tracefs --help' for more information."* ]] || fail "$what: no --help hint: $out"
    [[ "$out" == *"fuse: "* ]] && fail "$what: libfuse's own message: $out"
    grep -q " $mnt " /proc/mounts && { fail "$what: mounted"; fusermount3 -u "$mnt"; }
    return 0
}
usage_error "unknown -o option" "tracefs: unknown option(s): \`-o bogus'" \
    "$TRACEFS" -o bogus,index_dir="$work/idx" "$trace" "$mnt"
[ -z "$(ls "$work/idx" 2>/dev/null)" ] || fail "the trace was indexed before the unknown option was refused"
usage_error "unknown flag" "unknown option(s): \`-x'" "$TRACEFS" -x "$trace" "$mnt"
usage_error "missing mount point" "missing MOUNTPOINT" "$TRACEFS" "$trace"
usage_error "no arguments" "missing TRACE and MOUNTPOINT" "$TRACEFS"
usage_error "surplus argument" "unexpected argument 'extra'" "$TRACEFS" "$trace" "$mnt" extra
usage_error "bad value" "bad option value 'cache_size=lots'" "$TRACEFS" -o cache_size=lots "$trace" "$mnt"
usage_error "offline unknown option" "unknown option(s): \`-o bogus'" "$TRACEFS" ls -o bogus "$trace"
usage_error "offline cat without a path" "missing PATH" "$TRACEFS" cat "$trace"
usage_error "offline without a trace" "missing TRACE" "$TRACEFS" stat
# Options of FUSE and of the mount helper are still accepted.
"$TRACEFS" -o auto_unmount,ro,noauto,_netdev,default_permissions "$trace" "$mnt" || fail "FUSE options refused"
fusermount3 -u "$mnt"

# Format names as the docs and file names write them.
sp=$(find_traces sp-rtrace "$data/sprtrace" | head -n 1)
if [ -n "$sp" ]; then
    for name in sp-rtrace sprtrace SP_RTRACE Sp-RTrace; do
        [ "$("$TRACEFS" cat -o format=$name "$sp" info.json | jq -r .format)" = sp-rtrace ] ||
            fail "-o format=$name"
    done
fi
for name in fxt FXT; do
    [ "$("$TRACEFS" cat -o format=$name "$trace" info.json | jq -r .format)" = fxt ] || fail "-o format=$name"
done
x=$(find_traces xray "$data/xray" | head -n 1)
for name in xray XRay llvm-xray; do
    [ -z "$x" ] || [ "$("$TRACEFS" cat -o format=$name "$x" info.json | jq -r .format)" = xray ] ||
        fail "-o format=$name"
done
"$TRACEFS" cat -o format=nosuch "$trace" info.json 2>&1 | grep -q "unknown format 'nosuch'" ||
    fail "-o format=nosuch accepted"

# The offline commands take a mount's -o options (after the command, before or after TRACE).
grep -qx "cache_bytes_budget 1048576" <("$TRACEFS" cat -o cache_size=1M "$trace" .tracefs/stats) ||
    fail "offline -o cache_size="
grep -qx "cache_bytes_budget 2097152" <("$TRACEFS" cat "$trace" -o cache_size=2M .tracefs/stats) ||
    fail "offline -o cache_size= after TRACE"
"$TRACEFS" stat -o index_dir="$work/offline-idx" "$trace" >/dev/null || fail "offline -o index_dir="
[ -n "$(ls "$work/offline-idx" 2>/dev/null)" ] || fail "offline -o index_dir= saved nothing there"
cp "$trace" "$work/copy.fxt"
XDG_CACHE_HOME=$work/cache "$TRACEFS" ls -o noindex "$work/copy.fxt" >/dev/null || fail "offline -o noindex"
[ -z "$(ls "$work/cache/tracefs" 2>/dev/null)" ] || fail "offline -o noindex saved an index"
"$TRACEFS" ls -o auto_unmount,allow_other "$trace" >/dev/null || fail "offline ls refuses FUSE options"

# tracefs ls lists like ls -A, in ls(1)'s order, in every locale there is.
mount_trace "$trace" || exit 1
m=$MNT
for loc in C POSIX C.UTF-8 $(locale -a 2>/dev/null | grep -iE '^(en_US|de_DE|fr_FR)\.utf-?8$' | head -n 2); do
    for dir in "" strings uobjects threads providers; do
        want=$(cd "$m/$dir" && LC_ALL=$loc ls -A)
        got=$(LC_ALL=$loc "$TRACEFS" ls "$trace" $dir)
        [ "$got" = "$want" ] || fail "LC_ALL=$loc tracefs ls ${dir:-/} differs from ls -A: $(diff <(echo "$got") <(echo "$want") | head -n 4)"
    done
done
# A folder whose names sort differently by bytes and by case-folding collation.
mkdir -p "$work/folder"
for name in B.fxt a.fxt _c.fxt 10.fxt 9.fxt; do cp "$trace" "$work/folder/$name"; done
[ "$(LC_ALL=C "$TRACEFS" ls "$work/folder" | tr '\n' ' ')" = ".tracefs 10.fxt 9.fxt B.fxt README _c.fxt a.fxt errors info.json traces.json " ] ||
    fail "LC_ALL=C order: $(LC_ALL=C "$TRACEFS" ls "$work/folder" | tr '\n' ' ')"
finish
