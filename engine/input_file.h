/* Opening what a user or a trace names (the trace, an rr trace's members,
 * a folder's entries, -o xray_binary=, saved indexes) without ever blocking:
 * open(2) of a FIFO for reading waits for a writer forever, and a device
 * node can be anything.  Only regular files (and directories where the
 * caller asks for them) are opened. */
#ifndef TRACEFS_INPUT_FILE_H
#define TRACEFS_INPUT_FILE_H

#include <sys/stat.h>

#define INPUT_REGULAR   1u
#define INPUT_DIRECTORY 2u

/* Returned (negated) when the path exists but is not of the kinds asked
 * for: above errno's range, so that input_strerror() can name the kind. */
enum input_wrong_kind {
    INPUT_IS_FIFO = 4096,
    INPUT_IS_SOCKET,
    INPUT_IS_CHAR_DEVICE,
    INPUT_IS_BLOCK_DEVICE,
    INPUT_IS_DIRECTORY,
    INPUT_IS_REGULAR,
    INPUT_IS_OTHER,
};

/* 0 when st is one of `kinds`, else -INPUT_IS_<its kind>. */
int input_kind_check(const struct stat *st, unsigned kinds);

/* Opens `path` read-only (relative to dir_fd, or AT_FDCWD), following
 * symlinks, when it is one of `kinds` (INPUT_REGULAR | INPUT_DIRECTORY);
 * fills *st from the opened file.  The kind is checked before the open (a
 * special file is never opened) and again on the open file (it may have
 * been replaced in between).  Returns the fd (O_CLOEXEC, blocking again),
 * -errno, or -INPUT_IS_<kind>. */
int input_open_at(int dir_fd, const char *path, unsigned kinds, struct stat *st);

/* The reason for a negative input_open_at() result, given the kinds that
 * were asked for: "is a FIFO, not a regular file", or strerror's text. */
const char *input_strerror(int rc, unsigned kinds);

#endif
