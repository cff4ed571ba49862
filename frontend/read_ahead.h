/* The kernel's read-ahead for a FUSE mount.  A mount starts with the
 * kernel's default window, 128 KiB: a sequential reader's pages come in
 * 128 KiB requests, each a round trip through the daemon, and for a view
 * that renders at a gigabyte a second the requests cost more than the
 * rendering.  The window is the mount's backing device's read_ahead_kb in
 * sysfs, which only root may write. */
#ifndef TRACEFS_READ_AHEAD_H
#define TRACEFS_READ_AHEAD_H

#include <glib.h>
#include <stdint.h>

/* Sets the read-ahead of the mount on `mountpoint` to `bytes` (rounded
 * down to KiB).  Returns NULL when set, or why not (static text). */
const char *read_ahead_set(const char *mountpoint, uint64_t bytes);

/* The kernel sets a FUSE mount's read-ahead when the daemon answers its
 * INIT request, to no more than the window it had: so the window is set
 * after that, at the first open (every read follows one).  read_ahead_arm
 * says what to set (bytes 0: nothing), before the session serves;
 * read_ahead_apply sets it once, and tells .tracefs/stats. */
void read_ahead_arm(const char *mountpoint, uint64_t bytes);
void read_ahead_apply(void);

#endif
