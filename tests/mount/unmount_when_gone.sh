#!/bin/sh
# GUARDED_MOUNT=MNT unmount_when_gone.sh PID: waits, in a session of its
# own, until process PID has ended or MNT is no longer mounted, then
# unmounts MNT if it still is.  MNT comes in the environment so that this
# process's command line does not name it: the tests find their daemon
# with `pgrep -f MNT`.  The mount tests start one per mount: a test killed where
# no trap or `finally` runs (SIGKILL to its process group) leaves a live
# daemon and its mount, which auto_unmount does not undo.
pid=$1 mnt=$GUARDED_MOUNT
# From the mount table, not by a stat through the mount, which waits on
# (or fails with) a daemon still busy indexing; read with the shell's own
# builtins, since a grep run every second would name MNT on its command
# line and `pgrep -n -f MNT` could find it instead of the daemon.
mounted() {
    while read -r line; do
        case $line in *" $mnt "*) return 0 ;; esac
    done < /proc/self/mountinfo
    return 1
}
while kill -0 "$pid" 2>/dev/null; do
    mounted || exit 0
    sleep 1
done
if mounted; then
    fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -u -z "$mnt" 2>/dev/null
    rmdir "$mnt" 2>/dev/null
fi
exit 0
