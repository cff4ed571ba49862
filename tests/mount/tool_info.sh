#!/usr/bin/env bash
# /rr-traceinfo.json and /apitrace-info.json, read through a real mount,
# against the formats' own info commands, byte for byte; and the same bytes
# again from a remount that loads the saved index.
#
# References made by the real tools (Debian 12's rr 5.6.0 and apitrace 11.1):
#  - tests/rr/refs/<name>/traceinfo.txt: `rr traceinfo` stdout for
#    tests/data/rr/<name> (rr replays nothing on machines without usable
#    performance counters: its stdout stops after the header fields);
#  - tests/data/apitrace/ref/<name>.info.json: `apitrace info` stdout, made
#    with the trace at another path: only its FileName line is normalised.
# Where the tools are installed they are also run here on the same paths
# (rr: also on header-only traces patched by tests/rr/make_header_variants.py
# and on ../shared's real Headers); the ../shared corpus is checked too when
# present.
#
# rr-traceinfo.json ends with rr's "environ" member (rr gets it by replaying
# to the initial exec; tracefs reads the exec's recorded stack, or says null
# where the recording does not give it: tests/rr/check_environ.py checks the
# strings) and `}`; rr's stdout is compared up to its "environ" member or
# closing brace, whichever comes.
set -u
source "$(dirname "$0")/lib.sh"
need_fuse
command -v jq > /dev/null || { echo "no jq: skipped"; exit 77; }

work=$(mktemp -d /tmp/tracefs-toolinfo-XXXXXX)
trap 'unmount_all; rm -rf "$work"' EXIT
corpus=${TRACEFS_CORPUS:-}
have_rr=0
command -v rr > /dev/null && have_rr=1
have_apitrace=0
command -v apitrace > /dev/null && have_apitrace=1
checked=0

# mount_both TRACE NAME FILE: mounts TRACE twice (scan, then saved index)
# and leaves the first mount's FILE in $work/NAME.ours (absent if none);
# the remount must serve the same bytes.  Returns 1 if TRACE does not mount.
mount_both() {
    local trace=$1 name=$2 file=$3 index="$work/index-$2"
    rm -f "$work/$name.ours"
    mount_trace "$trace" -o index_dir="$index" 2> /dev/null || return 1
    [ -e "$MNT/$file" ] && cp "$MNT/$file" "$work/$name.ours"
    unmount_and_wait "$MNT" || fail "$name: unmount"
    mount_trace "$trace" -o index_dir="$index" || { fail "$name: remount"; return 1; }
    grep -qx 'index_source loaded' "$MNT/.tracefs/stats" || fail "$name: remount did not load the saved index"
    if [ -e "$work/$name.ours" ]; then
        cmp -s "$MNT/$file" "$work/$name.ours" || fail "$name: $file differs when loaded from the saved index"
    else
        [ -e "$MNT/$file" ] && fail "$name: $file appears only when loaded from the saved index"
    fi
    fusermount3 -u "$MNT"
    return 0
}

# rr's stdout up to its "environ" member or closing brace.
rr_header_part() { awk '/^  "environ"|^}/ { exit } { print }' "$1"; }
# FILE ends as rr traceinfo 5.6.0 ends: `  "environ":[`, each string on its
# own line (`    "..."`, commas between), `  ]` and `}`; or tracefs's
# `  "environ":null` and `}`.
environ_tail() {
    LC_ALL=C awk 'BEGIN { state = 0 }
        state == 0 && /^  "environ":null$/ { state = 3; next }
        state == 0 && /^  "environ":\[$/ { state = 1; next }
        state == 0 { next }
        state == 1 && /^    "([^"\\]|\\["\\]|\\u00[01][0-9a-f])*",?$/ { comma = /,$/; next }
        state == 1 && /^  \]$/ && !comma { state = 3; next }
        state == 3 && /^}$/ { state = 4; next }
        { bad = 1; exit }
        END { exit bad || state != 4 }' "$1"
}

# check_rr TRACE NAME REF: REF is rr traceinfo's stdout ("" = rr refuses
# the header: no file).  SKIP_LINES (a grep -E pattern) leaves out lines rr
# prints from unset memory.
check_rr() {
    local trace=$1 name=$2 ref=$3
    checked=$((checked + 1))
    if ! mount_both "$trace" "rr-$name" rr-traceinfo.json; then
        # tracefs refuses what rr refuses (no version file, version 84)
        [ -s "$ref" ] && fail "rr $name: does not mount"
        return
    fi
    local ours="$work/rr-$name.ours"
    if [ ! -s "$ref" ]; then
        [ -e "$ours" ] && fail "rr $name: rr traceinfo prints nothing, but rr-traceinfo.json exists"
        return
    fi
    [ -e "$ours" ] || { fail "rr $name: no rr-traceinfo.json"; return; }
    jq -e . "$ours" > /dev/null || fail "rr $name: rr-traceinfo.json is not JSON"
    environ_tail "$ours" || fail "rr $name: does not end with rr's \"environ\" member and }"
    rr_header_part "$ours" | grep -v -E "${SKIP_LINES:-^$}" > "$work/ours.head"
    rr_header_part "$ref" | grep -v -E "${SKIP_LINES:-^$}" > "$work/ref.head"
    cmp -s "$work/ours.head" "$work/ref.head" ||
        fail "rr $name: differs from rr traceinfo ($(diff "$work/ours.head" "$work/ref.head" | head -n 4 | tr '\n' ' '))"
}

