# Shared by the mount tests: mount a trace on a fresh directory, always
# unmount on exit (even when a check fails), and small check helpers.

: "${TRACEFS:?TRACEFS must name the built binary}"
failures=0
mounts=()
# Sanitizer builds carry shadow memory: memory-rule checks skip there.
sanitized=0
{ [ -n "${TRACEFS_SANITIZED:-}" ] || ldd "$TRACEFS" 2> /dev/null | grep -q -E 'libasan|libubsan'; } && sanitized=1

unmount_all() {
    local m
    for m in "${mounts[@]}"; do
        fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
        rmdir "$m" 2>/dev/null
    done
}
trap unmount_all EXIT
# A signal (meson's timeout sends SIGTERM) would skip the EXIT trap.
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

need_fuse() {
    if [ ! -e /dev/fuse ] || ! command -v fusermount3 >/dev/null; then
        echo "no /dev/fuse or fusermount3: skipped"
        exit 77
    fi
}

# mount_trace TRACE [OPTIONS...]: mounts and prints the mount point.
mount_trace() {
    local trace=$1 mnt
    shift
    mnt=$(mktemp -d /tmp/tracefs-mnt-XXXXXX)
    mounts+=("$mnt")
    # auto_unmount: should the daemon die by a signal no trap sees (a
    # crash, or SIGKILL to the whole run), fusermount3 still unmounts, so
    # no "Transport endpoint is not connected" directory is left behind.
    if ! "$TRACEFS" -o auto_unmount "$@" "$trace" "$mnt"; then
        echo "FAIL: tracefs $* $trace $mnt" >&2
        return 1
    fi
    # Should this shell be killed where no trap runs (SIGKILL), the mount
    # still goes: a watcher in a session of its own unmounts it.
    GUARDED_MOUNT=$mnt setsid sh "$TRACEFS_SOURCE_ROOT/tests/mount/unmount_when_gone.sh" $$ \
        </dev/null >/dev/null 2>&1 &
    MNT=$mnt
}

# unmount_and_wait MNT: unmounts, then waits (up to a minute) for the
# daemon to exit, since it saves its index after the unmount.
unmount_and_wait() {
    fusermount3 -u "$1" || return 1
    for _ in $(seq 600); do
        pgrep -f -- "$1" > /dev/null || return 0
        sleep 0.1
    done
    return 1
}

# wait_for_sizing MNT: waits (up to a minute) until the background sizing
# of /events has finished, so no reader of the trace is left but the test's.
wait_for_sizing() {
    for _ in $(seq 600); do
        grep -qx "sizing_events done" "$1/.tracefs/stats" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# check_daemon_peak LABEL PID LIMIT_KIB [WHAT]: the daemon's peak resident
# memory (VmHWM) against the memory rule; not judged under sanitizers,
# whose shadow memory is not tracefs's.
check_daemon_peak() {
    local label=$1 pid=$2 limit=$3 what=${4:-} rss
    if [ -z "$pid" ] || [ ! -r "/proc/$pid/status" ]; then
        fail "$label: daemon not found"
        return
    fi
    rss=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
    echo "  $label: ${what:+$what: }daemon peak $rss KiB (rule $limit KiB)"
    [ "$sanitized" = 1 ] || [ "$rss" -le "$limit" ] || fail "$label: daemon peak $rss KiB over $limit KiB"
}

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

check() {
    local what=$1
    shift
    "$@" || fail "$what"
}

finish() {
    if [ "$failures" -ne 0 ]; then
        echo "$failures check(s) failed"
        exit 1
    fi
    echo "all checks passed"
    exit 0
}

# The traces of one format under a folder: files and directories that
# tracefs recognises as that format (reference outputs are not traces).
find_traces() {
    local format=$1 dir=$2 candidate
    [ -d "$dir" ] || return 0
    find "$dir" -mindepth 1 -maxdepth 3 \
        ! -name '*.txt' ! -name '*.md' ! -name '*.json' ! -name '*.jsonl' ! -name '*.yaml' \
        ! -name '*.sha256' ! -name 'PROVENANCE*' ! -name '*.zst' ! -name '*.xz' ! -name '*.tsv' \
        ! -name '*.provenance' ! -name '*.stderr' ! -name '*.sh' ! -name '*.py' ! -name '*.csv' \
        -print | sort | while read -r candidate; do
        case "$candidate" in */neg-*|*/bad*|*/corrupt*) continue ;; esac
        [ "$("$TRACEFS" cat "$candidate" info.json 2>/dev/null | jq -r .format 2>/dev/null)" = "$format" ] &&
            echo "$candidate"
    done
}
