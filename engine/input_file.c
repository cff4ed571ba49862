/* Opening inputs without blocking on special files (input_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <unistd.h>
#include "input_file.h"

/* 0 when the mode is one of the kinds, else the INPUT_IS_ code naming it. */
static int wrong_kind(mode_t mode, unsigned kinds)
{
    if (S_ISREG(mode))
        return kinds & INPUT_REGULAR ? 0 : INPUT_IS_REGULAR;
    if (S_ISDIR(mode))
        return kinds & INPUT_DIRECTORY ? 0 : INPUT_IS_DIRECTORY;
    if (S_ISFIFO(mode))
        return INPUT_IS_FIFO;
    if (S_ISSOCK(mode))
        return INPUT_IS_SOCKET;
    if (S_ISCHR(mode))
        return INPUT_IS_CHAR_DEVICE;
    if (S_ISBLK(mode))
        return INPUT_IS_BLOCK_DEVICE;
    return INPUT_IS_OTHER;
}

int input_kind_check(const struct stat *st, unsigned kinds)
{
    return -wrong_kind(st->st_mode, kinds);
}

int input_open_at(int dir_fd, const char *path, unsigned kinds, struct stat *st)
{
    if (fstatat(dir_fd, path, st, 0) < 0)
        return -errno;
    int wrong = wrong_kind(st->st_mode, kinds);
    if (wrong)
        return -wrong;
    /* O_NONBLOCK: should a FIFO take the file's place after the check, the
     * open still returns at once, and the second check refuses it. */
    int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (S_ISDIR(st->st_mode) ? O_DIRECTORY : 0);
    int fd = openat(dir_fd, path, flags);
    if (fd < 0)
        return -errno;
    if (fstat(fd, st) < 0 || (wrong = wrong_kind(st->st_mode, kinds)) != 0) {
        int rc = wrong ? -wrong : -errno;
        close(fd);
        return rc;
    }
    /* Regular files and directories ignore O_NONBLOCK; cleared all the same
     * so that the descriptor behaves as any other. */
    int status = fcntl(fd, F_GETFL);
    if (status >= 0)
        fcntl(fd, F_SETFL, status & ~O_NONBLOCK);
    return fd;
}

const char *input_strerror(int rc, unsigned kinds)
{
    gboolean directories = (kinds & INPUT_DIRECTORY) != 0;
    switch (-rc) {
    case INPUT_IS_FIFO:
        return directories ? "is a FIFO, not a regular file or directory" : "is a FIFO, not a regular file";
    case INPUT_IS_SOCKET:
        return directories ? "is a socket, not a regular file or directory" : "is a socket, not a regular file";
    case INPUT_IS_CHAR_DEVICE:
        return directories ? "is a character device, not a regular file or directory"
                           : "is a character device, not a regular file";
    case INPUT_IS_BLOCK_DEVICE:
        return directories ? "is a block device, not a regular file or directory"
                           : "is a block device, not a regular file";
    case INPUT_IS_DIRECTORY: return "is a directory, not a regular file";
    case INPUT_IS_REGULAR: return "is a regular file, not a directory";
    case INPUT_IS_OTHER: return directories ? "is not a regular file or directory" : "is not a regular file";
    default: return g_strerror(-rc);
    }
}