# live_rr TRACE OUT: rr traceinfo's stdout (whatever its exit status),
# unbuffered: on a damaged trace rr prints the header, then its replay
# throws and aborts, which would lose a buffered header ("prints nothing"
# is kept for the headers rr refuses).
live_rr() { (stdbuf -o0 rr traceinfo "$1" > "$2"; true) 2> /dev/null; return 0; }

# The test data: stored references, and rr itself where installed.
for name in mtdemo-0 edge-0; do
    trace="$TRACEFS_SOURCE_ROOT/tests/data/rr/$name"
    check_rr "$trace" "$name" "$TRACEFS_SOURCE_ROOT/tests/rr/refs/$name/traceinfo.txt"
    if [ "$have_rr" = 1 ]; then
        live_rr "$trace" "$work/live"
        check_rr "$trace" "$name-live" "$work/live"
    fi
done

# A trace whose initial exec recorded a real stack (tests/rr/check_environ.py
# writes it and what rr prints for it): the whole file, through the mount.
blocks="$TRACEFS_BUILD_ROOT/tests/rr/rr_blocks"
if [ -x "$blocks" ]; then
    python3 "$TRACEFS_SOURCE_ROOT/tests/rr/check_environ.py" "$blocks" --write "$work/environ" ||
        fail "check_environ.py --write"
    check_rr "$work/environ/trace" environ "$TRACEFS_SOURCE_ROOT/tests/rr/refs/edge-0/traceinfo.txt"
    cmp -s "$work/rr-environ.ours" "$work/environ/expected" ||
        fail "rr environ: rr-traceinfo.json is not what rr traceinfo prints ($(diff "$work/rr-environ.ours" "$work/environ/expected" | head -n 4 | tr '\n' ' '))"
    grep -q '^    "PATH=/usr/local/bin:/usr/bin:/bin"$' "$work/rr-environ.ours" || fail "rr environ: no PATH string"
    if [ "$have_rr" = 1 ]; then
        live_rr "$work/environ/trace" "$work/live"
        check_rr "$work/environ/trace" environ-live "$work/live"
    fi
else
    echo "no tests/rr/rr_blocks: the environ trace skipped"
fi

# Patched headers: spot values typed here (rr 5.6.0's TraceInfoCommand.cc
# and TraceReader::xcr0()), and rr where installed.
python3 "$TRACEFS_SOURCE_ROOT/tests/rr/make_header_variants.py" "$TRACEFS_SOURCE_ROOT/tests/data/rr/edge-0" \
    "$work/variants" > "$work/variants.tsv" || fail "make_header_variants.py"
while IFS=$'\t' read -r name rr_says; do
    trace="$work/variants/$name"
    mount_both "$trace" "rr-$name" rr-traceinfo.json || { fail "rr $name: does not mount"; continue; }
    ours="$work/rr-$name.ours"
    if [ "$rr_says" = none ]; then
        [ -e "$ours" ] && fail "rr $name: rr refuses this header, but rr-traceinfo.json exists"
    elif [ ! -e "$ours" ]; then
        fail "rr $name: no rr-traceinfo.json"
        continue
    fi
    case $name in
        xcr0-from-cpuid) grep -qx '  "xcr0":7,' "$ours" || fail "rr $name: xcr0 not CPUID(0xD,0)'s 7" ;;
        branches-chaos-unknown)
            grep -qx '  "ticksSemantics":"branches",' "$ours" || fail "rr $name: ticksSemantics"
            grep -q chaosMode "$ours" && fail "rr $name: chaosMode printed though unknown" ;;
        chaos-false)
            grep -qx '  "chaosMode":false,' "$ours" || fail "rr $name: chaosMode"
            grep -q exclusionRange "$ours" && fail "rr $name: exclusionRange without chaos mode" ;;
        arch-aarch64)
            [ "$(jq -c '[.xcr0, .cpuidFaulting, .cpuidRecords]' "$ours")" = '[3,false,[]]' ] ||
                fail "rr $name: $(jq -c '[.xcr0, .cpuidFaulting, .cpuidRecords]' "$ours")" ;;
    esac
    if [ "$have_rr" = 1 ]; then
        live_rr "$trace" "$work/live"
        skip='^$'
        [ "$name" = arch-aarch64 ] && skip='^  "(xcr0|cpuidFaulting)":'
        SKIP_LINES=$skip check_rr "$trace" "$name" "$work/live"
    fi
    checked=$((checked + 1))
