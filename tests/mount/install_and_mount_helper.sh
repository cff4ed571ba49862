#!/usr/bin/env bash
# Installed like any tool: meson install puts the binary, man page and bash
# completion in place; --help and the man page list the same options; the
# installed binary mounts through mount(8): -t fuse.tracefs, an fstab line
# (mount -T), and the -t fuse "program#trace" form.
set -u
source "$(dirname "$0")/lib.sh"
: "${TRACEFS_BUILD_ROOT:?}"
work=$(mktemp -d /tmp/tracefs-install-XXXXXX)
linked=""
cleanup() {
    unmount_all
    [ -n "$linked" ] && rm -f "$linked"
    rm -rf "$work"
}
trap cleanup EXIT

meson install -C "$TRACEFS_BUILD_ROOT" --destdir "$work/root" --no-rebuild >/dev/null ||
    fail "meson install --destdir"
for f in bin/tracefs share/man/man1/tracefs.1 share/bash-completion/completions/tracefs; do
    [ -n "$(find "$work/root" -path "*/$f")" ] || fail "meson install did not install $f"
done
installed=$(find "$work/root" -path '*/bin/tracefs' | head -n 1)
"$installed" --version | grep -q '^tracefs ' || fail "installed binary does not run"
bash -n "$TRACEFS_SOURCE_ROOT/scripts/tracefs-completion.bash" || fail "completion script syntax"

# Every option of --help is in the man page, and the other way round.
man_page="$TRACEFS_SOURCE_ROOT/docs/tracefs.1"
for option in $("$TRACEFS" --help | grep -oE '(^| )(-[a-zA-Z]|--[a-z-]+|-o [a-z_]+)' | sed 's/^ //' | sort -u); do
    grep -qF -- "$(echo "$option" | sed 's/-/\\-/g; s/-o \(.*\)/o \1/')" "$man_page" ||
        grep -qF -- "${option#-o }" "$man_page" || fail "--help option $option is not in tracefs.1"
done
for option in format cache_size xray_binary index_dir noindex; do
    "$TRACEFS" --help | grep -q "$option" || fail "tracefs.1 option $option missing from --help"
done

need_fuse
trace=""
for format in fxt sp-rtrace xray apitrace rr; do
    dir=$format; [ "$format" = sp-rtrace ] && dir=sprtrace
    trace=$(find_traces "$format" "$TRACEFS_SOURCE_ROOT/tests/data/$dir" | head -n 1)
    [ -n "$trace" ] && break
done
[ -n "$trace" ] || { echo "no test trace: mount part skipped"; finish; }
trace=$(realpath "$trace")
mnt=$(mktemp -d /tmp/tracefs-mnt-XXXXXX)
mounts+=("$mnt")

# mount(8) finds helpers on the system PATH only: put ours there for the test.
if [ ! -e /usr/local/bin/tracefs ]; then
    ln -s "$TRACEFS" /usr/local/bin/tracefs && linked=/usr/local/bin/tracefs
fi
if command -v tracefs >/dev/null; then
    mount -t fuse.tracefs "$trace" "$mnt" -o ro,cache_size=4M || fail "mount -t fuse.tracefs"
    grep -q "^cache_bytes_budget 4194304$" "$mnt/.tracefs/stats" || fail "cache_size not passed through mount -t"
    grep -q " $mnt fuse.tracefs ro," /proc/mounts || fail "not mounted read-only as fuse.tracefs"
    umount "$mnt" || fail "umount"

    printf '%s %s fuse.tracefs ro,noauto,cache_size=8M 0 0\n' "$trace" "$mnt" > "$work/fstab"
    mount -T "$work/fstab" "$mnt" || fail "mount -T fstab"
    grep -q "^cache_bytes_budget 8388608$" "$mnt/.tracefs/stats" || fail "fstab options not passed"
    umount "$mnt" || fail "umount (fstab)"
fi
mount -t fuse "$TRACEFS#$trace" "$mnt" -o ro || fail "mount -t fuse program#trace"
test -f "$mnt/info.json" || fail "program#trace mount shows no info.json"
umount "$mnt"
finish
