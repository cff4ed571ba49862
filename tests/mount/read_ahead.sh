#!/usr/bin/env bash
# -o read_ahead=: the mount's kernel read-ahead window (sysfs, root only),
# shown in .tracefs/stats; set at the first open, after the kernel's INIT;
# a mount point with a space in its path; bad values refused; the same
# bytes whatever the window.
set -u
source "$(dirname "$0")/lib.sh"
need_fuse

trace="$TRACEFS_SOURCE_ROOT/tests/data/rr/mtdemo-0"
[ -d "$trace" ] || { echo "no rr sample: skipped"; exit 77; }
root=0
[ "$(id -u)" = 0 ] && root=1

# stats_window MNT: what .tracefs/stats says; sysfs_window MNT: the kernel's.
stats_window() { sed -n 's/^read_ahead_kb //p' "$1/.tracefs/stats"; }
sysfs_window() { cat "/sys/class/bdi/$(mountpoint -d "$1")/read_ahead_kb"; }

mount_trace "$trace" -o noindex || exit 1
default=$MNT
if [ $root = 1 ]; then
    check "default window in stats: $(stats_window "$default")" [ "$(stats_window "$default")" = 1024 ]
    check "default window in sysfs: $(sysfs_window "$default")" [ "$(sysfs_window "$default")" = 1024 ]
else
    check "not root: $(stats_window "$default")" [ "$(stats_window "$default")" = "unchanged (only root may set it)" ]
fi

mount_trace "$trace" -o noindex,read_ahead=256K || exit 1
if [ $root = 1 ]; then
    check "256K in stats" [ "$(stats_window "$MNT")" = 256 ]
    check "256K in sysfs" [ "$(sysfs_window "$MNT")" = 256 ]
fi

mount_trace "$trace" -o noindex,read_ahead=0 || exit 1
unset_mount=$MNT
check "read_ahead=0 in stats: $(stats_window "$unset_mount")" \
    [ "$(stats_window "$unset_mount")" = "unchanged (-o read_ahead=0)" ]
check "read_ahead=0 leaves the kernel's window" [ "$(sysfs_window "$unset_mount")" != 1024 ]

# /proc/self/mountinfo writes a space as \040.
spaced=$(mktemp -d "/tmp/tracefs mnt XXXXXX")
mounts+=("$spaced")
"$TRACEFS" -o auto_unmount,noindex "$trace" "$spaced" || fail "mount on a path with a space"
if [ $root = 1 ]; then
    check "path with a space: $(stats_window "$spaced")" [ "$(stats_window "$spaced")" = 1024 ]
fi

for bad in read_ahead=1k read_ahead=65M read_ahead=lots; do
    out=$("$TRACEFS" -o "$bad" "$trace" "$unset_mount" 2>&1) && fail "$bad accepted"
    [[ "$out" == *"bad option value '$bad'"* ]] || fail "$bad message: $out"
done

offline=$("$TRACEFS" cat "$trace" .tracefs/stats | sed -n 's/^read_ahead_kb //p')
check "offline: $offline" [ "$offline" = "unchanged (not mounted)" ]

views=$(cd "$default" && ls events threads/*/events)
[ "$(echo "$views" | wc -l)" -gt 2 ] || fail "no thread views to compare: $views"
for view in $views; do
    check "$view: same bytes with read_ahead=1M and 0" cmp -s "$default/$view" "$unset_mount/$view"
done
finish