done < "$work/variants.tsv"

# ../shared: every corpus trace (damaged ones too: rr refuses some), and
# the real Headers of a newer rr in header-only trace directories.
if [ -d "$corpus/rr/traces" ]; then
    for trace in "$corpus"/rr/traces/*; do
        name=$(basename "$trace")
        if [ "$have_rr" = 1 ]; then live_rr "$trace" "$work/live"
        elif [ -f "$corpus/rr/dumps/$name/traceinfo.txt" ]; then cp "$corpus/rr/dumps/$name/traceinfo.txt" "$work/live"
        else continue; fi
        check_rr "$trace" "corpus-$name" "$work/live"
    done
    if [ "$have_rr" = 1 ]; then
        for header in "$corpus"/rr/real-headers/*-version; do
            [ -f "$header" ] || continue
            trace="$work/real-$(basename "$header")"
            mkdir -p "$trace"
            cp "$header" "$trace/version"
            for stream in events data mmaps tasks; do : > "$trace/$stream"; done
            live_rr "$trace" "$work/live"
            check_rr "$trace" "real-$(basename "$header")" "$work/live"
        done
    fi
else
    echo "no ../shared corpus: its rr traces skipped"
fi

# apitrace: ours with its FileName line, then the rest against REF.
check_apitrace() {
    local trace=$1 name=$2 ref=$3
    mount_both "$trace" "at-$name" apitrace-info.json || { fail "apitrace $name: does not mount"; return; }
    local ours="$work/at-$name.ours"
    checked=$((checked + 1))
    [ -e "$ours" ] || { fail "apitrace $name: no apitrace-info.json"; return; }
    jq -e . "$ours" > /dev/null || fail "apitrace $name: not JSON"
    [ "$(sed -n 2p "$ours")" = "  \"FileName\": \"$trace\"," ] || fail "apitrace $name: FileName line $(sed -n 2p "$ours")"
    if [ -n "$ref" ]; then
        cmp -s <(sed 2d "$ours") <(sed 2d "$ref") ||
            fail "apitrace $name: differs from apitrace info ($(diff <(sed 2d "$ours") <(sed 2d "$ref") | tr '\n' ' '))"
    fi
    # apitrace 11.1 reads no zstd; elsewhere the tool itself on the same path.
    case $name in *zstd*) return ;; esac
    if [ "$have_apitrace" = 1 ]; then
        apitrace info "$trace" > "$work/live" 2> /dev/null || { fail "apitrace $name: apitrace info failed"; return; }
        cmp -s "$ours" "$work/live" || fail "apitrace $name: differs from apitrace info $trace"
    fi
}

data="$TRACEFS_SOURCE_ROOT/tests/data/apitrace"
for trace in "$data"/*.trace; do
    name=$(basename "$trace" .trace)
    case $name in
        *.zstd|*.zstd-seekable)
            # No tool writes these references: glprog-small's, with zstd's
            # names (newer apitrace's File classes) and this file's size.
            type="Zstandard"
            [ "$name" = glprog-small.zstd-seekable ] && type="Zstandard (seekable)"
            sed -e "s/\"ContainerType\": \"Snappy\"/\"ContainerType\": \"$type\"/" \
                -e "s/\"ContainerSize\": [0-9]*/\"ContainerSize\": $(stat -c %s "$trace")/" \
                "$data/ref/glprog-small.info.json" > "$work/zstd.ref"
            check_apitrace "$trace" "$name" "$work/zstd.ref" ;;
        *) check_apitrace "$trace" "$name" "$data/ref/$name.info.json" ;;
    esac
done
if [ -d "$corpus/apitrace/traces" ]; then
    for trace in "$corpus"/apitrace/traces/*.trace; do
        name=$(basename "$trace" .trace)
        ref="$corpus/apitrace/ref/$name.info.json"
        [ -f "$ref" ] || ref=""
        check_apitrace "$trace" "corpus-$name" "$ref"
    done
    # A raw stream is no container apitrace reads: no file.
    for trace in "$corpus"/apitrace/traces/*.raw; do
        [ -f "$trace" ] || continue
        mount_both "$trace" "at-raw-$(basename "$trace")" apitrace-info.json &&
            [ -e "$work/at-raw-$(basename "$trace").ours" ] && fail "$(basename "$trace"): apitrace-info.json for a raw stream"
    done
else
    echo "no ../shared corpus: its apitrace traces skipped"
fi

echo "$checked traces checked (rr installed: $have_rr, apitrace installed: $have_apitrace)"
finish
